;;; pi-lsp-changes.el --- Review and rewind: the agent's change set in a diff-mode buffer  -*- lexical-binding: t -*-

;;; Commentary:

;; `M-x pi-lsp-changes' shows what a session changed (issue 18, README "Wire contract"):
;; `pi/changes {sessionId}' rendered in `*pi-lsp changes*', a `diff-mode'-derived buffer.  Per
;; file a line "modified notes.txt  (edit e1; turn 1)" (created / deleted / binary files say
;; what a revert would do), then for a text file a unified diff whose hunk headers end with the
;; hunk's status: applied (as the agent left it), changed (the user changed it since), reverted
;; or kept.  The hunk ranges of `pi/changes' are 0-based; the headers show them 1-based, as
;; unified diffs do.
;;
;; Keys on the hunk (or file) at point: k keeps the hunk (`pi/keepChanges'), u reverts it, U
;; reverts its file, T reverts the turn: what the user's prompt of the change at point changed,
;; all its model calls (`pi/revertChanges {hunks | files | prompt | turn}'), RET visits
;; the hunk where it is now, g asks again; n / p / N / P move as in `diff-mode'.  A revert of a
;; file Emacs visits arrives as `workspace/applyEdit' through pi-lsp-edits.el, so it is one undo
;; step in that buffer.  The server never overwrites text changed after the agent's change: such
;; a hunk comes back as a conflict, shown in the echo area and at the top of the buffer.
;;
;; After a prompt run that changed files, the transcript gets a line "N files changed: review"
;; whose button opens this buffer for the run's session.

;;; Code:

(require 'cl-lib)
(require 'diff-mode)
(require 'subr-x)
(require 'pi-lsp-connection)
(require 'pi-lsp-documents)
(require 'pi-lsp-transcript)

(defcustom pi-lsp-changes-timeout 30
  "Seconds to wait for a reply to `pi/changes', `pi/revertChanges' or `pi/keepChanges'."
  :type 'number
  :group 'pi-lsp)

(defconst pi-lsp-changes-buffer "*pi-lsp changes*"
  "Name of the change set buffer.")

(defconst pi-lsp-changes-external "external"
  "The session of calls that came over `pi/executeToolCall(s)' (turn 0).")

(defvar-local pi-lsp-changes--conn nil "The connection the buffer's change set comes from.")
(defvar-local pi-lsp-changes--session nil "The session id shown.")
(defvar-local pi-lsp-changes--turn nil "The turn shown, or nil for the whole session.")
(defvar-local pi-lsp-changes--current-turn nil "The session's current turn at the last refresh.")
(defvar-local pi-lsp-changes--report nil "The outcome of the last command, as lines shown on top.")

(defvar pi-lsp-changes-mode-map
  (let ((map (make-sparse-keymap)))
    ;; n / p / N / P / TAB from diff-mode; the buffer is read-only, so no ESC prefix is needed
    (set-keymap-parent map diff-mode-shared-map)
    (define-key map (kbd "k") #'pi-lsp-changes-keep)
    (define-key map (kbd "u") #'pi-lsp-changes-revert-hunk)
    (define-key map (kbd "U") #'pi-lsp-changes-revert-file)
    (define-key map (kbd "T") #'pi-lsp-changes-revert-turn)
    (define-key map (kbd "RET") #'pi-lsp-changes-visit)
    (define-key map (kbd "o") #'pi-lsp-changes-visit)
    (define-key map (kbd "g") #'pi-lsp-changes-refresh)
    ;; diff-mode commands that edit this text or apply the patch themselves (a revert goes
    ;; through the server, which checks for the user's changes): shadowed
    (dolist (key '("K" "A" "R" [remap undo]))
      (define-key map (if (stringp key) (kbd key) key) #'undefined))
    map)
  "Keys of `*pi-lsp changes*': k keep, u revert hunk, U revert file, T revert prompt, RET visit,
g refresh; n/p and N/P move between hunks and files.")

(define-derived-mode pi-lsp-changes-mode diff-mode "pi-changes"
  "The change set of a pi-lsp session.  \\{pi-lsp-changes-mode-map}"
  ;; diff-mode puts `diff-mode-shared-map' before the major map while the buffer is read-only,
  ;; where its k (diff-hunk-kill) would hide ours: use this mode's map there instead.
  (setq-local minor-mode-overriding-map-alist
              (cons (cons 'buffer-read-only pi-lsp-changes-mode-map)
                    (cl-remove 'buffer-read-only minor-mode-overriding-map-alist :key #'car)))
  ;; the text is ours: no fixing up of hunk headers after an insertion
  (remove-hook 'after-change-functions #'diff-after-change-function t)
  (remove-hook 'post-command-hook #'diff-post-command-hook t)
  (setq-local revert-buffer-function (lambda (&rest _) (pi-lsp-changes-refresh)))
  (setq buffer-read-only t)
  (setq buffer-undo-list t)                ; redrawn, never edited: nothing to undo
  (setq truncate-lines t))

;;; Rendering

(defun pi-lsp-changes--lines (text prefix)
  "TEXT as diff lines with PREFIX (\"-\", \"+\"), a missing final newline marked as diff does."
  (if (or (null text) (string-empty-p text))
      ""
    (let* ((final-newline (string-suffix-p "\n" text))
           (lines (split-string (if final-newline (substring text 0 -1) text) "\n")))
      (concat (mapconcat (lambda (line) (concat prefix (string-remove-suffix "\r" line) "\n")) lines "")
              (if final-newline "" "\\ No newline at end of file\n")))))

(defun pi-lsp-changes--range (start count)
  "A unified diff range \"L,N\" for the 0-based START and COUNT lines (L 1-based; after line L when N is 0)."
  (format "%d,%d" (if (> count 0) (1+ start) start) count))

(defun pi-lsp-changes--calls (file)
  "The tool calls of FILE (a `pi/changes' entry) as \"edit e1, write w2; turn 1\"."
  (let ((calls (append (plist-get file :toolCalls) nil)))
    (format "%s; turn %s"
            (mapconcat (lambda (call) (format "%s %s" (plist-get call :toolName) (plist-get call :toolCallId)))
                       calls ", ")
            (string-join (delete-dups (mapcar (lambda (call) (format "%s" (plist-get call :turn))) calls)) ", "))))

(defun pi-lsp-changes--relative (path)
  "PATH relative to the project root of the buffer's connection."
  (if (and pi-lsp-changes--conn (string-prefix-p (pi-lsp-root pi-lsp-changes--conn) path))
      (file-relative-name path (pi-lsp-root pi-lsp-changes--conn))
    path))

(defun pi-lsp-changes--file-note (file)
  "What FILE's header says beyond its state, or nil."
  (let ((state (plist-get file :state)))
    (cond ((eq (plist-get file :restorable) :json-false) "not restorable: too large to keep")
          ((equal (plist-get file :current) "reverted") "reverted")
          ((equal state "created") "U deletes it")
          ((equal state "deleted") "U restores it")
          ((eq (plist-get file :binary) t) "binary; U restores the whole file"))))

(defun pi-lsp-changes--insert-file (file)
  "Insert FILE (a `pi/changes' entry): its header line and its hunks."
  (let* ((path (plist-get file :path))
         (name (pi-lsp-changes--relative path))
         (note (pi-lsp-changes--file-note file))
         (start (point)))
    (insert (format "%s %s  (%s)%s\n" (plist-get file :state) name (pi-lsp-changes--calls file)
                    (if note (concat "  " note) "")))
    (when (> (length (plist-get file :hunks)) 0)
      (insert (format "--- %s\n+++ %s\n" name name)))
    (put-text-property start (point) 'pi-lsp-file file)
    (seq-doseq (hunk (plist-get file :hunks))
      (let ((hunk-start (point)))
        (insert (format "@@ -%s +%s @@ %s\n"
                        (pi-lsp-changes--range (plist-get hunk :oldStart) (plist-get hunk :oldLines))
                        (pi-lsp-changes--range (plist-get hunk :newStart) (plist-get hunk :newLines))
                        (plist-get hunk :status))
                (pi-lsp-changes--lines (plist-get hunk :oldText) "-")
                (pi-lsp-changes--lines (plist-get hunk :newText) "+"))
        (add-text-properties hunk-start (point) (list 'pi-lsp-file file 'pi-lsp-hunk hunk))))))

(defun pi-lsp-changes--render (result)
  "Fill the current buffer with the `pi/changes' RESULT, keeping point's line where it can."
  (let ((inhibit-read-only t)
        (line (line-number-at-pos))
        (files (sort (append (plist-get result :files) nil)
                     (lambda (a b) (string< (plist-get a :path) (plist-get b :path))))))
    (setq pi-lsp-changes--current-turn (plist-get result :currentTurn))
    (erase-buffer)
    (insert (format "Changes of session %s%s%s\n" pi-lsp-changes--session
                    (if pi-lsp-changes--turn (format ", turn %s" pi-lsp-changes--turn) "")
                    (if (and (null pi-lsp-changes--turn) pi-lsp-changes--current-turn)
                        (format " (turns up to %s)" pi-lsp-changes--current-turn) ""))
            "k keep  u revert hunk  U revert file  T revert prompt  RET visit  g refresh\n")
    (dolist (report-line pi-lsp-changes--report)
      (insert report-line "\n"))
    (insert "\n")
    (if (null files)
        (insert "No changes.\n")
      (dolist (file files) (pi-lsp-changes--insert-file file)))
    (set-buffer-modified-p nil)
    (goto-char (point-min))
    (forward-line (1- line))))

;;; Requests

(defun pi-lsp-changes--request (method params)
  "Send METHOD with PARAMS on the buffer's connection and return the result (a plist).
Signals `user-error' when the connection is gone and shows the server's error otherwise."
  (unless (and pi-lsp-changes--conn (jsonrpc-running-p pi-lsp-changes--conn))
    (user-error "pi-lsp: the server of this change set is not running; M-x pi-lsp-changes again"))
  (pi-lsp-flush-changes)                  ; the server compares against what the user sees
  (condition-case err
      (jsonrpc-request pi-lsp-changes--conn method params :timeout pi-lsp-changes-timeout)
    (jsonrpc-error
     (user-error "pi-lsp: %s failed: %s" method
                 (or (alist-get 'jsonrpc-error-message (cdr err)) (format "%S" (cdr err)))))))

(defun pi-lsp-changes-refresh ()
  "Ask the server for the change set again and redraw the buffer."
  (interactive)
  (let ((params (append (list :sessionId pi-lsp-changes--session)
                        (and pi-lsp-changes--turn (list :turn pi-lsp-changes--turn)))))
    (pi-lsp-changes--render (pi-lsp-changes--request :pi/changes params))))

(defun pi-lsp-changes--connection (&optional session)
  "The connection for `pi-lsp-changes': the current project's, else the only one running.
With SESSION, one whose last prompt ran SESSION is preferred."
  (let ((running (cl-remove-if-not #'jsonrpc-running-p pi-lsp--connections)))
    (or (and session (cl-find session running :key #'pi-lsp-session-id :test #'equal))
        (when-let ((root (pi-lsp-project-root))) (pi-lsp-connection-for-root root))
        (and (= (length running) 1) (car running))
        (user-error "pi-lsp: no running pi-lsp for this project (M-x pi-lsp-start)"))))

;;;###autoload
(defun pi-lsp-changes (&optional session conn turn)
  "Show the change set of SESSION in `*pi-lsp changes*' (see the Commentary for its keys).
SESSION defaults to the session of the last prompt, or `external' (the calls over
`pi/executeToolCall(s)') when no prompt ran yet; CONN to the current project's connection; TURN
\(an integer) shows that turn only, nil the whole session.  Interactively, \\[universal-argument]
shows the session `external', a numeric prefix argument N the last prompt's session's turn N.
Returns the buffer."
  (interactive (list (and (consp current-prefix-arg) pi-lsp-changes-external)
                     nil
                     (and (integerp current-prefix-arg) current-prefix-arg)))
  (let* ((conn (or conn (pi-lsp-changes--connection session)))
         (session (or session (pi-lsp-session-id conn) pi-lsp-changes-external))
         (buffer (get-buffer-create pi-lsp-changes-buffer)))
    (with-current-buffer buffer
      (unless (eq major-mode 'pi-lsp-changes-mode) (pi-lsp-changes-mode))
      (unless (and (eq pi-lsp-changes--conn conn) (equal pi-lsp-changes--session session)
                   (eql pi-lsp-changes--turn turn))
        (setq pi-lsp-changes--report nil))
      (setq pi-lsp-changes--conn conn
            pi-lsp-changes--session session
            pi-lsp-changes--turn turn)
      (setq default-directory (pi-lsp-root conn))
      (pi-lsp-changes-refresh)
      (goto-char (point-min))
      (when (re-search-forward "^@@ " nil t) (goto-char (line-beginning-position))))
    (pop-to-buffer buffer)
    buffer))

;;; Commands on the hunk at point

(defun pi-lsp-changes--hunk-at-point ()
  "The `pi/changes' hunk at point, or a `user-error'."
  (or (get-text-property (line-beginning-position) 'pi-lsp-hunk)
      (user-error "No hunk on this line (n and p move between hunks)")))

(defun pi-lsp-changes--file-at-point ()
  "The `pi/changes' file entry at point, or a `user-error'."
  (or (get-text-property (line-beginning-position) 'pi-lsp-file)
      (user-error "No changed file on this line (N and P move between files)")))

(defun pi-lsp-changes--describe (result what)
  "Lines saying what the `pi/revertChanges' RESULT of WHAT did, conflicts included."
  (let ((reverted (length (plist-get result :reverted)))
        (files (cl-remove "reverted hunks" (append (plist-get result :files) nil) ; said by the count
                          :key (lambda (f) (plist-get f :action)) :test #'equal))
        (conflicts (append (plist-get result :conflicts) nil)))
    (cons (format "Revert %s: %s%s" what
                  (string-join
                   (or (delq nil (list (and (> reverted 0) (format "%d hunk%s reverted" reverted (if (= reverted 1) "" "s")))
                                       (and files (mapconcat (lambda (f) (format "%s %s" (pi-lsp-changes--relative (plist-get f :path))
                                                                                 (plist-get f :action)))
                                                             files ", "))))
                       (list "nothing reverted"))
                   "; ")
                  (if conflicts (format "; %d conflict%s, left as they are" (length conflicts)
                                        (if (= (length conflicts) 1) "" "s"))
                    ""))
          (mapcar (lambda (c) (format "  conflict: %s%s: %s" (pi-lsp-changes--relative (plist-get c :path))
                                      (if (plist-get c :hunk) (format " hunk %s" (plist-get c :hunk)) "")
                                      (plist-get c :reason)))
                  conflicts))))

(defun pi-lsp-changes--after-revert (result what)
  "Show the `pi/revertChanges' RESULT of WHAT in the echo area and the buffer; drop buffers of deleted files."
  (dolist (f (append (plist-get result :files) nil))
    (when (equal (plist-get f :action) "deleted")
      (let ((visiting (find-buffer-visiting (plist-get f :path))))
        (when (and visiting (not (buffer-modified-p visiting)))
          (kill-buffer visiting)))))
  (setq pi-lsp-changes--report (pi-lsp-changes--describe result what))
  (pi-lsp-changes-refresh)
  (message "pi-lsp: %s" (string-join (mapcar #'string-trim pi-lsp-changes--report) "; "))
  result)

(defun pi-lsp-changes--revert (params what)
  "`pi/revertChanges' with PARAMS (plus the session); report it as WHAT.  Returns the result."
  (pi-lsp-changes--after-revert
   (pi-lsp-changes--request :pi/revertChanges (append (list :sessionId pi-lsp-changes--session) params))
   what))

(defun pi-lsp-changes-revert-hunk ()
  "Take back the hunk at point, unless it changed since the agent's edit (then: a conflict)."
  (interactive)
  (let ((hunk (pi-lsp-changes--hunk-at-point)))
    (pi-lsp-changes--revert (list :hunks (vector (plist-get hunk :id)))
                            (format "hunk %s of %s" (plist-get hunk :id)
                                    (pi-lsp-changes--relative (plist-get (pi-lsp-changes--file-at-point) :path))))))

(defun pi-lsp-changes-revert-file ()
  "Take back every change of the file at point that is still as the agent left it.
A file the agent created is deleted, one it deleted restored; hunks changed since are conflicts."
  (interactive)
  (let ((path (plist-get (pi-lsp-changes--file-at-point) :path)))
    (pi-lsp-changes--revert (list :files (vector path)) (pi-lsp-changes--relative path))))

(defun pi-lsp-changes--turn-at-point ()
  "The turn of the change at point: the buffer's turn, else the last turn of the file at point."
  (or pi-lsp-changes--turn
      (let ((calls (append (plist-get (pi-lsp-changes--file-at-point) :toolCalls) nil)))
        (apply #'max (mapcar (lambda (call) (string-to-number (format "%s" (plist-get call :turn)))) calls)))))

(defun pi-lsp-changes--prompt-at-point ()
  "The prompt (what the user asked, all its model turns) of the last change of the file at point, or nil.
Nil for calls without a prompt: the session `external', or journals from before prompts were recorded."
  (let ((prompts (delq nil (mapcar (lambda (call) (let ((p (plist-get call :prompt))) (and p (string-to-number (format "%s" p)))))
                                   (append (plist-get (pi-lsp-changes--file-at-point) :toolCalls) nil)))))
    (and prompts (apply #'max prompts))))

(defun pi-lsp-changes-revert-turn (turn &optional prompt)
  "Take back everything PROMPT (or, without one, model TURN) changed that is still as the agent left it.
Asks first.  Interactively: the prompt of the change at point, the user's unit (all the model turns
of what was asked); a change without a prompt, its turn; with a prefix argument, read a model turn."
  (interactive (if current-prefix-arg
                   (list (read-number "Revert model turn: " (ignore-errors (pi-lsp-changes--turn-at-point))))
                 (let ((prompt (pi-lsp-changes--prompt-at-point)))
                   (list (unless prompt (pi-lsp-changes--turn-at-point)) prompt))))
  (if prompt
      (when (y-or-n-p (format "Revert what prompt %d of session %s changed? " prompt pi-lsp-changes--session))
        (pi-lsp-changes--revert (list :prompt prompt) (format "prompt %d" prompt)))
    (when (y-or-n-p (format "Revert what turn %d of session %s changed? " turn pi-lsp-changes--session))
      (pi-lsp-changes--revert (list :turn turn) (format "turn %d" turn)))))

(defun pi-lsp-changes-keep ()
  "Mark the hunk at point reviewed and kept (`pi/keepChanges')."
  (interactive)
  (let ((hunk (pi-lsp-changes--hunk-at-point)))
    (pi-lsp-changes--request :pi/keepChanges (list :sessionId pi-lsp-changes--session
                                                   :hunks (vector (plist-get hunk :id))))
    (setq pi-lsp-changes--report (list (format "Kept hunk %s" (plist-get hunk :id))))
    (pi-lsp-changes-refresh)
    (message "pi-lsp: kept hunk %s" (plist-get hunk :id))))

(defun pi-lsp-changes-visit ()
  "Visit the file at point, at the hunk's place now (where the agent put it when it moved)."
  (interactive)
  (let* ((file (pi-lsp-changes--file-at-point))
         (hunk (get-text-property (line-beginning-position) 'pi-lsp-hunk))
         (path (plist-get file :path)))
    (unless (file-exists-p path)
      (user-error "pi-lsp: %s does not exist now" (pi-lsp-changes--relative path)))
    (pop-to-buffer (find-file-noselect path))
    (when hunk
      (widen)
      (goto-char (point-min))
      (forward-line (or (plist-get hunk :currentStart) (plist-get hunk :newStart))))))

;;; The transcript's link

(defvar pi-lsp-changes--run-calls (make-hash-table :test #'eq :weakness 'key)
  "Connection -> the toolCallIds of its running (or last) prompt.")

(defun pi-lsp-changes-run-started (conn)
  "A prompt run of CONN starts: forget the previous run's calls."
  (puthash conn nil pi-lsp-changes--run-calls))

(defun pi-lsp-changes-note-event (conn event)
  "Remember the tool calls of CONN's run from its `pi/event' EVENT."
  (when (equal (plist-get event :type) "tool_execution_start")
    (push (plist-get event :toolCallId) (gethash conn pi-lsp-changes--run-calls))))

(defun pi-lsp-changes--link (conn session count)
  "Append \"COUNT files changed: review\" to the transcript, the button opening SESSION of CONN."
  (pi-lsp--with-transcript
    (pi-lsp--fresh-line)
    (insert (format "%d file%s changed: " count (if (= count 1) "" "s")))
    (insert-text-button "review" 'action (lambda (_) (pi-lsp-changes session conn))
                        'follow-link t 'help-echo "Show the change set (M-x pi-lsp-changes)")
    (insert "\n")))

(defun pi-lsp-changes-run-ended (conn reply)
  "CONN's prompt run ended with REPLY: link the files it changed from the transcript."
  (let ((session (plist-get reply :sessionId))
        (calls (gethash conn pi-lsp-changes--run-calls)))
    (when (and session calls (jsonrpc-running-p conn))
      (jsonrpc-async-request
       conn :pi/changes (list :sessionId session)
       :timeout pi-lsp-changes-timeout
       :success-fn (lambda (result)
                     (let ((count (cl-count-if
                                   (lambda (file)
                                     (cl-some (lambda (call) (member (plist-get call :toolCallId) calls))
                                              (plist-get file :toolCalls)))
                                   (plist-get result :files))))
                       (when (> count 0) (pi-lsp-changes--link conn session count))))
       :error-fn #'ignore
       :timeout-fn #'ignore))))

(provide 'pi-lsp-changes)
;;; pi-lsp-changes.el ends here
