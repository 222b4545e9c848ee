#!/usr/bin/env python3
"""Time two Debian feed readers refreshing the same podcast feeds, to set `mediahost refresh` beside.

The peers: Newsboat (`newsboat -x reload`, Debian package newsboat) and gPodder's command line
(`gpo update`, Debian package gpodder). Each runs in its own home in a temporary directory (HOME,
XDG_*, newsboat's config, cache and urls files, GPODDER_HOME and GPODDER_DOWNLOAD_DIR), never in
the user's own, with no TTY (stdin is /dev/null, output goes to files), no display, no D-Bus and no
proxy. Standard library only.

One shot:
    refresh-peers.py --urls FILE [--warm] [--runs N] [--only newsboat|gpo]
        --warm: subscribe, refresh untimed until the caches hold every feed with its validators,
        then time N refreshes (against an unchanged server: all 304).
        Without --warm: each of the N runs starts from a new home and times filling it from
        nothing: newsboat's first `-x reload`; for gPodder `gpo import subs.opml`, since gPodder
        fetches and stores a feed when it subscribes to it (it has no subscribe-without-fetch).

Two phases, so the caller can change the feeds between the warm-up and the timed run:
    refresh-peers.py --prepare DIR --urls FILE [--only ...]   homes, subscriptions, warm refresh
    refresh-peers.py --time DIR [--runs N] [--only ...]       one timed refresh each (N: N of them)

Either prints JSON on stdout:
    {"newsboat": {"ok": true, "seconds": s, "peak_rss_mb": m, ...}, "gpo": {...}}
`seconds` is the median of the runs (all in `runs`), `peak_rss_mb` the largest peak. A peer that is
missing or fails has "ok": false and a "why"; the others are still measured. Peak RSS is the
child's ru_maxrss from os.wait4: the peer process itself, or, if it forked and waited for children,
the largest of them (the kernel folds reaped descendants in as a maximum, not a sum). Neither peer
forks for a refresh: newsboat uses threads, gpo is one Python process.

--traffic URL (the mediahost sandbox's `<root>/_sandbox/traffic`) resets the sandbox's request log
before each timed run and reports after it how many feed requests the peer sent and how many
carried If-None-Match / If-Modified-Since.

--sandbox-urls BASE [--count N] prints N feed URLs of the mediahost sandbox's podcast replica
(BASE is its podcasts base URL, e.g. http://127.0.0.1:PORT/podcasts) for --urls.

What the peers do (Newsboat 2.21, gPodder 3.11 on Debian 12), checked against the sandbox:
- newsboat `-x reload` refreshes every feed in the urls file without the interface and without a
  TTY or TERM; it exits 0 even when feeds fail, so failures are counted from its `error-log`.
  It sends If-None-Match and If-Modified-Since, but only from its third refresh of a new cache:
  the first refresh stores each feed's ETag/Last-Modified with an UPDATE before the feed's row
  exists, so they are lost. The warm-up therefore refreshes twice and checks the cache holds
  validators for every feed. On start it loads every cached article into memory, so a refresh
  where everything is 304 still costs time and memory in proportion to the cache.
- gpo: `gpo update` only checks feeds (it lists "N new episodes"; nothing is downloaded without
  `gpo download`, and no extension is enabled in a new home). It refreshes podcasts one at a time
  (no setting makes feed updates parallel; limit.downloads.concurrent is for downloads), with a
  new HTTP session, so a new connection, per feed. It sends If-None-Match and If-Modified-Since
  from its first update (the values stored when subscribing). It exits 0 whatever happens, so
  success is read from its per-podcast [DONE]/[FAIL] lines. Subscribing: `gpo subscribe URL` is a
  Python start-up plus a fetch per URL (about 0.25 s each here: ~2 min for 500), so this imports an
  OPML file in one process (`gpo import FILE`, ~10 s for 500); its outlines must have type="rss"
  or they are skipped silently, and each podcast gets the outline's title (here its URL) until a
  changed feed brings its own. The import dies at the first feed it cannot connect to (a
  TypeError printing the error), so after a crash the feeds after the last one added are
  subscribed one by one up to the next failure, and the rest imported again ("import_crashes"). gPodder's parser (expat) refuses an RSS feed with anything, even a
  newline, before the XML declaration, so such feeds are not subscribed ("feeds" in the output
  says how many were). gpo with no command on a TTY opens its shell, and `gpo subscribe` asks for
  a user name on a 401: stdin is /dev/null here, so neither can wait for input.
"""

