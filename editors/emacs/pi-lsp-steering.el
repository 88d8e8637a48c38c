;;; pi-lsp-steering.el --- prompts written while the agent runs: steer, queue, stop, cancel  -*- lexical-binding: t -*-

;;; Commentary:

;; Issue 19.  A prompt sent while the project's run is active does not start a second run: the
;; user picks, with `read-multiple-choice',
;; - steer: `pi/steer {sessionId, text}', a user message sent with the run's next model request
;;   (after the running tool calls end);
;; - queue: `pi/followUp {sessionId, text}', a user message that continues the run when it would end;
;; - stop the agent: `pi/abort'; the text stays in the prompt history (M-p at the `pi:' prompt);
;; - cancel (or C-g): nothing is sent; the text stays in the prompt history.
;; `pi-lsp-steer' and `pi-lsp-queue' send without asking.  A steering or queued message shows in
;; the transcript as the user's line marked [steering] / [queued].  Texts the run ended before
;; sending (the reply's `undelivered') are listed in the transcript and put back at the front of
;; the prompt history, so nothing typed is lost.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'jsonrpc)
(require 'pi-lsp-connection)
(require 'pi-lsp-transcript)

(defvar pi-lsp-prompt-history)
(declare-function pi-lsp-prompt "pi-lsp" (text))
(declare-function pi-lsp-abort "pi-lsp" ())

(defconst pi-lsp-steering-choices
  '((?s "steer" "send it with the agent's next model request")
    (?q "queue" "run it when the current run ends")
    (?k "stop the agent" "abort the run; your text stays in the prompt history (M-p)")
    (?c "cancel" "send nothing; your text stays in the prompt history (M-p)"))
  "The answers to a prompt written while the agent runs, for `read-multiple-choice'.")

(defconst pi-lsp-steering-question "pi-lsp: the agent is running; send this prompt how? "
  "The question asked by `pi-lsp-steering-ask'.")

(defconst pi-lsp-steering--methods '(("steer" . :pi/steer) ("queue" . :pi/followUp))
  "The request of each way to send.")

(defun pi-lsp-steering-first-line (text)
  "The first line of TEXT."
  (car (split-string text "\n")))

(defun pi-lsp-steering-send (conn how text &optional sent)
  "Send TEXT (the prompt as composed, region included) to CONN's active run.
HOW is \"steer\" (`pi/steer') or \"queue\" (`pi/followUp').  SENT, when given, is the text the
transcript shows (default TEXT).  When the run ended meanwhile, TEXT is sent as a new prompt."
  (let ((session (pi-lsp-session-id conn))
        (shown (or sent text)))
    (cond
     ((not (pi-lsp-running conn)) (pi-lsp-prompt text))
     ((not session)
      (message "pi-lsp: the run has not started yet; your text is in the prompt history (M-p), try again"))
     (t
      (jsonrpc-async-request
       conn (cdr (assoc how pi-lsp-steering--methods)) (list :sessionId session :text text)
       :success-fn (lambda (_result)
                     (pi-lsp-transcript-line
                      (format "> [%s] %s" (if (equal how "steer") "steering" "queued")
                              (pi-lsp-steering-first-line shown))
                      'pi-lsp-prompt))
       :error-fn (lambda (error)
                   (if (not (pi-lsp-running conn))
                       (pi-lsp-prompt text)   ; the run ended meanwhile: it is the next prompt
                     (let ((why (or (plist-get error :message) (format "%S" error))))
                       (pi-lsp-transcript-line (format "✗ not sent: %s (your text is in the prompt history)" why) 'error)
                       (message "pi-lsp: not sent: %s" why))))))))
  nil)

(defun pi-lsp-steering-ask (conn text &optional shown)
  "Ask how to send TEXT while CONN's run is active (see the commentary), then do it.
SHOWN is the text for the transcript (default TEXT).  Returns the answer's name, \"cancel\"
for C-g."
  (let* ((answer (condition-case nil
                     (read-multiple-choice pi-lsp-steering-question pi-lsp-steering-choices)
                   (quit nil)))
         (how (if answer (nth 1 answer) "cancel")))
    (pcase how
      ((or "steer" "queue") (pi-lsp-steering-send conn how text shown))
      ("stop the agent" (pi-lsp-abort))
      (_ (message "pi-lsp: nothing sent; your text is in the prompt history (M-p)")))
    how))

(defun pi-lsp-steering-give-back (reply)
  "List REPLY's `undelivered' texts in the transcript and put them back into the prompt history."
  (let ((texts (append (plist-get reply :undelivered) nil)))
    (dolist (text texts)
      (pi-lsp-transcript-line
       (format "✗ not sent (the run ended first), back in the prompt history (M-p): %s"
               (pi-lsp-steering-first-line text))
       'error)
      (push text pi-lsp-prompt-history))
    (when texts
      (message "pi-lsp: %d message(s) were not sent; M-p at the pi: prompt brings them back" (length texts)))))

(provide 'pi-lsp-steering)
;;; pi-lsp-steering.el ends here
