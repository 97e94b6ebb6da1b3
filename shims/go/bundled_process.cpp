//go:build sup_bundled

#include "../../lib/process.cpp"
