//! Raw FFI declarations for libsup, hand-written from `include/sup.h` (ABI 0.3).
//!
//! Every function of the header is declared here with the same C types; the
//! test `tests/header.rs` parses the header's `SUP_API` prototypes and
//! compares them with [`DECLARATIONS`], and [`DECLARATIONS`] with the source
//! text of the `extern` block below, so the three cannot drift apart.
//!
//! The semantics (returns, errors, thread-safety) are documented in the
//! header; the safe wrapper is the `sup` crate.
//!
//! ```
//! let v = unsafe { sup_sys::sup_version() };
//! assert!(v >= sup_sys::SUP_VERSION_NUMBER);
//! ```
#![allow(non_camel_case_types)]

use libc::{c_char, c_double, c_int, c_void, size_t};

/// `SUP_VERSION_NUMBER` of the header these declarations were written from.
pub const SUP_VERSION_NUMBER: c_int = 400;

/// Success.
pub const SUP_OK: c_int = 0;
/// The kernel refused (e.g. a signal to the group).
pub const SUP_EPERM: c_int = -1;
/// argv\[0\] not found, or a path in the spec does not exist.
pub const SUP_ENOENT: c_int = -2;
/// sup_signal / sup_pty_resize: the result is final (the child is gone).
pub const SUP_ESRCH: c_int = -3;
/// argv plus environment too large for exec.
pub const SUP_E2BIG: c_int = -7;
/// argv\[0\] is not in an executable format.
pub const SUP_ENOEXEC: c_int = -8;
/// A descriptor could not be created, or stdin is not a pipe.
pub const SUP_EBADF: c_int = -9;
/// The handle was inherited through fork(2).
pub const SUP_ECHILD: c_int = -10;
/// Out of processes, or the stdin pipe is full.
pub const SUP_EAGAIN: c_int = -11;
/// Out of memory.
pub const SUP_ENOMEM: c_int = -12;
/// argv\[0\] or cwd not accessible / not executable.
pub const SUP_EACCES: c_int = -13;
/// The result is not final yet.
pub const SUP_EBUSY: c_int = -16;
/// cwd, or a component of a path, is not a directory.
pub const SUP_ENOTDIR: c_int = -20;
/// argv\[0\] is a directory.
pub const SUP_EISDIR: c_int = -21;
/// Bad argument: NULL handle or pointer, malformed spec.
pub const SUP_EINVAL: c_int = -22;
/// The host is out of file descriptors.
pub const SUP_EMFILE: c_int = -24;
/// "pty": no pseudo-terminal left.
pub const SUP_ENOSPC: c_int = -28;
/// The child closed its stdin or ended.
pub const SUP_EPIPE: c_int = -32;
/// The kernel lacks pidfd / CLONE_PIDFD support.
pub const SUP_ENOSYS: c_int = -38;
/// No such value (exit code of a signaled child, ...).
pub const SUP_ENODATA: c_int = -61;
/// Not available here: "contain": "cgroup" without a writable cgroup v2
/// hierarchy; sup_pty_resize on a child without a pty.
pub const SUP_ENOTSUP: c_int = -95;
/// sup_release was called while this call waited.
pub const SUP_ECANCELED: c_int = -125;
/// A bug in sup.
pub const SUP_EINTERNAL: c_int = -4096;

/// Exited by itself.
pub const SUP_OUTCOME_EXITED: c_int = 1;
/// Died from a signal sup did not send.
pub const SUP_OUTCOME_SIGNALED: c_int = 2;
/// Ended after idle_timeout_ms of silence.
pub const SUP_OUTCOME_IDLE_TIMEOUT: c_int = 3;
/// Ended after max_runtime_ms.
pub const SUP_OUTCOME_MAX_RUNTIME: c_int = 4;
/// Ended by sup_interrupt.
pub const SUP_OUTCOME_INTERRUPTED: c_int = 5;
/// Ended by sup_abort or sup_release.
pub const SUP_OUTCOME_ABORTED: c_int = 6;

/// The child's stdout.
pub const SUP_STDOUT: c_int = 1;
/// The child's stderr.
pub const SUP_STDERR: c_int = 2;

/// No failure.
pub const SUP_PART_NONE: c_int = 0;
/// The spec (detail starts with "spec: KEY: ").
pub const SUP_PART_SPEC: c_int = 1;
/// argv\[0\] (detail starts with "exec ").
pub const SUP_PART_EXEC: c_int = 2;
/// The working directory (detail starts with "cwd ").
pub const SUP_PART_CWD: c_int = 3;
/// The host or kernel.
pub const SUP_PART_SYSTEM: c_int = 4;

