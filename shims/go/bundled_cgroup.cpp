//go:build sup_bundled

#include "../../lib/cgroup.cpp"
