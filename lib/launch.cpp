// Cloning and exec'ing a child (launch.hpp): the child's side runs on ChildStack
// with raw system calls only; the parent turns the step that failed into a
// LaunchError, and falls back to group mode where "auto" allows it.
#include "launch.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "child_signals.hpp"
#include "confine.hpp"
#include "credentials.hpp"
#include "errno_text.hpp"
#include "sup.h"

extern char** environ;

// glibc's clone, under the name sanitizer runtimes do not intercept: TSan's
// `clone` interceptor treats every clone as a fork and runs its fork hooks in
// the child, which with CLONE_VM would rewrite the parent's own state.
extern "C" int __clone(int (*fn)(void*), void* stack, int flags, void* arg, ...);

namespace sup {
namespace {

constexpr size_t kChildStackSize = 64 * 1024;

enum class FailedStep : int { none = 0, setup, cgroup, fds, cwd, confine, exec };

struct ChildArgs {
  const char* path;
  char* const* argv;
  char* const* envp;
  const char* cwd;
  ChildFds fds;
  bool tty_foreground;
  bool die_with_host;
  int sentinel_fd;
  // cgroup.procs of the child's cgroup, where clone3 cannot start it there:
  // the child writes "0" (itself) to it first. -1 for none.
  int cgroup_procs;
  bool terminal;
  const ChildConfine* confine;
  // The confinement step that failed (confine_child), a static string.
  const char* confine_step;
  pid_t host_pid;
  pid_t host_pgrp;
  // The child made its group the terminal's foreground (tty_foreground).
  bool took_terminal;
  // Written by the child, read by the parent once the vfork-style clone has
  // returned (after the child's exec or exit).
  FailedStep failed_step;
  int failed_errno;
  ChildSignals signals;
};

[[noreturn]] SUP_CHILD_CODE void child_fail(ChildArgs* a, FailedStep step) {
  a->failed_step = step;
  a->failed_errno = errno;
  if (a->took_terminal) {
    // Nobody else would hand it back: the host never gets a handle to this
    // child. Signals are still blocked, so TIOCSPGRP from what is now the
    // foreground group needs no care for SIGTTOU either way.
    pid_t self = static_cast<pid_t>(syscall(SYS_getpid));
    pid_t foreground = 0;
    if (syscall(SYS_ioctl, 0, TIOCGPGRP, &foreground) == 0 && foreground == self)
      syscall(SYS_ioctl, 0, TIOCSPGRP, &a->host_pgrp);
  }
  syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

// Runs in the child, on ChildStack, sharing the parent's memory until exec.
// Only raw system calls: no allocation, no locks, no sanitizer hooks, and
// nothing that could run a host signal handler (all signals are blocked
// until the last step, after every disposition is set: apply_child_signals).
SUP_CHILD_CODE int child_main(void* raw) {
  auto* a = static_cast<ChildArgs*>(raw);

  // Into its cgroup before anything else, so that nothing it ever runs is
  // outside (clone3 put it there already where it could).
  if (a->cgroup_procs >= 0 && syscall(SYS_write, a->cgroup_procs, "0", 1) != 1) child_fail(a, FailedStep::cgroup);
  if (a->die_with_host) {
    if (syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) child_fail(a, FailedStep::setup);
    // The host may have died between clone and prctl; then nobody would kill us.
    if (syscall(SYS_getppid) != a->host_pid) syscall(SYS_exit_group, 127);
  }
  // A session of its own leads a group of its own too (pgid == pid), so the
  // group signals reach it as without a terminal.
  if (a->terminal) {
    if (syscall(SYS_setsid) < 0) child_fail(a, FailedStep::setup);
  } else if (syscall(SYS_setpgid, 0, 0) != 0) {
    child_fail(a, FailedStep::setup);
  }
  if (a->sentinel_fd >= 0) {
    // "+PGID", our pid being our group's id. The host's end of the socket
    // is open here until the exec (close-on-exec), so the sentinel cannot
    // have seen the host's death before this record; a host already dead
    // means no exec.
    char record[16];
    char digits[12];
    int n = 0;
    for (unsigned long v = static_cast<unsigned long>(syscall(SYS_getpid)); v > 0 || n == 0; v /= 10)
      digits[n++] = static_cast<char>('0' + v % 10);
    int len = 0;
    record[len++] = '+';
    while (n > 0) record[len++] = digits[--n];
    // A sentinel that stopped reading costs the record, as any record
    // (Sentinel::send), never the spawn.
    syscall(SYS_sendto, a->sentinel_fd, record, len, MSG_DONTWAIT | MSG_NOSIGNAL, nullptr, 0);
    if (syscall(SYS_getppid) != a->host_pid) syscall(SYS_exit_group, 127);
  }

  // Descriptors first: 0, 1, 2 and "fds" in place, everything else closed
  // (the cgroup's procs file and the sentinel's socket have served).
  if (!place_child_fds(a->fds)) child_fail(a, FailedStep::fds);
  // The slave, now on 0, was opened O_NOCTTY: the session leader takes it
  // as its controlling terminal here, and its group is the foreground one.
  if (a->terminal && syscall(SYS_ioctl, 0, TIOCSCTTY, 0) != 0) child_fail(a, FailedStep::setup);
  if (a->tty_foreground) {
    // Signals are still blocked, so TIOCSPGRP from this (background) group
    // is not stopped by SIGTTOU, and the kernel allows it: the terminal is
    // taken only from the host's group, which the parent saw in the
    // foreground, if it still is (a shell may have put the host in the
    // background since). Failure only means the child stays in the background.
    pid_t self = static_cast<pid_t>(syscall(SYS_getpid));
    pid_t foreground = 0;
    if (syscall(SYS_ioctl, 0, TIOCGPGRP, &foreground) == 0 && foreground == a->host_pgrp)
      a->took_terminal = syscall(SYS_ioctl, 0, TIOCSPGRP, &self) == 0;
  }
  if (a->cwd != nullptr && syscall(SYS_chdir, a->cwd) != 0) child_fail(a, FailedStep::cwd);

  apply_child_signals(a->signals);
  // Limits, ids, the sandbox: last before exec, seccomp last of all. The
  // Landlock ruleset came through place_child_fds as one more descriptor;
  // confine_child closes it once used.
  if (a->confine != nullptr) {
    int err = confine_child(*a->confine, a->die_with_host ? SIGKILL : 0, a->host_pid, &a->confine_step);
    if (err != 0) {
      errno = err;
      child_fail(a, FailedStep::confine);
    }
  }
  uint64_t empty_mask = 0;
  if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty_mask, nullptr, sizeof(uint64_t)) != 0)
    child_fail(a, FailedStep::setup);

