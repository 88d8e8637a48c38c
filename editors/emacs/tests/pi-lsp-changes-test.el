;;; pi-lsp-changes-test.el --- headless review and rewind in `*pi-lsp changes*'  -*- lexical-binding: t -*-

;; Run by tests/editors/test_emacs.py: timeout 90 emacs --batch -l pi-lsp-changes-test.el </dev/null
;; in a workspace (a git project) holding notes.txt, against `pi-lsp replay' serving
;; tests/editors/sessions/emacs_changes.jsonl (one edit call changing two hunks of notes.txt, a
;; write creating made.txt).  The keys are looked up in the changes buffer as a person presses
;; them.  Writes $PI_TEST_RESULT (JSON) and exits 0 when every check passed, 1 otherwise.

(add-to-list 'load-path (getenv "PI_LSP_EMACS_DIR"))
(require 'pi-lsp)
(load (expand-file-name "pi-lsp-test-support.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)
(require 'json)
(require 'cl-lib)
(setq pi-lsp-settings `(:baseUrl ,(getenv "PI_TEST_URL") :model "replay" :maxRetries 0
                        :edit (:verifyTimeoutSeconds 5 :applyTimeoutSeconds 10)))
(setq pi-lsp-changes-timeout 20)

(defvar t-messages nil "Echo area messages, newest first.")

(advice-add 'message :around (lambda (orig &rest args)
                               (let ((text (apply orig args))) (when text (push text t-messages)) text)))

(defun t-goto (buffer text)
  "Put point of BUFFER (made current) at the start of the line holding TEXT."
  (set-buffer buffer)
  (goto-char (point-min))
  (search-forward text)
  (beginning-of-line))

(defconst t-body
  (concat "created made.txt  (write w1; turn 1)  U deletes it\n"
          "modified notes.txt  (edit e1; turn 1)\n"
          "--- notes.txt\n+++ notes.txt\n"
          "@@ -1,1 +1,1 @@ applied\n-one\n+ONE\n"
          "@@ -5,1 +5,1 @@ applied\n-five\n+FIVE\n"))

(defun t-main ()
  (let* ((notes-file (expand-file-name "notes.txt"))
         (made-file (expand-file-name "made.txt"))
         (notes (find-file-noselect notes-file))
         changes)
    (with-current-buffer notes (pi-lsp-prompt "tidy the notes"))
    (t-check "the run ended" (t-wait 60 (lambda () (not (pi-lsp-running-p)))))
    (t-check "the agent's edits are in the buffer"
             (equal (t-text notes) "ONE\ntwo\nthree\nfour\nFIVE\n") (t-text notes))
    (t-check "the write created made.txt" (file-exists-p made-file))
    (t-check "the transcript links the change set"
             (t-wait 20 (lambda () (string-search "2 files changed: review\n" (t-text (pi-lsp-transcript)))))
             (t-text (pi-lsp-transcript)))
    ;; the link opens the buffer
    (t-goto (pi-lsp-transcript) "files changed: review")
    (search-forward "review")
    (push-button (1- (point)))
    (setq changes (get-buffer pi-lsp-changes-buffer))
    (t-check "the button opens *pi-lsp changes*" (and changes (get-buffer-window changes)))
    (let ((session (pi-lsp-session-id (pi-lsp-connection-for-file notes-file))))
      (t-check "it shows the run's session, keys, and per file a header and hunks with their status"
               (string-match-p (concat "\\`Changes of session " (regexp-quote session) " (turns up to [0-9]+)\n"
                                       "k keep  u revert hunk  U revert file  T revert prompt  RET visit  g refresh\n\n"
                                       (regexp-quote t-body) "\\'")
                               (t-text changes))
               (t-text changes)))
    (with-current-buffer changes
      (t-check "the buffer is in a diff-mode-derived mode, read-only"
               (and (derived-mode-p 'diff-mode) buffer-read-only) major-mode))
    ;; k keeps the first hunk
    (t-goto changes "@@ -1,1")
    (t-press "k")
    (t-check "k marks the hunk kept" (string-search "@@ -1,1 +1,1 @@ kept\n" (t-text changes)) (t-text changes))
    ;; RET visits the hunk
    (t-goto changes "@@ -5,1")
    (t-press "RET")
    (t-check "RET visits the file at the hunk's line" (and (eq (current-buffer) notes) (= (line-number-at-pos) 5))
             (list (current-buffer) (line-number-at-pos)))
    ;; u reverts the second hunk, through the buffer
    (t-goto changes "@@ -5,1")
    (t-press "u")
    (t-check "u reverts the hunk in the file's buffer, the other stays"
             (equal (t-text notes) "ONE\ntwo\nthree\nfour\nfive\n") (t-text notes))
    (t-check "the buffer shows it reverted and the report"
             (and (string-search "@@ -5,1 +5,1 @@ reverted\n" (t-text changes))
                  (string-search "@@ -1,1 +1,1 @@ kept\n" (t-text changes))
                  (string-match-p "^Revert hunk [0-9a-f]+ of notes.txt: 1 hunk reverted$" (t-text changes)))
             (t-text changes))
    (t-check "the echo area says so" (string-match-p "1 hunk reverted" (or (car t-messages) "")) t-messages)
    ;; the revert is one undo step in the file's buffer
    (with-current-buffer notes
      (setq last-command nil)
      (undo)
      (t-check "one undo in the file's buffer brings the hunk back"
               (equal (buffer-string) "ONE\ntwo\nthree\nfour\nFIVE\n") (buffer-string))
      ;; the user writes inside the first hunk
      (goto-char (point-min))
      (search-forward "ONE")
      (insert "-user"))
    (t-goto changes "modified notes.txt")
    (t-press "g")
    (t-check "g: the undone revert is applied again, the user's hunk changed"
             (and (string-search "@@ -5,1 +5,1 @@ applied\n" (t-text changes))
                  (string-search "@@ -1,1 +1,1 @@ changed\n" (t-text changes)))
             (t-text changes))
    ;; U on the file: the other hunk is reverted, the user's hunk is a conflict, left alone
    (setq t-messages nil)
    (t-press "U")
    (t-check "U reverts the other hunk and leaves the user's text intact"
             (equal (t-text notes) "ONE-user\ntwo\nthree\nfour\nfive\n") (t-text notes))
    (t-check "the conflict is in the echo area"
             (string-match-p "Revert notes.txt: 1 hunk reverted; 1 conflict, left as they are; conflict: notes.txt hunk [0-9a-f]+: changed since the agent's edit; left as it is"
                             (or (car t-messages) ""))
             t-messages)
    (t-check "the conflict is in the buffer and the hunk shows changed"
             (and (string-match-p "^  conflict: notes.txt hunk [0-9a-f]+: changed since the agent's edit; left as it is$"
                                  (t-text changes))
                  (string-search "@@ -1,1 +1,1 @@ changed\n" (t-text changes)))
             (t-text changes))
    ;; T reverts the turn of the change at point, after asking: the created file goes, the conflict stays
    (t-goto changes "created made.txt")
    (let ((asked nil))
      (cl-letf (((symbol-function 'y-or-n-p) (lambda (question) (setq asked question) t)))
        (t-press "T"))
      (t-check "T asks first, naming the prompt" (equal asked (format "Revert what prompt 1 of session %s changed? "
                                                                    (buffer-local-value 'pi-lsp-changes--session changes)))
               asked))
    (t-check "T deletes the file the turn created" (not (file-exists-p made-file)))
    (t-check "T leaves the user's text and reports the conflict again"
             (and (string-prefix-p "ONE-user\n" (t-text notes))
                  (string-match-p "^Revert prompt 1: made.txt deleted; 1 conflict, left as they are$" (t-text changes)))
             (list (t-text notes) (t-text changes)))
    (t-check "the buffer shows the created file reverted"
             (string-search "created made.txt  (write w1; turn 1)  reverted\n" (t-text changes)) (t-text changes))
    ;; a numeric prefix argument shows one turn of the session
    (with-current-buffer changes
      (let ((current-prefix-arg 1)) (call-interactively #'pi-lsp-changes)))
    (t-check "C-1 M-x pi-lsp-changes shows turn 1 of the session"
             (string-match-p "\\`Changes of session [0-9a-f]+, turn 1\n.*\n\ncreated made.txt  (write w1; turn 1)  reverted\nmodified notes.txt"
                             (t-text changes))
             (t-text changes))
    ;; a prefix argument shows the session `external'
    (with-current-buffer changes
      (let ((current-prefix-arg '(4))) (call-interactively #'pi-lsp-changes)))
    (t-check "C-u M-x pi-lsp-changes shows the session external"
             (string-match-p "\\`Changes of session external (turns up to 0)\n.*\n\nNo changes\.\n\\'" (t-text changes))
             (t-text changes))
    (pi-lsp-stop (pi-lsp-connection-for-file notes-file))))

(t-run #'t-main (lambda () (list :changes (and (get-buffer pi-lsp-changes-buffer)
                                                        (t-text (get-buffer pi-lsp-changes-buffer)))
                                          :transcript (t-text (pi-lsp-transcript)))))
