//go:build sup_bundled

#include "../../lib/buffer_pool.cpp"
