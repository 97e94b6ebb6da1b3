//go:build sup_bundled

#include "../../lib/capture.cpp"
