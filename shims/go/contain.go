//go:build cgo

package sup

// Containment is how a child's process tree is contained (Cmd.Contain,
// Result.Contained).
type Containment string

// The containments.
const (
	// ContainGroup: the child's process group (the default). What leaves
	// the group (setsid, setpgid) is beyond sup's signals.
	ContainGroup Containment = "group"
	// ContainCgroup: a cgroup v2 of the child's own, so that every process
	// it ever started is signalled and ended with it, whatever its group
	// or session. Start fails (errors.Is(err, errors.ErrUnsupported)) where
	// no writable cgroup v2 hierarchy is available.
	ContainCgroup Containment = "cgroup"
	// ContainAuto: a cgroup where one can be made, else the group
	// (Result.ContainFallback says why).
	ContainAuto Containment = "auto"
)