import argparse
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from xml.sax.saxutils import quoteattr

PEERS = ("newsboat", "gpo")
# Newsboat refreshes one feed at a time unless told otherwise (`reload-threads` defaults to 1).
# mediahost refreshes feeds in parallel, so newsboat gets 8 threads (8 connections at once) to be
# fair to it; --newsboat-threads changes it.
DEFAULT_NEWSBOAT_THREADS = 8
MANIFEST = "peers.json"


# MARK: Running a peer


def peer_env(home):
    """An environment that points every per-user path into `home` and has no TTY, display or proxy."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.path.join(home, "home"),
        "XDG_CONFIG_HOME": os.path.join(home, "home", ".config"),
        "XDG_DATA_HOME": os.path.join(home, "home", ".local", "share"),
        "XDG_CACHE_HOME": os.path.join(home, "home", ".cache"),
        "XDG_STATE_HOME": os.path.join(home, "home", ".local", "state"),
        "XDG_RUNTIME_DIR": os.path.join(home, "run"),
        "TMPDIR": os.path.join(home, "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        # Loopback feeds: nothing may go through a proxy from the caller's environment.
        "no_proxy": "127.0.0.1,localhost,::1",
        "NO_PROXY": "127.0.0.1,localhost,::1",
    }
    for key in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR"):
        os.makedirs(env[key], exist_ok=True)
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
    return env


def run(argv, env, cwd, log_name, timeout):
    """Runs argv with stdin /dev/null and output to files in cwd; returns what it took.

    Wall time is from just before the spawn to the reaping; CPU and peak RSS come from wait4.
    """
    out_path = os.path.join(cwd, log_name + ".out")
    err_path = os.path.join(cwd, log_name + ".err")
    with open(os.devnull, "rb") as stdin, open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        process = subprocess.Popen(
            argv, stdin=stdin, stdout=out, stderr=err, env=env, cwd=cwd, start_new_session=True)
        timed_out = []

        def kill():
            timed_out.append(True)
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    with open(out_path, "r", errors="replace") as f:
        stdout = f.read()
    with open(err_path, "r", errors="replace") as f:
        stderr = f.read()
    return {
        "seconds": seconds,
        "peak_rss_mb": usage.ru_maxrss / 1024,  # Linux gives KiB
        "user_seconds": usage.ru_utime,
        "sys_seconds": usage.ru_stime,
        "exit": process.returncode,
        "timed_out": bool(timed_out),
        "stdout": stdout,
        "stderr": stderr,
    }


def tail(text, lines=5):
    return "\n".join(text.strip().splitlines()[-lines:])


class PeerError(Exception):
    pass


# MARK: Newsboat


class Newsboat:
    name = "newsboat"
    package = "newsboat"

    def __init__(self, dir, threads=DEFAULT_NEWSBOAT_THREADS):
        self.dir = dir
        self.threads = threads
        self.urls = os.path.join(dir, "urls")
        self.cache = os.path.join(dir, "cache.db")
        self.config = os.path.join(dir, "config")
        self.error_log = os.path.join(dir, "error.log")

    def available(self):
        return shutil.which("newsboat")

    def command(self):
        # -q: no start-up messages; -x reload: refresh every feed and exit, without the interface.
        return ["newsboat", "-q", "-u", self.urls, "-c", self.cache, "-C", self.config, "-x", "reload"]

    def subscribe(self, urls, timeout):
        os.makedirs(self.dir, exist_ok=True)
        with open(self.urls, "w") as f:
            f.writelines(u + "\n" for u in urls)
        with open(self.config, "w") as f:
            f.write(
                "# Written by refresh-peers.py.\n"
                f"# Parallel refresh, to be fair to newsboat (its default is 1 feed at a time).\n"
                f"reload-threads {self.threads}\n"
                "# Per-feed failures go here: `-x reload` exits 0 whatever fails.\n"
                f"error-log {quote_config(self.error_log)}\n"
                "# The defaults, spelled out: one try per feed, no article pages fetched.\n"
                "download-retries 1\n"
                "download-full-page no\n"
                "auto-reload no\n"
            )
        return {"feeds": len(urls)}

    def refresh(self, env, label, timeout):
        errors_before = self._error_lines()
        result = run(self.command(), env, self.dir, label, timeout)
        errors = self._error_lines()[len(errors_before):]
        result["failed_feeds"] = len(errors)
        with open(self.urls) as f:
            result["refreshed_feeds"] = sum(1 for line in f if line.strip()) - len(errors)
        if errors:
            result["failures"] = errors[:5]
        if result["timed_out"]:
            raise PeerError(f"newsboat did not finish in {timeout} s")
        if result["exit"] != 0:
            raise PeerError(f"newsboat exited {result['exit']}: {tail(result['stderr'] + result['stdout'])}")
        return result

    def warm(self, env, urls, timeout):
        self.subscribe(urls, timeout)
        # The first refresh of a new cache loses the feeds' ETag and Last-Modified (see the top of
        # this file), so a second one stores them: only then does newsboat send conditional requests.
        refreshes = 0
        while True:
            self.refresh(env, f"warm-{refreshes + 1}", timeout)
            refreshes += 1
            feeds, validated = self.cached()
            if validated >= feeds or refreshes >= 2:
                break
        if feeds == 0:
            raise PeerError(f"newsboat cached no feed: {tail(chr(10).join(self._error_lines()))}")
        return {"feeds": len(urls), "warm_refreshes": refreshes, "cached_feeds": feeds,
                "feeds_with_validators": validated}

    def cached(self):
        """How many feeds the cache holds, and how many with an ETag or Last-Modified to send."""
        db = sqlite3.connect(f"file:{self.cache}?mode=ro", uri=True)
        try:
            feeds = db.execute("SELECT count(*) FROM rss_feed").fetchone()[0]
            validated = db.execute(
                "SELECT count(*) FROM rss_feed WHERE etag != '' OR lastmodified != 0").fetchone()[0]
        finally:
            db.close()
        return feeds, validated

    def cold(self, env, urls, timeout):
        """The timed refresh of a new home: an empty cache filled from nothing."""
        self.subscribe(urls, timeout)
        result = self.refresh(env, "cold", timeout)
        result["command"] = " ".join(self.command())
        return result

    def _error_lines(self):
        try:
            with open(self.error_log, errors="replace") as f:
                return [line.rstrip("\n") for line in f if line.strip()]
        except FileNotFoundError:
            return []


def quote_config(value):
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


# MARK: gPodder


class Gpo:
    name = "gpo"
    package = "gpodder"

    def __init__(self, dir):
        self.dir = dir
        self.opml = os.path.join(dir, "subs.opml")

    def available(self):
        return shutil.which("gpo")

    def env(self, env):
        env = dict(env)
        env["GPODDER_HOME"] = os.path.join(self.dir, "gpodder")
        env["GPODDER_DOWNLOAD_DIR"] = os.path.join(self.dir, "downloads")
        os.makedirs(env["GPODDER_HOME"], exist_ok=True)
        os.makedirs(env["GPODDER_DOWNLOAD_DIR"], exist_ok=True)
        return env

    def subscribe(self, env, urls, timeout):
        """Subscribes to urls by OPML import; returns what it took (all its gpo runs together)."""
        os.makedirs(self.dir, exist_ok=True)
        total = {"seconds": 0.0, "peak_rss_mb": 0.0, "user_seconds": 0.0, "sys_seconds": 0.0, "exit": 0}

        def add(result):
            if result["timed_out"]:
                raise PeerError(f"gpo did not finish in {timeout} s")
            total["seconds"] += result["seconds"]
            total["user_seconds"] += result["user_seconds"]
            total["sys_seconds"] += result["sys_seconds"]
            total["peak_rss_mb"] = max(total["peak_rss_mb"], result["peak_rss_mb"])
            total["stdout"], total["stderr"] = result["stdout"], result["stderr"]
            return result

        pending, crashes, imports = list(urls), 0, 0
        while pending:
            self.write_opml(pending)
            # One process for all: `gpo subscribe` per URL costs a Python start-up each.
            imports += 1
            result = add(run(["gpo", "import", self.opml], self.env(env), self.dir, f"import-{imports}", timeout))
            if result["exit"] == 0:
                break
            # gPodder 3.11's import dies on the first feed it cannot connect to (its error message
            # is the exception's strerror, None: a TypeError), leaving the rest unsubscribed. Feeds
            # are taken in order: subscribe one at a time after the last one added, up to the next
            # that fails, and import the rest again.
            crashes += 1
            added = [line for line in result["stdout"].splitlines() if line.startswith("Successfully added ")]
            last = added[-1][len("Successfully added "):].removesuffix(".") if added else None
            i = pending.index(last) + 1 if last in pending else 0
            while i < len(pending):
                one = add(run(["gpo", "subscribe", pending[i]], self.env(env), self.dir, "subscribe", timeout))
                i += 1
                if "Successfully added" not in one["stdout"]:
                    break
            pending = pending[i:]
        subscribed = self.subscriptions(env, timeout)
        if subscribed == 0:
            raise PeerError(f"gpo import subscribed nothing: {tail(total['stderr'] + total['stdout'])}")
        total.update({"feeds": subscribed, "not_subscribed": len(urls) - subscribed})
        if crashes:
            total["import_crashes"] = crashes
        return total

    def write_opml(self, urls):
        with open(self.opml, "w", encoding="utf-8") as f:
            f.write('<?xml version="1.0" encoding="utf-8"?>\n<opml version="2.0">\n'
                    "<head><title>refresh-peers</title></head>\n<body>\n")
            for url in urls:
                # type="rss" is required: gPodder skips outlines of any other (or no) type.
                f.write(f"<outline type=\"rss\" text={quoteattr(url)} xmlUrl={quoteattr(url)}/>\n")
            f.write("</body>\n</opml>\n")

    def subscriptions(self, env, timeout):
        result = run(["gpo", "list"], self.env(env), self.dir, "list", timeout)
        # `gpo list` prints "# title" then the URL for each podcast.
        return sum(1 for line in result["stdout"].splitlines() if line and not line.startswith("#"))

    def refresh(self, env, label, timeout, expected=None):
        result = run(["gpo", "update"], self.env(env), self.dir, label, timeout)
        if result["timed_out"]:
            raise PeerError(f"gpo update did not finish in {timeout} s")
        out = result["stdout"]
        done, failed = out.count("[DONE]"), out.count("[FAIL]")
        result.update({"refreshed_feeds": done, "failed_feeds": failed, "skipped_feeds": out.count("[SKIP]")})
        if failed:
            result["failures"] = [line.strip() for line in out.splitlines() if "[FAIL]" in line][:5]
        # gpo exits 0 even for a command it does not know; its per-podcast lines say what it did.
        if result["exit"] != 0 or "Checking for new episodes" not in out:
            raise PeerError(f"gpo update failed (exit {result['exit']}): {tail(result['stderr'] + out)}")
        if expected is not None and done + failed < expected:
            raise PeerError(f"gpo update checked {done + failed} of {expected} podcasts")
        return result

    def warm(self, env, urls, timeout):
        imported = self.subscribe(env, urls, timeout)
        # Importing already fetched and stored every feed; one update makes it the state an update
        # leaves (and shows the conditional requests work).
        update = self.refresh(env, "warm-1", timeout, expected=imported["feeds"])
        return {"feeds": imported["feeds"], "not_subscribed": imported["not_subscribed"],
                "import_seconds": round(imported["seconds"], 3), "warm_refreshes": 1,
                "warm_failed_feeds": update["failed_feeds"]}

    def cold(self, env, urls, timeout):
        """The timed fill of a new home: gPodder fetches and stores each feed as it subscribes."""
        result = self.subscribe(env, urls, timeout)
        result["command"] = f"gpo import {self.opml}"
        result["failed_feeds"] = result["not_subscribed"]
        return result


# MARK: Phases


def make_peer(name, dir, args):
    if name == "newsboat":
        return Newsboat(dir, args.newsboat_threads)
    return Gpo(dir)


def read_urls(path):
    urls, seen = [], set()
    with open(path) as f:
        for line in f:
            url = line.strip()
            if url and not url.startswith("#") and url not in seen:
                seen.add(url)
                urls.append(url)
    if not urls:
        raise SystemExit(f"{path}: no URLs")
    return urls


def prepare(root, urls, names, args):
    """Homes, subscriptions and the warm refresh for each peer; returns the manifest."""
    manifest = {"urls": len(urls), "newsboat_threads": args.newsboat_threads, "peers": {}}
    for name in names:
        dir = os.path.join(root, name)
        peer = make_peer(name, dir, args)
        entry = {"dir": dir}
        if not peer.available():
            entry.update(ok=False, why=f"{name} is not installed (apt-get install {peer.package})")
        else:
            try:
                os.makedirs(dir, exist_ok=True)
                entry.update(peer.warm(peer_env(dir), urls, args.timeout))
                entry["ok"] = True
            except (PeerError, OSError, sqlite3.Error) as error:
                entry.update(ok=False, why=str(error))
        manifest["peers"][name] = entry
        log(f"prepared {name}: " + json.dumps({k: v for k, v in entry.items() if k != "dir"}))
    with open(os.path.join(root, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=2)
    return manifest


def traffic_reset(url):
    if url:
        urllib.request.urlopen(urllib.request.Request(url, method="DELETE"), timeout=10).read()


def traffic_summary(url, paths):
    if not url:
        return None
    with urllib.request.urlopen(url, timeout=10) as response:
        log_ = json.load(response)
    requests = [r for r in log_.get("requests", []) if r.get("path") in paths]
    headers = [r.get("headers", {}) for r in requests]
    return {
        "feed_requests": len(requests),
        "with_if_none_match": sum(1 for h in headers if "if-none-match" in h),
        "with_if_modified_since": sum(1 for h in headers if "if-modified-since" in h),
        "connections": log_.get("connections"),
    }


def url_paths(urls):
    return {urllib.parse.urlparse(u).path for u in urls}


def summarize(runs, extra):
    """One peer's result from its runs: the median time, the largest peak."""
    seconds = [r["seconds"] for r in runs]
    result = {
        "ok": True,
        "seconds": round(statistics.median(seconds), 3),
        "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs), 1),
        "user_seconds": round(statistics.median(r["user_seconds"] for r in runs), 3),
        "sys_seconds": round(statistics.median(r["sys_seconds"] for r in runs), 3),
        "failed_feeds": max(r.get("failed_feeds", 0) for r in runs),
    }
    if len(runs) > 1:
        result["runs"] = [round(s, 3) for s in seconds]
    for key in ("refreshed_feeds", "failures", "not_subscribed", "import_crashes", "command", "traffic"):
        if key in runs[-1]:
            result[key] = runs[-1][key]
    result.update(extra)
    return result


