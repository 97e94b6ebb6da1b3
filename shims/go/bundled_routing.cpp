//go:build sup_bundled

#include "../../lib/routing.cpp"
