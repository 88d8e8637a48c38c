;;; pi-lsp-edits.el --- Agent edits land in buffers; saves and reloads the agent asks for  -*- lexical-binding: t -*-

;;; Commentary:

;; `workspace/applyEdit': every TextDocumentEdit (or `changes' entry) goes into the buffer
;; visiting its file, whatever the buffer's mode and modified state: only the edit's ranges
;; change, so a user's unsaved text around them stays as it was, and the buffer is not saved
;; here.  A file no buffer visits is visited first (the agent then asks for `pi/saveDocuments').
;; All documents are checked before anything changes (version, read-only), so an edit applies
;; whole or not at all.  Each edit is one undo step in each buffer it touches, and its didChange
;; is sent before the reply, so pi-lsp can verify the buffer at once.
;;
;; `pi/saveDocuments {documents: [{uri, version}]}': saves a buffer only if its version still
;; matches (null: any), without `before-save-hook' and `write-contents-functions' (formatters),
;; without adding a final newline, keeping the coding system (EOL, BOM), without a backup file,
;; and never over a file that changed on disk since Emacs read it.
;; `pi/reloadDocuments {uris}': reverts buffers without unsaved changes, never a modified one.

;;; Code:

(require 'cl-lib)
(require 'pi-lsp-connection)
(require 'pi-lsp-documents)

(defvar pi-lsp-edit-functions nil
  "Abnormal hook run after an agent edit was applied, with the label and the list of buffers.")

(defun pi-lsp--uri-key (key)
  "A `changes' map KEY (a keyword such as :file:///a.txt) as a URI string."
  (if (keywordp key) (substring (symbol-name key) 1) (format "%s" key)))

