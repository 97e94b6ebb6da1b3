-- The Lua module "sup" for LuaRocks users. libsup (the C library, built and
-- installed with Meson from this repository) must be installed first; then,
-- from shims/lua of a checkout (any --lua-version of 5.1, 5.3, 5.4; 5.1
-- serves LuaJIT, and so Neovim and OpenResty, too):
--   luarocks --lua-version=5.4 make sup-0.3.0-1.rockspec
-- and, for a libsup outside the default search path:
--   luarocks --lua-version=5.4 make sup-0.3.0-1.rockspec SUP_DIR=/opt/sup
rockspec_format = "3.0"
package = "sup"
version = "0.3.0-1"
source = {
  -- `luarocks make` builds the checkout it is run from; this names it.
  url = "file://.",
}
description = {
  summary = "Run child processes under supervision: idle timeouts, escalation, no orphans",
  detailed = [[
A binding of libsup for Lua 5.1, LuaJIT 2.1, 5.3 and 5.4: spawn a child
with an idle timeout reset by any output byte, a maximum runtime, an
interrupt signal escalated to SIGKILL after a grace period, bounded
head+tail capture and one immutable result. Waits block (and end on the
host's Ctrl-C), or plug into luv, Neovim's vim.uv, cqueues or any loop
through p:fd().
]],
  license = "MIT",
}
dependencies = {
  "lua >= 5.1",
}
external_dependencies = {
  SUP = {
    header = "sup.h",
    library = "sup",
  },
}
build = {
  type = "builtin",
  modules = {
    sup = {
      sources = { "lsup.c" },  -- one translation unit: includes lsup.h and lsup_*.c
      libraries = { "sup" },
      incdirs = { "$(SUP_INCDIR)" },
      libdirs = { "$(SUP_LIBDIR)" },
    },
  },
}
