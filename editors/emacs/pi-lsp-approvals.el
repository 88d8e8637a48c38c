;;; pi-lsp-approvals.el --- Approval prompts that cannot vanish or outlive the server  -*- lexical-binding: t -*-

;;; Commentary:

;; `pi/requestApproval' (APPROVALS_SPEC, issue 15) and `window/showMessageRequest' questions.
;;
;; The request handler never blocks jsonrpc.el's process filter: it queues the question, returns
;; a `pi-lsp-deferred' and lets a timer ask.  Questions are asked one at a time, in arrival order,
;; in the minibuffer with `completing-read' over the server's action titles:
;;
;; - no default: RET on empty input asks again, except when the server names a `defaultAction'
;;   (read-only scope only);
;; - "Deny" is the first candidate, so completion UIs that preselect their first candidate
;;   (vertico, ivy, ...) preselect Deny, never an Allow;
;; - `C-g' (or any error, e.g. no terminal in `--batch') answers Deny at once;
;; - `pi/approvalWithdrawn' (timeout, abort, cancelled call) closes the prompt at once: a timer
;;   throws out of the minibuffer read, as `with-timeout' does.  (Not the notification handler
;;   itself: a throw out of jsonrpc.el's process filter would leave later messages of the same
;;   chunk unread.)  The reply still goes out as "deny"; the server ignores answers it stopped
;;   waiting for.
;;
;; The transcript shows a waiting line while a question is open and the outcome after it; the
;; mode line shows "pi:waiting for you".

;;; Code:

