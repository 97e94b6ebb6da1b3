//go:build sup_bundled

#include "../../lib/containment.cpp"
