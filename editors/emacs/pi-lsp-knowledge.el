;;; pi-lsp-knowledge.el --- eglot's language servers and flymake's diagnostics, for the agent  -*- lexical-binding: t -*-

;;; Commentary:

;; By the LSP spec pi-lsp cannot ask the user's language servers itself, so this client does it
;; for pi-lsp (issue 17's wire contract, README "Wire contract"):
;;
;; - `pi/languageRequest {method, params}' asks eglot's server of the document's buffer and
;;   answers {servers: [name], result}.  A file no buffer visits is loaded (hidden, not shown)
;;   so eglot manages it as the user's setup would; when the user's mode hooks run
;;   `eglot-ensure' the reply waits for that server, bounded by `pi-lsp-attach-timeout'.  No
;;   eglot server for the buffer, or one without the method: {servers: [], result: null}.  The
;;   server's error: a JSON-RPC error -32803 (RequestFailed) "<server>: <message>"; no answer
;;   within `pi-lsp-language-request-timeout' seconds: the same error saying so.  The reply is
;;   asynchronous: Emacs never waits for a language server here.
;; - `pi/diagnostics {uris?}' answers from flymake's diagnostics of the buffer (eglot's backend
;;   and any other flymake backend), or from eglot's last report while flymake has not run in a
;;   buffer (a hidden buffer, or `emacs --batch').
;; - `pi/diagnosticsChanged {uris, versions?}' is sent after eglot's server published diagnostics
;;   for a file of a connection's project, coalesced over `pi-lsp-diagnostics-changed-delay'
;;   seconds.  `versions' dates each change in pi-lsp's numbering of the buffer (this client's
;;   own, not eglot's): the version of the buffer's text, counting changes not sent yet, or one
;;   less when the publish's `version' is older than eglot's version of the buffer (a report
;;   about the text before the last change), so pi-lsp's wait after an edit does not take a late
;;   report about the old text for the server's check of the edit.
;;
;; Positions: pi-lsp's side is in the connection's positionEncoding (`pi-lsp-position' and
;; `pi-lsp-point'); eglot's side goes through eglot's own position functions in the buffer, so a
;; user's column settings for a server (`eglot-move-to-column-function' and friends, or the
;; positionEncoding newer eglots negotiate) are honoured.  A position in a file no buffer visits
;; is converted in a temporary buffer holding the file, with the column functions of the buffer
;; the request was made for.  URIs go to the server in eglot's form (it resolves symlinks) and
;; come back in pi-lsp's; TextDocumentEdit versions come back as pi-lsp's document versions.
;;
;; eglot is never loaded from here: without it (or before the user starts it) every file has no
;; language server.  Tested with eglot 1.9 (Debian's elpa-eglot for Emacs 28); the eglot
;; internals used (`eglot--pos-to-lsp-position', `eglot--lsp-position-to-point',
;; `eglot--signal-textDocument/didChange', `eglot--diagnostics', `eglot--managed-buffers') exist
;; from eglot 1.9 through Emacs 30's.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'pi-lsp-connection)
(require 'pi-lsp-documents)
(require 'pi-lsp-edits)
(require 'flymake)

(declare-function eglot-current-server "ext:eglot")
(declare-function eglot-managed-p "ext:eglot")
(declare-function eglot--capabilities "ext:eglot")
(declare-function eglot--server-info "ext:eglot")
(declare-function eglot--managed-buffers "ext:eglot")
(declare-function eglot--pos-to-lsp-position "ext:eglot")
(declare-function eglot--lsp-position-to-point "ext:eglot")
(declare-function eglot--TextDocumentIdentifier "ext:eglot")
(declare-function eglot--signal-textDocument/didChange "ext:eglot")
(declare-function eglot-ensure "ext:eglot")
(declare-function eglot--connect "ext:eglot")
(declare-function eglot--guess-contact "ext:eglot")
(defvar eglot--diagnostics)
(defvar eglot--recent-changes)
(defvar eglot--versioned-identifier)
(defvar eglot--current-flymake-report-fn)
(defvar eglot-sync-connect)
(defvar eglot-ignored-server-capabilities)

(defcustom pi-lsp-language-request-timeout 8
  "Seconds to wait for eglot's language server to answer a `pi/languageRequest'.
Below pi-lsp's own `languageServer.timeoutSeconds' (10), so the user sees this client's error."
  :type 'number
  :group 'pi-lsp)

(defcustom pi-lsp-attach-timeout 5
  "Seconds to wait for eglot to manage a buffer loaded for pi-lsp, when the mode runs `eglot-ensure'."
  :type 'number
  :group 'pi-lsp)

(defcustom pi-lsp-diagnostics-changed-delay 0.05
  "Seconds over which `pi/diagnosticsChanged' notifications are coalesced (the contract allows 0.05)."
  :type 'number
  :group 'pi-lsp)

(defconst pi-lsp-language-methods
  '(("textDocument/definition" . :definitionProvider)
    ("textDocument/references" . :referencesProvider)
    ("textDocument/rename" . :renameProvider)
    ("textDocument/documentSymbol" . :documentSymbolProvider)
    ("textDocument/hover" . :hoverProvider))
  "The LSP methods answered through `pi/languageRequest', each with its server capability.")

(defconst pi-lsp--eglot-column-variables
  '(eglot-current-column-function eglot-move-to-column-function      ; eglot 1.9 to 1.12
    eglot-current-linepos-function eglot-move-to-linepos-function)   ; Emacs 29 and later
  "eglot's variables that say how its server counts columns, copied into temporary buffers.")

;;; Capabilities

(defun pi-lsp--knowledge-capabilities ()
  "experimental.pi entries: diagnostics always (flymake is built in); languageRequests when eglot
is installed (it may be started after pi-lsp)."
  (append (list :diagnostics t)
          (and (or (featurep 'eglot) (locate-library "eglot"))
               (list :languageRequests (vconcat (mapcar #'car pi-lsp-language-methods))))))

(add-hook 'pi-lsp-client-capabilities-functions #'pi-lsp--knowledge-capabilities)

;;; eglot's server of a buffer

(defun pi-lsp--eglot-server (buffer)
  "eglot's server managing BUFFER, or nil (also when eglot is not loaded)."
  (when (and (featurep 'eglot) (buffer-live-p buffer))
    (with-current-buffer buffer
      (and (eglot-managed-p) (eglot-current-server)))))

(defun pi-lsp--server-name (server)
  "SERVER's name as it calls itself (serverInfo.name), else eglot's name for it."
  (or (ignore-errors (plist-get (eglot--server-info server) :name))
      (jsonrpc-name server)))

(defun pi-lsp--server-supports (server capability)
  "Non-nil when SERVER announced CAPABILITY (a keyword such as :renameProvider) and the user did
not tell eglot to ignore it (`eglot-ignored-server-capabilities')."
  (let ((value (plist-get (eglot--capabilities server) capability)))
    (and value (not (eq value :json-false))
         (not (memq capability (bound-and-true-p eglot-ignored-server-capabilities))))))

(defun pi-lsp--eglot-send-changes (server)
  "Send eglot's pending didChange of every buffer SERVER manages, so it answers about the current text."
  (dolist (buffer (ignore-errors (eglot--managed-buffers server)))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (when (bound-and-true-p eglot--recent-changes)
          (ignore-errors (eglot--signal-textDocument/didChange)))))))

(defun pi-lsp--after-agent-edit (_label buffers)
  "After an agent edit of BUFFERS, tell their eglot servers now (not after eglot's idle delay),
so diagnostics of the new text follow at once."
  (dolist (buffer buffers)
    (when-let ((server (pi-lsp--eglot-server buffer)))
      (pi-lsp--eglot-send-changes server))))

(add-hook 'pi-lsp-edit-functions #'pi-lsp--after-agent-edit)

;;; Buffers for pi-lsp's documents

(defun pi-lsp--runs-eglot-ensure-p ()
  "Non-nil when the current major mode or a parent runs `eglot-ensure' from its hook."
  (let ((mode major-mode) found)
    (while (and mode (not found))
      (let ((hook (intern-soft (format "%s-hook" mode))))
        (setq found (and hook (boundp hook)
                         (let ((value (symbol-value hook)))
                           (if (functionp value) (eq value 'eglot-ensure) (memq 'eglot-ensure value))))))
      (setq mode (get mode 'derived-mode-parent)))
    found))

(defun pi-lsp--load-buffer (path)
  "The buffer visiting PATH, visiting it hidden when none does; nil when PATH is no file.
Returns (BUFFER . WAIT): WAIT is non-nil when the buffer was loaded now and its mode runs
`eglot-ensure' but eglot does not manage it yet (eglot connects after the current command, so
it is asked to connect now)."
  (if-let ((buffer (find-buffer-visiting path)))
      (cons buffer nil)
    (when (file-regular-p path)
      (let* ((large-file-warning-threshold nil)
             (enable-local-variables :safe)
             (inhibit-message t)
             (buffer (find-file-noselect path t)))
        (with-current-buffer buffer
          (let ((wait (and (featurep 'eglot) (not (eglot-managed-p)) (pi-lsp--runs-eglot-ensure-p))))
            (when wait
              ;; `eglot-ensure' connects from `post-command-hook', which timers and process
              ;; filters never run: start the same connection here (never prompting).
              (condition-case err
                  (let ((eglot-sync-connect nil))
                    (apply #'eglot--connect (eglot--guess-contact)))
                (error (message "pi-lsp: eglot could not start for %s: %s" (buffer-name)
                                (error-message-string err))
                       (setq wait nil))))
            (cons buffer wait)))))))

(defun pi-lsp--with-buffers (paths callback)
  "Call CALLBACK with the buffers of PATHS (nil for a path that is no file), once eglot manages
those that wait for it (`pi-lsp--load-buffer') or `pi-lsp-attach-timeout' passed.  CALLBACK
always runs later, from a timer."
  (let* ((loaded (mapcar #'pi-lsp--load-buffer paths))
         (deadline (+ (float-time) pi-lsp-attach-timeout))
         (buffers (mapcar #'car loaded)))
    (if (not (cl-some #'cdr loaded))
        ;; from a timer even then: a deferred reply needs its request id, known once the
        ;; request handler returned
        (run-at-time 0 nil callback buffers)
      (let (timer)
        (setq timer
              (run-at-time
               0.1 0.1
               (lambda ()
                 (when (or (> (float-time) deadline)
                           (cl-every (lambda (entry) (or (not (cdr entry)) (pi-lsp--eglot-server (car entry))))
                                     loaded))
                   (cancel-timer timer)
                   (funcall callback buffers)))))))))

;;; Positions and URIs between pi-lsp and eglot's server

(defun pi-lsp--to-server-position (position encoding)
  "POSITION (pi-lsp's, in ENCODING) as the position eglot's server of the current buffer uses."
  (let ((point (let ((pi-lsp--encoding encoding)) (pi-lsp-point position))))
    (save-excursion (eglot--pos-to-lsp-position point))))

(defun pi-lsp--from-server-position (position encoding)
  "The server's POSITION in the current buffer as pi-lsp's, in ENCODING."
  (let ((point (eglot--lsp-position-to-point position)))
    (let ((pi-lsp--encoding encoding)) (pi-lsp-position point))))

(cl-defstruct (pi-lsp--conversion (:constructor pi-lsp--make-conversion))
  "What converting one server result needs."
  conn encoding origin (temporary nil) (buffers (make-hash-table :test #'equal)))

(defun pi-lsp--conversion-buffer (conversion path)
  "A buffer holding PATH's text as the server sees it: the buffer visiting it, else a temporary
buffer with the file's text and the origin buffer's column functions; nil when unreadable."
  (let ((table (pi-lsp--conversion-buffers conversion)))
    (or (gethash path table)
        (puthash path
                 (or (find-buffer-visiting path)
                     (let ((origin (pi-lsp--conversion-origin conversion))
                           (buffer (generate-new-buffer " *pi-lsp conversion*" t)))
                       (push buffer (pi-lsp--conversion-temporary conversion))
                       (with-current-buffer buffer
                         (dolist (var pi-lsp--eglot-column-variables)
                           (when (boundp var) (set (make-local-variable var) (buffer-local-value var origin))))
                         (condition-case nil
                             (let ((coding-system-for-read 'utf-8)) (insert-file-contents path) buffer)
                           (error nil)))))
                 table))))

(defun pi-lsp--server-uri-path (uri)
  "The local file name of the server's URI (a string or a `changes' key), or nil."
  (pi-lsp-uri-to-path (if (keywordp uri) (substring (symbol-name uri) 1) uri)))

(defun pi-lsp--pi-uri (conversion path)
  "pi-lsp's URI of PATH: the URI its buffer was opened with, else PATH under the project root as
pi-lsp names it (eglot resolves symlinks, pi-lsp does not)."
  (let* ((buffer (find-buffer-visiting path))
         (root (pi-lsp-root (pi-lsp--conversion-conn conversion)))
         (true-root (file-name-as-directory (file-truename root))))
    (cond ((and buffer (buffer-local-value 'pi-lsp--uri buffer)
                (eq (buffer-local-value 'pi-lsp--connection buffer) (pi-lsp--conversion-conn conversion)))
           (buffer-local-value 'pi-lsp--uri buffer))
          ((and (not (string-prefix-p root path)) (string-prefix-p true-root path))
           (pi-lsp-path-to-uri (concat root (substring path (length true-root)))))
          (t (pi-lsp-path-to-uri path)))))

(defun pi-lsp--convert-range (conversion path range)
  "RANGE (the server's) in PATH as pi-lsp's range; unchanged when PATH cannot be read."
  (let ((buffer (and range path (pi-lsp--conversion-buffer conversion path)))
        (encoding (pi-lsp--conversion-encoding conversion)))
    (if (not buffer)
        range
      (with-current-buffer buffer
        (list :start (pi-lsp--from-server-position (plist-get range :start) encoding)
              :end (pi-lsp--from-server-position (plist-get range :end) encoding))))))

(defun pi-lsp--convert-location (conversion location origin-path)
  "A Location or LocationLink (plist) with its URIs and ranges in pi-lsp's terms."
  (let ((location (copy-sequence location)))
    (when-let ((path (pi-lsp--server-uri-path (plist-get location :uri))))
      (setq location (plist-put location :range (pi-lsp--convert-range conversion path (plist-get location :range))))
      (setq location (plist-put location :uri (pi-lsp--pi-uri conversion path))))
    (when-let ((path (pi-lsp--server-uri-path (plist-get location :targetUri))))
      (dolist (key '(:targetRange :targetSelectionRange))
        (when (plist-get location key)
          (setq location (plist-put location key (pi-lsp--convert-range conversion path (plist-get location key))))))
      (setq location (plist-put location :targetUri (pi-lsp--pi-uri conversion path))))
    (when (plist-get location :originSelectionRange)
      (setq location (plist-put location :originSelectionRange
                                (pi-lsp--convert-range conversion origin-path (plist-get location :originSelectionRange)))))
    location))

(defun pi-lsp--convert-symbol (conversion symbol path)
  "A DocumentSymbol (with its children) or SymbolInformation of PATH in pi-lsp's terms."
  (let ((symbol (copy-sequence symbol)))
    (if (plist-get symbol :location)
        (plist-put symbol :location (pi-lsp--convert-location conversion (plist-get symbol :location) path))
      (dolist (key '(:range :selectionRange))
        (setq symbol (plist-put symbol key (pi-lsp--convert-range conversion path (plist-get symbol key)))))
      (when (plist-get symbol :children)
        (setq symbol (plist-put symbol :children
                                (vconcat (mapcar (lambda (child) (pi-lsp--convert-symbol conversion child path))
                                                 (plist-get symbol :children))))))
      symbol)))

(defun pi-lsp--convert-text-edits (conversion path edits)
  "TextEdits (or AnnotatedTextEdits) of PATH with pi-lsp's ranges, as a vector."
  (vconcat (mapcar (lambda (edit)
                     (plist-put (copy-sequence edit) :range
                                (pi-lsp--convert-range conversion path (plist-get edit :range))))
                   edits)))

(defun pi-lsp--document-version (path server-version)
  "pi-lsp's version of PATH's buffer for a TextDocumentEdit the server made at SERVER-VERSION.
nil (JSON null) when no pi-lsp document holds PATH; signals when the buffer changed since the
server read it (its edit would no longer fit)."
  (let ((buffer (find-buffer-visiting path)))
    (when (and buffer (buffer-local-value 'pi-lsp--connection buffer))
      (with-current-buffer buffer
        (when (and (integerp server-version) (bound-and-true-p eglot--versioned-identifier)
                   (/= server-version eglot--versioned-identifier))
          (error "%s changed while the language server computed the edit" (abbreviate-file-name path)))
        (pi-lsp-flush-changes buffer)
        pi-lsp--version))))

(defun pi-lsp--convert-workspace-edit (conversion edit)
  "A WorkspaceEdit with pi-lsp's URIs, ranges and document versions."
  (let ((edit (copy-sequence edit)))
    (when-let ((changes (plist-get edit :changes)))
      (setq edit (plist-put edit :changes
                            (cl-loop for (key edits) on changes by #'cddr
                                     for path = (pi-lsp--server-uri-path key)
                                     append (if path
                                                (list (intern (concat ":" (pi-lsp--pi-uri conversion path)))
                                                      (pi-lsp--convert-text-edits conversion path edits))
                                              (list key edits))))))
    (when-let ((document-changes (plist-get edit :documentChanges)))
      (setq edit (plist-put edit :documentChanges
                            (vconcat
                             (mapcar (lambda (change)
                                       (let* ((doc (plist-get change :textDocument))
                                              (path (and doc (pi-lsp--server-uri-path (plist-get doc :uri)))))
                                         (if (not path)
                                             change      ; a resource operation, or not a local file
                                           (list :textDocument
                                                 (list :uri (pi-lsp--pi-uri conversion path)
                                                       :version (pi-lsp--document-version path (plist-get doc :version)))
                                                 :edits (pi-lsp--convert-text-edits conversion path (plist-get change :edits))))))
                                     document-changes)))))
    edit))

(defun pi-lsp--convert-result (conversion method result origin-path)
  "RESULT of METHOD (a string) from eglot's server, in pi-lsp's terms (see the Commentary)."
  (cond ((null result) nil)
        ((member method '("textDocument/definition" "textDocument/references"))
         (if (and (listp result) (keywordp (car result)))   ; a single Location
             (pi-lsp--convert-location conversion result origin-path)
           (vconcat (mapcar (lambda (location) (pi-lsp--convert-location conversion location origin-path)) result))))
        ((equal method "textDocument/documentSymbol")
         (vconcat (mapcar (lambda (symbol) (pi-lsp--convert-symbol conversion symbol origin-path)) result)))
        ((equal method "textDocument/hover")
         (if (plist-get result :range)
             (plist-put (copy-sequence result) :range (pi-lsp--convert-range conversion origin-path (plist-get result :range)))
           result))
        ((equal method "textDocument/rename") (pi-lsp--convert-workspace-edit conversion result))
        (t result)))

;;; pi/languageRequest

(defvar pi-lsp--pending-language-requests nil
  "The `pi-lsp-deferred's of `pi/languageRequest's waiting for a language server, for $/cancelRequest.")

(defun pi-lsp--reply-error (conn deferred message)
  "Answer DEFERRED on CONN with a RequestFailed (-32803) error carrying MESSAGE."
  (setq pi-lsp--pending-language-requests (delq deferred pi-lsp--pending-language-requests))
  (pi-lsp-reply-error conn deferred -32803 message))

(defun pi-lsp--reply-result (conn deferred result)
  "Answer DEFERRED on CONN with RESULT."
  (setq pi-lsp--pending-language-requests (delq deferred pi-lsp--pending-language-requests))
  (pi-lsp-reply conn deferred result))

(defconst pi-lsp--no-server (list :servers [] :result nil)
  "The answer when no language server of the editor serves the document for the method.")

(defun pi-lsp--ask-server (conn deferred buffer method params)
  "Send METHOD with pi-lsp's PARAMS to eglot's server of BUFFER; answer DEFERRED when it replies."
  (let* ((server (pi-lsp--eglot-server buffer))
         (capability (cdr (assoc method pi-lsp-language-methods))))
    (if (not (and server (pi-lsp--server-supports server capability)))
        (pi-lsp--reply-result conn deferred pi-lsp--no-server)
      (let* ((name (pi-lsp--server-name server))
             (encoding (pi-lsp-encoding conn))
             (origin-path (with-current-buffer buffer buffer-file-name))
             (server-params (copy-sequence params)))
        (pi-lsp--eglot-send-changes server)
        (with-current-buffer buffer
          (setq server-params (plist-put server-params :textDocument (eglot--TextDocumentIdentifier)))
          (when-let ((position (plist-get params :position)))
            (setq server-params (plist-put server-params :position (pi-lsp--to-server-position position encoding)))))
        (jsonrpc-async-request
         server (intern method) server-params
         :timeout pi-lsp-language-request-timeout
         :success-fn
         (lambda (result)
           (when (memq deferred pi-lsp--pending-language-requests)
             (let ((conversion (pi-lsp--make-conversion :conn conn :encoding encoding :origin buffer)))
               (unwind-protect
                   (condition-case err
                       (pi-lsp--reply-result
                        conn deferred
                        (list :servers (vector name)
                              :result (pi-lsp--convert-result conversion method result origin-path)))
                     (error (pi-lsp--reply-error conn deferred (format "%s: %s" name (error-message-string err)))))
                 (mapc #'kill-buffer (pi-lsp--conversion-temporary conversion))))))
         :error-fn
         (lambda (error)
           (pi-lsp--reply-error conn deferred
                                (format "%s: %s" name (or (plist-get error :message) (format "%S" error)))))
         :timeout-fn
         (lambda ()
           (pi-lsp--reply-error conn deferred
                                (format "%s: no answer to %s within %s s" name method pi-lsp-language-request-timeout))))))))

(defun pi-lsp--on-language-request (conn params)
  "`pi/languageRequest {method, params}': {servers, result}, answered asynchronously."
  (let* ((method (plist-get params :method))
         (lsp-params (plist-get params :params))
         (path (pi-lsp-uri-to-path (plist-get (plist-get lsp-params :textDocument) :uri))))
    (unless (assoc method pi-lsp-language-methods)
      (jsonrpc-error :code -32602 :message (format "pi-lsp.el does not answer %s through pi/languageRequest" method)))
    (unless path
      (jsonrpc-error :code -32602 :message "params.textDocument.uri is not a local file: URI"))
    (let ((deferred (pi-lsp-defer)))
      (push deferred pi-lsp--pending-language-requests)
      (pi-lsp--with-buffers
       (list path)
       (lambda (buffers)
         (condition-case err
             (if (car buffers)
                 (pi-lsp--ask-server conn deferred (car buffers) method lsp-params)
               (pi-lsp--reply-result conn deferred pi-lsp--no-server))
           (error (pi-lsp--reply-error conn deferred (format "Emacs: %s" (error-message-string err)))))))
      deferred)))

(defun pi-lsp--on-cancel-request (conn params)
  "`$/cancelRequest {id}': a `pi/languageRequest' pi-lsp stopped waiting for is answered
RequestCancelled (-32800) and its server's late reply is dropped."
  (when-let ((deferred (cl-find (plist-get params :id) pi-lsp--pending-language-requests
                                :key #'pi-lsp-deferred-id :test #'equal)))
    (setq pi-lsp--pending-language-requests (delq deferred pi-lsp--pending-language-requests))
    (pi-lsp-reply-error conn deferred -32800 "cancelled by pi-lsp")))

;;; pi/diagnostics

(defun pi-lsp--severity (type)
  "The LSP severity (1 error .. 3 information) of the flymake diagnostic TYPE."
  (pcase (or (get type 'flymake-category) type)
    ((or 'flymake-error :error) 1)
    ((or 'flymake-warning :warning) 2)
    (_ 3)))

(defun pi-lsp--diagnostic (diag beg end encoding)
  "The flymake diagnostic DIAG, now at BEG..END (nil: take eglot's range), as an LSP Diagnostic."
  (let* ((data (flymake-diagnostic-data diag))
         (lsp (and (listp data) (alist-get 'eglot-lsp-diag data)))
         (range (if (and beg end (or (not lsp) (< beg end)))
                    (let ((pi-lsp--encoding encoding))
                      (list :start (pi-lsp-position beg) :end (pi-lsp-position end)))
                  (let ((range (plist-get lsp :range)))
                    (list :start (pi-lsp--from-server-position (plist-get range :start) encoding)
                          :end (pi-lsp--from-server-position (plist-get range :end) encoding)))))
         (source (if lsp (plist-get lsp :source)
                   (replace-regexp-in-string "-flymake\\(-backend\\)?\\'" ""
                                             (format "%s" (flymake-diagnostic-backend diag))))))
    (append (list :range range
                  :severity (or (and lsp (plist-get lsp :severity)) (pi-lsp--severity (flymake-diagnostic-type diag)))
                  :message (if lsp (plist-get lsp :message) (flymake-diagnostic-text diag)))
            (and source (list :source source))
            (and lsp (plist-get lsp :code) (list :code (plist-get lsp :code))))))

(defun pi-lsp--buffer-diagnostics (encoding)
  "The current buffer's diagnostics as LSP Diagnostics in ENCODING (see the Commentary):
flymake's where it has reported (the overlays' places follow later edits), else eglot's last
report."
  (save-restriction
    (widen)
    (let ((flymake-has-eglot (and (bound-and-true-p flymake-mode) (bound-and-true-p eglot--current-flymake-report-fn)
                                  ;; else eglot keeps new reports to itself until flymake asks
                                  flymake-no-changes-timeout))
          out)
      (dolist (overlay (overlays-in (point-min) (point-max)))
        (when-let ((diag (overlay-get overlay 'flymake-diagnostic)))
          (when (or flymake-has-eglot (not (eq (flymake-diagnostic-backend diag) 'eglot-flymake-backend)))
            (push (pi-lsp--diagnostic diag (overlay-start overlay) (overlay-end overlay) encoding) out))))
      (when (and (not flymake-has-eglot) (featurep 'eglot) (eglot-managed-p))
        (dolist (diag (bound-and-true-p eglot--diagnostics))
          (push (pi-lsp--diagnostic diag nil nil encoding) out)))
      (vconcat (sort out (lambda (a b)
                           (let ((pa (plist-get (plist-get a :range) :start))
                                 (pb (plist-get (plist-get b :range) :start)))
                             (or (< (plist-get pa :line) (plist-get pb :line))
                                 (and (= (plist-get pa :line) (plist-get pb :line))
                                      (< (plist-get pa :character) (plist-get pb :character)))))))))))

(defun pi-lsp--document-diagnostics (conn buffer)
  "One `documents' entry of `pi/diagnostics' for BUFFER."
  (with-current-buffer buffer
    (let ((server (pi-lsp--eglot-server buffer)))
      (list :uri (if (eq pi-lsp--connection conn) pi-lsp--uri (pi-lsp-path-to-uri buffer-file-name))
            :version (and (eq pi-lsp--connection conn) (progn (pi-lsp-flush-changes buffer) pi-lsp--version))
            :servers (if server (vector (pi-lsp--server-name server)) [])
            :diagnostics (pi-lsp--buffer-diagnostics (pi-lsp-encoding conn))))))

(defun pi-lsp--diagnosed-buffers (conn)
  "The buffers of CONN's project that eglot manages or that hold flymake diagnostics."
  (cl-remove-if-not
   (lambda (buffer)
     (let ((file (buffer-file-name buffer)))
       (and file (eq (pi-lsp-connection-for-file file) conn)
            (or (pi-lsp--eglot-server buffer)
                (with-current-buffer buffer
                  (and (bound-and-true-p flymake-mode) (flymake-diagnostics)))))))
   (buffer-list)))

(defun pi-lsp--on-diagnostics (conn params)
  "`pi/diagnostics {uris?}': {documents: [{uri, version, servers, diagnostics}]}."
  (cl-flet ((result (buffers)
              (list :documents
                    (vconcat (mapcar (lambda (buffer) (pi-lsp--document-diagnostics conn buffer))
                                     (cl-remove-if-not #'buffer-live-p (delq nil buffers)))))))
    (if-let ((uris (plist-get params :uris)))
        (let ((deferred (pi-lsp-defer)))
          (pi-lsp--with-buffers (delq nil (mapcar #'pi-lsp-uri-to-path uris))
                                (lambda (buffers)
                                  (condition-case err
                                      (pi-lsp-reply conn deferred (result buffers))
                                    (error (pi-lsp-reply-error conn deferred -32803
                                                               (format "Emacs: %s" (error-message-string err)))))))
          deferred)
      (result (pi-lsp--diagnosed-buffers conn)))))

;;; pi/diagnosticsChanged

(defvar pi-lsp--changed-uris nil
  "Alist of (CONNECTION . ((URI . VERSION) ...)) waiting to be sent (VERSION nil: undated).")
(defvar pi-lsp--changed-timer nil "The timer that sends `pi-lsp--changed-uris'.")

(defun pi-lsp--send-diagnostics-changed ()
  "Send the coalesced `pi/diagnosticsChanged' notifications."
  (let ((pending (prog1 pi-lsp--changed-uris (setq pi-lsp--changed-uris nil pi-lsp--changed-timer nil))))
    (pcase-dolist (`(,conn . ,entries) pending)
      (when (jsonrpc-running-p conn)
        (let ((entries (reverse entries))
              (versions (make-hash-table :test #'equal)))
          (pcase-dolist (`(,uri . ,version) entries)
            (when version (puthash uri version versions)))
          (jsonrpc-notify conn :pi/diagnosticsChanged
                          (append (list :uris (vconcat (mapcar #'car entries)))
                                  (unless (zerop (hash-table-count versions)) (list :versions versions)))))))))

(defun pi-lsp--change-version (path server-version)
  "The pi-lsp version dating a change of PATH's diagnostics, or nil when pi-lsp has no document.
The version of the buffer's text as pi-lsp numbers it (its next version when changes wait to be
sent); one less when SERVER-VERSION, the version eglot's server published for, is older than
eglot's version of the buffer: the report is about the text before the last change."
  (let ((buffer (find-buffer-visiting path)))
    (when (and buffer (buffer-local-value 'pi-lsp--connection buffer))
      (with-current-buffer buffer
        (let ((current (+ pi-lsp--version (if (memq buffer pi-lsp--dirty-buffers) 1 0))))
          (if (and (integerp server-version) (boundp 'eglot--versioned-identifier)
                   (integerp eglot--versioned-identifier)
                   (< server-version eglot--versioned-identifier))
              (1- current)
            current))))))

(defun pi-lsp-note-diagnostics-changed (path &optional server-version)
  "Queue `pi/diagnosticsChanged' for PATH to the connection of its project, if any.
SERVER-VERSION: the `version' of the publishDiagnostics that changed them, if it had one."
  (let* ((buffer (find-buffer-visiting path))
         (conn (or (and buffer (buffer-local-value 'pi-lsp--connection buffer))
                   (pi-lsp-connection-for-file path)
                   (cl-find-if (lambda (c) (string-prefix-p (file-truename (pi-lsp-root c)) path))
                               pi-lsp--connections))))
    (when (and conn (jsonrpc-running-p conn))
      (let ((uri (pi-lsp--pi-uri (pi-lsp--make-conversion :conn conn) path))
            (entry (assq conn pi-lsp--changed-uris)))
        (unless entry
          (setq entry (list conn))
          (push entry pi-lsp--changed-uris))
        (let ((version (pi-lsp--change-version path server-version))
              (queued (assoc uri (cdr entry))))
          (if (not queued)
              (push (cons uri version) (cdr entry))
            ;; coalesced: the newest; undated when one of them is
            (setcdr queued (and version (cdr queued) (max version (cdr queued))))))
        (unless pi-lsp--changed-timer
          (setq pi-lsp--changed-timer
                (run-at-time pi-lsp-diagnostics-changed-delay nil #'pi-lsp--send-diagnostics-changed)))))))

(with-eval-after-load 'eglot
  (cl-defmethod eglot-handle-notification :after
    (_server (_method (eql 'textDocument/publishDiagnostics)) &key uri version &allow-other-keys)
    "Tell pi-lsp that the diagnostics of URI changed (a republish counts too), dated by VERSION."
    (condition-case-unless-debug err
        (when-let ((path (pi-lsp--server-uri-path uri)))
          (pi-lsp-note-diagnostics-changed path version))
      (error (message "pi-lsp: diagnosticsChanged failed: %s" (error-message-string err))))))

(setf (alist-get 'pi/languageRequest pi-lsp-request-handlers) #'pi-lsp--on-language-request
      (alist-get 'pi/diagnostics pi-lsp-request-handlers) #'pi-lsp--on-diagnostics
      (alist-get '$/cancelRequest pi-lsp-notification-handlers) #'pi-lsp--on-cancel-request)

(provide 'pi-lsp-knowledge)
;;; pi-lsp-knowledge.el ends here
