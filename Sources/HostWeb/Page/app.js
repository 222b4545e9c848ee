"use strict";
// The web remote: the desk's player, queue and library through the host's own JSON-RPC, over
// one WebSocket (/rpc). Every change anyone makes arrives as a notification, so this page,
// the REPL and the editors show the same thing. No framework, no build step.

const $ = (id) => document.getElementById(id);

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    // Through the CSSOM: a style attribute is refused by the page's Content-Security-Policy.
    else if (key === "style") Object.assign(node.style, value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
  return node;
}

// Icons drawn here (no font has them all): a path in a 24-unit box.
const icons = {
  play: "M7 4v16l13-8z",
  pause: "M6 4h4v16H6zM14 4h4v16h-4z",
  prev: "M6 5h2v14H6zM20 5v14L9 12z",
  next: "M16 5h2v14h-2zM4 5v14l11-7z",
  chprev: "M4 5h2v14H4zM13 5v14l-6-7zM21 5v14l-6-7z",
  chnext: "M18 5h2v14h-2zM11 5v14l6-7zM3 5v14l6-7z",
};

function icon(name) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "icon");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", icons[name]);
  svg.append(path);
  return svg;
}

function clock(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) seconds = 0;
  seconds = Math.floor(seconds);
  const h = Math.floor(seconds / 3600), m = Math.floor((seconds % 3600) / 60), s = seconds % 60;
  const two = (n) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

function toast(message) {
  const box = $("toast");
  box.textContent = message;
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { box.hidden = true; }, 6000);
}

// JSON-RPC 2.0 over the WebSocket, reconnecting by itself.
class Host {
  constructor() {
    this.next = 1;
    this.pending = new Map();
    this.handlers = new Map();
    this.delay = 250;
    this.onOpen = () => {};
  }
  connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}/rpc`);
    this.socket = socket;
    socket.onopen = () => {
      this.openedAt = Date.now();
      $("connection").textContent = "";
      document.body.classList.remove("offline");
      this.onOpen();
    };
    socket.onmessage = (event) => this.receive(event.data);
    socket.onclose = () => {
      // The waits grow again unless it stayed open a while: a server that closes at once is
      // not asked four times a second.
      if (this.openedAt && Date.now() - this.openedAt > 5000) this.delay = 250;
      this.openedAt = 0;
      for (const { reject } of this.pending.values()) reject(new Error("the service went away"));
      this.pending.clear();
      document.body.classList.add("offline");
      $("connection").textContent = "Reconnecting…";
      this.retry();
    };
  }
  async retry() {
    await new Promise((resolve) => setTimeout(resolve, this.delay));
    this.delay = Math.min(this.delay * 2, 5000);
    // Unpaired meanwhile: the page itself is refused; go back to pairing.
    try {
      const response = await fetch("/app.js", { cache: "no-store" });
      if (response.status === 401 || response.status === 429) { location.reload(); return; }
    } catch (error) { /* the service is still away */ }
    this.connect();
  }
  receive(text) {
    let message;
    try { message = JSON.parse(text); } catch (error) { return; }
    for (const one of Array.isArray(message) ? message : [message]) {
      if (one.id !== undefined && one.id !== null && this.pending.has(one.id)) {
        const { resolve, reject } = this.pending.get(one.id);
        this.pending.delete(one.id);
        if (one.error) reject(Object.assign(new Error(one.error.message), { code: one.error.code }));
        else resolve(one.result);
      } else if (one.method) {
        for (const handler of this.handlers.get(one.method) || []) handler(one.params || {});
      }
    }
  }
  call(method, params) {
    return new Promise((resolve, reject) => {
      if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
        reject(new Error("not connected to the service"));
        return;
      }
      const id = this.next++;
      this.pending.set(id, { resolve, reject });
      const message = { jsonrpc: "2.0", id, method };
      if (params !== undefined) message.params = params;
      this.socket.send(JSON.stringify(message));
    });
  }
  on(method, handler) {
    if (!this.handlers.has(method)) this.handlers.set(method, []);
    this.handlers.get(method).push(handler);
  }
}

const host = new Host();

// A call whose failure is said, not thrown away.
async function act(method, params) {
  try {
    return await host.call(method, params);
  } catch (error) {
    toast(error.message);
    return undefined;
  }
}

function artwork(item, size = 56) {
  if (!item || !item.id) return el("span", { class: "art empty", style: { width: `${size}px`, height: `${size}px` } });
  return el("img", {
    class: "art", src: `/artwork?id=${encodeURIComponent(item.id)}&w=${Math.ceil(size * (window.devicePixelRatio || 1))}`,
    alt: "", width: size, height: size, loading: "lazy",
    onerror: (event) => { event.target.style.visibility = "hidden"; },
  });
}

const playable = (item) => ["episode", "video", "movie"].includes(item.kind) || Boolean(item.enclosure || item.plays);
const openable = (item) => ["podcast", "channel", "playlist", "user"].includes(item.kind);

// One row of a listing: its picture, title, what it is, and what can be done with it.
function row(item, extra = [], { queued = false } = {}) {
  const details = [item.subtitle || item.creator, item.published ? item.published.slice(0, 10) : null,
    item.duration ? clock(item.duration) : null, item.download && item.download.state === "completed" ? "downloaded" : null,
    item.played ? "played" : null].filter(Boolean).join(" · ");
  const buttons = [];
  if (playable(item)) {
    buttons.push(el("button", { type: "button", class: "play", "aria-label": `Play ${item.title}`, text: "Play",
      onclick: () => play(item.id) }));
    if (!queued) {
      buttons.push(el("button", { type: "button", "aria-label": `Queue ${item.title}`, text: "Queue",
        onclick: async () => { if (await act("queue.add", { ids: [item.id] })) toast(`Queued ${item.title}`); } }));
    }
  }
  return el("li", { class: "row", "data-id": item.id },
    artwork(item),
    el("div", { class: "row-text" },
      el("a", { href: `#/item/${encodeURIComponent(item.id)}`, class: "title", text: item.title }),
      el("div", { class: "muted", text: details })),
    el("div", { class: "row-actions changes" }, buttons, extra));
}

