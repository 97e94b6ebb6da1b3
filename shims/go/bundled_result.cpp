//go:build sup_bundled

#include "../../lib/result.cpp"
