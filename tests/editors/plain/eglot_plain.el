;;; eglot_plain.el --- eglot without pi-lsp.el against the daemon (issue 16)  -*- lexical-binding: t -*-

;; Run by tests/editors/test_plain_lsp.py: timeout 90 emacs --batch -l eglot_plain.el </dev/null
;; in a workspace holding greet.py, against `pi-lsp replay' serving
;; tests/editors/sessions/plain_lsp.jsonl.  Only Debian's eglot: no pi-lsp package on the
;; load-path.  The person's choices (the code action menu, the approval) go through
;; `completing-read', answered by a stand-in that records the prompts.  Environment: PI_TEST_URL,
;; PI_TEST_JOURNALS (the sessions folder), PI_TEST_RESULT (JSON: {failed, checks, notes}).
;; Exits 0 when every check passed, 1 otherwise.

(require 'package)
(package-initialize)                               ; Debian's elpa-eglot
(require 'eglot)
(require 'json)
(require 'cl-lib)

;; The README's eglot setup for an editor without the pi-lsp package:
(add-to-list 'eglot-server-programs
             `(python-mode . ("pi-lsp" :initializationOptions
                              (:pi (:baseUrl ,(getenv "PI_TEST_URL") :model "replay" :maxRetries 0
                                    :edit (:verifyTimeoutSeconds 5 :applyTimeoutSeconds 10))))))
(setq eglot-confirm-server-initiated-edits nil)

(setq eglot-sync-connect 60
      eglot-connect-timeout 60)

(defvar t-checks nil)
(defvar t-failed nil)
(defvar t-prompts nil "What the stand-in was asked, newest first.")
(defvar t-messages nil "window/showMessage texts, newest first.")
(defvar t-undo-steps nil)
(defvar t-events nil "The eglot events buffer (written to the result for diagnosis).")
(defvar t-want-action nil "The code action title the person picks.")

(defun t-check (name ok &optional detail)
  (push (list :name name :ok (if ok t :json-false) :detail (if ok :null (format "%S" detail))) t-checks)
  (unless ok (setq t-failed t)))

(defun t-read (file)
  (when (and file (file-exists-p file))
    (with-temp-buffer
      (let ((coding-system-for-read 'utf-8)) (insert-file-contents file))
      (buffer-string))))

(defun t-idle ()
  "What an idle Emacs does between commands: eglot's idle timer sends the pending didChange.
Idle timers never run in batch mode, where Emacs never waits for input."
  (dolist (buffer (buffer-list))
    (with-current-buffer buffer
      (when (and (bound-and-true-p eglot--managed-mode) eglot--recent-changes)
        (eglot--signal-textDocument/didChange)))))

(defun t-wait (seconds predicate)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05)
      (t-idle))
    (funcall predicate)))

;; The person: picks `t-want-action' in the code action menu, "Allow once" for approvals.
(advice-add 'completing-read :around
            (lambda (_orig prompt collection &rest _)
              (push (list prompt (mapcar (lambda (c) (if (consp c) (car c) c)) collection)) t-prompts)
              (if (string-match-p "Pick an action" prompt) t-want-action "Allow once")))

(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest args)
              (when (eq method 'window/showMessage)
                (push (plist-get args :message) t-messages))))

(defun t-approvals ()
  (cl-count-if (lambda (p) (string-match-p "allow bash" (car p))) t-prompts))

(defun t-code-action (title)
  "Choose TITLE from eglot's code action menu at point, as with M-x eglot-code-actions."
  (setq t-want-action title)
  (let ((last-nonmenu-event ?\r))          ; invoked from the keyboard, not a mouse menu
    (call-interactively #'eglot-code-actions)))

(defun t-transcripts ()
  (directory-files (getenv "PI_TEST_JOURNALS") t "\\.md\\'"))

(defun t-main ()
  (let* ((dir default-directory)
         (greet-file (expand-file-name "greet.py" dir))
         (original (t-read greet-file))
         (edited "def greet():\n    return \"hi\"\n\n\ndef bye():\n    return \"ciao\"\n")
         (buffer (find-file-noselect greet-file)))
    (with-current-buffer buffer
      (apply #'eglot (eglot--guess-contact))
      (t-check "eglot runs pi-lsp for the buffer"
               (t-wait 60 (lambda () (eglot-current-server))) (eglot-current-server))
      (let ((caps (eglot--capabilities (eglot-current-server))))
        (t-check "executeCommandProvider lists the pi commands"
                 (equal (plist-get (plist-get caps :executeCommandProvider) :commands)
                        ["pi.runInstruction" "pi.prompt" "pi.abort" "pi.revertHunk" "pi.revertTurn"])
                 caps))
      ;; 1. the code action on the instruction line
      (goto-char (point-min))
      (forward-line 4)
      (t-code-action "Pi: run this instruction")
      (t-check "the menu offered the instruction"
               (cl-some (lambda (p) (member "Pi: run this instruction" (cadr p))) t-prompts) t-prompts)
      (t-check "the run ended (final state shown)"
               (t-wait 60 (lambda () (member "Pi: Done" t-messages))) t-messages)
      (t-check "instruction removed and the agent edit in the buffer" (equal (buffer-string) edited) (buffer-string))
      (t-check "the file on disk is untouched" (equal (t-read greet-file) original) (t-read greet-file))
      (t-check "the buffer is modified" (buffer-modified-p))
      (t-check "the approval was asked" (= (t-approvals) 1) t-prompts)
      (t-check "the approved command ran" (file-exists-p (expand-file-name "approved.txt" dir)))
      (let* ((files (t-transcripts)) (md (or (t-read (car files)) "")))
        (t-check "one transcript file" (= (length files) 1) files)
        (t-check "told where the transcript is (eglot 1.9 has no showDocument)"
                 (cl-some (lambda (m) (and (car files) (string-match-p (regexp-quote (car files)) m))) t-messages)
                 t-messages)
        (dolist (part '("> make bye say ciao" "- `edit: greet.py`" "+    return \"ciao\""
                        "- approval: allowed bash `touch approved.txt`" "## Result\n\nDone\n"))
          (t-check (concat "transcript holds " part) (string-search part md) md)))
      ;; 2. review without a plugin: the code action on the agent's line takes its hunk back
      (goto-char (point-min))
      (forward-line 5)
      (t-code-action "Pi: undo this agent hunk")
      (t-check "\"Pi: undo this agent hunk\" takes the edit back in the buffer"
               (t-wait 20 (lambda () (equal (buffer-string) (replace-regexp-in-string "ciao" "bye" edited))))
               (buffer-string))
      ;; 3. undo, as the person presses C-/ after the run (the command loop puts an undo boundary
      ;; before each command; batch mode has no command loop, so the test does). Changes made
      ;; by the process filter between two commands form one undo group in Emacs, so the removal,
      ;; the agent's edit and the revert may be undone together.
      (let ((states nil))
        (setq last-command nil)
        (dotimes (_ 3)
          (unless (equal (buffer-string) original)
            (undo-boundary)
            (undo)
            (setq last-command 'undo)
            (push (buffer-string) states)))
        (setq states (reverse states) t-undo-steps (length states))
        (t-check "undo brings back the instruction and the old code" (equal (buffer-string) original) states)
        ;; how the changes group into undo steps depends on when the process filter ran them;
        ;; every state on the way is one the user saw
        (t-check "every undo state on the way is one the buffer had"
                 (cl-every (lambda (state)
                             (member state (list original edited (replace-regexp-in-string "ciao" "bye" edited))))
                           states)
                 states))
      ;; 4. pi.prompt by command, aborted with the code action while the approved sleep runs
      (let ((reply (eglot-execute-command (eglot-current-server) 'pi.prompt ["wait a while"])))
        (t-check "pi.prompt answered with the session" (stringp (plist-get reply :sessionId)) reply)
        (t-check "the sleep was approved" (t-wait 30 (lambda () (= (t-approvals) 2))) t-prompts)
        (t-code-action "Pi: abort the run")
        (t-check "the run ended Aborted" (t-wait 30 (lambda () (member "Pi: Aborted" t-messages))) t-messages)
        (let ((md (t-read (expand-file-name (concat (plist-get reply :sessionId) ".md") (getenv "PI_TEST_JOURNALS")))))
          (t-check "the second transcript ends Aborted" (and md (string-search "## Result\n\nAborted\n" md)) md)))
      (setq t-events (with-current-buffer (jsonrpc-events-buffer (eglot-current-server)) (buffer-string)))
      (eglot-shutdown (eglot-current-server)))))

(condition-case err
    (t-main)
  (error (t-check "no Lisp error" nil err)
         (ignore-errors
           (setq t-events (with-current-buffer (jsonrpc-events-buffer (eglot-current-server)) (buffer-string))))))
(with-temp-file (getenv "PI_TEST_RESULT")
  (insert (json-encode (list :failed (if t-failed t :json-false)
                             :checks (vconcat (reverse t-checks))
                             :notes (list :messages (vconcat (reverse t-messages))
                                          :undoSteps t-undo-steps
                                          :prompts (format "%S" (reverse t-prompts))
                                          :events (if t-failed (or t-events "") ""))))))
(kill-emacs (if t-failed 1 0))
