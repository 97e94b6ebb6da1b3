package sup_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	sup "github.com/sup-project/sup/shims/go"
)

// readUntil reads r until what was read contains want.
func readUntil(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	var got []byte
	for !bytes.Contains(got, []byte(want)) {
		b, err := r.ReadByte()
		if err != nil {
			t.Fatalf("waiting for %q: %v (read %q)", want, err, got)
		}
		got = append(got, b)
	}
	return string(got)
}

func TestPTY(t *testing.T) {
	c := sup.Command("sh", "-c", "test -t 0 && test -t 1 && test -t 2 && echo tty; stty size; echo err >&2")
	c.PTY = &sup.PTY{Rows: 30, Cols: 100}
	res := run(t, c)
	if string(res.Stdout) != "tty\r\n30 100\r\nerr\r\n" || len(res.Stderr) != 0 {
		t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	if !bytes.Contains(res.JSON(), []byte(`"routed": "pty"`)) {
		t.Fatalf("JSON %s", res.JSON())
	}

	// A writer gets the terminal's output too.
	var copied bytes.Buffer
	c.Stdout = &copied
	if res := run(t, c); copied.String() != "tty\r\n30 100\r\nerr\r\n" || !bytes.Equal(res.Stdout, copied.Bytes()) {
		t.Fatalf("Stdout writer: %q, captured %q", copied.String(), res.Stdout)
	}

	// Resizing: the child gets SIGWINCH and sees the new size.
	c = sup.Command("sh", "-c", `trap 'stty size' WINCH; echo ready; while :; do sleep 0.02; done`)
	c.PTY = &sup.PTY{}
	p := start(t, nil, c)
	out := bufio.NewReader(p.Stdout())
	readUntil(t, out, "ready\r\n")
	if err := p.Resize(40, 120); err != nil {
		t.Fatal(err)
	}
	readUntil(t, out, "40 120\r\n")
	p.Interrupt()
	wait(t, p)
	if err := p.Resize(10, 10); !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("Resize once final: %v", err)
	}

	// Typed input and the end of input (Ctrl-D).
	c = sup.Command("sh", "-c", `echo ready; while read line; do echo "got $line"; done; echo eof`)
	c.PTY = &sup.PTY{}
	w, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p = start(t, nil, c)
	out = bufio.NewReader(p.Stdout())
	readUntil(t, out, "ready\r\n")
	if _, err := w.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	readUntil(t, out, "got hello\r\n")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	readUntil(t, out, "eof\r\n")
	if res := wait(t, p); !res.Success() {
		t.Fatalf("outcome %v", res.Outcome)
	}

	// A Ctrl-C typed on the terminal: SIGINT to the child.
	c = sup.Command("sleep", "30")
	c.PTY = &sup.PTY{}
	c.Stdin = "\x03"
	res = run(t, c)
	if res.Outcome != sup.Signaled || res.Signal != syscall.SIGINT {
		t.Fatalf("Ctrl-C: outcome %v signal %v", res.Outcome, res.Signal)
	}

	// Misuse is refused, with a clear error.
	p = start(t, nil, sup.Command("sleep", "30"))
	if err := p.Resize(10, 10); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Resize without a PTY: %v", err)
	}
	p.Abort()
	c = sup.Command("true")
	c.PTY = &sup.PTY{}
	c.Stdin = os.Stdin
	var se *sup.Error
	if _, err := c.Run(context.Background()); !errors.As(err, &se) || se.Part != sup.PartSpec {
		t.Fatalf("PTY with os.Stdin: %v", err)
	}
	c.Stdin = nil
	c.Stderr = &bytes.Buffer{}
	if _, err := c.Run(context.Background()); !errors.As(err, &se) || se.Part != sup.PartSpec {
		t.Fatalf("PTY with Stderr: %v", err)
	}
}
