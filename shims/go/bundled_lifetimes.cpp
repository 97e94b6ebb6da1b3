//go:build sup_bundled

#include "../../lib/lifetimes.cpp"
