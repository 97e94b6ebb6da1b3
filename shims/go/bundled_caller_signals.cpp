//go:build sup_bundled

#include "../../lib/caller_signals.cpp"
