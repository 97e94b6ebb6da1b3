package sup_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

const helperEnv = "SUP_GO_TEST_HELPER"

// TestMain runs the helpers that must not share a process with the other
// tests (the SIGCHLD disposition is process-wide) when re-executed.
func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "sigchld-ignored":
		signal.Ignore(syscall.SIGCHLD)
		res, err := sup.Command("sh", "-c", "echo lost; exit 3").Run(context.Background())
		if res == nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Printf("outcome=%s status_lost=%v exit_code=%d signal=%d stdout=%q\n",
			res.Outcome, res.StatusLost, res.ExitCode, int(res.Signal), res.Stdout)
		os.Exit(0)
	case "concurrent-starts":
		concurrentStarts()
	case "os-stdin":
		osStdin()
	case "host-stdout":
		hostStdout()
	case "host":
		hostForDeath()
	default:
		fmt.Println("unknown helper")
		os.Exit(2)
	}
}

// run runs c, which must start; err must be the Result's own (nil only for
// a success).
func run(t *testing.T, c *sup.Cmd) *sup.Result {
	t.Helper()
	res, err := c.Run(context.Background())
	checkResultErr(t, "Run", res, err)
	return res
}

// checkResultErr checks the error that comes with a final Result: nil for a
// success, else an *ExitError holding that Result.
func checkResultErr(t *testing.T, op string, res *sup.Result, err error) {
	t.Helper()
	if res == nil {
		t.Fatalf("%s: no result: %v", op, err)
	}
	var ee *sup.ExitError
	if res.Success() != (err == nil) || err != nil && (!errors.As(err, &ee) || ee.Result != res) {
		t.Fatalf("%s: %v with outcome %v exit %d", op, err, res.Outcome, res.ExitCode)
	}
}

func start(t *testing.T, ctx context.Context, c *sup.Cmd) *sup.Process {
	t.Helper()
	p, err := c.Start(ctx)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func wait(t *testing.T, p *sup.Process) *sup.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := p.Wait(ctx)
	checkResultErr(t, "Wait", res, err)
	return res
}

// readLine reads from a live reader until a whole line is there.
func readLine(t *testing.T, r io.Reader) string {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the first line: %v (got %q)", err, line)
	}
	return line
}

func TestExited(t *testing.T) {
	res := run(t, sup.Command("sh", "-c", "echo out; echo err >&2; exit 3"))
	if res.Outcome != sup.Exited || res.ExitCode != 3 || res.Signal != 0 || res.Success() {
		t.Fatalf("got %v exit %d signal %d", res.Outcome, res.ExitCode, res.Signal)
	}
	if string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" {
		t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	if res.Outcome.String() != "exited" || res.Pid <= 0 || res.Duration <= 0 || res.StdoutTotal != 4 {
		t.Fatalf("outcome %q pid %d duration %v total %d", res.Outcome, res.Pid, res.Duration, res.StdoutTotal)
	}
	if j := res.JSON(); !bytes.HasPrefix(j, []byte(`{"outcome": "exited",`)) || !bytes.Contains(j, []byte(`"exit_code": 3,`)) {
		t.Fatalf("JSON %s", res.JSON())
	}
	if !run(t, sup.Command("true")).Success() {
		t.Fatal("true did not succeed")
	}
}

func TestSignaled(t *testing.T) {
	res := run(t, sup.Command("sh", "-c", "kill -USR1 $$"))
	if res.Outcome != sup.Signaled || res.Signal != syscall.SIGUSR1 || res.ExitCode != -1 || res.ForcedKill {
		t.Fatalf("got %v exit %d signal %v forced %v", res.Outcome, res.ExitCode, res.Signal, res.ForcedKill)
	}
}

func TestIdleTimeout(t *testing.T) {
	c := sup.Command("sh", "-c", "echo started; exec sleep 30")
	c.IdleTimeout = 300 * time.Millisecond
	t0 := time.Now()
	res := run(t, c)
	el := time.Since(t0)
	if res.Outcome != sup.IdleTimeout || res.Outcome.String() != "idle_timeout" {
		t.Fatalf("outcome %v", res.Outcome)
	}
	if res.Signal != syscall.SIGTERM || string(res.Stdout) != "started\n" {
		t.Fatalf("signal %v stdout %q", res.Signal, res.Stdout)
	}
	if len(res.SignalsSent) == 0 || res.SignalsSent[0].Signal != syscall.SIGTERM {
		t.Fatalf("signals sent %v", res.SignalsSent)
	}
	if el < 300*time.Millisecond || el > 3*time.Second {
		t.Fatalf("took %v", el)
	}
	t.Logf("idle timeout of 300ms ended after %v", el)
}