async function play(id, params = {}) {
  const answer = await act("player.open", Object.assign({ id, now: true }, params));
  if (answer && answer.note) toast(answer.note);
}

// The player as the desk's says it, moved along between its reports.
const now = { status: null, at: 0, chapters: [], chaptersOf: null, seeking: false };

function position() {
  const status = now.status;
  if (!status || status.position === undefined) return 0;
  const moved = status.state === "playing" ? (performance.now() - now.at) / 1000 : 0;
  return Math.min(status.position + moved, status.duration || Infinity);
}

function showPlayer(status) {
  now.status = status;
  now.at = performance.now();
  const item = status.item;
  const playing = status.state === "playing";
  $("np-title").textContent = item ? item.title : "Nothing plays";
  $("np-play").replaceChildren(icon(playing ? "pause" : "play"));
  $("np-play").setAttribute("aria-label", playing ? "Pause" : "Play");
  $("np-chapter").textContent = status.chapter ? `Chapter: ${status.chapter}` : "";
  // The show (or channel) it is of, asked once per item; a problem is said in its place.
  if (status.problem) $("np-show").textContent = status.problem;
  else if (!item || !item.id) $("np-show").textContent = "";
  else if (now.showOf !== item.id) {
    now.showOf = item.id;
    $("np-show").textContent = "";
    host.call("media.get", { id: item.id }).then((got) => {
      if (now.showOf === item.id) $("np-show").textContent = got.subtitle || got.creator || "";
    }, () => {});
  }
  const art = $("np-art");
  if (item && item.id) {
    const src = `/artwork?id=${encodeURIComponent(item.id)}`;
    if (art.getAttribute("src") !== src) art.setAttribute("src", src);
    art.hidden = false;
  } else {
    art.hidden = true;
  }
  const seek = $("np-seek");
  seek.disabled = !item || !status.duration;
  seek.max = String(Math.floor(status.duration || 0));
  $("np-dur").textContent = clock(status.duration || 0);
  if (status.volume !== undefined) $("np-volume").value = String(Math.round(status.volume));
  if (status.speed !== undefined) {
    const speed = $("np-speed");
    const value = String(Math.round(status.speed * 100) / 100);
    if (![...speed.options].some((option) => option.value === value)) speed.append(el("option", { value, text: `${value}×` }));
    speed.value = value;
  }
  const sleep = status.sleep;
  $("np-sleep-state").textContent = !sleep ? "" : sleep.at === "time" ? `pauses at ${new Date(sleep.deadline).toLocaleTimeString()}`
    : sleep.at === "end" ? "pauses at the end" : "pauses at the chapter's end";
  if (item && item.id && now.chaptersOf !== item.id) loadChapters(item.id);
  // mpv learns the length a moment after it starts: asked again then.
  if (item && !status.duration) {
    clearTimeout(showPlayer.again);
    showPlayer.again = setTimeout(async () => { try { showPlayer(await host.call("player.status")); } catch (error) { /* reconnecting */ } }, 1000);
  }
  if (!item) { now.chapters = []; now.chaptersOf = null; drawMarks(); }
  tick();
  $("np-play").disabled = !item;
  // What plays changed (mpv took the queue's next): the queue view shows it. Not at every
  // report of the position, which would rebuild the list (and lose the focus) each second.
  const shown = item ? item.id || item.target : null;
  if (shown !== now.shown) {
    now.shown = shown;
    if ((location.hash || "#/queue").startsWith("#/queue")) render();
  }
}

