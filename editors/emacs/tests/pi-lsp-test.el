;;; pi-lsp-test.el --- headless round trip of pi-lsp.el's own connection  -*- lexical-binding: t -*-

;; Run by tests/editors/test_emacs.py: timeout 90 emacs --batch -l pi-lsp-test.el </dev/null
;; in a workspace (a git project) holding greet.py, CHANGELOG.md and closed.txt, against
;; `pi-lsp replay' serving tests/editors/sessions/emacs_edits.jsonl.  Writes $PI_TEST_RESULT
;; (JSON) and exits 0 when every check passed, 1 otherwise.
;;
;; With PI_TEST_EGLOT_SERVER set (a language server command, e.g. pylsp), eglot runs it for
;; greet.py first, and the test checks that eglot keeps it after pi-lsp's run.

(add-to-list 'load-path (getenv "PI_LSP_EMACS_DIR"))
(require 'pi-lsp)                                  ; the README's setup
(load (expand-file-name "pi-lsp-test-support.el" (file-name-directory (or load-file-name buffer-file-name))) nil t)
(setq pi-lsp-settings `(:baseUrl ,(getenv "PI_TEST_URL") :model "replay" :maxRetries 0
                        :edit (:verifyTimeoutSeconds 5 :applyTimeoutSeconds 10)
                        :approvals (:rules [(:tool "bash" :command "^echo tick" :action "allow")
                                             (:tool "bash" :command "^echo v2 > data.txt$" :action "allow")])))

