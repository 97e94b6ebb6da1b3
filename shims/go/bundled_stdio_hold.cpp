//go:build sup_bundled

#include "../../lib/stdio_hold.cpp"
