// sup through its Go shim: peer_gosup {spawn|capture} COUNT, printing one
// BENCH line (see ../README.md). spawn is Cmd.Run of /bin/true, which
// captures both streams as the peer_go's cmd.Run into bytes.Buffers does;
// capture streams SUP_BENCH_WRITER's stdout through Process.Stdout with
// Backpressure set, so that every byte is read, as an os/exec user reads
// cmd.StdoutPipe.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

const (
	warmup    = 5
	readChunk = 64 << 10
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "peer_gosup: "+format+"\n", args...)
	os.Exit(1)
}

func spawnTrue() {
	res, err := sup.Command("/bin/true").Run(context.Background())
	if err != nil {
		fail("/bin/true: %v", err)
	}
	if !res.Success() {
		fail("/bin/true: %s, exit %d", res.Outcome, res.ExitCode)
	}
}

func capture(writer, count string) uint64 {
	cmd := sup.Command(writer, count)
	cmd.Backpressure = 4 * readChunk
	p, err := cmd.Start(context.Background())
	if err != nil {
		fail("start %s: %v", writer, err)
	}
	defer p.Close()
	buf := make([]byte, readChunk)
	var total uint64
	r := p.Stdout()
	for {
		n, err := r.Read(buf)
		total += uint64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			fail("read: %v", err)
		}
	}
	res, err := p.Wait(context.Background())
	if err != nil {
		fail("wait: %v", err)
	}
	if !res.Success() {
		fail("writer: %s, exit %d", res.Outcome, res.ExitCode)
	}
	return total
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintf(os.Stderr, "usage: %s {spawn|capture} COUNT\n", os.Args[0])
		os.Exit(2)
	}
	count, err := strconv.ParseUint(os.Args[2], 10, 64)
	if err != nil || count == 0 {
		fmt.Fprintf(os.Stderr, "peer_gosup: bad count %q\n", os.Args[2])
		os.Exit(2)
	}
	version := runtime.Version()
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
		fmt.Printf("BENCH impl=gosup version=%s mode=spawn count=%d samples_us=%s\n",
			version, count, strings.Join(samples, ","))
	case "capture":
		writer := os.Getenv("SUP_BENCH_WRITER")
		if writer == "" {
			fmt.Fprintln(os.Stderr, "peer_gosup: SUP_BENCH_WRITER is not set")
			os.Exit(2)
		}
		t0 := time.Now()
		got := capture(writer, os.Args[2])
		secs := time.Since(t0).Seconds()
		if got != count {
			fail("read %d of %d bytes", got, count)
		}
		fmt.Printf("BENCH impl=gosup version=%s mode=capture count=%d bytes=%d seconds=%.6f\n",
			version, count, got, secs)
	default:
		fmt.Fprintf(os.Stderr, "peer_gosup: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}
