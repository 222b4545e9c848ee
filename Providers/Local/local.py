#!/usr/bin/env python3
"""The user's own media folders as a mediahost provider (provider-spec.json).

JSON-RPC 2.0, one message per line on stdin/stdout; stderr is the log. Python 3 standard
library only. The folders come from the `folders` setting ([providers.local] folders = [...] in
config.toml, or MEDIAHOST_LOCAL_FOLDERS=/a:/b). Each folder is a category; its subfolders are
playlists, its files videos (or episodes, for audio). Search matches file names and, when
ffprobe is installed, the tags files carry (title, artist, album), read once per file and kept
in an index in this plugin's folder, refreshed by modification times: a folder whose entries did
not change is not read again.
"""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse

VIDEO = {".mp4", ".mkv", ".webm", ".mov", ".avi", ".m4v", ".mpg", ".mpeg", ".wmv", ".flv", ".ogv"}
AUDIO = {".mp3", ".m4a", ".aac", ".ogg", ".oga", ".opus", ".flac", ".wav", ".wma", ".m4b"}
TYPES = {".mp4": "video/mp4", ".mkv": "video/x-matroska", ".webm": "video/webm", ".mov": "video/quicktime",
         ".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".m4b": "audio/mp4", ".ogg": "audio/ogg", ".opus": "audio/ogg",
         ".flac": "audio/flac", ".wav": "audio/wav"}
PAGE = 50
INDEX = "index.json"
# Tags are read for at most this long per request; the rest on later requests.
TAG_BUDGET = 2.0

folders = []
index = {"dirs": {}, "files": {}}  # dir -> {"mtime", "entries"}; file -> {"size", "mtime", "tags"}
# Whether the index changed since it was last kept: it is kept before the answer that changed it
# is sent, so a host that exits (or is killed) right after an answer loses no scan.
dirty = False
ffprobe = shutil.which("ffprobe")


