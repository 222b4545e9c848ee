#!/usr/bin/env python3
"""Checks nextcloud_gpoddersync.py against the expectations of the app's own PHP
tests (thrillfall/nextcloud-gpodder @ a5361ff, tests/**) and the research
fixtures, over HTTP. Standard library only. Usage: check_nextcloud_replica.py
[PYTHON]  (the interpreter to run the replica with; default: this one).
Prints 'N passed, N failed'; exits non-zero on a failure."""
import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.argv[1] if len(sys.argv) > 1 else sys.executable
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "..", "Fixtures", "Sync", "nextcloud"))
results = {"passed": 0, "failed": 0}


def check(name, cond, detail=""):
    if cond:
        results["passed"] += 1
    else:
        results["failed"] += 1
        print("FAIL %s %s" % (name, detail))


class Replica:
    def __init__(self, *args):
        self.proc = subprocess.Popen(
            [PY, os.path.join(HERE, "nextcloud_gpoddersync.py"), "--port", "0",
             "--user", "alice", "--password", "pw"] + list(args),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("listening on "), line
        self.base = "http://%s/index.php/apps/gpoddersync/" % line.split()[-1]
        self.root = "http://%s" % line.split()[-1]

    def req(self, method, path, body=None, auth=("alice", "pw"), ctype="application/json",
            headers=None, raw=False):
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        url = path if path.startswith("http") else self.base + path
        r = urllib.request.Request(url, data=data, method=method)
        if auth:
            r.add_header("Authorization", "Basic " + base64.b64encode(
                ("%s:%s" % auth).encode()).decode())
        if data is not None and ctype:
            r.add_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            r.add_header(k, v)
        try:
            with urllib.request.urlopen(r) as resp:
                status, text, hs = resp.status, resp.read(), resp.headers
        except urllib.error.HTTPError as e:
            status, text, hs = e.code, e.read(), e.headers
        if raw:
            return status, text, hs
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def control(self, method, name, body=None):
        return self.req(method, self.root + "/__control/" + name, body, auth=None)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)
        self.proc.stdout.close()
        self.proc.stderr.close()


def play(episode, guid=None, position=54, ts="2021-08-22T23:58:56", action="PLAY", **kw):
    d = {"podcast": "https://rss.art19.com/dr-death-s3-miracle-man", "episode": episode,
         "action": action, "timestamp": ts, "started": 47, "position": position, "total": 2252}
    if guid is not None:
        d["guid"] = guid
    d.update(kw)
    return d


