;;; pi-lsp-review-test.el --- headless review before apply in `*pi-lsp review FILE*'  -*- lexical-binding: t -*-

;; Run by tests/editors/test_emacs.py: emacs --batch -l pi-lsp-review-test.el </dev/null in a
;; workspace (a git project) holding notes.txt, against `pi-lsp replay' serving
;; tests/editors/sessions/emacs_review.jsonl, with the setting edit.review "before".  The keys are
;; looked up in the review buffer as a person presses them.  Writes $PI_TEST_RESULT (JSON) and
;; exits 0 when every check passed, 1 otherwise.

(add-to-list 'load-path (getenv "PI_LSP_EMACS_DIR"))
(require 'pi-lsp)
(load (expand-file-name "pi-lsp-test-support.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)
(require 'json)
(require 'cl-lib)
(setq pi-lsp-settings `(:baseUrl ,(getenv "PI_TEST_URL") :model "replay" :maxRetries 0
                        :edit (:review "before" :verifyTimeoutSeconds 5 :applyTimeoutSeconds 10)))


(defun t-review-buffer (name)
  (t-wait 30 (lambda () (get-buffer (format "*pi-lsp review %s*" name))))
  (get-buffer (format "*pi-lsp review %s*" name)))

(defun t-face-at (buffer text)
  (with-current-buffer buffer
    (font-lock-ensure)
    (goto-char (point-min))
    (search-forward text)
    (get-text-property (1+ (match-beginning 0)) (quote face))))

(defun t-main ()
  (let* ((notes-file (expand-file-name "notes.txt"))
         (notes (find-file-noselect notes-file))
         review)
    (with-current-buffer notes (pi-lsp-prompt "tidy the notes"))
    (setq review (t-review-buffer "notes.txt"))
    (t-check "the edit comes up for review in its own buffer" review)
    (t-check "nothing landed yet" (equal (t-text notes) "one\ntwo\nthree\nfour\nfive\n") (t-text notes))
    (t-check "the review buffer is shown" (get-buffer-window review))
    (t-check "it shows the proposal as a unified diff with each hunk undecided"
             (equal (t-text review)
                    (concat "pi-lsp review: edit notes.txt (2 hunks)\n"
                            "a accept  r reject  R reject with a reason  A accept all  X reject all  n/p move  C-c C-c send  q reject the rest\n"
                            "--- notes.txt\n+++ notes.txt\n"
                            "@@ -1 +1 @@ ? hunk 1/2\n-one\n+ONE\n"
                            "@@ -5 +5 @@ ? hunk 2/2\n-five\n+FIVE\n"))
             (t-text review))
    (with-current-buffer review
      (t-check "in a diff-mode-derived mode, read-only" (and (derived-mode-p 'diff-mode) buffer-read-only) major-mode))
    (t-check "added lines look added" (memq 'diff-added (ensure-list (t-face-at review "+ONE"))) (t-face-at review "+ONE"))
    (t-check "removed lines look removed" (memq 'diff-removed (ensure-list (t-face-at review "-five"))) (t-face-at review "-five"))
    (set-buffer review)
    (let (asked)
      (cl-letf (((symbol-function 'y-or-n-p) (lambda (prompt) (setq asked prompt) nil)))
        (t-press "C-c C-c"))
      (t-check "C-c C-c with undecided hunks asks first; answered no, nothing is sent"
               (and (equal asked "2 undecided hunks will be rejected; send? ") (buffer-live-p review))
               asked))
    (set-buffer review)
    (goto-char (point-min))
    (search-forward "hunk 1/2")
    (t-press "a")
    (t-check "a accepts the hunk at point and moves to the next"
             (and (string-search "@@ -1 +1 @@ ✓ hunk 1/2\n" (t-text review))
                  (looking-at "@@ -5 \\+5 @@ \\? hunk 2/2"))
             (list (t-text review) (point)))
    (let ((pi-lsp-review-reason-function (lambda () "five stays lowercase")))
      (t-press "R"))
    (t-check "the last decision sends the review and closes its buffer" (not (buffer-live-p review)))
    (t-check "only the accepted hunk landed"
             (t-wait 20 (lambda () (equal (t-text notes) "ONE\ntwo\nthree\nfour\nfive\n"))) (t-text notes))
    (setq review (t-review-buffer "made.txt"))
    (t-check "the write comes up for review: one hunk of added lines"
             (and review (string-search "@@ -0,0 +1 @@ ? hunk 1/1\n+made by the agent\n" (t-text review)))
             (and review (t-text review)))
    (when review
      (set-buffer review)
      (t-press "X"))
    (t-check "the run ended" (t-wait 60 (lambda () (not (pi-lsp-running-p)))))
    (t-check "X: the rejected write created nothing" (not (file-exists-p (expand-file-name "made.txt"))))
    (t-check "the run ended normally" (equal (plist-get pi-lsp-last-reply :stopReason) "stop") pi-lsp-last-reply)
    (pi-lsp-stop (pi-lsp-connection-for-file notes-file))))

(t-run #'t-main (lambda () (list :transcript (t-text (pi-lsp-transcript)))))
