;;; pi-lsp.el --- Emacs (eglot) client for pi-lsp, the editor-side tool host of an AI coding agent  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: tools, languages

;;; Commentary:

;; pi-lsp speaks LSP plus custom `pi/*' methods (design.md section 5).  This file makes eglot
;; drive it:
;;
;; - `pi-lsp-eglot-register' (on request) puts pi-lsp first in `eglot-server-programs' for the
;;   given major modes, as the server class `pi-lsp-server';
;; - `pi-lsp-prompt' sends `pi/prompt' (with an active region, the region goes along as
;;   context) and `pi-lsp-abort' sends `pi/abort'; the `*pi-lsp*' transcript buffer shows the
;;   `pi/event' stream: assistant text, each tool call with its arguments and result, saves;
;; - `pi/saveDocuments' saves a visited buffer only when its version still matches, without
;;   `before-save-hook' (formatters), without adding a final newline, keeping the coding system
;;   (EOL and BOM), without backup files; `pi/reloadDocuments' reverts only unmodified buffers;
;; - after every `workspace/applyEdit', eglot's pending didChange is sent at once (eglot
;;   otherwise sends it only when Emacs is idle, which never happens in --batch), and each agent
;;   edit is its own undo step; server-initiated edits are not confirmed one by one.
;;
;; Advertised under `experimental.pi': saveDocuments and reloadDocuments.  Not editClosedFiles:
;; eglot asks `y-or-n-p' for every edit to a file no buffer visits, so pi-lsp edits those on
;; disk.  Not documentState: Emacs has no hook for every change of the modified flag, so
;; pi-lsp compares the buffer with the saved text itself.

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'jsonrpc)
(require 'subr-x)

(defgroup pi-lsp nil
  "Emacs client for pi-lsp."
  :group 'tools
  :prefix "pi-lsp-")

(defcustom pi-lsp-command '("pi-lsp")
  "The server command: the program (looked up on `exec-path') and its arguments."
  :type '(repeat string))

