-- Tests of the Lua module "sup": run by meson test (TAP), plainly, under
-- valgrind, and in the ASan build with the sanitizer runtime preloaded.
local t = require "tap"
local sup = require "sup"

local eq, ok, raises, test = t.eq, t.ok, t.raises, t.test

-- Sleeps ms milliseconds without a helper process or a busy loop: a wait on
-- a child that outlives it.
local function sleep_ms(ms)
  local q <close> = sup.spawn{ "sleep", "30" }
  q:wait(ms)
end

test("version and names", function()
  ok(sup.version() >= 200, "sup.version() >= 200")
  eq(sup._VERSION, "sup 0.3.0", "_VERSION")
  eq(sup.strerror(-2), "no such file or directory", "strerror(-2)")
  local n, name = sup.signal("term")
  eq(n, 15, "signal number")
  eq(name, "SIGTERM", "signal name")
  eq(sup.signal("SIGint"), 2, "SIGint")
  eq(sup.signal("NOPE"), nil, "unknown signal")
  eq(select(2, sup.signal(9)), "SIGKILL", "name of 9")
end)

test("exited: code, exact output, counts, json", function()
  local res = sup.run{ "sh", "-c", "printf out; printf 'e\\377r' >&2; exit 3" }
  eq(res.outcome, "exited", "outcome")
  eq(res.exit_code, 3, "exit_code")
  eq(res.term_signal, nil, "term_signal")
  eq(res.status_lost, false, "status_lost")
  eq(res.forced_kill, false, "forced_kill")
  eq(res.stdout.captured, "out", "stdout")
  eq(res.stderr.captured, "e\255r", "stderr keeps invalid UTF-8 exactly")
  eq(res.stdout.bytes, 3, "stdout bytes")
  eq(res.stderr.bytes, 3, "stderr bytes")
  eq(res.stdout.truncated, false, "truncated")
  eq(res.stdout.omitted_bytes, 0, "omitted")
  eq(#res.signals_sent, 0, "no signals")
  ok(res.duration_ms > 0 and res.duration_ms < 10000, "duration_ms " .. res.duration_ms)
  ok(res.pid > 0, "pid")
  eq(type(res.rusage.user_ms), "number", "rusage.user_ms")
  eq(type(res.rusage.sys_ms), "number", "rusage.sys_ms")
  ok(math.type(res.rusage.max_rss_kb) == "integer" and res.rusage.max_rss_kb > 0, "max_rss_kb")
  eq(type(res.json), "string", "json")
  ok(res.json:find('"outcome": "exited"', 1, true), "json outcome")
  ok(res.json:find('"exit_code": 3', 1, true), "json exit code")
  ok(res.json:find("e\xef\xbf\xbdr", 1, true), "json captured is text (U+FFFD)")
end)

test("signaled: term_signal named as in the JSON", function()
  local res = sup.run{ "sh", "-c", "kill -SEGV $$" }
  eq(res.outcome, "signaled", "outcome")
  eq(res.exit_code, nil, "exit_code")
  eq(res.term_signal, "SIGSEGV", "term_signal")
  ok(res.json:find('"term_signal": "SIGSEGV"', 1, true), "json agrees")
  eq(res.forced_kill, false, "forced_kill")
end)

test("idle_timeout: a silent child ends after the threshold", function()
  local start = t.now_ms()
  local res = sup.run{ "sleep", "30", idle_timeout_ms = 300 }
  local took = t.now_ms() - start
  eq(res.outcome, "idle_timeout", "outcome")
  eq(res.term_signal, "SIGTERM", "term_signal")
  eq(#res.signals_sent, 1, "one signal")
  eq(res.signals_sent[1].signal, "SIGTERM", "signal sent")
  ok(res.signals_sent[1].at_ms >= 300, "not early: " .. res.signals_sent[1].at_ms)
  ok(took < 2300, "ended within 2 s of the threshold: " .. took)
end)

test("idle timer reset by stderr alone", function()
  local res = sup.run{ "sh", "-c", "for i in 1 2 3 4 5 6 7 8; do echo x >&2; sleep 0.2; done",
    idle_timeout_ms = 1000 }
  eq(res.outcome, "exited", "outcome")
  eq(res.exit_code, 0, "exit_code")
  eq(res.stdout.bytes, 0, "stdout silent")
  eq(res.stderr.bytes, 16, "stderr bytes")
  ok(res.duration_ms > 1000, "outlived the idle threshold: " .. res.duration_ms)
end)

test("max_runtime: ends a child that keeps talking", function()
  local res = sup.run{ "sh", "-c", "while :; do echo tick; sleep 0.05; done",
    max_runtime_ms = 400, idle_timeout_ms = 5000 }
  eq(res.outcome, "max_runtime", "outcome")
  ok(res.stdout.bytes > 0, "it talked")
  ok(res.duration_ms >= 400 and res.duration_ms < 3000, "duration " .. res.duration_ms)
end)

test("interrupted: interrupt_signal, then nothing once final", function()
  local p = sup.spawn{ "sleep", "30", interrupt_signal = "INT" }
  eq(p:poll(), false, "running")
  eq(p:interrupt(), true, "latched")
  local res = p:wait()
  eq(res.outcome, "interrupted", "outcome")
  eq(res.term_signal, "SIGINT", "term_signal")
  eq(res.signals_sent[1].signal, "SIGINT", "signal sent")
  eq(p:interrupt(), false, "no effect once final")
  eq(p:abort(), false, "no effect once final")
  eq(p:wait().outcome, "interrupted", "immutable")
  p:close()
end)

test("grace then SIGKILL for a child that ignores the signal", function()
  local res = sup.run{ "sh", "-c", "trap '' TERM; echo ready; sleep 30",
    idle_timeout_ms = 200, grace_ms = 300 }
  eq(res.outcome, "idle_timeout", "outcome")
  eq(res.forced_kill, true, "forced_kill")
  eq(res.term_signal, "SIGKILL", "term_signal")
  eq(#res.signals_sent, 2, "two signals")
  eq(res.signals_sent[1].signal, "SIGTERM", "first")
  eq(res.signals_sent[2].signal, "SIGKILL", "second")
  -- In whole microseconds: two doubles subtracted can fall a rounding error
  -- short of the whole milliseconds between them.
  local function us(ms) return math.floor(ms * 1000 + 0.5) end
  local gap = us(res.signals_sent[2].at_ms) - us(res.signals_sent[1].at_ms)
  ok(gap >= 300000 and gap < 2300000, "grace respected: " .. gap .. " us")
  eq(res.stdout.captured, "ready\n", "last words kept")
end)

test("on_timeout = kill: SIGKILL at once", function()
  local res = sup.run{ "sleep", "30", idle_timeout_ms = 200, on_timeout = "kill" }
  eq(res.outcome, "idle_timeout", "outcome")
  eq(res.forced_kill, true, "forced_kill")
  eq(res.signals_sent[1].signal, "SIGKILL", "signal")
end)

test("aborted", function()
  local p <close> = sup.spawn{ "sleep", "30" }
  local start = t.now_ms()
  eq(p:abort(), true, "latched")
  local res = p:wait()
  eq(res.outcome, "aborted", "outcome")
  eq(res.forced_kill, true, "forced_kill")
  ok(t.now_ms() - start < 1500, "prompt")
end)

test("stdin data: any bytes, exactly", function()
  local data = "a\0b\255\254\n\"\\" .. string.rep("z", 100000)
  local res = sup.run{ "cat", stdin = { data = data } }
  eq(res.exit_code, 0, "exit_code")
  eq(res.stdout.captured, data, "echoed exactly")
end)

test("argv, env and cwd bytes reach the child unchanged", function()
  local res = sup.run{ "printf", "%s|%s|%s", "\255\254", "tab\there", "q\"b\\" }
  eq(res.stdout.captured, "\255\254|tab\there|q\"b\\", "argv bytes")
  local env = sup.run{ "sh", "-c", 'printf "%s:%s:%s" "$SUP_A" "${HOME-unset}" "$SUP_N"',
    env = { SUP_A = "v\255", HOME = false, SUP_N = 42 } }
  eq(env.stdout.captured, "v\255:unset:42", "env set, removed, number")
  local cwd = sup.run{ "pwd", cwd = "/usr/lib" }
  eq(cwd.stdout.captured, "/usr/lib\n", "cwd")
  local null = sup.run{ "wc", "-c", stdin = "null" }
  eq(null.stdout.captured, "0\n", "stdin null reads nothing")
end)

test("max_output_bytes keeps head and tail, counts everything", function()
  local res = sup.run{ "sh", "-c", "head -c 100000 /dev/zero | tr '\\0' a; printf END",
    max_output_bytes = 1000 }
  eq(res.stdout.bytes, 100003, "bytes")
  eq(#res.stdout.captured, 1000, "kept")
  eq(res.stdout.truncated, true, "truncated")
  eq(res.stdout.omitted_bytes, 99003, "omitted")
  eq(res.stdout.captured:sub(-3), "END", "newest tail kept")
  ok(res.json:find("bytes omitted]", 1, true), "json marks the gap")
end)

test("exec errors return nil, message, code", function()
  -- Valgrind runs a CLONE_VM|CLONE_VFORK clone as a fork: an exec or chdir
  -- failure in the child then cannot reach the parent, and shows as exit 127.
  if os.getenv("SUP_LUA_VALGRIND") then t.skip("valgrind turns sup's vfork-style clone into fork") end
  local p, msg, code, part = sup.spawn{ "/nonexistent/prog" }
  eq(p, nil, "no handle")
  eq(code, -2, "ENOENT")
  eq(part, "exec", "part")
  ok(msg:find("nonexistent", 1, true), "message names the program: " .. msg)
  p, msg, code, part = sup.spawn{ "surely-not-a-program-sup-lua" }
  eq(code, -2, "not in PATH")
  eq(part, "exec", "part")
  ok(msg:find("not found", 1, true), "says not found: " .. msg)
  p, msg, code, part = sup.spawn{ "true", cwd = "/nonexistent-dir" }
  eq(code, -2, "cwd ENOENT")
  eq(part, "cwd", "part")
  ok(msg:find("cwd", 1, true), "message names cwd: " .. msg)
  p, msg, code = sup.spawn{ "/etc/passwd" }
  eq(code, -13, "EACCES")
  eq(sup.strerror(code), msg:match("permission denied") and sup.strerror(code) or sup.strerror(code), "named")
  p, msg, code = sup.spawn{ "/" }
  ok(code == -21 or code == -13, "a directory: " .. tostring(code))
  local res, rmsg, rcode = sup.run{ "/nonexistent/prog" }
  eq(res, nil, "run: no result")
  eq(rcode, -2, "run: code")
  eq(type(rmsg), "string", "run: message")
end)

test("misuse raises with the library's detail", function()
  raises(function() sup.spawn("true") end, "table expected", "not a table")
  raises(function() sup.spawn{} end, "argv", "empty argv")
  raises(function() sup.spawn{ "true", idle_timeout_ms = -1 } end, "spec: idle_timeout_ms", "negative")
  raises(function() sup.spawn{ "true", idle_timeout_ms = "soon" } end, "idle_timeout_ms", "string duration")
  raises(function() sup.spawn{ "true", bogus = 1 } end, "spec: bogus: unknown key", "unknown key")
  raises(function() sup.spawn{ "true", on_timeout = "explode" } end, "on_timeout", "bad enum")
  raises(function() sup.spawn{ "true", interrupt_signal = "NOPE" } end, "interrupt_signal", "bad signal")
  raises(function() sup.spawn{ "true", stdin = "keyboard" } end, "stdin", "bad stdin")
  raises(function() sup.spawn{ "true", stdin = { data = "x", extra = 1 } } end, "stdin.extra", "stdin key")
  raises(function() sup.spawn{ "a\0b" } end, "argv", "NUL in argv")
  raises(function() sup.spawn{ "true", cwd = "/tmp\0x" } end, "cwd", "NUL in cwd")
  raises(function() sup.spawn{ "true", env = { A = true } } end, "env.A", "env value")
  raises(function() sup.spawn{ "true", env = { [1] = "x" } } end, "env", "env name")
  raises(function() sup.spawn{ "true", {} } end, "argv[2]", "argv element")
  raises(function() sup.spawn{ "true", [5] = "x" } end, "[5]", "hole in argv")
  raises(function() sup.spawn{ argv = { "true" } } end, "array part", "argv key")
  raises(function() sup.spawn{ "true", grace_ms = 0 / 0 } end, "finite", "NaN")
  raises(function() sup.spawn{ "true", grace_ms = print } end, "grace_ms", "function value")
  local p <close> = sup.spawn{ "true" }
  raises(function() p:read("stdfoo") end, "invalid option", "bad stream")
  raises(function() p:wait(-5) end, "timeout must be", "negative wait")
  raises(function() p:wait("x") end, "number expected", "wait type")
  raises(function() p.wait(42) end, "sup.process expected", "not a handle")
end)

test("closed handles raise; close is idempotent", function()
  local p = sup.spawn{ "true" }
  eq(p:closed(), false, "open")
  p:wait()
  p:close()
  p:close()
  eq(p:closed(), true, "closed")
  ok(tostring(p):find("closed", 1, true), "tostring says closed")
  for _, m in ipairs{ "wait", "poll", "pid", "fd", "interrupt", "abort", "read", "result", "output_fd" } do
    raises(function() p[m](p) end, "closed sup process", m)
  end
end)

test("tostring", function()
  local p <close> = sup.spawn{ "sh", "-c", "exit 4" }
  local pid = p:pid()
  local s = tostring(p)
  ok(s:find("sup.process (pid " .. pid, 1, true), "names the pid: " .. s)
  p:wait()
  ok(tostring(p):find("exited 4", 1, true), "names the outcome: " .. tostring(p))
end)

test("wait with a timeout, poll, result", function()
  local p <close> = sup.spawn{ "sleep", "0.5" }
  local start = t.now_ms()
  local res, why = p:wait(100)
  eq(res, nil, "not final yet")
  eq(why, "timeout", "reason")
  ok(t.now_ms() - start >= 90, "waited")
  eq(p:result(), nil, "result while running")
  eq(p:poll(), false, "poll while running")
  res = p:wait()
  eq(res.outcome, "exited", "then final")
  eq(p:poll(), true, "poll once final")
  eq(p:result().exit_code, 0, "result once final")
  eq(res.pid, p:pid(), "pid agrees")
end)

test("fd and output_fd: stable descriptors", function()
  local p <close> = sup.spawn{ "sleep", "0.2" }
  local fd = p:fd()
  ok(math.type(fd) == "integer" and fd > 2, "fd")
  eq(p:fd(), fd, "same fd")
  local ofd = p:output_fd("stdout")
  ok(ofd > 2 and ofd ~= fd, "output fd")
  eq(p:output_fd("stdout"), ofd, "same output fd")
  ok(p:output_fd("stderr") ~= ofd, "stderr has its own")
  p:wait()
end)

test("<close> leaves nothing running, grandchildren included", function()
  local pid, grandchild
  do
    local q <close> = sup.spawn{ "sh", "-c", "sleep 100 & echo $!; sleep 100" }
    pid = q:pid()
    local out = ""
    while not out:find("\n") do
      out = out .. q:read("stdout")
      q:wait(20)
    end
    grandchild = tonumber(out:match("%d+"))
    ok(t.alive(pid) and t.alive(grandchild), "both running inside the block")
  end
  ok(not t.alive(pid), "child gone after the block")
  -- The group got SIGKILL; the grandchild's parent is gone, so init reaps it.
  local deadline = t.now_ms() + 2000
  while t.alive(grandchild) and t.now_ms() < deadline do sleep_ms(20) end
  ok(not t.alive(grandchild), "grandchild gone after the block")
end)

test("<close> on an error path", function()
  local pid
  local okcall = pcall(function()
    local q <close> = sup.spawn{ "sleep", "100" }
    pid = q:pid()
    error("boom")
  end)
  eq(okcall, false, "raised")
  ok(not t.alive(pid), "child gone after the error")
end)

test("garbage collection leaves nothing running", function()
  local pids = {}
  for i = 1, 5 do
    local q = sup.spawn{ "sleep", "100" }
    pids[i] = q:pid()
  end
  collectgarbage()
  collectgarbage()
  for _, pid in ipairs(pids) do ok(not t.alive(pid), "pid " .. pid .. " gone") end
end)

test("no descriptor growth over 300 spawns", function()
  -- Earlier tests' handles may still be closing (see below): settle first.
  collectgarbage()
  collectgarbage()
  local before, prev = t.count_fds(), -1
  while before ~= prev do
    sleep_ms(100)
    prev, before = before, t.count_fds()
  end
  for _ = 1, 300 do
    local q = sup.spawn{ "true" }
    q:fd()
    q:output_fd("stderr")
    if _ % 2 == 0 then q:wait() end
    if _ % 3 == 0 then q:close() end
  end
  collectgarbage()
  collectgarbage()
  -- The library's thread closes a released handle's pipes and pidfd
  -- asynchronously: allow it a moment.
  local deadline = t.now_ms() + 3000
  local now = t.count_fds()
  while now > before and t.now_ms() < deadline do
    sleep_ms(20)
    now = t.count_fds()
  end
  ok(now <= before, string.format("fds: %d before, %d after", before, now))
end)

test("live reading: chunks before the end, then nil", function()
  local p <close> = sup.spawn{ "sh", "-c", "echo one; echo err1 >&2; sleep 0.4; echo two; echo err2 >&2" }
  local out, err, early = "", "", nil
  while true do
    local final = p:poll()
    local chunk = p:read("stdout")
    if chunk == nil then break end
    out = out .. chunk
    err = err .. (p:read("stderr") or "")
    if out == "one\n" and not final and early == nil then early = true end
    if chunk == "" then p:wait(20) end
  end
  eq(early, true, "read the first line while running")
  eq(out, "one\ntwo\n", "stdout, all of it")
  err = err .. (p:read("stderr") or "")
  eq(err, "err1\nerr2\n", "stderr has its own position")
  eq(p:read("stdout"), nil, "nil again at the end")
  eq(p:read("stderr"), nil, "stderr ended too")
  eq(p:wait().stdout.captured, "one\ntwo\n", "the result still has it")
end)

test("read with a maximum", function()
  local p <close> = sup.spawn{ "printf", "abcdefgh" }
  p:wait()
  eq(p:read("stdout", 3), "abc", "first 3")
  eq(p:read("stdout", 3), "def", "next 3")
  eq(p:read("stdout"), "gh", "rest")
  eq(p:read("stdout"), nil, "end")
  eq(p:read(), nil, "stdout is the default stream")
end)

test("read after bytes were dropped reports the skip", function()
  local p <close> = sup.spawn{ "sh", "-c", "head -c 50000 /dev/zero", max_output_bytes = 1000 }
  p:wait()
  local chunk, skipped = p:read("stdout", 500)
  eq(#chunk, 500, "head")
  eq(skipped, 0, "nothing skipped yet")
  chunk, skipped = p:read("stdout")
  eq(#chunk, 500, "tail")
  eq(skipped, 49000, "the gap")
end)

test("stdin pipe: write, close_stdin, input_fd", function()
  local p <close> = sup.spawn{ "cat", stdin = "pipe" }
  ok(p:input_fd() >= 0, "input fd")
  eq(p:write("hello "), 6, "written")
  eq(p:write(string.rep("x", 300000)), 300000, "a write larger than the pipe")
  eq(p:close_stdin(), true, "closed")
  local res = p:wait()
  eq(res.stdout.bytes, 300006, "cat echoed all")
  eq(res.stdout.captured:sub(1, 6), "hello ", "in order")
  local n, msg, code = p:write("late")
  eq(n, nil, "write after the end fails")
  ok(code == -32 or code == -9, "EPIPE or EBADF: " .. tostring(code) .. " " .. tostring(msg))
  local q <close> = sup.spawn{ "true" }
  local _, _, c2 = q:write("x")
  eq(c2, -9, "EBADF when stdin is not a pipe")
end)

test("write with a timeout to a child that does not read", function()
  local p <close> = sup.spawn{ "sleep", "30", stdin = "pipe" }
  local start = t.now_ms()
  local n = p:write(string.rep("y", 4 * 1024 * 1024), 200)
  local took = t.now_ms() - start
  ok(n > 0 and n < 4 * 1024 * 1024, "partial: " .. n)
  ok(took >= 190 and took < 2200, "waited about 200 ms: " .. took)
  eq(p:write("z", 0), 0, "non-blocking write to a full pipe")
end)

test("many handles at once", function()
  local ps = {}
  for i = 1, 40 do ps[i] = sup.spawn{ "sh", "-c", "exit " .. (i % 5) } end
  for i = 1, 40 do
    eq(ps[i]:wait().exit_code, i % 5, "exit code " .. i)
    ps[i]:close()
  end
end)

t.run()
