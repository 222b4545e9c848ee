;;; mediahost.el --- Media from many providers through mediahost  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The mediahost authors

;; Author: The mediahost authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (jsonrpc "1.0.14"))
;; Keywords: multimedia, comm
;; URL: the Editors/emacs folder of the mediahost repository (not on a package archive)

;; This file is not part of GNU Emacs.

;;; Commentary:

;; A client of `mediahost rpc' (JSON-RPC 2.0 on stdin/stdout) on Emacs's
;; built-in jsonrpc.el: YouTube, TMDB movies, podcasts, Mastodon and X (and
;; any plugin provider) from one place.
;;
;;   M-x mediahost-search      search one provider, or all of them
;;   M-x mediahost-browse      a provider's category
;;   M-x mediahost-favorites   favorites (kept by mediahost, offline)
;;   M-x mediahost-history     past searches (RET searches again)
;;   M-x mediahost-downloads   downloads, with live progress
;;   M-x mediahost-lists       your lists (RET opens one; `l' in a result list adds to one)
;;   M-x mediahost-queue       what plays next (`e' in a result list queues; M-up and
;;                             M-down reorder, k takes out)
;;
;; In a result list: RET opens (what is inside a show, channel or playlist;
;; details otherwise), f toggles the favorite, d downloads, p plays, a shows
;; the artwork, n and P page, g refreshes.  In the details, RET opens a link
;; and plays a podcast's soundbite alone (its Podcasting 2.0 people, season,
;; funding, podroll, live state and the rest are drawn there too).  Download
;; progress shows in the downloads buffer and the mode line.  One connection
;; per Emacs is started at the first command and started again if it dies.
;; When a mediahost background service runs, `mediahost rpc' is a bridge to
;; it, so this shares its downloads and player.

;;; Code:

(require 'jsonrpc)
(require 'tabulated-list)
(require 'button)
(require 'subr-x)
(require 'seq)
(require 'cl-lib)

(defgroup mediahost nil
  "Media from many providers through mediahost."
  :group 'multimedia
  :prefix "mediahost-")

(defcustom mediahost-program "mediahost"
  "The mediahost executable: a name on `exec-path' or a file name."
  :type 'string)

(defcustom mediahost-arguments nil
  "Arguments before `rpc', e.g. (\"--sandbox\") or (\"--data-dir\" \"~/media\")."
  :type '(repeat string))

(defcustom mediahost-request-timeout 60
  "Seconds to wait for an answer before giving up."
  :type 'integer)

(defcustom mediahost-pictures t
  "Show pictures in graphic frames: thumbnails in lists, the picture in details.
They are fetched after the rows are shown, through mediahost's artwork cache."
  :type 'boolean)

(defvar mediahost--connection nil "The connection to `mediahost rpc', or nil.")
(defvar mediahost--downloads (make-hash-table :test #'equal)
  "Download id -> plist of what notifications said.
Keys: :state :bytes :total :rate :title :path :error.")
(defvar mediahost--mode-line "" "What the mode line shows: downloads under way, what plays.")
(defvar mediahost--player nil "The last `player.state', as a plist.")
(defvar mediahost--providers nil "Provider ids, read once per connection.")

(put 'mediahost--mode-line 'risky-local-variable t)

;;;; Connection

(defun mediahost--executable ()
  "The program to run, or a `user-error' that says how to get it."
  (or (and (file-name-absolute-p mediahost-program)
           (file-executable-p mediahost-program)
           mediahost-program)
      (executable-find mediahost-program)
      (user-error "mediahost is not installed (no `%s' on exec-path): build it with `make release' and put it on PATH, or set `mediahost-program'"
                  mediahost-program)))

(defvar mediahost--process nil "The `mediahost rpc' process of the connection.")

(defun mediahost--live-p (connection)
  (and connection (jsonrpc-running-p connection)))

(defun mediahost--connection ()
  "The connection, started (again) when there is none."
  (unless (mediahost--live-p mediahost--connection)
    (let* ((program (mediahost--executable))
           (process (make-process
                     :name "mediahost"
                     ;; jsonrpc.el reads Content-Length framing: said at the start, so the
                     ;; host's notifications reach it before it has sent anything.
                     :command (append (list program) mediahost-arguments
                                      (list "rpc" "--framing" "content-length"))
                     :connection-type 'pipe
                     :coding 'utf-8-emacs-unix
                     :noquery t
                     :stderr (get-buffer-create "*mediahost stderr*"))))
      (setq mediahost--providers nil)
      (setq mediahost--process process)
      (setq mediahost--connection
            (make-instance 'jsonrpc-process-connection
                           :name "mediahost"
                           :process process
                           :events-buffer-scrollback-size 0
                           :notification-dispatcher #'mediahost--notification
                           :request-dispatcher #'ignore
                           :on-shutdown (lambda (_connection)
                                          (setq mediahost--connection nil)
                                          (mediahost--update-mode-line))))))
  mediahost--connection)

(defun mediahost--error-message (error)
  "The message of a `jsonrpc-error' ERROR (the host's, with its hint)."
  (let ((data (cdr error)))
    (or (alist-get 'jsonrpc-error-message (seq-filter #'consp data))
        (format "%s" data))))

(defun mediahost-request (method &optional params)
  "Call METHOD with PARAMS (a plist) and return the result.
Errors become a `user-error' with the host's message."
  (condition-case error
      ;; jsonrpc.el takes method names as symbols.
      (jsonrpc-request (mediahost--connection) (if (stringp method) (intern method) method)
                       (or params (make-hash-table))
                       :timeout mediahost-request-timeout)
    (jsonrpc-error
     (user-error "mediahost: %s" (mediahost--error-message error)))))

(defun mediahost-shutdown ()
  "End the connection (the next command starts a new one).
`mediahost rpc' is asked to finish (its input closed) before it is killed."
  (interactive)
  (let ((connection mediahost--connection))
    (when (mediahost--live-p connection)
      (let ((process mediahost--process))
        (when (process-live-p process)
          (ignore-errors (process-send-eof process))
          (with-timeout (3 nil)
            (while (process-live-p process) (accept-process-output process 0.05)))))
      (when (jsonrpc-running-p connection)
        (jsonrpc-shutdown connection t))))
  (setq mediahost--connection nil))

;;;; Notifications

(defun mediahost--notification (_connection method params)
  (pcase method
    ('downloads.progress
     (let* ((id (plist-get params :id))
            (entry (gethash id mediahost--downloads)))
       (puthash id (append (list :state "running" :bytes (plist-get params :bytes)
                                 :total (plist-get params :total) :rate (plist-get params :rate))
                           entry)
                mediahost--downloads))
     (mediahost--downloads-changed))
    ('downloads.state
     (let* ((id (plist-get params :id))
            (entry (gethash id mediahost--downloads))
            (state (plist-get params :state)))
       (if (equal state "removed")
           (remhash id mediahost--downloads)
         (puthash id (append (list :state state :path (plist-get params :path)
                                   :error (plist-get params :error))
                             entry)
                  mediahost--downloads))
       (pcase state
         ("completed" (message "mediahost: downloaded %s" (or (plist-get params :path) id)))
         ("failed" (message "mediahost: download failed: %s" (or (plist-get params :error) id)))))
     (mediahost--downloads-changed))
    ('auth.prompt
     (message "mediahost: %s (code %s at %s)" (plist-get params :message)
              (plist-get params :code) (plist-get params :url)))
    ('player.state
     (setq mediahost--player params)
     (mediahost--update-mode-line))
    ('library.changed
     ;; The queue changed (this Emacs, another front end, mpv coming to an item): shown again.
     ;; Asked for without waiting: a notification can arrive while a request waits for its answer.
     (when (equal (plist-get params :what) "queue")
       (mediahost--queue-changed)))))

(defvar mediahost--queue-reads 0
  "How many times the queue was asked for again: only the latest answer is shown.")

(defun mediahost--queue-changed ()
  "Read the queue again into its buffer, when one shows it.
Answers can come in another order than the questions (the host answers
them at once), so an earlier question's answer, which may not have the
latest change, is not shown."
  (when-let ((buffer (get-buffer "*mediahost queue*")))
    (let ((read (setq mediahost--queue-reads (1+ mediahost--queue-reads))))
      (jsonrpc-async-request
       (mediahost--connection) 'queue.list (cdr (buffer-local-value 'mediahost--source buffer))
       :success-fn (lambda (page)
                     (when (and (buffer-live-p buffer) (= read mediahost--queue-reads))
                       (with-current-buffer buffer (mediahost--fill page))))
       :error-fn (lambda (error) (message "mediahost: %s" (plist-get error :message)))
       :timeout mediahost-request-timeout))))

(defun mediahost--downloads-changed ()
  (mediahost--update-mode-line)
  (when-let ((buffer (get-buffer "*mediahost downloads*")))
    (with-current-buffer buffer
      (mediahost--downloads-render))))

(defun mediahost--update-mode-line ()
  (let ((running 0) (bytes 0) (total 0))
    (maphash (lambda (_id entry)
               (when (member (plist-get entry :state) '("running" "queued"))
                 (setq running (1+ running))
                 (setq bytes (+ bytes (or (plist-get entry :bytes) 0)))
                 (setq total (+ total (or (plist-get entry :total) 0)))))
             mediahost--downloads)
    ;; What :eval gives the mode line is a mode-line format again: a `%' (the percentage, a
    ;; title's) must be `%%' to show as itself.
    (setq mediahost--mode-line
          (string-replace
           "%" "%%"
           (concat
           (if (> running 0)
               (format " ⬇%d%s" running
                       (if (> total 0) (format " %d%%" (/ (* 100 bytes) total)) ""))
             "")
           (let ((state (plist-get mediahost--player :state)))
             (if (member state '("playing" "paused"))
                 (format " %s %s" (if (equal state "paused") "‖" "▶")
                         (truncate-string-to-width
                          (or (plist-get (plist-get mediahost--player :item) :title) "") 30 nil nil "…"))
               ""))))))
  (unless (member '(:eval mediahost--mode-line) global-mode-string)
    (setq global-mode-string (append (or global-mode-string '("")) '((:eval mediahost--mode-line)))))
  (force-mode-line-update t))

;;;; Result lists

(defvar-local mediahost--source nil "(METHOD . PARAMS) that filled this list.")
(defvar-local mediahost--page nil "The page shown: its :next and :prev cursors.")

(defvar mediahost-list-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'mediahost-open)
    (define-key map "f" #'mediahost-toggle-favorite)
    (define-key map "d" #'mediahost-download)
    (define-key map "p" #'mediahost-play)
    (define-key map "c" #'mediahost-chapters)
    (define-key map "a" #'mediahost-artwork)
    (define-key map "n" #'mediahost-next-page)
    (define-key map "P" #'mediahost-previous-page)
    (define-key map "g" #'mediahost-refresh)
    (define-key map "l" #'mediahost-add-to-list)
    (define-key map "e" #'mediahost-enqueue)
    map))

(define-derived-mode mediahost-list-mode tabulated-list-mode "mediahost"
  "Items from mediahost.
\\{mediahost-list-mode-map}"
  (setq tabulated-list-padding 1)
  (setq tabulated-list-format (mediahost--list-format (window-width)))
  (tabulated-list-init-header)
  ;; Laid out again for the window it is shown in, whenever that window's width changes.
  (add-hook 'window-size-change-functions #'mediahost--refit nil t))

(defvar-local mediahost--width nil
  "The window width this buffer's columns were laid out for.")

(defvar-local mediahost--shared nil
  "What every row of this list shares: (BY . KIND), either nil.")

(defun mediahost--shared-of (items)
  "(BY . KIND) that every one of ITEMS (two or more) has, each nil when not shared."
  (when (cdr items)
    (let ((by (mediahost--by (car items)))
          (kind (plist-get (car items) :kind)))
      (dolist (item items)
        (unless (equal (mediahost--by item) by) (setq by nil))
        (unless (equal (plist-get item :kind) kind) (setq kind nil)))
      (cons by kind))))

(defun mediahost--by (item)
  (or (plist-get item :creator) (plist-get item :subtitle)))

(defun mediahost--list-format (width &optional shared)
  "Columns for a window WIDTH columns wide, a download's state included.
The title takes what the other columns leave; \"By\" gives up columns first.
What every row shares (SHARED, as `mediahost--shared-of' gives it: a show's
episodes all name the show and are all episodes) has no column: the title's
header says it once, and the title gets the room."
  ;; The padding, Kind 7, Date 10, Length 7, the star 1, Download 9 ("completed") and a
  ;; space after each column but the last; one column is left for the window's edge.
  (let* ((usable (1- width))
         (same-by (car shared))
         (same-kind (cdr shared))
         (fixed (- 41 (if same-kind 8 0)))
         (by (if same-by 0 (min 18 (max 4 (/ (- usable fixed) 3)))))
         (title (max 8 (- usable fixed by (if same-by 0 1))))
         (heading (string-join (delq nil (list (and same-by (mediahost--text same-by))
                                                (and same-kind (concat same-kind "s"))))
                               " · ")))
    (setq mediahost--width width)
    (vconcat (and (mediahost--pictures-p) (list (list "" (mediahost--thumbnail-columns) nil)))
             (list (list (if (string-empty-p heading) "Title" heading)
                         (if (mediahost--pictures-p) (max 8 (- title (mediahost--thumbnail-columns) 1)) title) t))
             (unless same-by (list (list "By" by t)))
             (unless same-kind (list '("Kind" 7 t)))
             (list '("Date" 10 t) '("Length" 7 t) '("★" 1 t) '("Download" 9 t)))))

(defun mediahost--print-keeping-row ()
  "Print the rows again, point on the same item (by id), else on the same line."
  (let ((id (plist-get (tabulated-list-get-id) :id))
        (line (line-number-at-pos))
        (column (current-column))
        (found nil))
    (tabulated-list-print)
    (goto-char (point-min))
    (when id
      (while (and (not found) (not (eobp)))
        (if (equal (plist-get (tabulated-list-get-id) :id) id)
            (setq found t)
          (forward-line 1))))
    (unless found
      (goto-char (point-min))
      (forward-line (1- line)))
    (move-to-column column)))

(defun mediahost--refit (window)
  "Lay out the list in WINDOW again if the window's width changed."
  (let ((buffer (window-buffer window)))
    (with-current-buffer buffer
      (when (and (derived-mode-p 'mediahost-list-mode)
                 (not (eql mediahost--width (window-width window))))
        ;; Point is restored in that window (selected), in this buffer.
        (with-selected-window window
          (with-current-buffer buffer
            (setq tabulated-list-format (mediahost--list-format (window-width window) mediahost--shared))
            (tabulated-list-init-header)
            (mediahost--print-keeping-row)))))))

(defun mediahost--text (value)
  (if (stringp value) (replace-regexp-in-string "[\n\t]" " " value) ""))

(defun mediahost--duration (seconds)
  (if (numberp seconds)
      (let ((s (round seconds)))
        (if (>= s 3600)
            (format "%d:%02d:%02d" (/ s 3600) (% (/ s 60) 60) (% s 60))
          (format "%d:%02d" (/ s 60) (% s 60))))
    ""))

(defun mediahost--download-column (item)
  (let* ((id (plist-get item :id))
         (live (gethash id mediahost--downloads))
         (download (plist-get item :download))
         (state (or (plist-get live :state) (plist-get download :state))))
    (cond ((null state) "")
          ((and (equal state "running") (numberp (plist-get live :total)) (> (plist-get live :total) 0))
           (format "%d%%" (/ (* 100 (plist-get live :bytes)) (plist-get live :total))))
          (t state))))

(defun mediahost--entry (item &optional shared)
  "ITEM's row, without the columns SHARED says every row shares."
  (list item
        (vconcat (and (mediahost--pictures-p) (list (mediahost--thumbnail-cell item)))
                 (list (mediahost--text (plist-get item :title)))
                 (unless (car shared) (list (mediahost--text (mediahost--by item))))
                 (unless (cdr shared) (list (or (plist-get item :kind) "")))
                 (list (substring (or (plist-get item :published) "") 0
                                  (min 10 (length (or (plist-get item :published) ""))))
                       (mediahost--duration (plist-get item :duration))
                       (if (eq (plist-get item :favorite) t) "★" "")
                       (mediahost--download-column item)))))

(defun mediahost--buffer-name (what &optional prefix)
  "A buffer name for WHAT (after PREFIX), short enough to leave the mode line room."
  (format "*mediahost: %s%s*" (or prefix "") (truncate-string-to-width (mediahost--text what) 24 nil nil "…")))

(defun mediahost--show-page (name method params)
  "Call METHOD with PARAMS and show its page in the buffer NAME."
  (let ((page (mediahost-request method params)))
    (with-current-buffer (get-buffer-create name)
      (mediahost-list-mode)
      (setq mediahost--source (cons method params))
      (mediahost--fill page)
      (pop-to-buffer-same-window (current-buffer))
      (current-buffer))))

(defun mediahost--fill (page)
  (setq mediahost--page page)
  (let ((items (plist-get page :items))
        (window (get-buffer-window (current-buffer))))
    (setq mediahost--shared (mediahost--shared-of (append items nil)))
    (setq tabulated-list-entries
          (mapcar (lambda (item) (mediahost--entry item mediahost--shared)) (append items nil)))
    ;; Fitted to the window it is shown in now (`g' after a resize too).
    (setq tabulated-list-format (mediahost--list-format (window-width window) mediahost--shared))
    (tabulated-list-init-header)
    (mediahost--print-keeping-row)
    (mediahost--fetch-thumbnails (current-buffer) items)
    (let ((errors (append (plist-get page :errors) nil)))
      (when errors
        (message "mediahost: %s"
                 (mapconcat (lambda (e) (format "%s: %s" (plist-get e :provider) (plist-get e :message)))
                            errors "; "))))
    (when (= (length items) 0) (message "mediahost: nothing here"))))

(defun mediahost--item-at-point ()
  (or (tabulated-list-get-id) (user-error "No item on this line")))

(defun mediahost--update-item (item)
  "Show ITEM again in its row."
  (let ((id (plist-get item :id)))
    (setq tabulated-list-entries
          (mapcar (lambda (entry)
                    (if (equal (plist-get (car entry) :id) id) (mediahost--entry item mediahost--shared) entry))
                  tabulated-list-entries))
    (mediahost--print-keeping-row)))

(defun mediahost-refresh ()
  "Ask again for what this list shows."
  (interactive)
  (when mediahost--source
    (mediahost--fill (mediahost-request (car mediahost--source) (cdr mediahost--source)))))

(defun mediahost--turn-page (cursor-key)
  (let ((cursor (plist-get mediahost--page cursor-key)))
    (unless cursor
      (user-error (if (eq cursor-key :next) "No next page" "No previous page")))
    (let ((params (plist-put (copy-sequence (cdr mediahost--source)) :cursor cursor)))
      (setq mediahost--source (cons (car mediahost--source) params))
      (mediahost--fill (mediahost-request (car mediahost--source) params))
      (goto-char (point-min)))))

(defun mediahost-next-page ()
  "The next page of this list."
  (interactive)
  (mediahost--turn-page :next))

(defun mediahost-previous-page ()
  "The previous page of this list."
  (interactive)
  (mediahost--turn-page :prev))

(defconst mediahost--leaf-kinds '("episode" "video")
  "Kinds that have nothing inside: RET shows their details.")

(defun mediahost-open (&optional item)
  "Open ITEM (the one at point): what is inside it, else its details."
  (interactive)
  (let* ((item (or item (mediahost--item-at-point)))
         (id (plist-get item :id)))
    (if (member (plist-get item :kind) mediahost--leaf-kinds)
        (mediahost-show id)
      (let ((page (mediahost-request "media.children" (list :id id))))
        (if (= (length (plist-get page :items)) 0)
            (mediahost-show id)
          (with-current-buffer (get-buffer-create (mediahost--buffer-name (plist-get item :title)))
            (mediahost-list-mode)
            (setq mediahost--source (cons "media.children" (list :id id)))
            (mediahost--fill page)
            (pop-to-buffer-same-window (current-buffer))))))))

(defun mediahost-toggle-favorite ()
  "Add the item at point to the favorites, or take it out."
  (interactive)
  (let* ((item (copy-sequence (mediahost--item-at-point)))
         (id (plist-get item :id))
         (was (eq (plist-get item :favorite) t)))
    (mediahost-request (if was "favorites.remove" "favorites.add") (list :id id))
    (setq item (plist-put item :favorite (if was :json-false t)))
    (mediahost--update-item item)
    (message "mediahost: %s %s the favorites" (plist-get item :title) (if was "taken out of" "added to"))))

(defun mediahost-download ()
  "Download the item at point's media; progress shows in `mediahost-downloads'."
  (interactive)
  (let* ((item (mediahost--item-at-point))
         (download (mediahost-request "downloads.start" (list :id (plist-get item :id)))))
    (puthash (plist-get download :id)
             (list :state (plist-get download :state) :bytes (plist-get download :bytes)
                   :total (plist-get download :total) :title (plist-get download :title))
             mediahost--downloads)
    (mediahost--downloads-changed)
    (message "mediahost: downloading %s (M-x mediahost-downloads shows it)" (plist-get download :title))))

(defun mediahost-play (&optional item)
  "Play ITEM (the one at point) in the player mediahost is set up with."
  (interactive)
  (let* ((item (or item (mediahost--item-at-point)))
         (result (mediahost-request "player.open" (list :id (plist-get item :id)))))
    (message "mediahost: %s %s" (if (eq (plist-get result :queued) t) "queued" "playing")
             (or (plist-get item :title) (plist-get result :target)))))

(defun mediahost-artwork (&optional item)
  "Show ITEM's (the one at point's) image.
Inline in graphical Emacs, else its file name in the echo area."
  (interactive)
  (let* ((item (or item (mediahost--item-at-point)))
         (path (plist-get (mediahost-request "media.artwork" (list :id (plist-get item :id))) :path)))
    (if (and (display-graphic-p) (image-type-available-p 'png))
        (with-current-buffer (get-buffer-create "*mediahost artwork*")
          (let ((inhibit-read-only t))
            (erase-buffer)
            (insert-image (create-image path))
            (insert "\n" (mediahost--text (plist-get item :title)) "\n"))
          (special-mode)
          (display-buffer (current-buffer)))
      (message "mediahost: artwork of %s: %s" (plist-get item :title) path))
    path))

;;;; Pictures

(defvar mediahost--thumbnails (make-hash-table :test #'equal)
  "By item id: the artwork's file, or (error . MESSAGE) when it cannot be had.")

(defun mediahost--pictures-p ()
  "Whether pictures are drawn here: a graphic frame that shows images."
  (and mediahost-pictures (display-graphic-p)
       (or (image-type-available-p 'png) (image-type-available-p 'jpeg))))

(defun mediahost--picture (path max-width max-height)
  "PATH's image fitted in MAX-WIDTH x MAX-HEIGHT pixels, or nil."
  (ignore-errors (create-image path nil nil :max-width max-width :max-height max-height :ascent 'center)))

(defun mediahost--thumbnail-size ()
  "A thumbnail's size in pixels: two lines high, 16:9."
  (let ((height (* 2 (frame-char-height))))
    (cons (/ (* height 16) 9) height)))

(defun mediahost--thumbnail-columns ()
  (1+ (/ (car (mediahost--thumbnail-size)) (max 1 (frame-char-width)))))

(defun mediahost--thumbnail-cell (item)
  "ITEM's picture cell: its thumbnail once fetched, ✗ when it failed."
  (let ((known (gethash (plist-get item :id) mediahost--thumbnails)))
    (cond ((stringp known)
           (let* ((size (mediahost--thumbnail-size))
                  (image (mediahost--picture known (car size) (cdr size))))
             (if image (propertize " " 'display image 'help-echo known) "")))
          ((consp known) (propertize "✗" 'help-echo (cdr known)))
          (t ""))))

(defun mediahost--fetch-picture (id success)
  "Ask for ID's artwork without waiting: SUCCESS gets its file; a failure is kept."
  (jsonrpc-async-request (mediahost--connection) 'media.artwork (list :id id)
                         :success-fn (lambda (result) (funcall success (plist-get result :path)))
                         :error-fn (lambda (error)
                                     (puthash id (cons 'error (or (plist-get error :message) "no picture"))
                                              mediahost--thumbnails))
                         :timeout mediahost-request-timeout))

(defun mediahost--fetch-thumbnails (buffer items)
  "Fetch the thumbnails of ITEMS and show each in BUFFER's row as it arrives."
  (when (mediahost--pictures-p)
    (seq-doseq (item items)
      (let ((id (plist-get item :id)))
        (when (and (plist-get item :artwork) (not (gethash id mediahost--thumbnails)))
          (mediahost--fetch-picture
           id (lambda (path)
                (puthash id path mediahost--thumbnails)
                (when (buffer-live-p buffer)
                  (with-current-buffer buffer
                    (when-let ((entry (seq-find (lambda (e) (equal (plist-get (car e) :id) id))
                                                tabulated-list-entries)))
                      (mediahost--update-item (car entry))))))))))))

(defun mediahost--insert-picture (item)
  "Leave room for ITEM's picture at point and put it there when it arrives."
  (when (and (mediahost--pictures-p) (plist-get item :artwork))
    (let ((marker (point-marker))
          (buffer (current-buffer))
          (id (plist-get item :id)))
      (insert "\n")
      (set-marker-insertion-type marker nil)
      (mediahost--fetch-picture
       id (lambda (path)
            (when (and (buffer-live-p buffer)
                       (equal (plist-get (buffer-local-value 'mediahost--item buffer) :id) id))
              (with-current-buffer buffer
                (let ((inhibit-read-only t)
                      (image (mediahost--picture path 480 320)))
                  (save-excursion
                    (goto-char marker)
                    (if image
                        (insert-image image "[picture]")
                      (insert "(no picture: it cannot be shown)")))))))))))

;;;; Lists

(defun mediahost--list-names ()
  (mapcar (lambda (l) (plist-get l :name)) (append (mediahost-request "lists.list") nil)))

(defun mediahost-add-to-list (&optional name)
  "Add the item at point to the list NAME (made when it does not exist)."
  (interactive (list (completing-read "Add to list: " (mediahost--list-names))))
  (let ((item (mediahost--item-at-point)))
    (unless (member name (mediahost--list-names))
      (mediahost-request "lists.create" (list :name name)))
    (mediahost-request "lists.add" (list :name name :id (plist-get item :id)))
    (message "mediahost: added %s to %s" (plist-get item :title) name)))

(defvar mediahost-lists-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'mediahost-lists-open)
    (define-key map "g" #'mediahost-lists)
    map))

(define-derived-mode mediahost-lists-mode tabulated-list-mode "mediahost-lists"
  "Your lists: RET shows one.
\\{mediahost-lists-mode-map}"
  (setq tabulated-list-format [("List" 40 t) ("Items" 6 t) ("Made" 20 t)])
  (setq tabulated-list-padding 1)
  (tabulated-list-init-header))

;;;###autoload
(defun mediahost-lists ()
  "Your lists and how many items each holds."
  (interactive)
  (let ((lists (append (mediahost-request "lists.list") nil)))
    (with-current-buffer (get-buffer-create "*mediahost lists*")
      (mediahost-lists-mode)
      (setq tabulated-list-entries
            (mapcar (lambda (l)
                      (list (plist-get l :name)
                            (vector (mediahost--text (plist-get l :name))
                                    (number-to-string (plist-get l :count))
                                    (or (plist-get l :created) ""))))
                    lists))
      (tabulated-list-print)
      (pop-to-buffer-same-window (current-buffer))
      (current-buffer))))

(defun mediahost-lists-open (&optional name)
  "Show the items of the list NAME (the one at point)."
  (interactive)
  (let ((name (or name (tabulated-list-get-id) (user-error "No list on this line"))))
    (mediahost--show-page (mediahost--buffer-name name "list: ") "lists.items" (list :name name))))

;;;; The queue

(defun mediahost-enqueue (&optional next)
  "Queue the item at point: last, or first with a prefix argument NEXT."
  (interactive "P")
  (let* ((item (mediahost--item-at-point))
         (result (mediahost-request "queue.add" (list :ids (vector (plist-get item :id))
                                                      :next (if next t :json-false)))))
    (message "mediahost: queued %s %s (%d in the queue)" (plist-get item :title)
             (if next "next" "last") (plist-get result :count))))

(defvar mediahost-queue-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "M-<up>") #'mediahost-queue-move-up)
    (define-key map (kbd "M-<down>") #'mediahost-queue-move-down)
    (define-key map "k" #'mediahost-queue-remove)
    (define-key map "N" #'mediahost-queue-play-first)
    map))

(define-derived-mode mediahost-queue-mode mediahost-list-mode "mediahost-queue"
  "What plays next, in order: one queue for every front end, kept by mediahost.
M-<up> and M-<down> move the item at point, k takes it out, N plays the first.
\{mediahost-queue-mode-map}")

;;;###autoload
(defun mediahost-queue ()
  "What plays next, in order (the queue every front end shares)."
  (interactive)
  (let ((page (mediahost-request "queue.list" (list :limit 500))))
    (with-current-buffer (get-buffer-create "*mediahost queue*")
      (mediahost-queue-mode)
      (setq mediahost--source (cons "queue.list" (list :limit 500)))
      (mediahost--fill page)
      (pop-to-buffer-same-window (current-buffer))
      (current-buffer))))

(defun mediahost--queue-position ()
  "The position of the item at point in the queue, 1 first."
  (mediahost--item-at-point)
  (1+ (seq-position tabulated-list-entries (assoc (tabulated-list-get-id) tabulated-list-entries))))

(defun mediahost--queue-move (by)
  (let* ((from (mediahost--queue-position))
         (to (+ from by)))
    (when (< to 1) (user-error "It is first already"))
    (when (> to (length tabulated-list-entries)) (user-error "It is last already"))
    (mediahost-request "queue.move" (list :from from :to to))
    (mediahost-refresh)
    (goto-char (point-min))
    (forward-line (1- to))))

(defun mediahost-queue-move-up ()
  "Move the item at point one place earlier in the queue."
  (interactive)
  (mediahost--queue-move -1))

(defun mediahost-queue-move-down ()
  "Move the item at point one place later in the queue."
  (interactive)
  (mediahost--queue-move 1))

(defun mediahost-queue-remove ()
  "Take the item at point out of the queue."
  (interactive)
  (let ((item (mediahost--item-at-point)))
    (mediahost-request "queue.remove" (list :ids (vector (plist-get item :id))))
    (mediahost-refresh)
    (message "mediahost: took %s out of the queue" (plist-get item :title))))

(defun mediahost-queue-play-first ()
  "Play the queue's first item (skipping what plays now)."
  (interactive)
  (let ((status (mediahost-request "player.next")))
    (message "mediahost: playing %s" (or (plist-get (plist-get status :item) :title) "nothing"))))

;;;; Details

(defvar mediahost-details-mode-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map special-mode-map)
    (define-key map "f" #'mediahost-details-toggle-favorite)
    (define-key map "d" #'mediahost-details-download)
    (define-key map "p" #'mediahost-details-play)
    (define-key map "c" #'mediahost-details-chapters)
    (define-key map "a" #'mediahost-details-artwork)
    (define-key map (kbd "RET") #'mediahost-details-activate)
    (define-key map (kbd "TAB") #'forward-button)
    (define-key map (kbd "<backtab>") #'backward-button)
    map))

(define-derived-mode mediahost-details-mode special-mode "mediahost-item"
  "One item from mediahost: its fields, text and links.
RET on a link opens it; on a podcast's soundbite, it plays just that clip.
\\{mediahost-details-mode-map}")

(defvar-local mediahost--item nil "The item shown in a details buffer.")

(defun mediahost--item-id-p (text)
  (and (stringp text) (string-match-p "\\`[a-z][a-z0-9_-]*:[a-z]+:.+\\'" text)))

(defun mediahost--open-target (target)
  "Open TARGET: an item id here, a URL in the browser."
  (if (mediahost--item-id-p target)
      (mediahost-show target)
    (browse-url target)))

(defun mediahost--link (label target)
  "A button for TARGET: an item id opens it here, a URL in the browser."
  (insert-text-button label
                      'mediahost-target target
                      'help-echo target
                      'action (lambda (button) (mediahost--open-target (button-get button 'mediahost-target)))))

(defun mediahost--details-width ()
  "The columns a details line may take: the window's, at most 80.
A text terminal keeps the window's last column for the continuation glyph."
  (min 80 (1- (window-body-width))))

(defconst mediahost--value-column 13
  "Where a details field's value starts: after two spaces and a label of 10.")

(defun mediahost--fill-words (head words width)
  "HEAD, then WORDS a space apart, in lines of at most WIDTH columns.
Lines after the first start under the value column.  A word is never
cut: one wider than a whole line has a line of its own."
  (let ((indent (make-string mediahost--value-column ?\s))
        (lines nil)
        (line head)
        (fresh t))
    (dolist (word words)
      (cond ((and (not fresh) (<= (+ (string-width line) 1 (string-width word)) width))
             (setq line (concat line " " word)))
            ((and fresh (or (<= (+ (string-width line) (string-width word)) width)
                            (<= (string-width line) mediahost--value-column)))
             (setq line (concat line word)))
            (t (push (string-trim-right line) lines)
               (setq line (concat indent word))))
      (setq fresh nil))
    (string-join (nreverse (cons line lines)) "\n")))

(defun mediahost--words (text)
  (split-string (mediahost--text text) " " t))

(defun mediahost--insert-wrapped-field (label value width)
  "LABEL and VALUE as a details field, wrapped to WIDTH between words."
  (insert (mediahost--fill-words (format "  %-10s " label) (mediahost--words value) width) "\n"))

(defun mediahost--insert-link (label target words width)
  "A Links line: LABEL, WORDS (or none) and TARGET as a button.
Wrapped to WIDTH between words; RET anywhere on its lines opens TARGET."
  (let ((start (point))
        (head (format "  %-10s " label))
        (words (and words (mediahost--words words))))
    (if (not words)
        (insert head)
      (let ((filled (mediahost--fill-words head words width)))
        (insert filled)
        (if (<= (+ (string-width (car (last (split-string filled "\n")))) 2 (string-width target)) width)
            (insert "  ")
          (insert "\n" (make-string mediahost--value-column ?\s)))))
    (mediahost--link target target)
    (insert "\n")
    (put-text-property start (point) 'mediahost-target target)))

(defun mediahost-details-activate ()
  "Act on the line at point: play its soundbite alone, or open its link."
  (interactive)
  (let ((soundbite (get-text-property (point) 'mediahost-soundbite))
        (target (get-text-property (point) 'mediahost-target)))
    (cond (soundbite (mediahost-details-play-soundbite soundbite))
          (target (mediahost--open-target target))
          (t (user-error "Nothing here: RET opens a link or plays a soundbite")))))

(defun mediahost-show (id)
  "Show the item ID in a details buffer."
  (interactive "sItem id: ")
  (let ((item (mediahost-request "media.get" (list :id id))))
    (with-current-buffer (get-buffer-create "*mediahost item*")
      (let ((inhibit-read-only t)
            (width (mediahost--details-width)))
        (erase-buffer)
        (mediahost-details-mode)
        (setq mediahost--item item)
        (mediahost--insert-details item width))
      (goto-char (point-min))
      (pop-to-buffer (current-buffer))
      (current-buffer))))

(defun mediahost--insert-details (item width)
  "ITEM's title, picture, fields, text and links.
The Podcasting 2.0 lines wrap to WIDTH between words."
  (insert (propertize (mediahost--text (plist-get item :title)) 'face 'bold) "\n\n")
  (mediahost--insert-picture item)
  (cl-flet ((fields (fields)
              (dolist (field fields)
                (when (and (cdr field) (not (equal (cdr field) "")))
                  (insert (format "  %-10s %s\n" (car field) (mediahost--text (cdr field))))))))
    (fields `(("id" . ,(plist-get item :id))
              ("kind" . ,(plist-get item :kind))
              ("from" . ,(plist-get item :subtitle))
              ("by" . ,(plist-get item :creator))
              ("published" . ,(plist-get item :published))
              ("duration" . ,(and (plist-get item :duration) (mediahost--duration (plist-get item :duration))))))
    (pcase-dolist (`(,label . ,value) (mediahost--namespace-fields item))
      (mediahost--insert-wrapped-field label value width))
    (mediahost--insert-soundbites item width)
    (fields `(("played" . ,(cond ((eq (plist-get item :played) t) "yes")
                                 ((plist-get item :position)
                                  (format "stopped at %s" (mediahost--duration (plist-get item :position))))))
              ("favorite" . ,(if (eq (plist-get item :favorite) t) "★ yes" "no"))
              ("download" . ,(let ((d (plist-get item :download)))
                               (and d (string-join (delq nil (list (plist-get d :state) (plist-get d :path))) " ")))))))
  (when-let ((summary (plist-get item :summary)))
    (insert "\n" summary "\n"))
  (let ((links nil))
    (when-let ((url (plist-get item :url))) (push (list "page" url) links))
    (when-let ((feed (plist-get item :feed))) (push (list "feed" feed) links))
    (when-let ((media (plist-get (plist-get item :enclosure) :url))) (push (list "media" media) links))
    (seq-doseq (entity (plist-get item :entities))
      (let ((value (plist-get entity :value)))
        (when (and value (member (plist-get entity :type) '("url" "media")))
          (push (list (plist-get entity :type) value) links))))
    (let ((extra (plist-get item :extra)))
      (while extra
        (let ((key (substring (symbol-name (car extra)) 1)) (value (cadr extra)))
          (when (or (mediahost--item-id-p value) (and (stringp value) (string-match-p "\\`https?://" value)))
            (push (list key value) links)))
        (setq extra (cddr extra))))
    (setq links (append (nreverse links) (mediahost--namespace-links item)))
    (when links
      (insert "\nLinks:\n")
      (pcase-dolist (`(,label ,target ,words) links)
        (mediahost--insert-link label target words width)))))

(defun mediahost-details-toggle-favorite ()
  (interactive)
  (let* ((id (plist-get mediahost--item :id))
         (was (eq (plist-get mediahost--item :favorite) t)))
    (mediahost-request (if was "favorites.remove" "favorites.add") (list :id id))
    (mediahost-show id)))

(defun mediahost-details-download ()
  (interactive)
  (let ((download (mediahost-request "downloads.start" (list :id (plist-get mediahost--item :id)))))
    (message "mediahost: downloading %s" (plist-get download :title))))

(defun mediahost-details-play ()
  (interactive)
  (mediahost-play mediahost--item))

(defun mediahost-details-artwork ()
  (interactive)
  (mediahost-artwork mediahost--item))

(defun mediahost-details-chapters ()
  (interactive)
  (mediahost-chapters mediahost--item))

;;;; Podcasting 2.0

;; An episode's or show's `namespace' (rpc-spec's PodcastNamespace), drawn with the REPL's
;; words and in its order; what has a link goes to the Links, with its words, to be opened
;; as the other links are.  Each element absent costs nothing.

(defun mediahost--person (person)
  "\"Ada Lovelace (guest)\"; a group other than cast after the role."
  (let ((role (plist-get person :role))
        (group (plist-get person :group)))
    (concat (mediahost--text (plist-get person :name))
            (if (and role (not (equal role "")))
                (format " (%s)" (if (member group '(nil "" "cast")) role (concat role ", " group)))
              ""))))

(defun mediahost--format (alternate)
  "An alternate enclosure as the REPL words it: \"audio/opus 96 kb/s en\"."
  (let ((bitrate (plist-get alternate :bitrate))
        (height (plist-get alternate :height)))
    (string-join (delq nil (list (plist-get alternate :type)
                                 (and (numberp bitrate) (format "%d kb/s" (truncate bitrate 1000)))
                                 (and (numberp height) (format "%dp" height))
                                 (plist-get alternate :language)
                                 (plist-get alternate :title)))
                 " ")))

(defun mediahost--namespace-fields (item)
  "ITEM's Podcasting 2.0 fields as (LABEL . VALUE).
A list's values after its first have the label \"\".  Soundbites and
what has a link are drawn apart."
  (let ((namespace (plist-get item :namespace))
        (fields nil))
    (cl-labels ((add (label value)
                  (when (and (stringp value) (not (string-empty-p value)))
                    (push (cons label value) fields)))
                (each (label values)
                  (let ((first t))
                    (dolist (value values)
                      (when (and (stringp value) (not (string-empty-p value)))
                        (push (cons (if first label "") value) fields)
                        (setq first nil))))))
      (when-let ((live (plist-get namespace :live)))
        (let ((status (plist-get live :status))
              (start (plist-get live :start))
              (end (plist-get live :end)))
          (add "live" (string-join (delq nil (list (if (equal status "live") "live now" status)
                                                   (and start (concat "from " start))
                                                   (and end (concat "to " end))))
                                   " "))))
      (when-let ((name (plist-get namespace :seasonName)))
        (let ((number (plist-get (plist-get item :extra) :season)))
          (add "season" (if number (format "%s: %s" number name) name))))
      (add "episode" (plist-get namespace :episodeDisplay))
      (each "people" (mapcar #'mediahost--person (plist-get namespace :people)))
      (each "funding" (mapcar (lambda (funding) (plist-get funding :text))
                              (seq-remove (lambda (funding) (plist-get funding :url))
                                          (plist-get namespace :funding))))
      (each "recommends" (mapcar (lambda (show) (or (plist-get show :title)
                                                    (concat "podcast:guid " (plist-get show :feedGuid))))
                                 (seq-remove (lambda (show) (plist-get show :feedURL))
                                             (plist-get namespace :podroll))))
      (each "formats" (mapcar #'mediahost--format (plist-get namespace :alternateEnclosures)))
      (let ((license (plist-get namespace :license)))
        (unless (plist-get license :url) (add "license" (plist-get license :text))))
      (add "location" (plist-get (plist-get namespace :location) :name))
      (when-let ((locked (plist-get namespace :locked)))
        (let ((owner (plist-get locked :owner)))
          (add "locked" (if (eq (plist-get locked :locked) t)
                            (concat "yes: not to be imported elsewhere" (if owner (format " (owner %s)" owner) ""))
                          "no"))))
      (when-let ((value (plist-get namespace :value)))
        (let* ((recipients (append (plist-get value :recipients) nil))
               (names (delq nil (mapcar (lambda (r) (plist-get r :name)) recipients))))
          (add "value" (format "%s %s to %d recipient%s%s; said, not paid"
                               (plist-get value :type) (plist-get value :method) (length recipients)
                               (if (= (length recipients) 1) "" "s")
                               (if names (format " (%s)" (string-join (seq-take names 3) ", ")) ""))))))
    (nreverse fields)))

(defun mediahost--namespace-links (item)
  "ITEM's Podcasting 2.0 links as (LABEL TARGET WORDS).
People, funding, the podroll's shows, trailers and the license."
  (let ((namespace (plist-get item :namespace))
        (links nil))
    (seq-doseq (person (plist-get namespace :people))
      (when (plist-get person :link)
        (push (list "person" (plist-get person :link) (plist-get person :name)) links)))
    (seq-doseq (funding (plist-get namespace :funding))
      (when (plist-get funding :url)
        (push (list "funding" (plist-get funding :url) (plist-get funding :text)) links)))
    (seq-doseq (show (plist-get namespace :podroll))
      (when (plist-get show :feedURL)
        (push (list "recommends" (plist-get show :feedURL) (plist-get show :title)) links)))
    (seq-doseq (trailer (plist-get namespace :trailers))
      (when (plist-get trailer :url)
        (push (list "trailer" (plist-get trailer :url) (plist-get trailer :title)) links)))
    (let ((license (plist-get namespace :license)))
      (when (plist-get license :url)
        (push (list "license" (plist-get license :url) (plist-get license :text)) links)))
    (nreverse links)))

(defun mediahost--insert-soundbites (item width)
  "ITEM's soundbites, a line each: \"soundbite K  m:ss–m:ss  title\".
RET on one plays just that clip."
  (let ((number 0))
    (seq-doseq (bite (plist-get (plist-get item :namespace) :soundbites))
      (setq number (1+ number))
      (let* ((start (or (plist-get bite :start) 0))
             (label (format "soundbite %d" number))
             (head (format "  %s  %s–%s  " label (mediahost--duration start)
                           (mediahost--duration (+ start (or (plist-get bite :duration) 0)))))
             (line-start (point)))
        (insert (string-trim-right (mediahost--fill-words head (mediahost--words (plist-get bite :title)) width))
                "\n")
        ;; RET anywhere on its lines (the indentation and the line's end too) plays it; the
        ;; label is a button as well, for TAB and the mouse.
        (put-text-property line-start (point) 'mediahost-soundbite number)
        (make-text-button (+ line-start 2) (+ line-start 2 (length label))
                          'mediahost-soundbite number
                          'help-echo "RET plays this soundbite alone"
                          'action (lambda (button)
                                    (mediahost-details-play-soundbite (button-get button 'mediahost-soundbite))))))))

(defun mediahost-details-play-soundbite (number)
  "Play just soundbite NUMBER (1 first) of the item shown.
That is `player.open' with `soundbite'."
  (interactive (list (or (get-text-property (point) 'mediahost-soundbite)
                         (user-error "No soundbite on this line"))))
  (let ((result (mediahost-request "player.open" (list :id (plist-get mediahost--item :id) :soundbite number))))
    (message "mediahost: %s soundbite %d of %s" (if (eq (plist-get result :queued) t) "queued" "playing")
             number (or (plist-get mediahost--item :title) (plist-get result :target)))))

;;;; Chapters

(defvar-local mediahost--chapters-item nil "The item whose chapters a buffer lists.")

(defvar mediahost-chapters-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'mediahost-chapters-go)
    (define-key map "g" #'mediahost-chapters-refresh)
    map))

(define-derived-mode mediahost-chapters-mode tabulated-list-mode "mediahost-chapters"
  "An item's chapters: RET moves to one while it plays, or plays it from there.
\\{mediahost-chapters-mode-map}"
  (setq tabulated-list-format [("#" 3 nil :right-align t) ("Start" 8 nil :right-align t) ("Title" 60 nil)])
  (setq tabulated-list-padding 1)
  (tabulated-list-init-header))

(defun mediahost-chapters (&optional item)
  "List ITEM's (the one at point's) chapters.
Markers outside the table of contents are left out."
  (interactive)
  (let* ((item (or item (mediahost--item-at-point)))
         (result (mediahost-request "media.chapters" (list :id (plist-get item :id))))
         (number 0)
         (entries nil))
    (dolist (chapter (append (plist-get result :chapters) nil))
      (when (eq (plist-get chapter :toc) t)
        (setq number (1+ number))
        (push (list (cons number chapter)
                    (vector (number-to-string number)
                            (mediahost--duration (floor (plist-get chapter :start)))
                            (mediahost--text (plist-get chapter :title))))
              entries)))
    (with-current-buffer (get-buffer-create (mediahost--buffer-name (plist-get item :title) "chapters: "))
      (mediahost-chapters-mode)
      (setq mediahost--chapters-item item)
      (setq tabulated-list-entries (nreverse entries))
      (tabulated-list-print)
      (unless tabulated-list-entries
        (message "mediahost: no chapters: the service, a downloaded file and the description have none"))
      (pop-to-buffer-same-window (current-buffer))
      (current-buffer))))

(defun mediahost-chapters-refresh ()
  "List the chapters again."
  (interactive)
  (mediahost-chapters mediahost--chapters-item))

(defun mediahost-chapters-go ()
  "Move to the chapter at point while its item plays, or play it from there."
  (interactive)
  (let* ((row (or (tabulated-list-get-id) (user-error "No chapter on this line")))
         (number (car row))
         (id (plist-get mediahost--chapters-item :id))
         (status (mediahost-request "player.status"))
         (playing (plist-get (plist-get status :item) :id)))
    (if (and (equal playing id) (not (equal (plist-get status :state) "stopped")))
        (mediahost-request "player.chapter" (list :to (number-to-string number)))
      (mediahost-request "player.open" (list :id id :chapter number :now t)))
    (message "mediahost: chapter %d: %s" number (plist-get (cdr row) :title))))

;;;; Commands

(defun mediahost--provider-ids ()
  (or mediahost--providers
      (setq mediahost--providers
            (mapcar (lambda (p) (plist-get p :id)) (append (mediahost-request "providers.list") nil)))))

(defun mediahost--read-provider (prompt &optional allow-all)
  (let ((choice (completing-read prompt (append (and allow-all '("all")) (mediahost--provider-ids)) nil t
                                 nil nil (and allow-all "all"))))
    (if (equal choice "all") nil choice)))

;;;###autoload
(defun mediahost-search (provider query)
  "Search PROVIDER (nil: every provider) for QUERY."
  (interactive
   (let ((provider (mediahost--read-provider "Search (provider or all): " t)))
     (list provider (read-string (format "Search %s for: " (or provider "everything"))))))
  (mediahost--show-page (mediahost--buffer-name query) "media.search"
                        (append (list :query query) (and provider (list :provider provider)))))

;;;###autoload
(defun mediahost-browse (provider category)
  "Show CATEGORY (a name or id) of PROVIDER."
  (interactive
   (let* ((provider (mediahost--read-provider "Browse provider: "))
          (categories (append (mediahost-request "providers.categories" (list :provider provider)) nil))
          (names (mapcar (lambda (c) (cons (plist-get c :name) (plist-get c :id))) categories))
          (choice (completing-read "Category: " names nil t)))
     (list provider (or (cdr (assoc choice names)) choice))))
  (mediahost--show-page (mediahost--buffer-name (format "%s %s" provider category)) "media.browse"
                        (list :provider provider :category category)))

;;;###autoload
(defun mediahost-favorites (&optional provider)
  "The favorites kept by mediahost (of PROVIDER, or all)."
  (interactive (list (mediahost--read-provider "Favorites of: " t)))
  (mediahost--show-page "*mediahost favorites*" "favorites.list" (and provider (list :provider provider))))

(defvar mediahost-history-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'mediahost-history-search-again)
    (define-key map "g" #'mediahost-history)
    map))

(define-derived-mode mediahost-history-mode tabulated-list-mode "mediahost-history"
  "Past searches: RET searches again.
\\{mediahost-history-mode-map}"
  (setq tabulated-list-format [("When" 20 t) ("Provider" 12 t) ("Query" 40 t)])
  (setq tabulated-list-padding 1)
  (tabulated-list-init-header))

;;;###autoload
(defun mediahost-history ()
  "Past searches, newest first."
  (interactive)
  (let ((records (append (mediahost-request "history.list") nil)))
    (with-current-buffer (get-buffer-create "*mediahost history*")
      (mediahost-history-mode)
      (setq tabulated-list-entries
            (mapcar (lambda (r)
                      (list r (vector (or (plist-get r :at) "") (or (plist-get r :provider) "all")
                                      (mediahost--text (plist-get r :query)))))
                    records))
      (tabulated-list-print)
      (pop-to-buffer-same-window (current-buffer)))))

(defun mediahost-history-search-again ()
  "Run the search on this line again."
  (interactive)
  (let ((record (or (tabulated-list-get-id) (user-error "No search on this line"))))
    (mediahost-search (plist-get record :provider) (plist-get record :query))))

(defvar mediahost-downloads-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "g" #'mediahost-downloads)
    (define-key map "p" #'mediahost-downloads-play)
    map))

(define-derived-mode mediahost-downloads-mode tabulated-list-mode "mediahost-downloads"
  "Downloads, updated live from mediahost's notifications.
\\{mediahost-downloads-mode-map}"
  (setq tabulated-list-padding 1)
  (mediahost--downloads-format))

(defun mediahost--downloads-format ()
  "Columns for the downloads' window: the title takes what the others leave."
  ;; The padding, State 10, Done 5, Size 9, Speed 10, a space after each column but the last,
  ;; and the window's edge.
  (let ((width (window-width (get-buffer-window (current-buffer)))))
    (setq mediahost--width width)
    (setq tabulated-list-format
          (vector (list "Title" (max 10 (- width 40)) t) '("State" 10 t) '("Done" 5 t) '("Size" 9 t) '("Speed" 10 t)))
    (tabulated-list-init-header)))

(defun mediahost--bytes (count)
  (cond ((not (numberp count)) "?")
        ((>= count 1000000000) (format "%.1f GB" (/ count 1e9)))
        ((>= count 1000000) (format "%.1f MB" (/ count 1e6)))
        ((>= count 1000) (format "%.1f KB" (/ count 1e3)))
        (t (format "%d B" count))))

(defun mediahost--downloads-render ()
  (setq tabulated-list-entries
        (let (entries)
          (maphash
           (lambda (id entry)
             (let ((bytes (plist-get entry :bytes)) (total (plist-get entry :total)) (rate (plist-get entry :rate)))
               (push (list id (vector (mediahost--text (or (plist-get entry :title) id))
                                      (or (plist-get entry :state) "")
                                      (if (and (numberp total) (> total 0) (numberp bytes))
                                          (format "%d%%" (/ (* 100 bytes) total)) "")
                                      (mediahost--bytes total)
                                      (if (and (numberp rate) (> rate 0)
                                               (equal (plist-get entry :state) "running"))
                                          (concat (mediahost--bytes (round rate)) "/s") "")))
                     entries)))
           mediahost--downloads)
          (nreverse entries)))
  (unless (eql mediahost--width (window-width (get-buffer-window (current-buffer))))
    (mediahost--downloads-format))
  (tabulated-list-print t))

;;;###autoload
(defun mediahost-downloads ()
  "Downloads with their state and progress, updated as they go."
  (interactive)
  (dolist (download (append (mediahost-request "downloads.list") nil))
    (let* ((id (plist-get download :id)) (known (gethash id mediahost--downloads)))
      (puthash id (append (list :title (plist-get download :title) :state (plist-get download :state)
                                :bytes (plist-get download :bytes) :total (plist-get download :total)
                                :path (plist-get download :path))
                          (and (equal (plist-get known :state) (plist-get download :state))
                               (list :rate (plist-get known :rate))))
               mediahost--downloads)))
  (with-current-buffer (get-buffer-create "*mediahost downloads*")
    (mediahost-downloads-mode)
    (mediahost--downloads-render)
    (pop-to-buffer-same-window (current-buffer))
    (current-buffer)))

(defun mediahost-downloads-play ()
  "Play the download on this line."
  (interactive)
  (mediahost-play (list :id (or (tabulated-list-get-id) (user-error "No download on this line")))))

(provide 'mediahost)
;;; mediahost.el ends here
