/*
 * sup-sentinel: ends what a dead host supervised. libsup starts one per
 * engine and keeps the other end of the socket on fd 0 (see
 * lib/sentinel.hpp for the records). When that end closes without "q" (the
 * host died, or exec'd), every host cgroup directory named is killed
 * (cgroup.kill) and removed depth first, and every process group still
 * listed gets SIGKILL. Then it exits. The work itself is sentinel_run.cpp,
 * which a library linked into the host's own executable runs the same way
 * (sentinel_entry.cpp).
 *
 * Usage (by libsup only): sup-sentinel HOST_PID
 */
#include "sentinel_run.hpp"

int main(int argc, char **argv)
{
  (void)argv;
  if (argc != 2)
    return 2;
  /* The first half exits 0 once the second is forked. */
  return sup_sentinel_run(0);
}
