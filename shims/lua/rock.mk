# rock.mk: LuaRocks' build of the module: against an installed libsup, or with libsup compiled in from the sources beside it.
#
# The rockspec runs `make -f rock.mk` and `make -f rock.mk install` with
# LuaRocks' CC, CFLAGS, LIBFLAG, LUA_INCDIR and INST_LIBDIR. Which libsup:
#   SUP_DIR=/opt/sup (or SUP_INCDIR and SUP_LIBDIR), from the environment:
#       that installed libsup;
#   else pkg-config's `sup`, else a sup.h and libsup.so that the compiler
#       finds by itself: the installed libsup;
#   else libsup's own sources (SUP_SOURCE_DIR, default ../.. : the
#       repository's include/ and every lib/**/*.cpp, which a packed rock
#       carries too), compiled into sup.so itself, as the Rust crate's
#       `bundled` feature does. Only libuv's and cJSON's headers are needed
#       (Debian: libuv1-dev libcjson-dev) and a C++17 compiler; no meson.
# SUP_BUNDLED=yes or no overrides the choice.
#
# A bundled sup.so exports luaopen_sup only: libsup's symbols stay inside
# it, so that it cannot clash with a libsup the host loaded too.

CC ?= cc
CXX ?= g++
CFLAGS ?= -O2 -fPIC
LIBFLAG ?= -shared
LUA_INCDIR ?= /usr/include/lua5.4
INST_LIBDIR ?= .
SUP_SOURCE_DIR ?= ../..
SUP_BUNDLED ?= auto
PKG_CONFIG ?= pkg-config
, := ,

MODULE_SRCS := lsup.c lsup.h lsup_compat.h lsup_spec.c lsup_result.c lsup_wait.c \
	lsup_process.c lsup_output.c lsup_input.c lsup_json.c
OBJDIR := rock-build

ifdef SUP_DIR
SUP_INCDIR ?= $(SUP_DIR)/include
SUP_LIBDIR ?= $(SUP_DIR)/lib
endif

# Decided once, from what is installed (0.3 or newer).
ifeq ($(SUP_BUNDLED),auto)
ifneq ($(SUP_INCDIR)$(SUP_LIBDIR),)
SUP_BUNDLED := no
else ifeq ($(shell $(PKG_CONFIG) --exists 'sup >= 0.3' 2>/dev/null && echo yes),yes)
SUP_BUNDLED := no
SUP_PC := yes
else ifeq ($(shell printf '\043include <sup.h>\n\043if SUP_VERSION_MAJOR == 0 && SUP_VERSION_MINOR < 3\n\043error\n\043endif\nint main(void) { return sup_version(); }\n' | \
	$(CC) -x c - -o /dev/null -lsup >/dev/null 2>&1 && echo yes),yes)
SUP_BUNDLED := no
else
SUP_BUNDLED := yes
endif
endif

ifeq ($(SUP_BUNDLED),yes)
SUP_INCLUDE := $(SUP_SOURCE_DIR)/include
# Every C++ source under lib/, found rather than listed, so that a file
# added to the library needs no change here.
LIB_SRCS := $(sort $(shell find $(SUP_SOURCE_DIR)/lib -name '*.cpp' 2>/dev/null))
LIB_HDRS := $(shell find $(SUP_SOURCE_DIR)/lib -name '*.hpp' 2>/dev/null)
LIB_OBJS := $(patsubst $(SUP_SOURCE_DIR)/lib/%.cpp,$(OBJDIR)/lib/%.o,$(LIB_SRCS))
UV_CFLAGS := $(shell $(PKG_CONFIG) --cflags libuv 2>/dev/null)
UV_LIBS := $(or $(shell $(PKG_CONFIG) --libs libuv 2>/dev/null),-luv)
CJSON_CFLAGS := $(shell $(PKG_CONFIG) --cflags libcjson 2>/dev/null)
CJSON_LIBS := $(or $(shell $(PKG_CONFIG) --libs libcjson 2>/dev/null),-lcjson)
# As lib/meson.build compiles it. gcc only: clang has no STB_GNU_UNIQUE.
NO_GNU_UNIQUE := $(shell $(CXX) -fno-gnu-unique -x c++ -E /dev/null >/dev/null 2>&1 && echo -fno-gnu-unique)
SUP_CXXFLAGS := -std=c++17 -O2 -fPIC -fvisibility=hidden $(NO_GNU_UNIQUE) \
	-DSUP_BUILDING -D_GNU_SOURCE -I$(SUP_INCLUDE) -I$(SUP_SOURCE_DIR)/lib $(UV_CFLAGS) $(CJSON_CFLAGS)
SUP_LINK := $(OBJDIR)/libsup.a -Wl,--exclude-libs,ALL $(UV_LIBS) $(CJSON_LIBS) -pthread
SUP_DEPS := $(OBJDIR)/libsup.a
LINKER := $(CXX)
else ifeq ($(SUP_PC),yes)
SUP_INCLUDE := $(shell $(PKG_CONFIG) --variable=includedir sup)
SUP_LINK := $(shell $(PKG_CONFIG) --libs sup) \
	$(patsubst -L%,-Wl$(,)-rpath$(,)%,$(filter -L%,$(shell $(PKG_CONFIG) --libs-only-L sup)))
LINKER := $(CC)
else
SUP_INCLUDE := $(SUP_INCDIR)
SUP_LINK := $(if $(SUP_LIBDIR),-L$(SUP_LIBDIR) -Wl$(,)-rpath$(,)$(SUP_LIBDIR)) -lsup
LINKER := $(CC)
endif

all: sup.so

ifeq ($(filter clean,$(MAKECMDGOALS)),)
ifeq ($(SUP_BUNDLED),yes)
ifeq ($(LIB_SRCS),)
$(error sup: no libsup found (SUP_DIR, pkg-config, the compiler's paths) and no sources in $(SUP_SOURCE_DIR)/lib to build it from)
endif
ifeq ($(filter install,$(MAKECMDGOALS)),)
$(info sup: compiling libsup into the module, from $(SUP_SOURCE_DIR)/lib)
endif
else ifneq ($(SUP_BUNDLED),no)
$(error sup: SUP_BUNDLED=$(SUP_BUNDLED): expected yes, no or auto)
endif
endif

$(OBJDIR)/lib/%.o: $(SUP_SOURCE_DIR)/lib/%.cpp $(LIB_HDRS) $(SUP_INCLUDE)/sup.h
	@mkdir -p $(dir $@)
	$(CXX) $(SUP_CXXFLAGS) -c $< -o $@

$(OBJDIR)/libsup.a: $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(OBJDIR)/lsup.o: $(MODULE_SRCS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(LUA_INCDIR) $(if $(SUP_INCLUDE),-I$(SUP_INCLUDE)) -c lsup.c -o $@

sup.so: $(OBJDIR)/lsup.o $(SUP_DEPS)
	$(LINKER) $(LIBFLAG) -o $@ $(OBJDIR)/lsup.o $(SUP_LINK)

install: sup.so
	mkdir -p $(INST_LIBDIR)
	cp sup.so $(INST_LIBDIR)/

clean:
	rm -rf $(OBJDIR) sup.so

.PHONY: all install clean
