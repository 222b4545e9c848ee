"""gpodder.net-API (v2) test server: the PyPI package gpodder-fastapi-router
0.1.3 (GPL-3.0+, only run in tests) behind a small ASGI shim.

Run it through serve-gpodder.sh (creates the user, then execs uvicorn):
    uvicorn --app-dir Tests/Tools/sync-servers gpodder_server:app --host 127.0.0.1 --port N
Config comes from GPODDER_* env vars (GPODDER_DATABASE_URL, GPODDER_BCRYPT_ROUNDS, ...).

Shim fixes (all needed by real clients, see README.md "Deviations"):
1. gpodder_router.attach() registers @app.on_event hooks, which Starlette >= 1.0
   removed (AttributeError with fastapi 0.165 / starlette 1.10): we use the
   package's lifespan() + build_router() instead (creates the SQLite schema).
2. 401 carries a bare `WWW-Authenticate: Basic` (no realm). Python's urllib
   HTTPBasicAuthHandler (mygpoclient, gPodder) only retries with credentials
   when a realm is present; mygpo sends `Basic realm=""`, so do we.
3. mygpoclient POSTs JSON labelled application/x-www-form-urlencoded (urllib's
   default). mygpo parses the body as JSON whatever the label; FastAPI answers
   422. Such bodies are relabelled application/json.
GPODDER_TEST_STRICT=1 turns 2 and 3 off (the package's raw behaviour).

Test controls (see sync_faults.py for the full field list):
    POST/GET/DELETE /__control/faults, GET/DELETE /__control/requests
"""
from __future__ import annotations

import asyncio
import json
import logging
import os

from fastapi import FastAPI
from gpodder_router import GPodderConfig, build_router, lifespan

import sync_faults

cfg = GPodderConfig(enable_dashboard=False)
api = FastAPI(lifespan=lambda a: lifespan(a, config=cfg))
api.include_router(build_router())

REALM_HEADER = (b"www-authenticate", b'Basic realm=""')


class MygpoCompat:
    """ASGI wrapper: fixes 2 and 3 above."""

    def __init__(self, inner):
        self.inner = inner

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.inner(scope, receive, send)
        if scope["method"] in ("POST", "PUT"):
            headers = []
            for k, v in scope["headers"]:
                if k == b"content-type" and v.startswith(b"application/x-www-form-urlencoded"):
                    v = b"application/json"
                headers.append((k, v))
            scope = dict(scope, headers=headers)

        async def send2(message):
            if message["type"] == "http.response.start" and message["status"] == 401:
                message = dict(message, headers=[
                    REALM_HEADER if (k.lower() == b"www-authenticate" and v == b"Basic") else (k, v)
                    for k, v in message.get("headers", [])])
            await send(message)

        return await self.inner(scope, receive, send2)


class TestControls:
    """ASGI wrapper: /__control/ endpoints, fault injection, request log."""

    def __init__(self, inner, realm_header):
        self.inner = inner
        self.faults = sync_faults.FaultBook()
        self.log = sync_faults.RequestLog()
        self.realm_header = realm_header

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.inner(scope, receive, send)
        method = scope["method"]
        path = scope["path"]
        query = scope.get("query_string", b"").decode("latin-1")
        if path.startswith(sync_faults.CONTROL_PREFIX):
            body = await _read_body(receive)
            status, value = sync_faults.control(self.faults, self.log, method, path, body)
            return await _send_json(send, status, value)

        auth = None
        for k, v in scope["headers"]:
            if k == b"authorization":
                auth = v.decode("latin-1")
        user = sync_faults.basic_user(auth)

        # Read the request body up front so it can be logged, then replay it.
        body = await _read_body(receive)
        replayed = False

        async def receive2():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        target = path + ("?" + query if query else "")
        fault = self.faults.take(method, target, auth is not None)
        state = {"status": None}

        def log():
            self.log.add(method, path, query, state["status"],
                         fault=fault.id if fault else None, user=user,
                         body=body if body else None)

        if fault is not None and fault.delay:
            await asyncio.sleep(fault.delay)

        if fault is not None and fault.status is not None and not fault.truncate:
            defaults = [(REALM_HEADER[0].decode(), REALM_HEADER[1].decode())] \
                if fault.status == 401 and self.realm_header else []
            status, headers, out = fault.canned(defaults)
            state["status"] = status
            log()
            return await _send_raw(send, status, headers, out)

        if fault is not None and fault.truncate and "body" in fault.spec:
            status, headers, out = fault.canned()
            state["status"] = status
            log()
            return await _send_truncated(send, status, headers, out, fault.cut(len(out)))

        if fault is not None and fault.truncate:
            # Handle the request for real, buffer the answer, send it cut short.
            captured = {"status": 200, "headers": [], "body": b""}

            async def capture(message):
                if message["type"] == "http.response.start":
                    captured["status"] = message["status"]
                    captured["headers"] = message.get("headers", [])
                elif message["type"] == "http.response.body":
                    captured["body"] += message.get("body", b"")

            await self.inner(scope, receive2, capture)
            state["status"] = captured["status"]
            log()
            headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in captured["headers"]
                       if k.lower() != b"content-length"]
            out = captured["body"]
            return await _send_truncated(send, captured["status"], headers, out, fault.cut(len(out)))

        async def send2(message):
            if message["type"] == "http.response.start":
                state["status"] = message["status"]
            await send(message)

        try:
            await self.inner(scope, receive2, send2)
        finally:
            log()


async def _read_body(receive):
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def _send_raw(send, status, headers, body):
    hs = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    hs.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": hs})
    await send({"type": "http.response.body", "body": body})


async def _send_json(send, status, value):
    body = (json.dumps(value, indent=1) + "\n").encode()
    await _send_raw(send, status, [("Content-Type", "application/json")], body)


async def _send_truncated(send, status, headers, body, n):
    """Declare len(body) bytes, send n < len(body), then return without finishing:
    uvicorn then logs 'ASGI callable returned without completing response' and
    closes the connection."""
    hs = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    hs.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": hs})
    await send({"type": "http.response.body", "body": body[:n], "more_body": True})


class _QuietTruncation(logging.Filter):
    def filter(self, record):
        return "returned without completing response" not in record.getMessage()


logging.getLogger("uvicorn.error").addFilter(_QuietTruncation())

_strict = os.environ.get("GPODDER_TEST_STRICT") == "1"
app = TestControls(api if _strict else MygpoCompat(api), realm_header=not _strict)
