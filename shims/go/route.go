//go:build cgo

package sup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// The spec's "stdout" and "stderr" values; also the result's "routed".
const (
	routePipe    = "pipe"
	routeTee     = "tee"
	routeInherit = "inherit"
	routeNull    = "null"
	routeStdout  = "stdout" // stderr only: the same pipe as stdout
	routePTY     = "pty"    // the result's, for both streams of a terminal
	routeFd      = "fd"     // a host descriptor ({"fd": N}): an *os.File
)

// routing is where a Start sends each stream, and the writers that a
// goroutine copies a captured stream to.
type routing struct {
	out, err     string
	outW, errW   io.Writer
	outFd, errFd uintptr // with routeFd
}

// hears reports whether a limit needs sup to read the child's output.
func (c *Cmd) hears() bool { return c.IdleTimeout > 0 || c.FirstOutputTimeout > 0 }

// routing decides each stream's route from Stdout and Stderr.
func (c *Cmd) routing() (routing, error) {
	if c.PTY != nil {
		if c.Stderr != nil && !sameWriter(c.Stderr, c.Stdout) {
			return routing{}, specErr("stderr: a PTY is one stream, the terminal's: Stderr must be nil (or Stdout)")
		}
		// The terminal is read by sup; any writer gets a copy.
		return routing{out: routePTY, err: routePTY, outW: c.Stdout}, nil
	}
	var r routing
	r.out, r.outW, r.outFd = c.route(c.Stdout, os.Stdout, 1)
	switch {
	case c.combined:
		if c.Stdout != nil || c.Stderr != nil {
			return routing{}, specErr("stdout: Stdout or Stderr already set")
		}
		r.err = routeStdout
	case c.Stderr != nil && sameWriter(c.Stderr, c.Stdout):
		r.err = routeStdout
	default:
		r.err, r.errW, r.errFd = c.route(c.Stderr, os.Stderr, 2)
	}
	return r, nil
}

// route decides one stream's route. An *os.File is passed as the file
// itself ({"fd": N}: the child writes, seeks and fstats it directly), unless
// a limit needs sup to hear the stream: then it is captured and copied to
// the file, as any other writer.
func (c *Cmd) route(w io.Writer, host *os.File, fd uintptr) (string, io.Writer, uintptr) {
	switch {
	case w == nil:
		return routePipe, nil, 0
	case w == io.Discard:
		if c.hears() {
			return routePipe, nil, 0 // read, so that the clock hears it
		}
		return routeNull, nil, 0
	case w == io.Writer(host) && host.Fd() == fd:
		if c.hears() {
			return routeTee, nil, 0
		}
		return routeInherit, nil, 0
	}
	if f, ok := w.(*os.File); ok && f != nil && !c.hears() {
		return routeFd, nil, f.Fd()
	}
	return routePipe, w, 0
}

// sameWriter is os/exec's test for Stdout and Stderr being one writer:
// equal, when the type can be compared at all.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() { _ = recover() }()
	return a == b
}

func (c *Cmd) appendRoutes(b []byte) ([]byte, error) {
	r, err := c.routing()
	if err != nil {
		return nil, err
	}
	b = appendRoute(b, "stdout", r.out, r.outFd)
	b = appendRoute(b, "stderr", r.err, r.errFd)
	return b, nil
}

func appendRoute(b []byte, key, route string, fd uintptr) []byte {
	switch route {
	case routePipe, routePTY:
		return b
	case routeFd:
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":{"fd":`...)
		b = strconv.AppendUint(b, uint64(fd), 10)
		return append(b, '}')
	}
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":"`...)
	b = append(b, route...)
	return append(b, '"')
}

// appendFds appends the spec's "fds": ExtraFiles[i] is the child's 3+i.
func (c *Cmd) appendFds(b []byte) ([]byte, error) {
	if len(c.ExtraFiles) == 0 {
		return b, nil
	}
	b = append(b, `,"fds":{`...)
	for i, f := range c.ExtraFiles {
		if f == nil {
			return nil, specErr(fmt.Sprintf("fds.%d: ExtraFiles[%d] is nil; sup cannot leave a hole in the child's descriptors (os/exec closes it)", 3+i, i))
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(3+i), 10)
		b = append(b, `":`...)
		b = strconv.AppendUint(b, uint64(f.Fd()), 10)
	}
	return append(b, '}'), nil
}

// CombinedOutput runs the command as Run does and returns its stdout and
// stderr as one stream, in the order the child wrote them (stderr is the
// same pipe as stdout, as with os/exec's CombinedOutput). On failure err is
// an *ExitError, or the *Error of a failed start. Stdout and Stderr must be
// nil.
func (c *Cmd) CombinedOutput(ctx context.Context) ([]byte, error) {
	cc := *c
	cc.combined = true
	res, err := cc.Run(ctx)
	if res == nil {
		return nil, err
	}
	return res.Stdout, err
}

// startCopies starts the goroutines that copy captured streams to
// Cmd.Stdout and Cmd.Stderr writers.
func (p *Process) startCopies(r routing) {
	for _, s := range []struct {
		stream int
		w      io.Writer
	}{{streamStdout, r.outW}, {streamStderr, r.errW}} {
		if s.w == nil {
			continue
		}
		rd := p.newReader(s.stream)
		p.copied[s.stream-1] = true
		p.h.copies.Add(1)
		go p.h.copyOut(rd, s.w)
	}
}

// copyOut copies a stream to w from its first byte to its end. A write
// error stops it; a gap is counted and the copy goes on. What went wrong is
// kept for Wait.
func (h *handle) copyOut(r *OutputReader, w io.Writer) {
	defer h.copies.Done()
	buf := make([]byte, chunkSize) // Read fills it straight from the library
	var skipped int64
	var err error
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				err = werr
				break
			}
		}
		var gap *GapError
		if errors.As(rerr, &gap) {
			skipped += gap.Skipped
			continue
		}
		if rerr != io.EOF {
			err = rerr
		}
		if rerr != nil {
			break
		}
	}
	if err == nil && skipped > 0 {
		err = &GapError{Skipped: skipped}
	}
	if err != nil {
		h.filesMu.Lock()
		if h.copyErr == nil {
			h.copyErr = err
		}
		h.filesMu.Unlock()
	}
}

// errReader is the Process.Stdout of a stream that Cmd.Stdout's copy reads.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
