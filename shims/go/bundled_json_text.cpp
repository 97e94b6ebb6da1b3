//go:build sup_bundled

#include "../../lib/json_text.cpp"
