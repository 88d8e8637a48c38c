;;; pi-lsp-outside-test.el --- invalid settings, and a prompt from a file outside the project  -*- lexical-binding: t -*-

;; Run by tests/editors/test_emacs.py: timeout 90 emacs --batch -l pi-lsp-outside-test.el </dev/null
;; in a workspace (a git project), with $PI_TEST_OUTSIDE a file in a folder that is no project.
;; Several invalid settings come up as one echo-area message listing them all; a prompt says
;; pi.model is invalid (not "not set"); a prompt from the outside file goes to the only running
;; project and the echo area and transcript name it.  Writes $PI_TEST_RESULT (JSON).

(add-to-list 'load-path (getenv "PI_LSP_EMACS_DIR"))
(require 'pi-lsp)
(load (expand-file-name "pi-lsp-test-support.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)
(setq pi-lsp-settings '(:model 5 :maxTurns "many" :edit (:review "sometimes") :bash (:sandbox "weird")
                        :activeTools ["read" "nosuchtool"] :baseUrl "http://127.0.0.1:9/v1"))

(defvar t-messages nil "Echo area messages, newest first.")
(advice-add 'message :around (lambda (orig &rest args)
                               (let ((text (apply orig args))) (when text (push text t-messages)) text)))

(defun t-transcript () (t-text (pi-lsp-transcript)))

(defun t-count (needle texts) (cl-count-if (lambda (text) (string-search needle text)) texts))

(defun t-main ()
  (let ((ws (abbreviate-file-name (file-name-as-directory default-directory)))
        (names '("pi.model:" "pi.maxTurns:" "pi.edit.review:" "pi.bash.sandbox:" "pi.activeTools:")))
    (find-file (expand-file-name "greet.py"))
    (pi-lsp-prompt "inside")
    (t-check "the refused run ended" (t-wait 30 (lambda () (and pi-lsp-last-reply (not (pi-lsp-running-p))))))
    (let ((shown (cl-remove-if-not (lambda (m) (string-search "pi." m)) t-messages)))
      (t-check "the settings problems came as one message" (= (t-count "problems in the pi settings" shown) 1) shown)
      (dolist (name names)
        (t-check (format "shown once: %s" name) (= (t-count name shown) 1) shown)))
    (t-check "the prompt says pi.model is invalid and why"
             (string-search "pi.model is invalid: Input should be a valid string (got 5)" (t-transcript)) (t-transcript))
    (t-check "no outside notice from a file inside" (not (string-search "outside every project" (t-transcript))))
    (find-file (getenv "PI_TEST_OUTSIDE"))
    (t-check "the outside file is in no project" (null (pi-lsp-project-root)))
    (setq pi-lsp-last-reply nil)
    (pi-lsp-prompt "outside")
    (let ((notice (format "pi-lsp: %s is outside every project; the prompt goes to the workspace %s"
                          (abbreviate-file-name (getenv "PI_TEST_OUTSIDE")) ws)))
      (t-check "the echo area names the workspace" (member notice t-messages) (list notice t-messages))
      (t-check "so does the transcript" (string-search notice (t-transcript)) (t-transcript)))
    (t-check "the second run ended" (t-wait 30 (lambda () (and pi-lsp-last-reply (not (pi-lsp-running-p))))))
    (t-check "one connection served both" (= (length pi-lsp--connections) 1) pi-lsp--connections)
    (pi-lsp-stop (car pi-lsp--connections))))

(t-run #'t-main (lambda () (list :transcript (t-transcript) :messages t-messages)))
