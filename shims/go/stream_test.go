package sup_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	sup "github.com/sup-project/sup/shims/go"
)

// The live readers' WriteTo (the path io.Copy takes) and their chunked
// Read: every byte once, in order, at every size of Read.

const seqLines = 1500000 // seq 1 1500000: 10.9 MB, more than the pipe and MaxOutput hold

const chunk = 64 << 10 // the most one sup_output_read is asked for

func seqCmd(n int) *sup.Cmd {
	c := sup.Command("seq", "1", strconv.Itoa(n))
	c.MaxOutput = 1 << 20 // much less than the stream: a reader that lost bytes is caught
	c.Backpressure = 256 << 10
	return c
}

// writerTo is the reader's io.WriterTo, as io.Copy finds it.
func writerTo(t *testing.T, r io.Reader) io.WriterTo {
	t.Helper()
	wt, ok := r.(io.WriterTo)
	if !ok {
		t.Fatalf("%T is not an io.WriterTo: io.Copy would read it 32 KiB at a time", r)
	}
	return wt
}

func TestLiveWriteToWholeStream(t *testing.T) {
	want := seqOutput(seqLines)
	p := start(t, nil, seqCmd(seqLines))
	var got bytes.Buffer // a ReaderFrom too: io.Copy still takes WriteTo
	n, err := io.Copy(&got, p.Stdout())
	if err != nil || n != int64(len(want)) || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("io.Copy: %d of %d bytes, equal %v: %v", n, len(want), bytes.Equal(got.Bytes(), want), err)
	}
	res := wait(t, p)
	if res.StdoutTotal != int64(len(want)) || res.StdoutOmitted == 0 {
		t.Fatalf("total %d omitted %d", res.StdoutTotal, res.StdoutOmitted)
	}
	// At the end: WriteTo writes nothing and says nothing is wrong; Read
	// says io.EOF.
	if n, err := writerTo(t, p.Stdout()).WriteTo(&got); n != 0 || err != nil {
		t.Fatalf("WriteTo after the end: %d %v", n, err)
	}
	if n, err := p.Stdout().Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("Read after the end: %d %v", n, err)
	}

	// The stream on stderr, read once the child has ended and been waited for.
	c := sup.Command("sh", "-c", "seq 1 200000 >&2")
	c.Backpressure = 256 << 10
	p = start(t, nil, c)
	got.Reset()
	rd := make(chan error, 1)
	wt := writerTo(t, p.Stderr())
	go func() { _, err := wt.WriteTo(&got); rd <- err }()
	wait(t, p)
	if err := <-rd; err != nil || !bytes.Equal(got.Bytes(), seqOutput(200000)) {
		t.Fatalf("stderr: %d bytes: %v", got.Len(), err)
	}
}

// Small Reads are served from the reader's buffer, and mixing Read and
// WriteTo loses nothing and repeats nothing.
func TestLiveSmallReadsThenWriteTo(t *testing.T) {
	want := seqOutput(seqLines)
	p := start(t, nil, seqCmd(seqLines))
	r := p.Stdout()
	var got bytes.Buffer
	for _, size := range []int{1, 7, 100, 4096, 65536, 100000} {
		buf := make([]byte, size)
		for i := 0; i < 5; i++ {
			n, err := r.Read(buf)
			if err != nil || n == 0 || n > size {
				t.Fatalf("Read(%d): %d %v", size, n, err)
			}
			got.Write(buf[:n])
		}
	}
	if n, err := r.Read(nil); n != 0 || err != nil {
		t.Fatalf("Read(nil): %d %v", n, err)
	}
	if _, err := writerTo(t, r).WriteTo(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("%d bytes of %d, not the child's", got.Len(), len(want))
	}
	// 1000 bytes at a time, the whole way: no gap, nothing lost.
	p = start(t, nil, seqCmd(seqLines))
	if gaps := readWithGaps(t, p.Stdout(), want, 1000, 0); gaps != 0 {
		t.Fatalf("%d gaps with Backpressure", gaps)
	}
	if res := wait(t, p); res.StdoutTotal != int64(len(want)) {
		t.Fatalf("total %d", res.StdoutTotal)
	}
}

// shortWriter takes half of what it is given, once, then fails.
type shortWriter struct {
	bytes.Buffer
	after int // fail once this much is written
}

var errFull = errors.New("full")

func (w *shortWriter) Write(b []byte) (int, error) {
	if w.Len()+len(b) <= w.after {
		return w.Buffer.Write(b)
	}
	n, _ := w.Buffer.Write(b[:len(b)/2])
	return n, errFull
}

