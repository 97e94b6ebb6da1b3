//go:build sup_bundled

#include "../../lib/child_input.cpp"
