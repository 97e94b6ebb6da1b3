//go:build cgo

package sup

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Cmd describes a command to run. Its fields map onto libsup's JSON spec; the
// zero value of each means the library's default. A Cmd may be started any
// number of times: each Start spawns a new process from its current fields.
type Cmd struct {
	// Args is the argv, Args[0] included: Command's name first. Args[0] is
	// searched in the child's PATH unless it contains a '/'. Any bytes but
	// NUL may be used (a NUL fails Start with EINVAL, Part PartSpec).
	Args []string

	// Dir is the child's working directory; "" is the host's.
	Dir string

	// Env, when not nil, is the child's whole environment, as in os/exec:
	// "KEY=value" entries (a later entry for the same KEY wins), nothing
	// inherited; Args[0] is then searched in Env's PATH (or /bin:/usr/bin
	// when it has none). nil inherits the host's environment. Setenv and
	// Unsetenv apply on top of either.
	Env []string

	// Stdin is the child's stdin:
	//   - nil: /dev/null (unless InheritStdin is set);
	//   - os.Stdin: the host's stdin itself, as InheritStdin;
	//   - any other *os.File: that file itself, passed as a descriptor
	//     (the child reads, seeks and fstats it directly; no goroutine);
	//   - a []byte or a string: its bytes, then EOF (passed in the spec);
	//   - any other io.Reader: copied to the child through a pipe by a
	//     goroutine, then EOF. The goroutine ends when the reader returns an
	//     error (io.EOF) or the child stops reading; a read error other than
	//     io.EOF is returned by Wait (an *Error with Op "stdin") when the
	//     process otherwise succeeded, as os/exec does.
	// StdinPipe sets it to a pipe the caller writes.
	Stdin any
	// InheritStdin gives the child the host's stdin (Stdin must be nil).
	InheritStdin bool

	// Stdout and Stderr say where the child's stdout and stderr go. As in
	// os/exec, except nil:
	//   - nil: captured (Result.Stdout, Process.Stdout) and nothing else
	//     (os/exec discards it);
	//   - os.Stdout for Stdout, os.Stderr for Stderr: the host's own
	//     descriptor. The child writes to it directly (a terminal stays a
	//     terminal; nothing captured), or, when IdleTimeout or
	//     FirstOutputTimeout needs to hear the stream, through sup, which
	//     captures every byte and copies it to the host's descriptor as it
	//     arrives;
	//   - any other *os.File: the file itself, passed as a descriptor (the
	//     child writes, seeks and fstats it directly; nothing captured), or,
	//     with IdleTimeout or FirstOutputTimeout, captured and copied to it
	//     as any other writer, so that the clock hears the stream;
	//   - io.Discard: /dev/null, nothing captured (with IdleTimeout or
	//     FirstOutputTimeout, sup still reads it, so that the clock hears
	//     it, and keeps it as for nil);
	//   - Stderr the same writer as Stdout: one stream, both in write order,
	//     captured as Result.Stdout (Result.Stderr stays empty) and going
	//     where Stdout goes;
	//   - any other io.Writer: captured, and copied to the writer by a
	//     goroutine as the child writes. Wait returns once the copy is
	//     complete; a write error, or bytes lost because the writer fell
	//     behind the kept output (a *GapError; set Backpressure to make the
	//     child wait), is returned by Wait when the process otherwise
	//     succeeded, as os/exec returns its copy errors.
	Stdout, Stderr io.Writer

	// ExtraFiles are more open files for the child, as in os/exec: entry i
	// is the child's descriptor 3+i (the file itself, shared as with any
	// inherited descriptor). Unlike os/exec, a nil entry is an error: sup
	// closes every descriptor it is not given, and cannot leave a hole.
	// The files must stay open until Start returns.
	ExtraFiles []*os.File

	// PTY, when not nil, runs the child on a new pseudo-terminal of that
	// size (see PTY). Stdin may then be nil (no input; the terminal stays
	// open), a StdinPipe, a []byte, a string or an io.Reader, all written
	// to the terminal as typed input; Stderr must be nil.
	PTY *PTY

	// FirstOutputTimeout ends the child when it has written no byte on
	// stdout or stderr this long after it started (outcome IdleTimeout,
	// Result.Phase PhaseFirstOutput); IdleTimeout then counts from the
	// first byte. 0 is off.
	FirstOutputTimeout time.Duration
	// IdleTimeout ends the child after this long with no byte on stdout or
	// stderr; 0 is off. Sub-millisecond values round up to 1 ms. Durations
	// here beyond the library's limit (1e12 ms, 31 years), up to
	// math.MaxInt64, mean "never" and are passed as that limit.
	IdleTimeout time.Duration
	// MaxRuntime ends the child this long after it started; 0 is off.
	MaxRuntime time.Duration
	// Grace is the time between the interrupt signal and SIGKILL; 0 is the
	// library's default (5 s).
	Grace time.Duration
	// Signal is the interrupt signal; 0 is SIGTERM.
	Signal syscall.Signal
	// KillOnTimeout sends SIGKILL at once on a timeout instead of the
	// interrupt signal and grace period.
	KillOnTimeout bool
	// MaxOutput is the number of bytes kept per stream: beyond it the first
	// half and the newest half are kept, and all bytes are counted. 0 is the
	// library's default (16 MiB); a negative value keeps nothing. Values
	// beyond the library's limit (1 TiB) are passed as that limit.
	MaxOutput int
	// Backpressure, when > 0, makes the library stop reading a stream while
	// more than this many of its bytes have not been read by a live reader
	// (Process.Stdout, Process.Stderr), so the child blocks on write and the
	// reader loses nothing. Every captured stream must then be read (by
	// Process.Stdout or Stderr, or a Cmd.Stdout or Stderr writer): one that
	// nobody reads stops the child once that many bytes wait. 0 (the
	// default): both pipes are always drained.
	Backpressure int

	// Contain is how the child's process tree is contained: ContainGroup
	// ("" is the same), ContainCgroup or ContainAuto.
	Contain Containment
	// CgroupParent is the cgroup v2 directory under which a child's cgroup
	// is made (ContainCgroup, ContainAuto); "" is the library's choice
	// ($SUP_CGROUP_PARENT, else the host's own cgroup's).
	CgroupParent string
	// InputWaitTimeout ends the child (outcome IdleTimeout, Result.Phase
	// PhaseInput) once it has waited this long for input it cannot get, as
	// Process.InputWanted sees it; 0 is off.
	InputWaitTimeout time.Duration
	// Limits, when not nil, are resource limits for the child (see Limits).
	Limits *Limits
	// Sandbox, when not nil, confines what the child may write, read,
	// execute and connect to (see Sandbox).
	Sandbox *Sandbox
	// Credential, when not nil, runs the child as that user and group, as
	// os/exec's SysProcAttr.Credential: Uid, Gid, and Groups as its exact
	// supplementary groups unless NoSetGroups. Needs a privileged host
	// (else Start fails with EPERM).
	Credential *syscall.Credential

	// RequireSentinel refuses to start the child (an *Error with Code
	// ENOTSUP saying why) where no sentinel runs, so that only its main
	// process, not its tree, would die with the host
	// (Result.HostDeath is then HostDeathMainProcess).
	RequireSentinel bool

	env      []envEntry
	combined bool // CombinedOutput: stderr joins stdout
}

