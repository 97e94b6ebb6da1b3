//go:build sup_bundled

#include "../../lib/sentinel.cpp"