def time_prepared(root, names, args):
    """One timed refresh (or --runs of them) of each prepared peer."""
    try:
        with open(os.path.join(root, MANIFEST)) as f:
            manifest = json.load(f)
    except FileNotFoundError:
        raise SystemExit(f"{root}: not prepared (run --prepare {root} --urls FILE first)")
    urls_file = os.path.join(root, "urls.txt")
    paths = url_paths(read_urls(urls_file)) if os.path.exists(urls_file) else set()
    results = {}
    for name in names:
        entry = manifest["peers"].get(name)
        if entry is None:
            results[name] = {"ok": False, "why": f"{name} was not prepared in {root} (--only at --prepare?)"}
            continue
        if not entry.get("ok"):
            results[name] = {"ok": False, "why": entry.get("why", "preparing it failed")}
            continue
        peer = make_peer(name, entry["dir"], args)
        env = peer_env(entry["dir"])
        runs = []
        try:
            for n in range(args.runs):
                traffic_reset(args.traffic)
                if name == "gpo":
                    result = peer.refresh(env, f"timed-{n + 1}", args.timeout, expected=entry.get("feeds"))
                else:
                    result = peer.refresh(env, f"timed-{n + 1}", args.timeout)
                result["command"] = " ".join(peer.command()) if name == "newsboat" else "gpo update"
                traffic = traffic_summary(args.traffic, paths)
                if traffic is not None:
                    result["traffic"] = traffic
                runs.append(result)
            extra = {"feeds": entry.get("feeds")}
            if entry.get("not_subscribed"):
                extra["not_subscribed"] = entry["not_subscribed"]
            results[name] = summarize(runs, extra)
        except (PeerError, OSError, sqlite3.Error) as error:
            results[name] = {"ok": False, "why": str(error)}
    return results


