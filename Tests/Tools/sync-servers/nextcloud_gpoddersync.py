#!/usr/bin/env python3
"""A stand-in for a Nextcloud server running the "gpoddersync" app
(github.com/thrillfall/nextcloud-gpodder), for tests. Standard library only;
runs on Python 3.11 (Debian 12's python3) and later.

    nextcloud_gpoddersync.py --port N --user U --password P [--version 3.16.0]
                             [--data FILE] [--base-path /nextcloud] [--challenge]

Prints "listening on 127.0.0.1:PORT" (flushed) once it accepts connections;
--port 0 picks a free port. Runs in the foreground until killed (SIGTERM/SIGINT).

Endpoints (under BASE/index.php/apps/gpoddersync/, and under BASE/apps/gpoddersync/
as on a server with pretty URLs), modelled on the app's PHP at commit a5361ff
(app 3.16.0) and Nextcloud's request handling:
    GET  subscriptions[?since=N]        -> {"add":[url..],"remove":[url..],"timestamp":now}
    POST subscription_change/create     {"add":[..],"remove":[..]} -> {"timestamp":now}
    GET  episode_action[?since=N]       -> {"actions":[..],"timestamp":now}
    POST episode_action/create          [action, ..] -> {"timestamp":now}
See README.md in this folder for the behaviour in detail and the --version switches.

Test controls (no auth, never logged): /__control/faults, /__control/requests
(see sync_faults.py), and here also
    GET/DELETE /__control/state          dump / wipe the stored rows
    GET/POST/DELETE /__control/clock     server clock: POST {"offset": s} or {"now": epoch}
"""
from __future__ import annotations

import argparse
import base64
import binascii
import http.server
import json
import os
import re
import socket
import string
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sync_faults  # noqa: E402

APP_PREFIX = "/apps/gpoddersync/"
DEFAULT_VERSION = "3.16.0"


class PHPError(Exception):
    """An uncaught PHP Error/Exception: Nextcloud answers its HTML 500 page."""


# ---------------------------------------------------------------- PHP-isms

def php_json(value):
    """json_encode($value, JSON_HEX_TAG) as Nextcloud's JSONResponse renders it:
    slashes escaped as \\/, < > as \\u003C \\u003E, non-ASCII as \\uXXXX."""
    s = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return s.replace("/", "\\/").replace("<", "\\u003C").replace(">", "\\u003E")


def _reject_constant(name):
    raise ValueError("not JSON: %s" % name)


def php_json_decode(raw):
    """json_decode($raw, true): None when invalid (PHP returns null)."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


_NUMERIC = re.compile(r"[ \t\n\r\v\f]*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?[ \t\n\r\v\f]*\Z")
_LEADING_NUMBER = re.compile(r"[ \t\n\r\v\f]*([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)")
INT_MAX = 2**63 - 1
INT_MIN = -(2**63)


def php_is_numeric(key):
    return isinstance(key, int) or bool(_NUMERIC.match(key))


def php_int(value):
    """settype($value, 'int') as Nextcloud's Dispatcher does for `int $since`."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value == value and abs(value) < 2**63 else 0
    if isinstance(value, (list, dict)):
        return 1 if value else 0
    if value is None:
        return 0
    m = _LEADING_NUMBER.match(value)
    if not m:
        return 0
    text = m.group(1)
    if m.group(3) is None and m.group(4) is None and "." not in text:
        n = int(text)
    else:
        f = float(text)
        if f != f:
            return 0
        n = int(f) if abs(f) < 2**63 else (INT_MAX if f > 0 else INT_MIN)
    return max(INT_MIN, min(INT_MAX, n))


def php_empty(s):
    return s is None or s == "" or s == "0"


def ascii_upper(s):
    return s.translate(str.maketrans(string.ascii_lowercase, string.ascii_uppercase))


def ascii_lower(s):
    return s.translate(str.maketrans(string.ascii_uppercase, string.ascii_lowercase))


