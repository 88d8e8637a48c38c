;;; pi-lsp-documents.el --- Every file buffer of the project, synchronised with pi-lsp  -*- lexical-binding: t -*-

;;; Commentary:

;; Whatever its major mode, every buffer visiting a file under a connection's project root is a
;; document of that connection: `textDocument/didOpen' when it is visited (or when the
;; connection starts), `didChange' for every change, `didSave', `didClose' when it is killed, and
;; `pi/documentState' with Emacs's own modified flag after each of them (so a CRLF file that
;; Emacs shows with LF endings is not taken for a dirty buffer).
;;
;; Versions: 0 at didOpen, +1 for each didChange message.  Changes are incremental: the range
;; is taken in `before-change-functions' (old coordinates) and the new text in
;; `after-change-functions'; when the two calls do not pair up, or the buffer holds a carriage
;; return (LSP counts a lone CR as a line break, Emacs does not), the whole text is sent instead.
;; Changes are collected and sent `pi-lsp-change-delay' seconds later in one didChange, or at
;; once by `pi-lsp-flush-changes' (before a request to the server and after an agent edit).
;;
;; Positions: lines are 0-based; characters are code points when the server agreed to
;; positionEncoding "utf-32" (pi-lsp does), UTF-16 code units otherwise (an astral character
;; counts 2).  Emacs's characters are code points, so UTF-32 columns are buffer columns in chars.
;; The hooks are global and do nothing in buffers that are no document, so they survive a change
;; of major mode (which kills buffer-local hooks).

;;; Code:

