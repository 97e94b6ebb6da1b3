package sup_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

func openFds(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// A caller that keeps only Done must get the child's real end: the Process
// it no longer references must not be finalized (which would end the child).
func TestDoneKeepsProcessAlive(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	done := func() <-chan struct{} {
		p, err := sup.Command("sh", "-c", "sleep 0.5; echo ran > "+marker).Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return p.Done()
	}()
	t0 := time.Now()
	for i := 0; i < 10; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Done never closed")
	}
	el := time.Since(t0)
	if _, err := os.Stat(marker); err != nil || el < 400*time.Millisecond {
		t.Fatalf("Done closed after %v, the child's work: %v", el, err)
	}
}

// A forgotten Process is not ended by the garbage collector; once its child
// has ended, the finalizer releases the library's descriptors.
func TestFinalizerReleasesForgottenProcess(t *testing.T) {
	for i := 0; i < 3; i++ { // the library's own descriptors exist from here
		runtime.GC()
	}
	before := openFds(t)
	dir := t.TempDir()
	const n = 20
	func() {
		for i := 0; i < n; i++ {
			c := sup.Command("sh", "-c", "sleep 0.3; echo > "+filepath.Join(dir, strconv.Itoa(i)))
			if _, err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		runtime.GC()
		ents, _ := os.ReadDir(dir)
		fds := openFds(t)
		if len(ents) == n && fds <= before {
			t.Logf("all %d forgotten children ran to their end; descriptors back to %d", n, fds)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d forgotten children finished their work; %d descriptors open, %d before", len(ents), n, fds, before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Durations up to math.MaxInt64 mean "never": they are passed as the
// library's limit, not overflowed into a negative number.
func TestHugeLimitsClamped(t *testing.T) {
	c := sup.Command("sh", "-c", "echo ok")
	c.IdleTimeout = time.Duration(math.MaxInt64)
	c.MaxRuntime = time.Duration(math.MaxInt64)
	c.Grace = time.Duration(math.MaxInt64)
	c.MaxOutput = math.MaxInt
	c.Backpressure = math.MaxInt
	res := run(t, c)
	if !res.Success() || string(res.Stdout) != "ok\n" {
		t.Fatalf("outcome %v stdout %q", res.Outcome, res.Stdout)
	}
	c.IdleTimeout = 1e12*time.Millisecond + 1 // one nanosecond past the limit
	if res := run(t, c); !res.Success() {
		t.Fatalf("outcome %v", res.Outcome)
	}
}

func threadCount() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Threads:") {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(l, "Threads:")))
			return n
		}
	}
	return -1
}

// concurrentStarts runs in a fresh process (TestMain): 200 goroutines call
// Run at once; it prints the OS thread counts.
func concurrentStarts() {
	if res, err := sup.Command("true").Run(context.Background()); err != nil || !res.Success() {
		fmt.Println("warm-up:", err)
		os.Exit(1)
	}
	before := threadCount()
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if n := int64(threadCount()); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	const n = 200
	var wg sync.WaitGroup
	var failed atomic.Int64
	gate := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			res, err := sup.Command("sh", "-c", "exit 0").Run(context.Background())
			if err != nil || !res.Success() {
				failed.Add(1)
			}
		}()
	}
	close(gate)
	wg.Wait()
	close(stop)
	<-sampled
	fmt.Printf("before=%d peak=%d after=%d failed=%d\n", before, peak.Load(), threadCount(), failed.Load())
	os.Exit(0)
}

func TestConcurrentStartsBoundThreads(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=concurrent-starts")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v: %s", err, out)
	}
	var before, peak, after, failed int
	if _, err := fmt.Sscanf(string(out), "before=%d peak=%d after=%d failed=%d", &before, &peak, &after, &failed); err != nil {
		t.Fatalf("helper said %q: %v", out, err)
	}
	t.Logf("200 concurrent Runs: OS threads %d before, %d at the peak, %d after", before, peak, after)
	if failed != 0 {
		t.Fatalf("%d runs failed", failed)
	}
	// Unbounded, each Run would hold a thread of its own (about 200, as
	// os/exec does); bounded, 4 C calls at a time plus what the runtime and
	// the race detector start under load (up to 28 seen on a loaded 2-CPU
	// machine).
	if peak-before > 48 || after-before > 48 {
		t.Fatalf("200 concurrent Runs added %d OS threads (peak %d, %d before)", max(peak, after)-before, peak, before)
	}
}

// Closing many running processes at once is bounded too (sup_release
// blocks until the SIGKILL took effect).
func TestConcurrentClosesOfRunningChildren(t *testing.T) {
	procs := make([]*sup.Process, 50)
	for i := range procs {
		procs[i] = start(t, nil, sup.Command("sleep", "60"))
	}
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func(p *sup.Process) { defer wg.Done(); p.Close() }(p)
	}
	wg.Wait()
	for _, p := range procs {
		if err := syscall.Kill(p.Pid(), 0); err != syscall.ESRCH {
			t.Fatalf("pid %d after Close: %v", p.Pid(), err)
		}
	}
}
