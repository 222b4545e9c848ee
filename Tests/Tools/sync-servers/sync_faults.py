"""Fault injection and request log shared by the podcast-sync test servers
(gpodder_server.py and nextcloud_gpoddersync.py). Standard library only, runs
on Python 3.11 and later, thread-safe (the Nextcloud replica is threaded).

Control API (served by both servers, no authentication, never logged):

  POST   /__control/faults     add a fault, JSON body (fields below); -> {"id": n, ...}
  GET    /__control/faults     the faults still armed
  DELETE /__control/faults     disarm all faults
  GET    /__control/requests   the requests seen so far (JSON list, oldest first)
  DELETE /__control/requests   forget them

Fault fields (all optional):
  path_contains  substring of "path?query" a request must contain (default: any)
  method         HTTP method a request must have (default: any)
  with_auth      true: only requests that carry an Authorization header; false:
                 only those without (default: either). mygpoclient sends every
                 request first without credentials and repeats it after the 401.
  count          how many matching requests the fault hits, then it is gone
                 (default 1; -1 = until DELETE /__control/faults)
  status         answer with this status instead of handling the request
                 (default 500 when neither truncate nor delay is given)
  body           body of that answer (default: a small JSON error object)
  content_type   its Content-Type (default application/json when the body
                 parses as JSON, else text/plain; charset=utf-8)
  retry_after    value of a Retry-After header (seconds or an HTTP date)
  headers        {name: value} extra response headers
  delay          seconds to wait before answering (alone: the request is then
                 handled normally, i.e. a slow server)
  truncate       true: a 200 (or `status`) whose Content-Length is the full
                 body's but whose body stops short, then the connection closes.
                 With `body`: that canned body is cut. Without: the request IS
                 handled (state changes) and the real response is cut, as when
                 a connection drops after the server did the work.
  truncate_at    bytes of the body actually sent (default: half of it)

Request log entries: {"seq", "time", "method", "path", "query", "status",
"fault" (null or the fault id that hit it), "user" (Basic-auth user name sent,
or null), "body" (request body text for requests that had one, else null)}.
"""
from __future__ import annotations

import json
import threading
import time

CONTROL_PREFIX = "/__control/"

_FIELDS = {
    "path_contains": str, "method": str, "count": int, "status": int,
    "with_auth": bool, "body": str, "content_type": str, "retry_after": (int, float, str),
    "headers": dict, "delay": (int, float), "truncate": bool, "truncate_at": int,
}

MAX_LOGGED_BODY = 1 << 20


class FaultError(ValueError):
    pass


class Fault:
    def __init__(self, fid, spec):
        self.id = fid
        self.spec = spec
        self.remaining = spec.get("count", 1)
        self.hits = 0

    @property
    def path_contains(self):
        return self.spec.get("path_contains")

    @property
    def delay(self):
        return float(self.spec.get("delay") or 0)

    @property
    def truncate(self):
        return bool(self.spec.get("truncate"))

    @property
    def status(self):
        if "status" in self.spec:
            return self.spec["status"]
        if self.truncate:
            return None
        if "delay" in self.spec:
            return None
        return 500

    def matches(self, method, target, has_auth):
        m = self.spec.get("method")
        if m and m.upper() != method.upper():
            return False
        wa = self.spec.get("with_auth")
        if wa is not None and wa != has_auth:
            return False
        pc = self.spec.get("path_contains")
        return not pc or pc in target

    def canned(self, default_headers=()):
        """(status, [(name, value)], body bytes) of an injected answer."""
        status = self.status or 200
        if "body" in self.spec:
            body = self.spec["body"].encode("utf-8")
        else:
            body = json.dumps({"error": "injected fault", "status": status}).encode()
        ctype = self.spec.get("content_type")
        if ctype is None:
            try:
                json.loads(body)
                ctype = "application/json"
            except ValueError:
                ctype = "text/plain; charset=utf-8"
        headers = [("Content-Type", ctype)]
        given = {k.lower() for k in self.spec.get("headers", {})}
        for k, v in default_headers:
            if k.lower() not in given:
                headers.append((k, v))
        if "retry_after" in self.spec:
            ra = self.spec["retry_after"]
            headers.append(("Retry-After", str(int(ra)) if isinstance(ra, (int, float)) else ra))
        for k, v in self.spec.get("headers", {}).items():
            headers.append((str(k), str(v)))
        return status, headers, body

    def cut(self, body_len):
        """How many bytes of a body of body_len bytes to send."""
        at = self.spec.get("truncate_at")
        if at is None:
            at = body_len // 2
        return max(0, min(at, body_len - 1)) if body_len else 0

    def to_json(self):
        d = dict(self.spec)
        d.update(id=self.id, remaining=self.remaining, hits=self.hits)
        return d


