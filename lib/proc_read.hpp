// Reading /proc files without a lock or a stream: a small file into a buffer,
// a file of any length into a string, and a process's or thread's stat line.
// Shared by the tree listing (proc_tree.hpp) and the per-thread look
// (proc_look.hpp).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace sup {

// A /proc file, relative to the open directory dir (or AT_FDCWD), into buf
// (NUL-terminated, at most cap - 1 bytes: /proc gives a small file whole in
// one read). Returns the length, or -1 with errno set.
long read_file(int dir, const char* path, char* buf, size_t cap) noexcept;

// The same for a file of any length (an epoll's fdinfo, a children list),
// appended to out. Returns out's length, or -1 with errno set.
long read_whole(int dir, const char* path, std::string& out);

// What a stat line says of a process or thread.
struct ProcStat {
  char state = '?';
  pid_t pgrp = 0;
  dev_t tty = 0;  // the controlling terminal, 0 for none
  pid_t tpgid = -1;
};

// Parses "pid (comm) S ppid pgrp session tty_nr tpgid ...". False if the
// text is not such a line.
bool parse_stat(const char* text, ProcStat& out) noexcept;

}  // namespace sup
