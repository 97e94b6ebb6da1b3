//go:build sup_bundled

#include "../../lib/direct_read.cpp"
