//go:build sup_bundled

#include "../../lib/deadline_timer.cpp"
