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

// HostDeath is what ends with a child's host, should the host die
// (SIGKILL included) or exec while the child runs (Result.HostDeath).
type HostDeath string

const (
	// HostDeathTree: the library's sentinel ends the child's whole tree
	// (its cgroup, or its process group).
	HostDeathTree HostDeath = "tree"
	// HostDeathMainProcess: no sentinel runs, and only the main process dies
	// with the host (PR_SET_PDEATHSIG).
	HostDeathMainProcess HostDeath = "main_process"
)
