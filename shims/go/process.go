package sup

/*
#include <stdlib.h>
#include <string.h>
#include <sup.h>

// sup_go_output_read is sup_output_read, and when that gives no byte,
// sup_poll(p, 0); once the result is final, one more sup_output_read, for a
// byte written between the two. *final is 1 when the result is final: no
// byte then is the end. One cgo call per read, whatever happens.
static int sup_go_output_read(sup_proc *p, int stream, uint64_t *pos, void *buf,
                              size_t cap, size_t *nread, int *final) {
	uint64_t from = *pos;
	int rc = sup_output_read(p, stream, pos, buf, cap, nread);
	*final = 0;
	if (rc < 0 || *nread > 0 || *pos != from)
		return rc;
	if (sup_poll(p, 0) != 1)
		return 0;
	*final = 1;
	return sup_output_read(p, stream, pos, buf, cap, nread);
}
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// cSignalName is sup_signal_name: "" for a number it does not name.
func cSignalName(sig int) string {
	if n := C.sup_signal_name(C.int(sig)); n != nil {
		return C.GoString(n)
	}
	return ""
}

// Outcome says what ended the main process. It is decided once, by priority:
// Aborted > IdleTimeout / MaxRuntime > Interrupted > Signaled > Exited.
type Outcome int

// The outcomes, with the values of the C ABI's enum sup_outcome.
const (
	Exited      Outcome = 1 // exited by itself; see Result.ExitCode
	Signaled    Outcome = 2 // died from a signal sup did not send; see Result.Signal
	IdleTimeout Outcome = 3 // ended after Cmd.IdleTimeout of silence
	MaxRuntime  Outcome = 4 // ended after Cmd.MaxRuntime
	Interrupted Outcome = 5 // ended by Process.Interrupt or the Start context
	Aborted     Outcome = 6 // ended by Process.Abort or Process.Close
)

// String returns the library's name of the outcome ("exited",
// "idle_timeout", ...).
func (o Outcome) String() string {
	if n := C.sup_outcome_name(C.int(o)); n != nil {
		return C.GoString(n)
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// The streams, as the C ABI's enum sup_stream, for files without cgo.
const (
	streamStdout = 1
	streamStderr = 2
)

// Process is a started child. Its methods may be called from any goroutine.
type Process struct {
	h *handle

	outMu          sync.Mutex
	stdout, stderr *OutputReader
	copied         [2]bool // the stream is copied to Cmd.Stdout / Cmd.Stderr
}

// handle owns the C handle. Every C call on it is made under mu.RLock and
// returns without blocking; release takes mu.Lock, so that no call begins once
// sup_release has begun.
type handle struct {
	mu     sync.RWMutex
	p      *C.sup_proc
	closed bool
	pid    int

	done   chan struct{} // closed by the watcher once final (res set) or closed
	res    *Result
	resErr error // the error Wait returns: *ExitError, a Stdin copy error, or closed

	filesMu     sync.Mutex
	files       map[*os.File]struct{} // duplicates registered with the netpoller
	filesClosed bool

	in       *stdinWriter // with "stdin": "pipe"
	stdinErr error        // a failed read of Cmd.Stdin (an io.Reader); under filesMu

	routes  routing
	contain Containment
	copies  sync.WaitGroup // copies to Cmd.Stdout and Cmd.Stderr writers
	copyErr error          // under filesMu
	ctxErr  error          // the Start context's cause once it was done; under filesMu
	closing chan struct{}  // closed by close
}

func cerr(op string, rc C.int) error {
	return &Error{Op: op, Code: syscall.Errno(-rc), Detail: C.GoString(C.sup_strerror(rc))}
}

// blocking bounds the OS threads held by the C calls that block: sup_spawn
// (which clones on the calling thread and waits for the child's exec, as long
// as a slow exec takes) and sup_release (which waits for a running child's
// SIGKILL to take effect). A goroutine in a blocking C call keeps its OS
// thread and the runtime starts another for the other goroutines, so 200
// concurrent Starts would hold 200 threads, kept idle afterwards.
// Goroutines beyond the bound wait on this channel, parked, not on threads.
var blocking = make(chan struct{}, 4)

func blockingCall(f func()) {
	blocking <- struct{}{}
	defer func() { <-blocking }()
	f()
}

// Start starts the command. A command that cannot be started fails here,
// with an *Error. ctx governs the process: when it is done, the process is
// interrupted (Cmd.Signal, then SIGKILL after Cmd.Grace, to its whole process
// group) and the outcome is Interrupted. A ctx that is already done fails
// Start with ctx.Err() and starts nothing.
//
// Concurrent Starts run at most a few at a time (the library clones children
// on one thread); the others wait for their turn without holding a thread.
func (c *Cmd) Start(ctx context.Context) (*Process, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	spec, err := c.spec()
	if err != nil {
		return nil, err
	}
	in, err := c.stdinSource()
	if err != nil {
		return nil, err
	}
	routes, _ := c.routing() // checked by spec
	cspec := C.CString(string(spec))
	defer C.free(unsafe.Pointer(cspec))
	errbuf := (*C.char)(C.malloc(C.SUP_ERRBUF_SIZE))
	defer C.free(unsafe.Pointer(errbuf))
	var cp *C.sup_proc
	var part C.int
	var rc C.int
	blockingCall(func() { rc = C.sup_spawn_v2(cspec, &cp, errbuf, C.SUP_ERRBUF_SIZE, &part) })
	runtime.KeepAlive(c) // its *os.File fields: their descriptors are in the spec
	if rc < 0 {
		err := &Error{Op: "start", Code: syscall.Errno(-rc), Detail: C.GoString(errbuf), Part: Part(part)}
		in.failed(err)
		return nil, err
	}
	h := &handle{p: cp, pid: int(C.sup_pid(cp)), done: make(chan struct{}), files: map[*os.File]struct{}{},
		routes: routes, contain: c.Contain, closing: make(chan struct{})}
	fd := C.sup_fd(cp)
	var f *os.File
	if fd >= 0 {
		f, err = h.pollFile(int(fd))
	} else {
		err = cerr("start", fd)
	}
	if err != nil {
		blockingCall(func() { C.sup_release(cp) })
		if _, ok := err.(*Error); !ok {
			err = &Error{Op: "start", Code: errnoOf(err), Detail: "dup sup_fd: " + err.Error(), Part: PartSystem}
		}
		in.failed(err)
		return nil, err
	}
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() {
			h.filesMu.Lock()
			h.ctxErr = context.Cause(ctx)
			h.filesMu.Unlock()
			_ = h.interrupt()
		})
	}
	p := &Process{h: h}
	in.started(h)
	p.startCopies(routes)
	// The watcher holds p until the result is final: a Process whose child
	// runs is always reachable, so the finalizer never ends a child that a
	// goroutine still waits for through Done, a live reader or a context.
	go p.watch(f, stop)
	runtime.SetFinalizer(p, func(p *Process) { go p.h.close() })
	return p, nil
}

// Run starts the command, waits for its result and closes the process, as
// Start, Wait and Close do. As with os/exec, err is nil only for a process
// that exited by itself with status 0: a non-zero exit, a signal, a timeout
// or an interrupt gives the Result and an *ExitError holding it (see
// Result.Err); a command that could not start gives a nil Result and an
// *Error. When ctx is done the process is interrupted and Run returns its
// result, with outcome Interrupted.
//
// With Backpressure, Run reads (and drops) every captured stream that no
// Stdout or Stderr writer takes, so that the child never waits for a
// reader that does not exist: the Result still holds what was kept.
func (c *Cmd) Run(ctx context.Context) (*Result, error) {
	p, err := c.Start(ctx)
	if err != nil {
		return nil, err
	}
	if c.Backpressure > 0 {
		p.drainUnread()
	}
	defer p.Close()
	return p.Wait(context.Background())
}

// Output runs the command as Run does and returns its standard output (the
// bytes kept, Result.Stdout). On failure err is an *ExitError, whose Result
// holds Stderr, or the *Error of a failed start. Stdout must be nil.
func (c *Cmd) Output(ctx context.Context) ([]byte, error) {
	if c.Stdout != nil {
		return nil, specErr("stdout: Stdout already set")
	}
	res, err := c.Run(ctx)
	if res == nil {
		return nil, err
	}
	return res.Stdout, err
}

// drainUnread reads to the end each captured stream that no copy to a
// writer reads: with Backpressure, an unread stream would stop the child
// for ever once Backpressure bytes waited.
func (p *Process) drainUnread() {
	r := p.h.routes
	unread := func(route string, w io.Writer) bool {
		return (route == routePipe || route == routeTee || route == routePTY) && w == nil
	}
	if unread(r.out, r.outW) {
		go func(rd io.Reader) { _, _ = io.Copy(io.Discard, rd) }(p.Stdout())
	}
	if r.err != routeStdout && r.err != routePTY && unread(r.err, r.errW) {
		go func(rd io.Reader) { _, _ = io.Copy(io.Discard, rd) }(p.Stderr())
	}
}

func errnoOf(err error) syscall.Errno {
	for e := err; e != nil; {
		if n, ok := e.(syscall.Errno); ok {
			return n
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	return syscall.EIO
}

// pollFile duplicates a descriptor owned by the library (close-on-exec, so
// that os/exec children do not inherit it), makes the duplicate non-blocking
// and hands it to the netpoller through os.NewFile. It is closed by dropFile or
// by close, whichever comes first.
func (h *handle) pollFile(fd int) (*os.File, error) {
	nfd, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if e != 0 {
		return nil, os.NewSyscallError("fcntl", e)
	}
	if err := syscall.SetNonblock(int(nfd), true); err != nil {
		syscall.Close(int(nfd))
		return nil, os.NewSyscallError("setnonblock", err)
	}
	f := os.NewFile(nfd, "sup")
	h.filesMu.Lock()
	defer h.filesMu.Unlock()
	if h.filesClosed {
		f.Close()
		return nil, errClosed("poll")
	}
	h.files[f] = struct{}{}
	return f, nil
}

func (h *handle) dropFile(f *os.File) {
	h.filesMu.Lock()
	_, ok := h.files[f]
	delete(h.files, f)
	h.filesMu.Unlock()
	if ok {
		f.Close()
	}
}

// closeFiles wakes every goroutine parked on a duplicate (their Read returns
// an error). It must not be called with mu held: os.File.Close waits for a
// concurrent Read, whose callback takes mu.RLock.
func (h *handle) closeFiles() {
	h.filesMu.Lock()
	files := h.files
	h.files = nil
	h.filesClosed = true
	h.filesMu.Unlock()
	for f := range files {
		f.Close()
	}
}

// waitReadable parks the goroutine on the netpoller until cond reports true;
// cond is called when f is readable and never reads from f. Returns false if
// f cannot be polled or was closed.
func waitReadable(f *os.File, cond func() bool) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	return rc.Read(func(uintptr) bool { return cond() }) == nil
}

// poll0 is sup_poll(p, 0): 1 final, 0 running, < 0 an error (closed).
func (h *handle) poll0() C.int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return -C.int(syscall.EBADF)
	}
	return C.sup_poll(h.p, 0)
}

func (h *handle) isClosed() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.closed
}

func (p *Process) watch(f *os.File, stop func() bool) {
	h := p.h
	defer close(h.done)
	if !waitReadable(f, func() bool { return h.poll0() != 0 }) && !h.isClosed() {
		// The duplicate could not be polled (it always can on Linux): wait in
		// short blocking slices, so that close is never held up for long.
		for {
			h.mu.RLock()
			rc := C.int(-C.int(syscall.EBADF))
			if !h.closed {
				rc = C.sup_poll(h.p, 50)
			}
			h.mu.RUnlock()
			if rc != 0 {
				break
			}
		}
	}
	if stop != nil {
		stop()
	}
	h.res, h.resErr = h.result()
	if h.res != nil {
		h.waitCopies()
		h.resErr = h.res.Err()
		h.filesMu.Lock()
		if ee, ok := h.resErr.(*ExitError); ok && h.ctxErr != nil && h.res.Outcome == Interrupted {
			ee.ctxErr = h.ctxErr
		}
		if h.resErr == nil && h.stdinErr != nil {
			h.resErr = &Error{Op: "stdin", Code: errnoOf(h.stdinErr), Detail: "reading Cmd.Stdin: " + h.stdinErr.Error(), cause: h.stdinErr}
		}
		if h.resErr == nil && h.copyErr != nil {
			h.resErr = h.copyErr
		}
		h.filesMu.Unlock()
	}
	h.dropFile(f)
	if h.in != nil {
		h.in.dropFile() // a grandchild reading stdin gets EOF
	}
	runtime.KeepAlive(p)
}

// waitCopies waits until the copies to Cmd.Stdout and Cmd.Stderr have
// written the last byte, or the Process is closed.
func (h *handle) waitCopies() {
	copied := make(chan struct{})
	go func() {
		h.copies.Wait()
		close(copied)
	}()
	select {
	case <-copied:
	case <-h.closing:
	}
}

func (h *handle) result() (*Result, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return nil, errClosed("wait")
	}
	p := h.p
	oc := C.sup_result_outcome(p)
	if oc < 0 {
		return nil, cerr("wait", oc)
	}
	r := &Result{Outcome: Outcome(oc), ExitCode: -1, Pid: h.pid}
	if v := C.sup_result_exit_code(p); v >= 0 {
		r.ExitCode = int(v)
	}
	if v := C.sup_result_term_signal(p); v > 0 {
		r.Signal = syscall.Signal(v)
	}
	r.ForcedKill = C.sup_result_forced_kill(p) == 1
	r.StatusLost = C.sup_result_status_lost(p) == 1
	r.Duration = msDuration(C.sup_result_duration_ms(p))
	var err error
	if r.Stdout, r.StdoutOmitted, r.StdoutTotal, r.stdoutHead, err = resultOutput(p, C.SUP_STDOUT); err != nil {
		return nil, err
	}
	if r.Stderr, r.StderrOmitted, r.StderrTotal, r.stderrHead, err = resultOutput(p, C.SUP_STDERR); err != nil {
		return nil, err
	}
	var user, sys C.double
	var rss C.int64_t
	if C.sup_result_rusage(p, &user, &sys, &rss) == 0 {
		r.UserTime = msDuration(user)
		r.SystemTime = msDuration(sys)
		r.MaxRSSKB = int64(rss)
	}
	r.stdoutRoute, r.stderrRoute = h.routes.out, h.routes.err
	if v := C.sup_result_phase(p); v > 0 {
		r.Phase = Phase(v)
	}
	r.Contained = ContainGroup
	if C.sup_result_contained(p) == C.SUP_CONTAIN_CGROUP {
		r.Contained = ContainCgroup
	}
	r.HostDeath = HostDeathMainProcess
	if C.sup_result_host_death(p) == C.SUP_HOST_DEATH_TREE {
		r.HostDeath = HostDeathTree
	}
	if err := r.setConfinement(C.GoString(C.sup_result(p))); err != nil {
		return nil, &Error{Op: "wait", Code: syscall.Errno(4096), Detail: "the library's result: " + err.Error()}
	}
	r.LeftoversEnded = -1
	if v := C.sup_result_leftovers_ended(p); v >= 0 {
		r.LeftoversEnded = int64(v)
	}
	var tu, ts C.double
	if C.sup_result_tree_cpu(p, &tu, &ts) == 0 {
		r.TreeUserTime, r.TreeSystemTime, r.TreeCPUKnown = msDuration(tu), msDuration(ts), true
	}
	if h.contain != "" && h.contain != ContainGroup {
		if err := r.containDetail(p); err != nil {
			return nil, err
		}
	}
	var sigs [16]C.int
	var at [16]C.double
	if n := int(C.sup_result_signals(p, &sigs[0], &at[0], 16)); n > 0 {
		s, a := sigs[:], at[:]
		if n > len(sigs) {
			s, a = make([]C.int, n), make([]C.double, n)
			n = int(C.sup_result_signals(p, &s[0], &a[0], C.size_t(n)))
		}
		r.SignalsSent = make([]SentSignal, n)
		for i := range r.SignalsSent {
			r.SignalsSent[i] = SentSignal{syscall.Signal(s[i]), msDuration(a[i])}
		}
	}
	return r, nil
}

// libraryJSON returns the library's own result text (sup_result), which
// Result.JSON reproduces without the library building it; for the tests.
func (p *Process) libraryJSON() []byte {
	defer runtime.KeepAlive(p)
	h := p.h
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return nil
	}
	if j := C.sup_result(h.p); j != nil {
		return []byte(C.GoString(j))
	}
	return nil
}

// containDetail reads "contain_fallback" and "cgroup_left", which the C ABI
// has only in the result text. They follow "rusage", the last key before
// them; no string in the text holds an unescaped '"', so the key's text is
// found from the end without reading or copying the captured output.
func (r *Result) containDetail(p *C.sup_proc) error {
	j := C.sup_result(p)
	if j == nil {
		return &Error{Op: "wait", Code: syscall.ENOMEM, Detail: "sup_result: out of memory"}
	}
	text := unsafe.Slice((*byte)(unsafe.Pointer(j)), int(C.strlen(j)))
	at := bytes.LastIndex(text, []byte(`"rusage": `))
	if at < 0 {
		return &Error{Op: "wait", Code: syscall.Errno(4096), Detail: "sup_result: no \"rusage\""}
	}
	var detail struct {
		Fallback *string `json:"contain_fallback"`
		Left     *string `json:"cgroup_left"`
	}
	if err := json.Unmarshal(append([]byte{'{'}, text[at:]...), &detail); err != nil {
		return &Error{Op: "wait", Code: syscall.Errno(4096), Detail: "sup_result: " + err.Error()}
	}
	if detail.Fallback != nil {
		r.ContainFallback = *detail.Fallback
	}
	if detail.Left != nil {
		r.CgroupLeft = *detail.Left
	}
	return nil
}

// msDuration converts the library's milliseconds to a Duration, to the
// nearest nanosecond (the library counts whole nanoseconds).
func msDuration(ms C.double) time.Duration {
	ns := float64(ms) * 1e6
	if ns < 0 {
		return time.Duration(ns - 0.5)
	}
	return time.Duration(ns + 0.5)
}

// resultOutput reads the kept bytes of a final stream: the head, then after
// the gap (if bytes were dropped) the newest tail. head is the length of the
// part before the gap.
func resultOutput(p *C.sup_proc, stream C.int) (kept []byte, omitted, total int64, head int, err error) {
	total = int64(C.sup_output_total(p, stream))
	omitted = int64(C.sup_result_omitted_bytes(p, stream))
	if total < 0 || omitted < 0 {
		return nil, 0, 0, 0, cerr("wait", C.int(min(total, omitted)))
	}
	kept = make([]byte, total-omitted)
	head = len(kept)
	var pos C.uint64_t
	for got := 0; got < len(kept); {
		before := pos
		var n C.size_t
		if rc := C.sup_output_read(p, stream, &pos, unsafe.Pointer(&kept[got]), C.size_t(len(kept)-got), &n); rc < 0 {
			return nil, 0, 0, 0, cerr("wait", rc)
		}
		if n == 0 {
			return nil, 0, 0, 0, &Error{Op: "wait", Code: syscall.Errno(4096), Detail: "kept output shorter than its count"}
		}
		if uint64(pos-before) > uint64(n) {
			head = got
		}
		got += int(n)
	}
	if omitted == 0 {
		head = len(kept)
	}
	return kept, omitted, total, head, nil
}

// request makes one of the C ABI's requests (sup_interrupt, sup_abort) under
// the read lock; no effect once final, an error once closed.
func (h *handle) request(op string, call func(*C.sup_proc) C.int) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return errClosed(op)
	}
	if rc := call(h.p); rc < 0 {
		return cerr(op, rc)
	}
	return nil
}

func (h *handle) interrupt() error {
	return h.request("interrupt", func(p *C.sup_proc) C.int { return C.sup_interrupt(p) })
}

func (h *handle) abort() error {
	return h.request("abort", func(p *C.sup_proc) C.int { return C.sup_abort(p) })
}

func (h *handle) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		<-h.done
		return
	}
	h.closed = true
	cp := h.p
	h.p = nil
	close(h.closing)
	h.mu.Unlock()
	// Aborts and reaps a running child and its group.
	blockingCall(func() { C.sup_release(cp) })
	h.closeFiles()
	if h.in != nil {
		h.in.dropFile()
	}
	<-h.done
}

// Wait waits for the result. As with os/exec, err is nil only when the
// process exited by itself with status 0; otherwise, once the result is
// final, Wait returns it together with an *ExitError holding it (see
// Result.Err), or, for a process that succeeded while reading Cmd.Stdin (an
// io.Reader) failed, an *Error with Op "stdin".
//
// ctx bounds only how long this call waits: when it is done first, Wait
// returns a nil Result and ctx.Err(), and the process runs on (the context
// given to Start governs the process). Wait may be called from any number of
// goroutines, any number of times; all get the same *Result. Wait on a
// Process closed before its result was final returns an *Error matching
// os.ErrClosed. The waiting goroutine is parked on the netpoller, not on an
// OS thread.
func (p *Process) Wait(ctx context.Context) (*Result, error) {
	defer runtime.KeepAlive(p)
	h := p.h
	select {
	case <-h.done:
	default:
		if ctx == nil {
			ctx = context.Background()
		}
		select {
		case <-h.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.res, h.resErr
}

// Done returns a channel that is closed once the result is final (Wait then
// returns at once) or the Process is closed.
func (p *Process) Done() <-chan struct{} { return p.h.done }

// Interrupt ends the process gracefully: the interrupt signal and SIGCONT to
// its process group, and SIGKILL if the main process has not exited Grace
// later. Any goroutine, any time; no effect once the result is final.
func (p *Process) Interrupt() error {
	defer runtime.KeepAlive(p)
	return p.h.interrupt()
}

// Abort sends SIGKILL to the process group now. Any goroutine, any time; no
// effect once the result is final.
func (p *Process) Abort() error {
	defer runtime.KeepAlive(p)
	return p.h.abort()
}

// Signal sends sig to the child's process group and its main process (with
// ContainCgroup, to its whole tree), as os.Process.Signal sends it to one
// process; syscall.Signal(0) only checks that the child is still running.
// The signal is listed in Result.SignalsSent and does not decide the
// outcome. Any goroutine, any time. Once the result is final it returns an
// error matching os.ErrProcessDone (the child is gone; its pid may be
// another process's), as os.Process.Signal does.
func (p *Process) Signal(sig os.Signal) error {
	defer runtime.KeepAlive(p)
	s, ok := sig.(syscall.Signal)
	if !ok {
		return &Error{Op: "signal", Code: syscall.EINVAL, Detail: "unsupported signal type"}
	}
	return p.h.request("signal", func(cp *C.sup_proc) C.int { return C.sup_signal(cp, C.int(s)) })
}

// Pid returns the child's pid, for display. Do not signal it: once the result
// is final the pid may belong to another process.
func (p *Process) Pid() int { return p.h.pid }

// Close releases the process. A child that still runs is aborted, and it and
// its group are reaped before Close returns (milliseconds). Close is
// idempotent; afterwards every method but Pid, Done and Wait (which returns
// the result if it was final before Close) returns an error matching
// os.ErrClosed. Goroutines waiting in Wait or in a live reader return.
//
// A Process that is not closed is never ended by the garbage collector: while
// its child runs, the Process is reachable (a goroutine waits for its
// result). Once the result is final and nothing references the Process, a
// finalizer releases what Close would (the library's memory and
// descriptors). Close frees them at once.
func (p *Process) Close() error {
	runtime.SetFinalizer(p, nil)
	p.h.close()
	return nil
}

// Stdout returns a reader of the child's stdout as it is written, from its
// first byte; Read returns io.EOF once the process has ended and everything
// has been read. A reader that falls behind the bytes kept (Cmd.MaxOutput)
// gets a *GapError saying how many bytes it lost, once per gap, and reads on
// from the oldest byte still kept; set Cmd.Backpressure to lose nothing. One
// reader per stream: every call returns the same reader, an *OutputReader,
// whose WriteTo io.Copy uses.
func (p *Process) Stdout() io.Reader { return p.output(C.SUP_STDOUT) }

// Stderr is Stdout for the child's stderr.
func (p *Process) Stderr() io.Reader { return p.output(C.SUP_STDERR) }

func (p *Process) output(stream C.int) io.Reader {
	if p.copied[stream-1] {
		name := "Stdout"
		if stream == C.SUP_STDERR {
			name = "Stderr"
		}
		return errReader{&Error{Op: "read", Code: syscall.EBUSY, Detail: "the stream is copied to Cmd." + name}}
	}
	return p.newReader(int(stream))
}

func (p *Process) newReader(stream int) *OutputReader {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	r := &p.stdout
	if stream == streamStderr {
		r = &p.stderr
	}
	if *r == nil {
		*r = &OutputReader{p: p, stream: C.int(stream)}
	}
	return *r
}

// OutputReader reads a stream of a Process live. Its goroutine parks on the
// netpoller (sup_output_fd) while no new byte is available.
//
// It reads the library in chunks of up to 64 KiB, the pipe's capacity: a Read
// into a smaller buffer takes one chunk into the reader's own buffer and
// serves the next Reads from it, and WriteTo (which io.Copy uses) hands each
// chunk to the writer as it comes. With Cmd.Backpressure each chunk is then
// one read(2) of the child's pipe, made in the reading goroutine's thread.
type OutputReader struct {
	p      *Process
	stream C.int

	mu   sync.Mutex
	pos  uint64 // the library's position: what it has handed over
	f    *os.File
	rc   syscall.RawConn // of f
	done bool            // io.EOF returned
	buf  []byte          // chunkSize, allocated on first need
	r, w int             // buf[r:w]: handed over by the library, not yet returned
}

// chunkSize is what one sup_output_read asks for: a pipe's whole buffer.
const chunkSize = 64 << 10

// Read reads the next bytes the child wrote, waiting for at least one. It
// returns (0, *GapError) where bytes were dropped before this reader got to
// them; the next Read goes on after the gap. The bytes of one Read never
// span a gap.
func (r *OutputReader) Read(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer runtime.KeepAlive(r.p)
	h := r.p.h
	if r.r < r.w {
		if len(b) == 0 {
			return 0, nil
		}
		if h.isClosed() {
			return 0, errClosed("read")
		}
		n := copy(b, r.buf[r.r:r.w])
		r.r += n
		return n, nil
	}
	if r.done {
		return 0, io.EOF
	}
	if len(b) == 0 {
		return 0, nil
	}
	if len(b) >= chunkSize {
		return r.next(h, b)
	}
	if r.buf == nil {
		r.buf = make([]byte, chunkSize)
	}
	n, err := r.next(h, r.buf)
	if n == 0 {
		return 0, err
	}
	r.r, r.w = copy(b, r.buf[:n]), n
	return r.r, nil
}

// WriteTo writes the stream to w, from where the reader stands to its end,
// waiting for the child's bytes as Read does, and returns the count written
// and a nil error at the end of the stream. It stops at a *GapError (a later
// Read or WriteTo goes on after the gap), at a read error, and at w's error;
// bytes w did not take are kept for the next Read or WriteTo.
func (r *OutputReader) WriteTo(w io.Writer) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer runtime.KeepAlive(r.p)
	h := r.p.h
	var written int64
	if r.r < r.w {
		if h.isClosed() {
			return 0, errClosed("read")
		}
		m, err := r.flush(w)
		written += int64(m)
		if err != nil {
			return written, err
		}
	}
	if r.done {
		return written, nil
	}
	if r.buf == nil {
		r.buf = make([]byte, chunkSize)
	}
	for {
		n, err := r.next(h, r.buf)
		if n > 0 {
			r.r, r.w = 0, n
			m, werr := r.flush(w)
			written += int64(m)
			if werr != nil {
				return written, werr
			}
		}
		if err == io.EOF {
			return written, nil
		}
		if err != nil {
			return written, err
		}
	}
}

// flush writes buf[r:w] to w; what w does not take stays there.
func (r *OutputReader) flush(w io.Writer) (int, error) {
	m, err := w.Write(r.buf[r.r:r.w])
	if m < 0 || m > r.w-r.r {
		// As io.Copy treats such a writer: nothing counted as written.
		return 0, errors.New("sup: invalid write result")
	}
	r.r += m
	if err == nil && r.r < r.w {
		err = io.ErrShortWrite
	}
	return m, err
}

// next reads the next bytes into b (not empty), waiting for at least one:
// n > 0, or io.EOF (and the reader is done), a *GapError or an error.
func (r *OutputReader) next(h *handle, b []byte) (n int, err error) {
	if n, err = r.try(h, b); n > 0 || err != nil {
		return n, r.finish(h, err)
	}
	if r.rc == nil {
		h.mu.RLock()
		fd := C.int(-C.int(syscall.EBADF))
		if !h.closed {
			fd = C.sup_output_fd(h.p, r.stream)
		}
		h.mu.RUnlock()
		if fd < 0 {
			if h.isClosed() {
				return 0, errClosed("read")
			}
			return 0, cerr("read", fd)
		}
		f, ferr := h.pollFile(int(fd))
		if ferr == nil {
			r.rc, ferr = f.SyscallConn()
			if ferr != nil {
				h.dropFile(f)
			}
		}
		if ferr != nil {
			if h.isClosed() {
				return 0, errClosed("read")
			}
			return 0, &Error{Op: "read", Code: errnoOf(ferr), Detail: ferr.Error()}
		}
		r.f = f
	}
	// The callback runs at once, and again each time the descriptor is
	// readable; it never reads the descriptor itself.
	if r.rc.Read(func(uintptr) bool {
		n, err = r.try(h, b)
		return n > 0 || err != nil
	}) != nil {
		if h.isClosed() {
			return 0, errClosed("read")
		}
		// Not pollable (never on Linux): fall back to short blocking waits.
		for n == 0 && err == nil {
			h.mu.RLock()
			if h.closed {
				err = errClosed("read")
			} else {
				ignore := C.uint64_t(C.SUP_POS_IGNORE)
				out, errp := ignore, ignore
				if r.stream == C.SUP_STDOUT {
					out = C.uint64_t(r.pos)
				} else {
					errp = C.uint64_t(r.pos)
				}
				C.sup_output_wait(h.p, out, errp, 50)
			}
			h.mu.RUnlock()
			if err == nil {
				n, err = r.try(h, b)
			}
		}
	}
	return n, r.finish(h, err)
}

func (r *OutputReader) finish(h *handle, err error) error {
	if err == io.EOF {
		r.done = true
		if r.f != nil {
			h.dropFile(r.f)
			r.f, r.rc = nil, nil
		}
	}
	return err
}

// try reads without blocking: n > 0, or io.EOF once final and all read, or
// a *GapError, or an error, or (0, nil) when nothing new is there yet. One
// cgo call: sup_go_output_read.
func (r *OutputReader) try(h *handle, b []byte) (int, error) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return 0, errClosed("read")
	}
	pos := C.uint64_t(r.pos)
	var n C.size_t
	var final C.int
	if rc := C.sup_go_output_read(h.p, r.stream, &pos, unsafe.Pointer(&b[0]), C.size_t(len(b)), &n, &final); rc < 0 {
		return 0, cerr("read", rc)
	}
	// The library never copies across a gap in one call: a position that
	// moved further than the bytes copied jumped over dropped bytes, and the
	// bytes copied are the first after the gap. They are read again by the
	// next Read, after the caller has been told.
	if skipped := uint64(pos) - r.pos - uint64(n); skipped > 0 {
		r.pos += skipped
		return 0, &GapError{Skipped: int64(skipped)}
	}
	r.pos = uint64(pos)
	if n == 0 && final == 1 {
		return 0, io.EOF
	}
	return int(n), nil
}
