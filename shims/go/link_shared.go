//go:build cgo && !sup_static && !sup_bundled

package sup

// libsup is found through pkg-config and linked as a shared library
// (libsup.so.0). Build with -tags sup_static to link libsup.a instead.

// #cgo pkg-config: sup
import "C"
