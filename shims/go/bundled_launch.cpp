//go:build sup_bundled

#include "../../lib/launch.cpp"
