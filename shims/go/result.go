//go:build cgo

package sup

import (
	"encoding/json"
	"strconv"
	"syscall"
	"time"
	"unicode/utf8"
)

// SentSignal is a signal sup sent to the child's process group.
type SentSignal struct {
	Signal syscall.Signal
	At     time.Duration // since the spawn
}

// Result is the final, immutable result of a process.
type Result struct {
	Outcome    Outcome
	ExitCode   int            // the main process's exit code; -1 when it has none
	Signal     syscall.Signal // the signal that killed the main process; 0 when none
	ForcedKill bool           // sup had to send SIGKILL
	StatusLost bool           // the host reaped the child itself (SIGCHLD ignored, waitpid(-1))
	Duration   time.Duration  // from spawn until the result was final
	Pid        int

	// Stdout and Stderr are the exact bytes kept: everything, or the head
	// and the newest tail joined when more than Cmd.MaxOutput was written.
	Stdout, Stderr []byte
	// StdoutOmitted and StderrOmitted count the bytes dropped from the middle.
	StdoutOmitted, StderrOmitted int64
	// StdoutTotal and StderrTotal count every byte the child wrote.
	StdoutTotal, StderrTotal int64

	SignalsSent []SentSignal // in order; the SIGCONT sent beside an interrupt is not listed

	UserTime, SystemTime time.Duration // the main process's rusage
	MaxRSSKB             int64

	// Phase says which limit ended a child whose Outcome is IdleTimeout:
	// PhaseFirstOutput (Cmd.FirstOutputTimeout) or PhaseIdle; PhaseNone for
	// every other outcome.
	Phase Phase

	// Contained is how the child's tree was contained: ContainGroup or
	// ContainCgroup (ContainAuto gives one of them).
	Contained Containment
	// ContainFallback says why ContainAuto fell back to the group; "" when
	// it did not.
	ContainFallback string
	// LeftoversEnded counts the processes of a cgroup-contained tree still
	// alive after the main process had ended, which sup ended; -1 in group
	// mode, where they cannot be counted.
	LeftoversEnded int64
	// TreeUserTime and TreeSystemTime are the CPU time of the whole tree,
	// every process it ever started (cgroup mode; 0 in group mode, where
	// TreeCPUKnown is false).
	TreeUserTime, TreeSystemTime time.Duration
	TreeCPUKnown                 bool
	// CgroupLeft names a cgroup directory of the child's that could not be
	// removed; "" when none.
	CgroupLeft string
	// HostDeath says what would have ended with the host had it died
	// (SIGKILL included) while the child ran: HostDeathTree, or
	// HostDeathMainProcess where no sentinel ran (Cmd.RequireSentinel).
	HostDeath HostDeath

	// WaitingForInput is whether the child was waiting for input at its
	// end (the library's "waiting_for_input"); nil when nobody asked, or
	// sup could not see.
	WaitingForInput *bool
	// Confined is the library's "confined" object, as JSON: the limits,
	// sandbox and user the child was given and how; nil without them.
	Confined json.RawMessage
	// Limit names the limit that ended the child ("memory", "processes",
	// "cpu", "file_size"); "" when none did.
	Limit string
	// StdoutTeeError and StderrTeeError name the errno with which a copy to
	// the host's descriptor failed ("EPIPE": its reader had gone, and the
	// child's next write to that stream failed too); "" when none did.
	StdoutTeeError, StderrTeeError string
	// TTYForeground is whether the child was given the terminal's
	// foreground, when the spec asked for it; nil when it did not ask.
	// TTYRefused says why not.
	TTYForeground *bool
	TTYRefused    string

	stdoutHead, stderrHead   int    // kept bytes before the gap
	stdoutRoute, stderrRoute string // the result's "routed"
}

// Success reports whether the process exited by itself with status 0.
func (r *Result) Success() bool { return r.Outcome == Exited && r.ExitCode == 0 && !r.StatusLost }

// Err returns nil for a process that exited by itself with status 0, and an
// *ExitError holding r for anything else (a non-zero exit, a signal, a
// timeout, an interrupt, an abort, a lost status).
func (r *Result) Err() error {
	if r.Success() {
		return nil
	}
	return &ExitError{Result: r}
}

