/* sup_node.c: the Node-API addon over sup's C ABI (include/sup.h).
 *
 * Every wait is a uv_poll on Node's own loop (napi_get_uv_event_loop): the
 * result on sup_fd, live output on sup_output_fd, stdin room on
 * sup_input_fd. No thread is started here and none is parked per child: a
 * readable descriptor wakes the loop, and the JS side then makes sup's
 * non-blocking calls (sup_poll(p, 0), sup_output_read, sup_input_write).
 *
 * Lifetime: a Proc is freed when both its JS object has been collected and
 * every uv handle it initialised has been closed (uv_close's callback), as
 * libuv requires. A watch holds its callback strongly while armed, so a
 * child that is being waited on keeps its object alive; a stopped watch
 * holds nothing, so an abandoned object is collected and its child ended
 * (sup_release aborts a running child and reaps it).
 *
 * Misuse never crashes the host: every method checks its arguments and
 * the handle's state, and throws a TypeError or an Error with a code.
 */
#define NAPI_VERSION 8
#include <node_api.h>
#include <uv.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sup.h"

enum watch { W_FINAL = 0, W_STDOUT = 1, W_STDERR = 2, W_INPUT = 3, W_COUNT = 4 };

/* A watch's uv handle is initialised once, on first use, and closed when
 * the handle is released or collected. */
enum watch_state { WS_UNINIT = 0, WS_STOPPED, WS_ARMED, WS_CLOSING };

typedef struct proc proc;

typedef struct {
  uv_poll_t poll;
  enum watch_state state;
  napi_ref callback; /* strong while armed, NULL otherwise */
  proc *owner;
} watch;

struct proc {
  sup_proc *p;     /* NULL once released */
  napi_env env;
  int pending;     /* the JS object (1) plus every uv handle not yet closed */
  bool collected;
  watch w[W_COUNT];
  uint64_t pos[3];  /* per stream (1, 2): the reader's position */
  uint64_t lost[3]; /* per stream: bytes the reader's position jumped over */
};

/* Per environment (the main thread, each worker): the async resource every
 * callback runs in. */
typedef struct {
  napi_async_context async;
} instance;

/* Where skip() reads the bytes it drops; per thread, for workers. */
static _Thread_local char g_scratch[65536];

#define CHECK(call)                                                        \
  do {                                                                     \
    if ((call) != napi_ok) return throw_status(env, #call);                \
  } while (0)

static napi_value throw_status(napi_env env, const char *what) {
  const napi_extended_error_info *info = NULL;
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) {
    napi_get_last_error_info(env, &info);
    char msg[256];
    snprintf(msg, sizeof msg, "sup addon: %s failed: %s", what,
             info && info->error_message ? info->error_message : "unknown");
    napi_throw_error(env, NULL, msg);
  }
  return NULL;
}

/* Throws an Error whose code is sup's name for rc and whose errno is rc. */
static napi_value throw_code(napi_env env, int rc, const char *detail) {
  napi_value msg, err, num;
  char text[SUP_ERRBUF_SIZE + 128];
  snprintf(text, sizeof text, "%s%s%s", detail ? detail : "", detail && *detail ? ": " : "",
           sup_strerror(rc));
  napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &msg);
  napi_create_error(env, NULL, msg, &err);
  napi_create_int32(env, rc, &num);
  napi_set_named_property(env, err, "errno", num);
  napi_throw(env, err);
  return NULL;
}

static void free_if_done(proc *pr) {
  if (pr->pending == 0) free(pr);
}

static void on_closed(uv_handle_t *h) {
  watch *w = (watch *)h->data;
  proc *pr = w->owner;
  w->state = WS_UNINIT;
  pr->pending--;
  free_if_done(pr);
}

static void disarm(proc *pr, watch *w) {
  if (w->state == WS_ARMED) {
    uv_poll_stop(&w->poll);
    w->state = WS_STOPPED;
  }
  if (w->callback) {
    napi_delete_reference(pr->env, w->callback);
    w->callback = NULL;
  }
}

/* Stops and closes every watch: after this no descriptor of the handle is
 * in Node's epoll set (uv_poll_stop takes it out at once), so sup_release
 * may close them. */
