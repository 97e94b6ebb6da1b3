package sup_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

// ExitCode is a method, as os/exec's ExitError.ExitCode.
func TestExitErrorExitCodeMethod(t *testing.T) {
	_, err := sup.Command("sh", "-c", "exit 5").Run(context.Background())
	var ee *sup.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 5 || ee.Result.ExitCode != 5 {
		t.Fatalf("err %v", err)
	}
	_, err = sup.Command("sh", "-c", "kill -9 $$").Run(context.Background())
	if !errors.As(err, &ee) || ee.ExitCode() != -1 || ee.Signal != syscall.SIGKILL {
		t.Fatalf("killed: err %v", err)
	}
	if errors.Is(err, context.Canceled) {
		t.Fatalf("a kill not from a context matches context.Canceled: %v", err)
	}
}

// A context that ends the command gives an error matching its own.
func TestContextErrorIs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	res, err := sup.Command("sleep", "30").Run(ctx)
	var ee *sup.ExitError
	if res == nil || res.Outcome != sup.Interrupted || !errors.As(err, &ee) || !errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancel: res %v err %v", res, err)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer dcancel()
	res, err = sup.Command("sleep", "30").Run(dctx)
	if res == nil || res.Outcome != sup.Interrupted || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Fatalf("deadline: res %v err %v", res, err)
	}
	// A command that ends by itself before its context: no context error.
	lctx, lcancel := context.WithTimeout(context.Background(), time.Minute)
	defer lcancel()
	_, err = sup.Command("sh", "-c", "exit 2").Run(lctx)
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("exit 2: %v", err)
	}
}

// An *os.File as Stdin, Stdout or Stderr is passed as the file itself: the
// child can seek it and fstat it.
func TestFileAsStdioIsTheFile(t *testing.T) {
	dir := t.TempDir()
	in, err := os.Create(filepath.Join(dir, "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, err := in.WriteString("0123456789"); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Seek(0, 0); err != nil { // the offset is shared with the child
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	// dd skip= seeks stdin (a pipe would fail with ESPIPE or read it);
	// /proc/self/fd/0 names the file itself, not a pipe; the shell's
	// test sees a regular file as its fd 1.
	c := sup.Command("sh", "-c", `readlink /proc/self/fd/0; if [ -f /proc/self/fd/1 ]; then echo file >&2; fi; dd bs=1 skip=7 2>/dev/null`)
	c.Stdin = in
	c.Stdout = out
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := strings.Split(strings.TrimSpace(string(res.Stderr)), "\n"); len(got) != 1 || got[0] != "file" {
		t.Fatalf("child's fd 1 is not a regular file: %q", res.Stderr)
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != in.Name()+"\n789" || len(res.Stdout) != 0 {
		t.Fatalf("file holds %q; captured %q", b, res.Stdout)
	}
	// Stderr the same file as Stdout: one descriptor.
	c = sup.Command("sh", "-c", `echo a; echo b >&2`)
	c.Stdout, c.Stderr = out, out
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, _ = os.ReadFile(out.Name()); !strings.HasSuffix(string(b), "789a\nb\n") {
		t.Fatalf("file holds %q", b)
	}
	// With an IdleTimeout the stream is heard: captured and copied.
	c = sup.Command("echo", "heard")
	c.Stdout = out
	c.IdleTimeout = time.Minute
	res, err = c.Run(context.Background())
	if err != nil || string(res.Stdout) != "heard\n" {
		t.Fatalf("idle: %v %q", err, res.Stdout)
	}
	if b, _ = os.ReadFile(out.Name()); !strings.HasSuffix(string(b), "b\nheard\n") {
		t.Fatalf("file holds %q", b)
	}
}

// ExtraFiles[i] is the child's 3+i, as in os/exec.
func TestExtraFiles(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := os.CreateTemp(t.TempDir(), "extra")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := sup.Command("sh", "-c", `echo to-three >&3; echo to-four >&4; readlink /proc/self/fd/4`)
	c.ExtraFiles = []*os.File{w, f}
	res, err := c.Run(context.Background())
	w.Close()
	if err != nil || string(res.Stdout) != f.Name()+"\n" {
		t.Fatalf("run: %v %q", err, res.Stdout)
	}
	got := make([]byte, 64)
	n, _ := r.Read(got)
	if string(got[:n]) != "to-three\n" {
		t.Fatalf("pipe got %q", got[:n])
	}
	if b, _ := os.ReadFile(f.Name()); string(b) != "to-four\n" {
		t.Fatalf("file holds %q", b)
	}
	c.ExtraFiles = []*os.File{nil}
	_, err = c.Run(context.Background())
	var se *sup.Error
	if !errors.As(err, &se) || se.Part != sup.PartSpec || !strings.Contains(se.Detail, "fds.3") {
		t.Fatalf("nil entry: %v", err)
	}
}

// Output with Backpressure ends: Run reads the streams nobody else reads,
// and the Result keeps every byte.
func TestOutputWithBackpressureEnds(t *testing.T) {
	c := sup.Command("sh", "-c", "seq 1 100000; seq 1 50000 >&2")
	c.Backpressure = 4096
	c.MaxRuntime = time.Minute // a hang fails the test instead of the run
	out, err := c.Output(context.Background())
	if err != nil || !bytes.Equal(out, seqOutput(100000)) {
		t.Fatalf("Output: %v, %d bytes", err, len(out))
	}
	c.Stdout = io.Discard
	c.Stderr = nil
	res, err := c.Run(context.Background())
	if err != nil || !bytes.Equal(res.Stderr, seqOutput(50000)) {
		t.Fatalf("Run: %v", err)
	}
}
