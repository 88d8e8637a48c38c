;;; pi-lsp-test-support.el --- what the headless Emacs scenarios share  -*- lexical-binding: t -*-

;; Loaded by each scenario (pi-lsp-*-test.el) run by tests/editors/test_emacs*.py.  A scenario
;; records named checks with `t-check', waits with `t-wait' while pi-lsp's processes run, and ends
;; with `t-run', which writes $PI_TEST_RESULT as JSON ({failed, checks, notes}) and exits 0 when
;; every check passed, 1 otherwise.

(require 'json)

(defvar t-checks nil "The checks so far, newest first: (:name :ok :detail).")
(defvar t-failed nil "Non-nil once a check failed.")

(defun t-check (name ok &optional detail)
  "Record check NAME as passed when OK; DETAIL (printed) explains a failure."
  (push (list :name name :ok (if ok t :json-false) :detail (if ok :null (format "%S" detail))) t-checks)
  (unless ok (setq t-failed t)))

(defun t-wait (seconds predicate)
  "Serve process output until PREDICATE is true or SECONDS passed; PREDICATE's last value."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall predicate)))

(defun t-text (buffer)
  "BUFFER's whole text, without properties."
  (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max))))

(defun t-press (key)
  "Run the command KEY is bound to in the current buffer, as typing it would."
  (let ((command (key-binding (kbd key))))
    (setq this-command command)
    (call-interactively command)))

(defun t-run (main notes)
  "Run MAIN (a Lisp error is a failed check), write the result with NOTES (a function returning
a plist, called after MAIN) to $PI_TEST_RESULT and exit: 0 when every check passed."
  (condition-case err
      (funcall main)
    (error (t-check "no Lisp error" nil err)))
  (with-temp-file (getenv "PI_TEST_RESULT")
    (insert (json-encode (list :failed (if t-failed t :json-false)
                               :checks (vconcat (reverse t-checks))
                               :notes (funcall notes)))))
  (kill-emacs (if t-failed 1 0)))

(provide 'pi-lsp-test-support)
;;; pi-lsp-test-support.el ends here
