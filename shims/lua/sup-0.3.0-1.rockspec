-- The Lua module "sup" for LuaRocks users, for any --lua-version of 5.1,
-- 5.3, 5.4 (5.1 serves LuaJIT, and so Neovim and OpenResty, too). From
-- shims/lua of a checkout:
--   luarocks --lua-version=5.4 make sup-0.3.0-1.rockspec
-- An installed libsup is used (pkg-config's `sup`, or SUP_DIR=/opt/sup in
-- the environment); without one, libsup is compiled into the module from
-- the repository's own sources, needing only libuv's and cJSON's headers
-- (Debian: libuv1-dev libcjson-dev): see rock.mk. pack-rock.sh makes a
-- .src.rock of this rockspec and those sources, for `luarocks install`.
rockspec_format = "3.0"
package = "sup"
version = "0.3.0-1"
source = {
  -- The repository's include/, lib/ and shims/lua/, as pack-rock.sh packs
  -- them. `luarocks make` does not read this: it builds the checkout it is
  -- run from.
  url = "file://sup-0.3.0.tar.gz",
  dir = "sup-0.3.0/shims/lua",
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
build = {
  type = "make",
  makefile = "rock.mk",
  build_variables = {
    CFLAGS = "$(CFLAGS)",
    LIBFLAG = "$(LIBFLAG)",
    LUA_INCDIR = "$(LUA_INCDIR)",
  },
  install_variables = {
    INST_LIBDIR = "$(LIBDIR)",
  },
}
