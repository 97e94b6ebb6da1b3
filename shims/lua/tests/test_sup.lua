-- Tests of the Lua module "sup": run by meson test (TAP), plainly, under
-- valgrind, and in the ASan build with the sanitizer runtime preloaded.
local t = require "tap"
local sup = require "sup"

local eq, ok, raises, test = t.eq, t.ok, t.raises, t.test

-- Sleeps ms milliseconds without a helper process or a busy loop: a wait on
-- a child that outlives it.
local function sleep_ms(ms)
  local q = sup.spawn{ "sleep", "30" }
  q:wait(ms)
  q:close()
end

test("version and names", function()
  local v = sup.version()
  ok(v >= 200, "sup.version() >= 200")
  eq(sup._VERSION, string.format("sup %d.%d.%d", math.floor(v / 10000), math.floor(v / 100) % 100, v % 100),
    "_VERSION")
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
  ok(t.is_integer(res.rusage.max_rss_kb) and res.rusage.max_rss_kb > 0, "max_rss_kb")
  eq(type(res.json), "string", "json")
  ok(res.json:find('"outcome": "exited"', 1, true), "json outcome")
  ok(res.json:find('"exit_code": 3', 1, true), "json exit code")
  ok(res.json:find("e\239\191\189r", 1, true), "json captured is text (U+FFFD)")
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
  -- The idle limit starts at "ready", once the shell ignores SIGTERM.
  local res = sup.run{ "sh", "-c", "trap '' TERM; echo ready; sleep 30",
    first_output_timeout_ms = 10000, idle_timeout_ms = 200, grace_ms = 300 }
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
  local p = t.closing(sup.spawn{ "sleep", "30" })
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
  local p = t.closing(sup.spawn{ "true" })
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
  for _, m in ipairs{ "wait", "poll", "pid", "fd", "interrupt", "abort", "read", "result", "output_fd",
                         "lines", "write", "close_stdin", "input_fd" } do
    raises(function() p[m](p) end, "closed sup process", m)
  end
end)

test("tostring", function()
  local p = t.closing(sup.spawn{ "sh", "-c", "exit 4" })
  local pid = p:pid()
  local s = tostring(p)
  ok(s:find("sup.process (pid " .. pid, 1, true), "names the pid: " .. s)
  p:wait()
  ok(tostring(p):find("exited 4", 1, true), "names the outcome: " .. tostring(p))
end)

test("wait with a timeout, poll, result", function()
  local p = t.closing(sup.spawn{ "sleep", "0.5" })
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
  local p = t.closing(sup.spawn{ "sleep", "0.2" })
  local fd = p:fd()
  ok(t.is_integer(fd) and fd > 2, "fd")
  eq(p:fd(), fd, "same fd")
  local ofd = p:output_fd("stdout")
  ok(ofd > 2 and ofd ~= fd, "output fd")
  eq(p:output_fd("stdout"), ofd, "same output fd")
  ok(p:output_fd("stderr") ~= ofd, "stderr has its own")
  p:wait()
end)

if _VERSION == "Lua 5.4" then
  assert(loadfile(assert(package.searchpath("test_close54", package.path))))(t, sup, sleep_ms)
end

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
  local p = t.closing(sup.spawn{ "sh", "-c", "echo one; echo err1 >&2; sleep 0.4; echo two; echo err2 >&2" })
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
  local p = t.closing(sup.spawn{ "printf", "abcdefgh" })
  p:wait()
  eq(p:read("stdout", 3), "abc", "first 3")
  eq(p:read("stdout", 3), "def", "next 3")
  eq(p:read("stdout"), "gh", "rest")
  eq(p:read("stdout"), nil, "end")
  eq(p:read(), nil, "stdout is the default stream")
end)

