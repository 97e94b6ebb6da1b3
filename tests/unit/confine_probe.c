/* What a confined child can do: each command tries one thing and prints
 * "ok" or the errno's name (exit 0 or 1). Built for the confinement tests. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

// "alloc"'s block: a global the compiler must assume is read elsewhere.
char* volatile probe_kept;

static int report(int rc) {
  if (rc == 0) {
    puts("ok");
    return 0;
  }
  puts(strerrorname_np(errno) ? strerrorname_np(errno) : "unknown");
  return 1;
}

static int tcp(int family, int port) {
  int s = socket(family, SOCK_STREAM, 0);
  if (s < 0) return report(-1);
  if (family == AF_INET) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return report(connect(s, (struct sockaddr*)&a, sizeof a));
  }
  struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = IN6ADDR_LOOPBACK_INIT};
  return report(connect(s, (struct sockaddr*)&a, sizeof a));
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* cmd = argv[1];
  const char* arg = argc > 2 ? argv[2] : "";
  if (strcmp(cmd, "write") == 0) {
    int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return report(-1);
    return report(write(fd, "x", 1) == 1 ? 0 : -1);
  }
  if (strcmp(cmd, "read") == 0) {
    int fd = open(arg, O_RDONLY);
    if (fd < 0) return report(-1);
    char c;
    return report(read(fd, &c, 1) >= 0 ? 0 : -1);
  }
  if (strcmp(cmd, "tcp4") == 0) return tcp(AF_INET, atoi(arg));
  if (strcmp(cmd, "tcp6") == 0) return tcp(AF_INET6, atoi(arg));
  if (strcmp(cmd, "udp4") == 0) {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0) return report(-1);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(arg))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return report(sendto(s, "x", 1, 0, (struct sockaddr*)&a, sizeof a) == 1 ? 0 : -1);
  }
  if (strcmp(cmd, "unix") == 0) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0) return report(-1);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", arg);
    return report(connect(s, (struct sockaddr*)&a, sizeof a));
  }
#if defined(__x86_64__)
  if (strcmp(cmd, "x32") == 0) {
    /* x32's socket(2): the same number with the x32 bit. */
    long rc = syscall(__X32_SYSCALL_BIT | __NR_socket, AF_INET, SOCK_STREAM, 0);
    return report(rc >= 0 ? 0 : -1);
  }
#endif
  if (strcmp(cmd, "uring") == 0) {
    char params[120] = {0};
    long rc = syscall(__NR_io_uring_setup, 1, params);
    return report(rc >= 0 ? 0 : -1);
  }
  if (strcmp(cmd, "alloc") == 0) {
    size_t bytes = (size_t)atol(arg) << 20;
    char* p = malloc(bytes);
    if (p == NULL) return report(-1);
    memset(p, 1, bytes);
    // Kept where the compiler must assume it is read: clang otherwise
    // removes the malloc and memset of a block nobody uses.
    probe_kept = p;
    return report(0);
  }
  return 2;
}
