;;; pi-lsp-unit-test.el --- ERT tests of pi-lsp.el's positions, change records and edits  -*- lexical-binding: t -*-

;; Run by tests/editors/test_emacs.py:
;;   emacs --batch -L editors/emacs -l ert -l pi-lsp-unit-test.el -f ert-run-tests-batch-and-exit
;; No server: these check the parts whose mistakes would corrupt text silently (positions in
;; both encodings, LSP line breaks, the incremental didChange records, multi-range edits).

(require 'ert)
(require 'cl-lib)
(require 'pi-lsp)

(defmacro t-doc (text encoding &rest body)
  "Run BODY in a temp buffer holding TEXT as a document with position ENCODING."
  (declare (indent 2))
  `(with-temp-buffer
     (insert ,text)
     (setq pi-lsp--encoding ,encoding)
     (pi-lsp--scan-cr)
     ,@body))

(defun t-pos (line character) (list :line line :character character))

(ert-deftest pi-lsp-positions-utf16-and-utf32 ()
  (t-doc "a👋b\nxyz" "utf-16"
    (should (equal (pi-lsp-position 3) (t-pos 0 3)))          ; before "b": a=1, 👋=2 units
    (should (= (pi-lsp-point (t-pos 0 3)) 3))
    (should (= (pi-lsp-point (t-pos 0 2)) 2))                ; inside the surrogate pair: rounds down
    (should (equal (pi-lsp-position 4) (t-pos 0 4)))
    (should (equal (pi-lsp-position 5) (t-pos 1 0))))
  (t-doc "a👋b\nxyz" "utf-32"
    (should (equal (pi-lsp-position 3) (t-pos 0 2)))
    (should (= (pi-lsp-point (t-pos 0 2)) 3))))

(ert-deftest pi-lsp-positions-clamp ()
  (t-doc "ab\ncd" "utf-32"
    (should (= (pi-lsp-point (t-pos 0 99)) 3))               ; past the line's end: its end
    (should (= (pi-lsp-point (t-pos 1 2)) 6))
    (should (= (pi-lsp-point (t-pos 2 0)) 6))                ; past the last line: end of text
    (should (= (pi-lsp-point (t-pos 7 1)) 6)))
  (t-doc "ab\n" "utf-32"
    (should (= (pi-lsp-point (t-pos 1 0)) 4))                ; the empty last line exists
    (should (= (pi-lsp-point (t-pos 2 0)) 4))))

(ert-deftest pi-lsp-positions-lone-cr-is-a-line-break ()
  (t-doc "a\rb\r\nc\nd" "utf-32"
    (should pi-lsp--has-cr)
    (should (= (pi-lsp-point (t-pos 1 0)) 3))
    (should (= (pi-lsp-point (t-pos 1 5)) 4))                ; end of "b", before \r\n
    (should (= (pi-lsp-point (t-pos 2 0)) 6))
    (should (= (pi-lsp-point (t-pos 3 0)) 8))))

;;; The didChange records replayed by an independent LSP applier equal the buffer

(defun t-offset (text position encoding)
  "The string index of LSP POSITION in TEXT (\\n lines only)."
  (let* ((lines (split-string text "\n"))
         (line (plist-get position :line))
         (start (cl-loop for l in (cl-subseq lines 0 (min line (length lines))) sum (1+ (length l))))
         (units (plist-get position :character))
         (index start))
    (while (and (> units 0) (< index (length text)) (/= (aref text index) ?\n))
      (setq units (- units (if (and (equal encoding "utf-16") (> (aref text index) #xFFFF)) 2 1))
            index (1+ index)))
    index))

(defun t-replay (text changes encoding)
  (dolist (change changes text)
    (if (not (plist-get change :range))
        (setq text (plist-get change :text))
      (let ((range (plist-get change :range)))
        (setq text (concat (substring text 0 (t-offset text (plist-get range :start) encoding))
                           (plist-get change :text)
                           (substring text (t-offset text (plist-get range :end) encoding))))))))

(ert-deftest pi-lsp-change-records-replay-to-the-buffer ()
  (dolist (encoding '("utf-16" "utf-32"))
    (let ((original "héllo 👋 world\nsecond line\n\nthird 👋👋 end\n")
          (state 42))
      (cl-flet ((rand (n) (setq state (% (+ (* state 1103515245) 12345) 2147483648)) (% (/ state 65536) n)))
        (t-doc original encoding
          (cl-letf (((symbol-function 'pi-lsp--schedule-flush) #'ignore))
            (setq pi-lsp--connection 'fake)
            (dotimes (_ 200)
              (let* ((a (1+ (rand (1+ (buffer-size)))))
                     (b (min (1+ (buffer-size)) (+ a (rand 6)))))
                (pcase (rand 3)
                  (0 (goto-char a) (insert (nth (rand 4) '("x" "\n" "👋" "ab\ncd"))))
                  (1 (delete-region a b))
                  (2 (goto-char a) (delete-region a b) (insert "é\n👋")))))
            (should-not pi-lsp--full-sync)
            (should (equal (t-replay original (reverse pi-lsp--changes) encoding) (buffer-string)))
            (setq pi-lsp--connection nil)))))))

;;; Edits

(ert-deftest pi-lsp-text-edits-apply-in-old-coordinates ()
  (t-doc "one two three\nfour 👋 five\n" "utf-16"
    (pi-lsp--apply-text-edits
     (list (list :range (list :start (t-pos 0 4) :end (t-pos 0 7)) :newText "2")
           (list :range (list :start (t-pos 1 5) :end (t-pos 1 7)) :newText "✋")
           (list :range (list :start (t-pos 0 0) :end (t-pos 0 0)) :newText ">> ")
           (list :range (list :start (t-pos 2 0) :end (t-pos 2 0)) :newText "six\n")))
    (should (equal (buffer-string) ">> one 2 three\nfour ✋ five\nsix\n"))))

(ert-deftest pi-lsp-apply-edit-refuses-a-stale-version ()
  (let ((file (make-temp-file "pi-lsp-unit" nil ".txt" "abc\n")))
    (unwind-protect
        (with-current-buffer (find-file-noselect file)
          (setq pi-lsp--connection 'fake pi-lsp--version 7)
          (cl-letf (((symbol-function 'pi-lsp-flush-changes) #'ignore)
                    ((symbol-function 'pi-lsp--schedule-flush) #'ignore))
            (let ((reply (pi-lsp--on-apply-edit
                          nil (list :edit (list :documentChanges
                                                (vector (list :textDocument (list :uri (pi-lsp-path-to-uri file) :version 6)
                                                              :edits (vector (list :range (list :start (t-pos 0 0) :end (t-pos 0 1))
                                                                                   :newText "X")))))))))
              (should (eq (plist-get reply :applied) :json-false))
              (should (string-match-p "version 7, the edit was made for 6" (plist-get reply :failureReason)))
              (should (equal (buffer-string) "abc\n"))))
          (setq pi-lsp--connection nil)
          (set-buffer-modified-p nil)
          (kill-buffer))
      (delete-file file))))

;;; Transcript

(ert-deftest pi-lsp-transcript-call-lines ()
  (should (equal (pi-lsp-call-summary "bash" '(:command "python3 -m unittest -q\necho more")) "bash python3 -m unittest -q"))
  (should (equal (pi-lsp-call-summary "edit" '(:path "textkit/slug.py")) "edit textkit/slug.py"))
  (should (equal (pi-lsp-call-summary "grep" '(:pattern "def slugify" :path "src")) "grep def slugify in src"))
  (should (equal (pi-lsp-call-summary "references" '(:path "lib.py" :line 1 :symbol "shout")) "references shout lib.py:1"))
  (should (equal (pi-lsp-call-summary "rename" '(:path "lib.py" :line 1 :symbol "shout" :newName "yell")) "rename shout → yell lib.py:1"))
  (should (equal (pi-lsp-call-summary "diagnostics" nil) "diagnostics"))
  (should (equal (pi-lsp--readable '(:path "a.py" :edits [(:oldText "x" :newText "y\nz")]) 0)
                 "path: a.py\nedits[1]:\n  oldText: x\n  newText: |\n    y\n    z\n")))

(ert-deftest pi-lsp-transcript-diff-faces-survive-font-lock ()
  "Diff lines keep their `diff-mode' faces with font-lock on; Markdown applies to the assistant's text only."
  (let ((pi-lsp-transcript-buffer " *pi-lsp unit 3*"))
    (unwind-protect
        (progn
          (pi-lsp-transcript-call-start "e" "edit" '(:path "a.md"))
          (pi-lsp-transcript-call-end "e" "edit" '(:content [(:type "text" :text "ok")]
                                                   :details (:patch "--- a.md\n+++ a.md\n@@ -1 +1 @@\n-old `x`\n+new `x`\n"))
                                      nil)
          (with-current-buffer (pi-lsp-transcript)
            (font-lock-mode 1)
            (font-lock-ensure)
            (goto-char (point-min))
            (search-forward "+new `x")
            (should (eq (get-char-property (1- (point)) 'font-lock-face) 'diff-added))
            (should-not (get-char-property (1- (point)) 'face))
            (search-forward "result:")))
      (kill-buffer " *pi-lsp unit 3*"))))

(ert-deftest pi-lsp-transcript-keeps-calls-apart ()
  (let ((pi-lsp-transcript-buffer " *pi-lsp unit*"))
    (unwind-protect
        (progn
          (pi-lsp-transcript-call-start "1" "bash" '(:command "make"))
          (pi-lsp-transcript-call-start "2" "read" '(:path "a.txt"))
          (pi-lsp-transcript-call-output "1" "building\n")
          (pi-lsp-transcript-stream "Some text")
          (pi-lsp-transcript-call-end "2" "read" '(:content [(:type "text" :text "A")]) nil)
          (pi-lsp-transcript-call-end "1" "bash" '(:content [(:type "text" :text "failed")]) t)
          (with-current-buffer (pi-lsp-transcript)
            (should (equal (buffer-string) "▸ bash make ✗ error\n▸ read a.txt ✓\nSome text"))
            (goto-char (point-min))
            (pi-lsp-transcript-toggle)
            (should (equal (buffer-string)
                           "▾ bash make ✗ error\n    arguments:\n      $ make\n    error:\n      failed\n▸ read a.txt ✓\nSome text"))
            (pi-lsp-transcript-next-call)
            (should (looking-at "▸ read a.txt"))))
      (kill-buffer " *pi-lsp unit*"))))

(ert-deftest pi-lsp-transcript-final-states-and-markdown ()
  (let ((pi-lsp-transcript-buffer " *pi-lsp unit 2*"))
    (unwind-protect
        (progn
          (pi-lsp-transcript-event '(:type "message_update" :delta (:type "text" :text "## Plan\nUse **bold** and `code`.")))
          (pi-lsp-transcript-event '(:type "message_end" :message (:role "assistant" :stopReason "error" :errorMessage "HTTP 500")))
          (pi-lsp-transcript-event '(:type "agent_end" :stopReason "aborted"))
          ;; the aborted run's reply: "■ aborted" above is its one final line
          (pi-lsp-transcript-run-ended '(:stopReason "aborted" :errorMessage "Request was aborted"))
          (pi-lsp-transcript-run-ended '(:stopReason "error" :errorMessage "the provider failed"))
          (pi-lsp-transcript-event '(:type "approval_requested" :approvalId "q1" :title "Run bash: make"))
          (pi-lsp-transcript-event '(:type "approval_resolved" :approvalId "q1" :decision "deny" :by "timeout"))
          (pi-lsp-transcript-event '(:type "approval_resolved" :approvalId "q1" :decision "deny" :by "timeout"))
          (with-current-buffer (pi-lsp-transcript)
            (should (equal (buffer-string)
                           (concat "## Plan\nUse **bold** and `code`.\n✗ HTTP 500\n■ aborted\n■ error: the provider failed\n"
                                   "⚠ waiting for your approval: Run bash: make\n✗ approval timed out: denied\n")))
            (goto-char (point-min))
            (search-forward "**bold")
            (should (eq (get-text-property (1- (point)) 'font-lock-face) 'bold))
            (search-forward "`code")
            (should (eq (get-text-property (1- (point)) 'font-lock-face) 'font-lock-constant-face))
            (should (eq (get-text-property (point-min) 'font-lock-face) 'font-lock-keyword-face))
            (search-forward "✗ HTTP")
            (should (eq (get-text-property (point) 'font-lock-face) 'error))))
      (kill-buffer " *pi-lsp unit 2*"))))

(ert-deftest pi-lsp-hooks-never-signal ()
  "A failure inside the change hooks falls back to a full sync instead of signalling (Emacs
would empty `after-change-functions' for every package)."
  (t-doc "abc" "utf-32"
    (cl-letf (((symbol-function 'pi-lsp--schedule-flush) #'ignore)
              ((symbol-function 'pi-lsp-position) (lambda (_) (error "boom"))))
      (setq pi-lsp--connection 'fake)
      (goto-char 2)
      (insert "x")
      (should pi-lsp--full-sync)
      (should (memq #'pi-lsp--after-change (default-value 'after-change-functions)))
      (setq pi-lsp--connection nil))))

(ert-deftest pi-lsp-prompt-takes-the-region-along ()
  (with-temp-buffer
    (insert "one\ntwo\nthree\n")
    (transient-mark-mode 1)
    (goto-char (point-min))
    (forward-line 1)
    (push-mark (point) t t)
    (forward-line 1)
    (should (equal (pi-lsp--compose "explain")
                   (format "explain\n\nSelected line 2 of %s:\n```\ntwo\n\n```" (buffer-name))))
    (forward-line 1)
    (should (string-prefix-p "explain\n\nSelected lines 2-3 of" (pi-lsp--compose "explain")))
    (deactivate-mark)
    (should (equal (pi-lsp--compose "explain") "explain"))))

(ert-deftest pi-lsp-changes-renders-every-kind-of-file ()
  "The change set as the user reads it: 1-based unified ranges (an insertion after line N, a
deletion), a missing final newline, CRLF shown without the CR, created / deleted / binary /
not restorable files saying what a revert does; files sorted by path; diff-mode moves over it."
  (with-temp-buffer
    (pi-lsp-changes-mode)
    (setq pi-lsp-changes--session "s")
    (let ((call (vector (list :toolCallId "c1" :toolName "bash" :turn "2"))))
      (pi-lsp-changes--render
       (list :currentTurn 2
             :files (vector
                     (list :path "/w/z.txt" :state "modified" :toolCalls call :restorable t :binary :json-false
                           :current "agent"
                           :hunks (vector (list :id "h1" :oldStart 2 :oldLines 0 :newStart 2 :newLines 1
                                                :oldText "" :newText "new\r\n" :status "applied")
                                          (list :id "h2" :oldStart 5 :oldLines 1 :newStart 6 :newLines 0
                                                :oldText "last" :newText "" :status "changed")))
                     (list :path "/w/gone.txt" :state "deleted" :toolCalls call :hunks [] :restorable t
                           :binary :json-false :current "agent")
                     (list :path "/w/blob.bin" :state "modified" :toolCalls call :hunks [] :restorable t
                           :binary t :current "agent")
                     (list :path "/w/big.txt" :state "modified" :toolCalls call :hunks [] :restorable :json-false
                           :binary :json-false :current "agent")))))
    (should (equal (buffer-substring-no-properties (point-min) (point-max))
                   (concat "Changes of session s (turns up to 2)\n"
                           "k keep  u revert hunk  U revert file  T revert prompt  RET visit  g refresh\n\n"
                           "modified /w/big.txt  (bash c1; turn 2)  not restorable: too large to keep\n"
                           "modified /w/blob.bin  (bash c1; turn 2)  binary; U restores the whole file\n"
                           "deleted /w/gone.txt  (bash c1; turn 2)  U restores it\n"
                           "modified /w/z.txt  (bash c1; turn 2)\n"
                           "--- /w/z.txt\n+++ /w/z.txt\n"
                           "@@ -2,0 +3,1 @@ applied\n+new\n"
                           "@@ -6,1 +6,0 @@ changed\n-last\n\\ No newline at end of file\n")))
    (should (eq (key-binding (kbd "k")) #'pi-lsp-changes-keep))   ; not diff-mode's hunk kill
    (should (eq (key-binding (kbd "u")) #'pi-lsp-changes-revert-hunk))
    (should (eq (key-binding (kbd "n")) #'diff-hunk-next))
    (should (eq (key-binding (kbd "K")) #'undefined))          ; diff-mode's edits of the text: shadowed
    (goto-char (point-min))
    (search-forward "@@ -2,0")
    (should (equal (plist-get (pi-lsp-changes--hunk-at-point) :id) "h1"))
    (should (= (pi-lsp-changes--turn-at-point) 2))
    (diff-hunk-next)
    (should (equal (plist-get (pi-lsp-changes--hunk-at-point) :id) "h2"))
    (goto-char (point-min))
    (search-forward "deleted /w/gone.txt")
    (should-error (pi-lsp-changes--hunk-at-point) :type 'user-error)
    (should (equal (plist-get (pi-lsp-changes--file-at-point) :state) "deleted"))))

;;; Knowledge (issue 17): what needs no language server

(ert-deftest pi-lsp-knowledge-cancel-request ()
  "pi-lsp's $/cancelRequest for a pending pi/languageRequest: answered RequestCancelled once, and
the request is forgotten (a late server answer is dropped)."
  (let* ((conn (make-instance 'pi-lsp-connection :name "unit" :root "/tmp/"
                              :process (make-process :name "unit" :command '("sleep" "30")
                                                     :connection-type 'pipe :noquery t)))
         (deferred (pi-lsp-defer))
         (other (pi-lsp-defer))
         (pi-lsp--pending-language-requests nil))
    (unwind-protect
        (progn
          (setf (pi-lsp-deferred-id deferred) 7 (pi-lsp-deferred-id other) 8)
          (setq pi-lsp--pending-language-requests (list deferred other))
          (pi-lsp--on-cancel-request conn '(:id 7))
          (should (equal pi-lsp--pending-language-requests (list other)))
          (should (pi-lsp-deferred-done deferred))
          (should-not (pi-lsp-deferred-done other))
          (should (with-current-buffer (jsonrpc-events-buffer conn)
                    (string-match-p "-32800" (buffer-string)))))
      (jsonrpc-shutdown conn t))))

(ert-deftest pi-lsp-knowledge-capabilities ()
  "experimental.pi gets diagnostics always, languageRequests only when eglot can be loaded."
  (let ((pi (plist-get (plist-get (pi-lsp--client-capabilities) :experimental) :pi)))
    (should (eq (plist-get pi :diagnostics) t))
    (should (eq (plist-get pi :approvals) t))
    (should (equal (and (plist-get pi :languageRequests) t) (and (locate-library "eglot") t))))
  (should-not (featurep 'eglot)))