(require 'cl-lib)
(require 'pi-lsp-connection)
(require 'pi-lsp-transcript)

(cl-defstruct (pi-lsp--ask (:constructor pi-lsp--make-ask))
  conn deferred approval-id title message choices default deny-value timeout-ms state)

(defvar pi-lsp--ask-queue nil "Questions not yet shown, oldest first.")
(defvar pi-lsp--ask-active nil "The question in the minibuffer now, or nil.")

(defvar pi-lsp-ask-function #'pi-lsp--ask-in-minibuffer
  "Function of one `pi-lsp--ask' that returns the chosen value; quitting means deny.")

(defun pi-lsp-waiting-for-user-p ()
  "Non-nil while a question waits for the user."
  (or pi-lsp--ask-active pi-lsp--ask-queue))

(defun pi-lsp--ask-enqueue (ask)
  "Queue ASK and return its deferred reply."
  (setq pi-lsp--ask-queue (append pi-lsp--ask-queue (list ask)))
  (run-at-time 0 nil #'pi-lsp--ask-next)
  (force-mode-line-update t)
  (pi-lsp--ask-deferred ask))

(defun pi-lsp--ask-in-minibuffer (ask)
  "Ask ASK in the minibuffer (see the Commentary); return the chosen value."
  (let* ((choices (pi-lsp--ask-choices ask))
         (labels (mapcar #'car choices))
         (table (lambda (string predicate action)
                  (if (eq action 'metadata)
                      '(metadata (display-sort-function . identity) (cycle-sort-function . identity))
                    (complete-with-action action labels string predicate))))
         (default (pi-lsp--ask-default ask))
         (prompt (format "%s\n%s (%s; C-g: %s): "
                         (pi-lsp--ask-message ask)
                         (string-join labels " / ")
                         (if default (format "RET: %s" default) "no default")
                         (car (rassoc (pi-lsp--ask-deny-value ask) choices))))
         (completion-ignore-case t)
         (enable-recursive-minibuffers t)
         answer)
    (while (not answer)
      (let ((input (completing-read prompt table nil t nil t default)))
        (setq answer (assoc-string input choices t))))
    (cdr answer)))

(defun pi-lsp--ask-next ()
  "Show the oldest queued question unless one is shown already."
  (when (and (not pi-lsp--ask-active) pi-lsp--ask-queue (not pi-lsp--exiting))
    (let ((ask (pop pi-lsp--ask-queue))
          (followers (pi-lsp-transcript-followers))  ; the minibuffer restores window points
          (value nil))
      (setq pi-lsp--ask-active ask)
      (setf (pi-lsp--ask-state ask) 'asking)
      (unwind-protect
          (setq value
                (catch ask
                  (let ((inhibit-quit nil))
                    (condition-case nil
                        (funcall pi-lsp-ask-function ask)
                      ((quit error) (pi-lsp--ask-deny-value ask))))))
        (setq pi-lsp--ask-active nil)
        (pi-lsp-transcript-follow followers)
        (if (eq (pi-lsp--ask-state ask) 'withdrawn)
            (progn (pi-lsp-reply (pi-lsp--ask-conn ask) (pi-lsp--ask-deferred ask) (pi-lsp--ask-deny-value ask))
                   (message nil))
          (setf (pi-lsp--ask-state ask) 'answered)
          (pi-lsp--ask-answered ask (if (eq value :withdrawn) (pi-lsp--ask-deny-value ask) value)))
        (force-mode-line-update t)
        (when pi-lsp--ask-queue (run-at-time 0 nil #'pi-lsp--ask-next))))))

(defun pi-lsp--ask-answered (ask value)
  "Send the user's VALUE for ASK and note it in the transcript."
  (pi-lsp-reply (pi-lsp--ask-conn ask) (pi-lsp--ask-deferred ask) value)
  (when-let ((id (pi-lsp--ask-approval-id ask)))
    (let ((action (plist-get value :action)))
      (pi-lsp-transcript-approval-outcome
       id (pcase action
            ("allowOnce" "you allowed it once")
            ("allowSession" "you allowed it for this session")
            (_ "you denied it"))
       (not (member action '("allowOnce" "allowSession")))))))

(defun pi-lsp--withdraw-text (reason timeout-ms)
  "The transcript line of a withdrawal for REASON (TIMEOUT-MS: the request's timeout)."
  (pcase reason
    ("timeout" (if timeout-ms
                   (format "Approval timed out after %s s: denied" (/ (round timeout-ms) 1000))
                 "Approval timed out: denied"))
    ("aborted" "Approval withdrawn, the run was aborted: denied")
    ("cancelled" "Approval withdrawn, the call was cancelled: denied")
    (_ (format "Approval withdrawn (%s): denied" reason))))

(defun pi-lsp--on-approval-withdrawn (_conn params)
  "`pi/approvalWithdrawn {approvalId, reason}': close the prompt at once (see the Commentary)."
  (let* ((id (plist-get params :approvalId))
         (match (lambda (ask) (equal (pi-lsp--ask-approval-id ask) id)))
         (queued (cl-find-if match pi-lsp--ask-queue))
         (ask (or queued (and pi-lsp--ask-active (funcall match pi-lsp--ask-active) pi-lsp--ask-active))))
    (when ask
      (pi-lsp-transcript-approval-outcome
       id (pi-lsp--withdraw-text (plist-get params :reason) (pi-lsp--ask-timeout-ms ask)) t)
      (setf (pi-lsp--ask-state ask) 'withdrawn)
      (if queued
          (progn (setq pi-lsp--ask-queue (delq ask pi-lsp--ask-queue))
                 (pi-lsp-reply (pi-lsp--ask-conn ask) (pi-lsp--ask-deferred ask) (pi-lsp--ask-deny-value ask)))
        ;; not while Emacs exits: the throw would unwind `kill-emacs' (C-x C-c at the prompt)
        (unless pi-lsp--exiting
          (run-at-time 0 nil (lambda () (when (and (eq pi-lsp--ask-active ask) (not pi-lsp--exiting))
                                          (throw ask :withdrawn))))))
      (message "pi-lsp: %s" (pi-lsp--withdraw-text (plist-get params :reason) (pi-lsp--ask-timeout-ms ask)))
      (force-mode-line-update t))))

(defun pi-lsp--on-request-approval (conn params)
  "`pi/requestApproval': queue the question, answer later (see the Commentary)."
  (let* ((actions (append (plist-get params :actions) nil))
         (choices (mapcar (lambda (a) (cons (plist-get a :title) (list :action (plist-get a :id)))) actions))
         (deny (or (cl-find-if (lambda (c) (equal (plist-get (cdr c) :action) "deny")) choices)
                   (cons "Deny" (list :action "deny"))))
         (default (car (cl-find-if (lambda (c) (equal (plist-get (cdr c) :action) (plist-get params :defaultAction)))
                                   choices)))
         (ask (pi-lsp--make-ask
               :conn conn :deferred (pi-lsp-defer)
               :approval-id (plist-get params :approvalId)
               :title (plist-get params :title)
               :message (or (plist-get params :message) (plist-get params :title))
               :choices (cons deny (remove deny choices))
               :default default
               :deny-value (cdr deny)
               :timeout-ms (plist-get params :timeoutMs))))
    (pi-lsp-transcript-approval-waiting (pi-lsp--ask-approval-id ask) (pi-lsp--ask-title ask))
    (display-buffer (pi-lsp-transcript))
    (pi-lsp--ask-enqueue ask)))

(defun pi-lsp--on-show-message-request (conn params)
  "`window/showMessageRequest': ask the message with its action titles; dismissing answers null."
  (let* ((actions (append (plist-get params :actions) nil))
         (choices (append (list (cons "Dismiss" nil))
                          (mapcar (lambda (a) (cons (plist-get a :title) (list :title (plist-get a :title)))) actions))))
    (pi-lsp--ask-enqueue
     (pi-lsp--make-ask :conn conn :deferred (pi-lsp-defer) :message (plist-get params :message)
                       :choices choices :deny-value nil))))

(defun pi-lsp--on-show-message (_conn params)
  "`window/showMessage': the echo area and the transcript."
  (let ((text (format "pi-lsp: %s" (plist-get params :message))))
    (pi-lsp-transcript-line text (if (memql (plist-get params :type) '(1 2)) 'warning nil))
    (message "%s" text)))

(setf (alist-get 'pi/requestApproval pi-lsp-request-handlers) #'pi-lsp--on-request-approval
      (alist-get 'window/showMessageRequest pi-lsp-request-handlers) #'pi-lsp--on-show-message-request
      (alist-get 'pi/approvalWithdrawn pi-lsp-notification-handlers) #'pi-lsp--on-approval-withdrawn
      (alist-get 'window/showMessage pi-lsp-notification-handlers) #'pi-lsp--on-show-message)

(provide 'pi-lsp-approvals)
;;; pi-lsp-approvals.el ends here
