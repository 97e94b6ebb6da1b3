//go:build sup_bundled

#include "../../lib/engine.cpp"