def php_type(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    return "array"


# filter_var($url, FILTER_VALIDATE_URL), after ext/filter/logical_filters.c:
# FILTER_SANITIZE_URL must not remove anything, parse_url must succeed, a scheme
# is required, a host too (except mailto/news/file), an http(s) host must be a
# valid host name (or [IPv6]), user info only of allowed characters.
_URL_CHARS = set(string.ascii_letters + string.digits + "$-_.+!*'(),{}|\\^~[]`<>#%\";/?:@&=")
_USERINFO_CHARS = set(string.ascii_letters + string.digits + "-._~!$&'()*+,;=:")


def _valid_domain(host):
    if host.endswith("."):
        host = host[:-1]
    if len(host) > 253 or not host:
        return False
    if host[0] == "." or not host[0].isascii() or not host[0].isalnum():
        return False
    label = 1
    for i, c in enumerate(host):
        if c == ".":
            nxt = host[i + 1] if i + 1 < len(host) else ""
            if nxt == "." or not (host[i - 1].isascii() and host[i - 1].isalnum()) \
                    or not (nxt.isascii() and nxt.isalnum()):
                return False
            label = 1
        else:
            if label > 63 or (c != "-" and not (c.isascii() and c.isalnum())):
                return False
            label += 1
    return True


def _valid_userinfo(s):
    i = 0
    while i < len(s):
        if s[i] == "%":
            if not re.match(r"[0-9A-Fa-f]{2}", s[i + 1:i + 3]):
                return False
            i += 3
            continue
        if s[i] not in _USERINFO_CHARS:
            return False
        i += 1
    return True


def php_valid_url(url):
    if not isinstance(url, str) or any(c not in _URL_CHARS for c in url):
        return False
    m = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):(.*)\Z", url, re.S)
    if not m:
        return False
    scheme, rest = m.group(1), m.group(2)
    host = user = password = None
    if rest.startswith("//"):
        rest = rest[2:]
        end = len(rest)
        for ch in "/?#":
            j = rest.find(ch)
            if j != -1:
                end = min(end, j)
        authority = rest[:end]
        if "@" in authority:
            userinfo, hostport = authority.rsplit("@", 1)
            user, _, password = userinfo.partition(":")
            if not _:
                password = None
        else:
            hostport = authority
        if hostport.startswith("["):
            close = hostport.find("]")
            if close == -1:
                return False
            host, port = hostport[:close + 1], hostport[close + 1:]
            if port and not port.startswith(":"):
                return False
            port = port[1:]
        else:
            host, _, port = hostport.partition(":")
        if port and (not port.isdigit() or int(port) > 65535):
            return False
        host = host or None
    if scheme.lower() in ("http", "https"):
        if host is None:
            return False
        if host.startswith("[") and host.endswith("]"):
            try:
                socket.inet_pton(socket.AF_INET6, host[1:-1])
                return True
            except OSError:
                pass
        if not _valid_domain(host):
            return False
    if host is None and scheme not in ("mailto", "news", "file"):
        return False
    if (user is not None and not _valid_userinfo(user)) or \
            (password is not None and not _valid_userinfo(password)):
        return False
    return True


# Dates: epoch seconds from/to proleptic Gregorian civil dates, any year
# (H. Hinnant's days_from_civil / civil_from_days), so PHP's roll-over of
# out-of-range days and times (2024-02-31 -> 2024-03-02) can be copied.

def days_from_civil(y, m, d):
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z):
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def epoch_of(y, mo, d, h, mi, s, offset=0):
    y += (mo - 1) // 12
    mo = (mo - 1) % 12 + 1
    return (days_from_civil(y, mo, 1) + d - 1) * 86400 + h * 3600 + mi * 60 + s - offset