// String describes how the process ended, in os/exec's words where they
// apply: "exit status 0", "exit status 3", "signal: killed"; an outcome sup
// decided comes first: "idle_timeout (signal: terminated)",
// "interrupted (exit status 1)".
func (r *Result) String() string {
	var how string
	switch {
	case r.StatusLost:
		how = "status lost"
	case r.Signal != 0:
		how = "signal: " + r.Signal.String()
	default:
		how = "exit status " + strconv.Itoa(r.ExitCode)
	}
	switch r.Outcome {
	case Exited, Signaled:
		if r.StatusLost {
			return r.Outcome.String() + " (" + how + ")"
		}
		return how
	}
	return r.Outcome.String() + " (" + how + ")"
}

// JSON returns the library's result object (sup_result in sup.h), built when
// called:
//
//	{"outcome": "exited", "exit_code": 0, "term_signal": null, ...,
//	 "stdout": {"bytes": 3, "captured": "hi\n", "truncated": false, "omitted_bytes": 0}, ...}
//
// "captured" is text: invalid UTF-8 is replaced by U+FFFD, and a line
// "[sup: N bytes omitted]" marks where bytes were dropped; Stdout and Stderr
// hold the exact bytes.
func (r *Result) JSON() []byte {
	b := make([]byte, 0, 512+len(r.Stdout)+len(r.Stderr))
	b = append(b, `{"outcome": "`...)
	b = append(b, r.Outcome.String()...)
	b = append(b, `", "phase": `...)
	if r.Phase != PhaseNone {
		b = append(b, '"')
		b = append(b, r.Phase.String()...)
		b = append(b, '"')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `, "exit_code": `...)
	if r.ExitCode >= 0 {
		b = strconv.AppendInt(b, int64(r.ExitCode), 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `, "term_signal": `...)
	if r.Signal != 0 {
		b = append(b, '"')
		b = append(b, signalName(r.Signal)...)
		b = append(b, '"')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `, "status_lost": `...)
	b = strconv.AppendBool(b, r.StatusLost)
	b = append(b, `, "forced_kill": `...)
	b = strconv.AppendBool(b, r.ForcedKill)
	b = append(b, `, "pid": `...)
	b = strconv.AppendInt(b, int64(r.Pid), 10)
	b = append(b, `, "duration_ms": `...)
	b = appendMs(b, r.Duration)
	b = append(b, `, "stdout": `...)
	b = appendStream(b, r.Stdout, r.stdoutHead, r.StdoutOmitted, r.StdoutTotal, r.stdoutRoute, r.StdoutTeeError)
	b = append(b, `, "stderr": `...)
	b = appendStream(b, r.Stderr, r.stderrHead, r.StderrOmitted, r.StderrTotal, r.stderrRoute, r.StderrTeeError)
	b = append(b, `, "signals_sent": [`...)
	for i, s := range r.SignalsSent {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, `{"signal": "`...)
		b = append(b, signalName(s.Signal)...)
		b = append(b, `", "at_ms": `...)
		b = appendMs(b, s.At)
		b = append(b, '}')
	}
	b = append(b, `], "rusage": {"user_ms": `...)
	b = appendMs(b, r.UserTime)
	b = append(b, `, "sys_ms": `...)
	b = appendMs(b, r.SystemTime)
	b = append(b, `, "max_rss_kb": `...)
	b = strconv.AppendInt(b, r.MaxRSSKB, 10)
	b = append(b, `}, "waiting_for_input": `...)
	switch {
	case r.WaitingForInput == nil:
		b = append(b, "null"...)
	case *r.WaitingForInput:
		b = append(b, "true"...)
	default:
		b = append(b, "false"...)
	}
	b = append(b, `, "tty_foreground": `...)
	switch {
	case r.TTYForeground == nil:
		b = append(b, "null"...)
	case *r.TTYForeground:
		b = append(b, "true"...)
	default:
		b = append(b, "false"...)
	}
	b = append(b, `, "tty_refused": `...)
	b = appendOptString(b, r.TTYRefused)
	b = append(b, `, "contained": "`...)
	b = append(b, r.Contained...)
	b = append(b, `", "leftovers_ended": `...)
	if r.LeftoversEnded >= 0 {
		b = strconv.AppendInt(b, r.LeftoversEnded, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `, "tree_cpu": `...)
	if r.TreeCPUKnown {
		b = append(b, `{"user_ms": `...)
		b = appendMs(b, r.TreeUserTime)
		b = append(b, `, "sys_ms": `...)
		b = appendMs(b, r.TreeSystemTime)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `, "contain_fallback": `...)
	b = appendOptString(b, r.ContainFallback)
	b = append(b, `, "cgroup_left": `...)
	b = appendOptString(b, r.CgroupLeft)
	b = append(b, `, "host_death": "`...)
	b = append(b, r.HostDeath...)
	b = append(b, `", "confined": `...)
	if r.Confined == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, r.Confined...)
	}
	b = append(b, `, "limit": `...)
	b = appendOptString(b, r.Limit)
	return append(b, '}')
}

