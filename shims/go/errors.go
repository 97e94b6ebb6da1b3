//go:build cgo

package sup

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// Part says which part of a spawn failed (the C ABI's enum sup_part).
type Part int

// Parts of a spawn that can fail.
const (
	PartNone   Part = 0 // not a spawn failure
	PartSpec   Part = 1 // the spec: a bad field of Cmd (Detail starts "spec: KEY: ")
	PartExec   Part = 2 // the program: not found, not executable, a directory, argv too big
	PartCwd    Part = 3 // the working directory (Cmd.Dir)
	PartSystem Part = 4 // the host: out of fds, processes or memory, no pidfd support
)

func (p Part) String() string {
	switch p {
	case PartNone:
		return "none"
	case PartSpec:
		return "spec"
	case PartExec:
		return "exec"
	case PartCwd:
		return "cwd"
	case PartSystem:
		return "system"
	}
	return "part(" + strconv.Itoa(int(p)) + ")"
}

// Error is a failure reported by libsup, or a misuse the shim catches first.
//
// Code is the errno (libsup's codes are -errno), so errors.Is(err,
// fs.ErrNotExist) and errors.Is(err, syscall.EACCES) work through Unwrap. A
// program that is not found (Code ENOENT, Part PartExec) also matches
// exec.ErrNotFound; a missing Dir (Code ENOENT, Part PartCwd) does not. An
// operation on a closed Process returns an Error that matches os.ErrClosed.
type Error struct {
	Op     string        // "start", "wait", "interrupt", "abort", "read", ...
	Code   syscall.Errno // the errno; syscall.Errno(4096) is libsup's internal error
	Detail string        // the library's explanation, e.g. `exec "frobnicate": not found in PATH`
	Part   Part          // for "start": which part of the spawn failed

	closed bool
	cause  error // what failed outside the library (reading Cmd.Stdin)
}

func (e *Error) Error() string {
	d := e.Detail
	if d == "" {
		d = e.Code.Error()
	}
	return "sup: " + e.Op + ": " + d
}

// Unwrap returns the errno.
func (e *Error) Unwrap() error { return e.Code }

// Is reports whether the error matches exec.ErrNotFound (a program that is not
// found), os.ErrClosed (an operation on a closed Process), os.ErrProcessDone
// (Signal, Resize or InputWanted once the result is final) or, for Op "stdin",
// the error that reading Cmd.Stdin returned. Other targets are matched
// through Unwrap.
func (e *Error) Is(target error) bool {
	if e.cause != nil && errors.Is(e.cause, target) {
		return true
	}
	switch target {
	case exec.ErrNotFound:
		return e.Part == PartExec && e.Code == syscall.ENOENT
	case os.ErrClosed:
		return e.closed
	case os.ErrProcessDone:
		return e.Code == syscall.ESRCH && (e.Op == "signal" || e.Op == "resize" || e.Op == "input_wanted")
	}
	return false
}

func errClosed(op string) error {
	return &Error{Op: op, Code: syscall.EBADF, Detail: "process already closed", closed: true}
}

// ExitError is the error of a process that did not exit by itself with
// status 0: a non-zero exit, a signal, a timeout, an interrupt or an abort.
// Run, Output and Wait return it with the Result, as os/exec returns its
// *exec.ExitError; errors.As(err, &ee) gives the Result: ee.ExitCode(),
// ee.Stderr, ee.Outcome, as with os/exec. (ExitCode is a method, as
// os/exec's; the Result's field of that name is ee.Result.ExitCode.)
//
// When the context given to Start ended the process, the error also matches
// that context's error: errors.Is(err, context.Canceled) or
// errors.Is(err, context.DeadlineExceeded), as os/exec's Wait returns
// ctx.Err() then.
type ExitError struct {
	*Result

	ctxErr error // the Start context's error, when it ended the process
}

// Error describes how the process ended, as Result.String does ("exit status
// 3", "signal: killed", "idle_timeout (signal: terminated)").
func (e *ExitError) Error() string { return e.Result.String() }

// ExitCode returns the main process's exit code, or -1 when it has none (it
// was killed by a signal, or its status was lost), as os/exec's
// ExitError.ExitCode.
func (e *ExitError) ExitCode() int { return e.Result.ExitCode }

// Unwrap returns the Start context's error (context.Canceled,
// context.DeadlineExceeded or its cause) when that context ended the
// process; nil otherwise.
func (e *ExitError) Unwrap() error { return e.ctxErr }

// GapError is returned by a live reader (Process.Stdout, Process.Stderr) that
// fell behind the bytes kept (Cmd.MaxOutput): Skipped bytes were dropped from
// the middle of the stream before it read them. It comes once per gap, with no
// bytes; the next Read goes on with the oldest byte still kept, and no Read
// returns bytes from both sides of a gap. Set Cmd.Backpressure to lose
// nothing.
type GapError struct {
	Skipped int64
}

func (e *GapError) Error() string {
	return "sup: read: fell behind the kept output: " + strconv.FormatInt(e.Skipped, 10) + " bytes skipped"
}
