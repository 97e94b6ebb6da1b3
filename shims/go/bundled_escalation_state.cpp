//go:build sup_bundled

#include "../../lib/escalation_state.cpp"
