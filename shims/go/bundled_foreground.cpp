//go:build sup_bundled

#include "../../lib/foreground.cpp"
