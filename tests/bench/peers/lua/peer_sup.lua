-- sup through its Lua shim: lua5.4 peer_sup.lua {spawn|capture} COUNT,
-- printing one BENCH line (see ../README.md). spawn is sup.run of /bin/true,
-- both streams captured; capture streams SUP_BENCH_WRITER's stdout with
-- p:read, waiting on p:output_fd() through luv (uv.new_poll), with
-- backpressure_bytes set so that every byte is read. The runner sets
-- LUA_CPATH to the release tree's sup.so.
local sup = require "sup"
local uv = require "luv"

local WARMUP, READ_CHUNK = 5, 64 * 1024

local function fail(msg)
  io.stderr:write("peer_luasup: ", msg, "\n")
  os.exit(1)
end

local function spawn_true()
  local res, err = sup.run{ "/bin/true" }
  if not res then fail("/bin/true: " .. tostring(err)) end
  if res.outcome ~= "exited" or res.exit_code ~= 0 then fail("/bin/true: " .. res.outcome) end
end

local function capture(writer, count)
  local p = assert(sup.spawn{ writer, count, backpressure_bytes = 4 * READ_CHUNK })
  local total = 0
  local poll = uv.new_poll(p:output_fd("stdout"))
  local function drain()
    while true do
      local chunk = p:read("stdout", READ_CHUNK)
      if chunk == nil then
        poll:stop()
        poll:close()
        return
      end
      if #chunk == 0 then return end
      total = total + #chunk
    end
  end
  poll:start("r", function(err)
    assert(not err, err)
    drain()
  end)
  drain()
  uv.run()
  local res = p:wait()
  p:close()
  if res.outcome ~= "exited" or res.exit_code ~= 0 then fail("writer: " .. res.outcome) end
  return total
end

local mode, count = arg[1], math.tointeger(tonumber(arg[2] or ""))
if not mode or not count or count <= 0 then
  io.stderr:write("usage: peer_sup.lua {spawn|capture} COUNT\n")
  os.exit(2)
end
local v = sup.version()
local version = string.format("%d.%d.%d", v // 10000, v // 100 % 100, v % 100)
local clock = uv.hrtime
if mode == "spawn" then
  local samples = {}
  for i = 1, count + WARMUP do
    local t0 = clock()
    spawn_true()
    local us = (clock() - t0) / 1e3
    if i > WARMUP then samples[#samples + 1] = string.format("%.2f", us) end
  end
  print(string.format("BENCH impl=luasup version=%s mode=spawn count=%d samples_us=%s",
    version, count, table.concat(samples, ",")))
elseif mode == "capture" then
  local writer = os.getenv("SUP_BENCH_WRITER")
  if not writer or writer == "" then
    io.stderr:write("peer_luasup: SUP_BENCH_WRITER is not set\n")
    os.exit(2)
  end
  local t0 = clock()
  local got = capture(writer, arg[2])
  local secs = (clock() - t0) / 1e9
  if got ~= count then fail(string.format("read %d of %d bytes", got, count)) end
  print(string.format("BENCH impl=luasup version=%s mode=capture count=%d bytes=%d seconds=%.6f",
    version, count, got, secs))
else
  io.stderr:write("peer_luasup: unknown mode ", mode, "\n")
  os.exit(2)
end
