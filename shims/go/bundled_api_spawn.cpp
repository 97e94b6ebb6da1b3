//go:build sup_bundled

#include "../../lib/api_spawn.cpp"
