-- A minimal TAP runner (meson test's `protocol: 'tap'`), so that the tests
-- need nothing but the interpreter: Lua 5.1, LuaJIT, 5.3 or 5.4 (no 5.4-only
-- syntax here or in the tests that load it). Usage:
--   local t = require "tap"
--   t.test("name", function() local p = t.closing(sup.spawn{ "true" }) end)
--   t.run()
-- SUP_LUA_TEST=pattern runs only the tests whose name matches.
local M = {}
local tests = {}

function M.test(name, fn) tests[#tests + 1] = { name = name, fn = fn } end

-- Handles closed when the current test ends, however it ends: what
-- `local p <close> = ...` does in 5.4, for every version.
local closing = {}
function M.closing(p, ...)
  if p then closing[#closing + 1] = p end
  return p, ...
end

function M.is_integer(v)
  return type(v) == "number" and v == math.floor(v)
end

-- The interpreter running the tests, as an argv table (SUP_LUA_INTERP, set
-- by meson: the interpreter, or the dynamic loader that preloads the
-- sanitizer's runtime into it).
function M.interp()
  local v = os.getenv("SUP_LUA_INTERP")
  if not v or v == "" then M.skip("SUP_LUA_INTERP is not set") end
  local argv = {}
  for a in v:gmatch("[^\n]+") do argv[#argv + 1] = a end
  return argv
end

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

function M.eq(got, want, what)
  if got ~= want then
    error(string.format("%s: expected %s, got %s", what or "value", show(want), show(got)), 2)
  end
end

function M.ok(cond, what)
  if not cond then error((what or "assertion failed"), 2) end
  return cond
end

-- Asserts that fn raises an error whose message contains `pattern` (plain).
function M.raises(fn, pattern, what)
  local ok, err = pcall(fn)
  if ok then error((what or "call") .. ": expected an error", 2) end
  if pattern and not tostring(err):find(pattern, 1, true) then
    error(string.format("%s: error %s does not contain %q", what or "call", show(tostring(err)), pattern), 2)
  end
  return err
end

-- Ends the current test as skipped.
local SKIP = {}
function M.skip(reason) error({ [SKIP] = reason }, 0) end

function M.now_ms()
  -- os.clock is CPU time; wall time to the millisecond comes from /proc.
  local f = assert(io.open("/proc/uptime"))
  local up = f:read("*n")
  f:close()
  return up * 1000
end

-- A process's state letter ("R", "S", "Z", ...), nil when there is none.
function M.state(pid)
  local f = io.open("/proc/" .. pid .. "/stat")
  if not f then return nil end
  local stat = f:read("*a")
  f:close()
  return stat:match("^%d+ %b() (%a)")
end

-- Whether a process exists (a zombie counts as gone: it has ended).
function M.alive(pid)
  local state = M.state(pid)
  return state ~= nil and state ~= "Z" and state ~= "X"
end

function M.count_fds()
  local p = io.popen("ls /proc/" .. M.self_pid() .. "/fd")
  local n = 0
  for _ in p:lines() do n = n + 1 end
  p:close()
  return n
end

function M.self_pid()
  local f = assert(io.open("/proc/self/stat"))
  local stat = f:read("*a")
  f:close()
  -- /proc/self is the reader here, which is this process (no helper exec'd).
  return tonumber(stat:match("^(%d+)"))
end

-- TAP goes to stdout itself: Neovim's print() writes to its messages.
local function say(line)
  io.stdout:write(line, "\n")
end

function M.run()
  local filter = os.getenv("SUP_LUA_TEST")
  local selected = {}
  for _, t in ipairs(tests) do
    if not filter or t.name:find(filter, 1, true) then selected[#selected + 1] = t end
  end
  io.stdout:setvbuf("line")
  say("1.." .. #selected)
  local failed = 0
  for i, t in ipairs(selected) do
    local start = M.now_ms()
    local ok, err = xpcall(t.fn, function(e)
      if type(e) == "table" then return e end
      return debug.traceback(e, 2)
    end)
    for k = #closing, 1, -1 do
      closing[k]:close()
      closing[k] = nil
    end
    collectgarbage()
    local took = M.now_ms() - start
    if ok then
      say(string.format("ok %d - %s # %.0f ms", i, t.name, took))
    elseif type(err) == "table" and err[SKIP] then
      say(string.format("ok %d - %s # SKIP %s", i, t.name, err[SKIP]))
    else
      failed = failed + 1
      say(string.format("not ok %d - %s", i, t.name))
      for line in tostring(err):gmatch("[^\n]+") do say("# " .. line) end
    end
  end
  say(string.format("# %d passed, %d failed", #selected - failed, failed))
  os.exit(failed == 0 and 0 or 1, true)
end

return M