static void close_watches(proc *pr, bool in_gc) {
  for (int i = 0; i < W_COUNT; i++) {
    watch *w = &pr->w[i];
    if (!in_gc) disarm(pr, w);
    else if (w->state == WS_ARMED) uv_poll_stop(&w->poll);
    if (w->state == WS_STOPPED || w->state == WS_ARMED) {
      w->state = WS_CLOSING;
      uv_close((uv_handle_t *)&w->poll, on_closed);
    }
  }
}

static void release(proc *pr, bool in_gc) {
  close_watches(pr, in_gc);
  if (pr->p) {
    sup_release(pr->p);
    pr->p = NULL;
  }
}

static void finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  proc *pr = data;
  pr->collected = true;
  /* Armed watches hold their callbacks strongly, so a collected object has
   * none armed; its references are gone with it. */
  for (int i = 0; i < W_COUNT; i++) pr->w[i].callback = NULL;
  release(pr, true);
  pr->pending--;
  free_if_done(pr);
}

/* Calls the watch's JS callback with (status), inside the addon's async
 * context so that promise reactions run after it, as after any I/O
 * callback; an exception becomes the process's uncaught exception. */
static void call_back(proc *pr, watch *w, int status) {
  napi_env env = pr->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value fn, recv, arg, ret;
  if (w->callback && napi_get_reference_value(env, w->callback, &fn) == napi_ok && fn) {
    napi_get_global(env, &recv); /* make_callback needs an object */
    napi_create_int32(env, status, &arg);
    instance *inst = NULL;
    napi_get_instance_data(env, (void **)&inst);
    if (napi_make_callback(env, inst ? inst->async : NULL, recv, fn, 1, &arg, &ret) != napi_ok) {
      napi_value exc;
      bool pending = false;
      napi_is_exception_pending(env, &pending);
      if (pending && napi_get_and_clear_last_exception(env, &exc) == napi_ok) napi_fatal_exception(env, exc);
    }
  }
  napi_close_handle_scope(env, scope);
}

static void on_poll(uv_poll_t *h, int status, int events) {
  (void)events;
  watch *w = (watch *)h->data;
  proc *pr = w->owner;
  if (w->state != WS_ARMED || pr->p == NULL) return;
  if (w == &pr->w[W_FINAL] && status == 0) {
    int rc = sup_poll(pr->p, 0);
    if (rc == 0) return; /* a wake-up without the result: keep waiting */
    status = rc == 1 ? 0 : rc;
  }
  if (w == &pr->w[W_FINAL] || status < 0) {
    /* One-shot: disarm before calling, so the callback may release. */
    napi_ref cb = w->callback;
    w->callback = NULL;
    uv_poll_stop(&w->poll);
    w->state = WS_STOPPED;
    watch tmp = *w;
    tmp.callback = cb;
    call_back(pr, &tmp, status);
    if (cb) napi_delete_reference(pr->env, cb);
    return;
  }
  call_back(pr, w, 0);
}

/* ---- argument helpers -------------------------------------------------- */

static proc *this_proc(napi_env env, napi_callback_info info, size_t *argc, napi_value *argv, bool live) {
  napi_value self;
  void *data = NULL;
  if (napi_get_cb_info(env, info, argc, argv, &self, NULL) != napi_ok) return throw_status(env, "napi_get_cb_info"), NULL;
  if (napi_unwrap(env, self, &data) != napi_ok || data == NULL) {
    napi_throw_type_error(env, NULL, "sup: not a sup process handle");
    return NULL;
  }
  proc *pr = data;
  if (live && pr->p == NULL) {
    napi_throw_error(env, "ERR_SUP_RELEASED", "sup: the process handle was released");
    return NULL;
  }
  return pr;
}

static bool get_int(napi_env env, napi_value v, const char *name, int32_t *out) {
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_number || napi_get_value_int32(env, v, out) != napi_ok) {
    char msg[128];
    snprintf(msg, sizeof msg, "sup: %s must be a number", name);
    napi_throw_type_error(env, NULL, msg);
    return false;
  }
  return true;
}

static bool get_stream(napi_env env, napi_value v, int *stream) {
  int32_t s;
  if (!get_int(env, v, "stream", &s)) return false;
  if (s != SUP_STDOUT && s != SUP_STDERR) {
    napi_throw_range_error(env, NULL, "sup: stream must be 1 (stdout) or 2 (stderr)");
    return false;
  }
  *stream = s;
  return true;
}

static napi_value int_value(napi_env env, int64_t v) {
  napi_value out;
  napi_create_int64(env, v, &out);
  return out;
}