def format_epoch(epoch, with_offset):
    days, secs = divmod(epoch, 86400)
    y, m, d = civil_from_days(days)
    ys = ("-%04d" % -y) if y < 0 else ("%04d" % y)
    out = "%s-%02d-%02dT%02d:%02d:%02d" % (ys, m, d, secs // 3600, secs // 60 % 60, secs % 60)
    return out + "+00:00" if with_offset else out


_ISO = re.compile(r"""\s*(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})
    (?:(?:[Tt]|\s+)(?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:[.,](?P<f>\d+))?)?)?
    \s*(?P<tz>[Zz]|UTC|GMT|[+-]\d{1,2}(?::?\d{2})?)?\s*\Z""", re.X)


def parse_php_datetime(text, now):
    """new DateTime($text, new DateTimeZone('UTC')) -> epoch (app >= 3.11.0).
    Covers the ISO-8601 forms clients send, '', 'now' and '@EPOCH'; PHP accepts
    far more (relative formats, month names): those raise PHPError here."""
    t = text.strip()
    if t == "" or t.lower() == "now":
        return now
    m = re.match(r"@(-?\d+)\Z", t)
    if m:
        return int(m.group(1))
    m = _ISO.match(text)
    if not m:
        raise PHPError('DateMalformedStringException: Failed to parse time string (%s)' % text)
    mo, d = int(m["m"]), int(m["d"])
    h, mi, s = int(m["H"] or 0), int(m["M"] or 0), int(m["S"] or 0)
    if not 1 <= mo <= 12 or d > 31 or h > 24 or mi > 59 or s > 60:
        raise PHPError('DateMalformedStringException: Failed to parse time string (%s)' % text)
    off = 0
    tz = m["tz"]
    if tz and tz[0] in "+-":
        digits = tz[1:].replace(":", "")
        hh, mm = (digits, "0") if len(digits) <= 2 else (digits[:-2], digits[-2:])
        off = (int(hh) * 3600 + int(mm) * 60) * (1 if tz[0] == "+" else -1)
    return epoch_of(int(m["y"]), mo, d, h, mi, s, off)


_STRICT = re.compile(r"(\d{1,4})-(\d{1,2})-(\d{1,2})T(\d{1,2}):(\d{2}):(\d{2})\Z")


def parse_strict_datetime(text):
    """DateTime::createFromFormat('Y-m-d\\TH:i:s', $text)->format('U') (app < 3.11.0):
    anything else (a 'Z', an offset, fractions) returned false -> Error -> 500."""
    m = _STRICT.match(text)
    if not m:
        raise PHPError("Error: Call to a member function format() on bool")
    y, mo, d, h, mi, s = (int(x) for x in m.groups())
    return epoch_of(y, mo, d, h, mi, s)


# ---------------------------------------------------------------- storage

class Store:
    """The app's two tables, per user: gpodder_episode_action (unique on
    (episode, user_id) and (guid, user_id)) and gpodder_subscriptions (unique on
    (url, user_id)). Rows keep insertion (id) order, as a SELECT without ORDER BY
    returns them on SQLite/MySQL."""

    def __init__(self, path=None):
        self.path = path
        self.lock = threading.RLock()
        self.episodes = []   # dicts: id user podcast episode guid action position started total timestamp_epoch
        self.subs = []       # dicts: id user url subscribed updated
        self.next_id = 1
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            self.episodes = data.get("episode_actions", [])
            self.subs = data.get("subscriptions", [])
            self.next_id = data.get("next_id", 1)

    def save(self):
        if not self.path:
            return
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"format": "nextcloud_gpoddersync test state 1",
                       "episode_actions": self.episodes, "subscriptions": self.subs,
                       "next_id": self.next_id}, f, indent=1)
        os.replace(tmp, self.path)

    def wipe(self):
        self.episodes, self.subs, self.next_id = [], [], 1
        self.save()

    def new_id(self):
        self.next_id += 1
        return self.next_id - 1

    def dump(self):
        return {"episode_actions": self.episodes, "subscriptions": self.subs}

    # -- episode actions (EpisodeActionSaver)
    def _ep_by(self, user, field, value):
        for r in self.episodes:
            if r["user"] == user and r[field] == value:
                return r
        return None

    def _ep_conflicts(self, ent, exclude_id=None):
        for r in self.episodes:
            if r["user"] != ent["user"] or r["id"] == exclude_id:
                continue
            if r["episode"] == ent["episode"]:
                return True
            if ent["guid"] is not None and r["guid"] == ent["guid"]:
                return True
        return False

    def save_episode_action(self, ent):
        if not self._ep_conflicts(ent):
            ent["id"] = self.new_id()
            self.episodes.append(ent)
            return
        # unique constraint violated -> updateEpisodeAction()
        user = ent["user"]
        to_update = None
        if ent["guid"] is not None:
            to_update = self._ep_by(user, "guid", ent["guid"])
        if to_update is None:
            to_update = self._ep_by(user, "episode", ent["episode"])
        ent["id"] = to_update["id"]
        if to_update["guid"] is not None and ent["guid"] is None:
            ent["guid"] = to_update["guid"]      # ensureGuidDoesNotGetNulledWithOldData
        if self._ep_conflicts(ent, exclude_id=ent["id"]):
            # deleteConflictingEpisodeAction(): drop the row holding this episode URL
            colliding = self._ep_by(user, "episode", ent["episode"])
            if colliding is None:
                raise PHPError("Error: Call to a member function getId() on null")
            if colliding["id"] != ent["id"]:
                self.episodes.remove(colliding)
        to_update.update(ent)

    # -- subscriptions (SubscriptionChangeSaver)
    def save_subscription(self, user, url, subscribed, now):
        for r in self.subs:
            if r["user"] == user and r["url"] == url:
                r["subscribed"] = subscribed
                r["updated"] = now
                return
        self.subs.append({"id": self.new_id(), "user": user, "url": url,
                          "subscribed": subscribed, "updated": now})


