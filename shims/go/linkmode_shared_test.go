//go:build !sup_static && !sup_bundled

package sup_test

// linkMode names how this test binary holds libsup: libsup.so loaded by the test binary.
const linkMode = "shared"
