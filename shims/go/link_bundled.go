//go:build cgo && sup_bundled

package sup

// With -tags sup_bundled, cgo compiles libsup from its own sources, lib/ and
// include/ of this module (bundled_*.cpp include them), into the binary: no
// meson build, no PKG_CONFIG_PATH or CGO_LDFLAGS; only libuv's and cJSON's
// headers (Debian: libuv1-dev, libcjson-dev), found by pkg-config, and a
// C++17 compiler. As with sup_static, the binary runs itself as the sentinel.

//go:generate sh gen_bundled.sh

// #cgo CPPFLAGS: -I${SRCDIR}/../../include -I${SRCDIR}/../../lib -DSUP_BUILDING -D_GNU_SOURCE
// #cgo CXXFLAGS: -std=c++17 -fvisibility=hidden
// #cgo LDFLAGS: -lstdc++ -lm -lpthread
// #cgo pkg-config: libuv libcjson
import "C"