# ---------------------------------------------------------------- the app

class App:
    def __init__(self, users, version, store, challenge=False):
        self.users = users                      # {login: password}
        self.version = version
        self.plays_only = version >= (3, 13, 3)     # 3.13.3: "#168 ignore actions DELETE and DOWNLOAD"
        self.iso_timestamps = version >= (3, 11, 0)  # 3.11.0: any ISO 8601 in, "+00:00" out
        self.store = store
        self.challenge = challenge
        self.clock_offset = 0
        self.faults = sync_faults.FaultBook()
        self.log = sync_faults.RequestLog()

    def now(self):
        return int(time.time()) + self.clock_offset

    # GET /subscriptions
    def subscriptions(self, user, params):
        since = php_int(params.get("since", 0))
        with self.store.lock:
            rows = [r for r in self.store.subs if r["user"] == user and r["updated"] > since]
            return {"add": [r["url"] for r in rows if r["subscribed"]],
                    "remove": [r["url"] for r in rows if not r["subscribed"]],
                    "timestamp": self.now()}

    # POST /subscription_change/create
    def subscription_change_create(self, user, params):
        add, remove = params.get("add"), params.get("remove")
        for i, (name, v) in enumerate((("add", add), ("remove", remove))):
            if not isinstance(v, (list, dict)):
                raise PHPError("TypeError: SubscriptionChangeController::create(): Argument #%d ($%s) "
                               "must be of type array, %s given" % (i + 1, name, php_type(v)))
        changes = []
        for urls, subscribed in ((add, True), (remove, False)):
            for url in (urls.values() if isinstance(urls, dict) else urls):
                # function(string $url) called by array_filter (coercive mode)
                if url is None or isinstance(url, (list, dict)):
                    raise PHPError("TypeError: {closure}(): Argument #1 ($url) must be of type string, "
                                   "%s given" % php_type(url))
                if isinstance(url, str) and php_valid_url(url):
                    changes.append((url, subscribed))
        now = self.now()
        with self.store.lock:
            for url, subscribed in changes:
                self.store.save_subscription(user, url, subscribed, now)
            self.store.save()
        return {"timestamp": self.now()}

    # GET /episode_action
    def episode_action(self, user, params):
        since = php_int(params.get("since", 0))
        with self.store.lock:
            rows = [r for r in self.store.episodes
                    if r["user"] == user and r["timestamp_epoch"] > since]
            actions = [{
                "podcast": r["podcast"], "episode": r["episode"],
                "timestamp": format_epoch(r["timestamp_epoch"], self.iso_timestamps),
                "guid": r["guid"], "position": r["position"], "started": r["started"],
                "total": r["total"], "action": r["action"],
            } for r in rows]
        return {"actions": actions, "timestamp": self.now()}

    # POST /episode_action/create
    def episode_action_create(self, user, params):
        items = [v for k, v in params.items() if php_is_numeric(k)]
        if self.plays_only:
            kept = []
            for ep in items:
                if isinstance(ep, dict) and ep.get("action") is not None:
                    if not isinstance(ep["action"], str):
                        raise PHPError("TypeError: strtolower(): Argument #1 ($string) must be of "
                                       "type string, %s given" % php_type(ep["action"]))
                    if ascii_lower(ep["action"]) == "play":
                        kept.append(ep)
            items = kept
        actions = [self._read_action(ep) for ep in items]   # EpisodeActionReader::fromArray
        now = self.now()
        with self.store.lock:
            try:
                for a in actions:
                    ts = a.pop("timestamp")
                    a["timestamp_epoch"] = (parse_php_datetime(ts, now) if self.iso_timestamps
                                            else parse_strict_datetime(ts))
                    a["user"] = user
                    self.store.save_episode_action(a)
            finally:
                self.store.save()   # no transaction: actions before a bad one stay saved
        return {"timestamp": self.now()}

    @staticmethod
    def _read_action(ep):
        if not isinstance(ep, (dict, list)):
            raise PHPError("TypeError: EpisodeActionReader::hasRequiredProperties(): Argument #1 "
                           "($episodeAction) must be of type array, %s given" % php_type(ep))
        if not isinstance(ep, dict) or not all(k in ep for k in ("podcast", "episode", "action", "timestamp")):
            raise PHPError("InvalidArgumentException: Client sent incomplete or invalid data: %s"
                           % json.dumps(ep, separators=(",", ":")))
        out = {}
        for name in ("podcast", "episode", "action", "timestamp"):
            if not isinstance(ep[name], str):
                raise PHPError("TypeError: EpisodeAction::__construct(): Argument ($%s) must be of "
                               "type string, %s given" % (name, php_type(ep[name])))
            out[name] = ep[name]
        out["action"] = ascii_upper(out["action"])
        for name in ("started", "position", "total"):
            v = ep.get(name)
            if v is None:
                v = -1
            elif isinstance(v, bool) or not isinstance(v, int) or not INT_MIN <= v <= INT_MAX:
                raise PHPError("TypeError: EpisodeAction::__construct(): Argument ($%s) must be of "
                               "type int, %s given" % (name, php_type(v)))
            out[name] = v
        guid = ep.get("guid")
        if guid is not None and not isinstance(guid, str):
            raise PHPError("TypeError: EpisodeAction::__construct(): Argument ($guid) must be of "
                           "type ?string, %s given" % php_type(guid))
        out["guid"] = guid
        return {"podcast": out["podcast"], "episode": out["episode"], "guid": out["guid"],
                "action": out["action"], "position": out["position"], "started": out["started"],
                "total": out["total"], "timestamp": out["timestamp"]}


