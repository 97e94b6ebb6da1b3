package sup

/*
#include <sup.h>
*/
import "C"

import "runtime"

// PTY asks for the child to run on a new pseudo-terminal (Cmd.PTY): its
// stdin, stdout and stderr are the terminal, which is its controlling
// terminal, and it leads a new session whose process group is its own, so
// Interrupt, Abort and Signal reach it as without a terminal. What the
// child writes, both streams, is the stdout stream (Result.Stdout,
// Process.Stdout, Cmd.Stdout); the terminal's modes are the kernel's
// defaults ("\n" arrives as "\r\n", input is echoed). Its input is
// Cmd.Stdin or Cmd.StdinPipe: the bytes a person would type ("\x03" is a
// Ctrl-C), and closing it sends the end of input (Ctrl-D).
type PTY struct {
	Rows, Cols int // the window size; 0 is the default, 24 rows of 80 columns
}

func (t *PTY) appendSpec(b []byte) []byte {
	if t.Rows == 0 && t.Cols == 0 {
		return append(b, `,"pty":true`...)
	}
	b = append(b, `,"pty":{"rows":`...)
	b = appendInt(b, t.Rows)
	b = append(b, `,"cols":`...)
	b = appendInt(b, t.Cols)
	return append(b, '}')
}

// Resize sets the window size of the child's terminal (Cmd.PTY); the child
// gets SIGWINCH. Errors: for a child without a PTY (errors.Is(err,
// errors.ErrUnsupported)), once the result is final (errors.Is(err,
// os.ErrProcessDone)), after Close (os.ErrClosed), for sizes outside
// 1..65535 (syscall.EINVAL).
func (p *Process) Resize(rows, cols int) error {
	defer runtime.KeepAlive(p)
	if rows < 1 || rows > 65535 || cols < 1 || cols > 65535 {
		return &Error{Op: "resize", Code: 22, Detail: "rows and cols must be 1..65535"}
	}
	return p.h.request("resize", func(cp *C.sup_proc) C.int { return C.sup_pty_resize(cp, C.int(rows), C.int(cols)) })
}
