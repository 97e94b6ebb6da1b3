-- The tests of `local p <close> = ...`, Lua 5.4 syntax: test_sup.lua loads
-- this file only under Lua 5.4 (elsewhere __gc and p:close() cover it).
local t, sup, sleep_ms = ...
local eq, ok, test = t.eq, t.ok, t.test

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