(defcustom pi-lsp-settings nil
  "The `pi' settings section as a plist, e.g. (:model \"gpt-4o\" :apiKeyEnv \"OPENAI_API_KEY\").
Sent as `initializationOptions.pi' (design.md section 5).  Keep it in your own init file:
it names the model endpoint and the key variable."
  :type 'plist)

(defcustom pi-lsp-modes '(prog-mode text-mode)
  "Major modes (and modes derived from them) `pi-lsp-eglot-register' hands to pi-lsp."
  :type '(repeat symbol))

(defcustom pi-lsp-prompt-timeout nil
  "Seconds to wait for a `pi/prompt' reply before giving up on it; nil waits for ever."
  :type '(choice (const nil) number))

(defconst pi-lsp-transcript-buffer "*pi-lsp*"
  "Name of the transcript buffer.")

(defvar pi-lsp--running nil
  "The `pi-lsp-server' running a prompt, or nil.")

(defvar pi-lsp--session-id nil
  "The session the next prompt continues (from the last `pi/prompt' reply).")

(defvar pi-lsp-last-reply nil
  "The last `pi/prompt' reply as a plist, or (:error MESSAGE).")

(defvar pi-lsp--in-text nil
  "Non-nil while assistant text streams into the last transcript line.")

(defclass pi-lsp-server (eglot-lsp-server) ()
  :documentation "An eglot connection to pi-lsp.")

;;;###autoload
(defun pi-lsp-eglot-register (&optional modes)
  "Make eglot start pi-lsp (class `pi-lsp-server') for buffers in MODES.
MODES defaults to `pi-lsp-modes'; modes derived from them match too.  The entry goes first in
`eglot-server-programs', replacing an earlier pi-lsp entry.  Returns the entry."
  (let ((entry (cons (or modes pi-lsp-modes) (cons 'pi-lsp-server pi-lsp-command))))
    (setq eglot-server-programs
          (cons entry (cl-remove-if (lambda (e) (and (consp (cdr e)) (eq (cadr e) 'pi-lsp-server)))
                                      eglot-server-programs)))
    entry))

(cl-defmethod eglot-client-capabilities ((_server pi-lsp-server))
  "Eglot's capabilities plus `experimental.pi' (see the Commentary)."
  (let ((caps (cl-call-next-method)))
    (plist-put caps :experimental
               (list :pi (list :saveDocuments t :reloadDocuments t
                               :editClosedFiles :json-false :documentState :json-false)))))

(cl-defmethod eglot-initialization-options ((_server pi-lsp-server))
  "`initializationOptions': the `pi' section from `pi-lsp-settings'."
  (list :pi (or pi-lsp-settings (make-hash-table))))

;;; Transcript

(defun pi-lsp--transcript ()
  "The transcript buffer (created when missing)."
  (or (get-buffer pi-lsp-transcript-buffer)
      (with-current-buffer (get-buffer-create pi-lsp-transcript-buffer)
        (special-mode)
        (current-buffer))))

(defun pi-lsp--insert (text)
  "Insert TEXT at the end of the transcript."
  (with-current-buffer (pi-lsp--transcript)
    (let ((inhibit-read-only t))
      (save-excursion
        (goto-char (point-max))
        (insert text)))))

(defun pi-lsp-transcript-line (text)
  "Append TEXT as a line of its own to the transcript."
  (with-current-buffer (pi-lsp--transcript)
    (let ((start-of-line (or (= (point-max) (point-min))
                             (eq (char-before (point-max)) ?\n))))
      (pi-lsp--insert (concat (if start-of-line "" "\n") text "\n"))))
  (setq pi-lsp--in-text nil))

(defun pi-lsp--stream (text)
  "Append streamed assistant TEXT to the current text line."
  (when (and (stringp text) (> (length text) 0))
    (unless pi-lsp--in-text
      (pi-lsp-transcript-line "")
      (with-current-buffer (pi-lsp--transcript)
        (let ((inhibit-read-only t))
          (delete-region (1- (point-max)) (point-max))))
      (setq pi-lsp--in-text t))
    (pi-lsp--insert text)))

(defun pi-lsp--cut (text limit)
  "TEXT cut to LIMIT characters."
  (if (> (length text) limit) (concat (substring text 0 limit) "…") text))

(defun pi-lsp--result-text (result)
  "The text blocks of a tool RESULT plist, joined."
  (mapconcat (lambda (block) (if (equal (plist-get block :type) "text") (plist-get block :text) ""))
             (plist-get result :content) ""))

(defun pi-lsp--json (value)
  "VALUE (parsed JSON) as compact JSON text."
  (condition-case nil
      (json-serialize value :null-object nil :false-object :json-false)
    (error (format "%S" value))))

(defun pi-lsp--show-event (event)
  "Render one `pi/event' EVENT plist into the transcript."
  (pcase (plist-get event :type)
    ("message_update"
     (let ((delta (plist-get event :delta)))
       (when (equal (plist-get delta :type) "text")
         (pi-lsp--stream (plist-get delta :text)))))
    ("message_end"
     (setq pi-lsp--in-text nil)
     (let ((message (plist-get event :message)))
       (when (and (equal (plist-get message :role) "assistant")
                  (equal (plist-get message :stopReason) "error"))
         (pi-lsp-transcript-line (concat "!! " (or (plist-get message :errorMessage) "the model call failed"))))))
    ("tool_execution_start"
     (pi-lsp-transcript-line (format "tool %s %s" (plist-get event :toolName)
                                     (pi-lsp--cut (pi-lsp--json (plist-get event :args)) 200))))
    ("tool_execution_end"
     (let ((text (car (split-string (pi-lsp--result-text (plist-get event :result)) "\n"))))
       (pi-lsp-transcript-line (format "  %s: %s" (if (eq (plist-get event :isError) t) "error" "ok")
                                       (pi-lsp--cut (or text "") 160)))))
    ("agent_end"
     (pi-lsp-transcript-line (format "-- done (%s) --" (plist-get event :stopReason))))))

(cl-defmethod eglot-handle-notification ((_server pi-lsp-server) (_method (eql pi/event)) &key event &allow-other-keys)
  "Show a `pi/event' in the transcript."
  (pi-lsp--show-event event))

;;; Edits, saves, reloads

(cl-defmethod eglot-handle-request :around ((server pi-lsp-server) (_method (eql workspace/applyEdit)) &rest _)
  "Apply an agent edit as one undo step, unconfirmed, and send its didChange at once."
  (dolist (buffer (eglot--managed-buffers server))
    (with-current-buffer buffer (undo-boundary)))
  (prog1 (let ((eglot-confirm-server-initiated-edits nil))
           (cl-call-next-method))
    (dolist (buffer (eglot--managed-buffers server))
      (when (buffer-live-p buffer)
        (with-current-buffer buffer
          (undo-boundary)
          (eglot--signal-textDocument/didChange))))))

(defun pi-lsp--save (buffer)
  "Save BUFFER for the agent (see the Commentary); signals an error when the write fails."
  (with-current-buffer buffer
    (eglot--signal-textDocument/didChange)
    (let ((before-save-hook nil)
          (require-final-newline nil)
          (make-backup-files nil))
      (save-buffer))))

(cl-defmethod eglot-handle-request ((_server pi-lsp-server) (_method (eql pi/saveDocuments)) &key documents)
  "Save the documents whose version still matches: {saved: [uri], skipped: [{uri, reason}]}."
  (let (saved skipped)
    (seq-doseq (doc documents)
      (let* ((uri (plist-get doc :uri))
             (version (plist-get doc :version))
             (buffer (and (stringp uri) (find-buffer-visiting (eglot--uri-to-path uri))))
             (current (and buffer (buffer-local-value 'eglot--versioned-identifier buffer)))
             (reason
              (cond ((null buffer) "the file is not visited in Emacs")
                    ((and (numberp version) (not (equal version current)))
                     (format "the buffer changed since the edit (version %s, not %s)" current version))
                    ((buffer-local-value 'buffer-read-only buffer) "the buffer is read-only")
                    (t (condition-case err
                           (progn (pi-lsp--save buffer) nil)
                         (error (format "the save failed: %s" (error-message-string err))))))))
        (if reason
            (progn (push (list :uri uri :reason reason) skipped)
                   (pi-lsp-transcript-line (format "  not saved %s: %s" uri reason)))
          (push uri saved)
          (pi-lsp-transcript-line (format "  saved %s" (file-relative-name (buffer-file-name buffer)))))))
    (list :saved (vconcat (nreverse saved)) :skipped (vconcat (nreverse skipped)))))

(cl-defmethod eglot-handle-request ((_server pi-lsp-server) (_method (eql pi/reloadDocuments)) &key uris)
  "Revert the unmodified buffers of URIS: {reloaded: [uri], skipped: [{uri, reason}]}."
  (let (reloaded skipped)
    (seq-doseq (uri uris)
      (let* ((buffer (and (stringp uri) (find-buffer-visiting (eglot--uri-to-path uri))))
             (reason (cond ((null buffer) "the file is not visited in Emacs")
                           ((buffer-modified-p buffer) "the buffer has unsaved changes")
                           (t (condition-case err
                                  (progn (with-current-buffer buffer (revert-buffer t t t)) nil)
                                (error (format "the reload failed: %s" (error-message-string err))))))))
        (if reason
            (push (list :uri uri :reason reason) skipped)
          (push uri reloaded))))
    (list :reloaded (vconcat (nreverse reloaded)) :skipped (vconcat (nreverse skipped)))))

;;; Commands

(defun pi-lsp--server ()
  "The pi-lsp server of the current buffer, or a `user-error' saying how to start one."
  (let ((server (eglot-current-server)))
    (cond ((cl-typep server 'pi-lsp-server) server)
          ((not (executable-find (car pi-lsp-command)))
           (user-error "pi-lsp: `%s' was not found on exec-path; install it (pipx install /path/to/pi-lsp checkout) or set `pi-lsp-command'"
                       (car pi-lsp-command)))
          (t (user-error "pi-lsp: no pi-lsp server manages this buffer; run `pi-lsp-eglot-register', then M-x eglot")))))

(defun pi-lsp--compose (text)
  "TEXT plus the active region as context."
  (if (use-region-p)
      (let ((first (line-number-at-pos (region-beginning)))
            (last (line-number-at-pos (region-end))))
        (format "%s\n\nSelected lines %d-%d of %s:\n```\n%s\n```" text first last
                (if buffer-file-name (file-relative-name buffer-file-name) (buffer-name))
                (buffer-substring-no-properties (region-beginning) (region-end))))
    text))

;;;###autoload
(defun pi-lsp-prompt (text)
  "Send TEXT to the agent (`pi/prompt'); with an active region, the region goes along.
The transcript buffer shows the run.  Returns immediately."
  (interactive (list (read-string "pi: ")))
  (when (string-empty-p (string-trim text))
    (user-error "pi-lsp: the prompt is empty"))
  (when pi-lsp--running
    (pi-lsp-transcript-line "!! pi-lsp: a prompt is already running; M-x pi-lsp-abort stops it")
    (user-error "pi-lsp: a prompt is already running; M-x pi-lsp-abort stops it"))
  (let* ((server (pi-lsp--server))
         (params (append (list :text (pi-lsp--compose text))
                         (and pi-lsp--session-id (list :sessionId pi-lsp--session-id)))))
    (pi-lsp-transcript-line (concat "> " (car (split-string text "\n"))))
    (display-buffer (pi-lsp--transcript))
    (setq pi-lsp--running server)
    (jsonrpc-async-request
     server :pi/prompt params
     :timeout pi-lsp-prompt-timeout
     :success-fn (lambda (result)
                   (setq pi-lsp--running nil
                         pi-lsp-last-reply result
                         pi-lsp--session-id (or (plist-get result :sessionId) pi-lsp--session-id))
                   (when-let ((error-message (plist-get result :errorMessage)))
                     (pi-lsp-transcript-line (concat "!! " error-message))))
     :error-fn (lambda (error)
                 (let ((message (or (plist-get error :message) (format "%S" error))))
                   (setq pi-lsp--running nil pi-lsp-last-reply (list :error message))
                   (pi-lsp-transcript-line (concat "!! pi-lsp: " message))
                   (message "pi-lsp: %s" message)))
     :timeout-fn (lambda ()
                   (setq pi-lsp--running nil pi-lsp-last-reply (list :error "timed out"))
                   (pi-lsp-transcript-line "!! pi-lsp: no reply to the prompt in time")))
    nil))

;;;###autoload
(defun pi-lsp-abort ()
  "Ask pi-lsp to stop the running prompt (`pi/abort')."
  (interactive)
  (if (not pi-lsp--running)
      (message "pi-lsp: no prompt is running")
    (jsonrpc-notify pi-lsp--running :pi/abort
                    (if pi-lsp--session-id (list :sessionId pi-lsp--session-id) (make-hash-table)))
    (pi-lsp-transcript-line "  abort requested")))

(defun pi-lsp-running-p ()
  "Non-nil while a prompt runs."
  (and pi-lsp--running t))

(provide 'pi-lsp)
;;; pi-lsp.el ends here
