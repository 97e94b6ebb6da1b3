//go:build sup_bundled

#include "../../lib/host_signal.cpp"
