"""`mediahost mcp` driven by the official Python MCP SDK (PyPI `mcp`, pinned in the Makefile),
over stdio, against a sandbox of its own: the handshake, every tool's schema, every example of
rpc-spec.json called as a tool and over `mediahost call` with the same result, resources and a
subscription's update, a download's progress to its end, cancellation, a tool error, a bad call
and the read-only setting.

Run by `make test` (`make test-mcp`): MEDIAHOST_BIN names the binary.
"""
import base64, json, os, queue, shutil, struct, subprocess, sys, tempfile, threading, unittest

import anyio
import jsonschema
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

BIN = os.environ.get("MEDIAHOST_BIN", ".build/debug/mediahost")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = json.load(open(os.path.join(ROOT, "Sources/HostAPI/rpc-spec.json")))
RADIO = "podcasts:podcast:1999999997"
# The protocol's own schema (SOURCES.md): answers are checked against its definitions.
MCP_SCHEMA = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema-2025-11-25.json")))


def check(definition, value):
    """`value` is valid as the MCP schema's `definition`."""
    schema = dict(MCP_SCHEMA, **{"$ref": "#/$defs/" + definition})
    jsonschema.Draft202012Validator(schema).validate(value)


def start_sandbox():
    """`mediahost sandbox` on a free port, slow media (downloads take seconds), and its settings."""
    process = subprocess.Popen([BIN, "sandbox", "--port", "0", "--media-rate", "150000"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    environment = {}
    while True:
        try:
            line = lines.get(timeout=30 if not environment else 2)
        except queue.Empty:
            break
        name, sep, value = line.strip().rpartition(" ")[2].partition("=")
        if sep and name.isupper():
            environment[name] = value
    if "MEDIAHOST_PODCASTS_BASE_URL" not in environment:
        process.kill()
        raise RuntimeError("mediahost sandbox did not print its settings")
    return process, environment


def steady(value):
    """`value` without what changes from one call to the next (times, process ids)."""
    if isinstance(value, dict):
        return {k: steady(v) for k, v in value.items() if k not in ("at", "pid", "uptime", "started", "position", "seconds", "refreshed", "created")}
    if isinstance(value, list):
        return [steady(v) for v in value]
    return value


class MCPTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sandbox, settings = start_sandbox()
        cls.data = tempfile.mkdtemp(prefix="mediahost-mcp-")
        cls.env = dict(os.environ, **settings, MEDIAHOST_DATA_DIR=cls.data + "/data",
                       XDG_CONFIG_HOME=cls.data + "/config", MEDIAHOST_HOST_BACKGROUND="never",
                       XDG_CACHE_HOME=cls.data + "/cache", MEDIAHOST_LOG_LEVEL="warning")

    @classmethod
    def tearDownClass(cls):
        cls.sandbox.kill()
        shutil.rmtree(cls.data, ignore_errors=True)

    def run_session(self, body, args=(), messages=None):
        async def main():
            params = StdioServerParameters(command=BIN, args=["mcp", *args], env=self.env)

            async def on_message(message):
                if messages is not None:
                    messages.append(message)

            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write, message_handler=on_message) as session:
                    init = await session.initialize()
                    return await body(session, init)
        return anyio.run(main)

    def call(self, method, params):
        """The same method over `mediahost call`: its result, or its error message."""
        done = subprocess.run([BIN, "call", method, json.dumps(params)], env=self.env, capture_output=True, text=True)
        if done.returncode == 0:
            return json.loads(done.stdout), None
        return None, done.stderr.strip()

    def test_handshake_and_every_tools_schema(self):
        async def body(session, init):
            self.assertEqual(init.server_info.name, "mediahost")
            self.assertIn(init.protocol_version, ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
            self.assertTrue(init.capabilities.tools is not None and init.capabilities.resources.subscribe)
            return (await session.list_tools()).tools
        tools = self.run_session(body)
        names = {tool.name for tool in tools}
        for wanted in ["media_search", "media_browse", "providers_categories", "media_get", "media_children",
                       "favorites_list", "favorites_add", "lists_items", "history_list", "downloads_start",
                       "downloads_list", "downloads_pause", "downloads_resume", "downloads_cancel", "player_status"]:
            self.assertIn(wanted, names)
        for hidden in ["auth_login", "config_set", "config_get", "share_start", "cache_clear", "rpc_discover"]:
            self.assertNotIn(hidden, names)
        for tool in tools:
            # The SDK parsed each into its Tool model; the schemas are JSON Schemas of objects.
            jsonschema.Draft202012Validator.check_schema(tool.input_schema)
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
            self.assertEqual(tool.input_schema["type"], "object")
            self.assertEqual(tool.output_schema["type"], "object")
            self.assertNotIn("$ref", json.dumps(tool.input_schema), tool.name)
            self.assertRegex(tool.name, r"^[a-zA-Z0-9_-]{1,64}$")
            self.assertGreater(len(tool.description), 20, tool.name)
            self.assertIsNotNone(tool.annotations.read_only_hint, tool.name)
        by_name = {tool.name: tool for tool in tools}
        self.assertTrue(by_name["media_search"].annotations.read_only_hint)
        self.assertTrue(by_name["favorites_remove"].annotations.destructive_hint)
        self.assertFalse(by_name["favorites_add"].annotations.destructive_hint)
        # Every hint is what the spec says the method does.
        effects = {m["name"].replace(".", "_"): m["x-effect"] for m in SPEC["methods"]}
        for tool in tools:
            effect, hints = effects[tool.name], tool.annotations
            self.assertEqual(hints.read_only_hint, effect["access"] == "reads", tool.name)
            self.assertEqual(hints.open_world_hint, effect["reachesOut"], tool.name)
            if effect["access"] != "reads":
                self.assertEqual(hints.destructive_hint, effect["access"] == "removes", tool.name)
                self.assertEqual(hints.idempotent_hint, effect["idempotent"], tool.name)
        self.assertTrue(by_name["downloads_start"].annotations.open_world_hint)
        self.assertFalse(by_name["downloads_start"].annotations.idempotent_hint)

    def test_every_example_is_the_same_as_a_tool_and_over_rpc(self):
        read_only = {m["name"] for m in SPEC["methods"]}

        async def body(session, init):
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            outcomes = []
            for method in SPEC["methods"]:
                name = method["name"].replace(".", "_")
                tool = tools.get(name)
                if tool is None or not tool.annotations.read_only_hint:
                    continue
                for example in method.get("examples", []):
                    arguments = {p["name"]: p["value"] for p in example.get("params", [])}
                    result = await session.call_tool(name, arguments)
                    outcomes.append((method["name"], arguments, result, tool))
            return outcomes
        outcomes = self.run_session(body)
        self.assertGreater(len(outcomes), 10)
        # The sandbox's keys and tokens (settings of this process) never appear in what tools say.
        said = json.dumps([[r.structured_content, [getattr(c, "text", None) for c in r.content]] for _, _, r, _ in outcomes])
        secrets = [v for k, v in self.env.items() if k.endswith(("_KEY", "_TOKEN", "_SECRET")) and len(v) > 4]
        self.assertTrue(secrets)
        for secret in secrets:
            self.assertNotIn(secret, said)
        for method, arguments, result, tool in outcomes:
            expected, error = self.call(method, arguments)
            if error is not None:
                self.assertTrue(result.is_error, f"{method} {arguments}: {error}")
                self.assertIn(result.content[0].text, error)
                continue
            self.assertFalse(result.is_error, f"{method} {arguments}: {result.content}")
            structured = result.structured_content
            if list(tool.output_schema.get("properties", {})) == ["result"]:
                structured = structured["result"]
            jsonschema.validate(result.structured_content, tool.output_schema)
            self.assertEqual(steady(structured), steady(expected), f"{method} {arguments}")

    def test_every_example_that_changes_things_is_the_same_as_a_tool_and_over_rpc(self):
        """The examples in the spec's order, each as a tool in one data dir and over `mediahost
        call` in another that started the same: the same results (the dirs' paths aside)."""
        a, b = tempfile.mkdtemp(prefix="mediahost-mcp-a-"), tempfile.mkdtemp(prefix="mediahost-mcp-b-")
        env_b = dict(self.env, MEDIAHOST_DATA_DIR=b, MEDIAHOST_PLAYER="mpv --ao=null --vo=null")
        env_a = dict(self.env, MEDIAHOST_DATA_DIR=a, MEDIAHOST_PLAYER="mpv --ao=null --vo=null")

        async def main():
            params = StdioServerParameters(command=BIN, args=["mcp"], env=env_a)
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                    compared = 0
                    for method in SPEC["methods"]:
                        tool = tools.get(method["name"].replace(".", "_"))
                        if tool is None or tool.annotations.read_only_hint or method["name"].startswith("player."):
                            continue
                        for example in method.get("examples", []):
                            arguments = {p["name"]: p["value"] for p in example.get("params", [])}
                            result = await session.call_tool(tool.name, arguments)
                            done = await anyio.to_thread.run_sync(lambda: subprocess.run(
                                [BIN, "call", method["name"], json.dumps(arguments)], env=env_b, capture_output=True,
                                text=True))
                            if done.returncode != 0:
                                self.assertTrue(result.is_error, f"{method['name']} {arguments}: {done.stderr}")
                                self.assertIn(result.content[0].text, done.stderr)
                            else:
                                structured = result.structured_content
                                if list(tool.output_schema.get("properties", {})) == ["result"]:
                                    structured = structured["result"]
                                mine = json.loads(json.dumps(steady(structured)).replace(a, "<dir>"))
                                theirs = json.loads(json.dumps(steady(json.loads(done.stdout))).replace(b, "<dir>"))
                                self.assertEqual(mine, theirs, f"{method['name']} {arguments}")
                            compared += 1
                    return compared
        try:
            self.assertGreater(anyio.run(main), 10)
        finally:
            for folder in (a, b):
                subprocess.run([BIN, "call", "player.stop"], env=dict(self.env, MEDIAHOST_DATA_DIR=folder),
                               capture_output=True)
                shutil.rmtree(folder, ignore_errors=True)

    def test_resources_and_a_subscription(self):
        messages = []

        async def body(session, init):
            listed = await session.list_resources()
            uris = {str(r.uri) for r in listed.resources}
            self.assertTrue({"mediahost://favorites", "mediahost://downloads", "mediahost://history"} <= uris)
            templates = await session.list_resource_templates()
            self.assertIn("mediahost://item/{id}", [t.uri_template for t in templates.resource_templates])
            await session.subscribe_resource("mediahost://favorites")
            found = await session.call_tool("media_search", {"provider": "podcasts", "query": "orbit"})
            first = found.structured_content["items"][0]["id"]
            added = await session.call_tool("favorites_add", {"id": first})
            self.assertFalse(added.is_error, added.content)
            favorites = await session.read_resource("mediahost://favorites")
            self.assertIn(first, favorites.contents[0].text)
            item = await session.read_resource("mediahost://item/" + first)
            self.assertEqual(json.loads(item.contents[0].text)["id"], first)
            art = await session.read_resource("mediahost://artwork/" + first)
            self.assertTrue(art.contents[0].mime_type.startswith("image/"))
            self.assertGreater(len(art.contents[0].blob), 10)
            with self.assertRaises(MCPError):
                await session.read_resource("mediahost://nothing/here")
            self.assertIn("mediahost://transcript/{id}", [t.uri_template for t in templates.resource_templates])
            tone = "podcasts:episode:1999999997:1999999997-ep-3"
            said = await session.read_resource("mediahost://transcript/" + tone)
            self.assertEqual(said.contents[0].mime_type, "text/plain")
            self.assertIn("[0:31] Ada: Listen for the long middle of the sine wave.", said.contents[0].text)
            where = await session.call_tool("transcripts_search", {"text": "sine wave"})
            self.assertFalse(where.is_error, where.content)
            self.assertEqual(where.structured_content["hits"][0]["id"], tone)
            self.assertEqual(where.structured_content["hits"][0]["start"], 31)
            for _ in range(50):
                if any(isinstance(m, types.ServerNotification) or getattr(m, "method", "") for m in messages):
                    break
                await anyio.sleep(0.1)
        self.run_session(body, messages=messages)
        updated = [m for m in messages if "resources/updated" in repr(m) and "mediahost://favorites" in repr(m)]
        self.assertTrue(updated, f"no update among {messages!r}")

    def test_a_download_reports_progress_to_its_end_and_a_cancelled_call_leaves_the_session_usable(self):
        progress = []

        async def record(value, total, message):
            progress.append((value, total))

        async def ignore(*args):
            pass

        async def body(session, init):
            episodes = await session.call_tool("media_children", {"id": RADIO})
            items = episodes.structured_content["items"]
            tone = next(i["id"] for i in items if "120" in i["title"])
            done = await session.call_tool("downloads_start", {"id": tone}, read_timeout_seconds=120,
                                           progress_callback=record)
            self.assertFalse(done.is_error, done.content)
            self.assertEqual(done.structured_content["state"], "completed")
            other = next(i["id"] for i in items if "180" in i["title"])
            # A caller that stops waiting cancels its call (notifications/cancelled); the download goes on.
            with anyio.move_on_after(1.5):
                await session.call_tool("downloads_start", {"id": other}, progress_callback=ignore)
            pong = await session.send_ping()
            self.assertIsNotNone(pong)
            listed = await session.call_tool("downloads_list", {})
            states = {d["id"]: d["state"] for d in listed.structured_content["result"]}
            self.assertIn(states.get(other), ["running", "queued", "completed"])
            await session.call_tool("downloads_cancel", {"id": other})
        self.run_session(body)
        self.assertGreater(len(progress), 1)
        self.assertEqual(sorted(progress), progress, "progress only grows")

    def test_details_carry_their_picture(self):
        """media_get and media_artwork answer with the picture as image content: a PNG thumbnail
        no larger than 384 pixels a side, decodable, beside the text and the structured result."""
        async def body(session, init):
            found = await session.call_tool("media_search", {"provider": "youtube", "query": "swift"})
            first = found.structured_content["items"][0]["id"]
            details = await session.call_tool("media_get", {"id": first})
            artwork = await session.call_tool("media_artwork", {"id": first})
            return details, artwork
        details, artwork = self.run_session(body)
        for result in (details, artwork):
            self.assertFalse(result.is_error)
            self.assertEqual(result.content[0].type, "text")
            images = [c for c in result.content if c.type == "image"]
            self.assertEqual(len(images), 1, result.content)
            self.assertEqual(images[0].mime_type, "image/png")
            png = base64.b64decode(images[0].data)
            self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
            width, height = struct.unpack(">II", png[16:24])
            self.assertTrue(0 < width <= 384 and 0 < height <= 384, (width, height))

    def test_details_say_the_podcast_namespace(self):
        """media_get's text says what a feed's Podcasting 2.0 elements say: the radio's tone 2
        has a soundbite, which player_open plays alone with `soundbite`."""
        async def body(session, init):
            tones = await session.call_tool("media_children", {"id": RADIO})
            bitten = [item["id"] for item in tones.structured_content["items"]
                      if item.get("namespace", {}).get("soundbites")]
            self.assertEqual(len(bitten), 1, tones.structured_content)
            details = await session.call_tool("media_get", {"id": bitten[0]})
            tools = await session.list_tools()
            return details, tools
        details, tools = self.run_session(body)
        text = details.content[0].text
        self.assertIn("soundbites (player.open with soundbite K): 1. 0:40–0:46 The tone at forty", text)
        opener = [tool for tool in tools.tools if tool.name == "player_open"]
        self.assertEqual(len(opener), 1)
        self.assertIn("soundbite", opener[0].input_schema["properties"])

    def test_a_tool_error_and_a_bad_call(self):
        async def body(session, init):
            failed = await session.call_tool("media_get", {"id": "podcasts:podcast:1"})
            self.assertTrue(failed.is_error)
            self.assertIn("podcasts", failed.content[0].text)
            bad = await session.call_tool("media_search", {"provider": "podcasts"})
            self.assertTrue(bad.is_error, "missing arguments are the tool's error, which a model can correct")
            self.assertIn("query", bad.content[0].text)
            with self.assertRaises(MCPError) as caught:
                await session.call_tool("no_such_tool", {})
            self.assertEqual(caught.exception.error.code, -32602)
        self.run_session(body)

    def test_through_the_background_service(self):
        """With a service running, tools run in it: its process answers, and a download's
        progress comes back through it."""
        data = tempfile.mkdtemp(prefix="mediahost-mcp-service-")
        env = dict(self.env, MEDIAHOST_DATA_DIR=data + "/data", MEDIAHOST_HOST_BACKGROUND="auto")
        service = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(300):
                status = subprocess.run([BIN, "serve", "--status"], env=env, capture_output=True, text=True)
                if status.returncode == 0 and "running" in status.stdout:
                    break
                anyio.run(anyio.sleep, 0.1)
            progress = []

            async def record(value, total, message):
                progress.append(value)

            async def main():
                params = StdioServerParameters(command=BIN, args=["mcp"], env=env)
                seen = []

                async def on_message(message):
                    seen.append(repr(message))

                async with stdio_client(params) as (read, write):
                    async with ClientSession(read, write, message_handler=on_message) as session:
                        await session.initialize()
                        # Another client's change (here `mediahost call`) updates a subscribed resource.
                        await session.subscribe_resource("mediahost://favorites")
                        added = await anyio.to_thread.run_sync(lambda: subprocess.run(
                            [BIN, "call", "favorites.add", json.dumps({"id": RADIO})], env=env, capture_output=True))
                        self.assertEqual(added.returncode, 0, added.stderr)
                        for _ in range(100):
                            if any("mediahost://favorites" in m for m in seen):
                                break
                            await anyio.sleep(0.1)
                        self.assertTrue(any("mediahost://favorites" in m for m in seen), seen)
                        info = await session.call_tool("host_info", {})
                        self.assertEqual(info.structured_content["pid"], service.pid)
                        episodes = await session.call_tool("media_children", {"id": RADIO})
                        tone = next(i["id"] for i in episodes.structured_content["items"] if "4 s" in i["title"])
                        done = await session.call_tool("downloads_start", {"id": tone}, read_timeout_seconds=120,
                                                       progress_callback=record)
                        self.assertEqual(done.structured_content["state"], "completed", done.content)
            anyio.run(main)
            self.assertTrue(progress, "progress came through the service")
        finally:
            subprocess.run([BIN, "serve", "--stop"], env=env, capture_output=True)
            service.wait(timeout=30)
            shutil.rmtree(data, ignore_errors=True)

    def test_raw_answers_match_the_protocols_schema(self):
        """Without the SDK in between: each answer, as sent, against the 2025-11-25 schema."""
        requests = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "media_search", "arguments": {"provider": "podcasts", "query": "orbit"}}},
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "media_get", "arguments": {"id": "x"}}},
            {"jsonrpc": "2.0", "id": 5, "method": "resources/list"},
            {"jsonrpc": "2.0", "id": 6, "method": "resources/templates/list"},
            {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": "mediahost://history"}},
            {"jsonrpc": "2.0", "id": 8, "method": "ping"},
            {"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {
                "protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}},
        ]
        done = subprocess.run([BIN, "mcp"], env=self.env, capture_output=True, text=True, timeout=60,
                              input="".join(json.dumps(r) + "\n" for r in requests))
        answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
        self.assertEqual(set(answers), {1, 2, 3, 4, 5, 6, 7, 8, 9}, done.stderr)
        check("InitializeResult", answers[1]["result"])
        self.assertEqual(answers[1]["result"]["protocolVersion"], "2025-11-25")
        check("ListToolsResult", answers[2]["result"])
        for tool in answers[2]["result"]["tools"]:
            check("Tool", tool)
        check("CallToolResult", answers[3]["result"])
        check("CallToolResult", answers[4]["result"])
        self.assertTrue(answers[4]["result"]["isError"])
        check("ListResourcesResult", answers[5]["result"])
        check("ListResourceTemplatesResult", answers[6]["result"])
        check("ReadResourceResult", answers[7]["result"])
        check("EmptyResult", answers[8]["result"])
        # A revision it does not speak: it offers its newest, and the client decides.
        self.assertEqual(answers[9]["result"]["protocolVersion"], "2025-11-25")
        self.assertEqual(done.stdout.count("\n"), len(done.stdout.splitlines()), "one message a line")

    def test_hostile_messages_are_answered_and_leave_the_server_working(self):
        hostile = [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 123}},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "media_search", "arguments": [1, 2]}},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "media_search", "arguments": {"query": "x" * 100000}}},
            {"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "mediahost://item/%ZZ%00"}},
            {"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "file:///etc/passwd"}},
            {"jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": {"uri": "mediahost://lists/../../x"}},
            {"jsonrpc": "2.0", "id": 7, "method": "resources/subscribe", "params": {}},
            {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
             "params": {"name": "downloads_start", "arguments": {"id": "podcasts:episode:none"},
                        "_meta": {"progressToken": {"deep": [1, {"x": None}]}}}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never-sent"}},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": None},
            {"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"protocolVersion": 2025}},
            {"jsonrpc": "2.0", "id": 10, "method": "ping"},
        ]
        done = subprocess.run([BIN, "mcp"], env=self.env, capture_output=True, text=True, timeout=60,
                              input="".join(json.dumps(m) + "\n" for m in hostile) + "{not json\n")
        answers = {m.get("id"): m for m in map(json.loads, done.stdout.splitlines())}
        for id in [1, 4, 5, 6, 7]:
            self.assertIn("error", answers[id], answers[id])
        for id in [2]:
            self.assertEqual(answers[id]["error"]["code"], -32602)
        for id in [3, 8]:
            self.assertTrue(answers[id]["result"]["isError"], answers[id])
        self.assertEqual(answers[9]["result"]["protocolVersion"], "2025-11-25")
        self.assertEqual(answers[10]["result"], {})
        self.assertEqual(answers[None]["error"]["code"], -32700, "the broken line is a parse error")
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_read_only(self):
        async def body(session, init):
            return (await session.list_tools()).tools
        tools = self.run_session(body, args=["--read-only"])
        self.assertTrue(tools)
        self.assertTrue(all(tool.annotations.read_only_hint for tool in tools))
        self.assertNotIn("favorites_add", {tool.name for tool in tools})


if __name__ == "__main__":
    unittest.main(verbosity=2)
