-- mediahost.nvim: YouTube, TMDB movies, podcasts, Mastodon and X (and any plugin provider)
-- through `mediahost rpc` (JSON-RPC 2.0, one JSON message a line on stdin/stdout).
--
--   :Mediahost search [provider|all] <query>   :Mediahost browse <provider> <category>
--   :Mediahost favorites [provider]            :Mediahost history      :Mediahost downloads
--   :Mediahost lists  (<CR> opens one; `l` in a result list adds the item to a list)
--   :Mediahost queue  what plays next (`e` in a result list queues, `E` queues first; in the
--                     queue K and J move the item up and down, x takes it out, N plays the first)
--
-- In a result list: <CR> opens (what is inside a show, channel or playlist; details otherwise,
-- in a split), f toggles the favorite, d downloads, p plays, a gives the artwork's file, n and P
-- page, g refreshes. In the details, <CR> opens a link and plays a podcast's soundbite alone (its
-- Podcasting 2.0 people, season, funding, podroll, live state and the rest are drawn there too).
-- Pickers go through vim.ui.select (telescope, fzf-lua and dressing.nvim replace it). Works
-- with Neovim 0.7 and later.

local rpc = require("mediahost.rpc")

local M = {}

M.config = {
  -- The program and the arguments before `rpc` (e.g. { "--sandbox" } or { "--data-dir", "~/m" }).
  cmd = "mediahost",
  args = {},
  -- Milliseconds to wait for an answer.
  timeout = 60000,
  -- The details window's picture: "auto" (kitty graphics where the terminal is kitty, WezTerm or
  -- Ghostty), "kitty", "sixel" (Neovim cannot ask the terminal: name it), or false.
  pictures = "auto",
}

function M.setup(options)
  M.config = vim.tbl_extend("force", M.config, options or {})
end

-- A message fits the echo area (`v:echospace`) on one line, or Neovim stops at "Press ENTER"
-- and nothing redraws until the person answers. One that does not fit is never cut in the
-- middle of what it says (the part cut is the part a person needed): its first sentence ("what
-- happened (what to do)", as the host words its errors), after its labels ("mediahost: ",
-- "youtube: "), with a pointer to the whole text (`:Mediahost messages`) where that fits too;
-- else its first clauses that fit, whole, with the pointer.
M.more = " (:Mediahost messages)"

