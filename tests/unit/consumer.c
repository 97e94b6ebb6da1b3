/* The smallest program a pkg-config consumer writes. */
#include <stdio.h>
#include <string.h>
#include <sup.h>

int main(void) {
  sup_proc *p = NULL;
  int rc = sup_spawn("{\"argv\": [\"echo\", \"consumer\"]}", &p);
  if (rc != 0) {
    fprintf(stderr, "sup_spawn: %s\n", sup_strerror(rc));
    return 1;
  }
  sup_poll(p, -1);
  size_t len = 0;
  const char *out = sup_result_output(p, SUP_STDOUT, &len);
  int ok = sup_result_outcome(p) == SUP_OUTCOME_EXITED && len == 9 && memcmp(out, "consumer\n", 9) == 0;
  puts(sup_result(p));
  sup_release(p);
  return ok ? 0 : 1;
}
