//go:build sup_bundled

#include "../../lib/contain.cpp"
