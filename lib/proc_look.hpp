// One look at a child's tree in /proc: what each thread of its processes
// (listed by proc_tree.hpp) is blocked in, matched against the child's stdin
// file. A look keeps nothing between looks: judging is input_wait.hpp's.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <utility>
#include <vector>

// The tree a look walks and its bound: the callers of a look list the tree
// first (input_wait.cpp) or keep its group index (engine.hpp).
#include "proc_tree.hpp"

namespace sup {

// The file a reader must be waiting on: the child's stdin, by identity, not
// by descriptor number. A terminal is matched by its device number (st_rdev),
// so that /dev/pts/N opened again, or /dev/tty for the controlling terminal,
// is the same file; anything else by st_dev and st_ino.
struct StdinFile {
  enum class Kind { none, node, terminal };
  Kind kind = Kind::none;
  dev_t dev = 0;
  ino_t ino = 0;
  dev_t rdev = 0;
  // The identity of an open descriptor: a pipe, FIFO or terminal (another
  // file, a regular one or /dev/null, never blocks a reader: none).
  static StdinFile of_fd(int fd) noexcept;
};

// Whether this process's session has a controlling terminal (tty_nr in
// /proc/self/stat; true when that cannot be read, so that looks go on).
// Without one, a child spawned into the session (every mode but "pty") can
// never be stopped by SIGTTIN or SIGTTOU on it.
bool session_has_terminal() noexcept;

// Which thread states count. A thread runnable (R) or in disk sleep (D)
// anywhere in the tree means the tree makes progress: not waiting. A reader
// is a thread asleep (S) in read/readv/pread/preadv, poll/ppoll,
// select/pselect6 or epoll_wait/epoll_pwait/epoll_pwait2 with the stdin
// file among what it waits on (for reading). Every other thread may sleep
// on anything (a runtime's parked threads in futex, Go's sysmon, libuv's
// pool, a thread that joins the reader) or be stopped: one reader and no
// runnable thread make the tree a candidate, which waits once the reader
// stays asleep, not woken (its run time unchanged), across looks kSettle
// apart with nothing read from the child and no input written meanwhile.
// A process stopped (T) in a read, write or ioctl of its controlling
// terminal while its group is not the terminal's foreground one was
// stopped by SIGTTIN or SIGTTOU: waiting at once.
// What one look at the tree found.
enum class InputSeen {
  elsewhere,  // asleep on something else, or nothing in the tree
  busy,       // a thread runnable or in disk sleep: it makes progress
  reading,    // asleep reading the stdin file (waiting once it holds)
  stopped,    // stopped by SIGTTIN/SIGTTOU on its controlling terminal
  blind,      // a process sup may not inspect, and nothing seen waiting
};

// A thread's blocked system call (proc_look.cpp).
struct Blocked;

// A thread a look saw, and how long it had run then (Look::ran).
struct ThreadRun {
  pid_t pid;
  pid_t tid;
  uint64_t ran;
};

// Whether none of these threads has run since their runs were read: each
// one's /proc/PID/task/TID/schedstat unchanged (a read per thread). A tree
// in which nothing ran is where it was: the same threads asleep in the same
// calls (a new process or thread, an exit, output, a wake-up all take a
// run). False if any is gone or cannot be read.
bool none_ran(const std::vector<ThreadRun>& threads) noexcept;

// One look at the tree: what every thread of every process does.
class Look {
 public:
  Look(const StdinFile& target) noexcept;

  // Returns false once the verdict is settled (a runnable thread, or a
  // stop on the terminal): the rest need not be looked at. pgrp: if not
  // 0, the process is looked at only if it is still of that group.
  bool process(int proc_dir, pid_t pid, pid_t pgrp);

  InputSeen seen() const noexcept {
    if (stopped_) return InputSeen::stopped;
    if (busy_) return InputSeen::busy;
    if (!readers.empty()) return InputSeen::reading;
    if (blind_) return InputSeen::blind;
    return InputSeen::elsewhere;
  }
  void set_blind() noexcept { blind_ = true; }
  // The look was cut short (more than kMaxProcesses processes).
  void set_cut() noexcept { cut_ = true; }
  // Every thread of the tree was looked at, all asleep or stopped
  // elsewhere or reading, and seen: `threads` is the whole tree.
  bool complete() const noexcept { return !busy_ && !stopped_ && !blind_ && !cut_; }

  std::vector<std::pair<pid_t, uint64_t>> readers;
  // Every thread looked at, with its run (none_ran compares them later).
  std::vector<ThreadRun> threads;

 private:
  // Is this file the child's stdin? ctty: the process's controlling
  // terminal, which /dev/tty stands for.
  bool is_stdin(const struct stat& st, dev_t ctty) const noexcept;
  // Descriptor fd of the thread at task_dir; false if it cannot be seen.
  bool fd_is_stdin(int task_dir, long fd, dev_t ctty);
  bool fd_is_terminal(int task_dir, long fd, dev_t ctty) const noexcept;
  bool waits_on_stdin(int task_dir, pid_t tid, const Blocked& b, dev_t ctty);
  bool poll_waits(int task_dir, pid_t tid, const Blocked& b, dev_t ctty);
  bool select_waits(int task_dir, pid_t tid, const Blocked& b, dev_t ctty);
  bool epoll_waits(int task_dir, const Blocked& b, dev_t ctty);
  bool read_memory(pid_t tid, unsigned long at, void* into, size_t len);
  // How long the thread has run: any change between two looks means it
  // woke. schedstat where the kernel has it, else the context switches.
  static uint64_t ran(int task_dir) noexcept;

  const StdinFile& target_;
  const dev_t dev_tty_;
  bool busy_ = false;
  bool stopped_ = false;
  bool blind_ = false;
  bool cut_ = false;
  int threads_ = 0;
};

}  // namespace sup