async function loadChapters(id) {
  now.chaptersOf = id;
  now.chapters = [];
  try {
    const answer = await host.call("media.chapters", { id });
    if (now.chaptersOf === id) now.chapters = (answer.chapters || []).filter((c) => c.toc);
  } catch (error) { /* no chapters */ }
  drawMarks();
}

function drawMarks() {
  const marks = $("np-marks");
  marks.replaceChildren();
  const duration = now.status && now.status.duration;
  if (!duration) return;
  for (const chapter of now.chapters) {
    if (chapter.start <= 0 || chapter.start >= duration) continue;
    marks.append(el("span", { class: "mark", style: { left: `${(100 * chapter.start) / duration}%` }, title: chapter.title }));
  }
}

function tick() {
  if (!now.seeking) {
    const at = position();
    $("np-seek").value = String(Math.floor(at));
    $("np-pos").textContent = clock(at);
  }
}
setInterval(tick, 500);

function wirePlayer() {
  for (const [id, name] of [["np-prev", "prev"], ["np-play", "play"], ["np-next", "next"], ["np-chprev", "chprev"], ["np-chnext", "chnext"]]) {
    $(id).replaceChildren(icon(name));
  }
  $("np-play").onclick = () => act(now.status && now.status.state === "playing" ? "player.pause" : "player.resume");
  $("np-back").onclick = () => act("player.seek", { seconds: -30, relative: true });
  $("np-fwd").onclick = () => act("player.seek", { seconds: 30, relative: true });
  $("np-next").onclick = () => act("player.next");
  $("np-prev").onclick = () => act("player.previous");
  $("np-chprev").onclick = () => act("player.chapter", { to: "previous" });
  $("np-chnext").onclick = () => act("player.chapter", { to: "next" });
  const seek = $("np-seek");
  seek.addEventListener("input", () => { now.seeking = true; $("np-pos").textContent = clock(Number(seek.value)); });
  seek.addEventListener("change", async () => {
    await act("player.seek", { seconds: Number(seek.value) });
    now.seeking = false;
  });
  $("np-volume").addEventListener("change", (event) => act("player.volume", { level: Number(event.target.value) }));
  $("np-speed").addEventListener("change", (event) => act("player.speed", { rate: Number(event.target.value) }));
  $("np-sleep").addEventListener("change", (event) => {
    const value = event.target.value;
    if (!value) act("player.sleep", { off: true });
    else if (value === "end" || value === "chapter") act("player.sleep", { at: value });
    else act("player.sleep", { minutes: Number(value) });
  });
}

// Listening on this device: the browser's own audio element, from the desk's file when it was
// downloaded, the episode's own URL otherwise; where it got to is kept in the library.
const here = { item: null, saved: 0 };