static napi_value undefined(napi_env env) {
  napi_value out;
  napi_get_undefined(env, &out);
  return out;
}

/* ---- Proc ------------------------------------------------------------- */

/* new Proc(specJson): sup_spawn_v2; a failure throws an Error with errno
 * (sup's code), part (enum sup_part) and the detail as its message. */
static napi_value proc_new(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], self;
  CHECK(napi_get_cb_info(env, info, &argc, argv, &self, NULL));
  napi_valuetype t = napi_undefined;
  if (argc < 1 || napi_typeof(env, argv[0], &t) != napi_ok || t != napi_string) {
    napi_throw_type_error(env, NULL, "sup: the spec must be a JSON string");
    return NULL;
  }
  size_t len = 0;
  CHECK(napi_get_value_string_utf8(env, argv[0], NULL, 0, &len));
  char *spec = malloc(len + 1);
  if (spec == NULL) return throw_code(env, SUP_ENOMEM, "spawn");
  napi_get_value_string_utf8(env, argv[0], spec, len + 1, &len);
  char errbuf[SUP_ERRBUF_SIZE];
  int part = 0;
  sup_proc *p = NULL;
  int rc = sup_spawn_v2(spec, &p, errbuf, sizeof errbuf, &part);
  free(spec);
  if (rc < 0) {
    throw_code(env, rc, errbuf);
    napi_value exc, partv;
    if (napi_get_and_clear_last_exception(env, &exc) == napi_ok) {
      napi_create_int32(env, part, &partv);
      napi_set_named_property(env, exc, "part", partv);
      napi_throw(env, exc);
    }
    return NULL;
  }
  proc *pr = calloc(1, sizeof *pr);
  if (pr == NULL) {
    sup_release(p);
    return throw_code(env, SUP_ENOMEM, "spawn");
  }
  pr->p = p;
  pr->env = env;
  pr->pending = 1;
  for (int i = 0; i < W_COUNT; i++) pr->w[i].owner = pr;
  if (napi_wrap(env, self, pr, finalize, NULL, NULL) != napi_ok) {
    sup_release(p);
    free(pr);
    return throw_status(env, "napi_wrap");
  }
  return self;
}

static int watch_fd(proc *pr, int which, int stream) {
  switch (which) {
    case W_FINAL: return sup_fd(pr->p);
    case W_STDOUT:
    case W_STDERR: return sup_output_fd(pr->p, stream);
    default: return sup_input_fd(pr->p);
  }
}

/* Arms (callback given) or disarms (null) one watch. */
static napi_value set_watch(napi_env env, proc *pr, int which, int stream, napi_value cb) {
  watch *w = &pr->w[which];
  napi_valuetype t;
  CHECK(napi_typeof(env, cb, &t));
  if (t == napi_null || t == napi_undefined) {
    disarm(pr, w);
    return undefined(env);
  }
  if (t != napi_function) {
    napi_throw_type_error(env, NULL, "sup: the callback must be a function or null");
    return NULL;
  }
  if (w->state == WS_UNINIT) {
    int fd = watch_fd(pr, which, stream);
    if (fd < 0) return throw_code(env, fd, "watch");
    uv_loop_t *loop = NULL;
    CHECK(napi_get_uv_event_loop(env, &loop));
    int rc = uv_poll_init(loop, &w->poll, fd);
    if (rc < 0) {
      char msg[128];
      snprintf(msg, sizeof msg, "sup: uv_poll_init: %s", uv_strerror(rc));
      napi_throw_error(env, NULL, msg);
      return NULL;
    }
    w->poll.data = w;
    w->state = WS_STOPPED;
    pr->pending++;
  }
  if (w->callback) napi_delete_reference(env, w->callback);
  w->callback = NULL;
  CHECK(napi_create_reference(env, cb, 1, &w->callback));
  if (w->state != WS_ARMED) {
    int rc = uv_poll_start(&w->poll, which == W_INPUT ? UV_WRITABLE : UV_READABLE, on_poll);
    if (rc < 0) {
      disarm(pr, w);
      char msg[128];
      snprintf(msg, sizeof msg, "sup: uv_poll_start: %s", uv_strerror(rc));
      napi_throw_error(env, NULL, msg);
      return NULL;
    }
    w->state = WS_ARMED;
  }
  return undefined(env);
}

