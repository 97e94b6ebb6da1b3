package sup_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

func TestStdoutStderrWriters(t *testing.T) {
	var out, errb bytes.Buffer
	c := sup.Command("sh", "-c", "echo out; echo err >&2; echo more")
	c.Stdout, c.Stderr = &out, &errb
	p := start(t, nil, c)
	if _, err := p.Stdout().Read(make([]byte, 8)); err == nil {
		t.Fatal("Process.Stdout read a stream that Cmd.Stdout's copy reads")
	}
	res := wait(t, p)
	// Wait returns once the copies are complete.
	if out.String() != "out\nmore\n" || errb.String() != "err\n" {
		t.Fatalf("writers got %q and %q", out.String(), errb.String())
	}
	if string(res.Stdout) != "out\nmore\n" || string(res.Stderr) != "err\n" {
		t.Fatalf("captured %q and %q", res.Stdout, res.Stderr)
	}

	// One writer for both: one stream, in write order.
	var both bytes.Buffer
	c = sup.Command("sh", "-c", "echo 1; echo 2 >&2; echo 3; echo 4 >&2")
	c.Stdout, c.Stderr = &both, &both
	res = run(t, c)
	if both.String() != "1\n2\n3\n4\n" || string(res.Stdout) != "1\n2\n3\n4\n" || len(res.Stderr) != 0 {
		t.Fatalf("merged: writer %q, stdout %q, stderr %q", both.String(), res.Stdout, res.Stderr)
	}

	// io.Discard: /dev/null, nothing captured.
	c = sup.Command("sh", "-c", "echo gone; echo kept >&2")
	c.Stdout = io.Discard
	res = run(t, c)
	if len(res.Stdout) != 0 || res.StdoutTotal != 0 || string(res.Stderr) != "kept\n" {
		t.Fatalf("discard: %q %d %q", res.Stdout, res.StdoutTotal, res.Stderr)
	}
	if !bytes.Contains(res.JSON(), []byte(`"routed": "null"`)) {
		t.Fatalf("JSON %s", res.JSON())
	}
	// ... but with an idle timeout, the clock still hears it.
	c = sup.Command("sh", "-c", "for i in 1 2 3 4 5 6; do echo tick; sleep 0.1; done")
	c.Stdout = io.Discard
	c.IdleTimeout = 400 * time.Millisecond
	if res := run(t, c); !res.Success() {
		t.Fatalf("io.Discard with an idle timeout: %v", res)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

type slowWriter struct{ bytes.Buffer }

func (w *slowWriter) Write(b []byte) (int, error) {
	time.Sleep(time.Millisecond)
	return w.Buffer.Write(b)
}

// gatedWriter takes nothing until the file at path exists (the child's
// last act), or 30 seconds have passed.
type gatedWriter struct {
	bytes.Buffer
	path string
}

func (w *gatedWriter) Write(b []byte) (int, error) {
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(w.path); err == nil {
			break
		}
	}
	return w.Buffer.Write(b)
}

func TestWriterErrorsReachWait(t *testing.T) {
	c := sup.Command("echo", "x")
	c.Stdout = failingWriter{}
	res, err := c.Run(context.Background())
	if res == nil || !res.Success() || err == nil || err.Error() != "disk full" {
		t.Fatalf("failing writer: %v %v", res, err)
	}

	// A writer that falls behind the child loses what falls out of
	// MaxOutput, and is told. It takes nothing until the child has written
	// everything: behind for sure, however fast either runs.
	want := seqOutput(100000)
	done := t.TempDir() + "/done"
	c = sup.Command("sh", "-c", `seq 1 100000; : > "$1"`, "sh", done)
	c.MaxOutput = 4096
	gated := &gatedWriter{path: done}
	c.Stdout = gated
	_, err = c.Run(context.Background())
	var gap *sup.GapError
	if !errors.As(err, &gap) || int64(gated.Len())+gap.Skipped != int64(len(want)) {
		t.Fatalf("writer behind: %v, wrote %d", err, gated.Len())
	}
	// A writer slower than the child, with Backpressure: the child waits
	// for it, and nothing is lost.
	c = sup.Command("seq", "1", "100000")
	c.MaxOutput = 4096
	c.Backpressure = 8192
	w := &slowWriter{}
	c.Stdout = w
	if res := run(t, c); !bytes.Equal(w.Bytes(), want) || !res.Success() {
		t.Fatalf("backpressure: wrote %d of %d", w.Len(), len(want))
	}
}

func TestCombinedOutput(t *testing.T) {
	out, err := sup.Command("sh", "-c", "echo a; echo b >&2; echo c; exit 2").CombinedOutput(context.Background())
	var ee *sup.ExitError
	if string(out) != "a\nb\nc\n" || !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("CombinedOutput: %q %v", out, err)
	}
	c := sup.Command("true")
	c.Stdout = io.Discard
	if _, err := c.CombinedOutput(context.Background()); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("CombinedOutput with Stdout set: %v", err)
	}
}

