//go:build sup_bundled

#include "../../lib/proc_tree.cpp"
