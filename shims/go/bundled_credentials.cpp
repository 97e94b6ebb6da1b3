//go:build sup_bundled

#include "../../lib/credentials.cpp"