/* watchFinal(cb | null): cb(status) once the result is final (status 0) or
 * the wait failed (status < 0). */
static napi_value proc_watch_final(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  proc *pr = this_proc(env, info, &argc, argv, true);
  if (!pr) return NULL;
  if (argc < 1) argv[0] = undefined(env);
  return set_watch(env, pr, W_FINAL, 0, argv[0]);
}

/* watchOutput(stream, cb | null): cb(status) while the stream has bytes
 * beyond the reader's position, or the result is final. */
static napi_value proc_watch_output(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  proc *pr = this_proc(env, info, &argc, argv, true);
  int stream;
  if (!pr) return NULL;
  if (argc < 2) {
    napi_throw_type_error(env, NULL, "sup: watchOutput(stream, callback)");
    return NULL;
  }
  if (!get_stream(env, argv[0], &stream)) return NULL;
  return set_watch(env, pr, stream, stream, argv[1]);
}

/* watchInput(cb | null): cb(status) while stdin can take bytes. */
static napi_value proc_watch_input(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  proc *pr = this_proc(env, info, &argc, argv, true);
  if (!pr) return NULL;
  if (argc < 1) argv[0] = undefined(env);
  return set_watch(env, pr, W_INPUT, 0, argv[0]);
}

/* read(stream, max): the next bytes at the reader's position, as a new
 * Buffer (empty: nothing new yet, or the end once final). */
static napi_value proc_read(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  proc *pr = this_proc(env, info, &argc, argv, true);
  int stream;
  int32_t max = sizeof g_scratch;
  if (!pr) return NULL;
  if (argc < 1 || !get_stream(env, argv[0], &stream)) {
    if (argc < 1) napi_throw_type_error(env, NULL, "sup: read(stream, max)");
    return NULL;
  }
  if (argc >= 2 && !get_int(env, argv[1], "max", &max)) return NULL;
  if (max < 1 || max > (1 << 24)) {
    napi_throw_range_error(env, NULL, "sup: max must be 1 .. 16 MiB");
    return NULL;
  }
  /* Into the scratch buffer first, then a Buffer of the size read: a pipe
   * often holds a few KiB, and a 64 KiB Buffer per read would cost more
   * than the copy. */
  char *data = g_scratch;
  if ((size_t)max > sizeof g_scratch && (data = malloc((size_t)max)) == NULL) return throw_code(env, SUP_ENOMEM, "read");
  uint64_t before = pr->pos[stream];
  size_t n = 0;
  int rc = sup_output_read(pr->p, stream, &pr->pos[stream], data, (size_t)max, &n);
  napi_value out = NULL;
  if (rc == 0 && pr->pos[stream] - before > n) pr->lost[stream] += pr->pos[stream] - before - n;
  if (rc == 0 && napi_create_buffer_copy(env, n, data, NULL, &out) != napi_ok) out = NULL;
  if (data != g_scratch) free(data);
  if (rc < 0) return throw_code(env, rc, "read");
  if (out == NULL) return throw_status(env, "napi_create_buffer_copy");
  return out;
}

/* skip(stream): reads and drops everything there is now (a stream nobody
 * reads must not hold a backpressured child back). Returns the count. */
static napi_value proc_skip(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  proc *pr = this_proc(env, info, &argc, argv, true);
  int stream;
  if (!pr) return NULL;
  if (argc < 1 || !get_stream(env, argv[0], &stream)) {
    if (argc < 1) napi_throw_type_error(env, NULL, "sup: skip(stream)");
    return NULL;
  }
  int64_t total = 0;
  for (;;) {
    size_t n = 0;
    int rc = sup_output_read(pr->p, stream, &pr->pos[stream], g_scratch, sizeof g_scratch, &n);
    if (rc < 0) return throw_code(env, rc, "skip");
    if (n == 0) break;
    total += (int64_t)n;
  }
  return int_value(env, total);
}

/* seek(stream, pos): the reader starts again at pos (bytes sup kept are
 * read again; dropped ones count as lost). Resets the lost count. */