async function listenHere(item) {
  const audio = $("here-audio");
  const downloaded = item.download && item.download.state === "completed";
  const source = downloaded ? `/stream?id=${encodeURIComponent(item.id)}` : item.enclosure && item.enclosure.url;
  if (!source) { toast("This one cannot play in the browser: play it at the desk instead."); return; }
  here.item = item;
  $("here").hidden = false;
  document.body.classList.add("listening");
  $("here-title").textContent = item.title;
  audio.src = source;
  audio.currentTime = item.position || 0;
  try { await audio.play(); } catch (error) { /* the person presses play */ }
  if ("mediaSession" in navigator) {
    navigator.mediaSession.metadata = new MediaMetadata({
      title: item.title, artist: item.subtitle || item.creator || "", album: "mediahost",
      artwork: [{ src: `/artwork?id=${encodeURIComponent(item.id)}` }],
    });
    navigator.mediaSession.setActionHandler("seekbackward", () => { audio.currentTime = Math.max(0, audio.currentTime - 30); });
    navigator.mediaSession.setActionHandler("seekforward", () => { audio.currentTime += 30; });
    navigator.mediaSession.setActionHandler("play", () => audio.play());
    navigator.mediaSession.setActionHandler("pause", () => audio.pause());
  }
}

async function keepPosition(force = false) {
  const audio = $("here-audio");
  if (!here.item || !Number.isFinite(audio.currentTime)) return;
  const at = Math.floor(audio.currentTime);
  if (!force && Math.abs(at - here.saved) < 15) return;
  here.saved = at;
  const ended = audio.ended || (audio.duration && at >= audio.duration - 1);
  try {
    await host.call("player.mark", ended ? { ids: [here.item.id], played: true } : { ids: [here.item.id], played: false, position: at, duration: Number.isFinite(audio.duration) && audio.duration > 0 ? audio.duration : undefined });
  } catch (error) { /* kept at the next one */ }
}

function wireHere() {
  const audio = $("here-audio");
  audio.addEventListener("timeupdate", () => keepPosition(false));
  audio.addEventListener("pause", () => keepPosition(true));
  audio.addEventListener("ended", () => keepPosition(true));
  $("here-close").onclick = async () => {
    audio.pause();
    await keepPosition(true);
    here.item = null;
    audio.removeAttribute("src");
    $("here").hidden = true;
    document.body.classList.remove("listening");
  };
}

