package sup_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

// The benchmarks compare sup with os/exec on the same work:
//   - spawn /bin/true and wait for it, both streams captured on both sides
//     (sup always captures; os/exec with a bytes.Buffer for each, as
//     cmd.Output and CombinedOutput do); and once against os/exec leaving
//     both on /dev/null, the cheapest os/exec can be;
//   - the same with a 2 GiB live Go heap;
//   - time out a child that printed a line and then fell silent, 200 ms
//     after the start, and get that partial output. sup uses MaxRuntime (a
//     deadline from the spawn, as a context deadline is); os/exec uses
//     exec.CommandContext with a 200 ms deadline, once with the child in its
//     own process group and Cancel killing the group, once plain with
//     WaitDelay 100 ms (without either, the sleeping grandchild holds the
//     pipe and Wait blocks for its 10 s).
//
//   - stream 1 GiB from a child, read live: sup through Process.Stdout with
//     Backpressure (every byte read, as a StdoutPipe reader reads them),
//     os/exec through StdoutPipe, both with io.Copy into io.Discard (sup's
//     reader's WriteTo); once more with sup keeping 256 KiB (MaxOutput)
//     instead of 16 MiB. The child is $SUP_BENCH_WRITER BYTES
//     (tests/bench/bench_writer, 64 KiB writes; bench.sh sets it) or else
//     head -c BYTES /dev/zero.
//
// go test -bench . gives the means; shims/go/bench.sh runs TestBenchReport,
// which alternates sup and os/exec sample by sample and writes p50/p99.

const silentScript = "echo partial; sleep 10"

func supTrue() error {
	res, err := sup.Command("/bin/true").Run(context.Background())
	if err == nil && !res.Success() {
		err = fmt.Errorf("sup: %v %d", res.Outcome, res.ExitCode)
	}
	return err
}

func execTrue() error { return exec.Command("/bin/true").Run() }

// execTrueCaptured does sup's work: both streams through pipes into buffers.
func execTrueCaptured() error {
	var out, errOut bytes.Buffer
	c := exec.Command("/bin/true")
	c.Stdout, c.Stderr = &out, &errOut
	return c.Run()
}

func supTimeout() error {
	c := sup.Command("sh", "-c", silentScript)
	c.MaxRuntime = 200 * time.Millisecond
	// As with os/exec's kill, a timeout is an *ExitError holding the Result.
	res, err := c.Run(context.Background())
	if res == nil || res.Outcome != sup.MaxRuntime || string(res.Stdout) != "partial\n" {
		return fmt.Errorf("sup: %v, %v", res, err)
	}
	return nil
}

// execTimeout is a careful exec.CommandContext: the child in a group of its
// own, and the whole group killed when the context ends.
func execTimeout() error {
	return execTimeoutWith(func(c *exec.Cmd) {
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	})
}

// execTimeoutPlain is exec.CommandContext as most programs use it, with a
// WaitDelay so that Wait does not block on the grandchild for 10 s.
func execTimeoutPlain() error {
	return execTimeoutWith(func(c *exec.Cmd) { c.WaitDelay = 100 * time.Millisecond })
}

// execTimeoutWith runs silentScript under a 200 ms context, set up by setup.
func execTimeoutWith(setup func(*exec.Cmd)) error {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	c := exec.CommandContext(ctx, "sh", "-c", silentScript)
	c.Stdout = &out
	setup(c)
	err := c.Run()
	if ctx.Err() == nil || out.String() != "partial\n" {
		return fmt.Errorf("os/exec: %v %q", err, out.String())
	}
	return nil
}

const streamBytes = 1 << 30

func writerCmd(n int64) []string {
	if w := os.Getenv("SUP_BENCH_WRITER"); w != "" {
		return []string{w, strconv.FormatInt(n, 10)}
	}
	return []string{"head", "-c", strconv.FormatInt(n, 10), "/dev/zero"}
}

func supStream() error { return supStreamKeeping(0) }

func supStreamSmall() error { return supStreamKeeping(256 << 10) }

