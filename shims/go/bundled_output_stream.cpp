//go:build sup_bundled

#include "../../lib/output_stream.cpp"
