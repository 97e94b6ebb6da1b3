//go:build cgo

package sup

// #include <sup.h>
import "C"

import (
	"encoding/json"
	"runtime"
	"strconv"
)

// Limits are resource limits the child sets on itself before exec (the
// spec's "limits"); 0 leaves the host's own. In cgroup mode (Cmd.Contain)
// MemoryBytes and Processes bound the whole tree where the host's cgroup
// allows; Result.Confined says which mechanism applied, Result.Limit which
// limit ended the child.
type Limits struct {
	MemoryBytes int64 // RLIMIT_DATA, or the cgroup's memory.max
	CPUSeconds  int64 // RLIMIT_CPU: SIGXCPU, then SIGKILL a second later
	Processes   int64 // RLIMIT_NPROC (the user's processes), or pids.max
	FileBytes   int64 // RLIMIT_FSIZE: SIGXFSZ
	OpenFiles   int64 // RLIMIT_NOFILE
	NoCoreDump  bool  // RLIMIT_CORE 0
}

// Sandbox is a Landlock (and seccomp) sandbox the child applies to itself
// before exec (the spec's "sandbox"): nothing is writable but Write (and
// /dev/null, /dev/tty, its terminal); everything is readable and executable
// unless Read or Exec (when not nil) lists what is. Best effort: what the
// kernel cannot enforce is listed in Result.Confined, unless Strict makes
// Start fail instead.
type Sandbox struct {
	Write, Read, Exec []string
	NoNetwork         bool // refuse sockets but AF_UNIX (seccomp, Landlock TCP)
	Strict            bool // fail Start (ENOTSUP) where the kernel cannot enforce it all
	Tmp               bool // a private TMPDIR, removed with the Process
}

func appendInt64Key(b []byte, first *bool, key string, v int64) []byte {
	if v == 0 {
		return b
	}
	if !*first {
		b = append(b, ',')
	}
	*first = false
	b = appendString(b, key)
	b = append(b, ':')
	return strconv.AppendInt(b, v, 10)
}

func appendPaths(b []byte, key string, paths []string) []byte {
	b = append(b, ',')
	b = appendString(b, key)
	b = append(b, ":["...)
	for i, p := range paths {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, p)
	}
	return append(b, ']')
}

// appendConfinement appends "limits", "sandbox", "user"/"group"/"groups"
// and "input_wait_timeout_ms".
func (c *Cmd) appendConfinement(b []byte) ([]byte, error) {
	if l := c.Limits; l != nil {
		for _, v := range []struct {
			key string
			n   int64
		}{{"memory_bytes", l.MemoryBytes}, {"cpu_seconds", l.CPUSeconds}, {"processes", l.Processes}, {"file_bytes", l.FileBytes}, {"open_files", l.OpenFiles}} {
			if v.n < 0 {
				return nil, specErr("limits." + v.key + ": must not be negative")
			}
		}
		b = append(b, `,"limits":{`...)
		first := true
		b = appendInt64Key(b, &first, "memory_bytes", l.MemoryBytes)
		b = appendInt64Key(b, &first, "cpu_seconds", l.CPUSeconds)
		b = appendInt64Key(b, &first, "processes", l.Processes)
		b = appendInt64Key(b, &first, "file_bytes", l.FileBytes)
		b = appendInt64Key(b, &first, "open_files", l.OpenFiles)
		if l.NoCoreDump {
			if !first {
				b = append(b, ',')
			}
			b = append(b, `"core_dump":false`...)
		}
		b = append(b, '}')
	}
	if s := c.Sandbox; s != nil {
		b = append(b, `,"sandbox":{"network":`...)
		b = strconv.AppendBool(b, !s.NoNetwork)
		b = append(b, `,"strict":`...)
		b = strconv.AppendBool(b, s.Strict)
		b = append(b, `,"tmp":`...)
		b = strconv.AppendBool(b, s.Tmp)
		b = appendPaths(b, "write", s.Write)
		if s.Read != nil {
			b = appendPaths(b, "read", s.Read)
		}
		if s.Exec != nil {
			b = appendPaths(b, "exec", s.Exec)
		}
		b = append(b, '}')
	}
	if cr := c.Credential; cr != nil {
		b = append(b, `,"user":`...)
		b = strconv.AppendUint(b, uint64(cr.Uid), 10)
		b = append(b, `,"group":`...)
		b = strconv.AppendUint(b, uint64(cr.Gid), 10)
		if !cr.NoSetGroups {
			b = append(b, `,"groups":[`...)
			for i, g := range cr.Groups {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendUint(b, uint64(g), 10)
			}
			b = append(b, ']')
		}
	}
	if c.InputWaitTimeout < 0 {
		return nil, specErr("input_wait_timeout_ms: must not be negative")
	}
	if c.InputWaitTimeout > 0 {
		b = append(b, `,"input_wait_timeout_ms":`...)
		b = strconv.AppendInt(b, ms(c.InputWaitTimeout), 10)
	}
	return b, nil
}

