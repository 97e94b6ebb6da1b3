// Package sup runs child processes under supervision, over libsup's C ABI.
//
// It is a drop-in for the places where a program calls exec.CommandContext
// today, and adds what os/exec lacks: an idle timeout reset by every byte the
// child writes to stdout or stderr, a maximum runtime, an interrupt signal
// followed by SIGKILL after a grace period to the child's whole process group,
// head+tail bounded capture of both streams, and one immutable Result.
//
//	p, err := sup.Command("make", "-j8").Start(ctx)
//	res, err := p.Wait(ctx)
//
// # Waiting
//
// No OS thread is parked per waiting process or per live reader: each
// Process hands a duplicate of the library's readiness descriptor (sup_fd) to
// Go's netpoller, and a goroutine parked there wakes when the result is final.
// Live readers (Process.Stdout, Process.Stderr) do the same with
// sup_output_fd. The library installs no signal handler and reaps only its own
// children, through pidfds, so os/exec keeps working in the same program.
//
// # Contexts
//
// The context given to Cmd.Start governs the process: when it is done, the
// process is interrupted (the interrupt signal, then SIGKILL after Grace, to
// the whole process group) and the outcome is Interrupted. exec.CommandContext
// instead sends SIGKILL to the main process only (unless Cmd.Cancel is set),
// leaves its children running, and its Wait may block on a grandchild holding
// the pipe unless WaitDelay is set. The context given to Process.Wait bounds
// only how long that call waits: when it is done, Wait returns ctx.Err() and
// the process runs on.
//
// # Errors
//
// As with os/exec, Run, Wait and Output return an error for a process that
// did not exit by itself with status 0: an *ExitError, which holds the
// Result (errors.As(err, &ee); ee.ExitCode(), ee.Stderr, ee.Outcome), for a
// non-zero exit, a signal, a timeout or an interrupt alike.
//
// Other failures are *Error values with the errno in Code: errors.Is(err,
// fs.ErrNotExist), errors.Is(err, syscall.EACCES) work, and a program that is
// not found also matches exec.ErrNotFound, while a missing Dir does not
// (Error.Part says which part of the spawn failed). Calls on a closed Process
// return an *Error matching os.ErrClosed. A live reader that fell behind the
// kept output gets a *GapError saying how many bytes it lost, then reads on.
//
// # Releasing
//
// Process.Close aborts a child that still runs, reaps it and its group, and
// frees the handle; it is idempotent. The garbage collector never ends a
// running child: while it runs, its Process is held by the goroutine waiting
// for its result. A Process that is dropped without Close is released by a
// finalizer once its result is final. The library kills every child when
// the host exits.
//
// # Linking
//
// libsup is found with pkg-config (#cgo pkg-config: sup) and linked shared;
// the build tag sup_static links libsup.a instead (see the README). Without
// cgo the package does not build, and says so.
package sup