// Views, by the address's hash: #/queue, #/search?q=, #/item/<id>, #/new, #/favorites,
// #/downloads, #/lists, #/list/<name>.
const views = {
  async queue() {
    const page = await host.call("queue.list", { limit: 200 });
    const items = page.items || [];
    const list = el("ol", { class: "rows", id: "queue" });
    items.forEach((item, index) => {
      const position = index + 1;
      list.append(row(item, [
        el("button", { type: "button", "aria-label": `Move ${item.title} up`, text: "↑", disabled: index === 0,
          onclick: () => act("queue.move", { from: position, to: position - 1 }) }),
        el("button", { type: "button", "aria-label": `Move ${item.title} down`, text: "↓", disabled: index === items.length - 1,
          onclick: () => act("queue.move", { from: position, to: position + 1 }) }),
        el("button", { type: "button", "aria-label": `Remove ${item.title} from the queue`, text: "✕",
          onclick: () => act("queue.remove", { ids: [item.id] }) }),
      ], { queued: true }));
    });
    return [el("h2", { text: `Queue (${items.length})` }),
      items.length ? list : el("p", { class: "muted", text: "The queue is empty: queue episodes from a show, a search or New." }),
      items.length ? el("button", { type: "button", class: "changes", text: "Clear the queue", onclick: () => act("queue.clear") }) : null];
  },

  async search(query) {
    // A link opens what it names: a YouTube video, or any other address as a podcast feed.
    const linked = query && linkID(query);
    if (linked) { location.replace(`#/item/${encodeURIComponent(linked)}`); return []; }
    const input = el("input", { type: "search", name: "q", value: query || "", "aria-label": "Search, or a link to open",
      placeholder: "Search every source, or paste a link", autocomplete: "off" });
    const form = el("form", { class: "search", role: "search", onsubmit: (event) => {
      event.preventDefault();
      location.hash = `#/search?q=${encodeURIComponent(input.value.trim())}`;
    } }, input, el("button", { type: "submit", text: "Search" }));
    const parts = [el("h2", { text: "Search" }), form];
    if (query) {
      const answer = await host.call("media.search", { query });
      const items = answer.items || [];
      parts.push(el("ul", { class: "rows", id: "results" }, items.map((item) => row(item))));
      if (!items.length) parts.push(el("p", { class: "muted", text: `Nothing found for “${query}”.` }));
      for (const failure of answer.errors || []) parts.push(el("p", { class: "muted", text: `${failure.provider}: ${failure.message}` }));
    }
    setTimeout(() => input.focus(), 0);
    return parts;
  },

  async item(id) {
    const item = await host.call("media.get", { id });
    const favorite = el("button", { type: "button", "aria-pressed": item.favorite ? "true" : "false",
      text: item.favorite ? "★ Favorite" : "☆ Favorite",
      onclick: async () => {
        const method = item.favorite ? "favorites.remove" : "favorites.add";
        if (await act(method, { id })) render();
      } });
    const actions = [favorite];
    if (playable(item)) {
      actions.unshift(
        el("button", { type: "button", class: "play", text: "Play", onclick: () => play(id) }),
        el("button", { type: "button", text: "Queue", onclick: async () => { if (await act("queue.add", { ids: [id] })) toast(`Queued ${item.title}`); } }),
        el("button", { type: "button", text: "Listen here", onclick: () => listenHere(item) }),
        el("button", { type: "button", text: item.download ? `Download: ${item.download.state}` : "Download",
          onclick: async () => { if (await act("downloads.start", { id })) toast(`Downloading ${item.title}`); } }));
    } else if (openable(item)) {
      actions.unshift(el("button", { type: "button", class: "play", text: "Play newest", onclick: () => play(id) }));
    }
    const parts = [
      el("div", { class: "item-head" }, artwork(item, 120),
        el("div", {}, el("h2", { text: item.title }), el("div", { class: "muted", text: [item.subtitle || item.creator, item.published && item.published.slice(0, 10), item.duration && clock(item.duration)].filter(Boolean).join(" · ") }))),
      el("div", { class: "actions changes" }, actions),
    ];
    if (item.summary) parts.push(el("p", { class: "summary", text: item.summary }));
    if (openable(item)) {
      const page = await host.call("media.children", { id });
      parts.push(el("h3", { text: "Episodes" }), el("ul", { class: "rows", id: "children" }, (page.items || []).map((child) => row(child))));
    }
    if (playable(item)) {
      const [chapters, transcript] = await Promise.allSettled([
        host.call("media.chapters", { id }), host.call("media.transcript", { id })]);
      const toc = chapters.status === "fulfilled" ? (chapters.value.chapters || []).filter((c) => c.toc) : [];
      if (toc.length) {
        parts.push(el("h3", { text: "Chapters" }), el("ol", { class: "chapters" }, toc.map((chapter, index) =>
          el("li", {}, el("button", { type: "button", class: "link", text: `${clock(chapter.start)}  ${chapter.title}`,
            onclick: () => playAt(item, chapter.start, index + 1) })))));
      }
      if (transcript.status === "fulfilled" && (transcript.value.cues || []).length) {
        parts.push(transcriptView(item, transcript.value));
      }
    }
    return parts;
  },

  async new() {
    const answer = await host.call("new.list", { keep: true, limit: 200 });
    const items = answer.items || [];
    return [el("h2", { text: `New (${items.length})` }),
      items.length ? el("ul", { class: "rows" }, items.map((item) => row(item))) : el("p", { class: "muted", text: "Nothing new since the last look." }),
      items.length ? el("button", { type: "button", class: "changes", text: "Mark all seen", onclick: async () => { await act("new.seen", { all: true }); render(); } }) : null];
  },

  async favorites() {
    const page = await host.call("favorites.list", { limit: 200 });
    const items = page.items || [];
    return [el("h2", { text: "Favorites" }),
      items.length ? el("ul", { class: "rows" }, items.map((item) => row(item))) : el("p", { class: "muted", text: "No favorites yet." })];
  },

  async downloads() {
    const downloads = await host.call("downloads.list");
    const list = el("ul", { class: "rows", id: "downloads" });
    for (const download of downloads) {
      const percent = download.total ? Math.floor((100 * download.bytes) / download.total) : null;
      const buttons = [];
      if (download.state === "running" || download.state === "queued") {
        buttons.push(el("button", { type: "button", text: "Pause", "aria-label": `Pause ${download.title}`, onclick: () => act("downloads.pause", { id: download.id }).then(render) }));
      }
      if (download.state === "paused" || download.state === "failed") {
        buttons.push(el("button", { type: "button", text: "Resume", "aria-label": `Resume ${download.title}`, onclick: () => act("downloads.resume", { id: download.id }).then(render) }));
      }
      if (download.state !== "completed") {
        buttons.push(el("button", { type: "button", text: "Cancel", "aria-label": `Cancel ${download.title}`, onclick: () => act("downloads.cancel", { id: download.id }).then(render) }));
      } else {
        buttons.push(
          el("button", { type: "button", class: "play", text: "Play", "aria-label": `Play ${download.title}`, onclick: () => play(download.id) }),
          el("button", { type: "button", text: "Listen here", "aria-label": `Listen to ${download.title} here`,
            onclick: async () => { const item = await act("media.get", { id: download.id }); if (item) listenHere(item); } }),
          el("button", { type: "button", text: "Remove", "aria-label": `Remove the file of ${download.title}`,
            onclick: () => { if (confirm(`Delete the downloaded file of “${download.title}”?`)) act("downloads.remove", { id: download.id }).then(render); } }));
      }
      list.append(el("li", { class: "row", "data-id": download.id },
        el("div", { class: "row-text" },
          el("a", { class: "title", href: `#/item/${encodeURIComponent(download.id)}`, text: download.title }),
          el("div", { class: "muted download-state", text: download.state + (download.error ? `: ${download.error}` : "") }),
          el("progress", { max: "100", value: String(download.state === "completed" ? 100 : percent ?? 0), "aria-label": `${download.title} progress` })),
        el("div", { class: "row-actions" }, buttons)));
    }
    return [el("h2", { text: "Downloads" }), downloads.length ? list : el("p", { class: "muted", text: "No downloads." })];
  },

  async lists() {
    const lists = await host.call("lists.list");
    return [el("h2", { text: "Lists" }), lists.length
      ? el("ul", { class: "plain" }, lists.map((list) => el("li", {}, el("a", { href: `#/list/${encodeURIComponent(list.name)}`, text: `${list.name} (${list.count})` }))))
      : el("p", { class: "muted", text: "No lists yet." })];
  },

  async list(name) {
    const page = await host.call("lists.items", { name, limit: 200 });
    return [el("h2", { text: name }), el("ul", { class: "rows" }, (page.items || []).map((item) => row(item))),
      el("button", { type: "button", class: "changes", text: "Queue the whole list",
        onclick: async () => { const answer = await act("queue.add", { list: name }); if (answer) toast(`Queued ${answer.added.length}: the queue holds ${answer.count}`); } })];
  },
};