type envEntry struct {
	name, value string
	unset       bool
}

// Command returns a Cmd that runs name with the given arguments. The host's
// environment is inherited (unless Env is set), except for what Setenv and
// Unsetenv change.
func Command(name string, arg ...string) *Cmd {
	return &Cmd{Args: append([]string{name}, arg...)}
}

// String returns a human-readable description of c, for debugging: its Args
// joined by spaces, as os/exec's Cmd.String (which also resolves the path).
func (c *Cmd) String() string { return strings.Join(c.Args, " ") }

// Setenv sets an environment variable of the child, on top of the host's
// environment (inherited) or of Env, when set.
func (c *Cmd) Setenv(name, value string) { c.setEnv(envEntry{name: name, value: value}) }

// Unsetenv removes an environment variable from the child's environment.
func (c *Cmd) Unsetenv(name string) { c.setEnv(envEntry{name: name, unset: true}) }

func (c *Cmd) setEnv(e envEntry) {
	for i := range c.env {
		if c.env[i].name == e.name {
			c.env[i] = e
			return
		}
	}
	c.env = append(c.env, e)
}

func specErr(detail string) error {
	return &Error{Op: "start", Code: syscall.EINVAL, Detail: "spec: " + detail, Part: PartSpec}
}

// The library's limits: "idle_timeout_ms", "max_runtime_ms" and "grace_ms"
// up to 1e12 ms, byte counts up to 1 TiB.
const (
	maxMs    = 1_000_000_000_000
	maxBytes = 1 << 40
)