  syscall(SYS_execve, a->path, a->argv, a->envp);
  child_fail(a, FailedStep::exec);
  return 127;
}

#if defined(__x86_64__)
// clone3 with the child on its own stack, as glibc's private __clone3 does:
// the child returns from the system call on the new stack, so it must not
// return from this function; it calls fn(arg) and exits. Raw, not through
// any wrapper a sanitizer would intercept (see __clone above).
extern "C" long sup_clone3(clone_args* args, size_t size, int (*fn)(void*), void* arg);
asm(R"(
  .text
  .p2align 4
  .hidden sup_clone3
  .type sup_clone3, @function
sup_clone3:
  .cfi_startproc
  mov %rdx, %r8
  mov %rcx, %r9
  mov $435, %eax
  syscall
  test %rax, %rax
  jz 1f
  ret
1:
  .cfi_undefined rip
  xor %ebp, %ebp
  mov %r9, %rdi
  call *%r8
  mov %eax, %edi
  mov $60, %eax
  syscall
  hlt
  .cfi_endproc
  .size sup_clone3, .-sup_clone3
)");
#endif

// The vfork-style clone of launch(), with the child started inside the
// cgroup of cgroup_fd (clone3, CLONE_INTO_CGROUP): it never runs anywhere
// else. Returns the pid, or -1 with errno (ENOSYS where clone3 is missing
// or this architecture has no stub here).
pid_t clone_into_cgroup(ChildStack& stack, int cgroup_fd, ChildArgs* args, int* pidfd) {
#if defined(__x86_64__)
  clone_args ca{};
  ca.flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | CLONE_INTO_CGROUP;
  ca.pidfd = reinterpret_cast<uint64_t>(pidfd);
  ca.exit_signal = 0;
  ca.stack = reinterpret_cast<uint64_t>(static_cast<char*>(stack.top()) - kChildStackSize);
  ca.stack_size = kChildStackSize;
  ca.cgroup = static_cast<uint64_t>(cgroup_fd);
  long rc = sup_clone3(&ca, sizeof ca, child_main, args);
  if (rc < 0) {
    errno = static_cast<int>(-rc);
    return -1;
  }
  return static_cast<pid_t>(rc);
#else
  (void)stack;
  (void)cgroup_fd;
  (void)args;
  (void)pidfd;
  errno = ENOSYS;
  return -1;
#endif
}

// A refusal to start the child in its cgroup that "auto" answers with
// group mode; launch() catches it.
struct CgroupRefused {
  std::string reason;
};

// What the kernel says when it will not put this host's child in that
// cgroup (permission, a threaded or invalid domain, controllers in the
// way), as opposed to the host being out of something, which is the
// spawn's error in either mode.
bool refusal(int err) noexcept { return err != EAGAIN && err != ENOMEM && err != EMFILE && err != ENFILE && err != EINTR; }

}  // namespace

