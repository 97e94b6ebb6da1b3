//go:build cgo

package sup

// Phase says which limit ended a child whose outcome is IdleTimeout.
type Phase int

// The phases, with the values of the C ABI's enum sup_phase.
const (
	PhaseNone        Phase = 0 // not an idle timeout
	PhaseFirstOutput Phase = 1 // Cmd.FirstOutputTimeout: no byte at all in time
	PhaseIdle        Phase = 2 // Cmd.IdleTimeout: silent too long after a byte
	PhaseInput       Phase = 3 // Cmd.InputWaitTimeout: waited too long for input
)

func (p Phase) String() string {
	switch p {
	case PhaseFirstOutput:
		return "first_output"
	case PhaseIdle:
		return "idle"
	case PhaseInput:
		return "input"
	}
	return "none"
}