test("read after bytes were dropped reports the skip", function()
  local p = t.closing(sup.spawn{ "sh", "-c", "head -c 50000 /dev/zero", max_output_bytes = 1000 })
  p:wait()
  local chunk, skipped = p:read("stdout", 500)
  eq(#chunk, 500, "head")
  eq(skipped, 0, "nothing skipped yet")
  chunk, skipped = p:read("stdout")
  eq(#chunk, 500, "tail")
  eq(skipped, 49000, "the gap")
end)

test("stdin pipe: write, close_stdin, input_fd", function()
  local p = t.closing(sup.spawn{ "cat", stdin = "pipe" })
  ok(p:input_fd() >= 0, "input fd")
  eq(p:write("hello "), 6, "written")
  eq(p:write(string.rep("x", 300000)), 300000, "a write larger than the pipe")
  eq(p:close_stdin(), true, "closed")
  local res = p:wait()
  eq(res.stdout.bytes, 300006, "cat echoed all")
  eq(res.stdout.captured:sub(1, 6), "hello ", "in order")
  local q = t.closing(sup.spawn{ "true", stdin = "pipe" })
  q:wait()
  local n, msg, code, count = q:write("late")
  eq(n, nil, "write after the end fails")
  eq(code, -32, "EPIPE: " .. tostring(msg))
  eq(count, 0, "nothing written")
end)

test("write with a timeout to a child that does not read", function()
  local p = t.closing(sup.spawn{ "sleep", "30", stdin = "pipe" })
  -- Built first: Lua 5.1's string.rep under valgrind takes seconds.
  local data = string.rep("y", 4 * 1024 * 1024)
  local start = t.now_ms()
  local n = p:write(data, 200)
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

test("the result table: one per handle, json built when first read", function()
  local p = t.closing(sup.spawn{ "sh", "-c", "printf 'a\\0b'" })
  local res = p:wait()
  eq(p:wait(), res, "p:wait() gives the same table again")
  eq(p:result(), res, "and so does p:result()")
  eq(rawget(res, "json"), nil, "no json text until it is read")
  local seen = {}
  for k in pairs(res) do seen[#seen + 1] = k end
  for _, k in ipairs(seen) do ok(k ~= "json", "pairs() does not build json") end
  ok(res.json:find('"outcome": "exited"', 1, true), "json on first access")
  eq(rawget(res, "json"), res.json, "then kept in the table")
  local q = sup.spawn{ "true" }
  local qres = q:wait()
  q:close()
  eq(qres.outcome, "exited", "the table outlives the handle")
  raises(function() return qres.json end, "closed before it was read", "json after p:close()")
  eq(qres.other, nil, "other absent keys are nil")
  local run = sup.run{ "echo", "hi" }
  collectgarbage()
  collectgarbage()
  ok(run.json:find('"captured": "hi\\n"', 1, true), "sup.run's result builds json when read: " .. run.json)
end)

test("sup.run(spec, \"status\"): os.execute's three values, then the result", function()
  local okv, how, code, res = sup.run({ "sh", "-c", "exit 3" }, "status")
  eq(okv, nil, "failure")
  eq(how, "exit", "exit")
  eq(code, 3, "code")
  eq(res.exit_code, 3, "the result comes fourth")
  okv, how, code = sup.run({ "true" }, "status")
  eq(okv, true, "success")
  eq(how, "exit", "exit")
  eq(code, 0, "code 0")
  okv, how, code = sup.run({ "sh", "-c", "kill -KILL $$" }, "status")
  eq(okv, nil, "killed")
  eq(how, "signal", "signal")
  eq(code, 9, "signal number")
  eq(select("#", sup.run({ "true" }, "result")), 1, "\"result\" is the default")
  raises(function() sup.run({ "true" }, "exitcode") end, "invalid option", "a bad mode")
end)

test("p:write, p:close_stdin and p:input_fd without a stdin pipe raise", function()
  local q = t.closing(sup.spawn{ "true" })
  raises(function() q:write("x") end, "stdin is not a pipe", "write")
  raises(function() q:input_fd() end, "stdin is not a pipe", "input_fd")
  raises(function() q:close_stdin() end, "stdin is not a pipe", "close_stdin")
  local p = t.closing(sup.spawn{ "cat", stdin = "pipe" })
  eq(p:write("abc"), 3, "written")
  eq(p:close_stdin(), true, "closed")
  eq(p:close_stdin(), true, "closing again is harmless")
  raises(function() p:write("x") end, "stdin was closed", "write after close_stdin")
  raises(function() p:input_fd() end, "stdin was closed", "input_fd after close_stdin")
  eq(p:wait().stdout.captured, "abc", "cat got the bytes")
end)

test("fd(true) and output_fd(stream, true): duplicates, closed with the handle", function()
  local p = sup.spawn{ "sleep", "0.2" }
  local fd, dup = p:fd(), p:fd(true)
  ok(dup ~= fd and dup > 2, "a new descriptor")
  ok(p:fd(true) ~= dup, "one more each call")
  local odup = p:output_fd("stderr", true)
  ok(odup ~= p:output_fd("stderr"), "output duplicate")
  local function open(n)
    local f = io.open("/proc/self/fdinfo/" .. n)
    if f then f:close() end
    return f ~= nil
  end
  ok(open(dup) and open(odup), "open while the handle is")
  p:wait()
  p:close()
  ok(not open(dup) and not open(odup), "closed by p:close()")
end)

test("p:read waits for bytes up to its timeout", function()
  local p = t.closing(sup.spawn{ "sh", "-c", "sleep 0.3; printf hi; sleep 0.3" })
  eq(p:read("stdout"), "", "by default a read does not wait")
  local start = t.now_ms()
  local chunk, lost = p:read("stdout", nil, 10000)
  eq(chunk, "hi", "the bytes, once they came")
  eq(lost, 0, "nothing lost")
  ok(t.now_ms() - start >= 150, "it waited for them")
  start = t.now_ms()
  eq(p:read("stdout", nil, 100), "", "nothing within 100 ms")
  ok(t.now_ms() - start >= 90, "waited out the timeout")
  eq(p:read("stdout", nil, math.huge), nil, "math.huge: until the end")
  raises(function() p:read("stdout", nil, -1) end, "timeout must be", "negative timeout")
end)

-- Compares two long strings without printing megabytes when they differ.
local function same_bytes(got, want, what)
  if got == want then return ok(true, what) end
  local n = math.min(#got, #want)
  local at = n + 1
  for i = 1, n do
    if got:byte(i) ~= want:byte(i) then
      at = i
      break
    end
  end
  ok(false, string.format("%s: %d bytes, want %d; first difference at byte %d", what, #got, #want, at))
end

-- The text `seq 1 n` prints.
local function seq_text(n)
  local parts = {}
  for i = 1, n do parts[i] = tostring(i) end
  return table.concat(parts, "\n") .. "\n"
end

-- Every way to read a stream to its end, each giving back all it read and
-- the bytes it was told were lost.
local whole_readers = {
  { "p:read(s, 64 KiB, math.huge)", function(p)
    local parts, lost = {}, 0
    while true do
      local chunk, l = p:read("stdout", 65536, math.huge)
      if chunk == nil then break end
      ok(#chunk > 0 or l > 0, "math.huge never gives \"\"")
      parts[#parts + 1], lost = chunk, lost + l
    end
    return table.concat(parts), lost
  end },
  { "p:read(s, 1000, math.huge)", function(p)
    local parts, lost = {}, 0
    while true do
      local chunk, l = p:read("stdout", 1000, math.huge)
      if chunk == nil then break end
      ok(#chunk <= 1000, "at most max")
      parts[#parts + 1], lost = chunk, lost + l
    end
    return table.concat(parts), lost
  end },
  { "p:read(s, 1 MiB, math.huge)", function(p)
    local parts, lost = {}, 0
    while true do
      local chunk, l = p:read("stdout", 1048576, math.huge)
      if chunk == nil then break end
      parts[#parts + 1], lost = chunk, lost + l
    end
    return table.concat(parts), lost
  end },
  { "p:read(s, nil, math.huge)", function(p)
    local parts, lost = {}, 0
    while true do
      local chunk, l = p:read("stdout", nil, math.huge)
      if chunk == nil then break end
      parts[#parts + 1], lost = chunk, lost + l
    end
    return table.concat(parts), lost
  end },
  { "p:read(s, 64 KiB, 5 ms)", function(p)
    local parts, lost = {}, 0
    while true do
      local chunk, l = p:read("stdout", 65536, 5)
      if chunk == nil then break end
      parts[#parts + 1], lost = chunk, lost + l
    end
    return table.concat(parts), lost
  end },
  { "p:lines()", function(p)
    local parts, lost = {}, 0
    for line, l in p:lines() do parts[#parts + 1], lost = line .. "\n", lost + l end
    return table.concat(parts), lost
  end },
}

test("a multi-MiB stream read live: exact and complete through every read, with and without backpressure", function()
  -- About 4 MiB; 1.3 MiB under valgrind, still past p:read's 1 MiB and
  -- many pipe buffers, at a twentieth of the valgrind suite's time.
  local n = os.getenv("SUP_LUA_VALGRIND") and 200000 or 600000
  local want = seq_text(n)
  for _, bp in ipairs{ 0, 262144 } do
    for _, r in ipairs(whole_readers) do
      local what = string.format("%s, backpressure_bytes = %d", r[1], bp)
      local p = t.closing(sup.spawn{ "seq", "1", tostring(n), backpressure_bytes = bp })
      local got, lost = r[2](p)
      same_bytes(got, want, what)
      eq(lost, 0, what .. ": nothing lost")
      local res = p:wait()
      eq(res.exit_code, 0, what .. ": exit 0")
      eq(res.stdout.bytes, #want, what .. ": every byte counted")
      p:close()
    end
  end
end)

test("a child killed mid-stream: every byte it wrote comes, then nil", function()
  local line = "0123456789\n"
  for _, bp in ipairs{ 0, 262144 } do
    local what = "backpressure_bytes = " .. bp
    local p = t.closing(sup.spawn{ "yes", "0123456789", backpressure_bytes = bp })
    local parts, got, lost = {}, 0, 0
    while got < 1048576 do
      local chunk, l = p:read("stdout", 65536, 10000)
      ok(chunk ~= nil and (#chunk > 0 or l > 0), what .. ": bytes while it runs")
      parts[#parts + 1], got, lost = chunk, got + #chunk, lost + l
    end
    eq(p:kill("KILL"), true, what .. ": killed while writing")
    local ended = false
    for _ = 1, 100000 do
      local chunk, l = p:read("stdout", 65536, 10000)
      if chunk == nil then
        ended = true
        break
      end
      ok(#chunk > 0 or l > 0, what .. ": no empty chunk before the end")
      parts[#parts + 1], got, lost = chunk, got + #chunk, lost + l
    end
    ok(ended, what .. ": nil at the end")
    eq(p:read("stdout", 65536, 10000), nil, what .. ": nil again")
    local res = p:wait()
    eq(res.term_signal, "SIGKILL", what .. ": SIGKILL")
    eq(got + lost, res.stdout.bytes, what .. ": read + lost = every byte it wrote")
    if bp > 0 then eq(lost, 0, what .. ": nothing lost") end
    if lost == 0 then
      local all = table.concat(parts)
      local whole = #all - #all % #line
      same_bytes(all:sub(1, whole), string.rep(line, whole / #line), what .. ": the bytes, in order")
      ok(line:sub(1, #all - whole) == all:sub(whole + 1), what .. ": the last line cut where the kill cut it")
    end
  end
end)

test("p:read's timeout on a held-back stream: waits on the pipe, gives \"\" when time runs out", function()
  local p = t.closing(sup.spawn{ "sh", "-c", "printf a; sleep 3; printf b; sleep 1", backpressure_bytes = 65536 })
  eq(p:read("stdout", nil, 10000), "a", "the first bytes")
  eq(p:read("stdout"), "", "no wait by default")
  local start = t.now_ms()
  eq(p:read("stdout", 10, 100), "", "nothing within 100 ms")
  local took = t.now_ms() - start
  -- Well before "b" (3 s after "a"): the timeout, not the next bytes, ended it.
  ok(took >= 90 and took < 2500, "waited out the timeout, no longer (" .. took .. " ms)")
  eq(p:read("stdout", nil, 10000), "b", "the next bytes")
  start = t.now_ms()
  eq(p:read("stdout", nil, math.huge), nil, "math.huge: until the end, not \"\" at the pipe's end of file")
  ok(t.now_ms() - start >= 200, "it waited for the end")
  eq(p:wait().exit_code, 0, "exit 0")
end)

test("p:lines: each line as it comes, the last without a newline", function()
  local p = t.closing(sup.spawn{ "sh", "-c", "printf 'a\\nb\\n\\n'; sleep 0.3; printf 'c\\r\\nd'; echo e >&2" })
  local lines = {}
  for line, lost in p:lines() do
    lines[#lines + 1] = line
    eq(lost, 0, "nothing lost")
    if #lines == 3 then ok(not p:poll(), "the first lines come while it runs") end
  end
  eq(table.concat(lines, "|"), "a|b||c\r|d", "lines")
  local err = {}
  for line in p:lines("stderr") do err[#err + 1] = line end
  eq(table.concat(err, "|"), "e", "stderr lines")
  local q = t.closing(sup.spawn{ "true" })
  local n = 0
  for _ in q:lines() do n = n + 1 end
  eq(n, 0, "no output, no lines")
end)

test("a read stops at a gap; the chunk after it says how much was lost", function()
  -- 1000 bytes kept of 100003: the head (500 'a') and the tail (497 'b' and END).
  local p = t.closing(sup.spawn{ "sh", "-c",
    "head -c 50000 /dev/zero | tr '\\0' a; head -c 50000 /dev/zero | tr '\\0' b; printf END",
    max_output_bytes = 1000 })
  p:wait()
  local chunk, lost = p:read("stdout")
  eq(chunk, string.rep("a", 500), "the head alone, never joined to the tail")
  eq(lost, 0, "nothing lost before the head")
  chunk, lost = p:read("stdout")
  eq(chunk, string.rep("b", 497) .. "END", "the tail")
  eq(lost, 99003, "the loss, with the chunk after the gap")
  eq(p:read("stdout"), nil, "then the end")
end)

test("p:lines reports a gap with the line after it, and ends the line it cuts", function()
  local p = t.closing(sup.spawn{ "sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done",
    max_output_bytes = 1000 })
  local res = p:wait()
  local bytes, gaps, lines = 0, 0, {}
  for line, lost in p:lines() do
    lines[#lines + 1] = line
    bytes = bytes + #line + 1
    if lost > 0 then
      gaps = gaps + 1
      bytes = bytes + lost
    end
  end
  eq(gaps, 1, "one gap, reported once")
  eq(lines[1], "line0", "first line")
  eq(lines[#lines], "line1999", "last line")
  -- The gap cuts a line: its two parts are two lines, each with its newline
  -- counted but only one of them real.
  eq(bytes - 1, res.stdout.bytes, "lines + lost account for every byte")
  local q = t.closing(sup.spawn{ "sh", "-c", "echo gone", max_output_bytes = 0 })
  q:wait()
  local got = {}
  for line, lost in q:lines() do got[#got + 1] = line .. "/" .. lost end
  eq(table.concat(got, ","), "/5", "nothing kept: one empty line carries the loss")
  local chunk, lost = q:read("stdout")
  eq(chunk, nil, "and p:read is at the end too")
  local r = t.closing(sup.spawn{ "sh", "-c", "echo gone", max_output_bytes = 0 })
  r:wait()
  chunk, lost = r:read("stdout")
  eq(chunk, "", "a read with nothing kept gives an empty chunk")
  eq(lost, 5, "with the loss")
  eq(r:read("stdout"), nil, "once")
end)

test("stdout = \"null\" | \"inherit\", stderr = \"stdout\": routed in the result", function()
  local res = sup.run{ "sh", "-c", "echo out; echo err >&2", stdout = "null" }
  eq(res.stdout.captured, "", "null: nothing captured")
  eq(res.stdout.routed, "null", "routed null")
  eq(res.stderr.captured, "err\n", "stderr still a pipe")
  eq(res.stderr.routed, "pipe", "routed pipe")
  -- Inherited: the line reaches this test's own stdout, as a TAP comment.
  res = sup.run{ "printf", "# a line the child wrote to the host's stdout\n", stdout = "inherit" }
  eq(res.stdout.routed, "inherit", "routed inherit")
  eq(res.stdout.captured, "", "inherit: not captured")
  eq(res.exit_code, 0, "exit code")
  res = sup.run{ "sh", "-c", "echo a; echo b >&2; echo c", stderr = "stdout" }
  eq(res.stdout.captured, "a\nb\nc\n", "both streams in stdout, in order")
  eq(res.stderr.captured, "", "stderr empty")
  eq(res.stderr.routed, "stdout", "routed stdout")
  raises(function() sup.spawn{ "true", stdout = "somewhere" } end, "stdout", "a bad routing")
end)

-- luv's env is a list of "K=V" that replaces the environment; sup's changes
-- it. The list form must never start a child with a surprise environment.
test("env: luv's list of \"K=V\" raises, saying how sup's env differs", function()
  local err = raises(function() sup.spawn{ "true", env = { "K=V" } } end, 'env[1] = "K=V"', "luv-style env")
  ok(err:find("changes the inherited environment", 1, true), "says what sup's env does: " .. err)
  ok(err:find("env_clear = true", 1, true), "names the way to replace it: " .. err)
  err = raises(function() sup.spawn{ "true", env = { PATH = "/bin", "K=V" } } end, 'env[1] = "K=V"', "mixed")
  local replaced = sup.run{ "/usr/bin/env", env = { K = "V" }, env_clear = true }
  eq(replaced.stdout.captured, "K=V\n", "env_clear: what luv's list does")
  local changed = sup.run{ "sh", "-c", 'printf "%s:%s" "$K" "${PATH:+inherited}"', env = { K = "V" } }
  eq(changed.stdout.captured, "V:inherited", "without env_clear: the inherited environment, changed")
end)

test("env_clear: the environment is exactly env", function()
  local res = sup.run{ "env", env_clear = true, env = { A = "1", PATH = "/usr/bin:/bin" } }
  local lines = {}
  for l in res.stdout.captured:gmatch("[^\n]+") do lines[#lines + 1] = l end
  table.sort(lines)
  eq(table.concat(lines, ","), "A=1,PATH=/usr/bin:/bin", "only env")
end)

test("first_output_timeout_ms and phase", function()
  local res = sup.run{ "sleep", "30", first_output_timeout_ms = 300, idle_timeout_ms = 5000 }
  eq(res.outcome, "idle_timeout", "outcome")
  eq(res.phase, "first_output", "the first-output limit fired")
  ok(res.signals_sent[1].at_ms >= 300, "not early")
  res = sup.run{ "sh", "-c", "echo x; sleep 30", idle_timeout_ms = 300 }
  eq(res.phase, "idle", "the idle limit fired")
  res = sup.run{ "true" }
  eq(res.phase, nil, "no phase for other outcomes")
end)

test("p:kill(sig): any signal, by name or number; false once final", function()
  local p = t.closing(sup.spawn{ "sh", "-c",
    "trap 'echo usr1; exit 3' USR1; echo ready; while :; do sleep 0.05; done" })
  local line = p:lines()()
  eq(line, "ready", "the trap is set")
  eq(p:kill(0), true, "0 probes a running child")
  eq(p:kill("USR1"), true, "sent")
  local res = p:wait()
  eq(res.exit_code, 3, "the child's trap ran")
  eq(res.outcome, "exited", "a host's signal does not change the outcome")
  eq(res.signals_sent[1].signal, "SIGUSR1", "listed in signals_sent")
  eq(p:kill("TERM"), false, "false once final")
  eq(p:kill(0), false, "the probe says gone")
  raises(function() p:kill("NOPE") end, "no signal named NOPE", "an unknown name")
  raises(function() p:kill(65) end, "0..64", "out of range")
  local q = t.closing(sup.spawn{ "sleep", "30" })
  eq(q:kill(), true, "SIGTERM by default")
  eq(q:wait().term_signal, "SIGTERM", "it died of it")
  local r = t.closing(sup.spawn{ "sleep", "30" })
  eq(r:kill(sup.signal("RTMIN+3")), true, "a real-time signal by number")
  eq(r:wait().term_signal, "SIGRTMIN+3", "named as bash names it")
end)

test("host_death: what ends with the host; require_sentinel", function()
  local res = sup.run{"true", require_sentinel = true}
  eq(res.host_death, "tree", "a sentinel runs for the tests' host")
  local ok_, err = pcall(sup.run, {"true", require_sentinel = 1})
  ok(not ok_ and tostring(err):find("require_sentinel", 1, true), "a bad value names the key: " .. tostring(err))
end)

test("contain: the result says how the tree was contained", function()
  local res = sup.run{ "true", contain = "group" }
  eq(res.contained, "group", "group")
  eq(res.leftovers_ended, nil, "no count in group mode")
  eq(res.tree_cpu, nil, "no tree CPU in group mode")
  res = sup.run{ "sh", "-c", "sleep 30 & echo started", contain = "auto" }
  ok(res.contained == "cgroup" or res.contained == "group", "auto: " .. tostring(res.contained))
  if res.contained == "cgroup" then
    eq(res.contain_fallback, nil, "no fallback")
    ok(res.leftovers_ended >= 1, "the sleep it left was ended")
    eq(type(res.tree_cpu.user_ms), "number", "tree CPU")
  else
    eq(type(res.contain_fallback), "string", "auto says why it fell back")
  end
  -- A parent that does not exist: "auto" falls back and says why, the path
  -- (quote, backslash, UTF-8) decoded from the JSON text exactly.
  local parent = "/sys/fs/cgroup/no\"such\\dir\195\169"
  res = sup.run{ "true", contain = "auto", cgroup_parent = parent }
  eq(res.contained, "group", "fell back")
  ok(res.contain_fallback:find(parent, 1, true), "the reason names the parent: " .. res.contain_fallback)
  eq(rawget(res, "contain_fallback"), res.contain_fallback, "kept once read")
  eq(res.cgroup_left, nil, "no cgroup left behind")
  raises(function() sup.spawn{ "true", contain = "jail" } end, "contain", "a bad mode")
end)

test("pty = { rows, cols } and p:resize", function()
  local res = sup.run{ "stty", "size", pty = { rows = 30, cols = 100 } }
  eq(res.stdout.captured, "30 100\r\n", "the size asked for, \\n as \\r\\n")
  eq(res.stdout.routed, "pty", "routed pty")
  res = sup.run{ "stty", "size", pty = { 31, 101 } }
  eq(res.stdout.captured, "31 101\r\n", "rows and cols as a sequence")
  res = sup.run{ "stty", "size", pty = true }
  eq(res.stdout.captured, "24 80\r\n", "24x80 by default")
  local p = t.closing(sup.spawn{ "sh", "-c", "trap 'stty size; exit 0' WINCH; echo ready; while :; do sleep 0.05; done",
    pty = true })
  local lines = p:lines()
  eq(lines(), "ready\r", "running")
  eq(p:resize(40, 120), true, "resized")
  eq(lines(), "40 120\r", "the child saw SIGWINCH and the new size")
  p:wait()
  eq(p:resize(10, 10), false, "false once final")
  raises(function() p:resize(0, 10) end, "rows must be", "rows out of range")
  local q = t.closing(sup.spawn{ "true" })
  raises(function() q:resize(10, 10) end, "no pty", "a child without a pty")
  local w = t.closing(sup.spawn{ "cat", pty = true })
  eq(w:write("hello\n"), 6, "input through the terminal")
  eq(w:close_stdin(), true, "^D")
  ok(w:wait().stdout.captured:find("hello\r\n", 1, true), "cat echoed it: " .. w:result().stdout.captured)
end)

test("the README's Lua examples compile, and the first one runs", function()
  local tap_path = assert(package.searchpath and package.searchpath("tap", package.path)
    or os.getenv("LUA_PATH"):match("([^;]*)%?%.lua"):gsub("$", "tap.lua"))
  local f = assert(io.open((tap_path:gsub("tests/tap%.lua$", "README.md"))))
  local readme = f:read("*a")
  f:close()
  local blocks = {}
  for block in readme:gmatch("```lua\n(.-)```") do blocks[#blocks + 1] = block end
  ok(#blocks >= 3, "found the examples: " .. #blocks)
  local out = {}
  local env = setmetatable({
    print = function(...)
      local parts = {}
      for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
      out[#out + 1] = table.concat(parts, "\t")
    end,
    io = { stderr = { write = function() end } },
  }, { __index = _G })
  for i, block in ipairs(blocks) do
    local chunk, err
    if setfenv then
      chunk, err = loadstring(block, "README block " .. i)
      if chunk then setfenv(chunk, env) end
    else
      chunk, err = load(block, "README block " .. i, "t", env)
    end
    ok(chunk, "compiles: " .. tostring(err))
    if i == 1 then chunk() end
  end
  eq(table.concat(out, "|", 1, 3), "out: step 1|out: step 2|out: step 3", "the lines, as they came")
  ok(out[4]:find("^exited\t0\tnil\t[%d.]+\tdone\n$"), "the result: " .. tostring(out[4]))
end)


-- SIGINT to a Lua interpreter (the same one that runs these tests) blocked
-- in a sup call: lua.c's handler sets a hook that raises "interrupted!";
-- the call must end its child gracefully (the child's TERM trap runs) and
-- the interpreter exit within a second, leaving nothing running. `check`
-- judges how the interpreter ended (by default: by lua's error status, with
-- "interrupted!" on stderr).
local function sigint_test(name, code, check)
  test("SIGINT ends " .. name, function()
    local argv = t.interp()
    local file = os.tmpname()
    argv[#argv + 1] = "-e"
    argv[#argv + 1] = string.format([[
local sup = require "sup"
local cmd = { "sh", "-c", 'echo $$ > %s; trap "echo term >> %s; exit 0" TERM; sleep 30 & wait' }
%s]], file, file, code)
    local host = t.closing(sup.spawn(argv))
    local pid
    local deadline = t.now_ms() + 20000
    while not pid and t.now_ms() < deadline do
      local f = io.open(file)
      pid = f and tonumber(f:read("*a"):match("^(%d+)\n"))
      if f then f:close() end
      if not pid then sleep_ms(20) end
    end
    ok(pid, "the child started")
    -- The host went from spawn to its wait at once; it sleeps there between
    -- short wakeups, where before it ran Lua code.
    local asleep = 0
    deadline = t.now_ms() + 20000
    while asleep < 3 and t.now_ms() < deadline do
      sleep_ms(50)
      asleep = t.state(host:pid()) == "S" and asleep + 1 or 0
    end
    ok(asleep == 3, "the host waits")
    local start = t.now_ms()
    eq(sup.run{ "kill", "-INT", tostring(host:pid()) }.exit_code, 0, "SIGINT sent")
    local res = host:wait(20000)
    local took = t.now_ms() - start
    local f = io.open(file)
    local written = f:read("*a")
    f:close()
    os.remove(file)
    ok(res, "the interpreter ended")
    if check then
      check(res)
    else
      eq(res.exit_code, 1, "with lua's error status; stderr: " .. res.stderr.captured)
      ok(res.stderr.captured:find("interrupted!", 1, true), "the host's own error: " .. res.stderr.captured)
    end
    eq(written, pid .. "\nterm\n", "the child got the interrupt signal")
    ok(not t.alive(pid), "the child is gone")
    -- Valgrind slows the outer interpreter's own wait, not the host's.
    ok(took < (os.getenv("SUP_LUA_VALGRIND") and 3000 or 1000), "within a second: " .. took .. " ms")
  end)
end
sigint_test("sup.run", "sup.run(cmd)")
sigint_test("p:wait()", "local p = sup.spawn(cmd); p:wait()")
sigint_test("p:wait(ms) in a coroutine", "local p = sup.spawn(cmd); coroutine.wrap(function() p:wait(60000) end)()")
-- A wait inside a coroutine runs the hook that lua.c set on the main thread;
-- the main thread's must be disarmed too, or it raises a second time,
-- outside the pcall that caught the first.
local function caught_once(res)
  local out, err = res.stdout.captured, res.stderr.captured
  eq(res.exit_code, 0, "the script went on and ended well; stderr: " .. err)
  local n = select(2, out:gsub("interrupted!", ""))
  eq(n, 1, "one \"interrupted!\", caught by the pcall: " .. out)
  ok(out:find("^caught: [^\n]*interrupted!\ncontinued\n$"), "then the script went on: " .. out)
  ok(not err:find("interrupted!", 1, true), "nothing raised outside the pcall: " .. err)
end
local caught = "io.write('caught: ', tostring(err), '\\n'); io.write('continued\\n')"
sigint_test("p:wait() in a coroutine inside pcall, once",
  "local _, err = pcall(function() coroutine.wrap(function() sup.spawn(cmd):wait() end)() end); " .. caught,
  caught_once)
sigint_test("sup.run in a coroutine inside pcall, once",
  "local _, err = pcall(coroutine.wrap(function() sup.run(cmd) end)); " .. caught,
  caught_once)
sigint_test("p:lines()", "local p = sup.spawn(cmd); for l in p:lines() do end")
sigint_test("p:read with a timeout", "local p = sup.spawn(cmd); p:read('stdout', nil, math.huge)")
sigint_test("p:write to a full pipe",
  "cmd.stdin = 'pipe'; local p = sup.spawn(cmd); p:write(string.rep('x', 1048576))")

-- 0.4: descriptors, input waits, expire, limits, sandbox, credentials.

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

test("a Lua file as stdout: the child writes, Lua reads it back", function()
  local path = os.tmpname()
  local f = assert(io.open(path, "w+"))
  f:write("from lua\n") -- still in Lua's buffer: flushed before the child's
  local res = sup.run{ "sh", "-c", "echo out; echo err >&2", stdout = f, stderr = "stdout" }
  eq(res.exit_code, 0, "exit code")
  eq(res.stdout.routed, "fd", "stdout routed")
  eq(res.stderr.routed, "stdout", "stderr routed")
  eq(res.stdout.captured, "", "nothing captured")
  f:seek("set")
  eq(f:read("*a"), "from lua\nout\nerr\n", "the file, in order")
  f:close()
  eq(sup.run{ "cat", stdin = io.open(path, "rb") }.stdout.captured, "from lua\nout\nerr\n", "a file as stdin")
  raises(function() sup.spawn{ "true", stdout = f } end, "stdout: the file is closed", "a closed file raises")
  os.remove(path)
end)

test("a number as stdout: the host's descriptor itself", function()
  local q = t.closing(sup.spawn{ "cat", stdin = "pipe" })
  local res = sup.run{ "printf", "via fd", stdout = q:input_fd() }
  eq(res.stdout.routed, "fd", "routed")
  eq(q:close_stdin(), true, "closed")
  eq(q:wait().stdout.captured, "via fd", "the other child read it")
  raises(function() sup.spawn{ "true", stderr = 987 } end, "stderr", "a descriptor that is not open")
end)

test("fds: more descriptors for the child", function()
  local path = os.tmpname()
  local f = assert(io.open(path, "w+"))
  local q = t.closing(sup.spawn{ "cat", stdin = "pipe" })
  local res = sup.run{ "sh", "-c", "echo three >&3; echo four >&4", fds = { [3] = f, [4] = q:input_fd() } }
  eq(res.exit_code, 0, "exit code: " .. res.stderr.captured)
  q:close_stdin()
  eq(q:wait().stdout.captured, "four\n", "fds[4], a number")
  f:seek("set")
  eq(f:read("*a"), "three\n", "fds[3], a file")
  f:close()
  os.remove(path)
  raises(function() sup.spawn{ "true", fds = { x = 1 } } end, "fds: keys", "a key that is no number")
  raises(function() sup.spawn{ "true", fds = { [3] = 987 } } end, "fds.3", "a descriptor that is not open")
  raises(function() sup.spawn{ "true", fds = { [3] = f } } end, "fds[3]: the file is closed", "a closed file")
end)

test("max_output_bytes = math.huge keeps every byte", function()
  -- Past the 16 MiB default (a smaller count under valgrind: it proves the
  -- spelling is taken, the library's own tests the memory).
  local n = os.getenv("SUP_LUA_VALGRIND") and 100000 or 17 * 1024 * 1024 + 5
  local res = sup.run{ "head", "-c", tostring(n), "/dev/zero", max_output_bytes = math.huge }
  eq(res.stdout.bytes, n, "bytes")
  eq(#res.stdout.captured, n, "all kept")
  eq(res.stdout.truncated, false, "not truncated")
  raises(function() sup.spawn{ "true", max_output_bytes = -math.huge } end, "max_output_bytes", "-math.huge")
end)

-- Polls p:input_wanted() until it says true (the machine is loaded: long).
local function until_wanted(p)
  local deadline = t.now_ms() + 20000
  repeat
    if p:input_wanted() then return true end
    sleep_ms(50)
  until t.now_ms() > deadline
  return false
end

test("p:input_wanted: a child that waits on read", function()
  local p = t.closing(sup.spawn{ "sh", "-c", "read x; echo got $x", stdin = "pipe" })
  ok(until_wanted(p), "waiting for input")
  eq(p:write("hi\n"), 3, "written")
  p:close_stdin()
  local res = p:wait()
  eq(res.stdout.captured, "got hi\n", "it read")
  eq(res.waiting_for_input, false, "not waiting at its end")
  local v, msg, code = p:input_wanted()
  eq(v, nil, "after the end: nil")
  eq(code, -3, "ESRCH: " .. tostring(msg))
  local busy = t.closing(sup.spawn{ "sh", "-c", "while :; do :; done", stdin = "pipe" })
  eq(busy:input_wanted(), false, "a busy child does not wait")
  eq(sup.run{ "true" }.waiting_for_input, nil, "nobody asked: nil")
end)

test("input_wait_timeout_ms ends a child waiting for input", function()
  local res = sup.run{ "sh", "-c", "read x", stdin = "pipe", input_wait_timeout_ms = 200, max_runtime_ms = 60000 }
  eq(res.outcome, "idle_timeout", "outcome")
  eq(res.phase, "input", "phase")
  eq(res.waiting_for_input, true, "waiting_for_input")
  raises(function() sup.spawn{ "true", input_wait_timeout_ms = -1 } end, "input_wait_timeout_ms", "negative")
end)

test("p:expire: ends the child as max_runtime_ms would", function()
  local p = t.closing(sup.spawn{ "sleep", "30" })
  eq(p:expire(), true, "latched")
  local res = p:wait()
  eq(res.outcome, "max_runtime", "outcome")
  eq(res.term_signal, "SIGTERM", "the interrupt signal")
  eq(p:expire(), false, "after the end: nothing")
end)

test("limits: cpu_seconds ends a spinning child; confined says how", function()
  local res = sup.run{ "sh", "-c", "while :; do :; done", limits = { cpu_seconds = 1, core_dump = false },
    max_runtime_ms = 120000 }
  eq(res.limit, "cpu", "limit")
  ok(res.term_signal == "SIGXCPU" or res.term_signal == "SIGKILL", "signal: " .. tostring(res.term_signal))
  eq(res.confined.cpu_seconds.value, 1, "confined.cpu_seconds.value")
  eq(res.confined.cpu_seconds.mechanism, "rlimit", "mechanism")
  eq(res.confined.cpu_seconds.scope, "process", "scope")
  local plain = sup.run{ "true" }
  eq(plain.confined, nil, "no confined without limits")
  eq(plain.limit, nil, "no limit")
  raises(function() sup.spawn{ "true", limits = { cpu_seconds = 0 } } end, "limits.cpu_seconds", "zero")
end)

test("confined after the cgroup's keys; limits the child sees", function()
  -- With "auto", tree_cpu's fractions come before "confined" in the JSON.
  local res = sup.run{ "sh", "-c", "ulimit -n", contain = "auto", limits = { open_files = 64 } }
  -- Under valgrind the clone is a fork of valgrind itself, which keeps its
  -- own descriptors above the limit: the child cannot start under 64.
  if not os.getenv("SUP_LUA_VALGRIND") then eq(res.stdout.captured, "64\n", "the child's limit") end
  eq(res.confined.open_files.value, 64, "confined.open_files.value")
  eq(res.confined.open_files.mechanism, "rlimit", "mechanism")
  eq(res.limit, nil, "no limit ended it")
end)

test("sandbox: writes outside the write paths are refused", function()
  local dir = sup.run{ "mktemp", "-d" }.stdout.captured:gsub("\n$", "")
  local outside = os.tmpname()
  local res = sup.run{ "sh", "-c", 'echo in > "$1"/f && echo out > "$2"', "sh", dir, outside,
    sandbox = { write = { dir } } }
  local sb = res.confined.sandbox
  eq(type(sb), "table", "confined.sandbox")
  if not sb.filesystem then
    os.remove(outside)
    sup.run{ "rm", "-rf", dir }
    t.skip("Landlock is not enforced here (ABI " .. tostring(sb.landlock_abi) .. ")")
  end
  ok(res.exit_code ~= 0, "the write outside failed: " .. res.stderr.captured)
  eq(read_file(dir .. "/f"), "in\n", "the write inside succeeded")
  eq(read_file(outside), "", "the file outside is untouched")
  eq(type(sb.not_enforced), "table", "not_enforced is a list")
  os.remove(outside)
  sup.run{ "rm", "-rf", dir }
  raises(function() sup.spawn{ "true", sandbox = { write = { "/nonexistent/sup" } } } end, "sandbox.write",
    "a path that cannot be opened")
end)

test("signals, credentials and the sentinel keys", function()
  eq(sup.run{ "true", keep_ignored_signals = true, reset_signals = { "PIPE", 25 } }.exit_code, 0,
    "keep_ignored_signals, reset_signals")
  eq(sup.run{ "true", reset_signals = {} }.exit_code, 0, "an empty reset_signals")
  raises(function() sup.spawn{ "true", reset_signals = { "NOPE" } } end, "reset_signals", "an unknown signal")
  raises(function() sup.spawn{ "true", user = "no-such-user-sup" } end, "user", "an unknown user")
  local root = sup.run{ "id", "-u" }.stdout.captured == "0\n"
  local p, msg, code = sup.spawn{ "id", "-u", user = "nobody", groups = {} }
  if root then
    local res = t.closing(p):wait()
    eq(res.stdout.captured, res.confined.user.uid .. "\n", "runs as nobody")
    eq(#res.confined.user.groups, 0, "no supplementary groups")
  else
    eq(p, nil, "not root: refused")
    eq(code, -1, "EPERM: " .. tostring(msg))
  end
  local okk, res = pcall(sup.run, { "true", require_sentinel = true })
  if okk then
    eq(res.host_death, "tree", "with a sentinel, the tree dies with the host")
  else
    ok(tostring(res):find("require_sentinel", 1, true), "without one, it says so: " .. tostring(res))
  end
end)

t.run()