// supStreamKeeping is supStream with Cmd.MaxOutput set to maxOutput.
func supStreamKeeping(maxOutput int) error {
	c := sup.Command(writerCmd(streamBytes)[0], writerCmd(streamBytes)[1:]...)
	c.Backpressure = 256 << 10
	c.MaxOutput = maxOutput
	p, err := c.Start(context.Background())
	if err != nil {
		return err
	}
	defer p.Close()
	n, err := io.Copy(io.Discard, p.Stdout()) // the reader's WriteTo
	if err != nil {
		return err
	}
	if _, err := p.Wait(context.Background()); err != nil {
		return err
	}
	if n != streamBytes {
		return fmt.Errorf("sup: read %d of %d bytes", n, streamBytes)
	}
	return nil
}

func execStream() error {
	args := writerCmd(streamBytes)
	c := exec.Command(args[0], args[1:]...)
	r, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, r)
	if werr := c.Wait(); err == nil {
		err = werr
	}
	if err == nil && n != streamBytes {
		err = fmt.Errorf("os/exec: read %d of %d bytes", n, streamBytes)
	}
	return err
}

func bench(b *testing.B, f func() error) {
	for i := 0; i < b.N; i++ {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSpawnTrue(b *testing.B) {
	b.Run("sup", func(b *testing.B) { bench(b, supTrue) })
	b.Run("os-exec-captured", func(b *testing.B) { bench(b, execTrueCaptured) })
	b.Run("os-exec", func(b *testing.B) { bench(b, execTrue) })
}

func BenchmarkSpawnTrueHeap2GiB(b *testing.B) {
	heap := bigHeap()
	b.ResetTimer()
	b.Run("sup", func(b *testing.B) { bench(b, supTrue) })
	b.Run("os-exec-captured", func(b *testing.B) { bench(b, execTrueCaptured) })
	runtime.KeepAlive(heap)
}

func BenchmarkStream1GiB(b *testing.B) {
	b.SetBytes(streamBytes)
	b.Run("sup-Process.Stdout", func(b *testing.B) { b.SetBytes(streamBytes); bench(b, supStream) })
	b.Run("sup-Process.Stdout-MaxOutput256KiB", func(b *testing.B) { b.SetBytes(streamBytes); bench(b, supStreamSmall) })
	b.Run("os-exec-StdoutPipe", func(b *testing.B) { b.SetBytes(streamBytes); bench(b, execStream) })
}

func BenchmarkSilentTimeout200ms(b *testing.B) {
	b.Run("sup", func(b *testing.B) { bench(b, supTimeout) })
	b.Run("os-exec", func(b *testing.B) { bench(b, execTimeout) })
	b.Run("os-exec-plain", func(b *testing.B) { bench(b, execTimeoutPlain) })
}

// bigHeap allocates 2 GiB of live Go heap, every page touched.
func bigHeap() [][]byte {
	heap := make([][]byte, 2048)
	for i := range heap {
		heap[i] = make([]byte, 1<<20)
		for j := 0; j < len(heap[i]); j += 4096 {
			heap[i][j] = 1
		}
	}
	return heap
}

type row struct {
	name     string
	sup, std []time.Duration
}

func pct(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p*float64(len(s)) + 0.5)
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}

func sample(t *testing.T, name string, n int, supF, stdF func() error) row {
	r := row{name: name}
	for _, f := range []func() error{supF, stdF} { // warm up both
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		for k, f := range []func() error{supF, stdF} {
			if i%2 == 1 { // alternate which one goes first
				f = []func() error{stdF, supF}[k]
			}
			t0 := time.Now()
			if err := f(); err != nil {
				t.Fatal(err)
			}
			d := time.Since(t0)
			if (k == 0) == (i%2 == 0) {
				r.sup = append(r.sup, d)
			} else {
				r.std = append(r.std, d)
			}
		}
	}
	return r
}

func ms3(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }

// streamRun is the samples of one side of the throughput rows: the wall
// time of each run and the CPU time it took (this process and its reaped
// children: the reader and the writer).
type streamRun struct{ wall, cpu []time.Duration }

// cpuTime is the user and system time of this process and its reaped
// children so far.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano())
}

// streamSamples runs each f n times, in turns whose order rotates (every f
// goes first, second, ... equally often), after one warm-up run each.
func streamSamples(t *testing.T, n int, fs ...func() error) []streamRun {
	runs := make([]streamRun, len(fs))
	for _, f := range fs {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		for k := range fs {
			j := (i + k) % len(fs)
			c0, t0 := cpuTime(), time.Now()
			if err := fs[j](); err != nil {
				t.Fatal(err)
			}
			runs[j].wall = append(runs[j].wall, time.Since(t0))
			runs[j].cpu = append(runs[j].cpu, cpuTime()-c0)
		}
	}
	return runs
}

