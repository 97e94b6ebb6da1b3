//go:build sup_static && !sup_bundled

package sup_test

// linkMode names how this test binary holds libsup: libsup.a linked into the test binary.
const linkMode = "static"