// ms converts a duration to whole milliseconds, rounding up so that a
// positive duration never becomes 0 ("off"), and clamped to the library's
// limit (a longer duration, up to math.MaxInt64, means "never").
func ms(d time.Duration) int64 {
	m := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		m++
	}
	return min(m, maxMs)
}

// environ returns the spec's "env" entries: Env's (when set), then what
// Setenv and Unsetenv changed, one entry per name.
func (c *Cmd) environ() ([]envEntry, error) {
	if c.Env == nil {
		return c.env, nil
	}
	var env []envEntry
	at := map[string]int{}
	set := func(e envEntry) {
		if i, ok := at[e.name]; ok {
			env[i] = e
			return
		}
		at[e.name] = len(env)
		env = append(env, e)
	}
	for _, kv := range c.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, specErr(fmt.Sprintf("env: Env entry %q is not KEY=value", kv))
		}
		set(envEntry{name: k, value: v})
	}
	for _, e := range c.env {
		set(e) // an unset is null: with env_clear, the name is simply absent
	}
	return env, nil
}

// stdinSource returns the writer of a Start's stdin pipe, or nil when
// stdin is not a pipe. A StdinPipe serves one Start.
func (c *Cmd) stdinSource() (*stdinWriter, error) {
	switch v := c.Stdin.(type) {
	case *stdinWriter:
		if !v.used.CompareAndSwap(false, true) {
			return nil, specErr("stdin: the StdinPipe was used by an earlier Start; set Stdin anew")
		}
		return v, nil
	case nil:
		return nil, nil
	case []byte, string:
		if b, ok := v.([]byte); ok && b == nil {
			return nil, nil
		}
		if c.PTY == nil {
			return nil, nil // in the spec
		}
		w := newStdinWriter()
		if s, ok := v.(string); ok {
			w.src = strings.NewReader(s)
		} else {
			w.src = bytes.NewReader(v.([]byte))
		}
		return w, nil
	case io.Reader:
		if f, ok := v.(*os.File); ok && (f == os.Stdin || c.PTY == nil) {
			return nil, nil // in the spec: "inherit" or {"fd": N}
		}
		w := newStdinWriter()
		w.src = v
		return w, nil
	}
	return nil, nil
}