// The item a pasted link names (as the host names them): a YouTube video by its id, any other
// http(s) address as a feed (`podcasts:podcast:feed-<base64url of the URL>`).
function linkID(text) {
  let url;
  try { url = new URL(text.trim()); } catch (error) { return null; }
  if (!["http:", "https:"].includes(url.protocol)) return null;
  const host = url.hostname.replace(/^(www|m|music)\./, "");
  let video = null;
  if (host === "youtu.be") video = url.pathname.slice(1);
  else if (host === "youtube.com") video = url.searchParams.get("v") || (url.pathname.match(/^\/(shorts|live|embed)\/([^/]+)/) || [])[2];
  if (video && /^[A-Za-z0-9_-]{6,20}$/.test(video)) return `youtube:video:${video}`;
  const bytes = new TextEncoder().encode(url.href === text.trim() || url.href === text.trim() + "/" ? text.trim() : url.href);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return "podcasts:podcast:feed-" + btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

// Plays `item` from `seconds`: a seek when it is what plays, otherwise it starts there.
function playAt(item, seconds, chapter) {
  const playing = now.status && now.status.item && now.status.item.id === item.id;
  if (playing) return act("player.seek", { seconds });
  return play(item.id, chapter ? { chapter } : { start: seconds });
}

function transcriptView(item, transcript) {
  const filter = el("input", { type: "search", placeholder: "Search the transcript", "aria-label": "Search the transcript" });
  const lines = el("ol", { class: "transcript", id: "transcript" });
  const draw = () => {
    const wanted = filter.value.trim().toLowerCase();
    lines.replaceChildren(...transcript.cues.filter((cue) => !wanted || cue.text.toLowerCase().includes(wanted)).slice(0, 2000).map((cue) =>
      el("li", {}, transcript.timed
        ? el("button", { type: "button", class: "link cue", "data-start": String(cue.start), text: `${clock(cue.start)}  ${cue.speaker ? cue.speaker + ": " : ""}${cue.text}`,
          onclick: () => playAt(item, cue.start) })
        : el("span", { text: cue.text }))));
  };
  filter.addEventListener("input", draw);
  draw();
  return el("section", { "aria-label": "Transcript" }, el("h3", { text: "Transcript" }), filter, lines);
}

let rendering = 0;
async function render() {
  const ticket = ++rendering;
  const hash = location.hash || "#/queue";
  const [path, query] = hash.slice(2).split("?");
  const [name, ...rest] = path.split("/");
  const argument = rest.length ? decodeURIComponent(rest.join("/")) : new URLSearchParams(query || "").get("q");
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.view === name) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  const view = views[name] || views.queue;
  let parts;
  try {
    parts = await view(argument);
  } catch (error) {
    parts = [el("p", { class: "error", text: error.message })];
  }
  if (ticket !== rendering) return;
  $("view").replaceChildren(...parts.filter(Boolean));
}