def main():
    nc = Replica()
    try:
        # EpisodeActionControllerTest::testEpisodeActionCreateAction: only PLAY kept, epoch 1260608400
        body = json.load(open(os.path.join(FIXTURES, "test-EpisodeActionControllerTest-create.request.json")))
        t0 = int(time.time())
        st, r = nc.req("POST", "episode_action/create", body)
        check("create 200", st == 200 and r["timestamp"] >= t0, (st, r))
        st, r = nc.req("GET", "episode_action?since=0")
        check("only play stored", [a["episode"] for a in r["actions"]] == ["https://example.com/files/s01e20.mp3"], r)
        check("epoch/format", r["actions"][0]["timestamp"] == "2009-12-12T09:00:00+00:00", r)
        check("key order", list(r["actions"][0]) == ["podcast", "episode", "timestamp", "guid",
                                                     "position", "started", "total", "action"], r)
        st, state = nc.control("GET", "state")
        check("epoch stored", state["episode_actions"][0]["timestamp_epoch"] == 1260608400, state)

        # testEpisodeActionListAction: since is exclusive on the action's own time
        nc.control("DELETE", "state")
        nc.req("POST", "episode_action/create", [play("e1", "g1", ts="2021-10-06T11:49:23")])
        check("since < t", len(nc.req("GET", "episode_action?since=1633520363")[1]["actions"]) == 1)
        check("since == t excluded", nc.req("GET", "episode_action?since=1633520963")[1]["actions"] == [])
        check("no since = all", len(nc.req("GET", "episode_action")[1]["actions"]) == 1)
        check("since garbage = 0", len(nc.req("GET", "episode_action?since=abc")[1]["actions"]) == 1)

        # EpisodeActionRepositoryTest::testTimestampsWithTimezones
        nc.control("DELETE", "state")
        for text, epoch in [("2024-12-01T16:29:56", 1733070596), ("2024-12-01T16:29:56Z", 1733070596),
                            ("2024-12-01T16:29:56+01", 1733066996), ("2024-12-01T16:29:56+00:00", 1733070596),
                            ("2024-12-01T16:29:56+02:00", 1733063396), ("2021-08-22T23:58:56", 1629676736)]:
            nc.req("POST", "episode_action/create", [play("tz", "tzg", ts=text)])
            got = nc.control("GET", "state")[1]["episode_actions"]
            check("tz %s" % text, len(got) == 1 and got[0]["timestamp_epoch"] == epoch, got)

        # EpisodeActionSaverGuidBackwardCompatibilityTest::testUpdateWithoutGuidDoesNotNullGuid
        nc.control("DELETE", "state")
        nc.req("POST", "episode_action/create", [play("u1", "G1")])
        nc.req("POST", "episode_action/create", [play("u1", None, position=60)])
        rows = nc.control("GET", "state")[1]["episode_actions"]
        check("guid kept", len(rows) == 1 and rows[0]["guid"] == "G1" and rows[0]["position"] == 60, rows)

        # testDoNotFailToUpdateEpisodeActionByGuidIfThereIsAnotherWithTheSameValueForEpisodeUrl
        nc.control("DELETE", "state")
        url, url_p = "https://podcast-mp3.dradio.de/x", "https://podcast-mp3.dradio.de/x?ref=y"
        nc.req("POST", "episode_action/create", [play(url, "guid2", position=100)])
        nc.req("POST", "episode_action/create", [play(url_p, "guid1", position=101)])
        nc.req("POST", "episode_action/create", [play(url_p, "guid1", position=102)])
        rows = {r["guid"]: r for r in nc.control("GET", "state")[1]["episode_actions"]}
        check("guid2 untouched", rows["guid2"]["position"] == 100, rows)
        st, _ = nc.req("POST", "episode_action/create", [play(url_p, "guid2", position=103)])
        rows = nc.control("GET", "state")[1]["episode_actions"]
        check("conflict resolved", st == 200 and len(rows) == 1 and rows[0]["guid"] == "guid2"
              and rows[0]["position"] == 103 and rows[0]["episode"] == url_p, rows)

        # EpisodeActionSaverGuidMigrationTest: same row when a guid arrives later / URL changes
        nc.control("DELETE", "state")
        nc.req("POST", "episode_action/create", [play("m1")])
        nc.req("POST", "episode_action/create", [play("m1", "MG")])
        rows = nc.control("GET", "state")[1]["episode_actions"]
        check("guid added to row", len(rows) == 1 and rows[0]["guid"] == "MG", rows)
        nc.req("POST", "episode_action/create", [play("m1_different", "MG")])
        rows2 = nc.control("GET", "state")[1]["episode_actions"]
        check("same row, new url", len(rows2) == 1 and rows2[0]["id"] == rows[0]["id"]
              and rows2[0]["episode"] == "m1_different", rows2)

        # A newer upload overwrites regardless of the action's timestamp
        nc.req("POST", "episode_action/create", [play("m1_different", "MG", ts="2000-01-01T00:00:00", position=1)])
        rows = nc.control("GET", "state")[1]["episode_actions"]
        check("older overwrites", rows[0]["position"] == 1 and rows[0]["timestamp_epoch"] == 946684800, rows)

        # EpisodeActionReaderTest: defaults -1, upper case; incomplete play -> 500, nothing stored
        nc.control("DELETE", "state")
        st, r = nc.req("POST", "episode_action/create",
                       [{"podcast": "p", "episode": "e", "action": "play", "timestamp": "2021-10-03T12:03:17"}])
        a = nc.req("GET", "episode_action")[1]["actions"][0]
        check("defaults", (a["started"], a["position"], a["total"], a["guid"], a["action"]) == (-1, -1, -1, None, "PLAY"), a)
        inc = json.load(open(os.path.join(FIXTURES, "test-EpisodeActionReaderTest-incomplete.request.json")))
        st, r = nc.req("POST", "episode_action/create", inc)
        check("incomplete non-play ignored", st == 200, (st, r))
        st, r = nc.req("POST", "episode_action/create", [play("ok"), {"podcast": "p", "action": "play", "timestamp": "2021-10-03T12:03:17"}])
        check("incomplete play 500", st == 500, st)
        check("nothing stored", len(nc.control("GET", "state")[1]["episode_actions"]) == 1)
        check("float position 500", nc.req("POST", "episode_action/create", [play("f", position=1.5)])[0] == 500)
        check("string position 500", nc.req("POST", "episode_action/create", [play("f", position="5")])[0] == 500)
        check("numeric timestamp 500", nc.req("POST", "episode_action/create", [play("f", ts=1700000000)])[0] == 500)
        st, _ = nc.req("POST", "episode_action/create", [play("before-bad"), play("bad", ts="yesterday-ish")])
        rows = nc.control("GET", "state")[1]["episode_actions"]
        check("bad time 500, earlier saved", st == 500 and any(x["episode"] == "before-bad" for x in rows), rows)
        check("object body stores nothing", nc.req("POST", "episode_action/create", {"actions": [play("obj")]})[0] == 200
              and not any(x["episode"] == "obj" for x in nc.control("GET", "state")[1]["episode_actions"]))
        check("non-JSON content type stores nothing",
              nc.req("POST", "episode_action/create", [play("form")], ctype="application/x-www-form-urlencoded")[0] == 200
              and not any(x["episode"] == "form" for x in nc.control("GET", "state")[1]["episode_actions"]))

        # Subscriptions: SubscriptionChangeControllerTest, README example, reader test
        nc.control("DELETE", "state")
        req = json.load(open(os.path.join(FIXTURES, "readme-POST-subscription_change-create.request.json")))
        st, r = nc.req("POST", "subscription_change/create", req)
        check("subs create", st == 200 and list(r) == ["timestamp"], r)
        st, r = nc.req("POST", "subscription_change/create",
                       {"add": ["https://feeds.megaphone.fm/HSW8286374095",
                                "antennapod_local:content://com.android.externalstorage.documents/tree/home:podcast"],
                        "remove": ["https://www.example.com/feed.rss", "https://www.example.com/feed.xml"]})
        st, r = nc.req("GET", "subscriptions?since=0")
        check("subs list", r["add"] == req["add"] + ["https://feeds.megaphone.fm/HSW8286374095"]
              and r["remove"] == req["remove"] + ["https://www.example.com/feed.rss", "https://www.example.com/feed.xml"], r)
        st, raw, hs = nc.req("GET", "subscriptions", raw=True)
        check("php escaping", b"https:\\/\\/example.com\\/feed.xml" in raw, raw)
        check("content type", hs["Content-Type"] == "application/json; charset=utf-8", hs["Content-Type"])
        check("missing remove 500", nc.req("POST", "subscription_change/create", {"add": []})[0] == 500)
        check("null url 500", nc.req("POST", "subscription_change/create", {"add": [None], "remove": []})[0] == 500)
        # since is exclusive on server time; re-adding flips the row
        nc.control("POST", "clock", {"offset": 100})
        nc.req("POST", "subscription_change/create", {"add": ["https://example.net/feed.rss"], "remove": []})
        now = nc.control("GET", "clock")[1]["now"]
        st, r = nc.req("GET", "subscriptions?since=%d" % (now - 50))
        check("flip + since", r["add"] == ["https://example.net/feed.rss"] and r["remove"] == [], r)
        check("since == updated excluded", nc.req("GET", "subscriptions?since=%d" % now)[1]["add"] == [])
        nc.control("DELETE", "clock")

        # Auth
        check("no auth 401", nc.req("GET", "subscriptions", auth=None) ==
              (401, {"message": "Current user is not logged in"}))
        st, raw, hs = nc.req("GET", "subscriptions", auth=("alice", "nope"), raw=True)
        check("bad auth 401", st == 401 and json.loads(raw) == {"message": ""} and "WWW-Authenticate" not in hs, (st, raw))
        check("pretty url", nc.req("GET", nc.root + "/apps/gpoddersync/subscriptions")[0] == 200)

        # Faults + request log
        nc.control("DELETE", "requests")
        nc.control("POST", "faults", {"path_contains": "episode_action/create", "status": 429, "retry_after": 7, "count": 2})
        st, raw, hs = nc.req("POST", "episode_action/create", [play("x")], raw=True)
        check("429", st == 429 and hs["Retry-After"] == "7", (st, dict(hs)))
        check("429 again", nc.req("POST", "episode_action/create", [play("x")])[0] == 429)
        check("then ok", nc.req("POST", "episode_action/create", [play("x")])[0] == 200)
        nc.control("POST", "faults", {"path_contains": "episode_action", "method": "GET", "truncate": True})
        try:
            nc.req("GET", "episode_action?since=0")
            check("truncate raises", False)
        except Exception as e:  # http.client.IncompleteRead
            check("truncate raises", "IncompleteRead" in type(e).__name__, repr(e))
        log = nc.control("GET", "requests")[1]
        check("log", [(e["method"], e["status"], e["fault"] is not None) for e in log] ==
              [("POST", 429, True), ("POST", 429, True), ("POST", 200, False), ("GET", 200, True)], log)
        check("log body", json.loads(log[2]["body"])[0]["episode"] == "x" and log[3]["query"] == "since=0", log)
    finally:
        nc.stop()

    # --version 3.10: every action stored, no offset in output, strict input format
    old = Replica("--version", "3.10")
    try:
        body = json.load(open(os.path.join(FIXTURES, "test-EpisodeActionControllerTest-create.request.json")))
        old.req("POST", "episode_action/create", body)
        r = old.req("GET", "episode_action?since=0")[1]
        check("3.10 keeps DELETE", [a["action"] for a in r["actions"]] == ["PLAY", "DELETE"], r)
        check("3.10 no offset", r["actions"][0]["timestamp"] == "2009-12-12T09:00:00", r)
        check("3.10 Z -> 500", old.req("POST", "episode_action/create", [play("z", ts="2024-12-01T16:29:56Z")])[0] == 500)
    finally:
        old.stop()

    # --data keeps state across a restart
    path = "/tmp/nc-replica-check-%d.json" % os.getpid()
    try:
        a = Replica("--data", path)
        a.req("POST", "episode_action/create", [play("persist")])
        a.stop()
        b = Replica("--data", path)
        r = b.req("GET", "episode_action")[1]
        b.stop()
        check("persisted", [x["episode"] for x in r["actions"]] == ["persist"], r)
    finally:
        if os.path.exists(path):
            os.remove(path)

    print("%d passed, %d failed" % (results["passed"], results["failed"]))
    sys.exit(1 if results["failed"] else 0)


if __name__ == "__main__":
    main()
