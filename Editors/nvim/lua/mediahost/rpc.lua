-- The transport of mediahost.nvim: `mediahost rpc` as a job, JSON-RPC 2.0 with one JSON message
-- a line on its stdin/stdout. Knows nothing of buffers or media: init.lua is the interface.

local R = {}

local json_decode_options = { luanil = { object = true, array = true } }

-- A client that starts `<argv()> rpc` at its first request and again after the process exits.
--   options.argv()                       the program and the arguments before `rpc`
--   options.on_notification(method, params)
function R.client(options)
  local client = {}
  local connection = nil

  local function on_line(conn, line)
    if line == "" then
      return
    end
    local ok, message = pcall(vim.json.decode, line, json_decode_options)
    if not ok or type(message) ~= "table" then
      return
    end
    if message.method then
      options.on_notification(message.method, message.params or {})
    elseif message.id and conn.pending[message.id] then
      local callback = conn.pending[message.id]
      conn.pending[message.id] = nil
      callback(message.error, message.result)
    end
  end

  local function start()
    local argv = options.argv()
    if vim.fn.executable(argv[1]) ~= 1 then
      -- What to do first, in a clause that fits the echo area; how to install in the rest.
      local what = argv[1]:find("/", 1, true) and (argv[1] .. " cannot be run")
        or ("the " .. argv[1] .. " program is not on PATH")
      error(what .. " (set cmd in setup()); `make install` in mediahost's source puts it on PATH", 0)
    end
    -- One JSON text a line, said at the start: notifications reach us before our first request.
    vim.list_extend(argv, { "rpc", "--framing", "newline" })
    local conn = { next_id = 1, pending = {}, partial = "" }
    conn.job = vim.fn.jobstart(argv, {
      on_stdout = function(_, data)
        data[1] = conn.partial .. data[1]
        conn.partial = table.remove(data)
        for _, line in ipairs(data) do
          on_line(conn, line)
        end
      end,
      on_exit = function()
        conn.dead = true
        for id, callback in pairs(conn.pending) do
          conn.pending[id] = nil
          callback({ message = "the mediahost process exited; the next command starts it again" }, nil)
        end
        if connection == conn then
          connection = nil
        end
      end,
    })
    if conn.job <= 0 then
      error("cannot start " .. argv[1], 0)
    end
    connection = conn
    return conn
  end

  -- The job id of the running `mediahost rpc`, or nil.
  function client.job()
    return connection and not connection.dead and connection.job or nil
  end

  function client.stop()
    if connection and not connection.dead then
      vim.fn.jobstop(connection.job)
    end
    connection = nil
  end

  -- Sends a request; `callback(error, result)` runs when the answer comes.
  function client.request(method, params, callback)
    local conn = (connection and not connection.dead) and connection or start()
    local id = conn.next_id
    conn.next_id = id + 1
    conn.pending[id] = callback
    -- An empty Lua table would go out as [] (by-position params): send {} for no params.
    if params == nil or next(params) == nil then
      params = vim.empty_dict()
    end
    local request = { jsonrpc = "2.0", id = id, method = method, params = params }
    vim.fn.chansend(conn.job, vim.json.encode(request) .. "\n")
  end

  -- Sends a request and waits up to `timeout` ms for its result; errors carry the host's message.
  -- A request that times out is cancelled (`$/cancelRequest`) and its late answer dropped.
  function client.call(method, params, timeout)
    local done, failure, value = false, nil, nil
    client.request(method, params, function(err, result)
      done, failure, value = true, err, result
    end)
    local id = connection and connection.next_id - 1
    if not vim.wait(timeout, function()
      return done
    end, 10) then
      if connection and id and connection.pending[id] then
        connection.pending[id] = nil
        vim.fn.chansend(
          connection.job,
          vim.json.encode({ jsonrpc = "2.0", method = "$/cancelRequest", params = { id = id } }) .. "\n"
        )
      end
      error(method .. " timed out", 0)
    end
    if failure then
      -- The whole error (its data says which provider, what kind), for the interface to word.
      error(failure, 0)
    end
    return value
  end

  return client
end

return R
