"""The web remote in real browsers: Playwright (PyPI, pinned in the Makefile) driving Debian's
chromium and firefox-esr, headless, against `mediahost serve --listen` with the sandbox and real
mpv (no audio or video out). What a person does on the page is checked where it lands (mpv's
state read back through `mediahost call player.status`, the library's queue), and what is done
at the desk (the REPL, `mediahost call`) is checked on the page. Then the attacks, against a
service of their own: no or a wrong Origin, a missing or revoked token, pairing brute force, a
100 MB message, a client that never reads, 200 open sockets.

Run by `make test` (`make test-web`): MEDIAHOST_BIN names the binary.
"""
import json, os, re, shutil, subprocess, sys, tempfile, threading, time, unittest, urllib.error, urllib.request
from http.cookiejar import CookieJar

from playwright.sync_api import sync_playwright

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rawws import RawWebSocket, Refused  # noqa: E402

BIN = os.path.abspath(os.environ.get("MEDIAHOST_BIN", ".build/debug/mediahost"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHROMIUM = os.environ.get("MEDIAHOST_TEST_CHROMIUM", "/usr/bin/chromium")
FIREFOX = os.environ.get("MEDIAHOST_TEST_FIREFOX", "/usr/bin/firefox-esr")
RADIO = "podcasts:podcast:1999999997"
EPISODE = "podcasts:episode:1999999997:1999999997-ep-{}"
# Generous: a busy 2-core machine runs the browsers, mpv, the service and the sandbox at once.
DEADLINE = 30


def wait_for(condition, what, deadline=DEADLINE):
    end = time.monotonic() + deadline
    last = None
    while time.monotonic() < end:
        try:
            last = condition()
            if last:
                return last
        except Exception as error:  # a state still coming
            last = error
        time.sleep(0.1)
    raise AssertionError(f"{what} within {deadline} s (last: {last!r})")


def start_sandbox():
    process = subprocess.Popen([BIN, "sandbox", "--port", "0", "--media-rate", "150000"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    settings = {}
    end = time.monotonic() + 60
    for line in process.stdout:
        name, sep, value = line.strip().rpartition(" ")[2].partition("=")
        if sep and name.isupper():
            settings[name] = value
        if "YOUTUBE_API_KEY" in settings or time.monotonic() > end:
            break
    threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
    if "MEDIAHOST_PODCASTS_BASE_URL" not in settings:
        process.kill()
        raise RuntimeError("mediahost sandbox did not print its settings")
    return process, settings


class Service:
    """`mediahost serve --listen 127.0.0.1:PORT` on a data dir of its own."""

    def __init__(self, settings, port=0):
        self.folder = tempfile.mkdtemp(prefix="mediahost-web-")
        self.env = dict(os.environ, **settings, MEDIAHOST_DATA_DIR=self.folder + "/data",
                        
                        MEDIAHOST_PLAYER="mpv --ao=null --vo=null", MEDIAHOST_LOG_LEVEL="warning",
                        MEDIAHOST_DESKTOP_MEDIA_KEYS="off", XDG_RUNTIME_DIR=self.folder + "/run",
                        XDG_CACHE_HOME=self.folder + "/cache", XDG_CONFIG_HOME=self.folder + "/config")
        os.makedirs(self.folder + "/run", mode=0o700)
        self.start(port)

    def start(self, port):
        self.log = open(self.folder + "/service.log", "a")
        self.process = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{port}"], env=self.env,
                                        stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        try:
            status = wait_for(lambda: (s := self.call("web.status")) and s["listening"] and s, "the web remote listens", 60)
        except AssertionError:
            self.process.kill()
            raise
        self.url = status["urls"][0].rstrip("/")
        self.port = int(self.url.rsplit(":", 1)[1])

    def stop(self):
        # Its mpv would play on after it (as a person's does): stopped first.
        self.run("call", "player.stop", check=False)
        self.process.terminate()
        self.process.wait(timeout=DEADLINE)
        self.log.close()

    def restart(self):
        self.stop()
        self.start(self.port)

    def run(self, *args, input=None, check=True):
        done = subprocess.run([BIN, *args], env=self.env, capture_output=True, text=True, input=input, timeout=120)
        if check and done.returncode != 0:
            raise AssertionError(f"mediahost {' '.join(args)}: {done.returncode} {done.stderr}")
        return done

    def call(self, method, params=None):
        args = ["call", method] + ([json.dumps(params)] if params is not None else [])
        done = self.run(*args, check=False)
        if done.returncode != 0:
            raise AssertionError(f"{method}: {done.stderr.strip()}")
        return json.loads(done.stdout) if done.stdout.strip() else None

    def rss_kb(self):
        """The service's resident memory and its web server's (mediahost-web, its child)."""
        total = 0
        pids = [self.process.pid]
        with open(f"/proc/{self.process.pid}/task/{self.process.pid}/children") as children:
            pids += [int(pid) for pid in children.read().split()]
        for pid in pids:
            with open(f"/proc/{pid}/status") as status:
                total += int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1))
        return total

    def pair_token(self, read_only=False):
        """A token as a browser gets it: asks, the desk confirms, the wait collects the cookie."""
        jar = CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        post = lambda path: urllib.request.Request(self.url + path, method="POST", headers={"Origin": self.url})
        code = json.load(opener.open(post("/pair/start")))["code"]
        desk = threading.Thread(target=lambda: self.run("pair", code, *(["--read-only"] if read_only else [])))
        desk.start()
        answer = json.load(opener.open(post("/pair/wait"), timeout=60))
        desk.join()
        assert answer.get("paired"), answer
        return next(cookie.value for cookie in jar if cookie.name == "mediahost")

    def close(self):
        try:
            self.stop()
        except Exception:
            self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


class HostileFiles:
    """A server of chosen bytes under chosen types, on loopback (what a feed's host may answer)."""

    def __init__(self, files):
        import http.server
        self.files = files
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body, kind = outer.files.get(self.path, (None, None))
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


class Browsers:
    """Pages of one browser engine, each paired as a person pairs it, their console errors kept."""

    def __init__(self, playwright, engine):
        self.engine = engine
        if engine == "chromium":
            self.browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        else:
            # Debian's Firefox speaks WebDriver BiDi (Playwright's "moz-firefox" channel).
            self.browser = playwright.firefox.launch(executable_path=FIREFOX, channel="moz-firefox", headless=True)
        self.errors = []

    def page(self, service, viewport=None, paired=True, read_only=False, watched=True):
        """A page; `watched`: its console errors count (not for one made to be refused)."""
        options = {"viewport": viewport} if viewport else {}
        if self.engine == "firefox":
            # What this Firefox's BiDi lacks (emulation.setMediaFeaturesOverride) is not asked.
            options["color_scheme"] = "no-override"
        context = self.browser.new_context(**options)
        page = context.new_page()
        if watched:
            page.on("console", lambda message: self.errors.append(f"{page.url}: {message.text}")
                    if message.type == "error" else None)
            page.on("pageerror", lambda error: self.errors.append(f"{page.url}: {error}"))
        page.goto(service.url + "/")
        if paired:
            page.click("#pair-start")
            page.wait_for_function("document.getElementById('pair-code').textContent.length > 0", timeout=DEADLINE * 1000)
            code = page.text_content("#pair-code")
            service.run("pair", code, *(["--read-only"] if read_only else []))
            page.wait_for_selector("#now", timeout=DEADLINE * 1000)
            wait_for(lambda: page.evaluate("host.socket && host.socket.readyState === 1"), "the page's WebSocket opens")
        return page

    def close(self):
        self.browser.close()


def player_state(page):
    return page.get_attribute("#np-play", "aria-label")


class WebRemoteTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Each made thing is undone even when a later step fails (tearDownClass would not run).
        cls.sandbox, cls.settings = start_sandbox()
        cls.addClassCleanup(cls.sandbox.kill)
        cls.service = Service(cls.settings)
        cls.addClassCleanup(cls.service.close)
        cls.playwright = sync_playwright().start()
        cls.addClassCleanup(cls.playwright.stop)
        cls.chromium = Browsers(cls.playwright, "chromium")
        cls.addClassCleanup(cls.chromium.close)
        cls.page = cls.chromium.page(cls.service)
        cls.episodes = [item["id"] for item in cls.service.call("media.children", {"id": RADIO})["items"]]

    def play_radio(self):
        self.service.call("player.open", {"id": EPISODE.format(3), "now": True})
        wait_for(lambda: self.service.call("player.status")["state"] == "playing", "mpv plays")
        wait_for(lambda: "Tone 3" in self.page.text_content("#np-title"), "the page shows what plays")

    def test_01_an_unpaired_browser_gets_only_the_pairing_page(self):
        page = self.chromium.page(self.service, paired=False, watched=False)
        self.assertTrue(page.is_visible("#pair-start"))
        self.assertFalse(page.is_visible("#now"))
        for path in ["/app.js", f"/artwork?id={RADIO}", f"/stream?id={EPISODE.format(1)}", "/rpc"]:
            status = page.evaluate("async (path) => (await fetch(path)).status", path)
            self.assertIn(status, (401, 403), path)
        opened = page.evaluate("""() => new Promise((resolve) => {
            const socket = new WebSocket(`ws://${location.host}/rpc`);
            socket.onopen = () => resolve(true); socket.onclose = () => resolve(false); })""")
        self.assertFalse(opened, "an unpaired page opened the WebSocket")
        page.context.close()

    def test_02_paired_by_its_code_at_the_desk(self):
        listed = self.service.run("pair", "--list").stdout
        self.assertIn("Chrome on Linux", listed)
        self.assertIn("full", listed)
        # The token is HttpOnly: the page's script cannot read it.
        self.assertEqual(self.page.evaluate("document.cookie"), "")
        cookie = next(c for c in self.page.context.cookies() if c["name"] == "mediahost")
        self.assertTrue(cookie["httpOnly"])
        self.assertEqual(cookie["sameSite"], "Strict")

    def test_03_a_pause_at_the_repl_is_seen_on_the_page_and_the_page_drives_mpv(self):
        self.play_radio()
        wait_for(lambda: player_state(self.page) == "Pause", "the page shows it playing")
        # The REPL, through the service as a person at the desk uses it.
        repl = self.service.run("repl", input="toggle\nquit\n")
        self.assertIn("Tone 3", repl.stdout)
        wait_for(lambda: player_state(self.page) == "Play", "the REPL's pause on the page")
        self.page.click("#np-play")
        wait_for(lambda: self.service.call("player.status")["state"] == "playing", "the page's play reaches mpv")
        self.page.click("#np-play")
        wait_for(lambda: self.service.call("player.status")["paused"], "the page's pause reaches mpv")

    def test_04_the_seek_bar_moves_mpv(self):
        self.play_radio()
        wait_for(lambda: self.page.evaluate("!document.getElementById('np-seek').disabled && "
                                            "Number(document.getElementById('np-seek').max) >= 179"), "the seek bar ready")
        self.page.evaluate("""() => { const seek = document.getElementById('np-seek');
            seek.value = '100'; seek.dispatchEvent(new Event('input')); seek.dispatchEvent(new Event('change')); }""")
        position = wait_for(lambda: (p := self.service.call("player.status").get("position", 0)) >= 99 and p,
                            "mpv at the seek bar's place")
        self.assertLess(position, 130)

    def test_04b_speed_and_volume_from_the_page_and_the_desk(self):
        self.play_radio()
        self.page.select_option("#np-speed", "1.5")
        wait_for(lambda: self.service.call("player.status").get("speed") == 1.5, "mpv at the page's speed")
        self.service.call("player.speed", {"rate": 1.25})
        wait_for(lambda: self.page.input_value("#np-speed") == "1.25", "the desk's speed on the page")
        self.page.fill("#np-volume", "40")
        self.page.dispatch_event("#np-volume", "change")
        wait_for(lambda: round(self.service.call("player.status").get("volume", 0)) == 40, "mpv at the page's volume")
        self.service.call("player.speed", {"rate": 1})
        self.service.call("player.volume", {"level": 100})

    def test_05_the_queue_reordered_on_the_page_and_at_the_desk(self):
        # Stopped: a playing mpv takes the queue's next item as it goes.
        self.service.call("player.stop")
        self.service.call("queue.clear")
        self.service.call("queue.add", {"ids": self.episodes[:3]})
        self.page.goto(self.service.url + "/#/queue")
        titles = lambda: [t.strip() for t in self.page.locator("#queue .title").all_text_contents()]
        wait_for(lambda: len(titles()) == 3, "the page lists the queue")
        first = titles()
        self.page.click(f"button[aria-label='Move {first[0]} down']")
        wait_for(lambda: [i["title"] for i in self.service.call("queue.list")["items"]] == [first[1], first[0], first[2]],
                 "the page's move in the library")
        self.service.call("queue.move", {"from": 3, "to": 1})
        wait_for(lambda: titles() == [first[2], first[1], first[0]], "the desk's move on the page")
        self.page.click(f"button[aria-label='Remove {first[1]} from the queue']")
        wait_for(lambda: len(self.service.call("queue.list")["items"]) == 2, "the page's removal in the library")

    def test_06_search_with_pictures(self):
        self.page.goto(self.service.url + "/#/search")
        self.page.fill("input[name=q]", "swift")
        self.page.press("input[name=q]", "Enter")
        self.page.wait_for_selector("#results li", timeout=DEADLINE * 1000)
        loaded = wait_for(lambda: self.page.evaluate(
            "[...document.querySelectorAll('#results img')].filter((i) => i.complete && i.naturalWidth > 0).length"),
            "a result's picture drawn")
        self.assertGreater(loaded, 0)

    def test_06b_a_pasted_feed_link_opens_its_show(self):
        feed = self.service.call("media.get", {"id": RADIO})["feed"]
        self.page.goto(self.service.url + "/#/search")
        self.page.fill("input[name=q]", feed)
        self.page.press("input[name=q]", "Enter")
        self.page.wait_for_selector("#children li", timeout=DEADLINE * 1000)
        self.assertIn("Tone 3", self.page.text_content("#children"))
        self.page.click("#children li:first-child button.play")
        wait_for(lambda: self.service.call("player.status").get("item", {}).get("title", "").startswith("Tone"),
                 "the link's episode plays at the desk")

    def test_07_a_transcript_line_plays_from_there(self):
        self.play_radio()
        self.page.goto(self.service.url + "/#/item/" + EPISODE.format(3))
        self.page.wait_for_selector("#transcript li", timeout=DEADLINE * 1000)
        self.page.fill("section[aria-label=Transcript] input", "closing words")
        wait_for(lambda: self.page.locator("#transcript .cue").count() == 1, "the search within the transcript")
        self.page.click("#transcript .cue")
        position = wait_for(lambda: (p := self.service.call("player.status").get("position", 0)) >= 150 and p,
                            "mpv at the line's time")
        self.assertLess(position, 175)

    def test_08_a_download_moves_on_the_page(self):
        self.page.goto(self.service.url + "/#/downloads")
        self.service.call("downloads.start", {"id": EPISODE.format(3)})
        bar = f"#downloads li[data-id='{EPISODE.format(3)}'] progress"
        self.page.wait_for_selector(bar, timeout=DEADLINE * 1000)
        first = wait_for(lambda: int(self.page.get_attribute(bar, "value") or 0) > 0 and int(self.page.get_attribute(bar, "value")),
                         "progress shown")
        wait_for(lambda: int(self.page.get_attribute(bar, "value") or 0) > first, "the progress moving")
        wait_for(lambda: self.page.get_attribute(bar, "value") == "100", "the download finished on the page", 90)
        # Then it streams to the browser, with Range requests.
        status, length = self.page.evaluate("""async (id) => {
            const r = await fetch('/stream?id=' + encodeURIComponent(id), { headers: { Range: 'bytes=100-199' } });
            return [r.status, (await r.arrayBuffer()).byteLength]; }""", EPISODE.format(3))
        self.assertEqual((status, length), (206, 100))
        # Done, it plays at the desk from the page, and its show is named under what plays.
        self.page.click(f"#downloads li[data-id='{EPISODE.format(3)}'] button.play")
        wait_for(lambda: self.service.call("player.status").get("item", {}).get("local"), "the downloaded file plays")
        wait_for(lambda: self.page.text_content("#np-show") == "Sandbox Radio", "the show named")

    def test_09_two_pages_at_once(self):
        self.devices_before_link = len(self.service.call("web.devices"))
        link = next(word for word in self.service.run("pair", "--link").stdout.split() if "/pair/link/" in word)
        self.assertIn("/pair/link/", link)
        # Fetched (as a chat app's preview does), the link pairs nothing: only its button does.
        urllib.request.urlopen(link).read()
        self.assertEqual(len(self.service.call("web.devices")), self.devices_before_link)
        other = self.chromium.page(self.service, paired=False)
        other.goto(link)
        other.click("form button")
        other.wait_for_selector("#now", timeout=DEADLINE * 1000)
        # The link is used up.
        third = self.chromium.page(self.service, paired=False, watched=False)
        third.goto(link)
        third.click("form button")
        third.wait_for_selector("text=used or has expired", timeout=DEADLINE * 1000)
        third.context.close()
        self.play_radio()
        wait_for(lambda: "Tone 3" in other.text_content("#np-title"), "the second page follows")
        self.service.call("player.pause")
        wait_for(lambda: player_state(self.page) == "Play" and player_state(other) == "Play", "both pages see the pause")
        other.context.close()

    def test_10_the_service_restarted_under_an_open_page(self):
        self.play_radio()
        self.service.restart()
        wait_for(lambda: self.page.text_content("#connection") == "", "the page reconnects by itself", 60)
        self.service.call("player.open", {"id": EPISODE.format(2), "now": True})
        wait_for(lambda: "Tone 2" in self.page.text_content("#np-title"), "the page follows the new service")

    def test_11_a_phone_sized_page(self):
        phone = self.chromium.page(self.service, viewport={"width": 360, "height": 740})
        self.play_radio()
        wait_for(lambda: "Tone 3" in phone.text_content("#np-title"), "the phone page shows what plays")
        width = phone.evaluate("document.documentElement.scrollWidth")
        self.assertLessEqual(width, 360, "the page scrolls sideways on a phone")
        for button in phone.locator("button").all():
            if button.is_visible():
                self.assertTrue(button.get_attribute("aria-label") or button.text_content().strip(),
                                "a button without a name for a screen reader")
        shot = os.environ.get("MEDIAHOST_TEST_WEB_SCREENSHOT")
        if shot:
            time.sleep(1)  # pictures drawn
            phone.screenshot(path=shot)
        phone.context.close()

    def test_12_a_revoked_browser_is_back_at_pairing(self):
        # Its way back is a 401 (its page is refused), which the browser logs: not watched.
        victim = self.chromium.page(self.service, watched=False)
        device = json.loads(self.service.run("call", "web.devices").stdout)[-1]
        self.service.run("pair", "--revoke", device["id"])
        victim.wait_for_selector("#pair-start", timeout=DEADLINE * 1000)
        victim.context.close()

    def test_13_a_read_only_browser_looks_but_changes_nothing(self):
        reader = self.chromium.page(self.service, read_only=True)
        self.play_radio()
        wait_for(lambda: "Tone 3" in reader.text_content("#np-title"), "the read-only page follows")
        # It shows no control it may not use, lists New (leaving it new), and a call of its
        # own that would change something is refused.
        wait_for(lambda: not reader.is_visible("#np-play"), "the controls hidden")
        reader.goto(self.service.url + "/#/new")
        reader.wait_for_selector("#view h2", timeout=DEADLINE * 1000)
        self.assertEqual(reader.locator("#view .error").count(), 0, reader.text_content("#view"))
        refused = reader.evaluate("""async () => {
            try { await host.call('player.pause'); return 'done'; } catch (error) { return error.message; } }""")
        self.assertIn("read-only", refused)
        self.assertEqual(self.service.call("player.status")["state"], "playing")
        reader.context.close()

    def test_99_no_console_errors(self):
        self.assertEqual(self.chromium.errors, [])


class FirefoxTests(unittest.TestCase):
    """The same page in Debian's Firefox ESR: pairing, following the desk, driving mpv."""

    @classmethod
    def setUpClass(cls):
        cls.sandbox, settings = start_sandbox()
        cls.addClassCleanup(cls.sandbox.kill)
        cls.service = Service(settings)
        cls.addClassCleanup(cls.service.close)
        cls.playwright = sync_playwright().start()
        cls.addClassCleanup(cls.playwright.stop)
        cls.firefox = Browsers(cls.playwright, "firefox")
        cls.addClassCleanup(cls.firefox.close)

    def test_pairing_following_and_driving_the_desk(self):
        page = self.firefox.page(self.service)
        self.assertIn("Firefox on Linux", self.service.run("pair", "--list").stdout)
        self.service.call("player.open", {"id": EPISODE.format(3), "now": True})
        wait_for(lambda: "Tone 3" in page.text_content("#np-title"), "the page shows what plays")
        self.service.call("player.pause")
        wait_for(lambda: player_state(page) == "Play", "the desk's pause on the page")
        page.click("#np-play")
        wait_for(lambda: self.service.call("player.status")["state"] == "playing", "the page's play reaches mpv")
        self.assertEqual(self.firefox.errors, [])


class TLSTests(unittest.TestCase):
    """web.tls_cert and web.tls_key: the page over HTTPS and its WebSocket over WSS, the token's
    cookie Secure; a certificate that cannot be read is said, and nothing is served in the clear."""

    @classmethod
    def setUpClass(cls):
        cls.sandbox, cls.settings = start_sandbox()
        cls.addClassCleanup(cls.sandbox.kill)
        cls.folder = tempfile.mkdtemp(prefix="mediahost-tls-")
        cls.addClassCleanup(shutil.rmtree, cls.folder, True)
        cls.cert, cls.key = cls.folder + "/cert.pem", cls.folder + "/key.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", cls.key, "-out", cls.cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
        cls.playwright = sync_playwright().start()
        cls.addClassCleanup(cls.playwright.stop)
        cls.chromium = Browsers(cls.playwright, "chromium")
        cls.addClassCleanup(cls.chromium.close)

    def test_the_page_over_https_and_wss(self):
        service = Service(dict(self.settings, MEDIAHOST_WEB_TLS_CERT=self.cert, MEDIAHOST_WEB_TLS_KEY=self.key))
        try:
            self.assertTrue(service.url.startswith("https://127.0.0.1:"), service.url)
            context = self.chromium.browser.new_context(ignore_https_errors=True)
            page = context.new_page()
            page.goto(service.url + "/")
            page.click("#pair-start")
            page.wait_for_function("document.getElementById('pair-code').textContent.length > 0", timeout=DEADLINE * 1000)
            service.run("pair", page.text_content("#pair-code"))
            page.wait_for_selector("#now", timeout=DEADLINE * 1000)
            wait_for(lambda: page.evaluate("host.socket && host.socket.readyState === 1 && host.socket.url"), "the WSS socket opens")
            self.assertTrue(page.evaluate("host.socket.url").startswith("wss://"))
            cookie = next(c for c in context.cookies() if c["name"] == "mediahost")
            self.assertTrue(cookie["secure"] and cookie["httpOnly"])
            service.call("player.open", {"id": EPISODE.format(3), "now": True})
            wait_for(lambda: "Tone 3" in page.text_content("#np-title"), "the page follows over WSS")
            # Plain HTTP on that port gets no page.
            with self.assertRaises((urllib.error.URLError, ConnectionError, OSError)):
                urllib.request.urlopen(service.url.replace("https://", "http://") + "/", timeout=5).read()
            context.close()
        finally:
            service.close()

    def test_a_certificate_that_cannot_be_read_is_said(self):
        service = Service.__new__(Service)
        service.folder = tempfile.mkdtemp(prefix="mediahost-tls-bad-")
        os.makedirs(service.folder + "/run", mode=0o700)
        service.env = dict(os.environ, **self.settings, MEDIAHOST_DATA_DIR=service.folder + "/data",
                           
                           MEDIAHOST_DESKTOP_MEDIA_KEYS="off", XDG_RUNTIME_DIR=service.folder + "/run",
                           MEDIAHOST_WEB_TLS_CERT=self.folder + "/missing.pem", MEDIAHOST_WEB_TLS_KEY=self.key,
                           XDG_CACHE_HOME=service.folder + "/cache", XDG_CONFIG_HOME=service.folder + "/config")
        service.log = open(service.folder + "/service.log", "a")
        service.process = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:0"], env=service.env,
                                           stdin=subprocess.DEVNULL, stdout=service.log, stderr=service.log)
        try:
            status = wait_for(lambda: (s := service.call("web.status")) and s.get("problem") and s, "the problem said", 60)
            self.assertFalse(status["listening"])
            self.assertIn("missing.pem", status["problem"])
            doctor = service.run("doctor", check=False).stdout
            self.assertIn("missing.pem", doctor)
        finally:
            service.close()


class AttackTests(unittest.TestCase):
    """What a hostile page, a guesser or a broken client can do, against a service of its own."""

    @classmethod
    def setUpClass(cls):
        cls.sandbox, settings = start_sandbox()
        cls.addClassCleanup(cls.sandbox.kill)
        cls.service = Service(settings)
        cls.addClassCleanup(cls.service.close)
        cls.token = cls.service.pair_token()
        cls.ws = cls.service.url.replace("http://", "ws://") + "/rpc"

    def refused(self, **options):
        try:
            RawWebSocket(self.ws, **options).close()
        except Refused as refusal:
            return refusal.status
        return 101

    def still_answers(self):
        socket = RawWebSocket(self.ws, cookie=self.token)
        try:
            return socket.call("host.info")["result"]["version"]
        finally:
            socket.close()

    def test_1_no_websocket_without_the_pages_origin_and_a_token(self):
        self.assertNotEqual(self.refused(cookie=self.token, origin="http://evil.example"), 101)
        self.assertNotEqual(self.refused(cookie=self.token, origin=f"http://127.0.0.1:{self.service.port + 1}"), 101)
        self.assertNotEqual(self.refused(cookie=self.token, origin=None), 101)
        self.assertNotEqual(self.refused(cookie=None), 101)
        self.assertNotEqual(self.refused(cookie="x" * 43), 101)
        self.assertEqual(self.refused(cookie=self.token), 101)
        # Another site's page cannot start a pairing either.
        request = urllib.request.Request(self.service.url + "/pair/start", method="POST",
                                         headers={"Origin": "http://evil.example"})
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        self.assertEqual(refused.exception.code, 403)

    def test_2_a_revoked_token_stops_at_once(self):
        token = self.service.pair_token()
        socket = RawWebSocket(self.ws, cookie=token)
        self.assertIn("result", socket.call("player.status"))
        # A second page of it ignores the Close and goes on sending: it is cut off all the same.
        stubborn = RawWebSocket(self.ws, cookie=token)
        self.assertIn("result", stubborn.call("player.status"))
        device = self.service.call("web.devices")[-1]
        self.service.call("web.revoke", {"id": device["id"]})
        with self.assertRaises(ConnectionError) as closed:
            while True:
                socket.receive()
        self.assertIn("1008", str(closed.exception))
        answered = 0
        with self.assertRaises((ConnectionError, OSError)):
            deadline = time.monotonic() + DEADLINE
            while time.monotonic() < deadline:
                stubborn.send({"jsonrpc": "2.0", "id": 99, "method": "player.status"})
                stubborn.sock.settimeout(1)
                try:
                    opcode, payload = stubborn.receive_frame()
                    answered += opcode == 1 and b'"id":99' in payload
                except TimeoutError:
                    pass
        self.assertEqual(answered, 0, "a revoked page was still answered")
        self.assertNotEqual(self.refused(cookie=token), 101)

    def test_3_the_desks_methods_are_refused_to_a_browser(self):
        socket = RawWebSocket(self.ws, cookie=self.token)
        for method, params in [("config.set", {"key": "player.command", "value": "touch /tmp/pwned"}),
                               ("web.link", {}), ("web.pair", {"code": "AAA-AAA"}), ("lists.export", {"name": "x"})]:
            answer = socket.call(method, params)
            self.assertEqual(answer["error"]["code"], -32040, method)
        # In a batch too, and a raw newline inside the JSON text is not a second request.
        socket.send_frame(b'[{"jsonrpc":"2.0","id":7,"method":"config.set","params":{"key":"log.level","value":"debug"}},'
                          b'\n{"jsonrpc":"2.0","id":8,"method":"host.info"}]')
        answers = {a["id"]: a for a in socket.receive()}
        self.assertEqual(answers[7]["error"]["code"], -32040)
        self.assertIn("result", answers[8])
        socket.close()
        self.assertNotIn("pwned", json.dumps(self.service.call("config.get", {"key": "player.command"})))

    def test_3b_a_feeds_picture_is_served_only_as_a_picture(self):
        # A feed whose "artwork" is a page with a script (its server says text/html).
        feed_base = self.service.env["MEDIAHOST_PODCASTS_BASE_URL"]
        hostile = HostileFiles({"/page.html": (b"<title>PWNED</title><script>alert(1)</script>", "text/html"),
                                "/feed.xml": (None, "application/rss+xml")})
        try:
            hostile.files["/feed.xml"] = (f"""<?xml version="1.0"?><rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
<channel><title>Hostile</title><itunes:image href="{hostile.url}/page.html"/><image><url>{hostile.url}/page.html</url></image>
<item><title>One</title><guid>h1</guid><enclosure url="{feed_base}/media/1999999997/1.wav" type="audio/wav" length="1"/></item>
</channel></rss>""".encode(), "application/rss+xml")
            feed = f"{hostile.url}/feed.xml"
            import base64
            show = "podcasts:podcast:feed-" + base64.urlsafe_b64encode(feed.encode()).decode().rstrip("=")
            request = urllib.request.Request(f"{self.service.url}/artwork?id={show}", headers={"Cookie": f"mediahost={self.token}"})
            with self.assertRaises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request).read()
            self.assertIn(refused.exception.code, (404, 415))
            self.assertNotIn(b"PWNED", refused.exception.read())
            # A real picture goes out as one, and can do nothing when opened alone.
            picture = urllib.request.urlopen(urllib.request.Request(
                f"{self.service.url}/artwork?id={RADIO}", headers={"Cookie": f"mediahost={self.token}"}))
            self.assertEqual(picture.headers["Content-Type"], "image/png")
            self.assertIn("sandbox", picture.headers["Content-Security-Policy"])
        finally:
            hostile.close()

    def test_3c_refusals_not_read_cut_the_page_off(self):
        before = self.service.rss_kb()
        socket = RawWebSocket(self.ws, cookie=self.token)
        # Each a refusal of the bridge's own (a desk method), sent and never read.
        junk = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "web." + "x" * 100}).encode()
        socket.sock.settimeout(5)
        try:
            for _ in range(60_000):
                socket.send_frame(junk)
        except OSError:
            pass  # cut off while it was still sending
        # Then what it reads ends (a Close, or the connection closed), rather than waiting.
        socket.sock.settimeout(DEADLINE)
        ended = False
        try:
            while not ended:
                opcode, _ = socket.receive_frame()
                ended = opcode == 8
        except TimeoutError:
            self.fail("the page that did not read its refusals was not cut off")
        except (ConnectionError, OSError):
            ended = True
        socket.close()
        self.assertTrue(self.still_answers())
        self.assertLess(self.service.rss_kb() - before, 64 * 1024)

    def test_4_a_100_mb_message_is_refused_without_taking_memory(self):
        before = self.service.rss_kb()
        socket = RawWebSocket(self.ws, cookie=self.token)
        header = bytes([0x81, 0x80 | 127]) + (100 << 20).to_bytes(8, "big") + os.urandom(4)
        try:
            try:
                socket.sock.sendall(header + os.urandom(1 << 20))
            except OSError:
                pass  # closed while it was still sending: refused
            with self.assertRaises((ConnectionError, OSError)):
                while True:
                    socket.receive()
        finally:
            socket.close()
        self.assertTrue(self.still_answers())
        self.assertLess(self.service.rss_kb() - before, 64 * 1024)

    def test_5_a_client_that_never_reads_costs_only_its_own_bounded_backlog(self):
        before = self.service.rss_kb()
        slow = RawWebSocket(self.ws, cookie=self.token)
        slow.sock.setsockopt(__import__("socket").SOL_SOCKET, __import__("socket").SO_RCVBUF, 4096)
        # Requests whose answers are large, sent and never read.
        request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "rpc.discover"}).encode()
        sent = 0
        slow.sock.settimeout(2)
        try:
            for _ in range(3000):
                slow.send_frame(request)
                sent += 1
        except OSError:
            pass  # its own socket filled: it is slowed, nothing else
        # Answered at all (the client's own 30 s deadline): liveness, not speed (make bench).
        self.assertTrue(self.still_answers())
        grown = self.service.rss_kb() - before
        slow.close()
        self.assertLess(grown, 128 * 1024, f"{sent} unread answers grew the service by {grown} kB")

    def test_6_two_hundred_open_sockets(self):
        before = self.service.rss_kb()
        sockets = [RawWebSocket(self.ws, cookie=self.token) for _ in range(200)]
        try:
            for socket in sockets[::20]:
                self.assertIn("result", socket.call("player.status"))
            # Answered at all (the client's own 30 s deadline): liveness, not speed.
            self.assertTrue(self.still_answers())
            grown = self.service.rss_kb() - before
            print(f"\n200 open sockets: the service and its web server grew by {grown} kB", file=sys.stderr)
        finally:
            for socket in sockets:
                socket.close()

    def test_7_pairing_brute_force_is_refused(self):
        post = lambda: urllib.request.Request(self.service.url + "/pair/start", method="POST",
                                              headers={"Origin": self.service.url})
        statuses = []
        for _ in range(7):
            try:
                statuses.append(urllib.request.urlopen(post()).status)
            except urllib.error.HTTPError as error:
                statuses.append(error.code)
        self.assertIn(429, statuses)
        press = lambda url, origin: urllib.request.Request(url, method="POST", headers={"Origin": origin})
        # Another site's page pressing link guesses is refused and counts nothing.
        for guess in range(12):
            with self.assertRaises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(press(f"{self.service.url}/pair/link/img{guess}", "http://evil.example"))
            self.assertEqual(refused.exception.code, 403)
        # Guessing links: ten wrong ones, then even a right one is refused to that address...
        good = self.service.call("web.link")["urls"][0]
        for guess in range(10):
            with self.assertRaises(urllib.error.HTTPError):
                urllib.request.urlopen(press(f"{self.service.url}/pair/link/guess{guess}", self.service.url))
        with self.assertRaises(urllib.error.HTTPError) as locked:
            urllib.request.urlopen(press(good, self.service.url))
        self.assertEqual(locked.exception.code, 429)
        # ...but a browser paired before keeps working from it (behind a proxy, all share one).
        self.assertEqual(self.refused(cookie=self.token), 101)

    def test_8_the_sync_server_on_the_same_port_keeps_its_own_doors(self):
        """The household's sync server answers on the remote's port with its own accounts: a
        browser's token is no password, a password is no pairing, and huge or slow bodies cost
        nothing."""
        import base64, http.client, socket
        self.service.run("users", "add", "carol", input="carol-household\n")
        basic = "Basic " + base64.b64encode(b"carol:carol-household").decode()

        def ask(method, path, headers=None, body=None):
            connection = http.client.HTTPConnection("127.0.0.1", self.service.port, timeout=DEADLINE)
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            data = response.read()
            connection.close()
            return response.status, response.getheader("WWW-Authenticate"), data

        status, challenge, _ = ask("GET", "/api/2/devices/carol.json")
        self.assertEqual(status, 401)
        self.assertIn("realm", challenge or "")
        self.assertEqual(ask("GET", "/api/2/devices/carol.json", {"Cookie": f"mediahost={self.token}"})[0], 401)
        status, _, body = ask("GET", "/api/2/devices/carol.json", {"Authorization": basic})
        self.assertEqual((status, json.loads(body)), (200, []))
        # The page is still the pairing page for a sync password.
        status, _, body = ask("GET", "/app.js", {"Authorization": basic})
        self.assertEqual(status, 401)
        # A body over the limit is refused before it is read, declared or chunked.
        big = b"[" + b" " * (33 << 20) + b"]"
        status, _, _ = ask("POST", "/api/2/episodes/carol.json", {"Authorization": basic, "Content-Length": str(len(big))}, big)
        self.assertEqual(status, 413)
        # Chunked, it is read up to the limit and answered 413 (the sender may find the door
        # shut before it has sent the rest).
        raw = socket.create_connection(("127.0.0.1", self.service.port), timeout=10)
        raw.sendall(f"POST /api/2/episodes/carol.json HTTP/1.1\r\nHost: x\r\nAuthorization: {basic}\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n".encode())
        chunk = b"%x\r\n" % (1 << 20) + b" " * (1 << 20) + b"\r\n"
        try:
            for _ in range(40):
                raw.sendall(chunk)
        except OSError:
            pass
        try:
            self.assertIn(b" 413 ", raw.recv(200))
        except OSError:
            pass  # reset before the answer was read: refused all the same
        raw.close()
        # A client sending its request a byte at a time holds only itself up.
        slow = socket.create_connection(("127.0.0.1", self.service.port))
        slow.sendall(b"POST /api/2/episodes/carol.json HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n[")
        started = time.monotonic()
        status, _, _ = ask("GET", "/api/2/episodes/carol.json?since=0", {"Authorization": basic})
        self.assertEqual(status, 200)
        self.assertLess(time.monotonic() - started, DEADLINE)
        slow.close()
        self.assertTrue(self.still_answers())

        upload = json.dumps([{"podcast": "http://x.example/f.xml", "episode": "http://x.example/1.mp3", "action": "play",
                              "timestamp": "2026-01-02T03:04:05", "position": 754, "total": 3600}]).encode()
        self.assertEqual(ask("POST", "/api/2/episodes/carol.json", {"Authorization": basic}, upload)[0], 200)
        status, _, body = ask("GET", "/api/2/episodes/carol.json?since=0", {"Authorization": basic})
        self.assertEqual([a["position"] for a in json.loads(body)["actions"]], [754])


if __name__ == "__main__":
    unittest.main(verbosity=2)
