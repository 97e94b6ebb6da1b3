/*
 * Passing the command's output through: what libsup captured from a "pipe"
 * stream is written to the program's own stdout and stderr as it comes,
 * with backpressure, and (--pty) the program's stdin to the command's
 * terminal.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sup-run.h"

/* Whether a write to fd never waits for a reader: then it is not polled. */
static bool never_blocks(int fd)
{
  struct stat st;
  return fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
}

/* One write that does not block for long: it follows a poll() that said fd
 * is writable, and writes no more than fits. A socket is written with
 * MSG_DONTWAIT; a pipe gets what its free room takes (F_GETPIPE_SZ less
 * FIONREAD), at least the PIPE_BUF bytes POLLOUT promises; anything else
 * gets PIPE_BUF bytes. Returns the bytes written, 0 when fd had no room, or
 * -1 with errno. */
static ssize_t write_some(int fd, const char *buf, size_t len, bool direct)
{
  ssize_t n;
  if (direct) {
    n = write(fd, buf, len);
  } else {
    struct stat st;
    bool is_socket = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
    if (is_socket) {
      n = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else {
      size_t room = PIPE_BUF;
      int size, queued;
      if (S_ISFIFO(st.st_mode) && (size = fcntl(fd, F_GETPIPE_SZ)) > 0 &&
          ioctl(fd, FIONREAD, &queued) == 0 && queued >= 0 && size - queued > (int)room)
        room = (size_t)(size - queued);
      n = write(fd, buf, len < room ? len : room);
    }
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return 0;
  return n;
}

/* Writes all of buf to fd. Returns 0 or an errno value: ECANCELED when
 * sup-run is giving up and fd is not writable. Waits in poll() beside the
 * wake pipe, so that a second signal ends the wait for a stalled reader. */
int write_all(int fd, const char *buf, size_t len)
{
  bool direct = never_blocks(fd);
  while (len > 0) {
    if (!direct) {
      struct pollfd pfd[2] = {{.fd = fd, .events = POLLOUT},
                              {.fd = g_wake[0], .events = POLLIN}};
      int ready = poll(pfd, g_wake[0] >= 0 ? 2 : 1, giving_up() ? 0 : -1);
      if (ready < 0 && errno != EINTR)
        return errno;
      if (pfd[1].revents != 0)
        drain_wake_pipe();
      if (pfd[0].revents == 0) {
        if (giving_up())
          return ECANCELED;
        continue;
      }
    }
    ssize_t n = write_some(fd, buf, len, direct);
    if (n < 0)
      return errno;
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* A message of sup-run's own on stderr, written as write_all writes. */


void say(const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (n > 0)
    write_all(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

struct stream_fwd {
  int stream;       /* SUP_STDOUT or SUP_STDERR */
  int fd;           /* sup-run's own descriptor the bytes go to */
  const char *name; /* for messages */
  bool direct;      /* fd never blocks: written without polling */
  int ready_fd;     /* libsup's readiness fd for the stream */
  uint64_t pos;     /* bytes of the stream consumed so far */
  uint64_t lost;    /* bytes skipped over: dropped before they were read */
  int write_error;  /* errno of the write that failed; 0 while forwarding */
  bool abandoned;   /* given up on a stalled reader after a second signal */
  bool ended;       /* final and every byte consumed */
  bool passthrough; /* a "pipe" stream, written out; else only waited for */
  char buf[FORWARD_CHUNK];
  size_t off, len;  /* buf[off, len) still to be written */
};

/* Once a write has failed or been given up, the stream is still read, and
 * discarded, so that backpressure does not hold the command back while it
 * winds down. */
static bool discarding(const struct stream_fwd *f)
{
  return f->write_error != 0 || f->abandoned;
}

/* Refills an empty buffer from the library. Never blocks. */
static void fill(sup_proc *p, struct stream_fwd *f, bool final)
{
  /* A "tee" stream is copied out by libsup itself; what it captured is
   * not to be written twice. */
  if (!f->passthrough) {
    f->ended = final;
    return;
  }
  while (f->off == f->len && !f->ended) {
    uint64_t before = f->pos;
    size_t n = 0;
    if (sup_output_read(p, f->stream, &f->pos, f->buf, sizeof f->buf, &n) < 0)
      n = 0;
    /* With backpressure the library keeps every byte not yet read; a jump
     * means bytes were dropped anyway, and the user must learn that the
     * pass-through is not exact. */
    f->lost += f->pos - before - n;
    if (n == 0) {
      /* Final before reading: a read that gets nothing then proves the
       * stream is drained, as a final result gets no more output. */
      f->ended = final;
      return;
    }
    f->off = 0;
    f->len = discarding(f) ? 0 : n;
  }
}

/* --pty: sup-run's stdin copied to the command's terminal, as typed there;
 * at its end, the terminal's end of input (sup_input_close). sup-run's own
 * terminal keeps its modes: a line reaches the command when Enter is
 * pressed, and Ctrl-C, Ctrl-Z and Ctrl-D act on sup-run. */
struct input_fwd {
  bool active;      /* stdin is still copied */
  bool eof;         /* stdin ended: the end of input is still to be sent */
  int input_fd;     /* the terminal's master, polled for room */
  char buf[FORWARD_CHUNK];
  size_t off, len;  /* buf[off, len) still to be written */
};

/* Writes what is buffered, and the end of input after it, as far as the
 * terminal takes them now. Returns true when waiting for room. */
static bool push_input(sup_proc *p, struct input_fwd *in)
{
  while (in->active && in->off < in->len) {
    size_t n = 0;
    int rc = sup_input_write(p, in->buf + in->off, in->len - in->off, &n);
    if (rc == SUP_EAGAIN)
      return true;
    if (rc < 0) {
      /* The command closed its terminal or ended: its input is over. */
      in->active = false;
      return false;
    }
    in->off += n;
  }
  if (in->active && in->eof) {
    if (sup_input_close(p) == SUP_EAGAIN)
      return true;
    in->active = false;
  }
  return false;
}

/* stdin is readable: reads what is there (an empty buffer only). */
static void pull_input(struct input_fwd *in)
{
  ssize_t n = read(STDIN_FILENO, in->buf, sizeof in->buf);
  if (n > 0) {
    in->off = 0;
    in->len = (size_t)n;
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    /* End of file, or stdin cannot be read (EIO in the background). */
    in->eof = true;
  }
}

/* Forwards both streams until the result is final and both are drained,
 * following the command's stops meanwhile. Returns the first write errno, or
 * 0. Waits only in poll(): for output, for room at a reader, for the result,
 * and for signals. */
int forward_output(sup_proc *p, const bool passthrough[2])
{
  static struct stream_fwd streams[2] = {
      {.stream = SUP_STDOUT, .fd = STDOUT_FILENO, .name = "stdout"},
      {.stream = SUP_STDERR, .fd = STDERR_FILENO, .name = "stderr"},
  };
  int first_error = 0;
  int conts_seen = atomic_load(&g_cont_count);
  int final_fd = sup_fd(p);
  static struct input_fwd input;
  input.active = g_pty;
  input.input_fd = g_pty ? sup_input_fd(p) : -1;
  /* Without libsup's fds (out of descriptors) the loop looks every 10 ms. */
  bool degraded = final_fd < 0;

  for (int i = 0; i < 2; i++) {
    streams[i].passthrough = passthrough[i];
    streams[i].direct = never_blocks(streams[i].fd);
    /* Only a stream written out is watched: a "tee" one's would stay
     * readable, its bytes never consumed here. */
    streams[i].ready_fd = passthrough[i] ? sup_output_fd(p, streams[i].stream) : -1;
    degraded = degraded || (passthrough[i] && streams[i].ready_fd < 0);
  }
  degraded = degraded || (g_pty && input.input_fd < 0);
  /* A stop that came before the handler was there to see it. */
  atomic_store(&g_child_changed, true);

  for (;;) {
    drain_wake_pipe();
    handle_job_control(p, &conts_seen);
    bool final = sup_poll(p, 0) == 1;
    bool give_up = giving_up();

    struct pollfd pfd[5];
    int npfd = 0;
    int out_slot[2] = {-1, -1};
    int stdin_slot = -1;
    pfd[npfd++] = (struct pollfd){.fd = g_wake[0], .events = POLLIN};
    if (!final && final_fd >= 0)
      pfd[npfd++] = (struct pollfd){.fd = final_fd, .events = POLLIN};
    if (final)
      input.active = false;
    if (push_input(p, &input) && input.input_fd >= 0)
      pfd[npfd++] = (struct pollfd){.fd = input.input_fd, .events = POLLOUT};
    else if (input.active && !input.eof && input.off == input.len) {
      stdin_slot = npfd;
      pfd[npfd++] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
    }
    bool all_ended = true;
    for (int i = 0; i < 2; i++) {
      struct stream_fwd *f = &streams[i];
      fill(p, f, final);
      if (f->off < f->len) {
        out_slot[i] = npfd;
        pfd[npfd++] = (struct pollfd){.fd = f->fd, .events = POLLOUT};
      } else if (!f->ended) {
        if (f->ready_fd >= 0)
          pfd[npfd++] = (struct pollfd){.fd = f->ready_fd, .events = POLLIN};
      }
      all_ended = all_ended && f->ended && f->off == f->len;
    }
    if (all_ended)
      break;

    /* Giving up: a reader that has no room now is not waited for. */
    int timeout = give_up && (out_slot[0] >= 0 || out_slot[1] >= 0) ? 0 : -1;
    if (degraded && timeout < 0)
      timeout = 10;
    if (poll(pfd, (nfds_t)npfd, timeout) < 0)
      for (int i = 0; i < npfd; i++)
        pfd[i].revents = 0;
    if (stdin_slot >= 0 && pfd[stdin_slot].revents != 0)
      pull_input(&input);

    for (int i = 0; i < 2; i++) {
      struct stream_fwd *f = &streams[i];
      if (out_slot[i] < 0)
        continue;
      if (pfd[out_slot[i]].revents == 0 && !f->direct) {
        if (give_up) {
          f->abandoned = true;
          f->off = f->len;
        }
        continue;
      }
      ssize_t n = write_some(f->fd, f->buf + f->off, f->len - f->off, f->direct);
      if (n < 0) {
        f->write_error = errno;
        f->off = f->len;
        if (first_error == 0) {
          first_error = f->write_error;
          sup_interrupt(p);
        }
      } else {
        f->off += (size_t)n;
      }
    }
  }
  for (int i = 0; i < 2; i++)
    if (streams[i].lost > 0)
      say("%s: warning: %" PRIu64 " bytes of the command's %s were lost\n",
          g_progname, streams[i].lost, streams[i].name);
  return first_error;
}

/* ---- Result and exit status --------------------------------------------- */
