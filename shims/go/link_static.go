//go:build cgo && sup_static && !sup_bundled

package sup

// With -tags sup_static, libsup.a is linked into the binary; libuv, cJSON
// and the C++ runtime stay shared (Debian ships no static cJSON). The
// directories come from the environment, as pkg-config gives them:
//
//	export CGO_CFLAGS="$(pkg-config --cflags sup)"
//	export CGO_LDFLAGS="$(pkg-config --libs-only-L sup)"

// #cgo LDFLAGS: -l:libsup.a -lstdc++ -lm
// #cgo pkg-config: libuv libcjson
import "C"
