/* A plugin that supervises a command with sup: what an editor extension, a
 * CI runner's step plugin or a game-server module looks like. The host that
 * loads it knows nothing of sup; unloading the plugin unloads libsup, whose
 * threads stop and whose children are reaped. */
#include <string.h>
#include <sup.h>

__attribute__((visibility("default"))) int plugin_run(const char *spec, char *out, size_t out_size) {
  sup_proc *p = NULL;
  char why[SUP_ERRBUF_SIZE];
  int rc = sup_spawn_ex(spec, &p, why, sizeof why);
  if (rc < 0) {
    strncpy(out, why, out_size - 1);
    out[out_size - 1] = '\0';
    return rc;
  }
  sup_poll(p, -1);
  size_t len = 0;
  const char *bytes = sup_result_output(p, SUP_STDOUT, &len);
  if (len >= out_size) len = out_size - 1;
  memcpy(out, bytes, len);
  out[len] = '\0';
  rc = sup_result_outcome(p);
  sup_release(p);
  return rc;
}
