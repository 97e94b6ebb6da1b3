//go:build sup_bundled

#include "../../lib/spec.cpp"
