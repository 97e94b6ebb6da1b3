//go:build sup_bundled

#include "../../lib/launch_plan.cpp"