class FaultBook:
    def __init__(self):
        self._lock = threading.Lock()
        self._faults = []
        self._next = 1

    def add(self, spec):
        if not isinstance(spec, dict):
            raise FaultError("a fault is a JSON object")
        for k, v in spec.items():
            if k not in _FIELDS:
                raise FaultError("unknown fault field %r (known: %s)" % (k, ", ".join(sorted(_FIELDS))))
            t = _FIELDS[k]
            if isinstance(v, bool) and t is not bool:
                raise FaultError("fault field %r has the wrong type" % k)
            if not isinstance(v, t):
                raise FaultError("fault field %r has the wrong type" % k)
        if "status" in spec and not 100 <= spec["status"] <= 599:
            raise FaultError("status must be 100..599")
        if spec.get("count", 1) == 0 or spec.get("count", 1) < -1:
            raise FaultError("count must be >= 1, or -1 for 'until cleared'")
        with self._lock:
            f = Fault(self._next, spec)
            self._next += 1
            self._faults.append(f)
            return f.to_json()

    def clear(self):
        with self._lock:
            n = len(self._faults)
            self._faults = []
            return n

    def list(self):
        with self._lock:
            return [f.to_json() for f in self._faults]

    def take(self, method, target, has_auth=False):
        """The first armed fault matching this request (its count is used up), or None."""
        with self._lock:
            for f in self._faults:
                if f.matches(method, target, has_auth):
                    f.hits += 1
                    if f.remaining > 0:
                        f.remaining -= 1
                        if f.remaining == 0:
                            self._faults.remove(f)
                    return f
        return None


class RequestLog:
    def __init__(self):
        self._lock = threading.Lock()
        self._entries = []
        self._seq = 0

    def add(self, method, path, query, status, fault=None, user=None, body=None):
        if body is not None:
            body = body[:MAX_LOGGED_BODY].decode("utf-8", "replace")
        with self._lock:
            self._seq += 1
            self._entries.append({
                "seq": self._seq, "time": round(time.time(), 3), "method": method,
                "path": path, "query": query, "status": status,
                "fault": fault, "user": user, "body": body,
            })

    def list(self):
        with self._lock:
            return list(self._entries)

    def clear(self):
        with self._lock:
            n = len(self._entries)
            self._entries = []
            return n


def control(faults, log, method, path, body):
    """Answer a /__control/ request: (status, JSON-able value)."""
    name = path[len(CONTROL_PREFIX):].strip("/")
    if name == "faults":
        if method == "POST":
            try:
                spec = json.loads(body or b"null")
            except ValueError as e:
                return 400, {"error": "body is not JSON: %s" % e}
            specs = spec if isinstance(spec, list) else [spec]
            try:
                added = [faults.add(s) for s in specs]
            except FaultError as e:
                return 400, {"error": str(e)}
            return 200, (added if isinstance(spec, list) else added[0])
        if method == "GET":
            return 200, faults.list()
        if method == "DELETE":
            return 200, {"cleared": faults.clear()}
    elif name == "requests":
        if method == "GET":
            return 200, log.list()
        if method == "DELETE":
            return 200, {"cleared": log.clear()}
    else:
        return 404, {"error": "unknown control endpoint %r" % path}
    return 405, {"error": "method %s not allowed on %s" % (method, path)}


def basic_user(authorization):
    """User name in an 'Authorization: Basic ...' header value, or None."""
    import base64
    import binascii
    if not authorization or not authorization[:6].lower() == "basic ":
        return None
    try:
        raw = base64.b64decode(authorization[6:].strip(), validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None
    return raw.split(":", 1)[0]
