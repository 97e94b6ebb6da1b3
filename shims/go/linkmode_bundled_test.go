//go:build sup_bundled

package sup_test

// linkMode names how this test binary holds libsup: compiled from lib/ into it.
const linkMode = "bundled"
