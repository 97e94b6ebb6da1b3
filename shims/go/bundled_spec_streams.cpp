//go:build sup_bundled

#include "../../lib/spec_streams.cpp"
