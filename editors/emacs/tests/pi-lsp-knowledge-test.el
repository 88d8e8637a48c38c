;;; pi-lsp-knowledge-test.el --- issue 17 in real Emacs: eglot's pylsp as pi-lsp's language tools  -*- lexical-binding: t -*-

;; Run by tests/editors/test_emacs.py: timeout 90 emacs --batch -l pi-lsp-knowledge-test.el
;; </dev/null in a git workspace holding lib.py, app.py, extra.py and notes.txt, with
;; PI_TEST_EGLOT_SERVER a real python-lsp-server (pyflakes).  The user's setup: eglot runs that
;; server for app.py; pi-lsp.el runs beside it on its own connection.  The tools are called the
;; way any client calls them, with `pi/executeToolCall' (the session "external"), and the
;; checks read what the model gets (the tool result) and what the user sees (buffers, files).
;; Writes $PI_TEST_RESULT (JSON) and exits 0 when every check passed, 1 otherwise.

(add-to-list 'load-path (getenv "PI_LSP_EMACS_DIR"))
(require 'pi-lsp)
(load (expand-file-name "pi-lsp-test-support.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)
(require 'json)
(require 'package)
(package-initialize)
(require 'eglot)
;; generous limits (a loaded machine): they end early when the server answers
(setq pi-lsp-settings '(:diagnostics (:settleSeconds 15) :languageServer (:timeoutSeconds 40))
      pi-lsp-language-request-timeout 30
      pi-lsp-attach-timeout 30)

(defvar t-times nil "(NAME SECONDS) of each tool call, for the notes.")
(defvar t-results nil "(NAME TEXT) of each tool call, for the notes.")

(defun t-read (file)
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8)) (insert-file-contents file))
    (buffer-string)))

(defvar t-conn nil)
(defvar t-call-id 0)

(defun t-tool (name arguments)
  "Run tool NAME with ARGUMENTS through pi-lsp; return (TEXT . IS-ERROR)."
  (let* ((started (float-time))
         (message (jsonrpc-request t-conn :pi/executeToolCall
                                   (list :toolCall (list :id (format "k%d" (cl-incf t-call-id)) :name name
                                                         :arguments arguments))
                                   :timeout 60))
         (text (mapconcat (lambda (part) (or (plist-get part :text) "")) (plist-get message :content) "")))
    (push (list name (- (float-time) started)) t-times)
    (push (list name text) t-results)
    (cons text (eq (plist-get message :isError) t))))

(defvar t-dated nil "The `versions' of app.py in each pi/diagnosticsChanged sent, newest first (nil: undated).")

(defun t-note-diagnostics-changed (_conn method &optional params)
  "Record app.py's date in a `pi/diagnosticsChanged' PARAMS (advice on `jsonrpc-notify')."
  (when (eq method :pi/diagnosticsChanged)
    (let ((versions (plist-get params :versions)))
      (seq-doseq (uri (plist-get params :uris))
        (when (string-suffix-p "/app.py" uri)
          (push (and versions (gethash uri versions)) t-dated))))))

(defun t-dated-with (version)
  "Whether a `pi/diagnosticsChanged' dated app.py with VERSION."
  (member version t-dated))

(defconst t-lib "def shout(text):\n    return text.upper() + \"!\"\n")
(defconst t-app "from lib import shout\n\n\ndef main():\n    print(shout(\"héllo 👋\"), shout(\"x\"))\n")
(defconst t-extra "from lib import shout\n\nLOUD = shout(\"loud\")\n")