ROUTES = {
    "subscriptions": ("GET", App.subscriptions),
    "subscription_change/create": ("POST", App.subscription_change_create),
    "episode_action": ("GET", App.episode_action),
    "episode_action/create": ("POST", App.episode_action_create),
}

ERROR_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Nextcloud</title></head>
<body><div class="guest-box"><h2>{title}</h2><p>{text}</p></div></body></html>
"""


def _php_query(qs):
    """$_GET from a query string: key=value pairs; key[]=v and key[k]=v make arrays."""
    out = {}
    for k, v in urllib.parse.parse_qsl(qs, keep_blank_values=True):
        m = re.match(r"([^\[]+)\[([^\]]*)\]", k)
        if m:
            base, sub = m.group(1), m.group(2)
            cur = out.get(base)
            if not isinstance(cur, dict):
                cur = {}
                out[base] = cur
            if sub == "":
                sub = str(len(cur))
            cur[sub] = v
        else:
            out[k] = v
    return {k: (list(v.values()) if isinstance(v, dict) and all(s.isdigit() for s in v) else v)
            for k, v in out.items()}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "Apache"
    sys_version = ""
    app: App = None
    base_path = ""

    def log_message(self, fmt, *args):  # quiet; GET /__control/requests has the log
        if os.environ.get("NC_FAKE_ACCESS_LOG"):
            sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_PUT(self):
        self._dispatch("PUT")

    def do_DELETE(self):
        self._dispatch("DELETE")

    def do_PATCH(self):
        self._dispatch("PATCH")

    def do_HEAD(self):
        self._dispatch("HEAD")

    def do_OPTIONS(self):
        self._dispatch("OPTIONS")

    # -- plumbing
    def _read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def _send(self, status, headers, body, cut=None):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        if cut is not None:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body if cut is None else body[:cut])
        self.wfile.flush()
        if cut is not None:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def _json_headers(self):
        return [("Content-Type", "application/json; charset=utf-8"),
                ("Cache-Control", "no-cache, no-store, must-revalidate")]

    def _control(self, method, path, body):
        app = self.app
        name = path[len(sync_faults.CONTROL_PREFIX):].strip("/")
        if name == "state":
            if method == "GET":
                with app.store.lock:
                    return 200, app.store.dump()
            if method == "DELETE":
                with app.store.lock:
                    app.store.wipe()
                return 200, {"wiped": True}
            return 405, {"error": "GET or DELETE"}
        if name == "clock":
            if method == "POST":
                spec = php_json_decode(body) if body else None
                if isinstance(spec, dict) and isinstance(spec.get("offset"), int):
                    app.clock_offset = spec["offset"]
                elif isinstance(spec, dict) and isinstance(spec.get("now"), int):
                    app.clock_offset = spec["now"] - int(time.time())
                else:
                    return 400, {"error": 'body: {"offset": seconds} or {"now": epoch}'}
            elif method == "DELETE":
                app.clock_offset = 0
            elif method != "GET":
                return 405, {"error": "GET, POST or DELETE"}
            return 200, {"now": app.now(), "offset": app.clock_offset}
        return sync_faults.control(app.faults, app.log, method, path, body)

    def _dispatch(self, method):
        app = self.app
        split = urllib.parse.urlsplit(self.path)
        path, query = split.path, split.query
        try:
            body = self._read_body()
        except (ValueError, OSError):
            self.close_connection = True
            return
        if path.startswith(sync_faults.CONTROL_PREFIX):
            status, value = self._control(method, path, body)
            return self._send(status, [("Content-Type", "application/json")],
                              (json.dumps(value, indent=1) + "\n").encode())

        auth = self.headers.get("Authorization")
        state = {"status": None}
        target = path + ("?" + query if query else "")
        fault = app.faults.take(method, target, auth is not None)
        try:
            if fault is not None and fault.delay:
                time.sleep(fault.delay)
            if fault is not None and fault.status is not None and not fault.truncate:
                defaults = [("WWW-Authenticate", 'Basic realm="Nextcloud", charset="UTF-8"')] \
                    if fault.status == 401 and app.challenge else []
                status, headers, out = fault.canned(defaults)
                state["status"] = status
                return self._send(status, headers, out)
            if fault is not None and fault.truncate and "body" in fault.spec:
                status, headers, out = fault.canned()
                state["status"] = status
                return self._send(status, headers, out, cut=fault.cut(len(out)))
            status, headers, out = self._handle(method, path, query, body, auth)
            state["status"] = status
            cut = fault.cut(len(out)) if fault is not None and fault.truncate else None
            return self._send(status, headers, out, cut=cut)
        finally:
            app.log.add(method, path, query, state["status"], fault=fault.id if fault else None,
                        user=sync_faults.basic_user(auth), body=body or None)

    def _handle(self, method, path, query, body, auth):
        """Nextcloud: log in from Basic auth, route, check login, run the controller."""
        app = self.app
        accept = self.headers.get("Accept") or ""
        wants_html = "html" in accept.lower()
        challenge = [("WWW-Authenticate", 'Basic realm="Nextcloud", charset="UTF-8"')] if app.challenge else []

        # base.php handleLogin(): Basic credentials, if given, must be valid (LoginException).
        user = None
        if auth and auth[:6].lower() == "basic ":
            try:
                raw = base64.b64decode(auth[6:].strip(), validate=True).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                raw = ""
            login, sep, password = raw.partition(":")
            if sep and not php_empty(login) and not php_empty(password):
                if app.users.get(login) == password:
                    user = login
                else:
                    if wants_html:
                        return 401, [("Content-Type", "text/html; charset=utf-8")] + challenge, \
                            ERROR_PAGE.format(title="Error", text="").encode()
                    return 401, [("Content-Type", "application/json; charset=utf-8")] + challenge, \
                        php_json({"message": ""}).encode()

        # Router: BASE/index.php/apps/gpoddersync/... (or BASE/apps/... with pretty URLs)
        rel = path[len(self.base_path):] if path.startswith(self.base_path + "/") else None
        route = None
        if rel is not None:
            if rel.startswith("/index.php/"):
                rel = rel[len("/index.php"):]
            if rel.startswith(APP_PREFIX):
                route = rel[len(APP_PREFIX):]
        if route not in ROUTES:
            return 404, [("Content-Type", "text/html; charset=utf-8")], \
                ERROR_PAGE.format(title="Page not found",
                                  text="The page could not be found on the server.").encode()
        verb, handler = ROUTES[route]
        if method != verb and not (method == "HEAD" and verb == "GET"):
            return 405, [("Content-Type", "text/html; charset=utf-8")], b""

        # SecurityMiddleware: NotLoggedInException
        if user is None:
            if wants_html:
                loc = "%s/index.php/login?redirect_url=%s" % (
                    self.base_path, urllib.parse.quote(self.path, safe=""))
                return 303, [("Location", loc), ("Content-Type", "text/html; charset=utf-8")], b""
            return 401, self._json_headers() + challenge, \
                php_json({"message": "Current user is not logged in"}).encode()

        # Request::getParams(): $_GET, then a JSON body (Content-Type ^application/(x+)?json),
        # or for POST a form body as $_POST.
        params = dict(_php_query(query))
        ctype = self.headers.get("Content-Type") or ""
        if re.match(r"application/(?:[a-z0-9.-]+\+)?json\b", ctype):
            decoded = php_json_decode(body)
            if isinstance(decoded, list) and decoded:
                decoded = {i: v for i, v in enumerate(decoded)}
            if isinstance(decoded, dict) and decoded:
                merged = {k: v for k, v in params.items() if not php_is_numeric(k)}
                numeric = [v for k, v in params.items() if php_is_numeric(k)]
                for k, v in decoded.items():
                    if php_is_numeric(k):
                        numeric.append(v)
                    else:
                        merged[k] = v
                params = merged
                params.update({i: v for i, v in enumerate(numeric)})
        elif method == "POST" and ctype.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
            if ctype.startswith("application/x-www-form-urlencoded"):
                params.update(_php_query(body.decode("utf-8", "replace")))

        try:
            result = handler(app, user, params)
        except PHPError as e:
            sys.stderr.write("nextcloud_gpoddersync: 500: %s\n" % e)
            return 500, [("Content-Type", "text/html; charset=utf-8")], \
                ERROR_PAGE.format(title="Internal Server Error",
                                  text="The server was unable to complete your request.").encode()
        return 200, self._json_headers(), php_json(result).encode()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def parse_version(s):
    parts = [int(p) for p in s.split(".")]
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts[:3])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, required=True, help="0 = pick a free port")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--user", required=True, help="Nextcloud login name")
    p.add_argument("--password", required=True, help="its app password")
    p.add_argument("--version", default=DEFAULT_VERSION,
                   help="app version to behave as (default %(default)s); < 3.13.3 stores every "
                        "action, not only plays; < 3.11.0 takes only YYYY-MM-DDTHH:MM:SS and "
                        "answers timestamps without '+00:00'")
    p.add_argument("--data", help="JSON file keeping the stored rows across restarts")
    p.add_argument("--base-path", default="", help="Nextcloud installed in a sub-folder, e.g. /nextcloud")
    p.add_argument("--challenge", action="store_true",
                   help='add WWW-Authenticate: Basic realm="Nextcloud" to 401s (real Nextcloud '
                        "sends none on app routes)")
    a = p.parse_args(argv)
    try:
        version = parse_version(a.version)
    except ValueError:
        p.error("--version: expected a version like 3.16.0")
    if version < (3, 8, 3):
        sys.stderr.write("nextcloud_gpoddersync: behaviour before 3.8.3 is not modelled; "
                         "acting as 3.10 otherwise\n")
    Handler.app = App({a.user: a.password}, version, Store(a.data), challenge=a.challenge)
    Handler.base_path = a.base_path.rstrip("/")
    server = Server((a.host, a.port), Handler)
    host, port = server.server_address[:2]
    print("listening on %s:%d" % (host, port), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    main()
