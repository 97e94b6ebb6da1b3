//go:build !cgo

package sup

// This file is built only without cgo, to fail the build with a message that
// says why: the package calls libsup through cgo.
var _ int = "package sup requires cgo: CGO_ENABLED=1 and a C compiler"