/// Not an idle_timeout outcome.
pub const SUP_PHASE_NONE: c_int = 0;
/// first_output_timeout_ms fired: no byte at all.
pub const SUP_PHASE_FIRST_OUTPUT: c_int = 1;
/// idle_timeout_ms fired after output.
pub const SUP_PHASE_IDLE: c_int = 2;
/// input_wait_timeout_ms fired: waiting for input (see sup_input_wanted).
pub const SUP_PHASE_INPUT: c_int = 3;

/// Contained by its process group.
pub const SUP_CONTAIN_GROUP: c_int = 1;
/// Contained by a cgroup v2 of its own.
pub const SUP_CONTAIN_CGROUP: c_int = 2;

/// Should the host die, the sentinel ends the child's whole tree.
pub const SUP_HOST_DEATH_TREE: c_int = 1;
/// Should the host die, only the main process ends (no sentinel runs).
pub const SUP_HOST_DEATH_MAIN_PROCESS: c_int = 2;

/// A buffer of this size always holds sup_spawn_ex's whole detail.
pub const SUP_ERRBUF_SIZE: usize = 4096;
/// Pass as a position to sup_output_wait to not wait on that stream.
pub const SUP_POS_IGNORE: u64 = u64::MAX;

/// The opaque handle of one supervised child.
#[repr(C)]
pub struct sup_proc {
    _private: [u8; 0],
    _not_send_sync: core::marker::PhantomData<(*mut u8, core::marker::PhantomPinned)>,
}

/// One row per function of `include/sup.h`: name, C return type, C parameter
/// types, spelled as in the header. Checked against the header and against the
/// `extern` block of this file by `tests/header.rs`.
pub const DECLARATIONS: &[(&str, &str, &[&str])] = &[
    ("sup_version", "int", &[]),
    ("sup_strerror", "const char *", &["int"]),
    ("sup_outcome_name", "const char *", &["int"]),
    ("sup_signal_parse", "int", &["const char *"]),
    ("sup_spawn", "int", &["const char *", "sup_proc **"]),
    ("sup_spawn_ex", "int", &["const char *", "sup_proc **", "char *", "size_t"]),
    ("sup_spawn_v2", "int", &["const char *", "sup_proc **", "char *", "size_t", "int *"]),
    ("sup_poll", "int", &["sup_proc *", "int"]),
    ("sup_interrupt", "int", &["sup_proc *"]),
    ("sup_abort", "int", &["sup_proc *"]),
    ("sup_result", "const char *", &["sup_proc *"]),
    ("sup_release", "void", &["sup_proc *"]),
    ("sup_fd", "int", &["sup_proc *"]),
    ("sup_pid", "int", &["sup_proc *"]),
    ("sup_output_read", "int", &["sup_proc *", "int", "uint64_t *", "void *", "size_t", "size_t *"]),
    ("sup_output_wait", "int", &["sup_proc *", "uint64_t", "uint64_t", "int"]),
    ("sup_output_total", "int64_t", &["sup_proc *", "int"]),
    ("sup_output_fd", "int", &["sup_proc *", "int"]),
    ("sup_input_write", "int", &["sup_proc *", "const void *", "size_t", "size_t *"]),
    ("sup_input_wait", "int", &["sup_proc *", "int"]),
    ("sup_input_fd", "int", &["sup_proc *"]),
    ("sup_input_close", "int", &["sup_proc *"]),
    ("sup_result_outcome", "int", &["sup_proc *"]),
    ("sup_result_exit_code", "int", &["sup_proc *"]),
    ("sup_result_term_signal", "int", &["sup_proc *"]),
    ("sup_result_forced_kill", "int", &["sup_proc *"]),
    ("sup_result_duration_ms", "double", &["sup_proc *"]),
    ("sup_result_output", "const char *", &["sup_proc *", "int", "size_t *"]),
    ("sup_result_omitted_bytes", "int64_t", &["sup_proc *", "int"]),
    ("sup_result_status_lost", "int", &["sup_proc *"]),
    ("sup_result_rusage", "int", &["sup_proc *", "double *", "double *", "int64_t *"]),
    ("sup_result_signals", "int", &["sup_proc *", "int *", "double *", "size_t"]),
    ("sup_signal_name", "const char *", &["int"]),
    ("sup_signal", "int", &["sup_proc *", "int"]),
    ("sup_result_phase", "int", &["sup_proc *"]),
    ("sup_pty_resize", "int", &["sup_proc *", "int", "int"]),
    ("sup_result_contained", "int", &["sup_proc *"]),
    ("sup_result_leftovers_ended", "int64_t", &["sup_proc *"]),
    ("sup_result_tree_cpu", "int", &["sup_proc *", "double *", "double *"]),
    ("sup_result_host_death", "int", &["sup_proc *"]),
    ("sup_expire", "int", &["sup_proc *"]),
    ("sup_input_wanted", "int", &["sup_proc *"]),
];

