//go:build sup_bundled

#include "../../lib/sentinel_run.cpp"