// TestBenchReport writes the benchmark table to $SUP_GO_BENCH_OUT; without it
// the test is skipped. Run it through shims/go/bench.sh. With
// SUP_GO_BENCH_ROWS=stream it measures the throughput rows alone and writes
// only them.
func TestBenchReport(t *testing.T) {
	out := os.Getenv("SUP_GO_BENCH_OUT")
	if out == "" {
		t.Skip("set SUP_GO_BENCH_OUT (shims/go/bench.sh)")
	}
	streamOnly := os.Getenv("SUP_GO_BENCH_ROWS") == "stream"
	load, _ := os.ReadFile("/proc/loadavg")
	var rows []row
	if !streamOnly {
		rows = append(rows, sample(t, "spawn+wait /bin/true, both streams captured", 400, supTrue, execTrueCaptured))
		rows = append(rows, sample(t, "the same; os/exec leaving stdout and stderr on /dev/null", 400, supTrue, execTrue))
		heap := bigHeap()
		rows = append(rows, sample(t, "spawn+wait /bin/true, both streams captured, 2 GiB live heap", 400, supTrue, execTrueCaptured))
		runtime.KeepAlive(heap)
		heap = nil
		runtime.GC()
		rows = append(rows, sample(t, "silent child timed out after 200 ms, partial output kept; os/exec: group killed by Cancel", 40, supTimeout, execTimeout))
		rows = append(rows, sample(t, "the same; os/exec: plain CommandContext, WaitDelay 100 ms", 30, supTimeout, execTimeoutPlain))
	}
	loadStream, _ := os.ReadFile("/proc/loadavg")
	stream := streamSamples(t, 20, execStream, supStream, supStreamSmall)
	loadAfter, _ := os.ReadFile("/proc/loadavg")
	loadavg := func(b []byte) string { return strings.TrimSpace(string(b)) }

	var b strings.Builder
	fmt.Fprintf(&b, "# Go shim: sup vs os/exec\n\n")
	fmt.Fprintf(&b, "`shims/go/bench.sh BUILD_DIR` (TestBenchReport in shims/go/bench_test.go), %s, GOMAXPROCS=%d, %d CPUs, %s; load average before: %s, before the throughput rows: %s, after: %s.\n",
		runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU(), time.Now().UTC().Format("2006-01-02 15:04 UTC"), loadavg(load), loadavg(loadStream), loadavg(loadAfter))
	if busy := loadavg(loadStream); busy != "" {
		var l1 float64
		if _, err := fmt.Sscan(busy, &l1); err == nil && l1 > float64(runtime.NumCPU()) {
			fmt.Fprintf(&b, "\nA busy machine (a 1-minute load average above the CPU count): read the ratios only, and the CPU columns of the throughput rows, which the load blurs least.\n")
		}
	}
	var loses []string
	if !streamOnly {
		fmt.Fprintf(&b, "\n| case | samples | sup p50 | os/exec p50 | p50 ratio | sup p99 | os/exec p99 | p99 ratio |\n|---|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			s50, e50, s99, e99 := pct(r.sup, .5), pct(r.std, .5), pct(r.sup, .99), pct(r.std, .99)
			fmt.Fprintf(&b, "| %s | %d + %d | %s | %s | %.2f× | %s | %s | %.2f× |\n", r.name, len(r.sup), len(r.std),
				ms3(s50), ms3(e50), float64(s50)/float64(e50), ms3(s99), ms3(e99), float64(s99)/float64(e99))
			if s50 > e50 {
				loses = append(loses, fmt.Sprintf("%s (p50 %.2f×)", r.name, float64(s50)/float64(e50)))
			}
			t.Logf("%s: sup p50 %v p99 %v, os/exec p50 %v p99 %v", r.name, s50, s99, e50, e99)
		}
	}
	gbps := func(d time.Duration) float64 { return float64(streamBytes) / d.Seconds() / 1e9 }
	std := stream[0]
	fmt.Fprintf(&b, "\n| throughput | samples | sup p50 | os/exec p50 | sup / os/exec | sup CPU p50 | os/exec CPU p50 |\n|---|---|---|---|---|---|---|\n")
	for i, name := range []string{
		"stream 1 GiB read live: Process.Stdout (Backpressure) vs StdoutPipe, io.Copy to io.Discard",
		"the same, sup keeping 256 KiB of it (MaxOutput) instead of 16 MiB",
	} {
		r := stream[i+1]
		s50, e50 := pct(r.wall, .5), pct(std.wall, .5)
		ratio := gbps(s50) / gbps(e50)
		fmt.Fprintf(&b, "| %s | %d + %d | %.2f GB/s | %.2f GB/s | %.2f× | %s | %s |\n", name, len(r.wall), len(std.wall),
			gbps(s50), gbps(e50), ratio, ms3(pct(r.cpu, .5)), ms3(pct(std.cpu, .5)))
		t.Logf("%s: sup %.2f GB/s, os/exec %.2f GB/s, %.2fx; CPU sup %v, os/exec %v", name, gbps(s50), gbps(e50), ratio, pct(r.cpu, .5), pct(std.cpu, .5))
		if s50 > e50 {
			loses = append(loses, fmt.Sprintf("%s (%.2f×)", name, ratio))
		}
	}
	b.WriteString("\n")
	if !streamOnly {
		b.WriteString("Each sample is one whole run, from Start to the result in hand, timed in the test process; sup and os/exec alternate sample by sample (which one goes first alternates too), so both see the same machine. Ratios are sup / os/exec: below 1 sup is faster. sup's run includes capturing both streams through pipes, the library's event loop taking the child on, the netpoller wait on a duplicate of sup_fd, building the Result (both streams' bytes, rusage) and releasing the handle. The like-for-like os/exec run captures both streams too, into a bytes.Buffer each (pipes, and a goroutine copying each); the second row leaves them on /dev/null, the cheapest os/exec run there is, which does none of that work. With a 2 GiB heap both stay flat (Go's os/exec and libsup both clone with CLONE_VM|CLONE_VFORK). In the timeout rows sup's MaxRuntime and os/exec's context deadline both count 200 ms from the start; the first os/exec row is the best setup a careful user writes (own process group, Cancel killing the group), so both end at the deadline and the difference is overhead; the second is exec.CommandContext as usually written: it kills only sh, the sleeping grandchild keeps the pipe open, and Wait returns only after WaitDelay (100 ms here; without WaitDelay it would block for the grandchild's whole 10 s), while sup ends the whole group at the deadline. ")
	}
	b.WriteString("The throughput rows are GB/s, and their ratio above 1 means sup is faster. Each sample streams 1 GiB from Start to the result in hand; os/exec, sup and sup keeping 256 KiB take turns, in an order that rotates, and both rows divide by the same os/exec samples; the CPU columns are the user and system time of the test process and its children (reader and writer together) per run; the child is the same on both sides (tests/bench/bench_writer, 64 KiB writes, when bench.sh finds it built; else head -c from /dev/zero). Both sides call io.Copy(io.Discard, r): os/exec's r is the StdoutPipe (8 KiB read(2)s, io.Discard's buffer); sup's is Process.Stdout with Backpressure (256 KiB), whose WriteTo io.Copy takes: the reader waits on a duplicate of sup_output_fd, an epoll set holding the pipe, on the netpoller, and each chunk is one cgo call, sup_output_read into a 64 KiB buffer, which reads the pipe itself in that thread (one read(2)) and also copies the bytes into what sup keeps for the Result. The second row keeps 256 KiB instead of the default 16 MiB (MaxOutput): the same reads, with that copy cycling through a buffer that stays in the CPU's cache, where 16 MiB goes through memory; the CPU between the two rows is that copy's difference.")
	if !streamOnly {
		b.WriteString(" The load averages above tell how quiet the machine was; the p99 column shows noise most.")
	}
	if len(loses) > 0 {
		fmt.Fprintf(&b, " Where sup loses at p50 in this run: %s.", strings.Join(loses, "; "))
	} else {
		fmt.Fprintf(&b, " sup did not lose at p50 in any case in this run.")
	}
	b.WriteString("\n")
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", out)
}
