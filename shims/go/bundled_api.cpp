//go:build sup_bundled

#include "../../lib/api.cpp"
