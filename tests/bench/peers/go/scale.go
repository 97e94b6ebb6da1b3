package main

// The scale mode: COUNT children of $SUP_BENCH_CHILD ("chatty 100": a
// 64-byte line every 100 ms), watched the way a Go program naively would:
// os/exec with stdout through cmd.StdoutPipe read by a bufio.Scanner in a
// goroutine per child, stderr copied by os/exec's own goroutine, each child
// in a process group of its own (as sup puts it). After
// $SUP_BENCH_SCALE_SETTLE seconds, the process's CPU (getrusage
// RUSAGE_SELF: every thread, none of the children) and context switches are
// taken over $SUP_BENCH_SCALE_SECONDS, with the lines read in that window.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func envSeconds(name string) time.Duration {
	v, err := strconv.ParseFloat(os.Getenv(name), 64)
	if err != nil || v <= 0 {
		fmt.Fprintf(os.Stderr, "peer_go: %s must be a positive number of seconds\n", name)
		os.Exit(2)
	}
	return time.Duration(v * float64(time.Second))
}

func usage() (cpuMs float64, csw int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fail("getrusage: %v", err)
	}
	cpuMs = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	return cpuMs, ru.Nvcsw + ru.Nivcsw
}

func scale(n int) {
	child := os.Getenv("SUP_BENCH_CHILD")
	if child == "" {
		fmt.Fprintln(os.Stderr, "peer_go: SUP_BENCH_CHILD is not set")
		os.Exit(2)
	}
	settle := envSeconds("SUP_BENCH_SCALE_SETTLE")
	window := envSeconds("SUP_BENCH_SCALE_SECONDS")
	var lines atomic.Int64
	var readers sync.WaitGroup
	cmds := make([]*exec.Cmd, n)
	t0 := time.Now()
	for i := range cmds {
		cmd := exec.Command(child, "chatty", "100")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Stderr = io.Discard
		out, err := cmd.StdoutPipe()
		if err != nil {
			fail("stdout pipe: %v", err)
		}
		if err := cmd.Start(); err != nil {
			fail("start %s (child %d): %v", child, i, err)
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines.Add(1)
			}
		}()
		cmds[i] = cmd
	}
	spawnS := time.Since(t0).Seconds()
	time.Sleep(settle)
	l0 := lines.Load()
	cpu0, csw0 := usage()
	w0 := time.Now()
	time.Sleep(window)
	cpu1, csw1 := usage()
	l1 := lines.Load()
	secs := time.Since(w0).Seconds()
	for _, cmd := range cmds {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	readers.Wait()
	for _, cmd := range cmds {
		cmd.Wait()
	}
	fmt.Printf("BENCH impl=go version=%s mode=scale count=%d seconds=%.3f lines=%d "+
		"cpu_ms=%.3f context_switches=%d spawn_s=%.3f\n",
		runtime.Version(), n, secs, l1-l0, cpu1-cpu0, csw1-csw0, spawnS)
}
