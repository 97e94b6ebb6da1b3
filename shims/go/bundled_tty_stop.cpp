//go:build sup_bundled

#include "../../lib/tty_stop.cpp"