static napi_value proc_seek(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  proc *pr = this_proc(env, info, &argc, argv, true);
  int stream;
  int64_t pos;
  if (!pr) return NULL;
  if (argc < 2 || !get_stream(env, argv[0], &stream)) {
    if (argc < 2) napi_throw_type_error(env, NULL, "sup: seek(stream, pos)");
    return NULL;
  }
  if (napi_get_value_int64(env, argv[1], &pos) != napi_ok || pos < 0) {
    napi_throw_range_error(env, NULL, "sup: pos must be a non-negative integer");
    return NULL;
  }
  pr->pos[stream] = (uint64_t)pos;
  pr->lost[stream] = 0;
  return undefined(env);
}

/* lost(stream): bytes the reader's position jumped over since the last
 * seek (output beyond max_output_bytes that sup did not keep). */
static napi_value proc_lost(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  proc *pr = this_proc(env, info, &argc, argv, false);
  int stream;
  if (!pr) return NULL;
  if (argc < 1 || !get_stream(env, argv[0], &stream)) {
    if (argc < 1) napi_throw_type_error(env, NULL, "sup: lost(stream)");
    return NULL;
  }
  return int_value(env, (int64_t)pr->lost[stream]);
}

/* write(buffer): sup_input_write. Returns the count written (>= 0), or
 * sup's code (< 0: EAGAIN when full, EPIPE, EBADF). */
static napi_value proc_write(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  proc *pr = this_proc(env, info, &argc, argv, true);
  bool is_buf = false;
  if (!pr) return NULL;
  if (argc < 1 || napi_is_buffer(env, argv[0], &is_buf) != napi_ok || !is_buf) {
    napi_throw_type_error(env, NULL, "sup: write(buffer)");
    return NULL;
  }
  void *data;
  size_t len, written = 0;
  CHECK(napi_get_buffer_info(env, argv[0], &data, &len));
  int rc = sup_input_write(pr->p, data, len, &written);
  return int_value(env, rc < 0 ? rc : (int64_t)written);
}

/* A method that calls one sup function on the handle and returns its code. */
#define SIMPLE(name, call)                                                 \
  static napi_value name(napi_env env, napi_callback_info info) {           \
    size_t argc = 0;                                                        \
    proc *pr = this_proc(env, info, &argc, NULL, true);                     \
    if (!pr) return NULL;                                                   \
    return int_value(env, (call));                                          \
  }

static int close_input(proc *pr) {
  /* Out of Node's epoll set before sup closes the descriptor. */
  watch *w = &pr->w[W_INPUT];
  disarm(pr, w);
  int rc = sup_input_close(pr->p);
  if (rc == 0 && w->state == WS_STOPPED) {
    w->state = WS_CLOSING;
    uv_close((uv_handle_t *)&w->poll, on_closed);
  }
  return rc;
}

SIMPLE(proc_pid, sup_pid(pr->p))
SIMPLE(proc_interrupt, sup_interrupt(pr->p))
SIMPLE(proc_abort, sup_abort(pr->p))
SIMPLE(proc_expire, sup_expire(pr->p))
/* Blocks up to ~40 ms the first time it sees a reader (sup_input_wanted
 * looks twice before it answers yes): a call, not a watch. */
SIMPLE(proc_input_wanted, sup_input_wanted(pr->p))
SIMPLE(proc_close_input, close_input(pr))
SIMPLE(proc_poll, sup_poll(pr->p, 0))

static napi_value proc_signal(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t sig;
  proc *pr = this_proc(env, info, &argc, argv, true);
  if (!pr) return NULL;
  if (argc < 1 || !get_int(env, argv[0], "signal", &sig)) {
    if (argc < 1) napi_throw_type_error(env, NULL, "sup: signal(number)");
    return NULL;
  }
  return int_value(env, sup_signal(pr->p, sig));
}

static napi_value proc_resize(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t rows, cols;
  proc *pr = this_proc(env, info, &argc, argv, true);
  if (!pr) return NULL;
  if (argc < 2) {
    napi_throw_type_error(env, NULL, "sup: resize(rows, cols)");
    return NULL;
  }
  if (!get_int(env, argv[0], "rows", &rows) || !get_int(env, argv[1], "cols", &cols)) return NULL;
  return int_value(env, sup_pty_resize(pr->p, rows, cols));
}

/* result(): the final result's JSON text, or null while running. */
static napi_value proc_result(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  proc *pr = this_proc(env, info, &argc, NULL, true);
  if (!pr) return NULL;
  const char *json = sup_result(pr->p);
  napi_value out;
  if (json == NULL) {
    CHECK(napi_get_null(env, &out));
    return out;
  }
  CHECK(napi_create_string_utf8(env, json, NAPI_AUTO_LENGTH, &out));
  return out;
}

