//go:build sup_bundled

#include "../../lib/engine_fork.cpp"
