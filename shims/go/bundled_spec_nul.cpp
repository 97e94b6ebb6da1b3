//go:build sup_bundled

#include "../../lib/spec_nul.cpp"
