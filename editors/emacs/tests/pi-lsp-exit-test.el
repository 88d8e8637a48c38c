;;; pi-lsp-exit-test.el --- a terminal Emacs with a running pi-lsp, to be hung up on  -*- lexical-binding: t -*-

;; Run by tests/editors/test_emacs_exit.py as `emacs -nw -Q -l pi-lsp-exit-test.el' inside tmux,
;; in a workspace holding notes.txt.  Starts pi-lsp for the project (as `C-c p' would) and writes
;; the server's pid to $PI_TEST_RESULT.pid; the Python side then closes the terminal or sends
;; SIGTERM and watches both processes end.

(add-to-list 'load-path (getenv "PI_LSP_EMACS_DIR"))
(require 'pi-lsp)

(find-file (expand-file-name "notes.txt"))
(add-hook 'emacs-startup-hook
          (lambda ()
            (let ((conn (pi-lsp-start)))
              (with-temp-file (concat (getenv "PI_TEST_RESULT") ".pid")
                (insert (format "%d" (process-id (jsonrpc--process conn)))))
              (message "pi-lsp started"))))
;;; pi-lsp-exit-test.el ends here
