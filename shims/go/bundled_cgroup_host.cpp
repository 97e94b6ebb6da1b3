//go:build sup_bundled

#include "../../lib/cgroup_host.cpp"
