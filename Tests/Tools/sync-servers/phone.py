#!/usr/bin/env python3
"""A scripted "phone": the gPodder client library mygpoclient (PyPI 1.10)
talking to a gpodder.net-API v2 server, the way gPodder desktop does.

Usage (run with the venv's python):
  phone.py URL USER PASS DEVICE subs-up   [--add URL ...] [--remove URL ...]
  phone.py URL USER PASS DEVICE subs-down [--since N]
  phone.py URL USER PASS DEVICE play      --podcast URL --episode URL
                                          --position S [--started S] [--total S]
                                          [--timestamp YYYY-MM-DDTHH:MM:SS]
  phone.py URL USER PASS DEVICE action    --action download|delete|new|play ...
  phone.py URL USER PASS DEVICE eps-down  [--since N] [--podcast URL]
  phone.py URL USER PASS DEVICE device    [--caption TEXT] [--type mobile]
  phone.py URL USER PASS DEVICE subs-all  (GET /subscriptions/USER.json: all devices;
                                          DEVICE is ignored)
Prints one JSON object on stdout (what the server answered, normalised).
Errors: one JSON object {"error": "<mygpoclient exception>", "status": N|null,
"detail": "..."} on stdout and exit status 1.

Quirks of mygpoclient (see README.md): no login.json call, reactive Basic
auth (needs a realm in the 401 challenge), POST bodies go out as
application/x-www-form-urlencoded, EpisodeAction has no `guid`, timestamps
must be naive ISO-8601 ('%Y-%m-%dT%H:%M:%S', optional .%f or Z).
"""
import argparse
import datetime
import json
import sys

import mygpoclient
import mygpoclient.http
from mygpoclient import api


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("user")
    p.add_argument("password")
    p.add_argument("device")
    p.add_argument("cmd", choices=["subs-up", "subs-down", "play", "action",
                                   "eps-down", "device", "subs-all"])
    p.add_argument("--add", action="append", default=[])
    p.add_argument("--remove", action="append", default=[])
    p.add_argument("--since", type=int, default=None)
    p.add_argument("--podcast")
    p.add_argument("--episode")
    p.add_argument("--action", default="play")
    p.add_argument("--position", type=int)
    p.add_argument("--started", type=int)
    p.add_argument("--total", type=int)
    p.add_argument("--timestamp", help="default: now (UTC), naive ISO 8601")
    p.add_argument("--all-devices", action="store_true",
                   help="eps-down: do not filter by this device (default)")
    p.add_argument("--caption", default="mediahost test phone")
    p.add_argument("--type", default="mobile")
    a = p.parse_args(argv)

    mygpoclient.user_agent = "mediahost-test-phone (mygpoclient/%s)" % mygpoclient.__version__
    c = api.MygPodderClient(a.user, a.password, a.url.rstrip("/"))

    if a.cmd == "device":
        ok = c.update_device_settings(a.device, a.caption, a.type)
        out = {"ok": bool(ok), "devices": [d.__dict__ for d in c.get_devices()]}
    elif a.cmd == "subs-up":
        r = c.update_subscriptions(a.device, a.add, a.remove)
        out = {"timestamp": r.since, "update_urls": [list(x) for x in r.update_urls]}
    elif a.cmd == "subs-all":
        # Simple API, user level: GET /subscriptions/{user}.json. mygpo answers a
        # list of podcast objects ({"url", "title", ...}); gpodder-fastapi-router
        # a list of URL strings. "urls" is the URLs either way.
        r = c.get_subscriptions(None)
        urls = [x.get("url") if isinstance(x, dict) else x for x in r]
        out = {"subscriptions": r, "urls": urls}
    elif a.cmd == "subs-down":
        # mygpo requires `since`; mygpoclient omits it when None -> use 0.
        r = c.pull_subscriptions(a.device, a.since if a.since is not None else 0)
        out = {"add": r.add, "remove": r.remove, "timestamp": r.since}
    elif a.cmd in ("play", "action"):
        action = "play" if a.cmd == "play" else a.action
        ts = a.timestamp or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        ea = api.EpisodeAction(a.podcast, a.episode, action, device=a.device,
                               timestamp=ts, started=a.started,
                               position=a.position, total=a.total)
        since = c.upload_episode_actions([ea])
        out = {"timestamp": since, "sent": ea.to_dictionary()}
    elif a.cmd == "eps-down":
        r = c.download_episode_actions(since=a.since, podcast=a.podcast)
        out = {"actions": [x.to_dictionary() for x in r.actions], "timestamp": r.since}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


def run(argv=None):
    try:
        main(argv)
    except mygpoclient.http.Unauthorized as e:
        _fail("Unauthorized", 401, e)
    except mygpoclient.http.NotFound as e:
        _fail("NotFound", 404, e)
    except mygpoclient.http.BadRequest as e:
        _fail("BadRequest", 400, e)
    except mygpoclient.http.UnknownResponse as e:
        _fail("UnknownResponse", e.args[0] if e.args else None, e)
    except Exception as e:  # InvalidResponse, JsonException, IncompleteRead (truncated body), OSError
        _fail(type(e).__name__, None, e)


def _fail(kind, status, exc):
    json.dump({"error": kind, "status": status, "detail": str(exc)}, sys.stdout, sort_keys=True)
    print()
    sys.exit(1)


if __name__ == "__main__":
    run()
