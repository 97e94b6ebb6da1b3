//go:build sup_bundled

#include "../../lib/errno_text.cpp"
