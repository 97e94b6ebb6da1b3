//go:build sup_bundled

#include "../../lib/deadlines.cpp"
