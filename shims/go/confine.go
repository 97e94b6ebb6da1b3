//go:build cgo

package sup

// #include <sup.h>
import "C"

import (
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