func TestIdleTimeoutResetByStderrAlone(t *testing.T) {
	// 8 writes to stderr 0.25 s apart: 2 s in all, but never 1.5 s of silence.
	c := sup.Command("sh", "-c", "for i in 1 2 3 4 5 6 7 8; do echo tick >&2; sleep 0.25; done; echo done")
	c.IdleTimeout = 1500 * time.Millisecond
	res := run(t, c)
	if res.Outcome != sup.Exited || res.ExitCode != 0 {
		t.Fatalf("outcome %v exit %d after %v", res.Outcome, res.ExitCode, res.Duration)
	}
	if res.Duration < 1500*time.Millisecond {
		t.Fatalf("ran only %v: the test proves nothing", res.Duration)
	}
	if strings.Count(string(res.Stderr), "tick\n") != 8 || string(res.Stdout) != "done\n" {
		t.Fatalf("stderr %q stdout %q", res.Stderr, res.Stdout)
	}
}

func TestMaxRuntime(t *testing.T) {
	c := sup.Command("sh", "-c", "while :; do echo busy; sleep 0.05; done")
	c.MaxRuntime = 300 * time.Millisecond
	c.IdleTimeout = 10 * time.Second
	res := run(t, c)
	if res.Outcome != sup.MaxRuntime || res.Outcome.String() != "max_runtime" {
		t.Fatalf("outcome %v", res.Outcome)
	}
	if !bytes.HasPrefix(res.Stdout, []byte("busy\n")) {
		t.Fatalf("stdout %q", res.Stdout)
	}
}

func TestKillOnTimeoutAndGrace(t *testing.T) {
	c := sup.Command("sh", "-c", "trap '' TERM; echo x; exec sleep 30")
	c.IdleTimeout = 200 * time.Millisecond
	c.KillOnTimeout = true
	res := run(t, c)
	if res.Outcome != sup.IdleTimeout || res.Signal != syscall.SIGKILL || !res.ForcedKill {
		t.Fatalf("kill: outcome %v signal %v forced %v", res.Outcome, res.Signal, res.ForcedKill)
	}
	// The interrupt signal ignored by the whole group: SIGKILL after Grace.
	c = sup.Command("sh", "-c", "trap '' INT TERM; echo ready; while :; do sleep 0.05; done")
	c.Grace = 300 * time.Millisecond
	c.Signal = syscall.SIGINT
	p := start(t, nil, c)
	readLine(t, p.Stdout())
	if err := p.Interrupt(); err != nil {
		t.Fatal(err)
	}
	res = wait(t, p)
	if res.Outcome != sup.Interrupted || res.Signal != syscall.SIGKILL || !res.ForcedKill {
		t.Fatalf("interrupt: outcome %v signal %v forced %v", res.Outcome, res.Signal, res.ForcedKill)
	}
	s := res.SignalsSent
	if len(s) != 2 || s[0].Signal != syscall.SIGINT || s[1].Signal != syscall.SIGKILL || s[1].At-s[0].At < 250*time.Millisecond {
		t.Fatalf("signals sent %+v", s)
	}
}

func TestInterruptedByStartContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := sup.Command("sh", "-c", `trap 'echo last words; exit 1' TERM; echo hi; while :; do sleep 0.05; done`)
	p := start(t, ctx, c)
	if line := readLine(t, p.Stdout()); line != "hi\n" {
		t.Fatalf("first line %q", line)
	}
	t0 := time.Now()
	cancel()
	res := wait(t, p)
	el := time.Since(t0)
	if res.Outcome != sup.Interrupted || res.ExitCode != 1 {
		t.Fatalf("outcome %v exit %d", res.Outcome, res.ExitCode)
	}
	if string(res.Stdout) != "hi\nlast words\n" {
		t.Fatalf("stdout %q", res.Stdout)
	}
	if el > 2*time.Second {
		t.Fatalf("cancel to result took %v", el)
	}
	t.Logf("ctx cancel to final result: %v", el)
}

func TestRunContextTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := sup.Command("sh", "-c", "echo partial; sleep 30").Run(ctx)
	checkResultErr(t, "Run", res, err)
	if res.Outcome != sup.Interrupted || string(res.Stdout) != "partial\n" {
		t.Fatalf("outcome %v stdout %q", res.Outcome, res.Stdout)
	}
	if _, err := sup.Command("true").Start(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start with a done ctx: %v", err)
	}
}

func TestWaitContextBoundsOnlyTheCall(t *testing.T) {
	p := start(t, nil, sup.Command("sleep", "30"))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait: %v", err)
	}
	select {
	case <-p.Done():
		t.Fatal("the process ended with the Wait context")
	default:
	}
	if err := p.Abort(); err != nil {
		t.Fatal(err)
	}
	if res := wait(t, p); res.Outcome != sup.Aborted {
		t.Fatalf("outcome %v", res.Outcome)
	}
}

func TestAbortFromAnotherGoroutine(t *testing.T) {
	p := start(t, nil, sup.Command("sleep", "30"))
	go func() {
		time.Sleep(50 * time.Millisecond)
		_ = p.Abort()
	}()
	res := wait(t, p)
	if res.Outcome != sup.Aborted || res.Signal != syscall.SIGKILL || !res.ForcedKill {
		t.Fatalf("outcome %v signal %v forced %v", res.Outcome, res.Signal, res.ForcedKill)
	}
	// No effect once final.
	if err := p.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := p.Interrupt(); err != nil {
		t.Fatal(err)
	}
	if res2 := wait(t, p); res2 != res {
		t.Fatal("a second Wait returned another result")
	}
}

func TestCloseWhileWaiting(t *testing.T) {
	p, err := sup.Command("sleep", "30").Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		go func() { _, err := p.Wait(context.Background()); errs <- err }()
	}
	rd := make(chan error, 1)
	go func() { _, err := io.ReadAll(p.Stdout()); rd <- err }()
	time.Sleep(50 * time.Millisecond)
	t0 := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// Each blocked call returns os.ErrClosed within 5 s.
	closed := func(ch <-chan error, what string) {
		select {
		case err := <-ch:
			if !errors.Is(err, os.ErrClosed) {
				t.Fatalf("%s after Close: %v", what, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not return after Close", what)
		}
	}
	for i := 0; i < 3; i++ {
		closed(errs, "Wait")
	}
	closed(rd, "live read")
	t.Logf("Close of a running child: %v", time.Since(t0))
	// Reaped: no such process (not even a zombie).
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Fatalf("kill(%d, 0) after Close: %v", pid, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	for _, err := range []error{p.Interrupt(), p.Abort()} {
		var se *sup.Error
		if !errors.Is(err, os.ErrClosed) || !errors.As(err, &se) {
			t.Fatalf("after Close: %v", err)
		}
	}
	if _, err := p.Stderr().Read(make([]byte, 8)); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
}

func TestResultSurvivesClose(t *testing.T) {
	p := start(t, nil, sup.Command("echo", "kept"))
	res := wait(t, p)
	p.Close()
	res2, err := p.Wait(context.Background())
	if err != nil || res2 != res || string(res.Stdout) != "kept\n" {
		t.Fatalf("Wait after Close: %v %v", res2, err)
	}
}

func threads(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Threads:") {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(l, "Threads:")))
			return n
		}
	}
	t.Fatal("no Threads: line")
	return 0
}

func TestThousandWaitsOnFewThreads(t *testing.T) {
	const n = 1000
	before := threads(t)
	procs := make([]*sup.Process, 0, n)
	defer func() {
		for _, p := range procs {
			p.Close()
		}
	}()
	for i := 0; i < n; i++ {
		p, err := sup.Command("sleep", "60").Start(context.Background())
		if err != nil {
			t.Fatalf("Start #%d: %v", i, err)
		}
		procs = append(procs, p)
	}
	var wg sync.WaitGroup
	results := make([]*sup.Result, n)
	var started sync.WaitGroup
	started.Add(n)
	for i, p := range procs {
		wg.Add(1)
		go func(i int, p *sup.Process) {
			defer wg.Done()
			started.Done()
			res, err := p.Wait(context.Background())
			if res == nil {
				t.Errorf("Wait #%d: %v", i, err)
			}
			results[i] = res
		}(i, p)
	}
	started.Wait()
	time.Sleep(200 * time.Millisecond)
	during := threads(t)
	t.Logf("OS threads: %d before, %d with %d processes waited on", before, during, n)
	if during > before+20 || during > 64 {
		t.Errorf("%d OS threads while waiting on %d processes (%d before)", during, n, before)
	}
	for _, p := range procs {
		if err := p.Abort(); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("waits did not all return")
	}
	for i, res := range results {
		if res == nil || res.Outcome != sup.Aborted {
			t.Fatalf("#%d: %+v", i, res)
		}
	}
}

