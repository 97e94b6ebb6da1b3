package sup_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

func seqOutput(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// readWithGaps reads r to EOF in chunks of size, sleeping between reads,
// and checks every byte against want at its position in the stream: each
// *GapError moves the position by what it skipped.
func readWithGaps(t *testing.T, r io.Reader, want []byte, size int, pause time.Duration) (gaps int) {
	t.Helper()
	buf := make([]byte, size)
	var pos int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if pos+int64(n) > int64(len(want)) || !bytes.Equal(buf[:n], want[pos:pos+int64(n)]) {
				t.Fatalf("read %d bytes at %d that the child did not write there: %q", n, pos, buf[:n])
			}
			pos += int64(n)
		}
		var gap *sup.GapError
		switch {
		case errors.As(err, &gap):
			if n != 0 || gap.Skipped <= 0 {
				t.Fatalf("gap of %d with %d bytes", gap.Skipped, n)
			}
			if !strings.Contains(err.Error(), strconv.FormatInt(gap.Skipped, 10)+" bytes skipped") {
				t.Fatalf("message %q", err)
			}
			gaps++
			pos += gap.Skipped
		case err == io.EOF:
			if pos != int64(len(want)) {
				t.Fatalf("EOF at %d of %d bytes", pos, len(want))
			}
			return gaps
		case err != nil:
			t.Fatal(err)
		}
		time.Sleep(pause)
	}
}

// A live reader that falls behind the kept window is told what it lost,
// once per gap, and never gets bytes from both sides of a gap in one Read.
func TestLiveReaderToldOfGaps(t *testing.T) {
	want := seqOutput(100000)
	c := sup.Command("seq", "1", "100000")
	c.MaxOutput = 4096

	// Behind for sure: the child has ended before the first Read.
	p := start(t, nil, c)
	res := wait(t, p)
	if gaps := readWithGaps(t, p.Stdout(), want, 1000, 0); gaps != 1 {
		t.Fatalf("%d gaps, want 1", gaps)
	}
	if res.StdoutOmitted != int64(len(want))-4096 {
		t.Fatalf("omitted %d", res.StdoutOmitted)
	}

	// A slow reader, live.
	p = start(t, nil, c)
	gaps := readWithGaps(t, p.Stdout(), want, 1000, time.Millisecond)
	t.Logf("a slow live reader of seq 1 100000 with MaxOutput 4096 was told of %d gaps", gaps)
	if gaps < 1 {
		t.Fatal("no gap reported")
	}
}

