//go:build sup_bundled

#include "../../lib/main_process.cpp"
