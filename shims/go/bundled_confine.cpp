//go:build sup_bundled

#include "../../lib/confine.cpp"
