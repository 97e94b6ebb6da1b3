//go:build sup_bundled

#include "../../lib/api_result.cpp"
