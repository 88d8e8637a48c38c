;;; pi-lsp-test.el --- headless eglot round trip for pi-lsp.el  -*- lexical-binding: t -*-

;; Run by tests/editors/test_emacs.py: timeout 90 emacs --batch -l pi-lsp-test.el </dev/null
;; in a workspace holding greet.py and closed.txt, against `pi-lsp replay' serving
;; tests/editors/sessions/emacs_edits.jsonl.  Writes $PI_TEST_RESULT (JSON) and exits 0 when
;; every check passed, 1 otherwise.

;; The README's eglot install, as the test uses it:
(require 'package)
(package-initialize)                               ; Debian's elpa-eglot
(add-to-list 'load-path (getenv "PI_LSP_EMACS_DIR"))
(require 'pi-lsp)
(pi-lsp-eglot-register '(python-mode text-mode))
(setq pi-lsp-settings `(:baseUrl ,(getenv "PI_TEST_URL") :model "replay" :maxRetries 0
                        :edit (:verifyTimeoutSeconds 5 :applyTimeoutSeconds 10)))

(require 'json)
(setq eglot-sync-connect 60
      eglot-connect-timeout 60)

(defvar t-checks nil)
(defvar t-failed nil)

(defun t-check (name ok &optional detail)
  (push (list :name name :ok (if ok t :json-false) :detail (if ok :null (format "%S" detail))) t-checks)
  (unless ok (setq t-failed t)))

(defun t-read (file)
  (when (file-exists-p file)
    (with-temp-buffer
      (let ((coding-system-for-read 'utf-8)) (insert-file-contents file))
      (buffer-string))))

(defun t-wait (seconds predicate)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall predicate)))

(defun t-transcript-has (text)
  (with-current-buffer (pi-lsp--transcript)
    (save-excursion (goto-char (point-min)) (search-forward text nil t))))

(defun t-main ()
  (let* ((dir default-directory)
         (greet-file (expand-file-name "greet.py" dir))
         (expected "def greet():\n    return \"héllo 👋\"\n\n\ndef bye():\n    return \"ciao\"\n")
         (buffer (find-file-noselect greet-file)))
    (with-current-buffer buffer
      (apply #'eglot (eglot--guess-contact))
      ;; eglot may go on connecting in the background (any process output ends its sync wait)
      (t-check "eglot runs pi-lsp for the buffer"
               (t-wait 60 (lambda () (cl-typep (eglot-current-server) 'pi-lsp-server)))
               (eglot-current-server))
      (pi-lsp-prompt "fix greet and the closed file")
      (t-check "the run ended" (t-wait 60 (lambda () (not (pi-lsp-running-p)))))
      (t-check "stopReason stop" (equal (plist-get pi-lsp-last-reply :stopReason) "stop") pi-lsp-last-reply)
      (t-check "the buffer changed" (equal (buffer-string) expected) (buffer-string))
      (t-check "saved through pi/saveDocuments" (equal (t-read greet-file) expected) (t-read greet-file))
      (t-check "the buffer is not modified after the save" (not (buffer-modified-p)))
      (t-check "no backup file" (not (file-exists-p (concat greet-file "~"))))
      (t-check "the closed file was edited on disk" (equal (t-read (expand-file-name "closed.txt" dir)) "first\nSECOND\n")
               (t-read (expand-file-name "closed.txt" dir)))
      (t-check "no buffer visits the closed file" (not (find-buffer-visiting (expand-file-name "closed.txt" dir))))
      (t-check "transcript: prompt" (t-transcript-has "> fix greet and the closed file"))
      (t-check "transcript: edit call" (t-transcript-has "tool edit {"))
      (t-check "transcript: edit result" (t-transcript-has "  ok: Successfully replaced 1 block(s) in greet.py."))
      (t-check "transcript: save" (t-transcript-has "  saved greet.py"))
      (t-check "transcript: end" (t-transcript-has "-- done (stop) --"))
      (setq last-command nil)
      (undo)
      (t-check "one undo reverts the second agent edit only"
               (equal (buffer-string) "def greet():\n    return \"héllo 👋\"\n\n\ndef bye():\n    return \"bye\"\n")
               (buffer-string))
      (setq last-command 'undo)
      (undo-more 1)
      (t-check "undo again reverts the first edit"
               (equal (buffer-string) "def greet():\n    return \"hi\"\n\n\ndef bye():\n    return \"bye\"\n")
               (buffer-string))
      (eglot-shutdown (eglot-current-server)))))

(condition-case err
    (t-main)
  (error (t-check "no Lisp error" nil err)))
(with-temp-file (getenv "PI_TEST_RESULT")
  (insert (json-encode (list :failed (if t-failed t :json-false)
                             :checks (vconcat (reverse t-checks))
                             :notes (list :transcript (with-current-buffer (pi-lsp--transcript) (buffer-string)))))))
(kill-emacs (if t-failed 1 0))