(defun pi-lsp--edit-entries (edit)
  "The WorkspaceEdit EDIT as a list of (URI VERSION-OR-NIL TEXT-EDITS).
Signals an error string for resource operations (create, rename, delete; not advertised)."
  (let (entries)
    (if-let ((document-changes (plist-get edit :documentChanges)))
        (seq-doseq (change document-changes)
          (when (plist-get change :kind)
            (throw 'pi-lsp--edit-failed (format "resource operation %s is not supported" (plist-get change :kind))))
          (let ((doc (plist-get change :textDocument)))
            (push (list (plist-get doc :uri) (plist-get doc :version) (plist-get change :edits))
                  entries)))
      (cl-loop for (key edits) on (plist-get edit :changes) by #'cddr
               do (push (list (pi-lsp--uri-key key) nil edits) entries)))
    (nreverse entries)))

(defun pi-lsp--visit-for-edit (uri)
  "The buffer of URI, visiting its file (quietly) when no buffer does; throws a reason when impossible."
  (let ((path (or (pi-lsp-uri-to-path uri)
                  (throw 'pi-lsp--edit-failed (format "%s is not a local file" uri)))))
    (or (find-buffer-visiting path)
        (if (not (file-exists-p path))
            (throw 'pi-lsp--edit-failed (format "%s does not exist" path))
          (let ((large-file-warning-threshold nil)
                (enable-local-variables :safe))
            (find-file-noselect path))))))

(defun pi-lsp--check-document (buffer version uri)
  "Throw a failure reason unless BUFFER can take an edit made against VERSION."
  (with-current-buffer buffer
    (pi-lsp-flush-changes buffer)
    (cond (buffer-read-only
           (throw 'pi-lsp--edit-failed (format "the buffer of %s is read-only" uri)))
          ((and pi-lsp--connection (integerp version) (/= version pi-lsp--version))
           (throw 'pi-lsp--edit-failed
                  (format "the buffer of %s changed (version %d, the edit was made for %d)"
                          uri pi-lsp--version version))))))

(defun pi-lsp--apply-text-edits (edits)
  "Apply the LSP TEXT EDITS (all in the buffer's current coordinates) to the current buffer."
  (let ((markers (mapcar (lambda (edit)
                           (let* ((range (plist-get edit :range))
                                  (start (pi-lsp-point (plist-get range :start)))
                                  (end (pi-lsp-point (plist-get range :end))))
                             (list (copy-marker start) (copy-marker end t) (plist-get edit :newText))))
                         edits)))
    ;; last range first, so earlier ranges keep their places; equal starts keep source order
    (setq markers (cl-stable-sort (nreverse markers) #'> :key (lambda (m) (marker-position (car m)))))
    (save-restriction
      (widen)
      (save-excursion
        (dolist (m markers)
          (goto-char (nth 0 m))
          (delete-region (nth 0 m) (nth 1 m))
          (insert (or (nth 2 m) ""))
          (set-marker (nth 0 m) nil)
          (set-marker (nth 1 m) nil))))))

(defun pi-lsp--on-apply-edit (_conn params)
  "`workspace/applyEdit': {applied, failureReason?} (see the Commentary)."
  (let* ((label (plist-get params :label))
         (failure
          (catch 'pi-lsp--edit-failed
            (let ((plan (mapcar (lambda (entry)
                                  (pcase-let ((`(,uri ,version ,edits) entry))
                                    (let ((buffer (pi-lsp--visit-for-edit uri)))
                                      (pi-lsp--check-document buffer version uri)
                                      (list buffer edits))))
                                (pi-lsp--edit-entries (plist-get params :edit)))))
              (dolist (step plan)
                (with-current-buffer (car step)
                  (undo-boundary)
                  (pi-lsp--apply-text-edits (append (cadr step) nil))
                  (undo-boundary)))
              (dolist (step plan) (pi-lsp-flush-changes (car step)))
              (run-hook-with-args 'pi-lsp-edit-functions label (mapcar #'car plan))
              nil))))
    (if failure
        (list :applied :json-false :failureReason failure)
      (list :applied t))))

;;; Saves and reloads

(defun pi-lsp--save-buffer-for-agent ()
  "Save the current buffer as the agent asks (see the Commentary); signals on failure."
  (let ((before-save-hook nil)
        (write-contents-functions nil)
        (require-final-newline nil)
        (make-backup-files nil)
        (after-save-hook (list #'pi-lsp--after-save)))
    (save-buffer)))

(defun pi-lsp--save-reason (buffer version)
  "Save BUFFER if it is at VERSION (null: any); nil when saved, else why not."
  (with-current-buffer buffer
    (pi-lsp-flush-changes buffer)
    (cond ((and (integerp version) pi-lsp--connection (/= version pi-lsp--version))
           (format "the buffer changed since the edit (version %d, not %d)" pi-lsp--version version))
          (buffer-read-only "the buffer is read-only")
          ((not (verify-visited-file-modtime buffer))
           "the file changed on disk since Emacs read it")
          (t (condition-case err (progn (pi-lsp--save-buffer-for-agent) nil)
               (error (format "the save failed: %s" (error-message-string err))))))))

(defun pi-lsp--on-save-documents (_conn params)
  "`pi/saveDocuments': {saved: [uri], skipped: [{uri, reason}]}."
  (let (saved skipped)
    (seq-doseq (doc (plist-get params :documents))
      (let* ((uri (plist-get doc :uri))
             (buffer (pi-lsp-document-buffer uri))
             (reason (if buffer (pi-lsp--save-reason buffer (plist-get doc :version))
                       "the file is not visited in Emacs")))
        (if reason (push (list :uri uri :reason reason) skipped) (push uri saved))))
    (list :saved (vconcat (nreverse saved)) :skipped (vconcat (nreverse skipped)))))

(defun pi-lsp--on-reload-documents (_conn params)
  "`pi/reloadDocuments': {reloaded: [uri], skipped: [{uri, reason}]}."
  (let (reloaded skipped)
    (seq-doseq (uri (plist-get params :uris))
      (let* ((buffer (pi-lsp-document-buffer uri))
             (reason (cond ((null buffer) "the file is not visited in Emacs")
                           ((buffer-modified-p buffer) "the buffer has unsaved changes")
                           (t (condition-case err
                                  (progn (with-current-buffer buffer (revert-buffer t t t)) nil)
                                (error (format "the reload failed: %s" (error-message-string err))))))))
        (if reason (push (list :uri uri :reason reason) skipped) (push uri reloaded))))
    (list :reloaded (vconcat (nreverse reloaded)) :skipped (vconcat (nreverse skipped)))))

(setf (alist-get 'workspace/applyEdit pi-lsp-request-handlers) #'pi-lsp--on-apply-edit
      (alist-get 'pi/saveDocuments pi-lsp-request-handlers) #'pi-lsp--on-save-documents
      (alist-get 'pi/reloadDocuments pi-lsp-request-handlers) #'pi-lsp--on-reload-documents)

(provide 'pi-lsp-edits)
;;; pi-lsp-edits.el ends here
