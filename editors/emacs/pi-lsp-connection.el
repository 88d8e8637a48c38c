;;; pi-lsp-connection.el --- One pi-lsp process per project, over Emacs's jsonrpc.el  -*- lexical-binding: t -*-

;;; Commentary:

;; `pi-lsp-connection' is a `jsonrpc-process-connection' (Emacs's built-in jsonrpc.el, 1.0.14 in
;; Emacs 28) running `pi-lsp-command' for one project root (project.el).  It speaks the LSP
;; lifecycle itself (initialize / initialized / shutdown / exit); eglot is never involved, so the
;; user's own language servers keep running under eglot side by side.
;;
;; Requests from the server are dispatched by `pi-lsp-request-handlers' (method symbol ->
;; function of CONNECTION and PARAMS).  A handler that cannot answer at once (an approval prompt)
;; returns a `pi-lsp-deferred' made with `pi-lsp-defer'; the reply goes out later with
;; `pi-lsp-reply'.  jsonrpc.el sends a request's reply when the dispatcher returns, so the
;; connection's `jsonrpc-connection-send' method holds back a reply whose result is a
;; `pi-lsp-deferred' and records its request id there instead.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'project)
(require 'subr-x)
(require 'url-util)

(defgroup pi-lsp nil
  "Emacs client for pi-lsp, the editor-side tool host of an AI coding agent."
  :group 'tools
  :prefix "pi-lsp-")

(defcustom pi-lsp-command '("pi-lsp")
  "The server command: the program (looked up on `exec-path') and its arguments."
  :type '(repeat string))

(defcustom pi-lsp-settings nil
  "The `pi' settings section as a plist, e.g. (:model \"gpt-4o\" :apiKeyEnv \"OPENAI_API_KEY\").
Sent as `initializationOptions.pi' and as the answer to `workspace/configuration' (design.md
section 5).  Keep it in your own init file: it names the model endpoint and the key variable."
  :type 'plist)

