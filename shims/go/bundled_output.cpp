//go:build sup_bundled

#include "../../lib/output.cpp"