func TestStdinPipe(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: the pipe fills
	c := sup.Command("sh", "-c", "cat; echo done >&2")
	w, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StdinPipe(); err == nil {
		t.Fatal("a second StdinPipe succeeded")
	}
	// Written before Start: waits for the child.
	wrote := make(chan error, 1)
	go func() {
		for b := data; len(b) > 0; b = b[min(len(b), 100000):] {
			if _, err := w.Write(b[:min(len(b), 100000)]); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- w.Close()
	}()
	p := start(t, nil, c)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	res := wait(t, p)
	if !bytes.Equal(res.Stdout, data) || string(res.Stderr) != "done\n" {
		t.Fatalf("got %d bytes back of %d; stderr %q", len(res.Stdout), len(data), res.Stderr)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	var se *sup.Error
	if _, err := c.Start(context.Background()); !errors.As(err, &se) || se.Part != sup.PartSpec {
		t.Fatalf("a second Start with a used StdinPipe: %v", err)
	}

	// The child is gone: EPIPE, not a hang.
	c = sup.Command("true")
	w, _ = c.StdinPipe()
	p = start(t, nil, c)
	wait(t, p)
	if _, err := w.Write(make([]byte, 1<<20)); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Write to an ended child: %v", err)
	}

	// Closed before Start: the child reads EOF at once.
	c = sup.Command("cat")
	w, _ = c.StdinPipe()
	w.Close()
	if res := run(t, c); len(res.Stdout) != 0 {
		t.Fatalf("stdout %q", res.Stdout)
	}

	// A failed Start reaches the writer.
	c = sup.Command("sup-no-such-program-x")
	w, _ = c.StdinPipe()
	if _, err := c.Start(context.Background()); !errors.Is(err, exec.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("Write after a failed Start: %v", err)
	}

	// Close of the Process wakes a blocked writer.
	c = sup.Command("sleep", "60")
	w, _ = c.StdinPipe()
	p = start(t, nil, c)
	go func() { _, err := w.Write(make([]byte, 1<<20)); wrote <- err }()
	time.Sleep(50 * time.Millisecond)
	p.Close()
	select {
	case err := <-wrote:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("blocked Write after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a blocked Write did not return after Close")
	}
}

type onlyReader struct{ io.Reader } // hides bytes.Reader's other methods

func TestStdinReaderStringAndBytes(t *testing.T) {
	data := bytes.Repeat([]byte("stdin through a goroutine\n"), 20000)
	c := sup.Command("cat")
	c.Stdin = onlyReader{bytes.NewReader(data)}
	if res := run(t, c); !bytes.Equal(res.Stdout, data) {
		t.Fatalf("io.Reader: %d bytes back of %d", len(res.Stdout), len(data))
	}
	c.Stdin = "a string"
	if res := run(t, c); string(res.Stdout) != "a string" {
		t.Fatalf("string: %q", res.Stdout)
	}
	c.Stdin = []byte("bytes")
	if res := run(t, c); string(res.Stdout) != "bytes" {
		t.Fatalf("[]byte: %q", res.Stdout)
	}
	c.Stdin = 42
	var se *sup.Error
	if _, err := c.Run(context.Background()); !errors.As(err, &se) || se.Part != sup.PartSpec || !strings.Contains(se.Detail, "int") {
		t.Fatalf("Stdin = 42: %v", err)
	}

	// A failing reader: the child gets what was read and EOF; Wait reports it.
	boom := errors.New("boom")
	c.Stdin = io.MultiReader(strings.NewReader("part"), iotest.ErrReader(boom))
	res, err := c.Run(context.Background())
	if res == nil || !res.Success() || string(res.Stdout) != "part" || !errors.Is(err, boom) || !errors.As(err, &se) || se.Op != "stdin" {
		t.Fatalf("failing reader: %+v %v", res, err)
	}
}

func TestStdinOsStdinIsInherited(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=os-stdin")
	cmd.Stdin = strings.NewReader("from the host's stdin\n")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "from the host's stdin\n" {
		t.Fatalf("helper: %v: %q", err, out)
	}
}

// osStdin runs in a fresh process (TestMain), whose stdin the test gives.
func osStdin() {
	c := sup.Command("cat")
	c.Stdin = os.Stdin
	res, err := c.Run(context.Background())
	if err != nil {
		os.Stdout.WriteString("error: " + err.Error())
		os.Exit(1)
	}
	os.Stdout.Write(res.Stdout)
	os.Exit(0)
}

func TestExitErrorAndOutput(t *testing.T) {
	if s := sup.Command("echo", "a b").String(); s != "echo a b" {
		t.Fatalf("String %q", s)
	}
	out, err := sup.Command("sh", "-c", "echo out; echo oops >&2; exit 3").Output(context.Background())
	var ee *sup.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || string(ee.Stderr) != "oops\n" || string(out) != "out\n" {
		t.Fatalf("Output: %q %v", out, err)
	}
	if err.Error() != "exit status 3" || ee.Result.String() != "exit status 3" {
		t.Fatalf("message %q", err)
	}
	if out, err := sup.Command("echo", "fine").Output(context.Background()); err != nil || string(out) != "fine\n" {
		t.Fatalf("Output of a success: %q %v", out, err)
	}
	if out, err := sup.Command("sup-no-such-program-x").Output(context.Background()); out != nil || !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("Output of a failed start: %q %v", out, err)
	}

	c := sup.Command("sh", "-c", "echo started; exec sleep 30")
	c.IdleTimeout = 100 * time.Millisecond
	res, err := c.Run(context.Background())
	if !errors.As(err, &ee) || ee.Result != res || ee.Outcome != sup.IdleTimeout || err.Error() != "idle_timeout (signal: terminated)" {
		t.Fatalf("idle timeout: %v", err)
	}
	res, err = sup.Command("sh", "-c", "kill -USR1 $$").Run(context.Background())
	if err == nil || err.Error() != "signal: user defined signal 1" || res.Err().Error() != err.Error() {
		t.Fatalf("signaled: %v", err)
	}
	p := start(t, context.Background(), sup.Command("sh", "-c", "trap 'exit 1' TERM; echo up; while :; do sleep 0.05; done"))
	readLine(t, p.Stdout())
	p.Interrupt()
	res, err = p.Wait(context.Background())
	if err == nil || err.Error() != "interrupted (exit status 1)" || res.Success() {
		t.Fatalf("interrupted: %v", err)
	}
	if res := run(t, sup.Command("true")); res.Err() != nil || res.String() != "exit status 0" {
		t.Fatalf("success: %v %q", res.Err(), res.String())
	}
}
