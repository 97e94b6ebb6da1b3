//go:build sup_bundled

#include "../../lib/result_builder.cpp"
