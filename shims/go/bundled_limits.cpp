//go:build sup_bundled

#include "../../lib/limits.cpp"
