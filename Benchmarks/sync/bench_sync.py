"""The household sync server's figures (`make bench`), on loopback against `mediahost-web`
as the service runs it with `web.listen`:

1. A phone's first sync: 1,000 subscriptions and 20,000 episode actions of its account,
   answered (GET subscriptions since 0, GET episode actions since 0). Goal: under 1 s.
2. 20 devices syncing at once, each round as AntennaPod makes it (login, subscription changes,
   an upload of 30 actions, the actions since its last round): p99 per request under 50 ms, and
   mediahost-web's memory flat from the first minute's half to its end.

Run with MEDIAHOST_BIN naming the built mediahost (mediahost-web beside it).
"""
import base64, http.client, json, os, re, statistics, subprocess, sys, tempfile, threading, time

BIN = os.path.abspath(os.environ.get("MEDIAHOST_BIN", ".build/release/mediahost"))
WEB = os.path.join(os.path.dirname(BIN), "mediahost-web")


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    def __init__(self, port, user, password):
        self.port = port
        self.auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.cookie = None

    def request(self, method, path, body=None):
        headers = {"Content-Type": "application/json"}
        if self.cookie:
            headers["Cookie"] = self.cookie
        else:
            headers["Authorization"] = self.auth
        data = json.dumps(body).encode() if body is not None else None
        started = time.perf_counter()
        self.connection.request(method, path, body=data, headers=headers)
        response = self.connection.getresponse()
        payload = response.read()
        elapsed = time.perf_counter() - started
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: {response.status} {payload[:200]!r}")
        cookie = response.getheader("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";")[0]
        return (json.loads(payload) if payload else None), elapsed


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1))


def main():
    folder = tempfile.mkdtemp(prefix="mediahost-sync-bench-")
    env = dict(os.environ, MEDIAHOST_DATA_DIR=folder, XDG_CONFIG_HOME=folder + "/config", XDG_CACHE_HOME=folder + "/cache")
    for name in ["alice"] + [f"user{n}" for n in range(4)]:
        subprocess.run([BIN, "users", "add", name], input="household\n", env=env, check=True, capture_output=True, text=True)
    port = free_port()
    web = subprocess.Popen([WEB, "--data-dir", folder, "--listen", f"127.0.0.1:{port}", "--socket", folder + "/none.sock"],
                           stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/clientconfig.json")
                break
            except OSError:
                time.sleep(0.05)
        alice = Client(port, "alice", "household")
        alice.request("POST", "/api/2/auth/alice/login.json")
        feeds = [f"https://feeds.example.net/show-{n}/feed.xml" for n in range(1000)]
        _, up = alice.request("POST", "/api/2/subscriptions/alice/phone.json", {"add": feeds, "remove": []})
        actions = [{"podcast": feeds[n % 1000], "episode": f"https://media.example.net/{n}.mp3", "action": "play",
                    "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - 86400 + n)),
                    "started": 0, "position": n % 3600, "total": 3600, "device": "phone"} for n in range(20000)]
        upload = 0.0
        for start in range(0, 20000, 1000):
            _, elapsed = alice.request("POST", "/api/2/episodes/alice.json", actions[start:start + 1000])
            upload += elapsed
        print(f"setup: 1,000 subscriptions uploaded in {up * 1000:.0f} ms, 20,000 actions in {upload * 1000:.0f} ms (1,000 a request)")

        first = []
        for _ in range(5):
            phone = Client(port, "alice", "household")
            started = time.perf_counter()
            phone.request("POST", "/api/2/auth/alice/login.json")
            subscriptions, _ = phone.request("GET", "/api/2/subscriptions/alice/phone.json?since=0")
            episodes, _ = phone.request("GET", "/api/2/episodes/alice.json?since=0")
            first.append(time.perf_counter() - started)
            assert len(subscriptions["add"]) == 1000 and len(episodes["actions"]) == 20000
        print(f"a phone's first sync (login, 1,000 subscriptions, 20,000 actions): median {statistics.median(first) * 1000:.0f} ms, "
              f"worst {max(first) * 1000:.0f} ms of 5 (goal: under 1,000 ms)")

        latencies = []
        lock = threading.Lock()
        stop = time.monotonic() + 40
        samples = []

        def device(index):
            user = f"user{index % 4}"
            client = Client(port, user, "household")
            name = f"device{index}"
            since = 0
            round_number = 0
            mine = []
            while time.monotonic() < stop:
                round_number += 1
                times = []
                _, t = client.request("POST", f"/api/2/auth/{user}/login.json"); times.append(t)
                _, t = client.request("GET", f"/api/2/subscriptions/{user}/{name}.json?since={since}"); times.append(t)
                _, t = client.request("POST", f"/api/2/subscriptions/{user}/{name}.json",
                                      {"add": [f"https://feeds.example.net/{name}-{round_number}.xml"], "remove": []}); times.append(t)
                batch = [{"podcast": "https://feeds.example.net/x.xml", "episode": f"https://m.example.net/{name}/{round_number}/{k}.mp3",
                          "action": "play", "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()), "started": 0,
                          "position": k, "total": 3600, "device": name} for k in range(30)]
                answer, t = client.request("POST", f"/api/2/episodes/{user}.json", batch); times.append(t)
                got, t = client.request("GET", f"/api/2/episodes/{user}.json?since={since}"); times.append(t)
                since = got["timestamp"]
                mine.extend(times)
                time.sleep(0.2)
            with lock:
                latencies.extend(mine)

        threads = [threading.Thread(target=device, args=(n,)) for n in range(20)]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            samples.append(rss_kb(web.pid))
            time.sleep(1)
        for thread in threads:
            thread.join()
        half = samples[len(samples) // 2:]
        print(f"20 devices syncing at once for 40 s: {len(latencies)} requests, p50 {percentile(latencies, 50) * 1000:.1f} ms, "
              f"p99 {percentile(latencies, 99) * 1000:.1f} ms (goal: under 50 ms)")
        print(f"mediahost-web's memory: {samples[0] // 1024} MB at the start, {min(half) // 1024}-{max(half) // 1024} MB in the second half, "
              f"{samples[-1] // 1024} MB at the end")
    finally:
        web.stdin.close()
        web.wait(timeout=30)


if __name__ == "__main__":
    main()
