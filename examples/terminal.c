/* The README's terminal example: a harness answers a prompt on a PTY, ends a
   tool after 10 s of silence and keeps the transcript. Compiled and run by
   tests/unit/check_readme.py. */
#include <stdio.h>
#include <string.h>
#include <sup.h>

int main(void) {
  const char *spec =
      "{\"argv\": [\"sh\", \"-c\", \"printf 'name? '; read name; echo hello $name;"
      " test -t 1 && echo on a terminal\"],"
      " \"pty\": {\"rows\": 40, \"cols\": 120}, \"idle_timeout_ms\": 10000}";
  sup_proc *p;
  char why[SUP_ERRBUF_SIZE];
  if (sup_spawn_ex(spec, &p, why, sizeof why) < 0) {
    fprintf(stderr, "%s\n", why);         /* e.g. no terminal left: SUP_ENOSPC */
    return 1;
  }
  /* Wait for the prompt: the terminal's output so far, read live. */
  char seen[4096] = "";
  size_t len = 0;
  uint64_t pos = 0;
  while (!strstr(seen, "name? ") && len < sizeof seen - 1) {
    int final = sup_poll(p, 0) == 1;
    size_t n;
    sup_output_read(p, SUP_STDOUT, &pos, seen + len, sizeof seen - 1 - len, &n);
    seen[len += n] = '\0';
    if (n == 0 && final) break;          /* ended (or went silent) first */
    if (n == 0) sup_output_wait(p, pos, SUP_POS_IGNORE, -1);
  }
  sup_input_write(p, "sup\n", 4, NULL);  /* typed, then Enter */
  sup_input_close(p);                    /* Ctrl-D: end of input */
  sup_poll(p, -1);
  size_t tlen;
  const char *transcript = sup_result_output(p, SUP_STDOUT, &tlen);
  fwrite(transcript, 1, tlen, stdout);   /* "name? sup\r\nhello sup\r\non a terminal\r\n" */
  printf("[%s]\n", sup_outcome_name(sup_result_outcome(p)));
  sup_release(p);
  return 0;
}
