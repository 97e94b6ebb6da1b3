//go:build sup_bundled

#include "../../lib/proc_look.cpp"
