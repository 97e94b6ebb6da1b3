-- Spawn-and-wait of /bin/true from Lua: sup.spawn + p:wait() against luv's
-- uv.spawn (libuv, run to its exit callback) and io.popen (glibc's popen,
-- which goes through /bin/sh -c), first from a small host, then from a host
-- holding ~2 GiB of Lua strings. The three are interleaved sample by sample
-- (the order rotating each round) so that drift in the machine hits all
-- alike; the GC is stopped while a sample is timed and run between rounds.
-- Then streaming: one child (WRITER BYTES: the repo's bench_writer, 64 KiB
-- writes, or else `head -c BYTES /dev/zero`) writes STREAM_MIB MiB to stdout
-- and the host reads every byte as it comes, through sup's p:read (blocking,
-- and from luv's loop on p:output_fd), luv's read_start on its stdio pipe
-- (a socketpair) and on a pipe(2), and io.popen's f:read.
-- Usage: lua5.4 bench.lua [--quick] [--heap-mib N] [--stream-mib N] [--runs N]
--                         [--writer PATH|head] [--only spawn|stream]
-- Prints Markdown tables: p50 / p99 per method and their ratio to sup; then
-- MB/s per streaming method (median of the runs), its ratio to sup's
-- blocking loop, and the two ratios to a native reader (median of the
-- per-round ratios, each round running every method once).
local sup = require "sup"
local uv = require "luv"

local quick, heap_mib, stream_mib, only, runs, writer = false, 2048, nil, nil, nil, nil
local i = 1
while arg[i] do
  if arg[i] == "--quick" then quick = true
  elseif arg[i] == "--heap-mib" then i = i + 1; heap_mib = assert(tonumber(arg[i]), "--heap-mib N")
  elseif arg[i] == "--stream-mib" then i = i + 1; stream_mib = assert(tonumber(arg[i]), "--stream-mib N")
  elseif arg[i] == "--runs" then i = i + 1; runs = assert(tonumber(arg[i]), "--runs N")
  elseif arg[i] == "--writer" then i = i + 1; writer = assert(arg[i], "--writer PATH")
  elseif arg[i] == "--only" then
    i = i + 1
    only = arg[i]
    assert(only == "spawn" or only == "stream", "--only spawn|stream")
  else error("unknown argument " .. arg[i]) end
  i = i + 1
end

local TRUE = "/bin/true"

local function via_sup()
  local p = sup.spawn{ TRUE }
  local res = p:wait()
  p:close()
  assert(res.exit_code == 0)
end

local function via_luv()
  local code
  local handle
  handle = uv.spawn(TRUE, { args = {} }, function(c)
    code = c
    handle:close()
  end)
  uv.run()
  assert(code == 0)
end

local function via_popen()
  local f = io.popen(TRUE)
  assert(f:close())
end

local methods = {
  { name = "sup.spawn + p:wait()", fn = via_sup },
  { name = "luv uv.spawn + uv.run()", fn = via_luv },
  { name = "io.popen + f:close()", fn = via_popen },
}