// spec builds the library's JSON spec. Strings are escaped by hand: '"', '\'
// and bytes below 0x20 are escaped, every other byte passes through raw, so
// that any byte string (valid UTF-8 or not) reaches the kernel unchanged.
func (c *Cmd) spec() ([]byte, error) {
	if len(c.Args) == 0 {
		return nil, specErr("argv: must be a non-empty array of strings")
	}
	b := make([]byte, 0, 128)
	b = append(b, `{"argv":[`...)
	for i, a := range c.Args {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, a)
	}
	b = append(b, ']')
	if c.Dir != "" {
		b = append(b, `,"cwd":`...)
		b = appendString(b, c.Dir)
	}
	env, err := c.environ()
	if err != nil {
		return nil, err
	}
	if c.Env != nil {
		b = append(b, `,"env_clear":true`...)
	}
	if len(env) > 0 {
		b = append(b, `,"env":{`...)
		for i, e := range env {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, e.name)
			b = append(b, ':')
			if e.unset {
				b = append(b, "null"...)
			} else {
				b = appendString(b, e.value)
			}
		}
		b = append(b, '}')
	}
	stdin := c.Stdin
	if v, ok := stdin.([]byte); ok && v == nil {
		stdin = nil
	}
	if stdin != nil && c.InheritStdin {
		return nil, specErr("stdin: Stdin and InheritStdin are both set")
	}
	if c.PTY != nil {
		if c.InheritStdin || stdin == io.Reader(os.Stdin) {
			return nil, specErr("stdin: a PTY's input is typed through Stdin or StdinPipe; the host's stdin cannot be it")
		}
		switch stdin.(type) {
		case nil, []byte, string, io.Reader, *stdinWriter:
		default:
			return nil, specErr(fmt.Sprintf("stdin: Stdin must be nil, a []byte, a string or an io.Reader, not %T", stdin))
		}
		b = c.PTY.appendSpec(b)
		stdin = nil // no "stdin" key: the terminal is the input
	}
	switch v := stdin.(type) {
	case nil:
		if c.InheritStdin {
			b = append(b, `,"stdin":"inherit"`...)
		}
	case []byte:
		b = appendBase64(b, v)
	case string:
		b = appendBase64(b, []byte(v))
	case *stdinWriter:
		b = append(b, `,"stdin":"pipe"`...)
	case *os.File:
		if v == nil {
			return nil, specErr("stdin: Stdin is a nil *os.File")
		}
		if v == os.Stdin {
			b = append(b, `,"stdin":"inherit"`...)
		} else {
			b = append(b, `,"stdin":{"fd":`...)
			b = strconv.AppendUint(b, uint64(v.Fd()), 10)
			b = append(b, '}')
		}
	case io.Reader:
		if v == io.Reader(os.Stdin) {
			b = append(b, `,"stdin":"inherit"`...)
		} else {
			b = append(b, `,"stdin":"pipe"`...)
		}
	default:
		return nil, specErr(fmt.Sprintf("stdin: Stdin must be nil, a []byte, a string or an io.Reader, not %T", v))
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"idle_timeout_ms", c.IdleTimeout}, {"first_output_timeout_ms", c.FirstOutputTimeout}, {"max_runtime_ms", c.MaxRuntime}, {"grace_ms", c.Grace}} {
		if d.v < 0 {
			return nil, specErr(d.key + ": must not be negative")
		}
		if d.v > 0 {
			b = append(b, `,"`...)
			b = append(b, d.key...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, ms(d.v), 10)
		}
	}
	if c.Signal != 0 {
		b = append(b, `,"interrupt_signal":"`...)
		b = strconv.AppendInt(b, int64(c.Signal), 10)
		b = append(b, '"')
	}
	if c.Contain != "" {
		b = append(b, `,"contain":`...)
		b = appendString(b, string(c.Contain))
	}
	if c.CgroupParent != "" {
		b = append(b, `,"cgroup_parent":`...)
		b = appendString(b, c.CgroupParent)
	}
	if c.RequireSentinel {
		b = append(b, `,"require_sentinel":true`...)
	}
	b, err = c.appendRoutes(b)
	if err != nil {
		return nil, err
	}
	b, err = c.appendFds(b)
	if err != nil {
		return nil, err
	}
	b, err = c.appendConfinement(b)
	if err != nil {
		return nil, err
	}
	if c.KillOnTimeout {
		b = append(b, `,"on_timeout":"kill"`...)
	}
	switch {
	case c.MaxOutput > 0:
		b = append(b, `,"max_output_bytes":`...)
		b = strconv.AppendInt(b, min(int64(c.MaxOutput), maxBytes), 10)
	case c.MaxOutput < 0:
		b = append(b, `,"max_output_bytes":0`...)
	}
	if c.Backpressure < 0 {
		return nil, specErr("backpressure_bytes: must not be negative")
	}
	if c.Backpressure > 0 {
		b = append(b, `,"backpressure_bytes":`...)
		b = strconv.AppendInt(b, min(int64(c.Backpressure), maxBytes), 10)
	}
	b = append(b, '}')
	return b, nil
}

func appendBase64(b, data []byte) []byte {
	b = append(b, `,"stdin":{"base64":"`...)
	n := len(b)
	b = append(b, make([]byte, base64.StdEncoding.EncodedLen(len(data)))...)
	base64.StdEncoding.Encode(b[n:], data)
	return append(b, `"}`...)
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

const hexDigits = "0123456789abcdef"

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"' || ch == '\\':
			b = append(b, '\\', ch)
		case ch < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[ch>>4], hexDigits[ch&0xf])
		default:
			b = append(b, ch) // bytes >= 0x80 raw, valid UTF-8 or not
		}
	}
	return append(b, '"')
}
