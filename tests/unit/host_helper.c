/* A host for host_death_test: supervises `sleep 30`, writes its pid to the
 * file named in argv[1], then waits to be killed. */
#include <stdio.h>
#include <sup.h>
#include <unistd.h>

int main(int argc, char** argv) {
  sup_proc* p = NULL;
  if (argc != 2 || sup_spawn("{\"argv\": [\"sleep\", \"30\"]}", &p) != 0) return 1;
  FILE* f = fopen(argv[1], "w");
  if (f == NULL) return 1;
  fprintf(f, "%d\n", sup_pid(p));
  fclose(f);
  sup_poll(p, -1);
  sup_release(p);
  return 0;
}
