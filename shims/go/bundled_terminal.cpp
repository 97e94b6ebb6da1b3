//go:build sup_bundled

#include "../../lib/terminal.cpp"
