//go:build sup_bundled

#include "../../lib/sandbox.cpp"
