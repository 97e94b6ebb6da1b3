//go:build sup_bundled

#include "../../lib/spawner.cpp"
