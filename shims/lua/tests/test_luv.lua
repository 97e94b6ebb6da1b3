-- sup inside a luv (libuv) event loop: processes waited on and read through
-- the library's descriptors, on one uv.run(), with no thread per process.
local t = require "tap"
local sup = require "sup"

local has_luv, uv = pcall(require, "luv")
if not has_luv then
  print("1..0 # SKIP luv is not installed (Debian: lua-luv)")
  os.exit(0)
end

local eq, ok, test = t.eq, t.ok, t.test

test("50 processes waited on one uv.run() through p:fd()", function()
  local n = 50
  local procs, results, order = {}, {}, {}
  local start = uv.hrtime()
  for i = 1, n do
    -- Staggered ends, in an order unlike the spawn order.
    local p = assert(sup.spawn{ "sh", "-c",
      string.format("sleep %.2f; echo %d; exit %d", ((i * 37) % n) / 100, i, i % 7) })
    procs[i] = p
    local poll = uv.new_poll(p:fd())
    poll:start("r", function(err)
      assert(not err, err)
      -- Readable means final: the non-blocking poll agrees, wait returns at once.
      assert(p:poll(), "fd readable before the result was final")
      results[i] = p:wait(0)
      order[#order + 1] = i
      poll:stop()
      poll:close()
    end)
  end
  uv.run()
  local took = (uv.hrtime() - start) / 1e6
  eq(#order, n, "every callback ran")
  for i = 1, n do
    local res = results[i]
    ok(res, "result " .. i)
    eq(res.outcome, "exited", "outcome " .. i)
    eq(res.exit_code, i % 7, "exit code " .. i)
    eq(res.stdout.captured, i .. "\n", "output " .. i)
    procs[i]:close()
  end
  -- Waiting one after the other would take the sum of the delays, 12.25 s;
  -- concurrently it is the longest delay (0.49 s) plus the spawns (slow
  -- under valgrind, which forks for each).
  ok(took < 10000, string.format("concurrent: %.0f ms", took))
end)

test("live output through uv.new_poll(p:output_fd())", function()
  local p = t.closing(sup.spawn{ "sh", "-c", "for i in 1 2 3 4 5; do echo line$i; sleep 0.1; done; echo bye >&2" })
  local out, err, reads, while_running = {}, {}, 0, 0
  local open = 2
  local function reader(stream, sink)
    local poll = uv.new_poll(p:output_fd(stream))
    poll:start("r", function()
      local final = p:poll()
      local chunk = p:read(stream, nil, 0)
      if chunk == nil then
        poll:stop()
        poll:close()
        open = open - 1
        return
      end
      reads = reads + 1
      if not final and chunk ~= "" then while_running = while_running + 1 end
      sink[#sink + 1] = chunk
    end)
  end
  reader("stdout", out)
  reader("stderr", err)
  uv.run()
  eq(open, 0, "both streams ended")
  eq(table.concat(out), "line1\nline2\nline3\nline4\nline5\n", "stdout")
  eq(table.concat(err), "bye\n", "stderr")
  ok(while_running >= 3, "read while running: " .. while_running .. " chunks")
  ok(reads < 100, "level-triggered without spinning: " .. reads .. " wakeups")
end)

test("a timer aborts a process the loop is waiting on", function()
  local p = t.closing(sup.spawn{ "sleep", "30" })
  local res
  local poll = uv.new_poll(p:fd())
  poll:start("r", function()
    res = p:wait(0)
    poll:stop()
    poll:close()
  end)
  local timer = uv.new_timer()
  timer:start(100, 0, function()
    p:abort()
    timer:close()
  end)
  local start = uv.hrtime()
  uv.run()
  eq(res.outcome, "aborted", "outcome")
  ok((uv.hrtime() - start) / 1e6 < 2000, "prompt")
end)

test("luv's own children coexist with sup's", function()
  -- luv installs a SIGCHLD handler and reaps only its own pids.
  local luv_code
  local handle
  handle = uv.spawn("sh", { args = { "-c", "exit 5" } }, function(code)
    luv_code = code
    handle:close()
  end)
  local p = t.closing(sup.spawn{ "sh", "-c", "sleep 0.2; exit 6" })
  local res
  local poll = uv.new_poll(p:fd())
  poll:start("r", function()
    res = p:wait(0)
    poll:stop()
    poll:close()
  end)
  uv.run()
  eq(luv_code, 5, "luv's child")
  eq(res.exit_code, 6, "sup's child")
  eq(res.status_lost, false, "status kept")
end)

test("two watchers of one process: p:fd() and p:fd(true)", function()
  -- epoll (so luv) refuses a second watch of the same descriptor (EEXIST):
  -- each watcher takes its own duplicate.
  local p = t.closing(sup.spawn{ "sh", "-c", "sleep 0.2; exit 3" })
  local seen = {}
  local function watch(fd, who)
    local poll = uv.new_poll(fd)
    poll:start("r", function()
      seen[#seen + 1] = who .. ":" .. p:wait(0).exit_code
      poll:stop()
      poll:close()
    end)
  end
  watch(p:fd(), "a")
  watch(p:fd(true), "b")
  uv.run()
  table.sort(seen)
  eq(table.concat(seen, " "), "a:3 b:3", "both watchers saw the result")
end)

test("a signal the host handles without raising does not end a wait", function()
  -- luv's signal handler interrupts sup's slices (EINTR); no Lua hook is
  -- set, so the wait goes on and the child is left alone.
  local sig = uv.new_signal()
  local got = 0
  sig:start("sigusr1", function() got = got + 1 end)
  local res = sup.run{ "sh", "-c", "kill -USR1 $PPID; sleep 0.3; kill -USR1 $PPID; sleep 0.3; exit 7" }
  eq(res.outcome, "exited", "outcome")
  eq(res.exit_code, 7, "the child ran to its end")
  uv.run("nowait")
  sig:stop()
  sig:close()
  uv.run("nowait")
  ok(got >= 1, "luv saw the signal: " .. got)
end)

t.run()
