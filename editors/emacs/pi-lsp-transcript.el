;;; pi-lsp-transcript.el --- The *pi-lsp* transcript: what the agent says and does  -*- lexical-binding: t -*-

;;; Commentary:

;; A `special-mode' buffer fed by the `pi/event' stream (design.md section 6):
;;
;; - "> prompt" lines for what the user asked;
;; - the assistant's text as it streams, with Markdown-ish faces (headings, **bold**, `code`,
;;   fenced blocks);
;; - each tool call as one readable line, "▸ edit textkit/slug.py", "▸ bash python3 -m unittest -q",
;;   marked "…" while it runs, "✓" when done and "✗ error" when it failed (in the `error' face);
;;   while it runs, the last `pi-lsp-transcript-tail-lines' lines of its output show under it;
;;   TAB or RET on the line (or a mouse click) expands it to its arguments and its result, an
;;   edit's patch in `diff-mode' faces (edits and writes are expanded by themselves when done);
;; - approvals: "⚠ waiting for your approval: ..." while the agent waits, then the answer;
;; - the final state: "■ done", "■ aborted", "■ error: REASON".
;;
;; Windows showing the end of the buffer follow new text (the transcript scrolls); a window
;; where the user moved point elsewhere stays where it is.

;;; Code:

(require 'cl-lib)
(require 'diff-mode)
(require 'pi-lsp-connection)
(require 'subr-x)

(defcustom pi-lsp-transcript-tail-lines 6
  "How many of the last output lines of a running tool call the transcript shows."
  :type 'integer
  :group 'pi-lsp)

(defcustom pi-lsp-transcript-expand-edits t
  "Non-nil: edit and write calls show their diff without being expanded by hand."
  :type 'boolean
  :group 'pi-lsp)

(defconst pi-lsp-transcript-buffer "*pi-lsp*"
  "Name of the transcript buffer.")

(defface pi-lsp-prompt '((t :inherit minibuffer-prompt :weight bold))
  "Face of the user's prompt lines."
  :group 'pi-lsp)
(defface pi-lsp-tool '((t :inherit font-lock-function-name-face))
  "Face of a tool call line."
  :group 'pi-lsp)
(defface pi-lsp-detail '((t :inherit shadow))
  "Face of a tool call's arguments and output."
  :group 'pi-lsp)
(defface pi-lsp-waiting '((t :inherit warning))
  "Face of lines that wait for the user."
  :group 'pi-lsp)
(defface pi-lsp-ok '((t :inherit success))
  "Face of success marks."
  :group 'pi-lsp)

(cl-defstruct (pi-lsp--call (:constructor pi-lsp--make-call))
  id name args header body-start body-end output result error expanded done)

(defvar-local pi-lsp--calls nil "Hash table: toolCallId -> `pi-lsp--call'.")
(defvar-local pi-lsp--in-text nil "While assistant text streams: the marker where it started.")
(defvar-local pi-lsp--approval-lines nil "Approval ids whose waiting / outcome line was written: (ID . STATE).")

(defvar pi-lsp-transcript-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'pi-lsp-transcript-toggle)
    (define-key map (kbd "RET") #'pi-lsp-transcript-toggle)
    (define-key map (kbd "n") #'pi-lsp-transcript-next-call)
    (define-key map (kbd "p") #'pi-lsp-transcript-previous-call)
    (define-key map (kbd "i") 'pi-lsp-prompt)
    (define-key map (kbd "C-c C-k") 'pi-lsp-abort)
    map)
  "Keys of the transcript: TAB/RET expand or collapse a tool call, n/p move between calls,
i asks the agent (`pi-lsp-prompt'), C-c C-k stops the run (`pi-lsp-abort').")

(defconst pi-lsp--markdown-keywords
  '(("^\\(#+ .*\\)$" 1 font-lock-keyword-face)
    ("\\*\\*\\([^*\n]+\\)\\*\\*" 0 bold)
    ("`\\([^`\n]+\\)`" 0 font-lock-constant-face)
    ("^```\\(?:.\\|\n\\)*?^```$" 0 font-lock-string-face)
    ("^\\s-*\\([-*]\\|[0-9]+\\.\\) " 1 font-lock-builtin-face))
  "Markdown-ish faces for the assistant's text: (REGEXP SUBEXP FACE), later ones win.")

(define-derived-mode pi-lsp-transcript-mode special-mode "pi-lsp"
  "The pi-lsp transcript.  \\{pi-lsp-transcript-mode-map}"
  ;; every face is a `font-lock-face' property set when the text is inserted; no keywords
  (setq-local font-lock-defaults '(nil t))
  (setq-local truncate-lines nil)
  (setq-local word-wrap t)
  (setq pi-lsp--calls (make-hash-table :test #'equal)))

(defun pi-lsp-transcript ()
  "The transcript buffer (created when missing)."
  (or (get-buffer pi-lsp-transcript-buffer)
      (with-current-buffer (get-buffer-create pi-lsp-transcript-buffer)
        (pi-lsp-transcript-mode)
        (current-buffer))))

(defmacro pi-lsp--with-transcript (&rest body)
  "Run BODY in the writable transcript; windows (and point) that were at the end follow it."
  (declare (indent 0) (debug t))
  `(with-current-buffer (pi-lsp-transcript)
     (let* ((inhibit-read-only t)
            (at-end (= (point) (point-max)))
            (followers (cl-remove-if-not (lambda (w) (= (window-point w) (point-max)))
                                         (get-buffer-window-list (current-buffer) nil t))))
       (prog1 (save-excursion ,@body)
         (when at-end (goto-char (point-max)))
         (dolist (w followers) (set-window-point w (point-max)))))))

(defun pi-lsp-transcript-followers ()
  "The windows showing the end of the transcript (they follow new text)."
  (when-let ((buffer (get-buffer pi-lsp-transcript-buffer)))
    (with-current-buffer buffer
      (cl-remove-if-not (lambda (w) (= (window-point w) (point-max)))
                        (get-buffer-window-list buffer nil t)))))

(defun pi-lsp-transcript-follow (windows)
  "Move the live WINDOWS among the transcript's to its end.
For code that restores window configurations (a minibuffer read does): the windows that
followed the transcript before keep following it."
  (when-let ((buffer (get-buffer pi-lsp-transcript-buffer)))
    (dolist (w windows)
      (when (and (window-live-p w) (eq (window-buffer w) buffer))
        (set-window-point w (with-current-buffer buffer (point-max)))))))

(defun pi-lsp--fresh-line ()
  "Make the transcript end at the start of a line."
  (goto-char (point-max))
  (unless (bolp) (insert "\n")))

(defun pi-lsp--fontify-markdown (start end)
  "Give the assistant's text between START and END its Markdown-ish faces."
  (save-excursion
    (dolist (keyword pi-lsp--markdown-keywords)
      (goto-char start)
      (while (re-search-forward (nth 0 keyword) end t)
        (put-text-property (match-beginning (nth 1 keyword)) (match-end (nth 1 keyword))
                           'font-lock-face (nth 2 keyword))))))

(defun pi-lsp--end-text ()
  "The assistant's text stopped streaming: give it its faces."
  (with-current-buffer (pi-lsp-transcript)
    (when (markerp pi-lsp--in-text)
      (let ((inhibit-read-only t))
        (pi-lsp--fontify-markdown pi-lsp--in-text (point-max)))
      (set-marker pi-lsp--in-text nil))
    (setq pi-lsp--in-text nil)))

(defun pi-lsp-transcript-line (text &optional face)
  "Append TEXT (in FACE) as a line of its own to the transcript."
  (pi-lsp--end-text)
  (pi-lsp--with-transcript
    (pi-lsp--fresh-line)
    (insert (if face (propertize text 'font-lock-face face) text) "\n")))

(defun pi-lsp-transcript-stream (text)
  "Append streamed assistant TEXT."
  (when (and (stringp text) (> (length text) 0))
    (pi-lsp--with-transcript
      (unless pi-lsp--in-text (pi-lsp--fresh-line) (setq pi-lsp--in-text (copy-marker (point))))
      (goto-char (point-max))
      (insert text))))

;;; Tool calls

(defun pi-lsp--one-line (text limit)
  "The first line of TEXT, cut to LIMIT characters."
  (let ((line (car (split-string (or text "") "\n"))))
    (if (> (length line) limit) (concat (substring line 0 limit) "…") line)))

(defun pi-lsp-call-summary (name args)
  "The readable line of a tool call NAME with ARGS (plist): \"edit textkit/slug.py\"."
  (let ((arg (lambda (key) (let ((v (plist-get args key))) (and v (format "%s" v))))))
    (string-trim
     (pcase name
       ("bash" (format "bash %s" (pi-lsp--one-line (funcall arg :command) 100)))
       ((or "edit" "write" "ls") (format "%s %s" name (or (funcall arg :path) ".")))
       ("read" (concat "read " (funcall arg :path)
                       (if (plist-get args :offset) (format " from line %s" (plist-get args :offset)) "")))
       ((or "grep" "find") (format "%s %s%s" name (or (funcall arg :pattern) "")
                                   (if (plist-get args :path) (concat " in " (funcall arg :path)) "")))
       ((or "definition" "references" "hover")
        (format "%s %s %s:%s" name (funcall arg :symbol) (funcall arg :path) (funcall arg :line)))
       ("rename" (format "rename %s → %s %s:%s" (funcall arg :symbol) (funcall arg :newName)
                         (funcall arg :path) (funcall arg :line)))
       ((or "symbols" "diagnostics") (format "%s %s" name (or (funcall arg :path) "")))
       (_ (format "%s %s" name (pi-lsp--one-line (pi-lsp--json args) 100)))))))

(defun pi-lsp--json (value)
  "VALUE (parsed JSON plist) as JSON text."
  (condition-case nil
      (let ((json (json-serialize value :null-object nil :false-object :json-false)))
        (decode-coding-string json 'utf-8))
    (error (format "%S" value))))

(defun pi-lsp--result-text (result)
  "The text blocks of a ToolResultMessage plist, joined."
  (mapconcat (lambda (block) (if (equal (plist-get block :type) "text") (or (plist-get block :text) "") ""))
             (plist-get result :content) ""))

(defun pi-lsp--indent (text prefix &optional face)
  "TEXT with PREFIX before each line, ending with a newline, in FACE."
  (let ((lines (split-string (string-trim-right text "\n+") "\n")))
    (mapconcat (lambda (line) (concat prefix (if face (propertize line 'font-lock-face face) line) "\n")) lines "")))

(defun pi-lsp--plist-p (value)
  "Non-nil when VALUE is a JSON object as jsonrpc.el parses it (a plist with keyword keys)."
  (and (consp value) (keywordp (car value))))

(defun pi-lsp--readable (value indent)
  "VALUE (parsed JSON) as readable lines at INDENT spaces: \"key: value\", multi-line
strings as indented blocks after \"key: |\", arrays as \"key[N]:\" entries (1-based)."
  (let ((pad (make-string indent ?\s)))
    (cond
     ((pi-lsp--plist-p value)
      (cl-loop for (key item) on value by #'cddr
               concat (pi-lsp--readable-entry (substring (symbol-name key) 1) item indent)))
     (t (concat pad (pi-lsp--scalar value) "\n")))))

(defun pi-lsp--scalar (value)
  "A JSON scalar VALUE as text (strings bare)."
  (cond ((stringp value) value)
        ((eq value :json-false) "false")
        ((eq value t) "true")
        ((null value) "null")
        (t (pi-lsp--json value))))

(defun pi-lsp--readable-entry (name item indent)
  "One NAME: ITEM entry of `pi-lsp--readable' at INDENT."
  (let ((pad (make-string indent ?\s)))
    (cond
     ((and (stringp item) (string-match-p "\n" item))
      (concat pad (propertize (concat name ": |") 'font-lock-face 'pi-lsp-detail) "\n"
              (mapconcat (lambda (line) (concat pad "  " line "\n")) (split-string item "\n") "")))
     ((pi-lsp--plist-p item)
      (concat pad (propertize (concat name ":") 'font-lock-face 'pi-lsp-detail) "\n" (pi-lsp--readable item (+ indent 2))))
     ((and (vectorp item) (> (length item) 0))
      (let ((n 0))
        (mapconcat (lambda (element)
                     (setq n (1+ n))
                     (pi-lsp--readable-entry (format "%s[%d]" name n) element indent))
                   item "")))
     (t (concat pad (propertize (concat name ": ") 'font-lock-face 'pi-lsp-detail) (pi-lsp--scalar item) "\n")))))

(defun pi-lsp--diff-text (patch)
  "PATCH (a unified diff) indented, each line in its `diff-mode' face."
  (mapconcat (lambda (line)
               (let ((face (cond ((string-prefix-p "+++" line) 'diff-file-header)
                                 ((string-prefix-p "---" line) 'diff-file-header)
                                 ((string-prefix-p "@@" line) 'diff-hunk-header)
                                 ((string-prefix-p "+" line) 'diff-added)
                                 ((string-prefix-p "-" line) 'diff-removed)
                                 (t 'diff-context))))
                 (concat "    " (propertize line 'font-lock-face face) "\n")))
             (split-string (string-trim-right patch "\n+") "\n") ""))

(defun pi-lsp--tail (text n)
  "The last N lines of TEXT."
  (let ((lines (split-string (string-trim-right (or text "") "\n+") "\n")))
    (string-join (last lines n) "\n")))

(defun pi-lsp--call-body (call)
  "The text under CALL's line: the live tail while it runs, the details when expanded."
  (let ((args (pi-lsp--call-args call))
        (result (pi-lsp--call-result call)))
    (concat
     (when (and (not (pi-lsp--call-done call)) (> (length (or (pi-lsp--call-output call) "")) 0))
       (pi-lsp--indent (pi-lsp--tail (pi-lsp--call-output call) pi-lsp-transcript-tail-lines) "    │ " 'pi-lsp-detail))
     (when (pi-lsp--call-expanded call)
       (concat
        "    arguments:\n"
        (if (equal (pi-lsp--call-name call) "bash")
            (pi-lsp--indent (format "%s" (plist-get args :command)) "      $ ")
          (pi-lsp--readable args 6))
        (when-let ((patch (plist-get (plist-get result :details) :patch)))
          (concat "    diff:\n" (pi-lsp--diff-text patch)))
        (cond ((pi-lsp--call-done call)
               (concat (if (pi-lsp--call-error call) (propertize "    error:" 'font-lock-face 'error) "    result:") "\n"
                       (pi-lsp--indent (pi-lsp--result-text result) "      "
                                       (if (pi-lsp--call-error call) 'error 'pi-lsp-detail))))
              ((pi-lsp--call-output call)
               (concat "    output so far:\n" (pi-lsp--indent (pi-lsp--call-output call) "      " 'pi-lsp-detail)))))))))

(defun pi-lsp--call-header-text (call)
  "CALL's one line, with its state mark."
  (let ((mark (cond ((not (pi-lsp--call-done call)) (propertize " …" 'font-lock-face 'pi-lsp-detail))
                    ((pi-lsp--call-error call) (propertize " ✗ error" 'font-lock-face 'error))
                    (t (propertize " ✓" 'font-lock-face 'pi-lsp-ok)))))
    (concat (if (pi-lsp--call-expanded call) "▾ " "▸ ")
            (propertize (pi-lsp-call-summary (pi-lsp--call-name call) (pi-lsp--call-args call)) 'font-lock-face 'pi-lsp-tool)
            mark)))

(defun pi-lsp--render-call (call)
  "Rewrite CALL's line and body in place."
  (pi-lsp--with-transcript
    (let ((header (pi-lsp--call-header call))
          (body-start (pi-lsp--call-body-start call))
          (body-end (pi-lsp--call-body-end call)))
      (goto-char header)
      (delete-region header (1- body-start))
      (let ((start (point)))
        (insert (pi-lsp--call-header-text call))
        (set-marker header start))           ; its insertion type is t (see `pi-lsp-transcript-call-start')
      (add-text-properties header (1- body-start)
                           (list 'pi-lsp-call (pi-lsp--call-id call) 'mouse-face 'highlight
                                 'help-echo "TAB or mouse-1: show or hide arguments and result"
                                 'keymap (let ((map (make-sparse-keymap)))
                                           (define-key map [mouse-1] #'pi-lsp-transcript-toggle) map)))
      (delete-region body-start body-end)
      (set-marker-insertion-type body-end t)
      (goto-char body-start)
      (insert (or (pi-lsp--call-body call) ""))
      (set-marker-insertion-type body-end nil))))

(defun pi-lsp-transcript-call-start (id name args)
  "A tool call ID of tool NAME with ARGS started: add its line."
  (let (call)
    (pi-lsp--end-text)
    (pi-lsp--with-transcript
      (pi-lsp--fresh-line)
      ;; the line's marker advances over text inserted at it (the body of the call before it);
      ;; the body's end marker does not (text appended after the call is not its body)
      (let ((header (point)))
        (insert "\n")
        (setq header (copy-marker header t))
        (setq call (pi-lsp--make-call :id id :name name :args args :header header
                                      :body-start (copy-marker (point)) :body-end (copy-marker (point))))
        (puthash id call pi-lsp--calls)))
    (pi-lsp--render-call call)))

(defun pi-lsp--find-call (id)
  "The call ID of the transcript, or nil."
  (with-current-buffer (pi-lsp-transcript) (gethash id pi-lsp--calls)))

(defun pi-lsp-transcript-call-output (id text)
  "New output TEXT of the running call ID."
  (when-let ((call (pi-lsp--find-call id)))
    (setf (pi-lsp--call-output call) (concat (pi-lsp--call-output call) text))
    (let ((max 65536) (output (pi-lsp--call-output call)))
      (when (> (length output) max)
        (setf (pi-lsp--call-output call) (substring output (- (length output) max)))))
    (pi-lsp--render-call call)))

(defun pi-lsp-transcript-call-end (id name result error)
  "The call ID (tool NAME) ended with RESULT; ERROR non-nil when it failed."
  (let ((call (or (pi-lsp--find-call id)
                  (progn (pi-lsp-transcript-call-start id name nil) (pi-lsp--find-call id)))))
    (setf (pi-lsp--call-done call) t
          (pi-lsp--call-result call) result
          (pi-lsp--call-error call) error)
    (when (and pi-lsp-transcript-expand-edits (not error) (member name '("edit" "write"))
               (plist-get (plist-get result :details) :patch))
      (setf (pi-lsp--call-expanded call) t))
    (pi-lsp--render-call call)))

(defun pi-lsp-transcript-interrupt-calls (reason)
  "Mark every call still running as failed with REASON (its server is gone)."
  (when-let ((buffer (get-buffer pi-lsp-transcript-buffer)))
    (let (running)
      (maphash (lambda (_ call) (unless (pi-lsp--call-done call) (push call running)))
               (buffer-local-value 'pi-lsp--calls buffer))
      (dolist (call running)
        (pi-lsp-transcript-call-end (pi-lsp--call-id call) (pi-lsp--call-name call)
                                    (list :content (vector (list :type "text" :text reason))) t)))))

(defun pi-lsp-transcript-toggle (&optional event)
  "Expand or collapse the tool call on this line (or at the mouse EVENT)."
  (interactive (list last-nonmenu-event))
  (when (mouse-event-p event) (posn-set-point (event-end event)))
  (let* ((id (get-text-property (line-beginning-position) 'pi-lsp-call))
         (call (and id (gethash id pi-lsp--calls))))
    (if (not call)
        (message "No tool call on this line")
      (setf (pi-lsp--call-expanded call) (not (pi-lsp--call-expanded call)))
      (let ((here (point)))
        (pi-lsp--render-call call)
        (goto-char here)))))

(defun pi-lsp-transcript-next-call (&optional n)
  "Move to the Nth next tool call line."
  (interactive "p")
  (let ((n (or n 1)))
    (dotimes (_ (abs n))
      (let ((pos (if (> n 0)
                     (next-single-property-change (line-end-position) 'pi-lsp-call)
                   (previous-single-property-change (line-beginning-position) 'pi-lsp-call))))
        (when pos
          (goto-char pos)
          (unless (get-text-property (point) 'pi-lsp-call)
            (when (< n 0) (goto-char (or (previous-single-property-change (point) 'pi-lsp-call) (point)))))
          (beginning-of-line))))))

(defun pi-lsp-transcript-previous-call (&optional n)
  "Move to the Nth previous tool call line."
  (interactive "p")
  (pi-lsp-transcript-next-call (- (or n 1))))

;;; Approvals

(defun pi-lsp-transcript-approval-waiting (id title)
  "The agent waits for the user's approval ID (TITLE): a line, once per ID."
  (with-current-buffer (pi-lsp-transcript)
    (unless (assoc id pi-lsp--approval-lines)
      (push (cons id 'waiting) pi-lsp--approval-lines)
      (pi-lsp-transcript-line (format "⚠ waiting for your approval: %s" title) 'pi-lsp-waiting))))

(defun pi-lsp-transcript-approval-outcome (id text denied)
  "Approval ID ended as TEXT (DENIED non-nil: in the error face): a line, once per ID."
  (with-current-buffer (pi-lsp-transcript)
    (let ((entry (assoc id pi-lsp--approval-lines)))
      (unless (eq (cdr entry) 'done)
        (if entry (setcdr entry 'done) (push (cons id 'done) pi-lsp--approval-lines))
        (pi-lsp-transcript-line (concat (if denied "✗ " "✓ ") text) (if denied 'error 'pi-lsp-ok))))))

;;; Events

(defun pi-lsp-transcript-event (event)
  "Render one `pi/event' EVENT plist."
  (pcase (plist-get event :type)
    ("message_update"
     (let ((delta (plist-get event :delta)))
       (when (equal (plist-get delta :type) "text")
         (pi-lsp-transcript-stream (plist-get delta :text)))))
    ("message_end"
     (pi-lsp--end-text)
     (let ((message (plist-get event :message)))
       (when (and (equal (plist-get message :role) "assistant")
                  (equal (plist-get message :stopReason) "error"))
         (pi-lsp-transcript-line (concat "✗ " (or (plist-get message :errorMessage) "the model call failed")) 'error))))
    ("tool_execution_start"
     (pi-lsp-transcript-call-start (plist-get event :toolCallId) (plist-get event :toolName) (plist-get event :args)))
    ("tool_execution_update"
     (pi-lsp-transcript-call-output (plist-get event :toolCallId) (or (plist-get event :output) "")))
    ("tool_execution_end"
     (pi-lsp-transcript-call-end (plist-get event :toolCallId) (plist-get event :toolName)
                                 (plist-get event :result) (eq (plist-get event :isError) t)))
    ("approval_requested"
     (pi-lsp-transcript-approval-waiting (plist-get event :approvalId) (plist-get event :title)))
    ("approval_resolved"
     (let ((allowed (equal (plist-get event :decision) "allow"))
           (by (plist-get event :by)))
       (pi-lsp-transcript-approval-outcome
        (plist-get event :approvalId)
        (cond (allowed (format "allowed %s" (if (equal (plist-get event :scope) "session") "for this session" "once")))
              ((equal by "user") "denied by you")
              ((equal by "timeout") "approval timed out: denied")
              ((equal by "aborted") "approval withdrawn, the run was aborted: denied")
              ((equal by "cancelled") "approval withdrawn, the call was cancelled: denied")
              (t (format "denied (%s)" (or by "no answer"))))
        (not allowed))))
    ("pi_file_saved"
     (when-let ((path (or (plist-get event :path) (plist-get event :uri))))
       (pi-lsp-transcript-line (format "    saved %s" path) 'pi-lsp-detail)))
    ("agent_end"
     (let ((reason (plist-get event :stopReason)))
       (unless (equal reason "error")
         (pi-lsp-transcript-line (if (equal reason "aborted") "■ aborted" (format "■ done (%s)" reason))
                                 (if (equal reason "aborted") 'warning 'pi-lsp-ok)))))))

(defun pi-lsp-transcript-run-ended (reply)
  "The `pi/prompt' REPLY arrived (a plist, or (:error MESSAGE)): mark errors as the final state.
An aborted run's reply carries \"Request was aborted\" as its error; its `agent_end' wrote
\"■ aborted\" already, so it is not written again as an error."
  (let ((message (or (plist-get reply :errorMessage) (plist-get reply :error))))
    (when (and (or message (equal (plist-get reply :stopReason) "error"))
               (not (equal (plist-get reply :stopReason) "aborted")))
      (pi-lsp-transcript-line (format "■ error: %s" (or message "the run failed")) 'error))))

(provide 'pi-lsp-transcript)
;;; pi-lsp-transcript.el ends here
