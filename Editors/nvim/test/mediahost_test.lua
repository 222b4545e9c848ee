-- Tests of the Neovim plugin against `mediahost --sandbox rpc`, in a headless Neovim:
--   MEDIAHOST_BIN=.build/debug/mediahost nvim --headless -u NONE -i NONE \
--     --cmd 'set rtp^=Editors/nvim' -c 'runtime plugin/mediahost.lua' \
--     -c 'luafile Editors/nvim/test/mediahost_test.lua'
-- Each test drives :Mediahost and the list keys on a fresh data dir and checks buffer contents.
-- Exits with the number of failed tests.

local mediahost = require("mediahost")
local binary = os.getenv("MEDIAHOST_BIN") or "mediahost"
local failures, messages = 0, {}
-- Wide enough for whole titles (rows fit the window).
vim.o.columns = 140

vim.notify = function(message)
  table.insert(messages, message)
end

local function text(buffer)
  return table.concat(vim.api.nvim_buf_get_lines(buffer or 0, 0, -1, false), "\n")
end

local function expect(condition, what)
  if not condition then
    error(what, 2)
  end
end

local function press(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

-- Row `n` of the current list (after its heading, when it has one).
local function row(n)
  local state = mediahost.buffers[vim.api.nvim_get_current_buf()] or {}
  local line = n - 1 + (state.offset or 0)
  return vim.api.nvim_buf_get_lines(0, line, line + 1, false)[1]
end

local function said(pattern)
  for _, message in ipairs(messages) do
    if message:find(pattern) then
      return true
    end
  end
  return false
end

local function test(name, body)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  vim.env.MEDIAHOST_DATA_DIR = dir
  vim.env.XDG_CONFIG_HOME = dir .. "/config"
  vim.env.XDG_CACHE_HOME = dir .. "/cache"
  vim.env.MEDIAHOST_SANDBOX_MEDIA_RATE = "3000000"
  vim.env.MEDIAHOST_PLAYER = "true"
  mediahost.stop()
  mediahost.downloads = {}
  mediahost.setup({ cmd = binary, args = { "--sandbox", "--data-dir", dir } })
  messages = {}
  vim.cmd("silent! only")
  local ok, err = pcall(body)
  if ok then
    io.stdout:write("ok      " .. name .. "\n")
  else
    failures = failures + 1
    io.stdout:write("FAILED  " .. name .. ": " .. tostring(err) .. "\n")
    io.stdout:write("        messages: " .. table.concat(messages, " | ") .. "\n")
  end
  mediahost.stop()
  vim.fn.delete(dir, "rf")
end

test("search, open a show, open an episode's details", function()
  vim.cmd("Mediahost search podcasts kitchen")
  expect(vim.api.nvim_buf_get_name(0):find("mediahost://search/kitchen", 1, true), "the results buffer")
  expect(text():find("The Electric Kitchen 77", 1, true), "a show in the results: " .. text())
  expect(text():find("podcast", 1, true), "the kind column")
  press("<CR>")
  expect(vim.api.nvim_buf_get_name(0):find("The Electric Kitchen 77", 1, true), "the show's buffer")
  expect(text():find("Episode %d+:"), "its episodes: " .. text())
  -- What every episode shares (the show, the kind) is said once, above them.
  expect(vim.api.nvim_buf_get_lines(0, 0, 1, false)[1]:find("· episodes$"), "the heading: " .. text())
  expect(not row(1):find("episode ", 1, true), "rows without the kind: " .. row(1))
  press("<CR>")
  local details = text()
  expect(details:find("kind%s+episode"), "the details split: " .. details)
  expect(details:find("duration%s+%d+:"), "its duration")
  expect(details:find("Links:", 1, true), "its links")
  expect(details:find("media%s+http://127%.0%.0%.1:%d+/podcasts/media/"), "the media link")
  expect(#vim.api.nvim_list_wins() == 2, "details open in a split")
  -- Every provider at once.
  vim.cmd("only")
  vim.cmd("Mediahost search all swift")
  local providers = {}
  for _, item in ipairs(mediahost.buffers[vim.api.nvim_get_current_buf()].items) do
    providers[item.provider] = true
  end
  expect(vim.tbl_count(providers) > 1, "items from several providers")
end)

test("favorite, then see it in favorites; history searches again", function()
  vim.cmd("Mediahost search podcasts kitchen")
  press("f")
  expect(row(1):find("★", 1, true), "the star on the row")
  vim.cmd("Mediahost favorites")
  expect(text():find("The Electric Kitchen 77", 1, true), "in favorites: " .. text())
  press("f")
  press("g")
  expect(not text():find("The Electric Kitchen 77", 1, true), "gone after unfavoriting")
  vim.cmd("Mediahost history")
  expect(text():find("podcasts%s+kitchen"), "the search in the history: " .. text())
  press("<CR>")
  expect(text():find("The Electric Kitchen 77", 1, true), "searched again")
end)

test("browse a category by name and page with n and P", function()
  vim.cmd("Mediahost browse podcasts Arts")
  local first = row(1)
  expect(first and text():find("podcast", 1, true), "a chart: " .. text())
  press("n")
  expect(row(1) ~= first, "the next page")
  press("P")
  expect(row(1) == first, "back to the first page")
  press("P")
  expect(said("no previous page"), "no page before the first")
end)

test("a download's progress becomes a completed row", function()
  vim.cmd("Mediahost search podcasts kitchen")
  press("<CR>")
  press("d")
  expect(said("downloading"), "the download starts")
  vim.cmd("Mediahost downloads")
  local buffer = vim.api.nvim_get_current_buf()
  local running = false
  local done = vim.wait(60000, function()
    running = running or text(buffer):find("running", 1, true) ~= nil
    return text(buffer):find("completed", 1, true) ~= nil
  end, 20)
  expect(done, "completed: " .. text(buffer))
  expect(running, "progress was shown while it ran")
  expect(text(buffer):find("100%", 1, true), "at 100%")
  expect(said("^mediahost: downloaded Episode "), "a message when it completed")
  expect(mediahost.messages[#mediahost.messages]:find("%.mp3$"), "the file in the messages")
end)

test("play and artwork", function()
  vim.cmd("Mediahost search podcasts kitchen")
  press("a")
  expect(said("^mediahost: artwork of The Electric Kitchen 77"), "the artwork")
  expect(mediahost.messages[#mediahost.messages]:find("artwork of The Electric Kitchen 77: /", 1, true), "its file")
  press("p")
  expect(said("playing The Electric Kitchen 77"), "handed to the player")
end)

test("chapters of an episode, and <CR> plays from one", function()
  mediahost.open({ id = "podcasts:podcast:1999999997", kind = "podcast", title = "Sandbox Radio" })
  press("c")
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  expect(#lines == 4, "the table of contents, the marker left out: " .. text())
  expect(lines[1]:find("^ 1%s+0:00%s+Opening$"), lines[1])
  expect(lines[4]:find("^ 4%s+2:30%s+Closing$"), lines[4])
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  press("<CR>")
  expect(said("chapter 2: The long middle"), "moved to chapter 2")
end)

test("the details window draws the item's picture where the terminal can", function()
  mediahost.setup({ pictures = "kitty" })
  -- What is written to the terminal, kept instead (headless Neovim has none).
  local real, written = io.stdout, {}
  io.stdout = {
    write = function(_, data)
      table.insert(written, data)
    end,
    flush = function() end,
  }
  local ok, err = pcall(function()
    vim.cmd("Mediahost search youtube swift")
    press("<CR>")
    local details = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    expect(details[3] == "" and details[12] == "" and details[13]:find("id%s+youtube:video:"), "room for the picture")
    vim.wait(20000, function()
      return table.concat(written):find("a=T", 1, true) ~= nil
    end, 50)
  end)
  io.stdout = real
  expect(ok, tostring(err))
  local drawn = table.concat(written)
  expect(drawn:find("\27_Ga=d", 1, true), "the last picture deleted first")
  -- Drawn at the details window's third row, the cursor kept.
  local position = vim.fn.win_screenpos(0)
  expect(drawn:find("\27[s\27[" .. (position[1] + 2) .. ";" .. position[2] .. "H\27_G", 1, true), "placed: " .. drawn:sub(1, 80))
  expect(drawn:find("\27[u", 1, true), "the cursor restored")
  -- Where the terminal draws no pictures, nothing is drawn and no room is left.
  mediahost.setup({ pictures = "auto" })
  vim.env.TERM, vim.env.KITTY_WINDOW_ID, vim.env.TERM_PROGRAM = "xterm-256color", nil, nil
  expect(mediahost.picture_protocol() == nil, "no pictures in a plain xterm")
  vim.env.TERM = "xterm-kitty"
  expect(mediahost.picture_protocol() == "kitty", "kitty graphics in kitty")
end)

test("errors are messages", function()
  vim.o.columns = 80
  vim.cmd("Mediahost search nosuch x")
  -- What happened and what to do, in the first 70 columns; the host's whole text in :messages.
  expect(said("^mediahost: no provider 'nosuch' %(:Mediahost providers lists them%)$"), "an unknown provider")
  expect(mediahost.messages[#mediahost.messages]:find("bluesky"), "the whole text kept: " .. mediahost.messages[#mediahost.messages])
  vim.cmd("Mediahost providers")
  expect(text():find("podcasts%s+ready"), "the providers: " .. text())
  vim.cmd("Mediahost messages")
  expect(text():find("unknown provider 'nosuch'; providers are", 1, true), "the messages: " .. text())
  mediahost.show = mediahost.show
  local ok = pcall(mediahost.show, "podcasts:episode:nope")
  expect(not ok, "a bad id fails")
  vim.cmd("Mediahost bogus")
  expect(said("^mediahost: no command 'bogus' %(:Mediahost <Tab> lists them%)$"), "an unknown command")
  for _, message in ipairs(messages) do
    expect(vim.fn.strdisplaywidth(message) <= 70, "over 70 columns: " .. message)
    expect(not message:find("…"), "cut in the middle: " .. message)
  end
  vim.o.columns = 140
  -- Without the sandbox, YouTube has no API key: charts need one, and the message says how to
  -- set it (search works without, through yt-dlp).
  mediahost.stop()
  vim.env.YOUTUBE_API_KEY = nil
  mediahost.setup({ args = {} })
  vim.cmd("Mediahost browse youtube 10")
  expect(said("need the Data API"), "needs a key: " .. table.concat(messages, " | "))
  mediahost.stop()
  mediahost.setup({ cmd = "/nonexistent/mediahost" })
  vim.cmd("Mediahost search podcasts x")
  expect(said("^mediahost: /nonexistent/mediahost cannot be run %(set cmd in setup%(%)%)"), "not installed: " .. table.concat(messages, " | "))
  -- At 80 columns the short form is the message's own first sentence: what is wrong and what to do.
  vim.o.columns = 80
  mediahost.setup({ cmd = "mediahost" })
  local path = vim.env.PATH
  vim.env.PATH = "/nonexistent"
  messages = {}
  vim.cmd("Mediahost search podcasts x")
  vim.env.PATH = path
  expect(
    messages[#messages] == "mediahost: the mediahost program is not on PATH (set cmd in setup())",
    "not on PATH: " .. table.concat(messages, " | ")
  )
  vim.o.columns = 140
end)

test("the connection starts again after the server is killed", function()
  vim.cmd("Mediahost search podcasts kitchen")
  local job = mediahost.job()
  expect(job, "a running connection")
  vim.fn.jobstop(job)
  expect(vim.wait(10000, function()
    return mediahost.job() == nil
  end, 20), "the connection ended")
  vim.cmd("Mediahost search podcasts garden")
  expect(text():find("Garden", 1, true), "results after the restart: " .. text())
  expect(mediahost.job() and mediahost.job() ~= job, "a new process")
end)

test("rows fit an 80-column window", function()
  vim.o.columns = 80
  vim.cmd("Mediahost search podcasts kitchen")
  for _, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    expect(vim.fn.strdisplaywidth(line) <= 80, "too wide: " .. line)
  end
  expect(text():find("The Electric Kitc", 1, true), "titles are cut, not dropped: " .. text())
  -- A row with a download state fits too, at 80 and after a resize to 60.
  local item = {
    id = "podcasts:episode:1:x", title = string.rep("A long title ", 8), creator = "Someone With A Long Name",
    kind = "episode", published = "2025-10-09T09:00:00Z", duration = 3725, favorite = true,
    download = { state = "completed" },
  }
  for _, width in ipairs({ 80, 60, 140 }) do
    local row = mediahost.row(item, width)
    expect(vim.fn.strdisplaywidth(row) < width, "too wide at " .. width .. ": " .. row)
    expect(row:find("completed$"), "the state is whole at " .. width .. ": " .. row)
  end
  vim.o.columns = 60
  vim.cmd("doautocmd VimResized")
  for _, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    expect(vim.fn.strdisplaywidth(line) < 60, "too wide after a resize: " .. line)
  end
  vim.o.columns = 140
end)

test("messages fit the echo area", function()
  vim.o.columns = 80
  local long = "downloaded /home/someone/.local/share/mediahost/downloads/podcasts/The Daily Circle 1/"
    .. "2025-10-09 Episode 26 - Tiny Houses.mp3\nand a second line"
  local fitted = require("mediahost").fit("mediahost: " .. long)
  expect(vim.fn.strdisplaywidth(fitted) <= vim.v.echospace, "too wide for the echo area: " .. fitted)
  expect(not fitted:find("\n"), "one line: " .. fitted)
  expect(not fitted:find("…"), "never cut in the middle: " .. fitted)
  expect(
    fitted == "mediahost: downloaded (:Mediahost messages)",
    "whole words and where the rest is: " .. fitted
  )
  local clauses = require("mediahost").fit(
    "mediahost: youtube: the video is members-only; give yt-dlp your cookies (config providers.youtube.cookies) and try again"
  )
  expect(clauses == "mediahost: youtube: the video is members-only (:Mediahost messages)", "whole clauses: " .. clauses)
  expect(require("mediahost").fit("短い") == "短い", "short ones as they are")
  -- The host's words for a missing yt-dlp: its first sentence, labels kept.
  local ytdlp = require("mediahost").fit(
    "mediahost: youtube: yt-dlp is missing (`make ytdlp`); YouTube without an API key and every download need it, "
      .. "and 'yt-dlp' was not found: install it: `pip install -U yt-dlp` (or pipx), or set providers.youtube.ytdlp"
  )
  expect(ytdlp == "mediahost: youtube: yt-dlp is missing (`make ytdlp`)", "the first sentence: " .. ytdlp)
  vim.o.columns = 140
end)

test("gather items into a list and open it", function()
  vim.cmd("Mediahost search podcasts kitchen")
  vim.ui.input = function(_, answer)
    answer("Road trip")
  end
  press("l")
  press("j")
  press("l")
  expect(said("added The Friendly Kitchen 94 to Road trip"), "added")
  vim.cmd("Mediahost lists")
  expect(text():find("Road trip%s+2 items"), "the list: " .. text())
  press("<CR>")
  expect(text():find("The Electric Kitchen 77", 1, true) and text():find("The Friendly Kitchen 94", 1, true), text())
end)

test("the queue: gather, reorder, take out, and follow changes made elsewhere", function()
  vim.cmd("Mediahost search podcasts kitchen")
  local titles = {}
  for n = 1, 3 do
    table.insert(titles, mediahost.buffers[vim.api.nvim_get_current_buf()].items[n].title)
    press("e")
    press("j")
  end
  expect(said("%(3 in the queue%)"), "queued: " .. table.concat(messages, " | "))
  vim.cmd("Mediahost queue")
  expect(row(1):find(titles[1], 1, true), "first: " .. text())
  -- J: the first goes second, and the cursor follows it.
  press("J")
  expect(row(1):find(titles[2], 1, true) and row(2):find(titles[1], 1, true), "moved down: " .. text())
  press("x")
  expect(#mediahost.buffers[vim.api.nvim_get_current_buf()].items == 2, "taken out: " .. text())
  expect(not text():find(titles[1], 1, true), "gone: " .. text())
  -- (`g` refreshes a list: the first row is gone to by hand.)
  vim.api.nvim_win_set_cursor(0, { 1 + (mediahost.buffers[vim.api.nvim_get_current_buf()].offset or 0), 0 })
  press("K")
  expect(said("it is first already"), "the first cannot go up")
  -- Emptied by another call (as another front end would): the buffer follows when it is told.
  local queue = vim.api.nvim_get_current_buf()
  mediahost.call("queue.clear")
  vim.wait(10000, function()
    return #mediahost.buffers[queue].items == 0
  end, 50)
  expect(#mediahost.buffers[queue].items == 0, "followed the change: " .. text(queue))
end)

test("completion and pickers", function()
  local subs = mediahost.complete("", "Mediahost ")
  expect(vim.tbl_contains(subs, "search") and vim.tbl_contains(subs, "downloads"), "subcommands")
  expect(vim.deep_equal(mediahost.complete("pod", "Mediahost search pod"), { "podcasts", "podcastindex" }), "providers")
  expect(vim.deep_equal(mediahost.complete("tm", "Mediahost search tm"), { "tmdb" }), "one provider")
  expect(vim.tbl_contains(mediahost.complete("Ar", "Mediahost browse podcasts Ar"), "Arts"), "categories")
  expect(vim.tbl_contains(vim.fn.getcompletion("Mediahost sea", "cmdline"), "search"), "through the command line")
  -- vim.ui.select and vim.ui.input, as telescope or fzf-lua would answer them.
  vim.ui.select = function(choices, _, choose)
    for _, choice in ipairs(choices) do
      if choice == "podcasts" or (type(choice) == "table" and choice.name == "Arts") then
        return choose(choice)
      end
    end
    choose(nil)
  end
  vim.ui.input = function(_, answer)
    answer("kitchen")
  end
  vim.cmd("Mediahost search")
  expect(text():find("The Electric Kitchen 77", 1, true), "picked provider and query: " .. text())
  vim.cmd("Mediahost browse")
  expect(vim.api.nvim_buf_get_name(0):find("mediahost://podcasts/1301", 1, true), "picked category: " .. vim.api.nvim_buf_get_name(0))
  -- A host that does not answer: Tab gives up after a moment instead of hanging the editor.
  local config = vim.deepcopy(mediahost.config)
  mediahost.stop()
  mediahost.setup({ cmd = "/bin/sh", args = { "-c", "exec sleep 600" } })
  local started = vim.loop.hrtime()
  local offered = mediahost.complete("", "Mediahost search ")
  local seconds = (vim.loop.hrtime() - started) / 1e9
  expect(seconds < 10, "completion waited " .. seconds .. " s")
  expect(#offered == 0, "nothing offered: " .. vim.inspect(offered))
  mediahost.stop()
  mediahost.setup(config)
end)

-- An episode as `media.get` answers it; `namespace`, when given, is its Podcasting 2.0
-- `namespace` (rpc-spec's PodcastNamespace).
local function podcast_episode(namespace)
  return {
    id = "podcasts:episode:feed-x:pi-7000001-2", kind = "episode", title = "Engines of Thought 2: Machines",
    subtitle = "Engines of Thought", creator = "Charles Babbage", published = "2026-01-01T02:00:00Z",
    duration = 1830, favorite = false, url = "https://example.com/7000001/2", feed = "https://example.com/7000001.xml",
    enclosure = { url = "https://example.com/7000001/2.mp3", type = "audio/mpeg" },
    extra = { season = "1", episode = "2" }, summary = "Babbage and Lovelace on the engine.",
    namespace = namespace,
  }
end

local long_soundbite = "Where the engine weaves algebraic patterns just as the Jacquard loom weaves flowers and leaves"
local long_trailer = "Coming soon: a whole season about the engines that think, and the people who built them"

-- A `namespace` with every element the details draw.
local function every_element()
  return {
    people = {
      { name = "Charles Babbage", role = "host", group = "cast" },
      { name = "Ada Lovelace", role = "guest", group = "cast", link = "https://example.com/people/ada" },
      { name = "Mary Somerville", role = "producer", group = "audio post-production" },
    },
    seasonName = "The first", episodeDisplay = "Bonus",
    funding = { { text = "Support Engines of Thought", url = "https://example.com/7000001/support" }, { text = "Tell a friend" } },
    podroll = {
      { feedGuid = "guid-a", feedURL = "https://example.com/analytical.xml", title = "The Analytical Hour" },
      { feedGuid = "guid-b" },
    },
    soundbites = {
      { start = 1, duration = 2, title = "The best bit" },
      { start = 75, duration = 30, title = long_soundbite },
      { start = 3600, duration = 60 },
    },
    live = { status = "ended", start = "2026-01-01T02:00:00Z", ["end"] = "2026-01-01T03:00:00Z" },
    trailers = { { title = long_trailer, url = "https://example.com/7000001/trailer.mp3" } },
    alternateEnclosures = {
      { type = "audio/opus", sources = { "https://example.com/2.opus" }, bitrate = 96000, language = "en", isDefault = false },
      { type = "video/mp4", sources = { "https://example.com/2.mp4" }, height = 720, isDefault = false },
    },
    locked = { locked = true, owner = "babbage@example.com" },
    license = { text = "CC-BY-4.0", url = "https://creativecommons.org/licenses/by/4.0/" },
    location = { name = "London", geo = "geo:51.4978,-0.1745" },
    value = {
      type = "lightning", method = "keysend",
      recipients = { { name = "Charles", type = "node", address = "02ab", split = 90 }, { name = "Ada", type = "node", address = "03cd", split = 10 } },
    },
  }
end

-- Runs `body` with `media.get` answering `item`; the calls made (and URLs opened, as
-- { "open", url }) are added to `calls`.
local function with_item(item, calls, body)
  local call, open = mediahost.call, vim.ui.open
  mediahost.call = function(method, params)
    table.insert(calls, { method, params })
    if method == "media.get" then
      return item
    elseif method == "player.open" then
      return { queued = false }
    end
    error("not stubbed: " .. method)
  end
  vim.ui.open = function(url)
    table.insert(calls, { "open", url })
  end
  local ok, err = pcall(body)
  mediahost.call, vim.ui.open = call, open
  if not ok then
    error(err, 0)
  end
end

-- The cursor to the first line that `pattern` finds.
local function go_to(pattern)
  for number, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    if line:find(pattern) then
      vim.api.nvim_win_set_cursor(0, { number, 0 })
      return number
    end
  end
  error("no line like " .. pattern .. ": " .. text(), 2)
end

test("details without a namespace draw as before", function()
  vim.o.columns = 80
  local calls = {}
  with_item(podcast_episode(), calls, function()
    mediahost.show("podcasts:episode:feed-x:pi-7000001-2")
    expect(text() == [[
Engines of Thought 2: Machines

  id         podcasts:episode:feed-x:pi-7000001-2
  kind       episode
  from       Engines of Thought
  by         Charles Babbage
  published  2026-01-01T02:00:00Z
  duration   30:30
  favorite   no

Babbage and Lovelace on the engine.

Links:
  page       https://example.com/7000001/2
  feed       https://example.com/7000001.xml
  media      https://example.com/7000001/2.mp3]], "as before: " .. text())
  end)
  vim.o.columns = 140
end)

test("details draw Podcasting 2.0, and <CR> on a soundbite plays just that clip", function()
  vim.o.columns = 80
  local item = podcast_episode(every_element())
  local calls = {}
  with_item(item, calls, function()
    mediahost.show(item.id)
    local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    for _, line in ipairs({
      "  live       ended from 2026-01-01T02:00:00Z to 2026-01-01T03:00:00Z",
      "  season     1: The first",
      "  episode    Bonus",
      "  people     Charles Babbage (host)",
      "             Ada Lovelace (guest)",
      "             Mary Somerville (producer, audio post-production)",
      "  funding    Tell a friend",
      "  recommends podcast:guid guid-b",
      "  formats    audio/opus 96 kb/s en",
      "             video/mp4 720p",
      "  location   London",
      "  locked     yes: not to be imported elsewhere (owner babbage@example.com)",
      "  value      lightning keysend to 2 recipients (Charles, Ada); said, not paid",
      "  soundbite 1  0:01–0:03  The best bit",
      "  soundbite 3  1:00:00–1:01:00",
      "  person     Ada Lovelace  https://example.com/people/ada",
      "  funding    Support Engines of Thought  https://example.com/7000001/support",
      "  recommends The Analytical Hour  https://example.com/analytical.xml",
      "  license    CC-BY-4.0  https://creativecommons.org/licenses/by/4.0/",
    }) do
      expect(vim.tbl_contains(lines, line), "the line '" .. line .. "' in: " .. text())
    end
    -- In the REPL's order, between the item's own fields; links under Links.
    expect(text():find("duration%s+30:30\n  live .-\n  season .-\n  episode .-\n  people "), "the order: " .. text())
    expect(text():find("soundbite 3 [^\n]*\n  favorite%s+no\n"), "soundbites before the favorite: " .. text())
    expect(go_to("^Links:") < go_to("^  person "), "the person's link under Links")
    -- Every line fits 80 columns; long ones wrap between words, under the value column.
    for _, line in ipairs(lines) do
      expect(vim.fn.strdisplaywidth(line) <= 80, "too wide: " .. line)
    end
    local unwrapped = text():gsub("\n             ", " ")
    expect(unwrapped:find("\n  soundbite 2  1:15–1:45  " .. long_soundbite .. "\n", 1, true), "whole words: " .. text())
    expect(unwrapped:find("\n  trailer    " .. vim.pesc(long_trailer) .. " +https://example%.com/7000001/trailer%.mp3\n"),
      "the trailer's words whole: " .. text())
    expect(text():find("\n  soundbite 2 [^\n]*\n             %S"), "soundbite 2 wraps: " .. text())
    -- <CR> on soundbite 2's second line plays just that clip; on soundbite 1 too.
    vim.api.nvim_win_set_cursor(0, { go_to("^  soundbite 2 ") + 1, 0 })
    press("<CR>")
    expect(vim.deep_equal(calls[#calls], { "player.open", { id = item.id, soundbite = 2 } }), vim.inspect(calls[#calls]))
    expect(said("playing soundbite 2 of Engines of Thought 2: Machines"), "said: " .. table.concat(messages, " | "))
    go_to("^  soundbite 1 ")
    press("<CR>")
    expect(vim.deep_equal(calls[#calls], { "player.open", { id = item.id, soundbite = 1 } }), vim.inspect(calls[#calls]))
    -- A link opens from any of its lines: the trailer's words, the podroll's show.
    go_to("^  trailer ")
    press("<CR>")
    expect(vim.deep_equal(calls[#calls], { "open", "https://example.com/7000001/trailer.mp3" }), vim.inspect(calls[#calls]))
    go_to("^  recommends The Analytical Hour")
    press("<CR>")
    expect(vim.deep_equal(calls[#calls], { "open", "https://example.com/analytical.xml" }), vim.inspect(calls[#calls]))
    local count = #calls
    go_to("^  people ")
    press("<CR>")
    expect(#calls == count, "nothing for a field: " .. vim.inspect(calls[#calls]))
  end)
  -- Each element alone: only the people, and only their line is added.
  with_item(podcast_episode({ people = { { name = "Ada Lovelace", role = "guest", group = "cast" } } }), {}, function()
    mediahost.show("podcasts:episode:feed-x:pi-7000001-2")
    expect(text():find("duration%s+30:30\n  people     Ada Lovelace %(guest%)\n  favorite%s+no\n"), "people alone: " .. text())
    expect(text():find("Links:\n  page [^\n]*\n  feed [^\n]*\n  media [^\n]*$"), "the links as before: " .. text())
  end)
  vim.o.columns = 140
end)

test("a sandbox podcast's people in its details", function()
  -- The Podcast Index replica's feeds name their hosts and guests: a search by person finds
  -- episodes whose items carry them.
  vim.cmd("Mediahost search podcastindex person:ada lovelace")
  local item = mediahost.buffers[vim.api.nvim_get_current_buf()].items[1]
  expect(item and item.title == "Engines of Thought 2: Machines", "found: " .. text())
  local lines = table.concat(mediahost.details(item, 80), "\n")
  expect(lines:find("\n  people     Charles Babbage %(host%)\n             Ada Lovelace %(guest%)\n"), "its people: " .. lines)
end)

io.stdout:write(failures == 0 and "all passed\n" or (failures .. " failed\n"))
if failures > 0 then
  vim.cmd("cquit " .. failures)
else
  vim.cmd("qa!")
end