// InputWanted reports whether the child is waiting for input it cannot get
// (a process of its tree asleep reading its stdin, every thread asleep, or
// a process stopped by SIGTTIN/SIGTTOU), as libsup's sup_input_wanted sees
// it. A call looks at /proc (about a millisecond; up to 40 ms the first time
// it sees a reader). Errors: one matching syscall.EPERM when sup may not
// look (the answer is unknown, never a false false), os.ErrProcessDone once
// the result is final.
func (p *Process) InputWanted() (bool, error) {
	defer runtime.KeepAlive(p)
	h := p.h
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return false, errClosed("input_wanted")
	}
	var rc C.int
	blockingCall(func() { rc = C.sup_input_wanted(h.p) })
	if rc < 0 {
		return false, cerr("input_wanted", rc)
	}
	return rc == 1, nil
}

// Confinement is Result.Confined decoded: what confined the child and how,
// one entry per limit given (nil: not given), the sandbox and the ids.
type Confinement struct {
	MemoryBytes *AppliedLimit   `json:"memory_bytes"`
	CPUSeconds  *AppliedLimit   `json:"cpu_seconds"`
	Processes   *AppliedLimit   `json:"processes"`
	FileBytes   *AppliedLimit   `json:"file_bytes"`
	OpenFiles   *AppliedLimit   `json:"open_files"`
	CoreDump    *AppliedLimit   `json:"core_dump"` // Value 0: RLIMIT_CORE 0
	Sandbox     *AppliedSandbox `json:"sandbox"`
	User        *AppliedUser    `json:"user"`
}

// AppliedLimit is how one limit was applied.
type AppliedLimit struct {
	// Value is the limit given (0 for NoCoreDump).
	Value int64
	// Mechanism is "rlimit" or "cgroup"; "" when nothing could apply it
	// (Processes for a child running as root, which RLIMIT_NPROC exempts),
	// with Reason saying why.
	Mechanism string
	// Scope is whom it bounds: "process" (each process), "user" (all the
	// processes of the child's user), "tree" (the child's cgroup).
	Scope string
	// Reason says why the tree-wide cgroup was not used, or why nothing
	// applied; "" otherwise.
	Reason string
}

// UnmarshalJSON reads the library's entry, whose "value" is a number, or
// false for core_dump.
func (l *AppliedLimit) UnmarshalJSON(b []byte) error {
	var v struct {
		Value     json.RawMessage `json:"value"`
		Mechanism *string         `json:"mechanism"`
		Scope     *string         `json:"scope"`
		Reason    *string         `json:"reason"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*l = AppliedLimit{}
	if string(v.Value) != "false" {
		if err := json.Unmarshal(v.Value, &l.Value); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		to   *string
		from *string
	}{{&l.Mechanism, v.Mechanism}, {&l.Scope, v.Scope}, {&l.Reason, v.Reason}} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
	return nil
}

// AppliedSandbox is the Landlock and seccomp sandbox as applied.
type AppliedSandbox struct {
	LandlockABI int  `json:"landlock_abi"` // 0: no Landlock
	Filesystem  bool `json:"filesystem"`   // the filesystem rules were applied
	// Network is whether the network refusal was applied; nil when the
	// sandbox allows the network.
	Network     *bool    `json:"network"`
	LandlockTCP bool     `json:"landlock_tcp"` // Landlock's TCP rules (ABI 4)
	NoNewPrivs  bool     `json:"no_new_privs"`
	NotEnforced []string `json:"not_enforced"` // what the kernel could not enforce
	Tmp         string   `json:"tmp"`          // the private TMPDIR (Sandbox.Tmp); "" when not asked
}

// AppliedUser is the ids the child was given; nil: unchanged.
type AppliedUser struct {
	UID    *uint32  `json:"uid"`
	GID    *uint32  `json:"gid"`
	Groups []uint32 `json:"groups"`
}

// Confinement decodes Confined; nil, nil without limits, sandbox or
// credentials.
func (r *Result) Confinement() (*Confinement, error) {
	if r.Confined == nil {
		return nil, nil
	}
	c := new(Confinement)
	if err := json.Unmarshal(r.Confined, c); err != nil {
		return nil, err
	}
	return c, nil
}
