;;; pi-lsp.el --- Emacs client for pi-lsp, the editor-side tool host of an AI coding agent  -*- lexical-binding: t -*-

;; Version: 0.2.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, languages

;;; Commentary:

;; pi-lsp speaks LSP plus custom `pi/*' methods (design.md section 5).  This client gives Emacs
;; its own connection to it with the built-in jsonrpc.el, one pi-lsp process per project
;; (project.el), independent of eglot: eglot stays with the user's own language servers.
;;
;; - `pi-lsp-prompt' sends `pi/prompt' (with an active region, the region goes along) and shows
;;   the run in the `*pi-lsp*' transcript; `pi-lsp-abort' stops it; `pi-lsp-start' and
;;   `pi-lsp-shutdown' start and stop the project's server by hand.
;; - Every buffer visiting a file of the project is synchronised, whatever its major mode
;;   (pi-lsp-documents.el); agent edits land in those buffers, one undo step each, next to the
;;   user's unsaved text, and files no buffer visits are visited to be edited (pi-lsp-edits.el).
;; - Approvals come up in the minibuffer without a default; C-g denies; a prompt the server
;;   stopped waiting for closes by itself (pi-lsp-approvals.el).
;; - A prompt while the agent runs asks: steer it, queue it, stop the agent or cancel
;;   (pi-lsp-steering.el); `pi-lsp-steer' and `pi-lsp-queue' send without asking.
;; - `pi-lsp-changes' shows what a session changed, hunk by hunk, to keep or take back
;;   (pi-lsp-changes.el); the transcript links to it after a run that changed files.
;; - With the setting `edit.review' "before", each agent edit comes up as a diff to accept or
;;   reject hunk by hunk before it lands (pi-lsp-review.el).
;;
;; Advertised under `experimental.pi': saveDocuments, reloadDocuments, editClosedFiles,
;; documentState, approvals, review, toolEvents; positionEncoding utf-32 is preferred (Emacs counts code points).

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'pi-lsp-connection)
(require 'pi-lsp-documents)
(require 'pi-lsp-edits)
(require 'pi-lsp-transcript)
(require 'pi-lsp-approvals)
(require 'pi-lsp-changes)
(require 'pi-lsp-review)
(require 'pi-lsp-knowledge)
(require 'pi-lsp-steering)

(defcustom pi-lsp-prompt-timeout nil
  "Seconds to wait for a `pi/prompt' reply before giving up on it; nil waits for ever."
  :type '(choice (const nil) number)
  :group 'pi-lsp)

(defvar pi-lsp-last-reply nil
  "The last `pi/prompt' reply as a plist, or (:error MESSAGE).")

(defvar pi-lsp-prompt-history nil "History of `pi-lsp-prompt'.")

;;; Status in the mode line

