package sup

/*
#include <sup.h>
*/
import "C"

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// StdinPipe returns a pipe that is connected to the child's stdin when the
// command starts, as os/exec's StdinPipe is. Write blocks until the command
// has started and then until the child has read enough to make room, parked
// on the netpoller, not on an OS thread; it fails with an error matching
// syscall.EPIPE once the child has closed its stdin or ended. Close closes
// the child's stdin (it reads EOF); it may be called before Start.
//
// StdinPipe sets Stdin, and fails when Stdin is already set. The pipe serves
// one Start: set Stdin anew (or call StdinPipe again) to start the Cmd again.
func (c *Cmd) StdinPipe() (io.WriteCloser, error) {
	if c.Stdin != nil || c.InheritStdin {
		return nil, &Error{Op: "stdinpipe", Code: syscall.EINVAL, Detail: "Stdin already set"}
	}
	w := newStdinWriter()
	c.Stdin = w
	return w, nil
}

// stdinWriter writes to the child's stdin ("stdin": "pipe"), for StdinPipe
// and for a Cmd.Stdin that is an io.Reader (copied by a goroutine).
type stdinWriter struct {
	used  atomic.Bool   // bound to a Start
	ready chan struct{} // closed once h or err is set
	h     *handle
	err   error     // the Start failed
	src   io.Reader // Cmd.Stdin, copied by a goroutine once started

	mu     sync.Mutex
	f      *os.File // a duplicate of sup_input_fd, for the netpoller
	closed bool
}

func newStdinWriter() *stdinWriter { return &stdinWriter{ready: make(chan struct{})} }

// failed makes the writer's calls return the error of the Start it was for.
func (w *stdinWriter) failed(err error) {
	if w == nil {
		return
	}
	w.err = err
	close(w.ready)
}

// started binds the writer to the started process; src, if set, is copied
// to it by a goroutine.
func (w *stdinWriter) started(h *handle) {
	if w == nil {
		return
	}
	h.in = w
	w.mu.Lock()
	w.h = h
	closed := w.closed
	w.mu.Unlock()
	close(w.ready)
	if closed {
		_ = h.inputClose()
	}
	if w.src != nil {
		go w.copyFrom(w.src)
	}
}

func (w *stdinWriter) copyFrom(src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				break // the child closed its stdin or ended: the rest is not wanted
			}
		}
		if err != nil {
			if err != io.EOF {
				// Recorded before stdin is closed, so before the child can
				// see the EOF and end: the watcher finds it.
				w.h.filesMu.Lock()
				w.h.stdinErr = err
				w.h.filesMu.Unlock()
			}
			break
		}
	}
	_ = w.Close()
}

// Write writes all of b to the child's stdin, or returns why it could not.
func (w *stdinWriter) Write(b []byte) (int, error) {
	<-w.ready
	if w.err != nil {
		return 0, w.err
	}
	h := w.h
	n := 0
	var werr error
	write := func() bool { // true when done: all written, or an error
		for n < len(b) {
			k, again, err := h.inputWrite(b[n:])
			n += k
			if err != nil {
				werr = err
				return true
			}
			if again {
				return false
			}
		}
		return true
	}
	if len(b) == 0 || write() {
		return n, w.writeErr(werr)
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return n, errStdinClosed()
	}
	if w.f == nil {
		h.mu.RLock()
		fd := C.int(-C.int(syscall.EBADF))
		if !h.closed {
			fd = C.sup_input_fd(h.p)
		}
		h.mu.RUnlock()
		if fd < 0 {
			w.mu.Unlock()
			if h.isClosed() {
				return n, errClosed("write")
			}
			return n, w.writeErr(cerr("write", fd))
		}
		f, err := h.pollFile(int(fd))
		if err != nil {
			w.mu.Unlock()
			if h.isClosed() {
				return n, errClosed("write")
			}
			return n, &Error{Op: "write", Code: errnoOf(err), Detail: err.Error()}
		}
		w.f = f
	}
	f := w.f
	w.mu.Unlock()
	raw, err := f.SyscallConn()
	if err == nil {
		err = raw.Write(func(uintptr) bool { return write() })
	}
	if err != nil && werr == nil {
		// The duplicate was closed: by Close, by Process.Close, or at the end.
		switch {
		case h.isClosed():
			werr = errClosed("write")
		case w.isClosed():
			werr = errStdinClosed()
		default:
			werr = &Error{Op: "write", Code: syscall.EPIPE, Detail: "the process has ended"}
		}
	}
	return n, w.writeErr(werr)
}

func (w *stdinWriter) writeErr(err error) error {
	if e, ok := err.(*Error); ok && e.Code == syscall.EBADF && w.isClosed() {
		return errStdinClosed()
	}
	return err
}

func errStdinClosed() error {
	return &Error{Op: "write", Code: syscall.EBADF, Detail: "stdin already closed", closed: true}
}

func (w *stdinWriter) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

// Close closes the child's stdin; the child reads EOF. Idempotent.
func (w *stdinWriter) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	f, h := w.f, w.h
	w.f = nil
	w.mu.Unlock()
	if h == nil {
		return nil // before Start: stdin is closed as it starts
	}
	// Our duplicate first: while it is open, the child would not see EOF.
	if f != nil {
		h.dropFile(f)
	}
	err := h.inputClose()
	if e, ok := err.(*Error); ok && e.Code == syscall.EAGAIN {
		// A terminal's input queue is full: the end of input waits for
		// room, as a write does.
		err = h.inputCloseWhenWritable()
	}
	if e, ok := err.(*Error); ok && e.closed {
		return nil // the Process was closed: so is its stdin
	}
	return err
}

func (h *handle) inputCloseWhenWritable() error {
	h.mu.RLock()
	fd := C.int(-C.int(syscall.EBADF))
	if !h.closed {
		fd = C.sup_input_fd(h.p)
	}
	h.mu.RUnlock()
	if fd < 0 {
		if h.isClosed() {
			return errClosed("close stdin")
		}
		return cerr("close stdin", fd)
	}
	f, err := h.pollFile(int(fd))
	if err != nil {
		return &Error{Op: "close stdin", Code: errnoOf(err), Detail: err.Error()}
	}
	defer h.dropFile(f)
	var closeErr error
	raw, err := f.SyscallConn()
	if err == nil {
		err = raw.Write(func(uintptr) bool {
			closeErr = h.inputClose()
			e, ok := closeErr.(*Error)
			return !ok || e.Code != syscall.EAGAIN
		})
	}
	if err != nil && closeErr == nil {
		return errClosed("close stdin")
	}
	return closeErr
}

// dropFile closes the duplicate of the pipe, so that nothing the child left
// reading its stdin waits for more once the result is final.
func (w *stdinWriter) dropFile() {
	w.mu.Lock()
	f, h := w.f, w.h
	w.f = nil
	w.mu.Unlock()
	if f != nil {
		h.dropFile(f)
	}
}

// inputWrite is one non-blocking sup_input_write: again when the pipe is
// full.
func (h *handle) inputWrite(b []byte) (n int, again bool, err error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return 0, false, errClosed("write")
	}
	var k C.size_t
	rc := C.sup_input_write(h.p, unsafe.Pointer(&b[0]), C.size_t(len(b)), &k)
	switch {
	case rc == -C.int(syscall.EAGAIN):
		return int(k), true, nil
	case rc < 0:
		return int(k), false, cerr("write", rc)
	}
	return int(k), false, nil
}

func (h *handle) inputClose() error {
	return h.request("close stdin", func(p *C.sup_proc) C.int { return C.sup_input_close(p) })
}