// A writer's error stops WriteTo; the bytes it did not take are the next
// ones read.
func TestLiveWriteToWriterError(t *testing.T) {
	want := seqOutput(seqLines)
	p := start(t, nil, seqCmd(seqLines))
	w := &shortWriter{after: 3 << 20}
	n, err := writerTo(t, p.Stdout()).WriteTo(w)
	if err != errFull || n != int64(w.Len()) || n <= 3<<20-chunk {
		t.Fatalf("WriteTo into a failing writer: %d (wrote %d): %v", n, w.Len(), err)
	}
	got := &w.Buffer
	if _, err := io.Copy(got, readOnly{p.Stdout()}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("%d bytes of %d, not the child's", got.Len(), len(want))
	}
	wait(t, p)
}

// readOnly hides the reader's WriteTo, so that io.Copy uses Read.
type readOnly struct{ r io.Reader }

func (r readOnly) Read(b []byte) (int, error) { return r.r.Read(b) }

// A child killed mid-stream, by sup (Abort) or from outside (SIGKILL):
// WriteTo ends without an error at the end of what the child wrote, and
// every byte it wrote was written.
func TestLiveWriteToChildKilled(t *testing.T) {
	for _, how := range []sup.Outcome{sup.Aborted, sup.Signaled} {
		c := sup.Command("yes", "0123456789abcdef")
		c.Backpressure = 256 << 10
		c.MaxOutput = 1 << 20
		p := start(t, nil, c)
		kill := func() { p.Abort() }
		if how == sup.Signaled {
			kill = func() { syscall.Kill(p.Pid(), syscall.SIGKILL) }
		}
		w := &killAfter{n: 8 << 20, kill: kill}
		n, err := writerTo(t, p.Stdout()).WriteTo(w)
		if err != nil {
			t.Fatal(how, err)
		}
		res, _ := p.Wait(context.Background())
		if res == nil || res.Outcome != how {
			t.Fatalf("%v: result %+v", how, res)
		}
		if n < 8<<20 || n != res.StdoutTotal {
			t.Fatalf("%v: wrote %d, the child wrote %d", how, n, res.StdoutTotal)
		}
		if !w.ok {
			t.Fatalf("%v: bytes not the child's", how)
		}
	}
}

type killAfter struct {
	seen, n int64
	kill    func()
	ok      bool
	line    []byte
}

func (w *killAfter) Write(b []byte) (int, error) {
	if w.seen == 0 {
		w.ok = true
		w.line = []byte("0123456789abcdef\n")
	}
	for i, c := range b {
		if c != w.line[(w.seen+int64(i))%17] {
			w.ok = false
		}
	}
	w.seen += int64(len(b))
	if w.seen >= w.n && w.kill != nil {
		w.kill()
		w.kill = nil
	}
	return len(b), nil
}

// Close while WriteTo waits, and while it streams: it returns os.ErrClosed
// at once, as Read does; afterwards both say os.ErrClosed.
func TestLiveWriteToClosed(t *testing.T) {
	for _, script := range []string{"sleep 30", "exec yes"} {
		c := sup.Command("sh", "-c", script)
		c.Backpressure = 64 << 10
		p := start(t, nil, c)
		rd := make(chan error, 1)
		go func() { _, err := io.Copy(io.Discard, p.Stdout()); rd <- err }()
		time.Sleep(50 * time.Millisecond)
		p.Close()
		select {
		case err := <-rd:
			if !errors.Is(err, os.ErrClosed) {
				t.Fatalf("%s: WriteTo after Close: %v", script, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: WriteTo did not return after Close", script)
		}
		if _, err := writerTo(t, p.Stdout()).WriteTo(io.Discard); !errors.Is(err, os.ErrClosed) {
			t.Fatalf("%s: WriteTo after Close: %v", script, err)
		}
		if _, err := p.Stdout().Read(make([]byte, 8)); !errors.Is(err, os.ErrClosed) {
			t.Fatalf("%s: Read after Close: %v", script, err)
		}
	}
}

// Without Backpressure a WriteTo that starts late meets the gap: it stops
// there with the *GapError, and the next WriteTo goes on after it.
func TestLiveWriteToGap(t *testing.T) {
	want := seqOutput(100000)
	c := sup.Command("seq", "1", "100000")
	c.MaxOutput = 4096
	p := start(t, nil, c)
	wait(t, p)
	var got bytes.Buffer
	wt := writerTo(t, p.Stdout())
	n, err := wt.WriteTo(&got)
	var gap *sup.GapError
	if !errors.As(err, &gap) || n != 2048 || !bytes.Equal(got.Bytes(), want[:2048]) {
		t.Fatalf("first WriteTo: %d: %v", n, err)
	}
	n, err = wt.WriteTo(&got)
	if err != nil || n != 2048 || 2048+gap.Skipped+2048 != int64(len(want)) ||
		!bytes.Equal(got.Bytes()[2048:], want[len(want)-2048:]) {
		t.Fatalf("after the gap: %d: %v", n, err)
	}
}