func TestGrandchildHoldingThePipe(t *testing.T) {
	// sh leaves a background sleep holding stdout: os/exec's Wait would
	// block for 30 s without WaitDelay.
	t0 := time.Now()
	res := run(t, sup.Command("sh", "-c", "sleep 30 & echo parent done"))
	if el := time.Since(t0); el > 5*time.Second {
		t.Fatalf("took %v", el)
	}
	if res.Outcome != sup.Exited || res.ExitCode != 0 || string(res.Stdout) != "parent done\n" {
		t.Fatalf("outcome %v exit %d stdout %q", res.Outcome, res.ExitCode, res.Stdout)
	}
}

func TestExecErrors(t *testing.T) {
	_, err := sup.Command("sup-no-such-program-x").Start(context.Background())
	var se *sup.Error
	if !errors.As(err, &se) || se.Part != sup.PartExec || se.Code != syscall.ENOENT || se.Op != "start" {
		t.Fatalf("not found: %#v", err)
	}
	if !errors.Is(err, exec.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("not found does not match: %v", err)
	}
	if !strings.Contains(err.Error(), "sup-no-such-program-x") {
		t.Fatalf("message %q", err)
	}

	c := sup.Command("true")
	c.Dir = "/sup/no/such/dir"
	_, err = c.Start(context.Background())
	if !errors.As(err, &se) || se.Part != sup.PartCwd || !errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("missing dir: %#v", err)
	}

	script := filepath.Join(t.TempDir(), "not-executable")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = sup.Command(script).Start(context.Background())
	if !errors.Is(err, syscall.EACCES) || !errors.Is(err, fs.ErrPermission) || errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("not executable: %v", err)
	}

	for name, c := range map[string]*sup.Cmd{
		"nul in argv":     sup.Command("echo", "a\x00b"),
		"bad signal":      {Args: []string{"true"}, Signal: syscall.Signal(4242)},
		"empty argv":      {},
		"negative idle":   {Args: []string{"true"}, IdleTimeout: -time.Second},
		"stdin conflicts": {Args: []string{"true"}, Stdin: []byte("x"), InheritStdin: true},
	} {
		_, err := c.Start(context.Background())
		if !errors.As(err, &se) || se.Part != sup.PartSpec || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("%s: %#v", name, err)
		}
	}
}

func TestBytesPassThrough(t *testing.T) {
	arg := "caf\xc3\xa9 \xff\xfe \"q\" \\ \t\n\x01"
	c := sup.Command("sh", "-c", `printf %s "$1"; printf %s "$SUP_GO_VAR" >&2; printf %s "${HOME-unset}" >&2`, "sh", arg)
	c.Setenv("SUP_GO_VAR", "v\xff\n")
	c.Setenv("HOME", "ignored")
	c.Unsetenv("HOME")
	res := run(t, c)
	if string(res.Stdout) != arg || string(res.Stderr) != "v\xff\nunset" {
		t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}

	in := make([]byte, 70000)
	for i := range in {
		in[i] = byte(i * 7)
	}
	c = sup.Command("cat")
	c.Stdin = in
	if res := run(t, c); !bytes.Equal(res.Stdout, in) {
		t.Fatalf("stdin round trip: %d bytes back of %d", len(res.Stdout), len(in))
	}
	c.Stdin = nil
	if res := run(t, c); len(res.Stdout) != 0 || !res.Success() {
		t.Fatalf("stdin nil: %q", res.Stdout)
	}

	dir := t.TempDir()
	c = sup.Command("pwd")
	c.Dir = dir
	if res := run(t, c); string(res.Stdout) != dir+"\n" {
		t.Fatalf("pwd %q, want %q", res.Stdout, dir)
	}
}

