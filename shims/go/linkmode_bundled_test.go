//go:build sup_bundled

package sup_test

// linkMode names how this test binary holds libsup: compiled from csrc/ into it.
const linkMode = "bundled"