function size(bytes) {
  if (!Number.isFinite(bytes)) return "?";
  if (bytes < 1e6) return `${Math.max(1, Math.round(bytes / 1e3))} KB`;
  return `${(bytes / 1e6).toFixed(bytes < 1e8 ? 1 : 0)} MB`;
}

function downloadProgress(params) {
  const item = document.querySelector(`#downloads li[data-id="${CSS.escape(params.id)}"]`);
  if (!item) return;
  const bar = item.querySelector("progress");
  if (bar && params.total) bar.value = String(Math.floor((100 * params.bytes) / params.total));
  const state = item.querySelector(".download-state");
  if (state) state.textContent = `running · ${size(params.bytes)} of ${params.total ? size(params.total) : "?"}`;
}

// A read-only page shows no control it may not use.
async function whoAmI() {
  try {
    const response = await fetch("/me", { cache: "no-store" });
    if (!response.ok) return;
    const me = await response.json();
    document.body.classList.toggle("read-only", me.access === "read");
  } catch (error) { /* said when it reconnects */ }
}

function start() {
  whoAmI();
  wirePlayer();
  wireHere();
  host.on("player.state", showPlayer);
  host.on("downloads.progress", downloadProgress);
  host.on("downloads.state", () => { if (location.hash.startsWith("#/downloads")) render(); });
  host.on("library.changed", (params) => {
    const hash = location.hash || "#/queue";
    if ((params.what === "queue" && hash.startsWith("#/queue")) || (params.what === "new" && hash.startsWith("#/new"))
      || (params.what === "favorites" && (hash.startsWith("#/favorites") || hash.startsWith("#/item")))
      || (params.what === "lists" && (hash.startsWith("#/list")))) render();
  });
  host.onOpen = async () => {
    render();
    try { showPlayer(await host.call("player.status")); } catch (error) { /* said by the view */ }
  };
  window.addEventListener("hashchange", render);
  // What the desk's player reports between its notifications (how far it got) is read again
  // now and then while the page is looked at.
  setInterval(async () => {
    if (document.hidden || !host.socket || host.socket.readyState !== WebSocket.OPEN) return;
    try { showPlayer(await host.call("player.status")); } catch (error) { /* reconnecting */ }
  }, 10000);
  host.connect();
}

start();
