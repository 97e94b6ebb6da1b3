//go:build sup_bundled

#include "../../lib/confine_spec.cpp"
