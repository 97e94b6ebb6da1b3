//go:build sup_bundled

#include "../../lib/streams.cpp"
