//go:build sup_bundled

#include "../../lib/sentinel_link.cpp"
