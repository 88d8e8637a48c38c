;;; eglot_stalled_read.el --- jsonrpc.el leaves a request read with a sync reply unhandled  -*- lexical-binding: t -*-

;; Run by tests/editors/test_eglot_stalled_read.py: emacs --batch -l eglot_stalled_read.el in a
;; workspace holding greet.py (a `# pi:' instruction on line 5).  Only Debian's eglot.
;; Environment: PI_TEST_RESULT (JSON: {failed, checks, notes}).
;;
;; Emacs 28's jsonrpc.el throws out of its process filter when it handles the reply to a
;; synchronous `jsonrpc-request'; the messages read together with that reply stay in the process
;; buffer until more output arrives (pi_lsp/daemon/read_nudge.py).  The scenario makes that
;; happen every time: while eglot waits for the reply to pi.runInstruction's
;; workspace/executeCommand, Emacs does not read for a moment, so the reply and the
;; workspace/applyEdit that removes the instruction comment arrive in one read.  Checks: the
;; applyEdit is left unhandled in the process buffer after the command returned, and with
;; pi-lsp's default settings the edit then lands without anything else from the editor.  The edit's apply timeout (60 s)
;; is longer than the wait, so pi-lsp's own timeout error cannot be what wakes the reader.

(require 'package)
(package-initialize)                               ; Debian's elpa-eglot
(require 'eglot)
(require 'json)
(require 'cl-lib)

(add-to-list 'eglot-server-programs
             `(python-mode . ("pi-lsp" :initializationOptions
                              (:pi (:baseUrl "http://127.0.0.1:9/v1" :model "none" :maxRetries 0
                                    :edit (:applyTimeoutSeconds 60))))))
(setq eglot-sync-connect 60 eglot-connect-timeout 60
      eglot-confirm-server-initiated-edits nil)

(defvar t-checks nil)
(defvar t-failed nil)
(defvar t-messages nil "window/showMessage texts, newest first.")
(defvar t-hold nil "Non-nil: the next `accept-process-output' first leaves the output unread a while.")
(defvar t-left "" "What the process buffer held, unhandled, when the command returned.")

(defun t-check (name ok &optional detail)
  (push (list :name name :ok (if ok t :json-false) :detail (if ok :null (format "%S" detail))) t-checks)
  (unless ok (setq t-failed t)))

(defun t-wait (seconds predicate)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall predicate)))

(advice-add 'accept-process-output :before
            (lambda (&rest _)
              (when t-hold
                (setq t-hold nil)
                ;; busy, as Emacs is while it redisplays or collects garbage: nothing is read
                (let ((end (+ (float-time) 2.0))) (while (< (float-time) end))))))

(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest args)
              (when (eq method 'window/showMessage)
                (push (plist-get args :message) t-messages))))

(defun t-main ()
  (let ((buffer (find-file-noselect (expand-file-name "greet.py" default-directory))))
    (with-current-buffer buffer
      (apply #'eglot (eglot--guess-contact))
      (let ((server (t-wait 60 (lambda () (eglot-current-server)))))
        (t-check "eglot runs pi-lsp for the buffer" server)
        (goto-char (point-min))
        (forward-line 4)
        (let* ((actions (eglot-code-actions (point) nil nil nil))
               (run (cl-find "Pi: run this instruction" actions
                             :key (lambda (a) (plist-get a :title)) :test #'equal))
               (command (plist-get run :command)))
          (t-check "the instruction's code action is offered" command actions)
          (setq t-hold t)
          (eglot-execute-command server (intern (plist-get command :command)) (plist-get command :arguments))
          (setq t-left (with-current-buffer (process-buffer (jsonrpc--process server)) (buffer-string)))
          (t-check "the applyEdit arrived with the reply and was left unhandled"
                   (string-search "workspace/applyEdit" t-left) t-left)
          (t-check "the instruction comment is removed without anything else from the editor"
                   (t-wait 30 (lambda () (not (string-search "# pi:" (buffer-string))))) (buffer-string))
          (t-check "the edit was answered in time"
                   (not (cl-some (lambda (m) (string-search "did not answer" m)) t-messages)) t-messages)))
      (ignore-errors (eglot-shutdown (eglot-current-server))))))

(condition-case err
    (t-main)
  (error (t-check "no Lisp error" nil err)))
(with-temp-file (getenv "PI_TEST_RESULT")
  (insert (json-encode (list :failed (if t-failed t :json-false)
                             :checks (vconcat (reverse t-checks))
                             :notes (list :messages (vconcat (reverse t-messages)) :left t-left)))))
(kill-emacs (if t-failed 1 0))
