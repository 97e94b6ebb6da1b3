//go:build sup_bundled

#include "../../lib/reader_leases.cpp"