(defun t-conversions ()
  "Positions between pi-lsp's UTF-32 and a UTF-16 server (eglot's default), by eglot's functions."
  (with-temp-buffer
    (insert "a👋 shout(1)\n")
    (let ((eglot-current-column-function #'eglot-lsp-abiding-column)
          (eglot-move-to-column-function #'eglot-move-to-lsp-abiding-column))
      (t-check "a UTF-32 column after an astral character goes to the server as UTF-16"
               (equal (pi-lsp--to-server-position '(:line 0 :character 3) "utf-32") '(:line 0 :character 4))
               (pi-lsp--to-server-position '(:line 0 :character 3) "utf-32"))
      (t-check "and the server's UTF-16 column comes back as UTF-32"
               (equal (pi-lsp--from-server-position '(:line 0 :character 4) "utf-32") '(:line 0 :character 3))
               (pi-lsp--from-server-position '(:line 0 :character 4) "utf-32")))))

(defun t-main ()
  (let* ((dir default-directory)
         (app-file (expand-file-name "app.py" dir))
         (lib-file (expand-file-name "lib.py" dir))
         (extra-file (expand-file-name "extra.py" dir))
         (app (find-file-noselect app-file)))
    (t-conversions)
    ;; the user's setup: eglot runs pylsp for the project's Python buffers.  pylsp counts columns
    ;; in code points, not the UTF-16 units eglot 1.9 assumes, so (as eglot's documentation says
    ;; for such servers) the user tells eglot to count code points: pi-lsp.el follows that too.
    (setq eglot-current-column-function #'eglot-current-column
          eglot-move-to-column-function #'eglot-move-to-column)
    (setq eglot-sync-connect 60 eglot-connect-timeout 60
          eglot-server-programs (list (cons 'python-mode (list (getenv "PI_TEST_EGLOT_SERVER")))
                                      (cons 'js-mode (split-string (getenv "PI_TEST_SILENT_SERVER") "\t"))
                                      (cons 'sh-mode (split-string (getenv "PI_TEST_SILENT_SERVER") "\t"))))
    (add-hook 'sh-mode-hook #'eglot-ensure)     ; no server for shell scripts runs yet
    (with-current-buffer app
      (call-interactively #'eglot)
      (t-check "eglot runs pylsp for app.py" (t-wait 60 #'eglot-current-server))
      ;; flymake checks a buffer once it is shown, which never happens in --batch: start it, so
      ;; app.py's diagnostics come from flymake's overlays as in a window (lib.py's from eglot)
      (flymake-start))
    (with-current-buffer (find-file-noselect (expand-file-name "slow.js" dir))
      (call-interactively #'eglot)
      (t-check "eglot runs the silent server for slow.js" (t-wait 60 #'eglot-current-server)))
    (setq t-conn (with-current-buffer app (pi-lsp-start)))
    (advice-add 'jsonrpc-notify :before #'t-note-diagnostics-changed)
    (let ((pi (plist-get (plist-get (pi-lsp--client-capabilities) :experimental) :pi)))
      (t-check "pi-lsp.el advertises diagnostics and the language requests"
               (and (eq (plist-get pi :diagnostics) t) (= (length (plist-get pi :languageRequests)) 5)) pi))
    (let* ((conversion (pi-lsp--make-conversion :conn t-conn :encoding "utf-32" :origin app))
           (range '(:start (:line 4 :character 28) :end (:line 4 :character 33)))
           (edit (pi-lsp--convert-workspace-edit
                  conversion
                  (list :changes (list (intern (concat ":" (eglot--path-to-uri app-file)))
                                       (vector (list :range range :newText "yell")))))))
      (t-check "a WorkspaceEdit's `changes' come back under pi-lsp's URI, columns as the user's eglot counts them"
               (equal edit (list :changes (list (intern (concat ":" (pi-lsp-path-to-uri app-file)))
                                                (vector (list :range range :newText "yell")))))
               edit))
    (let* ((tools (plist-get (jsonrpc-request t-conn :pi/listTools (make-hash-table)) :tools))
           (active (lambda (name) (eq (plist-get (seq-find (lambda (tool) (equal (plist-get tool :name) name)) tools) :active) t))))
      (t-check "pi/listTools: the language tools are active for Emacs"
               (cl-every active '("diagnostics" "definition" "references" "rename" "symbols" "hover"))
               (mapcar (lambda (tool) (list (plist-get tool :name) (plist-get tool :active) (plist-get tool :unavailable))) tools)))
    ;; definition and references across two files (lib.py is not visited)
    (let ((r (t-tool "definition" '(:path "app.py" :line 5 :symbol "shout" :occurrence 2))))
      (t-check "definition: lib.py line 1" (and (not (cdr r)) (string-search "lib.py:1:" (car r))
                                                (string-search "def shout(text):" (car r)))
               r))
    (let ((r (t-tool "references" '(:path "lib.py" :line 1 :symbol "shout"))))
      (t-check "references: both files, the line after the emoji included"
               (and (not (cdr r)) (string-search "lib.py:1:" (car r)) (string-search "app.py:1:" (car r))
                    (string-search "app.py:5:" (car r)))
               r))
    (t-check "lib.py was loaded hidden, not modified, and eglot manages it"
             (let ((lib (find-buffer-visiting lib-file)))
               (and lib (not (get-buffer-window lib)) (not (buffer-modified-p lib)) (pi-lsp--eglot-server lib)))
             (find-buffer-visiting lib-file))
    ;; a symbol that is not on the line; a file without a language server
    (let ((r (t-tool "definition" '(:path "app.py" :line 2 :symbol "shout"))))
      (t-check "a symbol not on the line is an error naming the line" (and (cdr r) (string-search "line 2" (car r))) r))
    (let ((r (t-tool "definition" '(:path "notes.txt" :line 1 :symbol "notes"))))
      (t-check "a file with no language server is an error saying so"
               (and (cdr r) (string-match-p "language server" (car r))) r))
    (let ((r (let ((pi-lsp-language-request-timeout 1)) (t-tool "definition" '(:path "slow.js" :line 1 :symbol "x")))))
      (t-check "a server that never answers: an error naming it, after `pi-lsp-language-request-timeout'"
               (and (cdr r) (string-search "silent-server" (car r)) (string-search "no answer" (car r))) r))
    (let ((r (let ((pi-lsp-language-request-timeout 1)) (t-tool "definition" '(:path "run.sh" :line 1 :symbol "x")))))
      (t-check "a file no buffer visits whose mode runs eglot-ensure: loaded hidden, its server started and asked"
               (and (cdr r) (string-search "silent-server" (car r))
                    (let ((run (find-buffer-visiting (expand-file-name "run.sh" dir))))
                      (and run (not (get-buffer-window run)) (pi-lsp--eglot-server run))))
               r))
    ;; an edit that introduces an undefined name gets the error in its result; the fix does not
    (let ((r (t-tool "edit" '(:path "app.py" :edits [(:oldText "shout(\"x\")" :newText "shout(missing_name)")]))))
      (t-check "the edit's result names the new error"
               (and (not (cdr r)) (string-search "app.py:5" (car r)) (string-search "undefined name 'missing_name'" (car r)))
               r))
    (t-check "flymake shows the error in app.py's buffer"
             (with-current-buffer app
               (cl-some (lambda (d) (string-search "missing_name" (flymake-diagnostic-text d))) (flymake-diagnostics)))
             (with-current-buffer app (flymake-diagnostics)))
    (let ((r (t-tool "diagnostics" '(:path "app.py"))))
      (t-check "diagnostics lists it with its source"
               (and (string-search "undefined name 'missing_name'" (car r)) (string-search "pyflakes" (car r))) r))
    (let ((r (t-tool "diagnostics" (make-hash-table))))
      (t-check "diagnostics of the workspace list it too"
               (string-search "app.py:5: error: undefined name 'missing_name'" (car r)) r))
    (let ((r (t-tool "symbols" '(:path "app.py"))))
      (t-check "symbols: main on line 4" (and (not (cdr r)) (string-match-p "main.*4\\|4.*main" (car r))) r))
    (let ((r (t-tool "hover" '(:path "lib.py" :line 1 :symbol "shout"))))
      (t-check "hover: the signature" (and (not (cdr r)) (string-search "shout(text)" (car r))) r))
    (let ((r (t-tool "edit" '(:path "app.py" :edits [(:oldText "shout(missing_name)" :newText "shout(\"x\")")]))))
      (t-check "the fixing edit's result lists no problem"
               (and (not (cdr r)) (not (string-search "missing_name'" (car r)))) r))
    (t-check "app.py is back as it was and saved" (equal (t-read app-file) t-app) (t-read app-file))
    ;; pi/diagnosticsChanged dates changes in pi-lsp's numbering (not eglot's): pylsp's report of
    ;; the current text with app.py's version; a report about the text before the last change
    ;; (a stale publish arriving late) one less, so pi-lsp's wait after an edit does not count it
    (let ((now (with-current-buffer app pi-lsp--version))
          (eglot-now (with-current-buffer app eglot--versioned-identifier)))
      (t-check "pylsp's report of the current text is dated with pi-lsp's version of app.py"
               (t-wait 10 (lambda () (t-dated-with now))) (list :now now :dated t-dated))
      (setq t-dated nil)
      (eglot-handle-notification (with-current-buffer app (eglot-current-server)) 'textDocument/publishDiagnostics
                                 :uri (eglot--path-to-uri app-file) :version (1- eglot-now) :diagnostics [])
      (t-check "a stale publish is dated before pi-lsp's version of app.py"
               (t-wait 10 (lambda () (t-dated-with (1- now)))) (list :now now :eglot eglot-now :dated t-dated))
      (setq t-dated nil)
      (eglot-handle-notification (with-current-buffer app (eglot-current-server)) 'textDocument/publishDiagnostics
                                 :uri (eglot--path-to-uri app-file) :diagnostics [])
      (t-check "an unversioned publish is dated with pi-lsp's version of app.py"
               (t-wait 10 (lambda () (t-dated-with now))) (list :now now :dated t-dated)))
    ;; rename across three files: one undo step per buffer, saved
    (let ((r (t-tool "rename" '(:path "lib.py" :line 1 :symbol "shout" :newName "yell"))))
      (t-check "rename: its result names the three files"
               (and (not (cdr r)) (string-search "lib.py" (car r)) (string-search "app.py" (car r))
                    (string-search "extra.py" (car r)))
               r))
    (dolist (case (list (list app-file t-app) (list lib-file t-lib) (list extra-file t-extra)))
      (let* ((file (car case))
             (before (cadr case))
             (after (replace-regexp-in-string "shout" "yell" before t t))
             (buffer (find-buffer-visiting file)))
        (t-check (format "%s renamed on disk" (file-name-nondirectory file)) (equal (t-read file) after) (t-read file))
        (t-check (format "%s renamed in its buffer, unmodified" (file-name-nondirectory file))
                 (and buffer (with-current-buffer buffer (and (equal (buffer-string) after) (not (buffer-modified-p))))))
        (when (and buffer (with-current-buffer buffer (equal (buffer-string) after)))
          (with-current-buffer buffer
            (setq last-command nil)
            (undo)
            (t-check (format "one undo in %s takes the whole rename back" (file-name-nondirectory file))
                     (equal (buffer-string) before) (buffer-string))))))
    (pi-lsp-stop t-conn)))

(t-run #'t-main (lambda () (list :times (vconcat (mapcar #'vconcat (reverse t-times)))
                                          :results (vconcat (mapcar #'vconcat (reverse t-results))))))