// setConfinement takes the 0.4 result fields that have no accessor of their
// own from the library's result object.
func (r *Result) setConfinement(lib string) error {
	var v struct {
		WaitingForInput *bool           `json:"waiting_for_input"`
		Confined        json.RawMessage `json:"confined"`
		Limit           *string         `json:"limit"`
		TTYForeground   *bool           `json:"tty_foreground"`
		TTYRefused      *string         `json:"tty_refused"`
		Stdout          struct {
			TeeError *string `json:"tee_error"`
		} `json:"stdout"`
		Stderr struct {
			TeeError *string `json:"tee_error"`
		} `json:"stderr"`
	}
	if err := json.Unmarshal([]byte(lib), &v); err != nil {
		return err
	}
	r.WaitingForInput = v.WaitingForInput
	if string(v.Confined) != "null" {
		r.Confined = v.Confined
	}
	if v.Limit != nil {
		r.Limit = *v.Limit
	}
	r.TTYForeground = v.TTYForeground
	if v.TTYRefused != nil {
		r.TTYRefused = *v.TTYRefused
	}
	if v.Stdout.TeeError != nil {
		r.StdoutTeeError = *v.Stdout.TeeError
	}
	if v.Stderr.TeeError != nil {
		r.StderrTeeError = *v.Stderr.TeeError
	}
	return nil
}

// appendOptString appends s as a JSON string, or null for "".
func appendOptString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = appendText(b, []byte(s))
	return append(b, '"')
}

// appendMs appends milliseconds with three decimals, of the nearest whole
// microsecond, as the library writes them.
func appendMs(b []byte, d time.Duration) []byte {
	us := int64(d)
	if us < 0 {
		b = append(b, '-')
		us = -us
	}
	us = (us + 500) / 1000
	b = strconv.AppendInt(b, us/1000, 10)
	f := us % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

func appendStream(b, kept []byte, head int, omitted, total int64, routed, teeError string) []byte {
	b = append(b, `{"bytes": `...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `, "captured": "`...)
	b = appendText(b, kept[:head])
	if omitted > 0 {
		b = append(b, `\n[sup: `...)
		b = strconv.AppendInt(b, omitted, 10)
		b = append(b, ` bytes omitted]\n`...)
	}
	b = appendText(b, kept[head:])
	b = append(b, `", "truncated": `...)
	b = strconv.AppendBool(b, omitted > 0)
	b = append(b, `, "omitted_bytes": `...)
	b = strconv.AppendInt(b, omitted, 10)
	b = append(b, `, "routed": "`...)
	b = append(b, routed...)
	b = append(b, `", "tee_error": `...)
	b = appendOptString(b, teeError)
	return append(b, '}')
}

// appendText appends bytes as the body of a JSON string, as the library
// does: valid UTF-8 raw, each invalid byte as U+FFFD, the two-character
// escapes where JSON has them, other control bytes as \u00XX.
func appendText(b, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, "\uFFFD"...)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
			continue
		}
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				b = append(b, c)
			}
		}
		i++
	}
	return b
}

// signalName is the library's name of a signal ("SIGTERM", "SIGRTMIN+2",
// "SIGRTMAX-1", "SIG32").
func signalName(s syscall.Signal) string {
	if n := cSignalName(int(s)); n != "" {
		return n
	}
	return "SIG" + strconv.Itoa(int(s))
}