def one_shot(urls, names, args):
    root = tempfile.mkdtemp(prefix="refresh-peers-")
    try:
        write_urls(root, urls)
        if args.warm:
            prepare(root, urls, names, args)
            return time_prepared(root, names, args)
        results = {}
        for name in names:
            probe = make_peer(name, root, args)
            if not probe.available():
                results[name] = {"ok": False, "why": f"{name} is not installed (apt-get install {probe.package})"}
                continue
            runs = []
            try:
                for n in range(args.runs):
                    dir = os.path.join(root, f"{name}-cold-{n + 1}")
                    os.makedirs(dir)
                    peer = make_peer(name, dir, args)
                    traffic_reset(args.traffic)
                    result = peer.cold(peer_env(dir), urls, args.timeout)
                    traffic = traffic_summary(args.traffic, url_paths(urls))
                    if traffic is not None:
                        result["traffic"] = traffic
                    runs.append(result)
                    if not args.keep:
                        shutil.rmtree(dir, ignore_errors=True)
                feeds = runs[-1].get("feeds", len(urls))
                results[name] = summarize(runs, {"feeds": feeds, "cold": True})
            except (PeerError, OSError, sqlite3.Error) as error:
                results[name] = {"ok": False, "why": str(error)}
        return results
    finally:
        if args.keep:
            log(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def write_urls(root, urls):
    with open(os.path.join(root, "urls.txt"), "w") as f:
        f.writelines(u + "\n" for u in urls)


def sandbox_urls(base, count):
    """Feed URLs of the mediahost sandbox's podcast catalogue (PodcastCatalogue.swift).

    Show i (0..599) has id 1_000_000_000 + i * 7919. RSS feeds of shows whose id is a multiple of
    13 start with a newline before the XML declaration (FeedWriter.rssHeader: a quirk of real
    hosts); gPodder cannot parse those, so they are left out and every peer refreshes the same
    feeds. Atom feeds (i % 15 == 7) have no such newline and stay. 600 shows give 554 URLs.
    """
    base = base.rstrip("/")
    urls = []
    for i in range(600):
        show = 1_000_000_000 + i * 7919
        if show % 13 == 0 and i % 15 != 7:
            continue
        urls.append(f"{base}/feeds/{show}.xml")
    if count > len(urls):
        raise SystemExit(f"the sandbox catalogue has {len(urls)} feeds every peer reads, not {count}")
    return urls[:count]


def log(message):
    print(message, file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(
        description="Time newsboat and gPodder (gpo) refreshing the same feeds.",
        epilog="See the top of this file for what each peer does and why.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--prepare", metavar="DIR", help="make homes, subscribe and warm up in DIR, then stop")
    mode.add_argument("--time", metavar="DIR", help="time one refresh of each peer prepared in DIR")
    mode.add_argument("--sandbox-urls", metavar="BASE",
                      help="print feed URLs of the mediahost sandbox's podcasts replica at BASE")
    parser.add_argument("--urls", metavar="FILE", help="feed URLs, one a line")
    parser.add_argument("--warm", action="store_true", help="one shot: time refreshes of warm caches")
    parser.add_argument("--runs", type=int, default=1, help="timed runs per peer (median reported)")
    parser.add_argument("--only", choices=PEERS, help="just this peer")
    parser.add_argument("--count", type=int, default=500, help="with --sandbox-urls: how many")
    parser.add_argument("--newsboat-threads", type=int, default=DEFAULT_NEWSBOAT_THREADS,
                        help=f"newsboat's reload-threads (default {DEFAULT_NEWSBOAT_THREADS})")
    parser.add_argument("--traffic", metavar="URL",
                        help="the sandbox's /_sandbox/traffic: count each timed run's (conditional) requests")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds before a peer run is killed")
    parser.add_argument("--keep", action="store_true", help="one shot: keep the temporary homes")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    names = [args.only] if args.only else list(PEERS)

    if args.sandbox_urls:
        print("\n".join(sandbox_urls(args.sandbox_urls, args.count)))
        return
    if args.time:
        results = time_prepared(os.path.abspath(args.time), names, args)
    else:
        if not args.urls:
            parser.error("--urls FILE is needed (except with --time)")
        urls = read_urls(args.urls)
        if args.prepare:
            root = os.path.abspath(args.prepare)
            os.makedirs(root, exist_ok=True)
            if os.path.exists(os.path.join(root, MANIFEST)):
                raise SystemExit(f"{root} is already prepared: use a new directory")
            write_urls(root, urls)
            manifest = prepare(root, urls, names, args)
            results = {name: {k: v for k, v in entry.items() if k != "dir"}
                       for name, entry in manifest["peers"].items()}
        else:
            results = one_shot(urls, names, args)
    json.dump(results, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
