//go:build sup_bundled

#include "../../lib/input.cpp"
