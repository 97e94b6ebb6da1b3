// "tty_foreground": the host's side of handing its terminal to the child,
// and of taking it back.
#include "foreground.hpp"

#include <termios.h>
#include <unistd.h>

namespace sup {

ForegroundGrant decide_foreground(bool asked) noexcept {
  ForegroundGrant grant;
  grant.asked = asked;
  if (!asked) return grant;
  if (!isatty(0)) {
    grant.refused = "stdin is not a terminal";
    return grant;
  }
  const pid_t foreground = tcgetpgrp(0);
  if (foreground < 0)
    grant.refused = "stdin is not the host's controlling terminal";
  else if (foreground != getpgrp())
    grant.refused = "the host's process group is not the terminal's foreground group";
  return grant;
}

void HostTerminal::hand_back(pid_t pgid) noexcept {
  if (!tty_.valid()) return;
  // Our thread blocks SIGTTOU, so a background caller is not stopped here.
  if (tcgetpgrp(tty_.get()) == pgid) tcsetpgrp(tty_.get(), host_pgrp_);
  tty_.reset();
}

}  // namespace sup
