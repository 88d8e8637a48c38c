;;; pi-lsp-tty-test.el --- approvals in a real terminal Emacs  -*- lexical-binding: t -*-

;; Run by tests/editors/test_emacs.py as `emacs -nw -Q -l pi-lsp-tty-test.el' inside tmux, in a
;; workspace holding notes.txt and the folders build/ and build2/, against `pi-lsp replay'
;; serving tests/editors/sessions/emacs_approvals.jsonl.  The Python side reads the screen and
;; types: C-g at the first approval prompt, "Allow once" RET at the second, nothing at the third.
;;
;; Prompt 1 runs with a 120 s approval timeout; when it ends, the timeout becomes 2 s
;; (`pi-lsp-update-settings') and prompt 2 starts, whose question the server withdraws.  Then
;; prompt 3 asks again with a 120 s timeout, and the Python side kills the server (its pid is in
;; $PI_TEST_RESULT.pid) while the question is open.  When the connection is gone the checks go
;; to $PI_TEST_RESULT (JSON); Emacs stays up for the last screen.

(add-to-list 'load-path (getenv "PI_LSP_EMACS_DIR"))
(require 'pi-lsp)
(require 'json)
(defun t-settings (timeout)
  `(:baseUrl ,(getenv "PI_TEST_URL") :model "replay" :maxRetries 0 :approvals (:timeoutSeconds ,timeout)))
(setq pi-lsp-settings (t-settings 120))

(defvar t-checks nil)
(defvar t-failed nil)
(defvar t-phase 'first)
(defvar t-results nil "tool_execution_end events: (ID . IS-ERROR).")

(defun t-check (name ok &optional detail)
  (push (list :name name :ok (if ok t :json-false) :detail (if ok :null (format "%S" detail))) t-checks)
  (unless ok (setq t-failed t)))

(defun t-transcript ()
  (with-current-buffer (pi-lsp-transcript) (buffer-substring-no-properties (point-min) (point-max))))

(defun t-count (text)
  (let ((s (t-transcript)) (n 0) (start 0))
    (while (setq start (string-search text s start)) (setq n (1+ n) start (1+ start)))
    n))

(advice-add 'pi-lsp-transcript-event :after
            (lambda (event)
              (when (equal (plist-get event :type) "tool_execution_end")
                (push (cons (plist-get event :toolCallId) (eq (plist-get event :isError) t)) t-results))))

(defun t-finish ()
  (t-check "prompt 3 ended with the server's death" (equal (plist-get pi-lsp-last-reply :error) "Server died") pi-lsp-last-reply)
  (t-check "a1 (C-g) was denied" (equal (cdr (assoc "a1" t-results)) t) t-results)
  (t-check "a2 (Allow once) ran" (equal (cdr (assoc "a2" t-results)) nil) t-results)
  (t-check "a3 (no answer) was denied" (equal (cdr (assoc "a3" t-results)) t) t-results)
  (t-check "a waiting line per question" (= (t-count "⚠ waiting for your approval: Run bash: rm -rf build") 4) (t-transcript))
  (t-check "no document buffer keeps the dead connection"
           (not (buffer-local-value 'pi-lsp--connection (find-buffer-visiting (expand-file-name "notes.txt")))))
  (dolist (text '("✗ you denied it" "✓ you allowed it once" "✗ Approval timed out after 2 s: denied"
                  "✗ Approval withdrawn (the server ended): denied" "■ error: Server died" "✗ pi-lsp for " "▸ bash rm -rf build3 ✗ error"
                  "▸ bash rm -rf build ✗ error" "▸ bash rm -rf build ✓" "▸ bash rm -rf build2 ✗ error"))
    (t-check (format "transcript shows %S" text) (string-search text (t-transcript)) (t-transcript)))
  (t-check "each outcome is shown once" (= (t-count "Approval timed out") 1) (t-transcript))
  (t-check "no question is left open" (not (or pi-lsp--ask-queue (active-minibuffer-window))))
  (t-check "the status no longer waits" (equal (pi-lsp-status) "") (pi-lsp-status))
  (with-temp-file (getenv "PI_TEST_RESULT")
    (insert (json-encode (list :failed (if t-failed t :json-false) :checks (vconcat (reverse t-checks))
                               :notes (list :transcript (t-transcript)))))))

(defun t-step ()
  (pcase t-phase
    ('first
     (unless (pi-lsp-running-p)
       (t-check "prompt 1 stopReason stop" (equal (plist-get pi-lsp-last-reply :stopReason) "stop") pi-lsp-last-reply)
       (setq pi-lsp-settings (t-settings 2))
       (pi-lsp-update-settings)
       (setq t-phase 'second)
       (with-current-buffer (find-buffer-visiting (expand-file-name "notes.txt"))
         (pi-lsp-prompt "remove the other folder"))))
    ('second
     (unless (pi-lsp-running-p)
       (t-check "prompt 2 stopReason stop" (equal (plist-get pi-lsp-last-reply :stopReason) "stop") pi-lsp-last-reply)
       (setq pi-lsp-settings (t-settings 120))
       (pi-lsp-update-settings)
       (setq t-phase 'third)
       (with-current-buffer (find-buffer-visiting (expand-file-name "notes.txt"))
         (pi-lsp-prompt "remove the last folder"))
       (with-temp-file (concat (getenv "PI_TEST_RESULT") ".pid")
         (insert (format "%d" (process-id (jsonrpc--process (car pi-lsp--connections))))))))
    ('third
     (unless (or pi-lsp--connections (pi-lsp-running-p) pi-lsp--ask-active)
       (setq t-phase 'done)
       (t-finish)))))

(find-file (expand-file-name "notes.txt"))
(add-hook 'emacs-startup-hook
          (lambda ()
            (pi-lsp-prompt "clean up the build folder")
            (run-with-timer 0.2 0.2 #'t-step)))
