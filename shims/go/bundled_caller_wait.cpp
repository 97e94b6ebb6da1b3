//go:build sup_bundled

#include "../../lib/caller_wait.cpp"
