/* A host that cannot see Landlock: a seccomp filter makes
 * landlock_create_ruleset fail with ENOSYS, as on a kernel without it; then
 * it spawns the spec in argv[1] and prints "rc=N" and the error detail, or
 * the result. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sup.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  struct sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_landlock_create_ruleset, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof code / sizeof code[0], code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
    perror("seccomp");
    return 2;
  }
  sup_proc* p = NULL;
  char err[SUP_ERRBUF_SIZE] = "";
  int rc = sup_spawn_ex(argv[1], &p, err, sizeof err);
  printf("rc=%d\n%s\n", rc, err);
  if (rc != 0) return 0;
  sup_poll(p, -1);
  printf("%s\n", sup_result(p));
  sup_release(p);
  return 0;
}
