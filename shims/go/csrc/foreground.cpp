// "tty_foreground": the host's side of handing its terminal to the child.
#include "foreground.hpp"

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

}  // namespace sup