func TestMaxOutputHeadAndTail(t *testing.T) {
	c := sup.Command("sh", "-c", "printf 'HEAD'; head -c 10000 /dev/zero; printf 'TAIL'")
	c.MaxOutput = 1000
	res := run(t, c)
	if len(res.Stdout) != 1000 || res.StdoutOmitted != 10008-1000 || res.StdoutTotal != 10008 {
		t.Fatalf("kept %d omitted %d total %d", len(res.Stdout), res.StdoutOmitted, res.StdoutTotal)
	}
	if !bytes.HasPrefix(res.Stdout, []byte("HEAD")) || !bytes.HasSuffix(res.Stdout, []byte("TAIL")) {
		t.Fatalf("head/tail lost: %q...%q", res.Stdout[:8], res.Stdout[len(res.Stdout)-8:])
	}
	c.MaxOutput = -1
	if res := run(t, c); len(res.Stdout) != 0 || res.StdoutTotal != 10008 {
		t.Fatalf("MaxOutput < 0 kept %d", len(res.Stdout))
	}
}

func TestLiveReaders(t *testing.T) {
	p := start(t, nil, sup.Command("sh", "-c", "echo a; sleep 0.2; echo b >&2; sleep 0.2; echo c"))
	var out, errb []byte
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); out, _ = io.ReadAll(p.Stdout()) }()
	go func() { defer wg.Done(); errb, _ = io.ReadAll(p.Stderr()) }()
	wg.Wait()
	if string(out) != "a\nc\n" || string(errb) != "b\n" {
		t.Fatalf("stdout %q stderr %q", out, errb)
	}
	if p.Stdout() != p.Stdout() {
		t.Fatal("Stdout returned two readers")
	}
	if n, err := p.Stdout().Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Fatalf("after EOF: %d %v", n, err)
	}
	if res := wait(t, p); string(res.Stdout) != "a\nc\n" {
		t.Fatalf("result stdout %q", res.Stdout)
	}

	// A large stream read live with backpressure: nothing lost.
	c := sup.Command("sh", "-c", "head -c 3000000 /dev/urandom | od -An -v")
	c.MaxOutput = 4096
	c.Backpressure = 65536
	p = start(t, nil, c)
	n, err := io.Copy(io.Discard, p.Stdout())
	res := wait(t, p)
	if err != nil || n != res.StdoutTotal || res.StdoutOmitted == 0 {
		t.Fatalf("read %d of %d (omitted %d): %v", n, res.StdoutTotal, res.StdoutOmitted, err)
	}
}

func TestOsExecConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(2)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				code := (g*10 + i) % 250
				err := exec.Command("sh", "-c", "exit "+strconv.Itoa(code)).Run()
				var ee *exec.ExitError
				if code == 0 && err != nil || code != 0 && (!errors.As(err, &ee) || ee.ExitCode() != code) {
					t.Errorf("os/exec exit %d: %v", code, err)
				}
			}
		}(g)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				code := (g*10 + i + 1) % 250
				res, err := sup.Command("sh", "-c", "exit "+strconv.Itoa(code)).Run(context.Background())
				var ee *sup.ExitError
				if res == nil || res.ExitCode != code || res.StatusLost || (code == 0) != (err == nil) ||
					code != 0 && (!errors.As(err, &ee) || ee.ExitCode() != code) {
					t.Errorf("sup exit %d: %+v %v", code, res, err)
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestSigchldIgnoredGivesStatusLost(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=sigchld-ignored")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v: %s", err, out)
	}
	want := `outcome=exited status_lost=true exit_code=-1 signal=0 stdout="lost\n"`
	if strings.TrimSpace(string(out)) != want {
		t.Fatalf("helper said %q, want %q", out, want)
	}
}

func TestOutcomeNames(t *testing.T) {
	want := map[sup.Outcome]string{sup.Exited: "exited", sup.Signaled: "signaled", sup.IdleTimeout: "idle_timeout",
		sup.MaxRuntime: "max_runtime", sup.Interrupted: "interrupted", sup.Aborted: "aborted", 99: "outcome(99)"}
	for o, s := range want {
		if o.String() != s {
			t.Errorf("%d: %q, want %q", int(o), o.String(), s)
		}
	}
}