class Failure(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


def log(text):
    print("local: " + text, file=sys.stderr, flush=True)


def parse_folders(value):
    value = (value or "").strip()
    if value.startswith("["):
        try:
            return [str(v) for v in json.loads(value)]
        except ValueError:
            pass
    return [part for part in value.split(":") if part]


def load_index():
    global index
    try:
        with open(INDEX) as f:
            index = json.load(f)
    except (OSError, ValueError):
        index = {"dirs": {}, "files": {}}


def save_index():
    global dirty
    dirty = False
    try:
        with open(INDEX + ".tmp", "w") as f:
            json.dump(index, f)
        os.replace(INDEX + ".tmp", INDEX)
    except OSError as error:
        log("cannot keep the index: %s" % error)


def is_media(name):
    return os.path.splitext(name)[1].lower() in VIDEO | AUDIO


def scan(directory):
    """A folder's media files and subfolders, from the index when its mtime did not change."""
    global dirty
    try:
        mtime = os.stat(directory).st_mtime
    except OSError:
        return [], []
    known = index["dirs"].get(directory)
    if known and known["mtime"] == mtime:
        return known["subdirs"], known["files"]
    subdirs, files = [], []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append(entry.path)
                elif entry.is_file() and is_media(entry.name):
                    files.append(entry.path)
                    stat = entry.stat()
                    old = index["files"].get(entry.path)
                    if not old or old["mtime"] != stat.st_mtime or old["size"] != stat.st_size:
                        index["files"][entry.path] = {"size": stat.st_size, "mtime": stat.st_mtime, "tags": None}
    except OSError as error:
        log("cannot read %s: %s" % (directory, error))
    subdirs.sort()
    files.sort()
    dirty = True
    index["dirs"][directory] = {"mtime": mtime, "subdirs": subdirs, "files": files}
    return subdirs, files


def walk():
    """Every media file under the folders (the unchanged folders from the index)."""
    found = []
    pending = list(folders)
    while pending:
        directory = pending.pop()
        subdirs, files = scan(directory)
        found.extend(files)
        pending.extend(subdirs)
    return found


def read_tags(paths):
    """Tags of files not read yet, within the time budget (with ffprobe only)."""
    global dirty
    if not ffprobe:
        return
    deadline = time.monotonic() + TAG_BUDGET
    for path in paths:
        entry = index["files"].get(path)
        if entry is None or entry["tags"] is not None:
            continue
        if time.monotonic() > deadline:
            break
        entry["tags"] = probe(path)
        dirty = True


def probe(path):
    try:
        output = subprocess.run(
            [ffprobe, "-v", "quiet", "-print_format", "json", "-show_format", path],
            capture_output=True, timeout=10, check=False).stdout
        data = json.loads(output or b"{}").get("format", {})
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return {}
    tags = {key.lower(): value for key, value in (data.get("tags") or {}).items()}
    result = {key: tags[key] for key in ("title", "artist", "album") if tags.get(key)}
    try:
        result["duration"] = float(data["duration"])
    except (KeyError, ValueError, TypeError):
        pass
    return result


def iso(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def file_item(path):
    entry = index["files"].get(path)
    if entry is None:
        stat = os.stat(path)
        entry = index["files"][path] = {"size": stat.st_size, "mtime": stat.st_mtime, "tags": None}
    extension = os.path.splitext(path)[1].lower()
    tags = entry.get("tags") or {}
    kind = "episode" if extension in AUDIO else "video"
    url = "file://" + urllib.parse.quote(path)
    item = {
        "id": "local:%s:%s" % (kind, path), "provider": "local", "kind": kind,
        "title": tags.get("title") or os.path.splitext(os.path.basename(path))[0],
        "subtitle": tags.get("album") or os.path.basename(os.path.dirname(path)),
        "url": url, "published": iso(entry["mtime"]),
        "enclosure": {"url": url, "type": TYPES.get(extension, "application/octet-stream"), "length": entry["size"]},
        "extra": {"path": path, "size": str(entry["size"])},
    }
    if tags.get("artist"):
        item["creator"] = tags["artist"]
    if tags.get("duration"):
        item["duration"] = tags["duration"]
    return item


def folder_item(path):
    return {"id": "local:playlist:" + path, "provider": "local", "kind": "playlist",
            "title": os.path.basename(path.rstrip("/")) or path, "extra": {"path": path}}


def page(items, cursor):
    try:
        offset = int(cursor or 0)
    except ValueError:
        raise Failure(-32602, "cursor %r is not one of this plugin's" % cursor)
    shown = items[offset:offset + PAGE]
    result = {"items": shown, "total": len(items)}
    if offset + PAGE < len(items):
        result["next"] = str(offset + PAGE)
    if offset > 0:
        result["prev"] = str(max(0, offset - PAGE))
    return result


def inside_folders(path):
    real = os.path.realpath(path)
    return any(real == os.path.realpath(f) or real.startswith(os.path.realpath(f).rstrip("/") + "/") for f in folders)


def native(item_id):
    parts = item_id.split(":", 2)
    if len(parts) != 3 or parts[0] != "local":
        raise Failure(-32002, "%s is not a local item" % item_id)
    if not inside_folders(parts[2]):
        raise Failure(-32002, "%s is not in the configured folders" % parts[2])
    return parts[1], parts[2]


def listing(directory):
    subdirs, files = scan(directory)
    read_tags(files)
    return [folder_item(d) for d in subdirs] + [file_item(f) for f in files]


def handle(method, params):
    global folders, dirty
    if method == "initialize":
        folders = [os.path.abspath(os.path.expanduser(f)) for f in parse_folders(params.get("settings", {}).get("folders"))]
        load_index()
        return {"id": "local", "name": "Local media folders"}
    if not folders and method.startswith("provider."):
        raise Failure(-32009, "no folders: set MEDIAHOST_LOCAL_FOLDERS=/path:/other or "
                              "`config providers.local.folders /path`")
    if method == "provider.categories":
        return [{"id": folder, "name": os.path.basename(folder.rstrip("/")) or folder} for folder in folders]
    if method == "provider.browse":
        category = params.get("category", "")
        if category not in folders:
            matches = [f for f in folders if os.path.basename(f.rstrip("/")) == category]
            if not matches:
                raise Failure(-32002, "no folder %r; `categories local` lists them" % category)
            category = matches[0]
        return page(listing(category), params.get("cursor"))
    if method == "provider.search":
        words = (params.get("text") or "").lower().split()
        kind = params.get("kind")
        files = walk()
        read_tags(files)
        found = []
        for path in files:
            tags = index["files"].get(path, {}).get("tags") or {}
            text = " ".join([os.path.basename(path)] + [str(tags.get(k, "")) for k in ("title", "artist", "album")]).lower()
            if all(word in text for word in words):
                item = file_item(path)
                if kind is None or kind == item["kind"]:
                    found.append(item)
        return page(found, params.get("cursor"))
    if method == "provider.item":
        kind, path = native(params.get("id", ""))
        if kind == "playlist":
            if not os.path.isdir(path):
                raise Failure(-32002, "no folder %s" % path)
            return folder_item(path)
        if not os.path.isfile(path):
            raise Failure(-32002, "no file %s" % path)
        entry = index["files"].get(path)
        if entry is not None and entry.get("tags") is None and ffprobe:
            entry["tags"] = probe(path)
            dirty = True
        return file_item(path)
    if method == "provider.children":
        kind, path = native(params.get("id", ""))
        if kind != "playlist" or not os.path.isdir(path):
            raise Failure(-32001, "only folders have children")
        return page(listing(path), params.get("cursor"))
    if method == "provider.downloadSource":
        raise Failure(-32001, "local files are on this machine already: play them or open their path")
    raise Failure(-32601, "unknown method " + method)


def main():
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            log("a line that is not JSON: %r" % line[:80])
            continue
        if "id" not in message:
            if message.get("method") == "shutdown":
                break
            continue
        try:
            reply = {"result": handle(message.get("method", ""), message.get("params") or {})}
        except Failure as failure:
            reply = {"error": {"code": failure.code, "message": failure.message}}
        except Exception as error:  # a bug here is one failed request, not a dead plugin
            log("%s failed: %r" % (message.get("method"), error))
            reply = {"error": {"code": -32603, "message": "local: %s" % error}}
        reply.update(jsonrpc="2.0", id=message["id"])
        if dirty:
            save_index()
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    if dirty:
        save_index()


if __name__ == "__main__":
    main()
