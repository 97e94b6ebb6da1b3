// The Go package is shims/go (import path github.com/sup-project/sup/shims/go).
// The module is rooted here, not there, so that it holds lib/ and include/:
// the package's bundled build (-tags sup_bundled) compiles them in place.
module github.com/sup-project/sup

go 1.21