(defun pi-lsp-status ()
  "The mode-line text: \"pi:waiting for you\", \"pi:running\" or nothing."
  (cond ((pi-lsp-waiting-for-user-p) (propertize " pi:waiting for you" 'face 'pi-lsp-waiting))
        ((cl-some #'pi-lsp-running pi-lsp--connections) " pi:running")
        (t "")))

(defconst pi-lsp--mode-line-entry '(:eval (pi-lsp-status)))

(defun pi-lsp--install-status (_conn)
  "Put the status into `global-mode-string' (once)."
  (unless (member pi-lsp--mode-line-entry global-mode-string)
    (setq global-mode-string (append (or global-mode-string '("")) (list pi-lsp--mode-line-entry)))))

(add-hook 'pi-lsp-connection-hook #'pi-lsp--install-status)

;;; Events and the end of a connection

(defun pi-lsp--on-event (conn params)
  "`pi/event {sessionId, event}' into the transcript.
The first event of a run names its session (for `pi/steer' before the first reply)."
  (let ((session (plist-get params :sessionId)))
    (when (and (pi-lsp-running conn) (not (pi-lsp-session-id conn))
               (stringp session) (not (equal session "external")))
      (setf (pi-lsp-session-id conn) session)))
  (pi-lsp-changes-note-event conn (plist-get params :event))
  (pi-lsp-transcript-event (plist-get params :event)))

(setf (alist-get 'pi/event pi-lsp-notification-handlers) #'pi-lsp--on-event)

(defun pi-lsp--connection-ended (conn)
  "CONN's process ended: close its questions, end its run in the transcript."
  (dolist (ask (append (and pi-lsp--ask-active (list pi-lsp--ask-active)) pi-lsp--ask-queue))
    (when (eq (pi-lsp--ask-conn ask) conn)
      (pi-lsp--on-approval-withdrawn conn (list :approvalId (pi-lsp--ask-approval-id ask) :reason "the server ended"))))
  (pi-lsp-transcript-interrupt-calls "pi-lsp ended before the call did")
  (when (pi-lsp-running conn)
    (setf (pi-lsp-running conn) nil))
  (unless (pi-lsp-shutting-down conn)
    (pi-lsp-transcript-line (format "✗ pi-lsp for %s ended" (abbreviate-file-name (pi-lsp-root conn))) 'error)))

(add-hook 'pi-lsp-disconnect-hook #'pi-lsp--connection-ended)

;;; Commands

(defun pi-lsp--compose (text)
  "TEXT plus the active region as context."
  (if (use-region-p)
      (let* ((start (region-beginning))
             (end (region-end))
             (first (line-number-at-pos start))
             ;; a region ending at the start of a line does not take that line
             (last (line-number-at-pos (if (and (> end start) (save-excursion (goto-char end) (bolp))) (1- end) end))))
        (format "%s\n\nSelected %s of %s:\n```\n%s\n```" text
                (if (= first last) (format "line %d" first) (format "lines %d-%d" first last))
                (if buffer-file-name (file-relative-name buffer-file-name) (buffer-name))
                (buffer-substring-no-properties (region-beginning) (region-end))))
    text))

;;;###autoload
(defun pi-lsp-start ()
  "Start pi-lsp for the current project (if it is not running) and sync its buffers."
  (interactive)
  (let ((conn (pi-lsp-ensure-connection)))
    (when (called-interactively-p 'interactive)
      (message "pi-lsp: running for %s" (abbreviate-file-name (pi-lsp-root conn))))
    conn))

;;;###autoload
(defun pi-lsp-shutdown ()
  "Stop the current project's pi-lsp."
  (interactive)
  (if-let ((conn (and (pi-lsp-project-root) (pi-lsp-connection-for-root (pi-lsp-project-root)))))
      (pi-lsp-stop conn)
    (message "pi-lsp: not running for this project")))

(defun pi-lsp-current-connection ()
  "The running connection of the current project, or nil."
  (when-let ((root (pi-lsp-project-root))) (pi-lsp-connection-for-root root)))

;;;###autoload
(defun pi-lsp-prompt (text)
  "Send TEXT to the agent (`pi/prompt'); with an active region, the region goes along.
Starts the project's pi-lsp when needed (outside any project: the only running one).  The
`*pi-lsp*' transcript shows the run.  While a run is active, asks whether to steer it, queue
TEXT, stop the agent or cancel (`pi-lsp-steering-ask').
Returns immediately."
  (interactive (list (read-string "pi: " nil 'pi-lsp-prompt-history)))
  (when (string-empty-p (string-trim text))
    (user-error "pi-lsp: the prompt is empty"))
  (let ((conn (if (and (not (pi-lsp-project-root)) (= (length pi-lsp--connections) 1))
                  (car pi-lsp--connections)      ; e.g. from the transcript of the only project
                (pi-lsp-ensure-connection))))
    (pi-lsp--say-where-outside conn)
    (if (pi-lsp-running conn)
        (progn (pi-lsp-steering-ask conn (pi-lsp--compose text) text) nil)
      (let ((params (append (list :text (pi-lsp--compose text))
                            (and (pi-lsp-session-id conn) (list :sessionId (pi-lsp-session-id conn))))))
        (pi-lsp-flush-changes)
        (pi-lsp-transcript-line (concat "> " (car (split-string text "\n"))) 'pi-lsp-prompt)
        (display-buffer (pi-lsp-transcript))
        (setf (pi-lsp-running conn) t)
        (pi-lsp-changes-run-started conn)
        (force-mode-line-update t)
        (cl-flet ((finish (reply)
                          (setf (pi-lsp-running conn) nil)
                          (setq pi-lsp-last-reply reply)
                          (force-mode-line-update t)
                          (pi-lsp-transcript-run-ended reply)
                          (pi-lsp-steering-give-back reply)
                          (pi-lsp-changes-run-ended conn reply)))
          (jsonrpc-async-request
           conn :pi/prompt params
           :timeout pi-lsp-prompt-timeout
           :success-fn (lambda (result)
                         (setf (pi-lsp-session-id conn) (or (plist-get result :sessionId) (pi-lsp-session-id conn)))
                         (finish result))
           :error-fn (lambda (error)
                       (finish (list :error (or (plist-get error :message) (format "%S" error)))))
           :timeout-fn (lambda () (finish (list :error "no reply to the prompt in time")))))
        nil))))

(defun pi-lsp--say-where-outside (conn)
  "When the current buffer visits a file outside CONN's project, say (echo area and transcript)
that the prompt goes to CONN's project: outside any project it goes to the only running one."
  (when-let ((file buffer-file-name))
    (unless (string-prefix-p (pi-lsp-root conn) (expand-file-name file))
      (let ((text (format "pi-lsp: %s is outside every project; the prompt goes to the workspace %s"
                          (abbreviate-file-name file) (abbreviate-file-name (pi-lsp-root conn)))))
        (pi-lsp-transcript-line text 'warning)
        (message "%s" text)))))

(defun pi-lsp--send-to-run (how text)
  "Send TEXT to the current project's active run as HOW (\"steer\" or \"queue\"); with no
run active it is an ordinary prompt."
  (when (string-empty-p (string-trim text))
    (user-error "pi-lsp: the prompt is empty"))
  (let ((conn (or (cl-find-if #'pi-lsp-running (delq nil (cons (pi-lsp-current-connection) pi-lsp--connections))))))
    (if conn
        (pi-lsp-steering-send conn how (pi-lsp--compose text) text)
      (pi-lsp-prompt text))))

;;;###autoload
(defun pi-lsp-steer (text)
  "Steer the running agent: TEXT goes with its next model request (`pi/steer')."
  (interactive (list (read-string "pi steer: " nil 'pi-lsp-prompt-history)))
  (pi-lsp--send-to-run "steer" text))

;;;###autoload
(defun pi-lsp-queue (text)
  "Queue TEXT: it runs when the current run ends (`pi/followUp')."
  (interactive (list (read-string "pi queue: " nil 'pi-lsp-prompt-history)))
  (pi-lsp--send-to-run "queue" text))

;;;###autoload
(defun pi-lsp-abort ()
  "Ask pi-lsp to stop the running prompt (`pi/abort')."
  (interactive)
  (let ((conn (or (cl-find-if #'pi-lsp-running (delq nil (cons (pi-lsp-current-connection) pi-lsp--connections))))))
    (if (not conn)
        (message "pi-lsp: no prompt is running")
      (jsonrpc-notify conn :pi/abort (if (pi-lsp-session-id conn) (list :sessionId (pi-lsp-session-id conn))
                                       (make-hash-table)))
      (pi-lsp-transcript-line "  abort requested" 'warning))))

(defun pi-lsp-running-p ()
  "Non-nil while a prompt runs on any connection."
  (and (cl-some #'pi-lsp-running pi-lsp--connections) t))

;;;###autoload
(defun pi-lsp-update-settings ()
  "Tell every running pi-lsp that `pi-lsp-settings' changed (it pulls them again)."
  (interactive)
  (dolist (conn pi-lsp--connections)
    (jsonrpc-notify conn :workspace/didChangeConfiguration (list :settings nil))))

;;;###autoload
(defun pi-lsp-show-transcript ()
  "Show the `*pi-lsp*' transcript."
  (interactive)
  (pop-to-buffer (pi-lsp-transcript)))

(provide 'pi-lsp)
;;; pi-lsp.el ends here
