// Go os/exec peer: peer_go {spawn|capture} COUNT, printing one BENCH line
// (see ../README.md). spawn runs /bin/true with stdout and stderr captured in
// bytes.Buffers (cmd.Run), as a Go program capturing a command would;
// capture reads SUP_BENCH_WRITER's stdout through cmd.StdoutPipe; scale is
// the naive way to watch many chatty children (scale.go).
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

const (
	warmup    = 5
	readChunk = 64 << 10
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "peer_go: "+format+"\n", args...)
	os.Exit(1)
}

func spawnTrue() {
	cmd := exec.Command("/bin/true")
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		fail("/bin/true: %v", err)
	}
}

func capture(writer, count string) uint64 {
	cmd := exec.Command(writer, count)
	cmd.Stderr = os.Stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		fail("stdout pipe: %v", err)
	}
	if err := cmd.Start(); err != nil {
		fail("start %s: %v", writer, err)
	}
	buf := make([]byte, readChunk)
	var total uint64
	for {
		n, err := pipe.Read(buf)
		total += uint64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			fail("read: %v", err)
		}
	}
	if err := cmd.Wait(); err != nil {
		fail("writer: %v", err)
	}
	return total
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintf(os.Stderr, "usage: %s {spawn|capture|scale} COUNT\n", os.Args[0])
		os.Exit(2)
	}
	count, err := strconv.ParseUint(os.Args[2], 10, 64)
	if err != nil || count == 0 {
		fmt.Fprintf(os.Stderr, "peer_go: bad count %q\n", os.Args[2])
		os.Exit(2)
	}
	switch os.Args[1] {
	case "spawn":
		samples := make([]string, 0, count)
		for i := uint64(0); i < count+warmup; i++ {
			t0 := time.Now()
			spawnTrue()
			us := float64(time.Since(t0).Nanoseconds()) / 1e3
			if i >= warmup {
				samples = append(samples, strconv.FormatFloat(us, 'f', 2, 64))
			}
		}
		fmt.Printf("BENCH impl=go version=%s mode=spawn count=%d samples_us=%s\n",
			runtime.Version(), count, strings.Join(samples, ","))
	case "capture":
		writer := os.Getenv("SUP_BENCH_WRITER")
		if writer == "" {
			fmt.Fprintln(os.Stderr, "peer_go: SUP_BENCH_WRITER is not set")
			os.Exit(2)
		}
		t0 := time.Now()
		got := capture(writer, os.Args[2])
		secs := time.Since(t0).Seconds()
		if got != count {
			fail("read %d of %d bytes", got, count)
		}
		fmt.Printf("BENCH impl=go version=%s mode=capture count=%d bytes=%d seconds=%.6f\n",
			runtime.Version(), count, got, secs)
	case "scale":
		scale(int(count))
	default:
		fmt.Fprintf(os.Stderr, "peer_go: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}