static void set_num(napi_env env, napi_value obj, const char *key, double v) {
  napi_value n;
  napi_create_double(env, v, &n);
  napi_set_named_property(env, obj, key, n);
}

static void set_maybe(napi_env env, napi_value obj, const char *key, int64_t v) {
  napi_value n;
  if (v < 0) napi_get_null(env, &n);
  else napi_create_int64(env, v, &n);
  napi_set_named_property(env, obj, key, n);
}

/* summary(): the final result's typed fields (no JSON), or null while
 * running. Codes sup has no value for (ENODATA) become null. */
static napi_value proc_summary(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  proc *pr = this_proc(env, info, &argc, NULL, true);
  if (!pr) return NULL;
  napi_value out;
  int outcome = sup_result_outcome(pr->p);
  if (outcome < 0) {
    CHECK(napi_get_null(env, &out));
    return out;
  }
  CHECK(napi_create_object(env, &out));
  set_num(env, out, "outcome", outcome);
  set_maybe(env, out, "exitCode", sup_result_exit_code(pr->p));
  set_maybe(env, out, "termSignal", sup_result_term_signal(pr->p));
  set_num(env, out, "phase", sup_result_phase(pr->p));
  set_num(env, out, "forcedKill", sup_result_forced_kill(pr->p));
  set_num(env, out, "statusLost", sup_result_status_lost(pr->p));
  set_num(env, out, "durationMs", sup_result_duration_ms(pr->p));
  set_num(env, out, "stdoutOmitted", (double)sup_result_omitted_bytes(pr->p, SUP_STDOUT));
  set_num(env, out, "stderrOmitted", (double)sup_result_omitted_bytes(pr->p, SUP_STDERR));
  set_num(env, out, "stdoutBytes", (double)sup_output_total(pr->p, SUP_STDOUT));
  set_num(env, out, "stderrBytes", (double)sup_output_total(pr->p, SUP_STDERR));
  set_num(env, out, "hostDeath", sup_result_host_death(pr->p));
  return out;
}

/* output(stream): a copy of the captured bytes, or null while running. */
static napi_value proc_output(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int stream;
  proc *pr = this_proc(env, info, &argc, argv, true);
  if (!pr) return NULL;
  if (argc < 1 || !get_stream(env, argv[0], &stream)) {
    if (argc < 1) napi_throw_type_error(env, NULL, "sup: output(stream)");
    return NULL;
  }
  size_t len = 0;
  const char *bytes = sup_result_output(pr->p, stream, &len);
  napi_value out;
  if (bytes == NULL) {
    CHECK(napi_get_null(env, &out));
    return out;
  }
  CHECK(napi_create_buffer_copy(env, len, bytes, NULL, &out));
  return out;
}

/* release(): closes the watches and frees sup's handle (ending a running
 * child). Idempotent. */
static napi_value proc_release(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  proc *pr = this_proc(env, info, &argc, NULL, false);
  if (!pr) return NULL;
  release(pr, false);
  return undefined(env);
}

static napi_value proc_released(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  proc *pr = this_proc(env, info, &argc, NULL, false);
  napi_value out;
  if (!pr) return NULL;
  napi_get_boolean(env, pr->p == NULL, &out);
  return out;
}

/* ---- module functions ------------------------------------------------- */

static napi_value m_strerror(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  int32_t code;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1 || !get_int(env, argv[0], "code", &code)) {
    if (argc < 1) napi_throw_type_error(env, NULL, "sup: strerror(code)");
    return NULL;
  }
  CHECK(napi_create_string_utf8(env, sup_strerror(code), NAPI_AUTO_LENGTH, &out));
  return out;
}

static napi_value m_signal_parse(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  char text[64];
  size_t len;
  napi_valuetype t;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1 || napi_typeof(env, argv[0], &t) != napi_ok || t != napi_string) {
    napi_throw_type_error(env, NULL, "sup: signalParse(name)");
    return NULL;
  }
  CHECK(napi_get_value_string_utf8(env, argv[0], text, sizeof text, &len));
  return int_value(env, len >= sizeof text - 1 ? SUP_EINVAL : sup_signal_parse(text));
}

