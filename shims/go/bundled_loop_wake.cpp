//go:build sup_bundled

#include "../../lib/loop_wake.cpp"
