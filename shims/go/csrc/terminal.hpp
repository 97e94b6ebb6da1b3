// The child's pseudo-terminal ("pty" in the spec): made on the caller's
// thread before the clone; the master is read by the loop like a pipe and
// written by the host through sup_input_*.
#pragma once

#include "unique_fd.hpp"

namespace sup {

struct Terminal {
  UniqueFd master;  // O_NONBLOCK, close-on-exec
  UniqueFd slave;   // close-on-exec: the child dup3()s it onto 0, 1 and 2
};

// A new pseudo-terminal of rows x cols, in the kernel's default modes, both
// ends close-on-exec and numbered >= 3, so that no other child inherits them.
// Throws LaunchError: SUP_ENOSPC when /dev/ptmx has no terminal left.
Terminal open_terminal(int rows, int cols);

// TIOCSWINSZ on the master; the kernel sends SIGWINCH to the terminal's
// foreground process group. Returns 0 or -errno.
int set_window_size(int master, int rows, int cols) noexcept;

// End of input for the child, as Ctrl-D at a keyboard: the terminal's VEOF
// character. In canonical mode a VEOF ends input only when the line being
// typed is empty (otherwise it sends that line, without a newline), so it is
// written twice when the last byte the host wrote (last_byte, -1 for none)
// left a line unfinished. In non-canonical mode (a program reading keys: an
// editor, a REPL's line editor) a terminal has no end of input: VEOF is sent
// once, as the key it is. With VEOF disabled nothing is written.
// last_byte becomes VEOF once one is written. Returns 0 when done, also
// when the child's side is closed (EIO: its input has ended anyway), or
// -errno: -EAGAIN when the terminal's input queue is full (call again).
int write_end_of_input(int master, int& last_byte) noexcept;

}  // namespace sup
