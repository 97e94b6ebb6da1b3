//go:build sup_bundled

#include "../../lib/escalation.cpp"