local function percentile(sorted, q)
  local idx = math.max(1, math.ceil(q * #sorted))
  return sorted[idx]
end

-- Returns { [method index] = { p50 = us, p99 = us } }.
local function measure(rounds, warmup)
  local samples = {}
  for m = 1, #methods do
    samples[m] = {}
    for _ = 1, warmup do methods[m].fn() end
  end
  collectgarbage()
  for r = 1, rounds do
    collectgarbage("stop")
    for k = 0, #methods - 1 do
      local m = (r + k) % #methods + 1
      local t0 = uv.hrtime()
      methods[m].fn()
      samples[m][#samples[m] + 1] = (uv.hrtime() - t0) / 1e3
    end
    collectgarbage("restart")
    if r % 50 == 0 then collectgarbage("step", 0) end
  end
  local out = {}
  for m = 1, #methods do
    table.sort(samples[m])
    out[m] = { p50 = percentile(samples[m], 0.5), p99 = percentile(samples[m], 0.99), n = #samples[m] }
  end
  return out
end

local function rss_mib()
  local f = assert(io.open("/proc/self/status"))
  local s = f:read("a")
  f:close()
  return tonumber(s:match("VmRSS:%s*(%d+)")) / 1024
end

local function report(title, stats)
  print(string.format("\n%s (%d samples per method, interleaved; host RSS %.0f MiB)\n", title, stats[1].n, rss_mib()))
  print("| method | p50 (µs) | p99 (µs) | p50 / sup | p99 / sup |")
  print("|---|---:|---:|---:|---:|")
  for m = 1, #methods do
    local s = stats[m]
    print(string.format("| %s | %.0f | %.0f | %.2fx | %.2fx |", methods[m].name, s.p50, s.p99,
      s.p50 / stats[1].p50, s.p99 / stats[1].p99))
  end
end

-- ---- streaming --------------------------------------------------------

stream_mib = stream_mib or (quick and 16 or 1024)
local STREAM_BYTES = stream_mib * 1024 * 1024
local CHUNK = 64 * 1024
-- --writer head: coreutils' head, which writes what it reads from /dev/zero
-- in smaller pieces, for a child that costs more per byte.
local WRITER = (writer and writer ~= "head") and { writer, tostring(STREAM_BYTES) }
  or { "head", "-c", tostring(STREAM_BYTES), "/dev/zero" }
-- backpressure_bytes: the child waits for the reader, so every byte is
-- read live (without it, a slow reader loses the middle past 16 MiB).
local function sup_spec()
  local spec = { backpressure_bytes = 4 * CHUNK }
  for k, v in ipairs(WRITER) do spec[k] = v end
  return spec
end

local function stream_sup_blocking()
  local p = sup.spawn(sup_spec())
  local total = 0
  while true do
    local chunk = p:read("stdout", CHUNK, math.huge)
    if chunk == nil then break end
    total = total + #chunk
  end
  p:close()
  return total
end

local function stream_sup_luv()
  local p = sup.spawn(sup_spec())
  local total = 0
  local poll = uv.new_poll(p:output_fd("stdout"))
  poll:start("r", function()
    while true do
      local chunk = p:read("stdout", CHUNK, 0)
      if chunk == nil then
        poll:stop()
        poll:close()
        return
      end
      if chunk == "" then return end
      total = total + #chunk
    end
  end)
  uv.run()
  p:close()
  return total
end

-- Reads the luv stream `out` to its end in luv's loop: the bytes counted.
local function read_to_end(out)
  local total = 0
  out:read_start(function(err, data)
    assert(not err, err)
    if data then
      total = total + #data
    else
      out:close()
    end
  end)
  uv.run()
  return total
end

local function stream_luv()
  local out = uv.new_pipe(false)
  local handle
  handle = uv.spawn(WRITER[1], { args = { table.unpack(WRITER, 2) }, stdio = { nil, out, nil } },
    function() handle:close() end)
  return read_to_end(out)
end

-- luv's stdio pipe is a socketpair (libuv's UV_CREATE_PIPE), whose buffer
-- is larger than a pipe's 64 KiB; this reads a pipe(2), as sup does.
local function stream_luv_pipe2()
  local fds = uv.pipe({ nonblock = true }, { nonblock = false })
  local out = uv.new_pipe(false)
  out:open(fds.read)
  local handle
  handle = uv.spawn(WRITER[1], { args = { table.unpack(WRITER, 2) }, stdio = { nil, fds.write, nil } },
    function() handle:close() end)
  uv.fs_close(fds.write)
  return read_to_end(out)
end

local function stream_popen()
  local f = io.popen(table.concat(WRITER, " "))
  local total = 0
  while true do
    local chunk = f:read(CHUNK)
    if chunk == nil then break end
    total = total + #chunk
  end
  f:close()
  return total
end

local streams = {
  { name = "sup p:read(\"stdout\", 64 KiB, math.huge) loop", fn = stream_sup_blocking },
  { name = "sup in luv: new_poll(p:output_fd()) + p:read(..., 0)", fn = stream_sup_luv },
  { name = "luv uv.spawn + pipe:read_start() (a socketpair)", fn = stream_luv },
  { name = "io.popen + f:read(64 KiB)", fn = stream_popen },
  { name = "luv uv.spawn on uv.pipe() + read_start() (a pipe)", fn = stream_luv_pipe2 },
}

local function measure_streams(runs)
  local rates = {}
  for m = 1, #streams do rates[m] = {} end
  for r = 1, runs do
    for k = 0, #streams - 1 do
      local m = (r + k) % #streams + 1
      collectgarbage()
      local t0 = uv.hrtime()
      local got = streams[m].fn()
      local secs = (uv.hrtime() - t0) / 1e9
      assert(got == STREAM_BYTES, string.format("%s read %d of %d bytes", streams[m].name, got, STREAM_BYTES))
      rates[m][r] = STREAM_BYTES / 1e6 / secs
    end
  end
  -- Each round ran every method once, so a round's ratio compares runs
  -- made moments apart; the median of those resists a busy machine.
  local function ratio(a, b)
    local rs = {}
    for r = 1, runs do rs[r] = rates[a][r] / rates[b][r] end
    table.sort(rs)
    return percentile(rs, 0.5), rs[1], rs[#rs]
  end
  local blocking_vs_popen = { ratio(1, 4) }
  local luv_vs_luv = { ratio(2, 3) }
  local luv_vs_pipe2 = { ratio(2, 5) }
  print(string.format("\nStreaming %d MiB of stdout from `%s`, every byte read as it comes (%d runs per method, interleaved; median)\n",
    stream_mib, table.concat(WRITER, " "), runs))
  print("| method | MB/s | / sup p:read |")
  print("|---|---:|---:|")
  local med = {}
  for m = 1, #streams do
    local sorted = { table.unpack(rates[m]) }
    table.sort(sorted)
    med[m] = percentile(sorted, 0.5)
    print(string.format("| %s | %.0f | %.2fx |", streams[m].name, med[m], med[m] / med[1]))
  end
  print("\n| sup reader / native reader, same child | median of per-round ratios | min | max |")
  print("|---|---:|---:|---:|")
  print(string.format("| blocking `p:read(\"stdout\", 64 KiB, math.huge)` / `io.popen` `f:read(64 KiB)` | %.2fx | %.2fx | %.2fx |",
    blocking_vs_popen[1], blocking_vs_popen[2], blocking_vs_popen[3]))
  print(string.format("| in luv: `new_poll(p:output_fd())` + `p:read` / luv `read_start` | %.2fx | %.2fx | %.2fx |",
    luv_vs_luv[1], luv_vs_luv[2], luv_vs_luv[3]))
  print(string.format("| in luv: `new_poll(p:output_fd())` + `p:read` / luv `read_start` on `uv.pipe()` | %.2fx | %.2fx | %.2fx |",
    luv_vs_pipe2[1], luv_vs_pipe2[2], luv_vs_pipe2[3]))
end

if only ~= "stream" then
  local small_rounds = quick and 50 or 2000
  local big_rounds = quick and 10 or 300

  report("Small host", measure(small_rounds, quick and 3 or 50))

  -- ~2 GiB of distinct, touched Lua strings (long strings are not interned).
  local hold = {}
  local chunk = 1024 * 1024
  local base = string.rep("x", chunk - 16)
  for k = 1, heap_mib do hold[k] = string.format("%016d", k) .. base end
  collectgarbage()
  report(string.format("Host holding %d MiB of Lua strings", heap_mib), measure(big_rounds, quick and 2 or 10))
  assert(#hold == heap_mib)
  hold = nil
  collectgarbage()
end

if only ~= "spawn" then measure_streams(runs or (quick and 2 or 7)) end
