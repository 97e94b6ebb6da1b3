//go:build sup_bundled

#include "../../lib/input_watch.cpp"