(require 'json)


(defun t-read (file)
  (when (file-exists-p file)
    (with-temp-buffer
      (let ((coding-system-for-read 'utf-8)) (insert-file-contents file))
      (buffer-string))))

(defun t-transcript ()
  (with-current-buffer (pi-lsp-transcript) (buffer-substring-no-properties (point-min) (point-max))))

(defun t-transcript-has (text)
  (string-search text (t-transcript)))

(defvar t-tails nil "Transcript texts seen while the bash call was running, at each output update.")
(advice-add 'pi-lsp-transcript-call-output :after
            (lambda (&rest _) (push (t-transcript) t-tails)))

(defconst t-greet-0 "def greet():\n    return \"hi\"\n\n\ndef bye():\n    return \"bye\"\n")
(defconst t-greet-1 "def greet():\n    return \"héllo 👋\"\n\n\ndef bye():\n    return \"bye\"\n")
(defconst t-greet-2 "def greet():\n    return \"héllo 👋\"\n\n\ndef bye():\n    return \"ciao\"\n")
(defconst t-changelog-disk "# Changelog\n\n## 0.1.0\n- first release\n")
(defconst t-changelog-user "# Changelog\n\n## Unreleased\n- my unsaved note\n\n## 0.1.0\n- first release\n")
(defconst t-changelog-both "# Changelog\n\n## Unreleased\n- my unsaved note\n\n## 0.1.0\n- first release\n- greet says héllo 👋\n")

(defun t-eglot-start (buffer)
  "Start eglot with $PI_TEST_EGLOT_SERVER for BUFFER; return the server or nil."
  (when-let ((program (getenv "PI_TEST_EGLOT_SERVER")))
    (require 'package)
    (package-initialize)
    (require 'eglot)
    (setq eglot-sync-connect 60 eglot-connect-timeout 60)
    (setq eglot-server-programs (list (cons 'python-mode (list program))))
    (with-current-buffer buffer
      (call-interactively #'eglot)
      (t-wait 60 (lambda () (eglot-current-server))))))

(defun t-main ()
  (let* ((dir default-directory)
         (greet-file (expand-file-name "greet.py" dir))
         (changelog-file (expand-file-name "CHANGELOG.md" dir))
         (closed-file (expand-file-name "closed.txt" dir))
         (data-file (expand-file-name "data.txt" dir))
         (data (find-file-noselect data-file))
         (greet (find-file-noselect greet-file))
         (changelog (find-file-noselect changelog-file))
         (eglot-server (t-eglot-start greet)))
    (with-current-buffer changelog
      (text-mode)                                    ; any mode that is not a programming language's
      (goto-char (point-min))
      (forward-line 2)
      (insert "## Unreleased\n- my unsaved note\n\n"))
    (t-check "the user's text is unsaved" (buffer-modified-p changelog))
    (with-current-buffer greet
      (t-check "greet.py is in python-mode" (eq major-mode 'python-mode) major-mode)
      (pi-lsp-prompt "fix greet and note it in the changelog"))
    (t-check "pi-lsp runs for the project" (pi-lsp-connection-for-file greet-file))
    (t-check "the run ended" (t-wait 60 (lambda () (not (pi-lsp-running-p)))))
    (t-check "stopReason stop" (equal (plist-get pi-lsp-last-reply :stopReason) "stop") pi-lsp-last-reply)
    ;; the unsaved buffer in text-mode: the agent's line next to the user's, nothing saved
    (with-current-buffer changelog
      (t-check "CHANGELOG.md buffer holds the user's text and the agent's edit"
               (equal (buffer-string) t-changelog-both) (buffer-string))
      (t-check "CHANGELOG.md stays modified" (buffer-modified-p))
      (t-check "CHANGELOG.md on disk untouched by the agent" (equal (t-read changelog-file) t-changelog-disk)
               (t-read changelog-file))
      (let ((inhibit-message t)) (save-buffer))
      (t-check "saving keeps both" (equal (t-read changelog-file) t-changelog-both) (t-read changelog-file)))
    ;; the Python buffer: edited, saved by the agent, one undo per edit
    (with-current-buffer greet
      (t-check "greet.py buffer edited" (equal (buffer-string) t-greet-2) (buffer-string))
      (t-check "greet.py saved through pi/saveDocuments" (equal (t-read greet-file) t-greet-2) (t-read greet-file))
      (t-check "greet.py not modified after the save" (not (buffer-modified-p)))
      (t-check "no backup file" (not (file-exists-p (concat greet-file "~"))))
      (setq last-command nil)
      (undo)
      (t-check "one undo reverts the second agent edit only" (equal (buffer-string) t-greet-1) (buffer-string))
      (setq last-command 'undo)
      (undo-more 1)
      (t-check "undo again reverts the first edit" (equal (buffer-string) t-greet-0) (buffer-string)))
    ;; the file no buffer visited: visited, edited, saved
    (let ((closed (find-buffer-visiting closed-file)))
      (t-check "closed.txt was visited for the edit" closed)
      (t-check "closed.txt saved" (equal (t-read closed-file) "first\nSECOND\n") (t-read closed-file))
      (t-check "closed.txt buffer not modified" (and closed (not (buffer-modified-p closed)))))
    ;; a clean buffer whose file bash rewrote: reloaded (pi/reloadDocuments), then edited and saved
    (with-current-buffer data
      (t-check "data.txt reloaded and edited in its buffer" (equal (buffer-string) "v3\n") (buffer-string))
      (t-check "data.txt saved" (equal (t-read data-file) "v3\n") (t-read data-file))
      (t-check "data.txt buffer not modified" (not (buffer-modified-p)))
      (t-check "pi-lsp asked Emacs to reload it"
               (with-current-buffer (jsonrpc-events-buffer (pi-lsp-connection-for-file data-file))
                 (save-excursion (goto-char (point-min)) (search-forward ":method \"pi/reloadDocuments\"" nil t)))))
    ;; the transcript as the user reads it
    (dolist (text '("> fix greet and note it in the changelog"
                    "Reading the changelog."
                    "▸ read CHANGELOG.md ✓"
                    "## Plan\nFix **greet** and note it."
                    "▾ edit greet.py ✓\n"
                    "-    return \"hi\"\n"
                    "+    return \"héllo 👋\"\n"
                    "▾ edit CHANGELOG.md ✓\n"
                    "+- greet says héllo 👋\n"
                    "▾ edit closed.txt ✓"
                    "    arguments:\n      path: CHANGELOG.md\n      edits[1]:\n        oldText: - first release\n        newText: |\n          - first release\n          - greet says héllo 👋\n"
                    "▸ bash echo tick-1; sleep 0.6; echo tick-2; sleep 0.6; echo tick-3 ✓\n"
                    "**Done**: greet says `héllo 👋`."
                    "■ done (stop)"))
      (t-check (format "transcript shows %S" text) (t-transcript-has text) (t-transcript)))
    (t-check "transcript: the bash output streamed under its line while it ran"
             (cl-some (lambda (s) (string-match-p "▸ bash echo tick-1.* …\n    │ tick-1\n" s)) t-tails)
             t-tails)
    (t-check "transcript: collapsed calls hide their result" (not (t-transcript-has "tick-3\n")) (t-transcript))
    (with-current-buffer (pi-lsp-transcript)
      (goto-char (point-min))
      (search-forward "▸ bash")
      (pi-lsp-transcript-toggle)
      (t-check "TAB expands the bash line to its arguments and result"
               (t-transcript-has "▾ bash echo tick-1; sleep 0.6; echo tick-2; sleep 0.6; echo tick-3 ✓\n    arguments:\n      $ echo tick-1; sleep 0.6; echo tick-2; sleep 0.6; echo tick-3\n    result:\n      tick-1\n      tick-2\n      tick-3\n")
               (t-transcript))
      (pi-lsp-transcript-toggle)
      (t-check "TAB again collapses it" (not (t-transcript-has "tick-3\n")) (t-transcript))
      (t-check "the transcript is read-only" buffer-read-only))
    (when eglot-server
      (with-current-buffer greet
        (t-check "eglot still runs the user's language server for greet.py"
                 (and (eq (eglot-current-server) eglot-server) (jsonrpc-running-p eglot-server))
                 (eglot-current-server))))
    (unless eglot-server
      (t-check "pi-lsp.el did not load eglot" (not (featurep 'eglot))))
    (pi-lsp-stop (pi-lsp-connection-for-file greet-file))
    (t-check "shutdown ends the server" (null pi-lsp--connections) pi-lsp--connections)))

(t-run #'t-main (lambda () (list :transcript (t-transcript))))
