;;; pi-lsp-steering-test.el --- steer, queue, stop and cancel a running agent in Emacs  -*- lexical-binding: t -*-

;; Run by tests/editors/test_emacs.py: timeout 90 emacs --batch -l pi-lsp-steering-test.el </dev/null
;; in a workspace (a git project) against `pi-lsp replay' serving tests/editors/sessions/steering.jsonl
;; (issue 19).  While a bash call waits for the file `go', the user runs `pi-lsp-prompt' again and
;; answers the real `read-multiple-choice' with a typed key (`unread-command-events'): c cancels,
;; s steers, q queues.  A second run gets a message by `pi-lsp-queue', then k stops the agent:
;; the queued text comes back as undelivered.  Writes $PI_TEST_RESULT (JSON), exits 0 when every
;; check passed.

(add-to-list 'load-path (getenv "PI_LSP_EMACS_DIR"))
(require 'pi-lsp)
(load (expand-file-name "pi-lsp-test-support.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)
(require 'json)
(require 'cl-lib)
(setq pi-lsp-settings `(:baseUrl ,(getenv "PI_TEST_URL") :model "replay" :maxRetries 0
                        :approvals (:rules [(:tool "bash" :command "^echo started" :action "allow")])))

(defvar t-messages nil "Echo area messages, newest first.")
(defvar t-asked nil "The questions `read-multiple-choice' asked, newest first.")

(advice-add 'message :around (lambda (orig &rest args)
                               (let ((text (apply orig args))) (when text (push text t-messages)) text)))
(advice-add 'read-multiple-choice :before (lambda (prompt choices &rest _)
                                            (push (cons prompt (mapcar #'cadr choices)) t-asked)))

(defun t-transcript () (with-current-buffer (pi-lsp-transcript) (buffer-substring-no-properties (point-min) (point-max))))

(defun t-has (text) (string-search text (t-transcript)))

(defun t-main ()
  (find-file (expand-file-name "notes.txt"))
  (pi-lsp-prompt "run the job")
  (t-check "the bash call is running" (t-wait 30 (lambda () (file-exists-p "started.txt"))))
  ;; c: cancel
  (setq unread-command-events (list ?c))
  (pi-lsp-prompt "never mind")
  (t-check "a prompt during a run asks how to send it"
           (equal (car t-asked) '("pi-lsp: the agent is running; send this prompt how? "
                                  "steer" "queue" "stop the agent" "cancel"))
           t-asked)
  (t-check "cancel sends nothing and says where the text is"
           (and (not (t-has "never mind"))
                (equal (car t-messages) "pi-lsp: nothing sent; your text is in the prompt history (M-p)"))
           (list (t-transcript) t-messages))
  ;; s: steer
  (setq unread-command-events (list ?s))
  (pi-lsp-prompt "use staging")
  (t-check "the steering message is shown marked" (t-wait 10 (lambda () (t-has "> [steering] use staging"))) (t-transcript))
  ;; q: queue
  (setq unread-command-events (list ?q))
  (pi-lsp-prompt "then run the tests")
  (t-check "the queued message is shown marked" (t-wait 10 (lambda () (t-has "> [queued] then run the tests"))) (t-transcript))
  (t-check "still the first run" (pi-lsp-running-p))
  (write-region "" nil "go")
  (t-check "the run ended" (t-wait 30 (lambda () (not (pi-lsp-running-p)))))
  (t-check "it ended normally, everything delivered"
           (and (equal (plist-get pi-lsp-last-reply :stopReason) "stop") (not (plist-get pi-lsp-last-reply :undelivered)))
           pi-lsp-last-reply)
  (let ((text (t-transcript)))
    (t-check "the steering answer follows the steering message, the queued run comes last"
             (string-match-p (concat "> \\[steering\\] use staging\n\\(.\\|\n\\)*Understood, staging it is\\."
                                     "\\(.\\|\n\\)*Tests ran\\.")
                             text)
             text)
    (t-check "the queued message comes before its answer"
             (< (string-search "> [queued] then run the tests" text) (string-search "Tests ran." text)) text))
  ;; a second run: M-x pi-lsp-queue, then k (stop the agent)
  (pi-lsp-prompt "second job")
  (t-check "the second bash call is running" (t-wait 30 (lambda () (file-exists-p "started2.txt"))))
  (pi-lsp-queue "and tidy up")
  (t-check "pi-lsp-queue queues without asking"
           (and (t-wait 10 (lambda () (t-has "> [queued] and tidy up"))) (= (length t-asked) 3)) (list t-asked (t-transcript)))
  (setq unread-command-events (list ?k))
  (pi-lsp-prompt "stop here")
  (t-check "stop the agent aborts the run" (t-wait 30 (lambda () (not (pi-lsp-running-p)))))
  (t-check "the queued message was not delivered"
           (and (equal (plist-get pi-lsp-last-reply :stopReason) "aborted")
                (equal (append (plist-get pi-lsp-last-reply :undelivered) nil) '("and tidy up")))
           pi-lsp-last-reply)
  (t-check "the transcript says so"
           (t-has "✗ not sent (the run ended first), back in the prompt history (M-p): and tidy up") (t-transcript))
  (t-check "it is back at the front of the prompt history" (equal (car pi-lsp-prompt-history) "and tidy up")
           pi-lsp-prompt-history)
  (pi-lsp-stop (pi-lsp-current-connection)))

(t-run #'t-main (lambda () (list :transcript (t-transcript) :messages t-messages)))