function M.fit(text)
  text = text:gsub("[\r\n]+", " ")
  local room = vim.v.echospace
  if room == nil or room <= 0 then
    room = vim.o.columns - 12
  end
  if vim.fn.strdisplaywidth(text) <= room then
    return text
  end
  local labels = text:match("^([%w%._-]+: )") or ""
  while true do
    local more = text:sub(#labels + 1):match("^([%w%._-]+: )")
    if not more then
      break
    end
    labels = labels .. more
  end
  local rest = text:sub(#labels + 1)
  local sentence = rest:match("^(.-)[;%.] ") or rest
  if sentence ~= "" and sentence ~= rest then
    local short = labels .. sentence
    if vim.fn.strdisplaywidth(short .. M.more) <= room then
      return short .. M.more
    elseif vim.fn.strdisplaywidth(short) <= room then
      return short
    end
  end
  local limit = room - vim.fn.strdisplaywidth(M.more)
  -- The longest run of whole clauses that fits (a clause ends before "; ", ": ", " (", ". ",
  -- ", " or " - "), else of whole words; never fewer than the first word.
  local best_clause, best_word = nil, nil
  local position = 1
  while true do
    local start, stop = text:find("[;:,%.]? ", position)
    if not start then
      break
    end
    local head = text:sub(1, start - 1)
    if vim.fn.strdisplaywidth(head) > limit then
      break
    end
    local mark = text:sub(start, start)
    local after = text:sub(stop + 1, stop + 1)
    if mark == ";" or mark == ":" or mark == "." or mark == "," or after == "(" or after == "-" or after == "—" then
      best_clause = head
    end
    best_word = head
    position = stop + 1
  end
  -- A clause much shorter than the words that fit says less than they do.
  if best_clause and best_word and vim.fn.strdisplaywidth(best_clause) * 2 < vim.fn.strdisplaywidth(best_word) then
    best_clause = nil
  end
  local head = best_clause or best_word or text:match("^%S+") or text
  return head .. M.more
end

-- Every message in full, newest last (`:Mediahost messages` shows them).
M.messages = {}

-- Shows `text` (fitted) and keeps `full` (or `text`) in the messages.
local function notify(text, level, full)
  text = tostring(text):gsub("[\r\n]+", " ")
  full = full and tostring(full):gsub("[\r\n]+", " ") or text
  if full ~= text and not full:find(text, 1, true) then
    full = text .. " — " .. full
  end
  table.insert(M.messages, os.date("%H:%M:%S") .. "  " .. full)
  if #M.messages > 200 then
    table.remove(M.messages, 1)
  end
  vim.notify(M.fit("mediahost: " .. text), level or vim.log.levels.INFO)
end

-- An error as a person reads it, and in full: the host's message, reworded where Neovim has
-- its own remedy (an unknown provider: the command that lists them).
function M.describe(err)
  if type(err) ~= "table" then
    return tostring(err)
  end
  local data = type(err.data) == "table" and err.data or {}
  local message = err.message or vim.inspect(err)
  if data.kind == "unknownProvider" and data.provider then
    return string.format("no provider '%s' (:Mediahost providers lists them)", data.provider), message
  end
  return message
end

-- Notifications and calls (the transport is rpc.lua) ----------------------------------------

-- Download id -> what the notifications said: state, bytes, total, rate, title, path, error.
M.downloads = {}
-- The last player.state.
M.player = nil
local on_downloads_changed -- set below

local function handle_notification(method, params)
  params = params or {}
  if method == "downloads.progress" then
    local entry = M.downloads[params.id] or {}
    entry.state, entry.bytes, entry.total, entry.rate = "running", params.bytes, params.total, params.rate
    M.downloads[params.id] = entry
    on_downloads_changed()
  elseif method == "downloads.state" then
    if params.state == "removed" then
      M.downloads[params.id] = nil
    else
      local entry = M.downloads[params.id] or {}
      entry.state, entry.path, entry.error = params.state, params.path, params.error
      M.downloads[params.id] = entry
      local title = entry.title and tostring(entry.title):gsub("%c", " ") or params.id
      if params.state == "completed" then
        notify("downloaded " .. title, nil, "downloaded " .. title .. " to " .. (params.path or "?"))
      elseif params.state == "failed" then
        notify(
          "download of " .. title .. " failed: " .. (params.error or "?"),
          vim.log.levels.WARN
        )
      end
    end
    on_downloads_changed()
  elseif method == "auth.prompt" then
    notify(string.format("%s (code %s at %s)", params.message or "", params.code or "", params.url or ""))
  elseif method == "player.state" then
    M.player = params
  elseif method == "library.changed" and params.what == "queue" then
    M.queue_changed()
  end
end

local client = rpc.client({
  argv = function()
    local argv = { M.config.cmd }
    vim.list_extend(argv, M.config.args)
    return argv
  end,
  on_notification = handle_notification,
})

-- The job id of the running `mediahost rpc` (tests kill it), or nil.
function M.job()
  return client.job()
end

function M.stop()
  client.stop()
end

-- Calls `method` with `params`; `callback(error, result)` runs when the answer comes.
function M.request(method, params, callback)
  client.request(method, params, callback)
end

-- Calls `method` and waits for its result, up to `timeout` ms (the configured timeout when not
-- given); errors carry the host's message.
function M.call(method, params, timeout)
  return client.call(method, params, timeout or M.config.timeout)
end

-- Runs `body`; an error becomes a message instead of a stack trace.
local function guarded(body)
  return function(...)
    local ok, err = pcall(body, ...)
    if not ok then
      local text, full = M.describe(err)
      notify(text, vim.log.levels.ERROR, full)
    end
    return ok and err or nil
  end
end

-- Rendering ----------------------------------------------------------------------------------

local function clean(text)
  return (tostring(text or ""):gsub("[%c]", " "))
end

local function fit(text, width)
  text = clean(text)
  if vim.fn.strdisplaywidth(text) > width then
    local cut = ""
    for _, char in ipairs(vim.fn.split(text, "\\zs")) do
      if vim.fn.strdisplaywidth(cut .. char) > width - 1 then
        break
      end
      cut = cut .. char
    end
    text = cut .. "…"
  end
  return text .. string.rep(" ", width - vim.fn.strdisplaywidth(text))
end

local function duration(seconds)
  if type(seconds) ~= "number" then
    return ""
  end
  local s = math.floor(seconds + 0.5)
  if s >= 3600 then
    return string.format("%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60)
  end
  return string.format("%d:%02d", s / 60, s % 60)
end

local function bytes(count)
  if type(count) ~= "number" then
    return "?"
  elseif count >= 1e9 then
    return string.format("%.1f GB", count / 1e9)
  elseif count >= 1e6 then
    return string.format("%.1f MB", count / 1e6)
  elseif count >= 1e3 then
    return string.format("%.1f KB", count / 1e3)
  end
  return string.format("%d B", count)
end

local function download_column(item)
  local live = M.downloads[item.id]
  local state = (live and live.state) or (item.download and item.download.state)
  if not state then
    return ""
  elseif state == "running" and live and type(live.total) == "number" and live.total > 0 then
    return string.format("%d%%", math.floor(100 * (live.bytes or 0) / live.total))
  end
  return state
end

-- One list row in `width` columns (80 when not given), a download's state included: the title
-- takes what the other columns leave, and "By" gives up columns first on a narrow window.
-- What every item of a listing shares (a show's episodes all name the show, and are all
-- episodes): said once, in a heading, so rows keep their room for what tells them apart.
function M.shared(items)
  if #items < 2 then
    return {}
  end
  local by, kind = items[1].creator or items[1].subtitle, items[1].kind
  for _, item in ipairs(items) do
    if (item.creator or item.subtitle) ~= by then
      by = nil
    end
    if item.kind ~= kind then
      kind = nil
    end
  end
  return { by = by, kind = kind }
end

-- "The Slow Engine 3 · episodes", or nil when the items share nothing.
function M.heading(shared)
  local parts = {}
  if shared.by then
    table.insert(parts, shared.by)
  end
  if shared.kind then
    table.insert(parts, shared.kind .. "s")
  end
  return #parts > 0 and table.concat(parts, " · ") or nil
end

function M.row(item, width, shared)
  shared = shared or {}
  local usable = (width or 80) - 1
  -- Kind 7, Date 10, Length 7, the star 1, Download 9 ("completed"), a space after each but the
  -- last; the kind and the creator only when the rows do not all share them.
  local kind_width = shared.kind and 0 or 7
  local fixed = kind_width + 10 + 7 + 1 + 9 + 6 - (shared.kind and 1 or 0)
  local by = shared.by and 0 or math.min(18, math.max(4, math.floor((usable - fixed) / 3)))
  local title = math.max(8, usable - fixed - by - (shared.by and 0 or 1))
  local columns = { fit(item.title, title) }
  if not shared.by then
    table.insert(columns, fit(item.creator or item.subtitle, by))
  end
  if not shared.kind then
    table.insert(columns, fit(item.kind, 7))
  end
  vim.list_extend(columns, {
    fit((item.published or ""):sub(1, 10), 10),
    fit(duration(item.duration), 7),
    item.favorite and "★" or " ",
    fit(download_column(item), 9),
  })
  return table.concat(columns, " "):gsub("%s+$", "")
end

-- The columns text can take in the window showing `buffer` (else the current one), its number
-- and sign columns left out.
local function text_width(buffer)
  local window = buffer and vim.fn.bufwinid(buffer) or -1
  if window == -1 then
    window = vim.api.nvim_get_current_win()
  end
  local info = vim.fn.getwininfo(window)[1]
  return vim.api.nvim_win_get_width(window) - ((info and info.textoff) or 0)
end

-- Buffers ------------------------------------------------------------------------------------

-- Buffer number -> { kind = "list"|"downloads"|"details"|"history", items, source, page, item }.
M.buffers = {}

local function scratch(name)
  local existing = vim.fn.bufnr(name)
  local buffer = existing ~= -1 and existing or vim.api.nvim_create_buf(true, true)
  if existing == -1 then
    vim.api.nvim_buf_set_name(buffer, name)
  end
  vim.api.nvim_buf_set_option(buffer, "buftype", "nofile")
  vim.api.nvim_buf_set_option(buffer, "bufhidden", "hide")
  vim.api.nvim_buf_set_option(buffer, "swapfile", false)
  vim.api.nvim_buf_set_option(buffer, "filetype", "mediahost")
  return buffer
end

local function set_lines(buffer, lines)
  vim.api.nvim_buf_set_option(buffer, "modifiable", true)
  vim.api.nvim_buf_set_lines(buffer, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(buffer, "modifiable", false)
end

local function map(buffer, key, action)
  vim.keymap.set("n", key, guarded(action), { buffer = buffer, silent = true, nowait = true })
end

local function render_list(buffer)
  local state = M.buffers[buffer]
  local lines = {}
  local width = text_width(buffer)
  local shared = M.shared(state.items)
  local heading = M.heading(shared)
  -- Rows start after the heading: `offset` maps a line to its item.
  state.offset = heading and 1 or 0
  if heading then
    table.insert(lines, (fit(heading, width - 1):gsub("%s+$", "")))
  end
  for _, item in ipairs(state.items) do
    table.insert(lines, (M.row(item, width, shared)))
  end
  if #lines == 0 then
    lines = { "(nothing here)" }
  end
  set_lines(buffer, lines)
end

-- The item on the cursor's line of the current list.
local function item_at_cursor()
  local state = M.buffers[vim.api.nvim_get_current_buf()]
  local item = state and state.items and state.items[vim.api.nvim_win_get_cursor(0)[1] - (state.offset or 0)]
  if not item then
    error("no item on this line", 0)
  end
  return item, state
end

local function fill(buffer, page)
  local state = M.buffers[buffer]
  state.page = page
  state.items = page.items or {}
  render_list(buffer)
  local errors = {}
  for _, failure in ipairs(page.errors or {}) do
    table.insert(errors, (failure.provider or "?") .. ": " .. (failure.message or ""))
  end
  if #errors > 0 then
    notify(table.concat(errors, "; "), vim.log.levels.WARN)
  end
end

local setup_list_keys

-- Shows `method`'s page in the list buffer `name`.
function M.show_page(name, method, params)
  local page = M.call(method, params)
  local buffer = scratch(name)
  M.buffers[buffer] = { kind = "list", source = { method = method, params = params or {} } }
  setup_list_keys(buffer)
  fill(buffer, page)
  vim.api.nvim_set_current_buf(buffer)
  vim.api.nvim_win_set_cursor(0, { 1 + (M.buffers[buffer].offset or 0), 0 })
  return buffer
end

function M.refresh()
  local buffer = vim.api.nvim_get_current_buf()
  local state = M.buffers[buffer]
  if state and state.source then
    fill(buffer, M.call(state.source.method, state.source.params))
  end
end

local function turn_page(key)
  local buffer = vim.api.nvim_get_current_buf()
  local state = M.buffers[buffer]
  local cursor = state and state.page and state.page[key]
  if not cursor then
    error(key == "next" and "no next page" or "no previous page", 0)
  end
  local params = vim.deepcopy(state.source.params)
  params.cursor = cursor
  state.source.params = params
  fill(buffer, M.call(state.source.method, params))
  vim.api.nvim_win_set_cursor(0, { 1 + (M.buffers[buffer].offset or 0), 0 })
end

function M.next_page()
  turn_page("next")
end

function M.previous_page()
  turn_page("prev")
end

local leaf_kinds = { episode = true, video = true }

local function is_item_id(text)
  return type(text) == "string" and text:match("^[a-z][a-z0-9_-]*:[a-z]+:.+$") ~= nil
end

-- How the terminal around Neovim draws pictures, or nil.
function M.picture_protocol()
  local chosen = M.config.pictures
  if chosen == "kitty" or chosen == "sixel" then
    return chosen
  end
  if chosen ~= "auto" or vim.env.TMUX then
    return nil
  end
  local program = (vim.env.TERM_PROGRAM or ""):lower()
  if vim.env.TERM == "xterm-kitty" or vim.env.KITTY_WINDOW_ID or program == "wezterm" or program == "ghostty" then
    return "kitty"
  end
  return nil
end

-- The rows left for the picture at the top of the details.
M.picture_rows = 10

-- Draws `text` (escape sequences) at the top-left of `window`'s row `row` on the terminal,
-- the cursor kept where it was.
local function draw_at(window, row, text)
  local position = vim.fn.win_screenpos(window)
  io.stdout:write("\27[s\27[" .. (position[1] + row - 1) .. ";" .. position[2] .. "H" .. text .. "\27[u")
  io.stdout:flush()
end

-- Fetches the item's picture and draws it in the room left in the details window, unless the
-- window shows another item by then. What fails is said in place of the picture.
local function draw_picture(buffer, item, protocol)
  M.request("media.artwork", { id = item.id }, function(err, result)
    local shown = M.buffers[buffer]
    if not shown or shown.item.id ~= item.id then
      return
    end
    local function note(text)
      if vim.api.nvim_buf_is_valid(buffer) then
        vim.bo[buffer].modifiable = true
        vim.api.nvim_buf_set_lines(buffer, 2, 3, false, { "  (" .. text .. ")" })
        vim.bo[buffer].modifiable = false
      end
    end
    if err then
      return note("no picture: " .. (err.message or "it cannot be had"))
    end
    local window = vim.fn.bufwinid(buffer)
    if window == -1 then
      return
    end
    local output = {}
    local argv = { M.config.cmd, "picture", result.path, "--protocol", protocol, "--columns",
      tostring(math.min(vim.api.nvim_win_get_width(window), 60)), "--rows", tostring(M.picture_rows) }
    vim.fn.jobstart(argv, {
      stdout_buffered = true,
      stderr_buffered = true,
      on_stdout = function(_, data)
        output = data
      end,
      on_exit = function(_, code, _)
        vim.schedule(function()
          if code ~= 0 then
            return note("no picture: mediahost could not draw it")
          end
          local current = M.buffers[buffer]
          if current and current.item.id == item.id and vim.fn.bufwinid(buffer) == window then
            draw_at(window, 3, table.concat(output, "\n"))
            current.picture = protocol
          end
        end)
      end,
    })
  end)
end

-- Where a details field's value starts: after two spaces and a label of 10.
local value_column = 13

-- `head`, then `words` a space apart, in lines of at most `width` columns; lines after the
-- first start under the value column. A word is never cut: one wider than a line has its own.
local function fill_words(head, words, width)
  local w = vim.fn.strdisplaywidth
  local lines, line, fresh = {}, head, true
  for _, word in ipairs(words) do
    if not fresh and w(line) + 1 + w(word) <= width then
      line = line .. " " .. word
    elseif fresh and (w(line) + w(word) <= width or w(line) <= value_column) then
      line = line .. word
    else
      table.insert(lines, (line:gsub("%s+$", "")))
      line = string.rep(" ", value_column) .. word
    end
    fresh = false
  end
  table.insert(lines, (line:gsub("%s+$", "")))
  return lines
end

local function words(text)
  local list = {}
  for word in clean(text):gmatch("%S+") do
    table.insert(list, word)
  end
  return list
end

-- Podcasting 2.0 -----------------------------------------------------------------------------
-- An episode's or show's `namespace` (rpc-spec's PodcastNamespace), drawn with the REPL's words
-- and in its order; what has a link goes to the Links, with its words, to be opened as the
-- other links are. Each element absent costs nothing.

local function present(value)
  return type(value) == "string" and value ~= ""
end

-- "Ada Lovelace (guest)"; a group other than cast after the role.
local function person(who)
  local text = clean(who.name)
  if present(who.role) then
    local group = present(who.group) and who.group ~= "cast" and (", " .. who.group) or ""
    text = text .. " (" .. who.role .. group .. ")"
  end
  return text
end

-- An alternate enclosure as the REPL words it: "audio/opus 96 kb/s en".
local function format_of(alternate)
  local parts = {}
  local function add(part)
    if present(part) then
      table.insert(parts, part)
    end
  end
  add(alternate.type)
  if type(alternate.bitrate) == "number" then
    add(string.format("%d kb/s", math.floor(alternate.bitrate / 1000)))
  end
  if type(alternate.height) == "number" then
    add(string.format("%dp", alternate.height))
  end
  add(alternate.language)
  add(alternate.title)
  return table.concat(parts, " ")
end

-- The item's Podcasting 2.0 fields as { label, value }, a list's values after its first
-- labelled "". Soundbites and what has a link are drawn apart.
function M.namespace_fields(item)
  local namespace = item.namespace or {}
  local fields = {}
  local function add(label, value)
    if present(value) then
      table.insert(fields, { label, value })
    end
  end
  local function each(label, values)
    for _, value in ipairs(values) do
      if present(value) then
        table.insert(fields, { label, value })
        label = ""
      end
    end
  end
  local function map_where(list, keep, text)
    local values = {}
    for _, element in ipairs(list or {}) do
      if keep(element) then
        table.insert(values, text(element))
      end
    end
    return values
  end
  local live = namespace.live
  if live then
    local parts = { live.status == "live" and "live now" or live.status }
    if live.start then
      table.insert(parts, "from " .. live.start)
    end
    if live["end"] then
      table.insert(parts, "to " .. live["end"])
    end
    add("live", table.concat(parts, " "))
  end
  if present(namespace.seasonName) then
    local number = (item.extra or {}).season
    add("season", number and (number .. ": " .. namespace.seasonName) or namespace.seasonName)
  end
  add("episode", namespace.episodeDisplay)
  each("people", vim.tbl_map(person, namespace.people or {}))
  each("funding", map_where(namespace.funding, function(funding)
    return not funding.url
  end, function(funding)
    return funding.text
  end))
  each("recommends", map_where(namespace.podroll, function(show)
    return not show.feedURL
  end, function(show)
    return show.title or ("podcast:guid " .. tostring(show.feedGuid))
  end))
  each("formats", vim.tbl_map(format_of, namespace.alternateEnclosures or {}))
  if namespace.license and not namespace.license.url then
    add("license", namespace.license.text)
  end
  add("location", namespace.location and namespace.location.name)
  local locked = namespace.locked
  if locked and locked.locked then
    add("locked", "yes: not to be imported elsewhere" .. (locked.owner and (" (owner " .. locked.owner .. ")") or ""))
  elseif locked then
    add("locked", "no")
  end
  local value = namespace.value
  if value then
    local recipients = value.recipients or {}
    local names = {}
    for _, recipient in ipairs(recipients) do
      if recipient.name and #names < 3 then
        table.insert(names, recipient.name)
      end
    end
    add("value", string.format("%s %s to %d recipient%s%s; said, not paid", value.type or "?", value.method or "?",
      #recipients, #recipients == 1 and "" or "s", #names > 0 and (" (" .. table.concat(names, ", ") .. ")") or ""))
  end
  return fields
end

-- The item's Podcasting 2.0 links as { label, target, words }: people, funding, the podroll's
-- shows, trailers and the license.
function M.namespace_links(item)
  local namespace = item.namespace or {}
  local links = {}
  local function add(label, target, text)
    if present(target) then
      table.insert(links, { label, target, text })
    end
  end
  for _, who in ipairs(namespace.people or {}) do
    add("person", who.link, who.name)
  end
  for _, funding in ipairs(namespace.funding or {}) do
    add("funding", funding.url, funding.text)
  end
  for _, show in ipairs(namespace.podroll or {}) do
    add("recommends", show.feedURL, show.title)
  end
  for _, trailer in ipairs(namespace.trailers or {}) do
    add("trailer", trailer.url, trailer.title)
  end
  if namespace.license then
    add("license", namespace.license.url, namespace.license.text)
  end
  return links
end

-- An item's details as lines, with by line number the target of each link line and the
-- number (1 first) of each soundbite line; the Podcasting 2.0 lines wrap to `width` between
-- words. `picture` leaves M.picture_rows empty lines for the picture under the title.
function M.details(item, width, picture)
  local lines = { clean(item.title), "" }
  if picture then
    for _ = 1, M.picture_rows do
      table.insert(lines, "")
    end
  end
  local link_lines, soundbite_lines = {}, {}
  local function field(name, value)
    if value ~= nil and value ~= "" then
      table.insert(lines, string.format("  %-10s %s", name, clean(value)))
    end
  end
  field("id", item.id)
  field("kind", item.kind)
  field("from", item.subtitle)
  field("by", item.creator)
  field("published", item.published)
  field("duration", item.duration and duration(item.duration))
  for _, pair in ipairs(M.namespace_fields(item)) do
    vim.list_extend(lines, fill_words(string.format("  %-10s ", pair[1]), words(pair[2]), width))
  end
  for number, bite in ipairs((item.namespace or {}).soundbites or {}) do
    local start = bite.start or 0
    local stop = start + (bite.duration or 0)
    local head = string.format("  soundbite %d  %s–%s  ", number, duration(start), duration(stop))
    for _, line in ipairs(fill_words(head, words(bite.title), width)) do
      table.insert(lines, line)
      soundbite_lines[#lines] = number
    end
  end
  if item.played then
    field("played", "yes")
  elseif item.position then
    field("played", "stopped at " .. duration(item.position))
  end
  field("favorite", item.favorite and "★ yes" or "no")
  if item.download then
    field("download", (item.download.state or "") .. " " .. (item.download.path or ""))
  end
  if item.summary then
    table.insert(lines, "")
    vim.list_extend(lines, vim.split(item.summary, "\n", { plain = true }))
  end
  local links = {}
  if item.url then
    table.insert(links, { "page", item.url })
  end
  if item.feed then
    table.insert(links, { "feed", item.feed })
  end
  if item.enclosure and item.enclosure.url then
    table.insert(links, { "media", item.enclosure.url })
  end
  for _, entity in ipairs(item.entities or {}) do
    if entity.value and (entity.type == "url" or entity.type == "media") then
      table.insert(links, { entity.type, entity.value })
    end
  end
  for key, value in pairs(item.extra or {}) do
    if is_item_id(value) or (type(value) == "string" and value:match("^https?://")) then
      table.insert(links, { key, value })
    end
  end
  vim.list_extend(links, M.namespace_links(item))
  if #links > 0 then
    table.insert(lines, "")
    table.insert(lines, "Links:")
    for _, link in ipairs(links) do
      local label, target, text = link[1], link[2], link[3]
      local entry
      if text and #words(text) > 0 then
        -- The words wrap; the target follows them, or starts a line of its own when it does not fit.
        entry = fill_words(string.format("  %-10s ", label), words(text), width)
        if vim.fn.strdisplaywidth(entry[#entry]) + 2 + vim.fn.strdisplaywidth(target) <= width then
          entry[#entry] = entry[#entry] .. "  " .. target
        else
          table.insert(entry, string.rep(" ", value_column) .. target)
        end
      else
        entry = { string.format("  %-10s %s", label, target) }
      end
      for _, line in ipairs(entry) do
        table.insert(lines, line)
        link_lines[#lines] = target
      end
    end
  end
  return lines, link_lines, soundbite_lines
end

-- Plays just soundbite `number` (1 first) of `item`: `player.open` with `soundbite`.
function M.play_soundbite(item, number)
  local result = M.call("player.open", { id = item.id, soundbite = number })
  local verb = result.queued and "queued" or "playing"
  notify(string.format("%s soundbite %d of %s", verb, number, clean(item.title or result.target)))
  return result
end

-- Shows an item's details in a split: fields, text, and links (<CR> on a link opens it, on a
-- soundbite plays just that clip).
function M.show(id)
  local item = M.call("media.get", { id = id })
  local buffer = scratch("mediahost://item")
  local protocol = item.artwork and M.picture_protocol() or nil
  local lines, link_lines, soundbite_lines = M.details(item, math.min(80, text_width(buffer)), protocol ~= nil)
  set_lines(buffer, lines)
  M.buffers[buffer] = { kind = "details", item = item, links = link_lines, soundbites = soundbite_lines }
  map(buffer, "<CR>", function()
    local shown = M.buffers[buffer]
    local line = vim.api.nvim_win_get_cursor(0)[1]
    if shown.soundbites[line] then
      return M.play_soundbite(shown.item, shown.soundbites[line])
    end
    local target = shown.links[line]
    if not target then
      return
    end
    if is_item_id(target) then
      M.show(target)
    elseif vim.ui.open then
      vim.ui.open(target)
    else
      vim.fn.jobstart({ "xdg-open", target }, { detach = true })
    end
  end)
  map(buffer, "f", function()
    local shown = M.buffers[buffer].item
    M.call(shown.favorite and "favorites.remove" or "favorites.add", { id = shown.id })
    M.show(shown.id)
  end)
  map(buffer, "d", function()
    M.download(M.buffers[buffer].item)
  end)
  map(buffer, "p", function()
    M.play(M.buffers[buffer].item)
  end)
  map(buffer, "c", function()
    M.chapters(M.buffers[buffer].item)
  end)
  map(buffer, "a", function()
    M.artwork(M.buffers[buffer].item)
  end)
  map(buffer, "q", function()
    vim.cmd("close")
  end)
  if vim.fn.bufwinnr(buffer) == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, buffer)
  else
    vim.cmd(vim.fn.bufwinnr(buffer) .. "wincmd w")
  end
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  if protocol then
    -- A kitty picture stays until deleted: the last one goes first.
    if protocol == "kitty" then
      io.stdout:write("\27_Ga=d\27\\")
    end
    draw_picture(buffer, item, protocol)
  end
  return buffer
end

function M.open(item)
  item = item or item_at_cursor()
  if leaf_kinds[item.kind] then
    return M.show(item.id)
  end
  local page = M.call("media.children", { id = item.id })
  if #(page.items or {}) == 0 then
    return M.show(item.id)
  end
  local buffer = scratch("mediahost://" .. clean(item.title))
  M.buffers[buffer] = { kind = "list", source = { method = "media.children", params = { id = item.id } } }
  setup_list_keys(buffer)
  fill(buffer, page)
  vim.api.nvim_set_current_buf(buffer)
  vim.api.nvim_win_set_cursor(0, { 1 + (M.buffers[buffer].offset or 0), 0 })
  return buffer
end

function M.toggle_favorite()
  local item = item_at_cursor()
  M.call(item.favorite and "favorites.remove" or "favorites.add", { id = item.id })
  item.favorite = not item.favorite
  render_list(vim.api.nvim_get_current_buf())
  notify(clean(item.title) .. (item.favorite and " added to" or " taken out of") .. " the favorites")
end

function M.download(item)
  item = item or item_at_cursor()
  local download = M.call("downloads.start", { id = item.id })
  M.downloads[download.id] = vim.tbl_extend("force", M.downloads[download.id] or {}, {
    state = download.state,
    bytes = download.bytes,
    total = download.total,
    title = download.title,
  })
  on_downloads_changed()
  notify("downloading " .. clean(download.title) .. " (:Mediahost downloads shows it)")
  return download
end

function M.play(item)
  item = item or item_at_cursor()
  local result = M.call("player.open", { id = item.id })
  notify((result.queued and "queued " or "playing ") .. clean(item.title or result.target))
  return result
end

function M.artwork(item)
  item = item or item_at_cursor()
  local result = M.call("media.artwork", { id = item.id })
  notify("artwork of " .. clean(item.title) .. ": " .. result.path)
  return result.path
end

setup_list_keys = function(buffer)
  map(buffer, "<CR>", function()
    M.open()
  end)
  map(buffer, "f", M.toggle_favorite)
  map(buffer, "d", function()
    M.download()
  end)
  map(buffer, "p", function()
    M.play()
  end)
  map(buffer, "c", function()
    M.chapters()
  end)
  map(buffer, "a", function()
    M.artwork()
  end)
  map(buffer, "n", M.next_page)
  map(buffer, "P", M.previous_page)
  map(buffer, "g", M.refresh)
  map(buffer, "e", function()
    M.enqueue(item_at_cursor(), false)
  end)
  map(buffer, "E", function()
    M.enqueue(item_at_cursor(), true)
  end)
  map(buffer, "l", function()
    local item = item_at_cursor()
    vim.ui.input({ prompt = "Add to list: " }, function(name)
      if name and name ~= "" then
        guarded(M.add_to_list)(item, name)
      end
    end)
  end)
end

-- Queues `item`: last, or first when `next`.
function M.enqueue(item, next)
  local result = M.call("queue.add", { ids = { item.id }, next = next or false })
  notify(string.format("queued %s %s (%d in the queue)", clean(item.title), next and "next" or "last", result.count))
end

local queue_name = "mediahost://queue"

-- What plays next, in order (one queue for every front end, kept by mediahost).
function M.show_queue()
  local buffer = M.show_page(queue_name, "queue.list", { limit = 500 })
  local function position()
    local _, state = item_at_cursor()
    return vim.api.nvim_win_get_cursor(0)[1] - (state.offset or 0), state
  end
  local function move(by)
    local from, state = position()
    local to = from + by
    if to < 1 then
      error("it is first already", 0)
    elseif to > #state.items then
      error("it is last already", 0)
    end
    M.call("queue.move", { from = from, to = to })
    M.refresh()
    vim.api.nvim_win_set_cursor(0, { to + (M.buffers[buffer].offset or 0), 0 })
  end
  map(buffer, "K", function()
    move(-1)
  end)
  map(buffer, "J", function()
    move(1)
  end)
  map(buffer, "x", function()
    local item = item_at_cursor()
    M.call("queue.remove", { ids = { item.id } })
    M.refresh()
    notify("took " .. clean(item.title) .. " out of the queue")
  end)
  map(buffer, "N", function()
    local status = M.call("player.next")
    notify("playing " .. clean((status.item or {}).title or "nothing"))
  end)
  return buffer
end

-- The queue changed (here, in another front end, or as mpv came to an item): its buffer is read
-- again, without waiting (a notification can arrive while a call waits for its answer).
-- Answers can come in another order than the questions: only the latest one's is shown.
local queue_reads = 0

function M.queue_changed()
  for buffer, state in pairs(M.buffers) do
    if state.source and state.source.method == "queue.list" and vim.api.nvim_buf_is_valid(buffer) then
      queue_reads = queue_reads + 1
      local read = queue_reads
      M.request("queue.list", state.source.params, function(err, page)
        if not err and page and read == queue_reads and vim.api.nvim_buf_is_valid(buffer) then
          vim.schedule(function()
            fill(buffer, page)
          end)
        end
      end)
    end
  end
end

-- Adds `item` to the list `name`, made when it does not exist.
function M.add_to_list(item, name)
  local exists = false
  for _, list in ipairs(M.call("lists.list")) do
    exists = exists or list.name:lower() == name:lower()
  end
  if not exists then
    M.call("lists.create", { name = name })
  end
  M.call("lists.add", { name = name, id = item.id })
  notify("added " .. clean(item.title) .. " to " .. name)
end

-- A buffer of one line per row (`render`), <CR> calling `open` with the row under the cursor
-- and g calling `refresh`; `empty` when there are no rows.
local function show_rows(name, rows, render, empty, open, refresh)
  local buffer = scratch(name)
  local lines = vim.tbl_map(render, rows)
  set_lines(buffer, #lines > 0 and lines or { empty })
  M.buffers[buffer] = { kind = "rows", rows = rows }
  map(buffer, "<CR>", function()
    local row = M.buffers[buffer].rows[vim.api.nvim_win_get_cursor(0)[1]]
    if row then
      open(row)
    end
  end)
  map(buffer, "g", refresh)
  vim.api.nvim_set_current_buf(buffer)
  return buffer
end

-- An item's chapters, a row each (number, start, title); <CR> moves to the one under the
-- cursor when the item plays, and plays it from there when it does not.
function M.chapters(item)
  item = item or item_at_cursor()
  local result = M.call("media.chapters", { id = item.id })
  local rows, number = {}, 0
  for _, chapter in ipairs(result.chapters or {}) do
    if chapter.toc then
      number = number + 1
      table.insert(rows, { number = number, chapter = chapter })
    end
  end
  return show_rows("mediahost://chapters/" .. clean(item.title), rows, function(row)
    return string.format("%2d  %7s  %s", row.number, duration(math.floor(row.chapter.start)), clean(row.chapter.title))
  end, "no chapters: the service, a downloaded file and the description have none", function(row)
    local status = M.call("player.status")
    if status.state ~= "stopped" and status.item and status.item.id == item.id then
      M.call("player.chapter", { to = tostring(row.number) })
    else
      M.call("player.open", { id = item.id, chapter = row.number, now = true })
    end
    notify(string.format("chapter %d: %s", row.number, clean(row.chapter.title)))
  end, function()
    M.chapters(item)
  end)
end

-- Your lists; <CR> shows one.
function M.show_lists()
  return show_rows("mediahost://lists", M.call("lists.list"), function(list)
    return fit(list.name, 40) .. " " .. tostring(list.count) .. " item" .. (list.count == 1 and "" or "s")
  end, "(no lists: `l` on an item in a result list adds it to one)", function(list)
    M.show_page("mediahost://list/" .. list.name, "lists.items", { name = list.name })
  end, M.show_lists)
end

-- Downloads, redrawn as notifications arrive.
local function render_downloads(buffer)
  local ids = vim.tbl_keys(M.downloads)
  table.sort(ids)
  local lines = {}
  for _, id in ipairs(ids) do
    local entry = M.downloads[id]
    local percent = ""
    if type(entry.total) == "number" and entry.total > 0 and type(entry.bytes) == "number" then
      percent = string.format("%d%%", math.floor(100 * entry.bytes / entry.total))
    end
    local speed = ""
    if entry.state == "running" and type(entry.rate) == "number" and entry.rate > 0 then
      speed = bytes(math.floor(entry.rate)) .. "/s"
    end
    -- State 10, Done 5, Size 9, Speed 10 and their spaces: the title takes the rest.
    local title = math.max(10, text_width(buffer) - 1 - 38)
    table.insert(
      lines,
      (table.concat({ fit(entry.title or id, title), fit(entry.state, 10), fit(percent, 5), fit(bytes(entry.total), 9), speed }, " "):gsub("%s+$", ""))
    )
  end
  if #lines == 0 then
    lines = { "(no downloads)" }
  end
  M.buffers[buffer].ids = ids
  set_lines(buffer, lines)
end

on_downloads_changed = function()
  for buffer, state in pairs(M.buffers) do
    if state.kind == "downloads" and vim.api.nvim_buf_is_valid(buffer) then
      render_downloads(buffer)
    end
  end
end

-- Lays out every list and the downloads again for their windows' widths now.
function M.refit()
  for buffer, state in pairs(M.buffers) do
    if vim.api.nvim_buf_is_valid(buffer) then
      if state.kind == "downloads" then
        render_downloads(buffer)
      elseif state.kind == "list" and state.items then
        render_list(buffer)
      end
    end
  end
end

vim.api.nvim_create_autocmd("VimResized", {
  group = vim.api.nvim_create_augroup("mediahost_refit", { clear = true }),
  callback = function()
    M.refit()
  end,
})

function M.show_downloads()
  for _, download in ipairs(M.call("downloads.list")) do
    local known = M.downloads[download.id] or {}
    M.downloads[download.id] = {
      title = download.title,
      state = download.state,
      bytes = download.bytes,
      total = download.total,
      path = download.path,
      rate = known.state == download.state and known.rate or nil,
    }
  end
  local buffer = scratch("mediahost://downloads")
  M.buffers[buffer] = { kind = "downloads" }
  render_downloads(buffer)
  map(buffer, "g", M.show_downloads)
  map(buffer, "p", function()
    local id = M.buffers[buffer].ids[vim.api.nvim_win_get_cursor(0)[1]]
    if id then
      M.play({ id = id, title = M.downloads[id].title })
    end
  end)
  vim.api.nvim_set_current_buf(buffer)
  return buffer
end

function M.show_history()
  return show_rows("mediahost://history", M.call("history.list"), function(record)
    return string.format("%-20s %-12s %s", record.at or "", record.provider or "all", clean(record.query))
  end, "(no searches yet)", function(record)
    M.search(record.provider, record.query)
  end, M.show_history)
end

-- Commands -----------------------------------------------------------------------------------

local providers_cache = nil

function M.providers(timeout)
  if not providers_cache or not M.job() then
    local ids = {}
    for _, provider in ipairs(M.call("providers.list", nil, timeout)) do
      table.insert(ids, provider.id)
    end
    providers_cache = ids
  end
  return providers_cache
end

-- Completion waits at most this long (ms) for the host: Tab must never hang the editor.
local completion_timeout = 2000
-- Category names by provider, as completion last heard them.
local categories_cache = {}

function M.search(provider, query)
  if provider == "all" then
    provider = nil
  end
  return M.show_page("mediahost://search/" .. query, "media.search", { provider = provider, query = query })
end

function M.browse(provider, category)
  local categories = M.call("providers.categories", { provider = provider })
  for _, candidate in ipairs(categories) do
    if candidate.name == category then
      category = candidate.id
    end
  end
  return M.show_page("mediahost://" .. provider .. "/" .. category, "media.browse", { provider = provider, category = category })
end

function M.favorites(provider)
  if provider == "all" then
    provider = nil
  end
  return M.show_page("mediahost://favorites", "favorites.list", { provider = provider })
end

local subcommands =
  { "search", "browse", "favorites", "history", "downloads", "lists", "queue", "providers", "messages" }

-- Every message so far, in full, in a buffer of its own.
function M.show_messages()
  local buffer = scratch("mediahost://messages")
  vim.bo[buffer].modifiable = true
  vim.api.nvim_buf_set_lines(buffer, 0, -1, false, #M.messages > 0 and M.messages or { "(no messages yet)" })
  vim.bo[buffer].modifiable = false
  vim.api.nvim_set_current_buf(buffer)
  return buffer
end

-- The providers, whether each is configured, and what it needs when it is not.
function M.show_providers()
  local lines = {}
  for _, provider in ipairs(M.call("providers.list")) do
    local state = provider.configured and "ready" or "not configured"
    table.insert(lines, string.format("%-10s %-15s %s", provider.id, state, clean(provider.name)))
    if not provider.configured and provider.notes then
      table.insert(lines, "           " .. clean(provider.notes))
    end
  end
  local buffer = scratch("mediahost://providers")
  vim.bo[buffer].modifiable = true
  vim.api.nvim_buf_set_lines(buffer, 0, -1, false, lines)
  vim.bo[buffer].modifiable = false
  vim.api.nvim_set_current_buf(buffer)
  return buffer
end

local function pick_provider(prompt, allow_all, then_do)
  local choices = vim.deepcopy(M.providers())
  if allow_all then
    table.insert(choices, 1, "all")
  end
  vim.ui.select(choices, { prompt = prompt }, function(choice)
    if choice then
      guarded(then_do)(choice)
    end
  end)
end

-- :Mediahost <subcommand> [arguments]
function M.command(arguments)
  local words = arguments.fargs
  local sub = words[1]
  if sub == "search" then
    if #words >= 3 then
      return M.search(words[2], table.concat(words, " ", 3))
    end
    pick_provider("Search which provider", true, function(provider)
      vim.ui.input({ prompt = "Search " .. provider .. " for: " }, function(query)
        if query and query ~= "" then
          guarded(M.search)(provider, query)
        end
      end)
    end)
  elseif sub == "browse" then
    local function choose_category(provider)
      local categories = M.call("providers.categories", { provider = provider })
      vim.ui.select(categories, {
        prompt = "Category",
        format_item = function(category)
          return category.name
        end,
      }, function(category)
        if category then
          guarded(M.browse)(provider, category.id)
        end
      end)
    end
    if #words >= 3 then
      return M.browse(words[2], table.concat(words, " ", 3))
    elseif #words == 2 then
      return choose_category(words[2])
    end
    pick_provider("Browse which provider", false, choose_category)
  elseif sub == "favorites" then
    return M.favorites(words[2])
  elseif sub == "history" then
    return M.show_history()
  elseif sub == "downloads" then
    return M.show_downloads()
  elseif sub == "lists" then
    return M.show_lists()
  elseif sub == "queue" then
    return M.show_queue()
  elseif sub == "providers" then
    return M.show_providers()
  elseif sub == "messages" then
    return M.show_messages()
  elseif sub == nil then
    error("which one? (:Mediahost <Tab> lists the commands)", 0)
  else
    error(string.format("no command '%s' (:Mediahost <Tab> lists them)", sub), 0)
  end
end

-- Completion of subcommands, providers and a provider's categories.
function M.complete(lead, line)
  local words = vim.split(line:sub(1, #line - #lead), "%s+", { trimempty = true })
  local candidates = {}
  local ok = pcall(function()
    if #words <= 1 then
      candidates = subcommands
    elseif #words == 2 and (words[2] == "search" or words[2] == "favorites") then
      candidates = vim.list_extend({ "all" }, M.providers(completion_timeout))
    elseif #words == 2 and words[2] == "browse" then
      candidates = M.providers(completion_timeout)
    elseif #words == 3 and words[2] == "browse" then
      local provider = words[3]
      if not categories_cache[provider] then
        local names = {}
        for _, category in ipairs(M.call("providers.categories", { provider = provider }, completion_timeout)) do
          table.insert(names, category.name)
        end
        categories_cache[provider] = names
      end
      candidates = categories_cache[provider]
    end
  end)
  if not ok then
    return {}
  end
  return vim.tbl_filter(function(candidate)
    return candidate:sub(1, #lead) == lead
  end, candidates)
end

M.command = guarded(M.command)

return M