(require 'cl-lib)
(require 'pi-lsp-connection)

(defcustom pi-lsp-change-delay 0.05
  "Seconds between a change in a buffer and its `didChange' (changes in between are sent together)."
  :type 'number
  :group 'pi-lsp)

(defvar-local pi-lsp--connection nil "The connection this buffer is a document of, or nil.")
(defvar-local pi-lsp--uri nil "The URI the document was opened with.")
(defvar-local pi-lsp--version 0 "The version of the last didOpen/didChange sent.")
(defvar-local pi-lsp--changes nil "Pending contentChanges, newest first.")
(defvar-local pi-lsp--full-sync nil "Non-nil when the next didChange must send the whole text.")
(defvar-local pi-lsp--before nil "(BEG END START-POSITION END-POSITION) from `before-change-functions'.")
(defvar-local pi-lsp--has-cr nil "Non-nil when the buffer holds a carriage return.")
(defvar-local pi-lsp--encoding "utf-32" "The document's position encoding: \"utf-32\" or \"utf-16\".")
(dolist (var '(pi-lsp--connection pi-lsp--uri pi-lsp--version pi-lsp--changes pi-lsp--full-sync
               pi-lsp--before pi-lsp--has-cr pi-lsp--encoding))
  (put var 'permanent-local t))

(defvar pi-lsp--dirty-buffers nil "Document buffers with pending changes.")
(defvar pi-lsp--flush-timer nil "The timer that sends pending changes.")

;;; Positions

(defun pi-lsp--utf16-extra (start end)
  "How many characters between START and END lie outside the BMP (2 UTF-16 units each)."
  (let ((count 0))
    (save-excursion
      (goto-char start)
      (while (re-search-forward "[\U00010000-\U0010FFFF]" end t)
        (setq count (1+ count))))
    count))

(defun pi-lsp-position (point)
  "The LSP position (:line :character) of POINT in the current document buffer.
Only for buffers without carriage returns (see the Commentary).  The column unit is
`pi-lsp--encoding'."
  (save-restriction
    (widen)
    (save-excursion
      (goto-char point)
      (let* ((bol (line-beginning-position))
             (column (- point bol)))
        (when (equal pi-lsp--encoding "utf-16")
          (setq column (+ column (pi-lsp--utf16-extra bol point))))
        (list :line (1- (line-number-at-pos point t)) :character column)))))

(defun pi-lsp--next-line-break ()
  "Move past the next LSP line break (\\r\\n, \\r or \\n); nil when there is none."
  (when (re-search-forward "\r\n\\|[\r\n]" nil t) t))

(defun pi-lsp-point (position)
  "The buffer point of the LSP POSITION (:line :character) in the current document buffer.
Clamped as LSP 3.17 says: a character past the line's end is the line's end, a line past the
last line is the end of the text; a column inside a surrogate pair rounds down."
  (save-restriction
    (widen)
    (save-excursion
      (goto-char (point-min))
      (let ((line (plist-get position :line))
            (units (plist-get position :character))
            (utf16 (equal pi-lsp--encoding "utf-16"))
            (past-end nil))
        (if pi-lsp--has-cr
            (dotimes (_ line) (unless past-end (setq past-end (not (pi-lsp--next-line-break)))))
          ;; forward-line counts a last line without newline as moved over: then point is not at bol
          (setq past-end (or (> (forward-line line) 0) (not (bolp)))))
        (if past-end
            (point-max)
          (let ((eol (save-excursion (if (re-search-forward "[\r\n]" nil t) (match-beginning 0) (point-max)))))
            (while (and (< (point) eol) (> units 0))
              (let ((width (if (and utf16 (> (char-after) #xFFFF)) 2 1)))
                (if (> width units) (setq units 0)
                  (setq units (- units width))
                  (forward-char 1))))
            (point)))))))

;;; Sending

(defun pi-lsp--language-id ()
  "A languageId from the major mode (`python-mode' -> \"python\")."
  (let ((name (symbol-name major-mode)))
    (replace-regexp-in-string "\\(-ts\\)?-mode\\'" "" name)))

(defun pi-lsp--buffer-text ()
  "The whole buffer text, without properties, ignoring narrowing."
  (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max))))

(defun pi-lsp--send-state ()
  "Send `pi/documentState' with the buffer's modified flag for the current version."
  (jsonrpc-notify pi-lsp--connection :pi/documentState
                  (list :uri pi-lsp--uri :version pi-lsp--version
                        :dirty (if (buffer-modified-p) t :json-false))))

(defun pi-lsp--scan-cr ()
  "Set `pi-lsp--has-cr' from the buffer text."
  (setq pi-lsp--has-cr (save-restriction (widen) (save-excursion (goto-char (point-min))
                                                                  (and (search-forward "\r" nil t) t)))))

(defun pi-lsp-document-open (conn)
  "Make the current buffer a document of CONN and send didOpen (version 0)."
  (setq pi-lsp--connection conn
        pi-lsp--encoding (pi-lsp-encoding conn)
        pi-lsp--uri (pi-lsp-path-to-uri buffer-file-name)
        pi-lsp--version 0
        pi-lsp--changes nil
        pi-lsp--full-sync nil
        pi-lsp--before nil)
  (pi-lsp--scan-cr)
  (jsonrpc-notify conn :textDocument/didOpen
                  (list :textDocument (list :uri pi-lsp--uri :languageId (pi-lsp--language-id)
                                            :version 0 :text (pi-lsp--buffer-text))))
  (pi-lsp--send-state))

(defun pi-lsp-document-close ()
  "Send didClose for the current buffer and make it no document."
  (when pi-lsp--connection
    (let ((conn pi-lsp--connection))
      (setq pi-lsp--connection nil pi-lsp--changes nil pi-lsp--full-sync nil)
      (setq pi-lsp--dirty-buffers (delq (current-buffer) pi-lsp--dirty-buffers))
      (when (jsonrpc-running-p conn)
        (jsonrpc-notify conn :textDocument/didClose (list :textDocument (list :uri pi-lsp--uri)))))))

(defun pi-lsp-flush-changes (&optional buffer)
  "Send the pending changes of BUFFER (default: every document buffer) now."
  (dolist (buf (if buffer (list buffer) (copy-sequence pi-lsp--dirty-buffers)))
    (when (buffer-live-p buf)
      (with-current-buffer buf
        (setq pi-lsp--dirty-buffers (delq buf pi-lsp--dirty-buffers))
        (when (and pi-lsp--connection (or pi-lsp--changes pi-lsp--full-sync)
                   (jsonrpc-running-p pi-lsp--connection))
          (let ((changes (if (or pi-lsp--full-sync pi-lsp--has-cr)
                             (vector (list :text (pi-lsp--buffer-text)))
                           (vconcat (reverse pi-lsp--changes)))))
            (setq pi-lsp--changes nil pi-lsp--full-sync nil)
            (cl-incf pi-lsp--version)
            (condition-case err
                (progn
                  (jsonrpc-notify pi-lsp--connection :textDocument/didChange
                                  (list :textDocument (list :uri pi-lsp--uri :version pi-lsp--version)
                                        :contentChanges changes))
                  (pi-lsp--send-state))
              ;; text that cannot be sent (raw bytes): pi-lsp must not edit a view it lost
              (error (message "pi-lsp: %s is no longer synced: %s" (buffer-name) (error-message-string err))
                     (pi-lsp-document-close)))))))))

(defun pi-lsp--schedule-flush ()
  "Note the current buffer has pending changes; send them after `pi-lsp-change-delay'."
  (cl-pushnew (current-buffer) pi-lsp--dirty-buffers)
  (unless (timerp pi-lsp--flush-timer)
    (setq pi-lsp--flush-timer
          (run-at-time pi-lsp-change-delay nil
                       (lambda () (setq pi-lsp--flush-timer nil) (pi-lsp-flush-changes))))))

;;; Hooks (global; see the Commentary)

(defun pi-lsp--before-change (beg end)
  "Record the old range BEG..END of a change in LSP coordinates.
Never signals: Emacs empties `before-change-functions' when one of them does."
  (when pi-lsp--connection
    (setq pi-lsp--before
          (condition-case nil
              (and (not pi-lsp--has-cr) (not pi-lsp--full-sync)
                   (list beg end (pi-lsp-position beg) (pi-lsp-position end)))
            (error nil)))))

(defun pi-lsp--after-change (beg end old-length)
  "Queue the change BEG..END (replacing OLD-LENGTH characters) for didChange.
Never signals (see `pi-lsp--before-change'); when in doubt, the whole text goes."
  (when pi-lsp--connection
    (condition-case nil
        (let ((before pi-lsp--before)
              (text (buffer-substring-no-properties beg end)))
          (setq pi-lsp--before nil)
          (when (string-match-p "\r" text) (setq pi-lsp--has-cr t))
          (if (and before (not pi-lsp--has-cr) (= beg (nth 0 before)) (= (+ beg old-length) (nth 1 before)))
              (push (list :range (list :start (nth 2 before) :end (nth 3 before)) :text text) pi-lsp--changes)
            (setq pi-lsp--full-sync t pi-lsp--changes nil))
          (pi-lsp--schedule-flush))
      (error (setq pi-lsp--full-sync t pi-lsp--changes nil)))))

(defun pi-lsp--after-save ()
  "didSave (and didOpen under the new name when the buffer now visits another file)."
  (when pi-lsp--connection
    (let ((conn pi-lsp--connection))
      (pi-lsp-flush-changes (current-buffer))
      (if (equal pi-lsp--uri (pi-lsp-path-to-uri buffer-file-name))
          (when (jsonrpc-running-p conn)
            (jsonrpc-notify conn :textDocument/didSave (list :textDocument (list :uri pi-lsp--uri)))
            (pi-lsp--send-state))
        (pi-lsp-document-close)
        (pi-lsp-maybe-open-document))))
  (unless pi-lsp--connection (pi-lsp-maybe-open-document)))

(defun pi-lsp--kill-buffer ()
  "didClose for a document buffer being killed."
  (pi-lsp-document-close))

(defun pi-lsp-maybe-open-document ()
  "Open the current buffer as a document when it visits a file of a connection's project.
Unibyte (literal, binary) buffers are left out.  A buffer whose text cannot be sent (raw bytes
that are no UTF-8) is left out with a message: pi-lsp then treats its file as closed."
  (when (and buffer-file-name (not pi-lsp--connection) enable-multibyte-characters)
    (when-let ((conn (pi-lsp-connection-for-file buffer-file-name)))
      (condition-case err
          (pi-lsp-document-open conn)
        (error (setq pi-lsp--connection nil)
               (message "pi-lsp: %s is not synced: %s" (buffer-name) (error-message-string err)))))))

(defun pi-lsp--open-project-buffers (conn)
  "Open every live buffer visiting a file under CONN's root as a document (after connecting)."
  (dolist (buffer (buffer-list))
    (with-current-buffer buffer
      (when (and buffer-file-name (not pi-lsp--connection)
                 (eq (pi-lsp-connection-for-file buffer-file-name) conn))
        (pi-lsp-maybe-open-document)))))

(defun pi-lsp--forget-connection (conn)
  "CONN ended: its buffers are no longer documents."
  (dolist (buffer (buffer-list))
    (with-current-buffer buffer
      (when (eq pi-lsp--connection conn)
        (setq pi-lsp--connection nil pi-lsp--changes nil pi-lsp--full-sync nil)))))

(defun pi-lsp-document-buffer (uri)
  "The live buffer visiting the file of URI, or nil."
  (when-let ((path (pi-lsp-uri-to-path uri)))
    (find-buffer-visiting path)))

(add-hook 'before-change-functions #'pi-lsp--before-change)
(add-hook 'after-change-functions #'pi-lsp--after-change)
(add-hook 'find-file-hook #'pi-lsp-maybe-open-document)
(add-hook 'after-save-hook #'pi-lsp--after-save)
(add-hook 'kill-buffer-hook #'pi-lsp--kill-buffer)
(add-hook 'pi-lsp-connection-hook #'pi-lsp--open-project-buffers)
(add-hook 'pi-lsp-disconnect-hook #'pi-lsp--forget-connection)

(provide 'pi-lsp-documents)
;;; pi-lsp-documents.el ends here
