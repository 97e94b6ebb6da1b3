-- sup inside Neovim: `nvim --headless -u NONE -c 'luafile test_nvim.lua'`
-- (meson sets LUA_CPATH to the LuaJIT build of sup.so, LUA_PATH to tap.lua).
-- Processes are waited on and read through vim.loop (vim.uv from 0.10 on),
-- Neovim's own libuv loop, driven here by vim.wait.
local t = require "tap"
local sup = require "sup"
local uv = vim.uv or vim.loop

local eq, ok, test = t.eq, t.ok, t.test

test("Neovim runs LuaJIT, and sup loads in it", function()
  ok(jit ~= nil, "LuaJIT: " .. tostring(jit and jit.version))
  eq(_VERSION, "Lua 5.1", "its Lua")
  ok(sup.version() >= 200, "sup.version()")
end)

test("10 processes waited on through uv.new_poll(p:fd()) in Neovim's loop", function()
  local n, done, results = 10, 0, {}
  for i = 1, n do
    local p = t.closing(assert(sup.spawn{ "sh", "-c", string.format("sleep 0.%d; exit %d", i % 4, i) }))
    local poll = uv.new_poll(p:fd())
    poll:start("r", function()
      results[i] = p:wait(0)
      done = done + 1
      poll:stop()
      poll:close()
    end)
  end
  ok(vim.wait(20000, function() return done == n end, 10), "every callback ran: " .. done)
  for i = 1, n do eq(results[i].exit_code, i, "exit code " .. i) end
end)

test("live output through uv.new_poll(p:output_fd()) and vim.schedule", function()
  local p = t.closing(sup.spawn{ "sh", "-c", "for i in 1 2 3; do echo line$i; sleep 0.1; done" })
  local lines, ended = {}, false
  local poll = uv.new_poll(p:output_fd("stdout"))
  poll:start("r", function()
    local chunk = p:read("stdout", nil, 0)
    if chunk == nil then
      poll:stop()
      poll:close()
      -- A fast event: the editor's API is reached through vim.schedule.
      vim.schedule(function() ended = true end)
      return
    end
    lines[#lines + 1] = chunk
  end)
  ok(vim.wait(20000, function() return ended end, 10), "the stream ended")
  eq(table.concat(lines), "line1\nline2\nline3\n", "stdout")
end)

test("blocking calls work inside Neovim too", function()
  local res = sup.run{ "printf", "%s", "from nvim" }
  eq(res.stdout.captured, "from nvim", "sup.run")
  local p = t.closing(sup.spawn{ "sh", "-c", "echo a; echo b" })
  local got = {}
  for line in p:lines() do got[#got + 1] = line end
  eq(table.concat(got, ","), "a,b", "p:lines()")
end)

t.run()