ChildStack::ChildStack() {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_ = kChildStackSize + page;
  base_ = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (base_ == MAP_FAILED) throw std::bad_alloc();
  // A guard page below the stack turns an overflow into a crash, not corruption.
  mprotect(base_, page, PROT_NONE);
}

ChildStack::~ChildStack() { munmap(base_, size_); }

void* ChildStack::top() const noexcept { return static_cast<char*>(base_) + size_; }

// launch() with the child started in cgroup_fd (-1: none), confined by
// confine (plan.confine, or its stand-in outside the cgroup). Throws
// CgroupRefused where plan.cgroup_optional lets group mode follow.
static Launched launch_once(const LaunchPlan& plan, int cgroup_fd, const ChildConfine* confine, ChildStack& stack) {
  ChildArgs args{};
  args.path = plan.exec_path.c_str();
  args.argv = plan.argv.data();
  args.envp = plan.envp.empty() ? environ : plan.envp.data();
  args.cwd = plan.cwd ? plan.cwd->c_str() : nullptr;
  args.fds = plan.fds.view();
  args.tty_foreground = plan.tty_foreground;
  args.signals = plan.signals;
  args.die_with_host = plan.die_with_host;
  args.sentinel_fd = plan.sentinel_fd;
  args.cgroup_procs = -1;
  args.terminal = plan.terminal;
  args.confine = confine;
  args.host_pid = getpid();
  UniqueFd cgroup_procs;
  args.host_pgrp = getpgrp();

  int pidfd = -1;
  DumpableKeeper keep_dumpable(confine != nullptr && confine->changes_ids());
  // No exit signal, so a child that fails before exec does not raise SIGCHLD
  // in the host. execve resets the exit signal to SIGCHLD: from then on the
  // child is an ordinary child of the host's (see MainProcess::exited_now).
  // The child starts with the cloning thread's mask: everything blocked.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pid_t pid = -1;
  errno = ENOSYS;
  if (cgroup_fd >= 0) pid = clone_into_cgroup(stack, cgroup_fd, &args, &pidfd);
  if (cgroup_fd >= 0 && pid < 0 && (errno == ENOSYS || errno == E2BIG)) {
    // No clone3 here (or no CLONE_INTO_CGROUP): the child moves itself in
    // before it does anything else.
    int fd = openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      cgroup_procs = above_stdio(UniqueFd(fd));
      args.cgroup_procs = cgroup_procs.get();
    } else if (plan.cgroup_optional && refusal(errno)) {
      int err = errno;
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      throw CgroupRefused{"the cgroup's cgroup.procs: " + errno_text(err)};
    }
  }
  if (cgroup_fd < 0 || args.cgroup_procs >= 0)
    pid = __clone(child_main, stack.top(), CLONE_VM | CLONE_VFORK | CLONE_PIDFD, &args, &pidfd);
  int clone_errno = errno;
  // The clone returns once the child has exec'd (or failed): a chdir that
  // stalled for seconds is not silence of the program's.
  Nanos started_at = now_ns();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = clone_errno;
  if (pid < 0) {
    int err = errno;
    if (cgroup_fd >= 0 && args.cgroup_procs < 0 && plan.cgroup_optional && refusal(err))
      throw CgroupRefused{"clone3 into the cgroup: " + errno_text(err)};
    if (cgroup_fd >= 0) throw LaunchError{-err, "contain: clone into the cgroup: " + errno_text(err)};
    if (err == EINVAL) throw LaunchError{SUP_ENOSYS, "clone: this kernel lacks CLONE_PIDFD (Linux >= 5.9 needed)"};
    throw LaunchError{-err, "clone: " + errno_text(err)};
  }
  // The pidfd is the lowest free number: 0, 1 or 2 in a host that closed
  // its own, which the host may later dup2 over (and sup would then close
  // the host's descriptor as its own).
  Launched out{pid, started_at, UniqueFd(pidfd), {}, args.took_terminal};
  try {
    out.pidfd = above_stdio(std::move(out.pidfd));
  } catch (const LaunchError&) {
    // Out of descriptors: the low number it has is kept rather than the
    // child lost.
  }
  if (args.failed_step == FailedStep::none) return out;

  if (plan.sentinel_fd >= 0) {
    // Its "+PGID" may have gone out before the step that failed; the group
    // ends with this reap, and its id may be another's after.
    char record[24];
    int n = snprintf(record, sizeof record, "-%d", static_cast<int>(pid));
    while (send(plan.sentinel_fd, record, static_cast<size_t>(n), MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
  }
  siginfo_t info{};
  syscall(SYS_waitid, P_PIDFD, out.pidfd.get(), &info, WEXITED | __WALL, nullptr);
  int err = args.failed_errno;
  switch (args.failed_step) {
    case FailedStep::cwd:
      throw LaunchError{-err, "cwd " + quoted(*plan.cwd) + ": " + errno_text(err), SUP_PART_CWD};
    case FailedStep::exec: {
      // execve says EACCES for a directory; say what it is.
      struct stat st;
      std::string on_disk = (plan.cwd && plan.exec_path[0] != '/') ? *plan.cwd + "/" + plan.exec_path : plan.exec_path;
      if (err == EACCES && stat(on_disk.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) err = EISDIR;
      throw LaunchError{-err, "exec " + quoted(plan.exec_path) + ": " + errno_text(err), SUP_PART_EXEC};
    }
    case FailedStep::confine:
      throw LaunchError{-err, std::string(args.confine_step) + ": " + errno_text(err)};
    case FailedStep::cgroup:
      if (plan.cgroup_optional && refusal(err)) throw CgroupRefused{"joining the cgroup: " + errno_text(err)};
      throw LaunchError{-err, "contain: joining the cgroup: " + errno_text(err)};
    case FailedStep::fds:
      // A host descriptor closed since the spawn checked it (EBADF), or no
      // room above the highest "fds" number to move one out of the way.
      throw LaunchError{-err, "fds: placing the child's descriptors: " + errno_text(err)};
    default:
      throw LaunchError{-err, "child setup: " + errno_text(err)};
  }
}

Launched launch(const LaunchPlan& plan, ChildStack& stack) {
  if (!plan.fds.planned()) throw LaunchError{SUP_EINTERNAL, "launch: the child's descriptors were not planned"};
  try {
    return launch_once(plan, plan.cgroup_fd, plan.confine, stack);
  } catch (const CgroupRefused& refused) {
    // "auto": the cgroup could be made, but the kernel will not start the
    // child in it (an unprivileged host whose delegated cgroup_parent is
    // outside its own cgroup: EACCES). Group mode, saying why, with rlimits
    // for the limits the cgroup was to hold.
    ChildConfine outside;
    if (plan.confine != nullptr) outside = plan.confine->outside_cgroup();
    Launched out = launch_once(plan, -1, plan.confine != nullptr ? &outside : nullptr, stack);
    out.cgroup_refused = refused.reason;
    return out;
  }
}

PipeEnds make_pipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw LaunchError{-errno, std::string("pipe: ") + errno_text(errno)};
  PipeEnds p{UniqueFd(fds[0]), UniqueFd(fds[1])};
  p.read_end = above_stdio(std::move(p.read_end));
  p.write_end = above_stdio(std::move(p.write_end));
  return p;
}

void set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw LaunchError{-errno, std::string("fcntl: ") + errno_text(errno)};
}

UniqueFd above_stdio(UniqueFd fd) {
  if (fd.get() > 2) return fd;
  int moved = fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
  if (moved < 0) throw LaunchError{-errno, std::string("fcntl: ") + errno_text(errno)};
  return UniqueFd(moved);
}

}  // namespace sup