// The host's own stdout and stderr: inherited, or teed with an idle timeout.
func TestStdoutHostDescriptors(t *testing.T) {
	for _, mode := range []string{"inherit", "tee"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=host-stdout", "SUP_GO_TEST_MODE="+mode)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s helper: %v: %s %s", mode, err, out.String(), errb.String())
		}
		want := "to host stdout\n" + `captured stdout "" stderr ""` + "\n"
		if mode == "tee" {
			want = "to host stdout\n" + `captured stdout "to host stdout\n" stderr "to host stderr\n"` + "\n"
		}
		if out.String() != want || errb.String() != "to host stderr\n" {
			t.Fatalf("%s: stdout %q stderr %q", mode, out.String(), errb.String())
		}
	}
}

// hostStdout runs in a fresh process (TestMain), whose stdout the test reads.
func hostStdout() {
	c := sup.Command("sh", "-c", "echo to host stdout; echo to host stderr >&2")
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	if os.Getenv("SUP_GO_TEST_MODE") == "tee" {
		c.IdleTimeout = time.Minute
	}
	res, err := c.Run(context.Background())
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Printf("captured stdout %q stderr %q\n", res.Stdout, res.Stderr)
	os.Exit(0)
}

func TestEnvIsTheWholeEnvironment(t *testing.T) {
	c := sup.Command("env")
	c.Env = []string{"A=1", "PATH=/usr/bin:/bin", "B=x=y", "A=2"}
	c.Setenv("C", "3")
	c.Unsetenv("B")
	res := run(t, c)
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	sort.Strings(lines)
	if strings.Join(lines, " ") != "A=2 C=3 PATH=/usr/bin:/bin" {
		t.Fatalf("env %q", res.Stdout)
	}
	c.Env = []string{} // empty: nothing at all, argv[0] found in /bin:/usr/bin
	c.Setenv("C", "3")
	if res := run(t, c); string(res.Stdout) != "C=3\n" {
		t.Fatalf("empty Env: %q", res.Stdout)
	}
	c.Env = []string{"NOEQUALS"}
	var se *sup.Error
	if _, err := c.Run(context.Background()); !errors.As(err, &se) || se.Part != sup.PartSpec {
		t.Fatalf("bad entry: %v", err)
	}
}

func TestProcessSignal(t *testing.T) {
	c := sup.Command("sh", "-c", "trap 'echo got USR1; exit 7' USR1; echo ready; while :; do sleep 0.02; done")
	p := start(t, nil, c)
	readLine(t, p.Stdout())
	if err := p.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if err := p.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	res := wait(t, p)
	if res.Outcome != sup.Exited || res.ExitCode != 7 || !strings.HasSuffix(string(res.Stdout), "got USR1\n") {
		t.Fatalf("outcome %v exit %d stdout %q", res.Outcome, res.ExitCode, res.Stdout)
	}
	if len(res.SignalsSent) == 0 || res.SignalsSent[0].Signal != syscall.SIGUSR1 {
		t.Fatalf("signals sent %v", res.SignalsSent)
	}
	if err := p.Signal(syscall.SIGUSR1); !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("Signal once final: %v", err)
	}
	p.Close()
	if err := p.Signal(syscall.SIGUSR1); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Signal after Close: %v", err)
	}
}

func TestFirstOutputTimeout(t *testing.T) {
	c := sup.Command("sleep", "30")
	c.FirstOutputTimeout = 200 * time.Millisecond
	c.IdleTimeout = time.Minute
	res, err := c.Run(context.Background())
	if res == nil || res.Outcome != sup.IdleTimeout || res.Phase != sup.PhaseFirstOutput || err == nil {
		t.Fatalf("silent from the start: %+v %v", res, err)
	}
	if res.Duration < 200*time.Millisecond {
		t.Fatalf("ended after %v", res.Duration)
	}
	// With both limits, the idle clock starts at the first byte.
	c = sup.Command("sh", "-c", "echo hi; exec sleep 3")
	c.FirstOutputTimeout = time.Minute
	c.IdleTimeout = 200 * time.Millisecond
	res, _ = c.Run(context.Background())
	if res == nil || res.Outcome != sup.IdleTimeout || res.Phase != sup.PhaseIdle || res.Phase.String() != "idle" {
		t.Fatalf("silent for 3 s after its first line, with IdleTimeout 200ms: %v (the idle clock did not start at the first byte)", res)
	}
	if res := run(t, sup.Command("true")); res.Phase != sup.PhaseNone {
		t.Fatalf("phase %v", res.Phase)
	}
}