static napi_value m_signal_name(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  int32_t sig;
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1 || !get_int(env, argv[0], "signal", &sig)) {
    if (argc < 1) napi_throw_type_error(env, NULL, "sup: signalName(number)");
    return NULL;
  }
  const char *name = sup_signal_name(sig);
  if (name == NULL) CHECK(napi_get_null(env, &out));
  else CHECK(napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &out));
  return out;
}

static napi_value m_version(napi_env env, napi_callback_info info) {
  (void)info;
  return int_value(env, sup_version());
}

/* The libuv that this addon, and the libsup compiled into it, run on:
 * Node's own, whose uv_* symbols the executable exports. */
static napi_value m_uv_version(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  CHECK(napi_create_string_utf8(env, uv_version_string(), NAPI_AUTO_LENGTH, &out));
  return out;
}

static void free_instance(napi_env env, void *data, void *hint) {
  (void)hint;
  instance *inst = data;
  napi_async_destroy(env, inst->async);
  free(inst);
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_property_descriptor methods[] = {
      {"watchFinal", NULL, proc_watch_final, NULL, NULL, NULL, napi_default, NULL},
      {"watchOutput", NULL, proc_watch_output, NULL, NULL, NULL, napi_default, NULL},
      {"watchInput", NULL, proc_watch_input, NULL, NULL, NULL, napi_default, NULL},
      {"read", NULL, proc_read, NULL, NULL, NULL, napi_default, NULL},
      {"skip", NULL, proc_skip, NULL, NULL, NULL, napi_default, NULL},
      {"seek", NULL, proc_seek, NULL, NULL, NULL, napi_default, NULL},
      {"lost", NULL, proc_lost, NULL, NULL, NULL, napi_default, NULL},
      {"write", NULL, proc_write, NULL, NULL, NULL, napi_default, NULL},
      {"closeInput", NULL, proc_close_input, NULL, NULL, NULL, napi_default, NULL},
      {"pid", NULL, proc_pid, NULL, NULL, NULL, napi_default, NULL},
      {"interrupt", NULL, proc_interrupt, NULL, NULL, NULL, napi_default, NULL},
      {"abort", NULL, proc_abort, NULL, NULL, NULL, napi_default, NULL},
      {"expire", NULL, proc_expire, NULL, NULL, NULL, napi_default, NULL},
      {"inputWanted", NULL, proc_input_wanted, NULL, NULL, NULL, napi_default, NULL},
      {"signal", NULL, proc_signal, NULL, NULL, NULL, napi_default, NULL},
      {"resize", NULL, proc_resize, NULL, NULL, NULL, napi_default, NULL},
      {"poll", NULL, proc_poll, NULL, NULL, NULL, napi_default, NULL},
      {"result", NULL, proc_result, NULL, NULL, NULL, napi_default, NULL},
      {"summary", NULL, proc_summary, NULL, NULL, NULL, napi_default, NULL},
      {"output", NULL, proc_output, NULL, NULL, NULL, napi_default, NULL},
      {"release", NULL, proc_release, NULL, NULL, NULL, napi_default, NULL},
      {"released", NULL, proc_released, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_value cls, resource, name;
  if (napi_define_class(env, "Proc", NAPI_AUTO_LENGTH, proc_new, NULL, sizeof methods / sizeof methods[0], methods,
                        &cls) != napi_ok)
    return NULL;
  napi_create_object(env, &resource);
  napi_create_string_utf8(env, "sup", NAPI_AUTO_LENGTH, &name);
  instance *inst = calloc(1, sizeof *inst);
  if (inst == NULL || napi_async_init(env, resource, name, &inst->async) != napi_ok ||
      napi_set_instance_data(env, inst, free_instance, NULL) != napi_ok) {
    free(inst);
    napi_throw_error(env, NULL, "sup addon: cannot set up its instance data");
    return NULL;
  }
  napi_property_descriptor fns[] = {
      {"Proc", NULL, NULL, NULL, NULL, cls, napi_default, NULL},
      {"strerror", NULL, m_strerror, NULL, NULL, NULL, napi_default, NULL},
      {"signalParse", NULL, m_signal_parse, NULL, NULL, NULL, napi_default, NULL},
      {"signalName", NULL, m_signal_name, NULL, NULL, NULL, napi_default, NULL},
      {"version", NULL, m_version, NULL, NULL, NULL, napi_default, NULL},
      {"uvVersion", NULL, m_uv_version, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof fns / sizeof fns[0], fns);
  return exports;
}
