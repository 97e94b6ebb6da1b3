//go:build sup_bundled

#include "../../lib/signal_names.cpp"
