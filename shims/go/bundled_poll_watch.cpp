//go:build sup_bundled

#include "../../lib/poll_watch.cpp"
