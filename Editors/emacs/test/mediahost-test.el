;;; mediahost-test.el --- ERT tests of mediahost.el against `mediahost --sandbox rpc'  -*- lexical-binding: t; -*-

;; Run: MEDIAHOST_BIN=.build/debug/mediahost emacs --batch -L Editors/emacs \
;;        -l Editors/emacs/test/mediahost-test.el -f ert-run-tests-batch-and-exit
;; Each test drives the user-level commands on a fresh data dir and checks the buffers.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'mediahost)

(defvar mediahost-test--messages nil "Messages shown during a test, newest first.")

(defun mediahost-test--record (format-string &rest args)
  (when format-string
    (push (apply #'format format-string args) mediahost-test--messages)))

(defmacro mediahost-test--with-sandbox (&rest body)
  "Run BODY with a connection to `mediahost --sandbox rpc' on a fresh data dir."
  (declare (indent 0))
  `(let* ((data-dir (make-temp-file "mediahost-emacs-" t))
          (process-environment
           (append (list (concat "MEDIAHOST_DATA_DIR=" data-dir)
                         (concat "XDG_CONFIG_HOME=" data-dir "/config")
                         (concat "XDG_CACHE_HOME=" data-dir "/cache")
                         "MEDIAHOST_SANDBOX_MEDIA_RATE=3000000"
                         "MEDIAHOST_PLAYER=true"
                         "NO_COLOR=1")
                   process-environment))
          (mediahost-program (or (getenv "MEDIAHOST_BIN") "mediahost"))
          (mediahost-arguments (list "--sandbox" "--data-dir" data-dir))
          (mediahost-test--messages nil))
     (clrhash mediahost--downloads)
     (advice-add 'message :before #'mediahost-test--record)
     (unwind-protect
         (progn ,@body)
       (advice-remove 'message #'mediahost-test--record)
       (mediahost-shutdown)
       (delete-directory data-dir t))))

(defun mediahost-test--text (buffer)
  (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max))))

(defun mediahost-test--wait (predicate &optional seconds)
  "Wait for PREDICATE, reading the connection's notifications, up to SECONDS (30)."
  (let ((deadline (+ (float-time) (or seconds 30))))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall predicate)))

(defun mediahost-test--row-title ()
  (plist-get (tabulated-list-get-id) :title))

(ert-deftest mediahost-search-open-and-details ()
  (mediahost-test--with-sandbox
    (let ((buffer (mediahost-search "podcasts" "kitchen")))
      (should (string-match-p "The Electric Kitchen 77" (mediahost-test--text buffer)))
      ;; Every row is a podcast: the title's header says so once, rows have no kind column.
      (should (string-match-p "podcasts" (with-current-buffer buffer (car (aref tabulated-list-format 0)))))
      (with-current-buffer buffer
        (goto-char (point-min))
        (should (equal (mediahost-test--row-title) "The Electric Kitchen 77"))
        ;; RET on a show: its episodes, newest first.
        (mediahost-open))
      (let ((episodes (get-buffer "*mediahost: The Electric Kitchen 77*")))
        (should episodes)
        (should (string-match-p "Episode [0-9]+:" (mediahost-test--text episodes)))
        (with-current-buffer episodes
          (goto-char (point-min))
          (should (equal (plist-get (tabulated-list-get-id) :kind) "episode"))
          ;; RET on an episode: its details, with the media file as a link.
          (mediahost-open))
        (let ((details (mediahost-test--text "*mediahost item*")))
          (should (string-match-p "^  kind +episode" details))
          (should (string-match-p "^  duration +[0-9]+:" details))
          (should (string-match-p "Links:" details))
          (should (string-match-p "media +http://127\\.0\\.0\\.1:[0-9]+/podcasts/media/" details)))
        (with-current-buffer "*mediahost item*"
          (goto-char (point-min))
          (should (forward-button 1)))))
    ;; Every provider at once: a heading-free list with items of several providers.
    (let ((all (mediahost-search nil "swift")))
      (with-current-buffer all
        (should (> (length tabulated-list-entries) 1))
        (should (> (length (delete-dups (mapcar (lambda (e) (plist-get (car e) :provider))
                                                tabulated-list-entries)))
                   1))))))

(ert-deftest mediahost-browse-and-page ()
  (mediahost-test--with-sandbox
    (let ((buffer (mediahost-browse "podcasts" "1301")))
      (with-current-buffer buffer
        (goto-char (point-min))
        (let ((first (mediahost-test--row-title)))
          (should first)
          (mediahost-next-page)
          (goto-char (point-min))
          (should-not (equal (mediahost-test--row-title) first))
          (should (string-match-p "podcast" (car (aref tabulated-list-format 0))))
          (mediahost-previous-page)
          (goto-char (point-min))
          (should (equal (mediahost-test--row-title) first))
          (should-error (mediahost-previous-page) :type 'user-error))))))

(ert-deftest mediahost-favorite-shows-in-favorites ()
  (mediahost-test--with-sandbox
    (let ((buffer (mediahost-search "podcasts" "kitchen")))
      (with-current-buffer buffer
        (goto-char (point-min))
        (mediahost-toggle-favorite)
        (goto-char (point-min))
        (should (eq (plist-get (tabulated-list-get-id) :favorite) t))
        (should (string-match-p "The Electric Kitchen 77 .*★" (mediahost-test--text buffer))))
      (let ((favorites (mediahost-favorites)))
        (should (string-match-p "The Electric Kitchen 77" (mediahost-test--text favorites)))
        (with-current-buffer favorites
          (goto-char (point-min))
          (mediahost-toggle-favorite)
          (mediahost-refresh)
          (should-not (string-match-p "The Electric Kitchen 77" (mediahost-test--text favorites)))))
      ;; The search is in the history, and RET there searches again.
      (let ((history (mediahost-history)))
        (should (string-match-p "podcasts +kitchen" (mediahost-test--text history)))
        (let ((again (with-current-buffer history
                       (goto-char (point-min))
                       (mediahost-history-search-again))))
          (should (string-match-p "The Electric Kitchen 77" (mediahost-test--text again))))))))

(ert-deftest mediahost-download-progress-becomes-a-completed-row ()
  (mediahost-test--with-sandbox
    (let ((progress-seen nil))
      (advice-add 'mediahost--downloads-changed :before
                  (lambda () (maphash (lambda (_ e) (when (equal (plist-get e :state) "running")
                                                      (setq progress-seen t)))
                                      mediahost--downloads))
                  '((name . mediahost-test-progress)))
      (unwind-protect
          (progn
            (with-current-buffer (mediahost-search "podcasts" "kitchen")
              (goto-char (point-min))
              (mediahost-open))
            (with-current-buffer "*mediahost: The Electric Kitchen 77*"
              (goto-char (point-min))
              (mediahost-download))
            (let ((downloads (mediahost-downloads)))
              (should (mediahost-test--wait
                       (lambda () (string-match-p "completed" (mediahost-test--text downloads)))
                       60))
              (should progress-seen)
              (should (string-match-p "100%" (mediahost-test--text downloads)))
              (should (equal mediahost--mode-line ""))
              (should (seq-some (lambda (m) (string-match-p "downloaded .*\\.mp3" m)) mediahost-test--messages))))
        (advice-remove 'mediahost--downloads-changed 'mediahost-test-progress)))))

(ert-deftest mediahost-chapters-and-play-from-one ()
  (mediahost-test--with-sandbox
    (with-current-buffer (mediahost-chapters '(:id "podcasts:episode:1999999997:1999999997-ep-3" :title "Tone 3"))
      (should (equal (mapcar (lambda (e) (aref (cadr e) 2)) tabulated-list-entries)
                     '("Opening" "The long middle" "Part three" "Closing")))
      (should (equal (aref (cadr (nth 3 tabulated-list-entries)) 1) "2:30"))
      (goto-char (point-min))
      (forward-line 1)
      (mediahost-chapters-go)
      (should (string-match-p "chapter 2: The long middle" (car mediahost-test--messages))))))

(ert-deftest mediahost-play-and-artwork ()
  (mediahost-test--with-sandbox
    (with-current-buffer (mediahost-search "podcasts" "kitchen")
      (goto-char (point-min))
      (let ((path (mediahost-artwork)))
        (should (file-exists-p path))
        (should (seq-some (lambda (m) (string-match-p "artwork of The Electric Kitchen 77" m)) mediahost-test--messages)))
      ;; MEDIAHOST_PLAYER is `true' here: the show's newest episode is handed to it.
      (mediahost-play)
      (should (string-match-p "playing The Electric Kitchen 77" (car mediahost-test--messages))))))