(defcustom pi-lsp-connect-timeout 30
  "Seconds to wait for the server's `initialize' reply."
  :type 'number)

(defcustom pi-lsp-shutdown-timeout 5
  "Seconds to wait for the server to answer `shutdown' and end after `exit' before killing it."
  :type 'number)

(defvar pi-lsp-request-handlers nil
  "Alist of (METHOD-SYMBOL . FUNCTION) for server-to-client requests.
FUNCTION takes the connection and the params plist and returns the result (nil is JSON null),
a `pi-lsp-deferred', or signals `jsonrpc-error'.")

(defvar pi-lsp-notification-handlers nil
  "Alist of (METHOD-SYMBOL . FUNCTION) for server-to-client notifications.")

(defvar pi-lsp-client-capabilities-functions nil
  "Functions of no arguments, each returning a plist of entries for `experimental.pi' in the
`initialize' capabilities (e.g. pi-lsp-knowledge.el's `diagnostics' and `languageRequests').")

(defvar pi-lsp-connection-hook nil
  "Run with the connection as argument once it is initialized.")

(defvar pi-lsp-disconnect-hook nil
  "Run with the connection as argument after its process ended.")

(defvar pi-lsp--connections nil
  "The live `pi-lsp-connection's.")

(defclass pi-lsp-connection (jsonrpc-process-connection)
  ((root :initarg :root :reader pi-lsp-root
         :documentation "The project root (a directory name, expanded).")
   (capabilities :initform nil :accessor pi-lsp-server-capabilities
                 :documentation "The server's `capabilities' from `initialize' (plist).")
   (encoding :initform "utf-16" :accessor pi-lsp-encoding
             :documentation "The negotiated positionEncoding: \"utf-32\" or \"utf-16\".")
   (session-id :initform nil :accessor pi-lsp-session-id
               :documentation "The agent session the next prompt continues.")
   (running :initform nil :accessor pi-lsp-running
            :documentation "Non-nil while a `pi/prompt' request is pending.")
   (shutting-down :initform nil :accessor pi-lsp-shutting-down))
  :documentation "A pi-lsp server process for one project.")

(cl-defstruct (pi-lsp-deferred (:constructor pi-lsp--make-deferred))
  "A reply to a server request that a handler gives later with `pi-lsp-reply'."
  (id nil :documentation "The request id (set when jsonrpc.el would have replied).")
  (done nil :documentation "Non-nil once replied."))

(defun pi-lsp-defer ()
  "A fresh `pi-lsp-deferred' for a request handler to return."
  (pi-lsp--make-deferred))

(cl-defmethod jsonrpc-connection-send ((_conn pi-lsp-connection) &rest args &key result &allow-other-keys)
  "Hold back the reply of a deferred request (see the Commentary); send everything else."
  (if (pi-lsp-deferred-p result)
      (setf (pi-lsp-deferred-id result) (plist-get args :id))
    (cl-call-next-method)))

(defun pi-lsp-reply (conn deferred result)
  "Answer the request behind DEFERRED on CONN with RESULT (nil is JSON null), once.
Does nothing when the connection is gone or DEFERRED was answered already."
  (when (and (not (pi-lsp-deferred-done deferred))
             (pi-lsp-deferred-id deferred)
             (jsonrpc-running-p conn))
    (setf (pi-lsp-deferred-done deferred) t)
    (jsonrpc-connection-send conn :id (pi-lsp-deferred-id deferred) :result result)))

(defun pi-lsp-reply-error (conn deferred code message)
  "Answer the request behind DEFERRED on CONN with the JSON-RPC error CODE and MESSAGE, once.
Does nothing when the connection is gone or DEFERRED was answered already."
  (when (and (not (pi-lsp-deferred-done deferred))
             (pi-lsp-deferred-id deferred)
             (jsonrpc-running-p conn))
    (setf (pi-lsp-deferred-done deferred) t)
    (jsonrpc-connection-send conn :id (pi-lsp-deferred-id deferred)
                             :error (list :code code :message message))))

;;; URIs

(defun pi-lsp-path-to-uri (path)
  "The file: URI of PATH (expanded), percent-encoded as UTF-8."
  (concat "file://" (url-hexify-string (expand-file-name path) url-path-allowed-chars)))

(defun pi-lsp-uri-to-path (uri)
  "The file name of a file: URI, or nil for another scheme."
  (when (and (stringp uri) (string-prefix-p "file://" uri))
    (let ((path (decode-coding-string (url-unhex-string (substring uri 7)) 'utf-8)))
      ;; file://host/path is not a local file; file:///path is
      (when (string-prefix-p "/" path) path))))

;;; Finding and starting connections

(defun pi-lsp-project-root (&optional directory)
  "The project root of DIRECTORY (default `default-directory') by project.el, or nil."
  (when-let ((project (project-current nil (or directory default-directory))))
    (file-name-as-directory (expand-file-name (project-root project)))))

(defun pi-lsp-connection-for-file (file)
  "The live connection whose project holds FILE, or nil (the innermost root wins)."
  (let ((file (expand-file-name file)) best)
    (dolist (conn pi-lsp--connections best)
      (when (and (jsonrpc-running-p conn) (not (pi-lsp-shutting-down conn))
                 (string-prefix-p (pi-lsp-root conn) file)
                 (or (null best) (> (length (pi-lsp-root conn)) (length (pi-lsp-root best)))))
        (setq best conn)))))

(defun pi-lsp-connection-for-root (root)
  "The live connection of ROOT, or nil."
  (cl-find-if (lambda (conn) (and (equal (pi-lsp-root conn) root) (jsonrpc-running-p conn)
                                  (not (pi-lsp-shutting-down conn))))
              pi-lsp--connections))

(defun pi-lsp--dispatch (table conn method params)
  "Call the handler of METHOD in TABLE with CONN and PARAMS.
A notification handler's error is reported, not raised: raised inside jsonrpc.el's process
filter it would leave the rest of the received output unread until more arrives."
  (let ((handler (alist-get method (symbol-value table))))
    (cond ((eq table 'pi-lsp-request-handlers)
           (if handler (funcall handler conn params)
             (jsonrpc-error :code -32601 :message (format "pi-lsp.el does not handle %s" method))))
          (handler
           (condition-case-unless-debug err
               (funcall handler conn params)
             (error (message "pi-lsp: handling %s failed: %s" method (error-message-string err))))))))

(defun pi-lsp--client-capabilities ()
  "The `capabilities' of `initialize' (LSP 3.17 plus experimental.pi)."
  (list :general (list :positionEncodings ["utf-32" "utf-16"])
        :workspace (list :applyEdit t
                         :workspaceEdit (list :documentChanges t)
                         :configuration t
                         :workspaceFolders t)
        :textDocument (list :synchronization (list :didSave t :dynamicRegistration :json-false))
        :window (list :showMessage (list :messageActionItem (list :additionalPropertiesSupport :json-false)))
        :experimental (list :pi (append (list :saveDocuments t :reloadDocuments t :editClosedFiles t
                                              :documentState t :approvals t :review t
                                              :toolEvents t)
                                        (apply #'append (mapcar #'funcall pi-lsp-client-capabilities-functions))))))

(defun pi-lsp--initialize-params (root)
  "The `initialize' params for ROOT."
  (let ((uri (pi-lsp-path-to-uri root))
        (name (file-name-nondirectory (directory-file-name root))))
    (list :processId (emacs-pid)
          :clientInfo (list :name "Emacs" :version emacs-version)
          :rootPath (directory-file-name root)
          :rootUri uri
          :workspaceFolders (vector (list :uri uri :name name))
          :capabilities (pi-lsp--client-capabilities)
          :initializationOptions (list :pi (or pi-lsp-settings (make-hash-table))))))

(defun pi-lsp--on-shutdown (conn)
  "The process of CONN ended: forget CONN and tell the other parts."
  (setq pi-lsp--connections (delq conn pi-lsp--connections))
  (run-hook-with-args 'pi-lsp-disconnect-hook conn))

(defun pi-lsp-connect (root)
  "Start pi-lsp for the project at ROOT and initialize it; return the connection.
Signals `user-error' when `pi-lsp-command' is not found, and `jsonrpc-error' when the server
does not answer `initialize' within `pi-lsp-connect-timeout' seconds."
  (let ((program (car pi-lsp-command)))
    (unless (executable-find program)
      (user-error "pi-lsp: `%s' was not found on exec-path; install it (pipx install /path/to/pi-lsp, a checkout) or set `pi-lsp-command'"
                  program)))
  (let* ((default-directory root)
         (name (format "pi-lsp %s" (file-name-nondirectory (directory-file-name root))))
         (conn (make-instance
                'pi-lsp-connection
                :name name :root root
                :events-buffer-scrollback-size 200000
                :process (lambda ()
                           (make-process :name name :command pi-lsp-command
                                         :connection-type 'pipe :coding 'utf-8-emacs-unix
                                         :noquery t
                                         :stderr (get-buffer-create (format "*%s stderr*" name))))
                :request-dispatcher (lambda (c m p) (pi-lsp--dispatch 'pi-lsp-request-handlers c m p))
                :notification-dispatcher (lambda (c m p) (pi-lsp--dispatch 'pi-lsp-notification-handlers c m p))
                :on-shutdown #'pi-lsp--on-shutdown)))
    (condition-case err
        (let ((result (jsonrpc-request conn :initialize (pi-lsp--initialize-params root)
                                       :timeout pi-lsp-connect-timeout)))
          (setf (pi-lsp-server-capabilities conn) (plist-get result :capabilities))
          (setf (pi-lsp-encoding conn)
                (if (equal (plist-get (plist-get result :capabilities) :positionEncoding) "utf-32")
                    "utf-32" "utf-16"))
          (jsonrpc-notify conn :initialized (make-hash-table))
          (push conn pi-lsp--connections)
          (run-hook-with-args 'pi-lsp-connection-hook conn)
          conn)
      ((error quit)
       (ignore-errors (jsonrpc-shutdown conn))
       (signal (car err) (cdr err))))))

(defun pi-lsp-ensure-connection (&optional directory)
  "The connection for the project of DIRECTORY (default `default-directory'), started if needed.
Signals `user-error' outside a project."
  (let ((root (or (pi-lsp-project-root directory)
                  (user-error "pi-lsp: %s is not inside a project (project.el found none)"
                              (abbreviate-file-name (or directory default-directory))))))
    (or (pi-lsp-connection-for-root root) (pi-lsp-connect root))))

(defvar pi-lsp--exiting nil
  "Non-nil once Emacs is exiting (`kill-emacs-hook' ran `pi-lsp-stop-all').
Nothing may then throw out of the code that runs meanwhile: a question the server withdraws while
`pi-lsp-stop' waits for it would unwind `kill-emacs' itself, and Emacs would not exit.")

(defun pi-lsp--server-alive-p (proc)
  "Whether the server process PROC still runs, even where Emacs cannot see it end.
Inside `kill-emacs' run from a SIGHUP or SIGTERM handler every signal is blocked, SIGCHLD too,
so a server that exited stays `run' to `process-live-p'; the system's process table (a zombie,
state \"Z\", in `process-attributes') still tells.  Where `process-attributes' knows nothing of
PROC, `process-live-p' decides."
  (and (process-live-p proc)
       (not (member (alist-get 'state (process-attributes (process-id proc))) '("Z" "X")))))

(defun pi-lsp--serve-until (conn deadline predicate)
  "Read CONN's output until PREDICATE returns non-nil, the server ends or `float-time' passes
DEADLINE (seconds); return PREDICATE's last value.
Only CONN's output is read and no timer runs (`accept-process-output' with JUST-THIS-ONE an
integer): waiting on every process can spin forever at exit once a child ended unseen (see
`pi-lsp--server-alive-p'), and a timer could throw or ask."
  (let ((proc (jsonrpc--process conn)))
    (while (and (not (funcall predicate)) (pi-lsp--server-alive-p proc) (< (float-time) deadline))
      (accept-process-output proc 0.05 nil 1))
    (funcall predicate)))

(defun pi-lsp-stop (conn)
  "Shut CONN down politely (shutdown request, exit notification), then end the process.
Waits at most `pi-lsp-shutdown-timeout' seconds in all (the server is killed after that), and
only on CONN's own output, so it also ends when Emacs exits on a signal (see
`pi-lsp--server-alive-p'); there the process is deleted at once instead of by
`jsonrpc-shutdown', whose wait for the sentinel reads every process and need not end."
  (setf (pi-lsp-shutting-down conn) t)
  (let ((proc (jsonrpc--process conn))
        (deadline (+ (float-time) pi-lsp-shutdown-timeout))
        (replied nil))
    (unwind-protect
        (when (pi-lsp--server-alive-p proc)
          (ignore-errors
            (jsonrpc-async-request conn :shutdown nil :timeout nil
                                   :success-fn (lambda (_) (setq replied t))
                                   :error-fn (lambda (_) (setq replied t)))
            (when (pi-lsp--serve-until conn deadline (lambda () replied))
              (jsonrpc-notify conn :exit nil)
              (pi-lsp--serve-until conn deadline #'ignore))))
      (if pi-lsp--exiting
          ;; runs the sentinel (`pi-lsp--on-shutdown') at once, whatever SIGCHLD does
          (when (process-live-p proc) (delete-process proc))
        (jsonrpc-shutdown conn))
      (setq pi-lsp--connections (delq conn pi-lsp--connections)))))

(defun pi-lsp-stop-all ()
  "Shut every connection down (on `kill-emacs-hook'), each within `pi-lsp-shutdown-timeout'.
Messages go to *Messages* only: after a SIGHUP there is no terminal to show them."
  (setq pi-lsp--exiting t)
  (let ((inhibit-message t))
    (mapc (lambda (conn) (ignore-errors (pi-lsp-stop conn))) (copy-sequence pi-lsp--connections))))

(add-hook 'kill-emacs-hook #'pi-lsp-stop-all)

;;; Generic requests every LSP client answers

(defun pi-lsp--on-configuration (_conn params)
  "`workspace/configuration': the `pi' section from `pi-lsp-settings', null for other sections."
  (vconcat (mapcar (lambda (item)
                     (if (equal (plist-get item :section) "pi") (or pi-lsp-settings (make-hash-table)) nil))
                   (plist-get params :items))))

(defun pi-lsp--on-workspace-folders (conn _params)
  "`workspace/workspaceFolders': the project root."
  (vector (list :uri (pi-lsp-path-to-uri (pi-lsp-root conn))
                :name (file-name-nondirectory (directory-file-name (pi-lsp-root conn))))))

(setf (alist-get 'workspace/configuration pi-lsp-request-handlers) #'pi-lsp--on-configuration
      (alist-get 'workspace/workspaceFolders pi-lsp-request-handlers) #'pi-lsp--on-workspace-folders
      (alist-get 'client/registerCapability pi-lsp-request-handlers) #'ignore
      (alist-get 'client/unregisterCapability pi-lsp-request-handlers) #'ignore
      (alist-get 'window/workDoneProgress/create pi-lsp-request-handlers) #'ignore
      (alist-get '$/progress pi-lsp-notification-handlers) #'ignore
      (alist-get 'window/logMessage pi-lsp-notification-handlers) #'ignore)

(provide 'pi-lsp-connection)
;;; pi-lsp-connection.el ends here
