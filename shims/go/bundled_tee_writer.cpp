//go:build sup_bundled

#include "../../lib/tee_writer.cpp"