// Keep one declaration per line in this block: tests/header.rs reads it.
unsafe extern "C" {
    pub fn sup_version() -> c_int;
    pub fn sup_strerror(err: c_int) -> *const c_char;
    pub fn sup_outcome_name(outcome: c_int) -> *const c_char;
    pub fn sup_signal_parse(text: *const c_char) -> c_int;
    pub fn sup_spawn(spec_json: *const c_char, out: *mut *mut sup_proc) -> c_int;
    pub fn sup_spawn_ex(spec_json: *const c_char, out: *mut *mut sup_proc, errbuf: *mut c_char, errbuf_size: size_t) -> c_int;
    pub fn sup_spawn_v2(spec_json: *const c_char, out: *mut *mut sup_proc, errbuf: *mut c_char, errbuf_size: size_t, failed_part: *mut c_int) -> c_int;
    pub fn sup_poll(p: *mut sup_proc, timeout_ms: c_int) -> c_int;
    pub fn sup_interrupt(p: *mut sup_proc) -> c_int;
    pub fn sup_abort(p: *mut sup_proc) -> c_int;
    pub fn sup_result(p: *mut sup_proc) -> *const c_char;
    pub fn sup_release(p: *mut sup_proc);
    pub fn sup_fd(p: *mut sup_proc) -> c_int;
    pub fn sup_pid(p: *mut sup_proc) -> c_int;
    pub fn sup_output_read(p: *mut sup_proc, stream: c_int, pos: *mut u64, buf: *mut c_void, cap: size_t, nread: *mut size_t) -> c_int;
    pub fn sup_output_wait(p: *mut sup_proc, stdout_pos: u64, stderr_pos: u64, timeout_ms: c_int) -> c_int;
    pub fn sup_output_total(p: *mut sup_proc, stream: c_int) -> i64;
    pub fn sup_output_fd(p: *mut sup_proc, stream: c_int) -> c_int;
    pub fn sup_input_write(p: *mut sup_proc, buf: *const c_void, len: size_t, written: *mut size_t) -> c_int;
    pub fn sup_input_wait(p: *mut sup_proc, timeout_ms: c_int) -> c_int;
    pub fn sup_input_fd(p: *mut sup_proc) -> c_int;
    pub fn sup_input_close(p: *mut sup_proc) -> c_int;
    pub fn sup_result_outcome(p: *mut sup_proc) -> c_int;
    pub fn sup_result_exit_code(p: *mut sup_proc) -> c_int;
    pub fn sup_result_term_signal(p: *mut sup_proc) -> c_int;
    pub fn sup_result_forced_kill(p: *mut sup_proc) -> c_int;
    pub fn sup_result_duration_ms(p: *mut sup_proc) -> c_double;
    pub fn sup_result_output(p: *mut sup_proc, stream: c_int, len: *mut size_t) -> *const c_char;
    pub fn sup_result_omitted_bytes(p: *mut sup_proc, stream: c_int) -> i64;
    pub fn sup_result_status_lost(p: *mut sup_proc) -> c_int;
    pub fn sup_result_rusage(p: *mut sup_proc, user_ms: *mut c_double, sys_ms: *mut c_double, max_rss_kb: *mut i64) -> c_int;
    pub fn sup_result_signals(p: *mut sup_proc, signals: *mut c_int, at_ms: *mut c_double, cap: size_t) -> c_int;
    pub fn sup_signal_name(sig: c_int) -> *const c_char;
    pub fn sup_signal(p: *mut sup_proc, sig: c_int) -> c_int;
    pub fn sup_result_phase(p: *mut sup_proc) -> c_int;
    pub fn sup_pty_resize(p: *mut sup_proc, rows: c_int, cols: c_int) -> c_int;
    pub fn sup_result_contained(p: *mut sup_proc) -> c_int;
    pub fn sup_result_leftovers_ended(p: *mut sup_proc) -> i64;
    pub fn sup_result_tree_cpu(p: *mut sup_proc, user_ms: *mut c_double, sys_ms: *mut c_double) -> c_int;
    pub fn sup_result_host_death(p: *mut sup_proc) -> c_int;
    pub fn sup_expire(p: *mut sup_proc) -> c_int;
    pub fn sup_input_wanted(p: *mut sup_proc) -> c_int;
}