;; A graphic frame is stood in for (batch Emacs has none): what is drawn is what `create-image'
;; was given, an image of the artwork file mediahost fetched.
(defmacro mediahost-test--in-a-graphic-frame (&rest body)
  (declare (indent 0))
  `(cl-letf (((symbol-function 'display-graphic-p) (lambda (&rest _) t))
             ((symbol-function 'image-type-available-p) (lambda (&rest _) t))
             ((symbol-function 'create-image) (lambda (file &rest _) (list 'image :type 'png :file file)))
             ((symbol-function 'frame-char-height) (lambda (&rest _) 16))
             ((symbol-function 'frame-char-width) (lambda (&rest _) 8)))
     ,@body))

(defun mediahost-test--images (buffer)
  "The files of the images BUFFER displays."
  (with-current-buffer buffer
    (let ((files nil) (position (point-min)))
      (while (< position (point-max))
        (let ((display (get-text-property position 'display)))
          (when (eq (car-safe display) 'image) (push (plist-get (cdr display) :file) files)))
        (setq position (1+ position)))
      (delete-dups (nreverse files)))))

(defun mediahost-test--has-image (line)
  "Whether LINE (text with properties) displays an image."
  (seq-some (lambda (i) (eq (car-safe (get-text-property i 'display line)) 'image))
            (number-sequence 0 (1- (length line)))))

(ert-deftest mediahost-pictures-in-listings-and-details ()
  (mediahost-test--with-sandbox
    (clrhash mediahost--thumbnails)
    (mediahost-test--in-a-graphic-frame
      (let ((buffer (mediahost-search "youtube" "swift")))
        ;; The rows come first; their thumbnails follow as they arrive, one per row.
        (should (mediahost-test--wait
                 (lambda ()
                   (with-current-buffer buffer
                     (= 20 (seq-count #'mediahost-test--has-image (split-string (buffer-string) "\n" t)))))))
        (should (seq-every-p #'file-exists-p (mediahost-test--images buffer)))
        (with-current-buffer buffer
          (goto-char (point-min))
          (let ((details (mediahost-show (plist-get (tabulated-list-get-id) :id))))
            (should (mediahost-test--wait (lambda () (mediahost-test--images details))))
            (should (file-exists-p (car (mediahost-test--images details))))
            ;; The details are all there below it.
            (should (string-match-p "published" (mediahost-test--text details)))))))))

(ert-deftest mediahost-errors-are-messages ()
  (mediahost-test--with-sandbox
    (let ((error (should-error (mediahost-show "podcasts:episode:nope") :type 'user-error)))
      (should (string-match-p "mediahost: " (cadr error))))
    (let ((error (should-error (mediahost-search "nosuch" "x") :type 'user-error)))
      (should (string-match-p "unknown provider" (cadr error))))
    ;; Without the sandbox, YouTube has no API key: charts need one, and the message says how
    ;; to set it (search works without, through yt-dlp).
    (mediahost-shutdown)
    (let ((mediahost-arguments nil)
          (process-environment (cons "YOUTUBE_API_KEY" process-environment)))
      (let ((error (should-error (mediahost-browse "youtube" "10") :type 'user-error)))
        (should (string-match-p "need the Data API: set YOUTUBE_API_KEY" (cadr error))))
      (mediahost-shutdown))
    (let ((mediahost-program "/nonexistent/mediahost"))
      (mediahost-shutdown)
      (let ((error (should-error (mediahost-search "podcasts" "x") :type 'user-error)))
        (should (string-match-p "mediahost is not installed" (cadr error)))))))

(ert-deftest mediahost-connection-restarts-after-the-server-dies ()
  (mediahost-test--with-sandbox
    (mediahost-search "podcasts" "kitchen")
    (let ((first mediahost--process))
      (kill-process first)
      (should (mediahost-test--wait (lambda () (not (process-live-p first))) 10))
      (let ((buffer (mediahost-search "podcasts" "garden")))
        (should (string-match-p "Garden" (mediahost-test--text buffer))))
      (should-not (eq first mediahost--process)))))

(ert-deftest mediahost-lists-gather-and-open ()
  (mediahost-test--with-sandbox
    (with-current-buffer (mediahost-search "podcasts" "kitchen")
      (goto-char (point-min))
      (mediahost-add-to-list "Road trip")
      (forward-line 1)
      (mediahost-add-to-list "Road trip"))
    (let ((lists (mediahost-lists)))
      (should (string-match-p "Road trip +2" (mediahost-test--text lists)))
      (let ((items (with-current-buffer lists (goto-char (point-min)) (mediahost-lists-open))))
        (should (string-match-p "The Electric Kitchen 77" (mediahost-test--text items)))
        (should (string-match-p "The Friendly Kitchen 94" (mediahost-test--text items)))))))

(defun mediahost-test--format-width (format)
  "Columns a row of FORMAT takes: the padding, each column and a space after all but the last."
  (+ tabulated-list-padding (apply #'+ (mapcar (lambda (column) (nth 1 column)) format))
     (1- (length format))))

(ert-deftest mediahost-queue-gathers-reorders-and-follows-changes ()
  (mediahost-test--with-sandbox
    (let (titles)
      (with-current-buffer (mediahost-search "podcasts" "kitchen")
        (goto-char (point-min))
        (dotimes (_ 3)
          (push (mediahost-test--row-title) titles)
          (mediahost-enqueue)
          (forward-line 1)))
      (setq titles (nreverse titles))
      (should (string-match-p "(3 in the queue)" (car mediahost-test--messages)))
      (let ((queue (mediahost-queue)))
        (with-current-buffer queue
          (goto-char (point-min))
          (should (equal (mediahost-test--row-title) (nth 0 titles)))
          ;; M-down: the first goes second, and point follows it.
          (mediahost-queue-move-down)
          (should (equal (mediahost-test--row-title) (nth 0 titles)))
          (goto-char (point-min))
          (should (equal (mediahost-test--row-title) (nth 1 titles)))
          (should-error (mediahost-queue-move-up) :type 'user-error)
          ;; k: out of the queue.
          (mediahost-queue-remove)
          (should (= 2 (length tabulated-list-entries)))
          (goto-char (point-min))
          (should (equal (mediahost-test--row-title) (nth 0 titles))))
        ;; A change made elsewhere (another front end) is shown when it is told: it is asked for
        ;; here without waiting, as another client's change arrives while nothing here waits.
        ;; (jsonrpc.el leaves what arrived with the answer of a request it waits for unread
        ;; until more output comes; the commands here read the queue again after their own.)
        (jsonrpc-async-request (mediahost--connection) 'queue.clear (make-hash-table) :success-fn #'ignore)
        (should (mediahost-test--wait
                 (lambda () (with-current-buffer queue (null tabulated-list-entries)))))))))

(ert-deftest mediahost-rows-fit-the-window-and-keep-point ()
  (with-temp-buffer
    (mediahost-list-mode)
    (let ((items (list (list :id "a:episode:1" :title "Second" :kind "episode")
                       (list :id "a:episode:2" :title (make-string 90 ?x) :creator "Someone With A Long Name"
                             :kind "episode" :published "2025-10-09T09:00:00Z" :duration 3725 :favorite t
                             :download '(:state "completed"))
                       (list :id "a:episode:3" :title "Third" :kind "episode"))))
      ;; Every column, a download's state included, fits the window it is laid out for.
      (dolist (width '(60 80 140))
        (let ((format (mediahost--list-format width)))
          (should (< (mediahost-test--format-width format) width))
          (should (>= (nth 1 (aref format 6)) (string-width "completed")))))
      (setq tabulated-list-format (mediahost--list-format 80))
      (setq tabulated-list-entries (mapcar #'mediahost--entry items))
      (tabulated-list-print)
      ;; `f' on the second row leaves point on it: a second `f' takes the same item.
      (goto-char (point-min))
      (forward-line 1)
      (mediahost--update-item (plist-put (copy-sequence (nth 1 items)) :favorite :json-false))
      (should (equal (plist-get (tabulated-list-get-id) :id) "a:episode:2"))
      ;; A list made in a wide window is laid out again in a narrow one.
      (setq mediahost--width 140)
      (cl-letf (((symbol-function 'window-buffer) (lambda (&optional _) (current-buffer)))
                ((symbol-function 'window-width) (lambda (&rest _) 60)))
        (mediahost--refit (selected-window)))
      (should (< (mediahost-test--format-width tabulated-list-format) 60))
      (should (equal (plist-get (tabulated-list-get-id) :id) "a:episode:2"))))
  ;; Rows of one show's episodes drop what they all share; the title's header says it once.
  (with-temp-buffer
    (mediahost-list-mode)
    (let* ((items (list (list :id "a:episode:1" :title "Episode 2: Roads" :subtitle "The Show" :kind "episode")
                        (list :id "a:episode:2" :title "Episode 1: Birds" :subtitle "The Show" :kind "episode")))
           (shared (mediahost--shared-of items))
           (format (mediahost--list-format 80 shared)))
      (should (equal shared '("The Show" . "episode")))
      (should (equal (car (aref format 0)) "The Show · episodes"))
      (should (= (length format) 5))
      (should (equal (aref (cadr (mediahost--entry (car items) shared)) 1) ""))
      (should-not (mediahost--shared-of (list (car items))))
      (should (equal (mediahost--shared-of (list (car items) (list :id "b:video:1" :title "x" :kind "video")))
                     '(nil . nil)))))
  ;; A long title makes a buffer name that leaves the mode line room.
  (should (<= (string-width (mediahost--buffer-name (make-string 90 ?x))) 40)))

(defun mediahost-test--podcast-episode (&optional namespace)
  "An episode as `media.get' answers it, as jsonrpc.el reads it (plists, vectors).
NAMESPACE, when given, is its Podcasting 2.0 `namespace' (rpc-spec's PodcastNamespace)."
  (append (list :id "podcasts:episode:feed-x:pi-7000001-2" :kind "episode"
                :title "Engines of Thought 2: Machines" :subtitle "Engines of Thought"
                :creator "Charles Babbage" :published "2026-01-01T02:00:00Z" :duration 1830
                :favorite :json-false :url "https://example.com/7000001/2"
                :feed "https://example.com/7000001.xml"
                :enclosure '(:url "https://example.com/7000001/2.mp3" :type "audio/mpeg")
                :extra '(:season "1" :episode "2") :summary "Babbage and Lovelace on the engine.")
          (and namespace (list :namespace namespace))))

(defconst mediahost-test--long-soundbite
  "Where the engine weaves algebraic patterns just as the Jacquard loom weaves flowers and leaves")

(defconst mediahost-test--long-trailer
  "Coming soon: a whole season about the engines that think, and the people who built them")

(defun mediahost-test--every-element ()
  "A `namespace' with every element the details draw."
  `(:people [(:name "Charles Babbage" :role "host" :group "cast")
             (:name "Ada Lovelace" :role "guest" :group "cast" :link "https://example.com/people/ada")
             (:name "Mary Somerville" :role "producer" :group "audio post-production")]
    :seasonName "The first" :episodeDisplay "Bonus"
    :funding [(:text "Support Engines of Thought" :url "https://example.com/7000001/support")
              (:text "Tell a friend")]
    :podroll [(:feedGuid "guid-a" :feedURL "https://example.com/analytical.xml" :title "The Analytical Hour")
              (:feedGuid "guid-b")]
    :soundbites [(:start 1 :duration 2 :title "The best bit")
                 (:start 75 :duration 30 :title ,mediahost-test--long-soundbite)
                 (:start 3600 :duration 60)]
    :live (:status "ended" :start "2026-01-01T02:00:00Z" :end "2026-01-01T03:00:00Z")
    :trailers [(:title ,mediahost-test--long-trailer :url "https://example.com/7000001/trailer.mp3")]
    :alternateEnclosures [(:type "audio/opus" :sources ["https://example.com/2.opus"] :bitrate 96000
                                 :language "en" :isDefault :json-false)
                          (:type "video/mp4" :sources ["https://example.com/2.mp4"] :height 720
                                 :isDefault :json-false)]
    :locked (:locked t :owner "babbage@example.com")
    :license (:text "CC-BY-4.0" :url "https://creativecommons.org/licenses/by/4.0/")
    :location (:name "London" :geo "geo:51.4978,-0.1745")
    :value (:type "lightning" :method "keysend"
                  :recipients [(:name "Charles" :type "node" :address "02ab" :split 90)
                               (:name "Ada" :type "node" :address "03cd" :split 10)])))

(defmacro mediahost-test--with-item (item calls &rest body)
  "Run BODY with `media.get' answering ITEM; the requests made are pushed on CALLS.
`player.open' answers that it plays; browsing a URL is a request \"browse-url\"."
  (declare (indent 2))
  `(cl-letf (((symbol-function 'mediahost-request)
              (lambda (method &optional params)
                (push (cons method params) ,calls)
                (pcase method
                  ("media.get" ,item)
                  ("player.open" '(:queued :json-false))
                  (_ (error "Not stubbed: %s" method)))))
             ((symbol-function 'browse-url)
              (lambda (url &rest _) (push (list "browse-url" url) ,calls))))
     ,@body))

(defun mediahost-test--line (regexp)
  "Go to the start of the first line matching REGEXP in the current buffer."
  (goto-char (point-min))
  (should (re-search-forward regexp nil t))
  (beginning-of-line))

(ert-deftest mediahost-details-without-a-namespace-draw-as-before ()
  (let ((calls nil))
    (mediahost-test--with-item (mediahost-test--podcast-episode) calls
      (should (equal (mediahost-test--text (mediahost-show "podcasts:episode:feed-x:pi-7000001-2"))
                     "Engines of Thought 2: Machines

  id         podcasts:episode:feed-x:pi-7000001-2
  kind       episode
  from       Engines of Thought
  by         Charles Babbage
  published  2026-01-01T02:00:00Z
  duration   30:30
  favorite   no

Babbage and Lovelace on the engine.

Links:
  page       https://example.com/7000001/2
  feed       https://example.com/7000001.xml
  media      https://example.com/7000001/2.mp3
")))))

(ert-deftest mediahost-details-draw-podcasting-2-and-play-a-soundbite ()
  (let* ((item (mediahost-test--podcast-episode (mediahost-test--every-element)))
         (id (plist-get item :id))
         (calls nil))
    (mediahost-test--with-item item calls
      (let* ((buffer (mediahost-show id))
             (text (mediahost-test--text buffer)))
        (dolist (line `("  live       ended from 2026-01-01T02:00:00Z to 2026-01-01T03:00:00Z"
                        "  season     1: The first"
                        "  episode    Bonus"
                        "  people     Charles Babbage (host)"
                        "             Ada Lovelace (guest)"
                        "             Mary Somerville (producer, audio post-production)"
                        "  funding    Tell a friend"
                        "  recommends podcast:guid guid-b"
                        "  formats    audio/opus 96 kb/s en"
                        "             video/mp4 720p"
                        "  location   London"
                        "  locked     yes: not to be imported elsewhere (owner babbage@example.com)"
                        "  value      lightning keysend to 2 recipients (Charles, Ada); said, not paid"
                        "  soundbite 1  0:01–0:03  The best bit"
                        "  soundbite 3  1:00:00–1:01:00"
                        "  person     Ada Lovelace  https://example.com/people/ada"
                        "  funding    Support Engines of Thought  https://example.com/7000001/support"
                        "  recommends The Analytical Hour  https://example.com/analytical.xml"
                        "  license    CC-BY-4.0  https://creativecommons.org/licenses/by/4.0/"))
          (should (member line (split-string text "\n"))))
        ;; In the REPL's order, between the item's own fields; links under Links.
        (should (string-match-p "duration +30:30\n  live .*\n  season .*\n  episode .*\n  people " text))
        (should (string-match-p "soundbite 3 .*\n  favorite +no\n" text))
        (should (< (string-match "^Links:" text) (string-match "^  person " text)))
        ;; Every line fits 80 columns; long ones wrap between words, under the value column.
        (dolist (line (split-string text "\n"))
          (should (<= (string-width line) 80)))
        (let ((unwrapped (replace-regexp-in-string "\n             " " " text)))
          (should (string-match-p (concat "^  soundbite 2  1:15–1:45  " (regexp-quote mediahost-test--long-soundbite) "$")
                                  unwrapped))
          (should (string-match-p (concat "^  trailer    " (regexp-quote mediahost-test--long-trailer)
                                          " +https://example.com/7000001/trailer\\.mp3$")
                                  unwrapped)))
        (should (string-match-p "^  soundbite 2 .* as\n             the Jacquard loom" text))
        (with-current-buffer buffer
          ;; RET on soundbite 2's second line plays just that clip.
          (mediahost-test--line "^  soundbite 2 ")
          (forward-line 1)
          (call-interactively (key-binding (kbd "RET")))
          (should (equal (car calls) (list "player.open" :id id :soundbite 2)))
          ;; On soundbite 1's label (a button, TAB reaches it) too.
          (mediahost-test--line "^  soundbite 1 ")
          (forward-button 1)
          (should (equal (button-label (button-at (point))) "soundbite 1"))
          (push-button)
          (should (equal (car calls) (list "player.open" :id id :soundbite 1)))
          ;; A link's words and its URL open it, on any of its lines.
          (mediahost-test--line "^  trailer ")
          (call-interactively (key-binding (kbd "RET")))
          (should (equal (car calls) '("browse-url" "https://example.com/7000001/trailer.mp3")))
          (mediahost-test--line "^  recommends The Analytical Hour")
          (forward-button 1)
          (push-button)
          (should (equal (car calls) '("browse-url" "https://example.com/analytical.xml")))
          (mediahost-test--line "^  people ")
          (should-error (call-interactively (key-binding (kbd "RET"))) :type 'user-error))))
    ;; Each element alone: only the people, and only their lines are added.
    (let ((people (mediahost-test--podcast-episode '(:people [(:name "Ada Lovelace" :role "guest" :group "cast")])))
          (calls nil))
      (mediahost-test--with-item people calls
        (let ((text (mediahost-test--text (mediahost-show (plist-get people :id)))))
          (should (string-match-p "duration +30:30\n  people     Ada Lovelace (guest)\n  favorite +no\n" text))
          (should (string-match-p "Links:\n  page .*\n  feed .*\n  media .*\n\\'" text)))))))

(ert-deftest mediahost-sandbox-podcast-people-in-details ()
  ;; The Podcast Index replica's feeds name their hosts and guests: a search by person finds
  ;; episodes whose items carry them.
  (mediahost-test--with-sandbox
    (with-current-buffer (mediahost-search "podcastindex" "person:ada lovelace")
      (goto-char (point-min))
      (let ((item (tabulated-list-get-id)))
        (should (equal (plist-get item :title) "Engines of Thought 2: Machines"))
        (with-temp-buffer
          (mediahost--insert-details item 80)
          (let ((text (buffer-string)))
            (should (string-match-p "^  people     Charles Babbage (host)\n             Ada Lovelace (guest)$" text))))))))

;;; mediahost-test.el ends here

(ert-deftest mediahost-mode-line-shows-the-percent-sign ()
  ;; The mode line reads its text as a format: a bare `%' would vanish.
  (let ((mediahost--downloads (make-hash-table :test 'equal))
        (mediahost--player '(:state "playing" :item (:title "100% Pure")))
        (global-mode-string nil))
    (puthash "x" '(:state "running" :bytes 45 :total 100) mediahost--downloads)
    (mediahost--update-mode-line)
    ;; Batch Emacs renders no mode line (`format-mode-line' gives ""): the format is checked.
    (should (equal mediahost--mode-line " ⬇1 45%% ▶ 100%% Pure"))))
