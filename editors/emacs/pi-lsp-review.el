;;; pi-lsp-review.el --- Review an agent's edit before it lands, hunk by hunk  -*- lexical-binding: t -*-

;;; Commentary:

;; With the setting `edit.review' "before" (issue 18), pi-lsp proposes each edit or write with
;; `pi/reviewEdit {reviewId, toolName, path, hunks, timeoutMs}' and waits for
;; `{decisions: [{hunk, decision: "accept" | "reject", reason?}]}'.  This file answers it in a
;; `diff-mode'-style buffer, "*pi-lsp review FILE*": a unified diff of the proposal (1-based
;; `@@ -old +new @@' headers), each hunk header followed by its state: "?" undecided, "✓"
;; accepted, "✗" rejected (with the reason).  Keys act on the hunk at point:
;;
;;   a  accept      r  reject      R  reject with a reason (read in the minibuffer)
;;   A  accept all  X  reject all  n / p  next / previous hunk
;;   C-c C-c  send now (asks first if a hunk is undecided)       q  reject the rest and send
;;
;; The decisions go out once every hunk has one.  The handler answers later (a
;; `pi-lsp-deferred'), so Emacs stays usable while the review is open.  `pi/reviewWithdrawn'
;; (the server stopped waiting: timeout, abort) closes the buffer; nothing decided afterwards
;; counts.

;;; Code:

(require 'cl-lib)
(require 'diff-mode)
(require 'pi-lsp-connection)

(cl-defstruct (pi-lsp--review (:constructor pi-lsp--make-review))
  conn deferred id tool path hunks decisions buffer done)

(defvar pi-lsp--reviews nil "Open reviews, oldest first.")

(defvar pi-lsp-review-reason-function (lambda () (read-string "Reason for rejecting this hunk: "))
  "Function of no arguments returning the reason typed by `R' (an empty string: none).")

(defvar-local pi-lsp--review nil "The review this buffer shows.")

(defvar pi-lsp-review-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "a" #'pi-lsp-review-accept)
    (define-key map "r" #'pi-lsp-review-reject)
    (define-key map "R" #'pi-lsp-review-reject-with-reason)
    (define-key map "A" #'pi-lsp-review-accept-all)
    (define-key map "X" #'pi-lsp-review-reject-all)
    (define-key map "n" #'pi-lsp-review-next)
    (define-key map "p" #'pi-lsp-review-previous)
    (define-key map (kbd "C-c C-c") #'pi-lsp-review-send)
    (define-key map "q" #'pi-lsp-review-send)
    map)
  "Keys of `pi-lsp-review-mode'.")

(define-derived-mode pi-lsp-review-mode diff-mode "pi-review"
  "A proposed agent edit to accept or reject hunk by hunk.
\\{pi-lsp-review-mode-map}"
  (setq buffer-read-only t)
  ;; diff-mode's read-only minor mode binds single letters (n, p, R, q...) above the major mode's
  ;; map: ours win in this buffer
  (setq-local minor-mode-overriding-map-alist
              (list (cons 'diff-mode-read-only pi-lsp-review-mode-map))))

(defun pi-lsp--review-range (start count)
  "The unified-diff range of 0-based START and COUNT lines (a count of 0 names the line before)."
  (if (eql count 1) (format "%d" (1+ start))
    (format "%d,%d" (if (eql count 0) start (1+ start)) count)))

(defun pi-lsp--review-lines (text)
  "TEXT split into lines, without the empty one after a final newline."
  (let ((lines (split-string (or text "") "\n")))
    (if (equal (car (last lines)) "") (butlast lines) lines)))

(defun pi-lsp--review-render (review)
  "Draw REVIEW in its buffer, keeping point on the same hunk."
  (with-current-buffer (pi-lsp--review-buffer review)
    (let ((inhibit-read-only t)
          (index (or (get-text-property (point) 'pi-lsp-hunk) 0))
          (hunks (pi-lsp--review-hunks review))
          (decisions (pi-lsp--review-decisions review)))
      (erase-buffer)
      (insert (format "pi-lsp review: %s %s (%d hunk%s)\n" (pi-lsp--review-tool review)
                      (pi-lsp--review-path review) (length hunks) (if (= (length hunks) 1) "" "s"))
              "a accept  r reject  R reject with a reason  A accept all  X reject all  n/p move  C-c C-c send  q reject the rest\n"
              (format "--- %s\n+++ %s\n" (pi-lsp--review-path review) (pi-lsp--review-path review)))
      (cl-loop for hunk in hunks for i from 0 do
               (let* ((decision (gethash (plist-get hunk :id) decisions))
                      (mark (pcase (car decision) ("accept" "✓") ("reject" "✗") (_ "?")))
                      (start (point)))
                 (insert (format "@@ -%s +%s @@ %s hunk %d/%d%s\n"
                                 (pi-lsp--review-range (plist-get hunk :oldStart) (plist-get hunk :oldLines))
                                 (pi-lsp--review-range (plist-get hunk :newStart) (plist-get hunk :newLines))
                                 mark (1+ i) (length hunks)
                                 (if (cdr decision) (format " rejected: %s" (cdr decision)) "")))
                 (dolist (line (pi-lsp--review-lines (plist-get hunk :oldText))) (insert "-" line "\n"))
                 (dolist (line (pi-lsp--review-lines (plist-get hunk :newText))) (insert "+" line "\n"))
                 (put-text-property start (point) 'pi-lsp-hunk i)))
      (pi-lsp--review-goto index))))

(defun pi-lsp--review-goto (index)
  "Put point on the header of hunk INDEX (0-based)."
  (goto-char (point-min))
  (let ((found (text-property-any (point-min) (point-max) 'pi-lsp-hunk index)))
    (when found (goto-char found))))

(defun pi-lsp--review-at-point ()
  "The review of this buffer and the 0-based index of the hunk at point (the first when before it)."
  (let ((review pi-lsp--review))
    (unless (and review (not (pi-lsp--review-done review)))
      (user-error "This review is over"))
    (cons review (or (get-text-property (point) 'pi-lsp-hunk) 0))))

(defun pi-lsp--review-decide (decision &optional reason all)
  "Record DECISION (\"accept\"/\"reject\", REASON) for the hunk at point, or ALL hunks; send when complete."
  (pcase-let* ((`(,review . ,index) (pi-lsp--review-at-point))
               (hunks (pi-lsp--review-hunks review))
               (decisions (pi-lsp--review-decisions review)))
    (dolist (hunk (if all hunks (list (nth index hunks))))
      (puthash (plist-get hunk :id) (cons decision reason) decisions))
    (if (cl-every (lambda (h) (gethash (plist-get h :id) decisions)) hunks)
        (pi-lsp--review-finish review)
      (pi-lsp--review-render review)
      ;; on to the next undecided hunk
      (let ((next (or (cl-position-if (lambda (h) (not (gethash (plist-get h :id) decisions))) hunks :start index)
                      (cl-position-if (lambda (h) (not (gethash (plist-get h :id) decisions))) hunks))))
        (pi-lsp--review-goto next)))))

(defun pi-lsp-review-accept ()
  "Accept the hunk at point."
  (interactive)
  (pi-lsp--review-decide "accept"))

(defun pi-lsp-review-reject ()
  "Reject the hunk at point."
  (interactive)
  (pi-lsp--review-decide "reject"))

(defun pi-lsp-review-reject-with-reason ()
  "Reject the hunk at point and tell the agent why."
  (interactive)
  (pi-lsp--review-at-point)
  (let ((reason (string-trim (funcall pi-lsp-review-reason-function))))
    (pi-lsp--review-decide "reject" (unless (string-empty-p reason) reason))))

(defun pi-lsp-review-accept-all ()
  "Accept every hunk."
  (interactive)
  (pi-lsp--review-decide "accept" nil t))

(defun pi-lsp-review-reject-all ()
  "Reject every hunk."
  (interactive)
  (pi-lsp--review-decide "reject" nil t))

(defun pi-lsp-review-next ()
  "Move to the next hunk."
  (interactive)
  (pcase-let ((`(,review . ,index) (pi-lsp--review-at-point)))
    (pi-lsp--review-goto (min (1+ index) (1- (length (pi-lsp--review-hunks review)))))))

(defun pi-lsp-review-previous ()
  "Move to the previous hunk."
  (interactive)
  (pi-lsp--review-goto (max 0 (1- (cdr (pi-lsp--review-at-point))))))

(defun pi-lsp-review-send ()
  "Send the decisions now; asks first when a hunk is undecided (it would be rejected)."
  (interactive)
  (let* ((review (car (pi-lsp--review-at-point)))
         (decisions (pi-lsp--review-decisions review))
         (undecided (cl-count-if-not (lambda (h) (gethash (plist-get h :id) decisions))
                                     (pi-lsp--review-hunks review))))
    (when (or (zerop undecided)
              (y-or-n-p (format "%d undecided hunk%s will be rejected; send? " undecided
                                (if (= undecided 1) "" "s"))))
      (pi-lsp--review-finish review))))

(defun pi-lsp--review-close (review)
  "Forget REVIEW and kill its buffer."
  (setf (pi-lsp--review-done review) t)
  (setq pi-lsp--reviews (delq review pi-lsp--reviews))
  (let ((buffer (pi-lsp--review-buffer review)))
    (when (buffer-live-p buffer)
      (dolist (window (get-buffer-window-list buffer nil t))
        (when (window-live-p window) (quit-window nil window)))
      (kill-buffer buffer))))

(defun pi-lsp--review-finish (review)
  "Send REVIEW's decisions (undecided hunks rejected) and close it."
  (let* ((decisions (pi-lsp--review-decisions review))
         (result (vconcat
                  (mapcar (lambda (hunk)
                            (let* ((id (plist-get hunk :id))
                                   (decision (or (gethash id decisions) '("reject"))))
                              (append (list :hunk id :decision (car decision))
                                      (when (cdr decision) (list :reason (cdr decision))))))
                          (pi-lsp--review-hunks review)))))
    (pi-lsp--review-close review)
    (pi-lsp-reply (pi-lsp--review-conn review) (pi-lsp--review-deferred review) (list :decisions result))))

(defun pi-lsp--on-review-edit (conn params)
  "`pi/reviewEdit': show the proposal in a review buffer and answer later (see the Commentary)."
  (let* ((path (plist-get params :path))
         (review (pi-lsp--make-review
                  :conn conn :deferred (pi-lsp-defer) :id (plist-get params :reviewId)
                  :tool (or (plist-get params :toolName) "edit")
                  :path (if (stringp path) (file-relative-name path) "?")
                  :hunks (append (plist-get params :hunks) nil)
                  :decisions (make-hash-table :test #'equal))))
    (setf (pi-lsp--review-buffer review)
          (generate-new-buffer (format "*pi-lsp review %s*" (pi-lsp--review-path review))))
    (with-current-buffer (pi-lsp--review-buffer review)
      (pi-lsp-review-mode)
      (setq pi-lsp--review review))
    (pi-lsp--review-render review)
    (push review pi-lsp--reviews)
    (pop-to-buffer (pi-lsp--review-buffer review))
    (message "pi-lsp: review the %s of %s (a accept, r reject, R with a reason)"
             (pi-lsp--review-tool review) (pi-lsp--review-path review))
    (pi-lsp--review-deferred review)))

(defun pi-lsp--on-review-withdrawn (_conn params)
  "`pi/reviewWithdrawn {reviewId, reason}': close that review; the server decided already."
  (let ((review (cl-find (plist-get params :reviewId) pi-lsp--reviews :key #'pi-lsp--review-id :test #'equal)))
    (when review
      (pi-lsp--review-close review)
      (pi-lsp-reply (pi-lsp--review-conn review) (pi-lsp--review-deferred review) nil)
      (message "pi-lsp: the review of %s was withdrawn (%s); nothing was written"
               (pi-lsp--review-path review) (plist-get params :reason)))))

(setf (alist-get 'pi/reviewEdit pi-lsp-request-handlers) #'pi-lsp--on-review-edit
      (alist-get 'pi/reviewWithdrawn pi-lsp-notification-handlers) #'pi-lsp--on-review-withdrawn)

(provide 'pi-lsp-review)
;;; pi-lsp-review.el ends here
