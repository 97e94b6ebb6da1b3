//go:build sup_bundled

#include "../../lib/input_wait.cpp"
