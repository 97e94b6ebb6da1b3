// sup for Node: run child processes under supervision (include/sup.h), in
// execa's and child_process's terms. Every wait is a uv_poll on Node's own
// loop (src/sup_node.c): no thread per child, none per stream.
'use strict';
const path = require('node:path');
const os = require('node:os');
const { Readable, Writable } = require('node:stream');
const { StringDecoder } = require('node:string_decoder');
const { fileURLToPath } = require('node:url');

function loadAddon() {
  const file = path.join(__dirname, 'build', 'Release', 'sup.node');
  try {
    return require(file);
  } catch (err) {
    const e = new Error(`sup: the native addon ${file} could not be loaded (${err.message}); ` +
      'it is built when the package is installed: run `npm rebuild sup` and read its output');
    e.cause = err;
    throw e;
  }
}
const native = loadAddon();

// ---- codes and names ---------------------------------------------------

const SUP_CODES = {
  [-1]: 'EPERM', [-2]: 'ENOENT', [-3]: 'ESRCH', [-7]: 'E2BIG', [-8]: 'ENOEXEC', [-9]: 'EBADF',
  [-10]: 'ECHILD', [-11]: 'EAGAIN', [-12]: 'ENOMEM', [-13]: 'EACCES', [-16]: 'EBUSY',
  [-20]: 'ENOTDIR', [-21]: 'EISDIR', [-22]: 'EINVAL', [-24]: 'EMFILE', [-28]: 'ENOSPC',
  [-32]: 'EPIPE', [-38]: 'ENOSYS', [-61]: 'ENODATA', [-95]: 'ENOTSUP', [-108]: 'ESHUTDOWN',
  [-125]: 'ECANCELED', [-4096]: 'EINTERNAL',
};
function codeName(rc) {
  if (SUP_CODES[rc]) return SUP_CODES[rc];
  for (const [name, n] of Object.entries(os.constants.errno)) if (n === -rc) return name;
  return `E${-rc}`;
}
const EAGAIN = -11;
const EPIPE = -32;
const ESRCH = -3;
const ENOTSUP = -95;
const OUTCOMES = [undefined, 'exited', 'signaled', 'idle_timeout', 'max_runtime', 'interrupted', 'aborted'];
const PHASES = [undefined, 'first_output', 'idle', 'input'];
const HOST_DEATH = [undefined, 'tree', 'main_process'];
const EPERM = -1;
const PARTS = [undefined, 'spec', 'exec', 'cwd', 'system'];
const STDOUT = 1;
const STDERR = 2;

function codeError(rc, message) {
  const err = new Error(`${message}: ${native.strerror(rc)}`);
  err.code = codeName(rc);
  err.errno = rc;
  return err;
}

function released() {
  const err = new Error('sup: the process has ended and its handle was released');
  err.code = 'ERR_SUP_RELEASED';
  return err;
}

// ---- options -------------------------------------------------------------

function typeError(key, what) {
  const err = new TypeError(`sup: option ${key}: ${what}`);
  err.code = 'ERR_INVALID_ARG_TYPE';
  return err;
}
const check = {
  ms(key, v) {
    if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v)) throw typeError(key, `must be a non-negative number of milliseconds, not ${String(v)}`);
    return Math.ceil(v);
  },
  bytes(key, v) {
    if (!Number.isSafeInteger(v) || v < 0) throw typeError(key, `must be a non-negative integer number of bytes, not ${String(v)}`);
    return v;
  },
  bool(key, v) {
    if (typeof v !== 'boolean') throw typeError(key, `must be true or false, not ${String(v)}`);
    return v;
  },
  string(key, v) {
    if (typeof v !== 'string') throw typeError(key, `must be a string, not ${typeof v}`);
    return v;
  },
  oneOf(...values) {
    return (key, v) => {
      if (!values.includes(v)) throw typeError(key, `must be ${values.map((x) => `'${x}'`).join(', ')}; not ${String(v)}`);
      return v;
    };
  },
  // maxOutput: Infinity keeps every byte (the spec's null).
  bytesOrInfinity(key, v) {
    if (v === Infinity) return null;
    if (!Number.isSafeInteger(v) || v < 0) throw typeError(key, `must be a non-negative integer number of bytes or Infinity, not ${String(v)}`);
    return v;
  },
  positive(key, v) {
    if (!Number.isSafeInteger(v) || v < 1) throw typeError(key, `must be a positive integer, not ${String(v)}`);
    return v;
  },
  // A user or group: a name or a numeric id.
  id(key, v) {
    if (typeof v === 'string' && v !== '') return v;
    if (Number.isSafeInteger(v) && v >= 0) return v;
    throw typeError(key, `must be a name or a non-negative integer id, not ${String(v)}`);
  },
  ids(key, v) {
    if (!Array.isArray(v)) throw typeError(key, 'must be an array of group names or ids');
    return v.map((x, i) => check.id(`${key}[${i}]`, x));
  },
  signals(key, v) {
    if (!Array.isArray(v)) throw typeError(key, 'must be an array of signal names or numbers');
    return v.map((x, i) => check.signal(`${key}[${i}]`, x));
  },
  // An object whose keys are the JS names of the spec's keys: [JS, spec, check].
  object(fields) {
    return (key, v) => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) throw typeError(key, 'must be an object');
      const out = {};
      for (const k of Object.keys(v)) {
        const f = fields.find((x) => x[0] === k);
        if (!f) throw typeError(`${key}.${k}`, `unknown key (${fields.map((x) => x[0]).join(', ')})`);
        if (v[k] !== undefined) out[f[1]] = f[2](`${key}.${k}`, v[k]);
      }
      return out;
    };
  },
  paths(key, v) {
    if (!Array.isArray(v)) throw typeError(key, 'must be an array of paths');
    return v.map((x, i) => (x instanceof URL ? fileURLToPath(x) : check.string(`${key}[${i}]`, x)));
  },
  pathsOrNull(key, v) {
    return v === null ? null : check.paths(key, v);
  },
  signal(key, v) {
    if ((typeof v !== 'string' && typeof v !== 'number') || native.signalParse(String(v)) < 0) {
      throw typeError(key, `must be a signal name ('SIGTERM', 'INT') or number, not ${String(v)}`);
    }
    return v;
  },
};

// Options that are one spec key each: [option, spec key, check]. A key the
// library gains is one line here (and one in index.d.ts).
const SIMPLE_OPTIONS = [
  ['idleTimeout', 'idle_timeout_ms', check.ms],
  ['firstOutputTimeout', 'first_output_timeout_ms', check.ms],
  ['timeout', 'max_runtime_ms', check.ms],
  ['grace', 'grace_ms', check.ms],
  ['killSignal', 'interrupt_signal', check.signal],
  ['onTimeout', 'on_timeout', check.oneOf('interrupt', 'kill')],
  ['maxOutput', 'max_output_bytes', check.bytesOrInfinity],
  ['inputWaitTimeout', 'input_wait_timeout_ms', check.ms],
  ['contain', 'contain', check.oneOf('group', 'cgroup', 'auto')],
  ['cgroupParent', 'cgroup_parent', check.string],
  ['ttyForeground', 'tty_foreground', check.bool],
  ['keepIgnoredSignals', 'keep_ignored_signals', check.bool],
  ['resetSignals', 'reset_signals', check.signals],
  ['requireSentinel', 'require_sentinel', check.bool],
  ['limits', 'limits', check.object([
    ['memoryBytes', 'memory_bytes', check.positive],
    ['cpuSeconds', 'cpu_seconds', check.positive],
    ['processes', 'processes', check.positive],
    ['fileBytes', 'file_bytes', check.positive],
    ['openFiles', 'open_files', check.positive],
    ['coreDump', 'core_dump', check.bool],
  ])],
  ['sandbox', 'sandbox', check.object([
    ['write', 'write', check.paths],
    ['read', 'read', check.pathsOrNull],
    ['exec', 'exec', check.pathsOrNull],
    ['network', 'network', check.bool],
    ['strict', 'strict', check.bool],
    ['tmp', 'tmp', check.bool],
  ])],
  ['user', 'user', check.id],
  ['group', 'group', check.id],
  ['groups', 'groups', check.ids],
];
// Options this shim reads itself.
const SHIM_OPTIONS = ['cwd', 'env', 'extendEnv', 'input', 'stdin', 'stdout', 'stderr', 'merge', 'pty',
  'signal', 'encoding', 'reject', 'stripFinalNewline'];
const KNOWN = new Set([...SIMPLE_OPTIONS.map((o) => o[0]), ...SHIM_OPTIONS]);
const ROUTES = { pipe: 'pipe', tee: 'tee', inherit: 'inherit', ignore: 'null' };
// Backpressure for a live stream: sup holds back a stream whose reader is
// this far behind; a plain pipe's reader then reads the pipe itself.
const BACKPRESSURE_BYTES = 256 * 1024;
// Up to this many kept bytes, the result's JSON text is taken at once.
const RAW_EAGER_BYTES = 256 * 1024;

// A descriptor for stdin, stdout or stderr: a number, or a stream (or any
// object) with a numeric fd, as child_process's stdio takes them; the child
// gets a copy of it ({"fd": N}). undefined when v is none of those.
function stdioFd(key, v) {
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 0 || v > 0x7fffffff) throw typeError(key, `must be a file descriptor (a non-negative integer), not ${String(v)}`);
    return v;
  }
  if (v === null || typeof v !== 'object' || !('fd' in v)) return undefined;
  if (typeof v.fd === 'number' && Number.isInteger(v.fd) && v.fd >= 0) return v.fd;
  if (v.fd === null || v.fd === undefined) throw typeError(key, 'the stream has no file descriptor yet (pass it after its \'open\' event)');
  throw typeError(key, `fd must be a non-negative integer, not ${String(v.fd)}`);
}

function isReadable(v) {
  return v !== null && typeof v === 'object' && typeof v.pipe === 'function' && typeof v.on === 'function';
}

// The spec for file, args and options, and what the shim itself keeps.
function buildSpec(file, args, options, live) {
  if (typeof file !== 'string' && !(file instanceof URL)) throw typeError('file', `must be a string, not ${typeof file}`);
  if (file instanceof URL) file = fileURLToPath(file);
  if (file === '') throw typeError('file', 'must not be empty');
  if (!Array.isArray(args)) throw typeError('args', 'must be an array of strings');
  for (const [i, a] of args.entries()) if (typeof a !== 'string') throw typeError(`args[${i}]`, `must be a string, not ${typeof a}`);
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw typeError('options', 'must be an object');
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw typeError(key, 'unknown option (this libsup supports: ' + [...KNOWN].join(', ') + ')');
  }
  const o = options;
  const spec = { argv: [file, ...args] };
  for (const [name, key, fn] of SIMPLE_OPTIONS) if (o[name] !== undefined) spec[key] = fn(name, o[name]);

  if (o.cwd !== undefined) {
    if (o.cwd instanceof URL) spec.cwd = fileURLToPath(o.cwd);
    else spec.cwd = check.string('cwd', o.cwd);
  }
  const extendEnv = o.extendEnv === undefined ? true : check.bool('extendEnv', o.extendEnv);
  if (o.env !== undefined || !extendEnv) {
    if (o.env !== undefined && (o.env === null || typeof o.env !== 'object')) throw typeError('env', 'must be an object of strings');
    const env = {};
    for (const [k, v] of Object.entries(o.env || {})) {
      if (v === undefined) continue;
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw typeError(`env.${k}`, `must be a string, not ${v === null ? 'null' : typeof v}`);
      env[k] = String(v);
    }
    spec.env = env;
    if (!extendEnv) spec.env_clear = true;
  }
  const encoding = o.encoding === undefined ? 'utf8' : o.encoding;
  if (encoding !== 'buffer' && (typeof encoding !== 'string' || !Buffer.isEncoding(encoding))) {
    throw typeError('encoding', `must be 'buffer' or a Buffer encoding ('utf8', 'latin1', ...), not ${String(encoding)}`);
  }
  const reject = o.reject === undefined ? true : check.bool('reject', o.reject);
  const stripFinalNewline = o.stripFinalNewline === undefined ? true : check.bool('stripFinalNewline', o.stripFinalNewline);
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw typeError('signal', 'must be an AbortSignal');

  let pty = false;
  if (o.pty !== undefined && o.pty !== false) {
    if (o.pty === true) spec.pty = true;
    else if (o.pty !== null && typeof o.pty === 'object') {
      const { rows, cols, ...rest } = o.pty;
      if (Object.keys(rest).length) throw typeError(`pty.${Object.keys(rest)[0]}`, 'unknown key (rows, cols)');
      spec.pty = {};
      if (rows !== undefined) spec.pty.rows = check.bytes('pty.rows', rows);
      if (cols !== undefined) spec.pty.cols = check.bytes('pty.cols', cols);
    } else throw typeError('pty', 'must be true, false or {rows, cols}');
    pty = true;
    for (const k of ['stdin', 'stdout', 'stderr', 'merge']) {
      if (o[k] !== undefined) throw typeError(k, 'cannot be set with pty (the terminal is the child\'s stdin, stdout and stderr)');
    }
  }

  // stdin: 'pipe' is the default of spawn (as child_process), 'ignore' of
  // run (nobody could write to it); input feeds it.
  let input;
  let stdinMode = live ? 'pipe' : 'ignore';
  let stdinFd;
  if (o.stdin !== undefined) {
    stdinFd = stdioFd('stdin', o.stdin);
    if (stdinFd === undefined) {
      if (!['pipe', 'inherit', 'ignore'].includes(o.stdin)) {
        throw typeError('stdin', `must be 'pipe', 'inherit', 'ignore', a file descriptor or a stream with one, not ${String(o.stdin)}`);
      }
      stdinMode = o.stdin;
    } else stdinMode = 'fd';
  }
  if (o.input !== undefined) {
    if (o.stdin !== undefined) throw typeError('input', 'cannot be set with stdin');
    if (typeof o.input === 'string') input = o.input;
    else if (o.input instanceof Uint8Array) input = Buffer.from(o.input.buffer, o.input.byteOffset, o.input.byteLength);
    else if (isReadable(o.input)) input = o.input;
    else throw typeError('input', 'must be a string, a Buffer (Uint8Array) or a Readable stream');
  }
  if (pty) {
    stdinMode = 'pipe';
    if (input !== undefined && !isReadable(input)) input = Readable.from([Buffer.from(input)]);
  } else if (input !== undefined && !isReadable(input)) {
    spec.stdin = typeof input === 'string' ? { data: input } : { base64: input.toString('base64') };
    input = undefined;
  } else if (input !== undefined) {
    spec.stdin = 'pipe';
    stdinMode = 'pipe';
  } else if (stdinMode === 'fd') {
    spec.stdin = { fd: stdinFd };
  } else {
    spec.stdin = stdinMode === 'ignore' ? 'null' : stdinMode;
  }

  const routes = {};
  for (const k of ['stdout', 'stderr']) {
    const v = o[k] === undefined ? 'pipe' : o[k];
    const fd = stdioFd(k, v);
    if (fd !== undefined) {
      routes[k] = 'fd';
      if (!pty) spec[k] = { fd };
      continue;
    }
    if (typeof v !== 'string' || !Object.prototype.hasOwnProperty.call(ROUTES, v)) {
      throw typeError(k, `must be 'pipe', 'tee', 'inherit', 'ignore', a file descriptor or a stream with one, not ${String(v)}`);
    }
    routes[k] = v;
    if (!pty) spec[k] = ROUTES[v];
  }
  const merge = o.merge === undefined ? false : check.bool('merge', o.merge);
  if (merge) {
    if (o.stderr !== undefined) throw typeError('merge', 'cannot be set with stderr (merged, stderr goes where stdout goes)');
    spec.stderr = 'stdout';
    routes.stderr = 'merged';
  }
  if (pty) routes.stderr = 'merged';
  const read = (r) => r === 'pipe' || r === 'tee';
  if (live && (read(routes.stdout) || read(routes.stderr)) && spec.backpressure_bytes === undefined) {
    spec.backpressure_bytes = BACKPRESSURE_BYTES;
  }
  return {
    spec, routes, stdinMode, input, pty, encoding, reject, stripFinalNewline,
    signal: o.signal, maxOutput: spec.max_output_bytes === undefined ? 16 << 20 : spec.max_output_bytes === null ? Infinity : spec.max_output_bytes,
    command: [file, ...args].join(' '),
  };
}

// ---- result and error ----------------------------------------------------

function decode(buf, plan) {
  if (plan.stripFinalNewline && buf.length > 0 && buf[buf.length - 1] === 0x0a) {
    buf = buf.subarray(0, buf.length - (buf.length > 1 && buf[buf.length - 2] === 0x0d ? 2 : 1));
  }
  return plan.encoding === 'buffer' ? buf : buf.toString(plan.encoding);
}

// sup's snake_case keys as JS names, at every depth (confined's keys are
// sup's own, never the caller's).
function camelKeys(v) {
  if (Array.isArray(v)) return v.map(camelKeys);
  if (v === null || typeof v !== 'object') return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) out[k.replace(/_([a-z])/g, (_, c) => c.toUpperCase())] = camelKeys(x);
  return out;
}

// Result fields that only the JSON carries: read from raw when first asked
// for, so that a large capture's JSON is built only for who wants them.
const FROM_RAW = {
  waitingForInput: (raw) => (raw && typeof raw.waiting_for_input === 'boolean' ? raw.waiting_for_input : null),
  confined: (raw) => (raw && raw.confined ? camelKeys(raw.confined) : null),
  limit: (raw) => (raw && typeof raw.limit === 'string' ? raw.limit : null),
};

// The fields a result and a SupError share.
function resultFields(target, s) {
  for (const [name, fn] of Object.entries(FROM_RAW)) {
    Object.defineProperty(target, name, {
      enumerable: true,
      configurable: true,
      get() {
        const value = fn(this.raw);
        Object.defineProperty(this, name, { value, enumerable: true, writable: true, configurable: true });
        return value;
      },
    });
  }
  Object.defineProperties(target, {
    raw: {
      enumerable: false,
      configurable: true,
      get() {
        // The text of a large capture is built only when asked for: from
        // the handle that was kept for it (see Subprocess._finish).
        let json = s.json;
        if (json === undefined) {
          json = s.keeper && !s.keeper.released() ? s.keeper.result() : null;
          s.keeper = null;
        }
        const value = json === null ? null : JSON.parse(json);
        Object.defineProperty(this, 'raw', { value, enumerable: false });
        return value;
      },
    },
  });
  Object.assign(target, {
    command: s.command,
    pid: s.pid,
    exitCode: s.exitCode,
    signal: s.signal,
    outcome: s.outcome,
    phase: s.phase,
    timedOut: s.timedOut,
    isCanceled: s.isCanceled,
    isTerminated: s.signal !== undefined,
    forcedKill: s.forcedKill,
    failed: s.failed,
    stdout: s.stdout,
    stderr: s.stderr,
    stdoutOmittedBytes: s.stdoutOmittedBytes,
    stderrOmittedBytes: s.stderrOmittedBytes,
    durationMs: s.durationMs,
    hostDeath: s.hostDeath,
  });
  return target;
}

class SupError extends Error {
  constructor(message, fields, options) {
    super(message, options);
    this.name = 'SupError';
    if (fields) resultFields(this, fields);
  }
}

function describe(s) {
  switch (s.outcome) {
    case 'exited': return `Command failed with exit code ${s.exitCode}`;
    case 'signaled': return `Command was killed with ${s.signal}`;
    case 'idle_timeout':
      if (s.phase === 'input') return `Command timed out: waiting for input for ${s.plan.spec.input_wait_timeout_ms} milliseconds`;
      return s.phase === 'first_output'
        ? `Command timed out: no output within ${s.plan.spec.first_output_timeout_ms} milliseconds`
        : `Command timed out: silent for ${s.plan.spec.idle_timeout_ms} milliseconds`;
    case 'max_runtime': return `Command timed out after ${s.plan.spec.max_runtime_ms} milliseconds`;
    case 'interrupted': return s.isCanceled ? 'Command was canceled' : 'Command was interrupted';
    case 'aborted': return s.isCanceled ? 'Command was canceled and killed after its grace' : 'Command was aborted';
    default: return 'Command failed';
  }
}

function makeError(s, cause) {
  const short = `${describe(s)}${s.forcedKill && s.outcome !== 'aborted' ? ' (killed with SIGKILL after the grace)' : ''}: ${s.command}`;
  const text = (v) => (typeof v === 'string' ? v : Buffer.isBuffer(v) ? v.toString() : '');
  const parts = [short, text(s.stderr), text(s.stdout)].filter((p) => p !== '');
  const err = new SupError(parts.join('\n\n'), s, cause === undefined ? undefined : { cause });
  err.shortMessage = short;
  return err;
}

// A spawn that failed: ENOENT and friends as Node names them, with sup's
// part (which of spec, exec, cwd, system failed).
function spawnError(e, plan) {
  const code = typeof e.errno === 'number' ? codeName(e.errno) : undefined;
  const err = new SupError(`Command failed to spawn: ${e.message}: ${plan.command}`, {
    command: plan.command, failed: true, timedOut: false, isCanceled: false, json: null,
    stdout: plan.encoding === 'buffer' ? Buffer.alloc(0) : '', stderr: plan.encoding === 'buffer' ? Buffer.alloc(0) : '',
    stdoutOmittedBytes: 0, stderrOmittedBytes: 0, durationMs: 0,
  });
  err.code = code;
  err.errno = e.errno;
  err.part = PARTS[e.part];
  err.syscall = `spawn ${plan.spec.argv[0]}`;
  err.path = plan.spec.argv[0];
  err.spawnargs = plan.spec.argv.slice(1);
  return err;
}

function canceledBeforeStart(plan) {
  return new SupError(`Command was canceled before it started: ${plan.command}`, {
    command: plan.command, failed: true, timedOut: false, isCanceled: true, json: null,
    stdout: plan.encoding === 'buffer' ? Buffer.alloc(0) : '', stderr: plan.encoding === 'buffer' ? Buffer.alloc(0) : '',
    stdoutOmittedBytes: 0, stderrOmittedBytes: 0, durationMs: 0,
  }, { cause: plan.signal.reason });
}

// ---- streams -------------------------------------------------------------

// A child's stdout or stderr as a Readable. sup keeps every byte (head and
// tail past maxOutput) whether or not anyone reads; this stream is a live
// view of it. Until something reads it, its bytes are dropped as they come
// (the child never waits on a stream nobody reads); the first read starts
// from byte 0 of what sup kept. Once read, it reads at the consumer's pace:
// sup stops reading the pipe while the consumer is behind, so the child
// waits and a slow consumer loses nothing. Bytes that sup did not keep are
// reported: an 'omitted' event (count) and `omittedBytes`.
class OutputStream extends Readable {
  constructor(sub, stream) {
    // Room for several of sup's 64 KiB reads, so that one wake-up of the
    // loop moves what the pipe holds without stopping the watch.
    super({ highWaterMark: 1 << 20 });
    this._sub = sub;
    this._stream = stream;
    this._attached = false;
    this._armed = false;
    this._ended = false;
    this._pushed = 0;
    this._gaps = [];
    this.omittedBytes = 0;
    this._onReady = (status) => this._ready(status);
  }

  _arm(on) {
    const proc = this._sub._proc;
    if (!proc || on === this._armed) return;
    proc.watchOutput(this._stream, on ? this._onReady : null);
    this._armed = on;
  }

  _ready(status) {
    const proc = this._sub._proc;
    if (!proc) return;
    if (status < 0) {
      this._arm(false);
      this.destroy(codeError(status, 'sup: waiting for output'));
      return;
    }
    if (!this._attached) {
      proc.skip(this._stream);
      if (proc.poll() === 1) this._arm(false);
      return;
    }
    this._pump();
  }

  _pump() {
    const proc = this._sub._proc;
    if (!proc) return this._fromResult();
    let final = false;
    for (;;) {
      const buf = proc.read(this._stream, 65536);
      const lost = proc.lost(this._stream);
      if (lost > this.omittedBytes) this._gap(lost - this.omittedBytes);
      if (buf.length === 0) {
        // Final only counts when it was final before a read found nothing:
        // the last bytes may land between the read and the poll.
        if (final) {
          this._arm(false);
          this._end();
          return;
        }
        if (proc.poll() === 1) {
          final = true;
          continue;
        }
        this._arm(true);
        return;
      }
      this._pushed += buf.length;
      if (!this.push(buf)) {
        this._arm(false);
        return;
      }
    }
  }

  _gap(count) {
    this._gaps.push({ at: this._pushed, count });
    this.omittedBytes += count;
    this.emit('omitted', count);
  }

  _end() {
    if (this._ended) return;
    this._ended = true;
    this.push(null);
    this._sub._maybeRelease();
  }

  // Read after the handle was released: what sup kept, from the result.
  _fromResult() {
    if (this._ended) return;
    const r = this._sub._final;
    const kept = r.captured[this._stream];
    const omitted = r.omitted[this._stream];
    if (omitted > 0) {
      const head = Math.min(kept.length, Math.floor(this._sub._plan.maxOutput / 2));
      if (head > 0) this.push(kept.subarray(0, head));
      this._pushed += head;
      this._gap(omitted);
      this.push(kept.subarray(head));
    } else if (kept.length > 0) {
      this.push(kept);
    }
    this._end();
  }

  _read() {
    if (!this._attached) {
      this._attached = true;
      if (this._sub._proc) this._sub._proc.seek(this._stream, 0);
    }
    this._pump();
  }

  _destroy(err, cb) {
    this._arm(false);
    this._ended = true;
    this._sub._maybeRelease();
    cb(err);
  }

  // Whether this stream still needs the handle: read and not yet at its end.
  get _busy() {
    return this._attached && !this._ended && !this.destroyed;
  }

  // The stream's lines, without their "\n" (or "\r\n"), decoded as UTF-8; a
  // gap in what sup kept is a line of its own, "[sup: N bytes omitted]", as
  // in the result's text.
  async *lines() {
    const decoder = new StringDecoder('utf8');
    let partial = '';
    let consumed = 0;
    let gap = 0;
    const gaps = this._gaps;
    const cut = (line) => (line.endsWith('\r') ? line.slice(0, -1) : line);
    for await (const chunk of this) {
      // A chunk may hold bytes from both sides of a gap: cut it there.
      let off = 0;
      while (off < chunk.length) {
        while (gap < gaps.length && gaps[gap].at <= consumed) {
          partial += decoder.end();
          if (partial !== '') yield cut(partial);
          partial = '';
          yield `[sup: ${gaps[gap].count} bytes omitted]`;
          gap++;
        }
        const end = gap < gaps.length ? Math.min(chunk.length, off + gaps[gap].at - consumed) : chunk.length;
        const piece = chunk.subarray(off, end);
        consumed += piece.length;
        off = end;
        partial += decoder.write(piece);
        const lines = partial.split('\n');
        partial = lines.pop();
        for (const line of lines) yield cut(line);
      }
    }
    partial += decoder.end();
    if (partial !== '') yield cut(partial);
  }
}

// The child's stdin as a Writable: each write goes through sup_input_write
// without blocking; a full pipe waits for room on Node's loop. end() closes
// the child's stdin (a pty: sends end of input, Ctrl-D). Writes after the
// child ended fail with EPIPE, as child_process's stdin does.
class InputStream extends Writable {
  constructor(sub) {
    super({ decodeStrings: true });
    this._sub = sub;
    this._pending = null; // { buf, cb } or { final: cb }
    this._onRoom = (status) => this._room(status);
  }

  _arm(on) {
    const proc = this._sub._proc;
    if (proc) proc.watchInput(on ? this._onRoom : null);
  }

  _room(status) {
    const p = this._pending;
    if (!p) return this._arm(false);
    if (status < 0) {
      this._pending = null;
      this._arm(false);
      return (p.final || p.cb)(status === EPIPE || status === -9 ? null : codeError(status, 'sup: stdin'));
    }
    if (p.final) this._final(p.final, true);
    else this._write(p.buf, null, p.cb, true);
  }

  _write(chunk, _enc, cb, again) {
    const proc = this._sub._proc;
    if (!proc) return cb(codeError(EPIPE, 'sup: write to stdin'));
    let buf = chunk;
    while (buf.length > 0) {
      const n = proc.write(buf);
      if (n === EAGAIN) break;
      if (n < 0) {
        this._pending = null;
        if (again) this._arm(false);
        return cb(codeError(n, 'sup: write to stdin'));
      }
      buf = buf.subarray(n);
    }
    if (buf.length === 0) {
      this._pending = null;
      if (again) this._arm(false);
      return cb();
    }
    this._pending = { buf, cb };
    this._arm(true);
  }

  _final(cb, again) {
    const proc = this._sub._proc;
    if (!proc) return cb();
    if (again) this._arm(false);
    const rc = proc.closeInput();
    if (rc === EAGAIN) {
      this._pending = { final: cb };
      return this._arm(true);
    }
    this._pending = null;
    // A child that is gone has no stdin to close: not an error.
    cb(rc < 0 && rc !== EPIPE && rc !== -9 ? codeError(rc, 'sup: close stdin') : null);
  }

  _destroy(err, cb) {
    this._arm(false);
    this._pending = null;
    cb(err);
  }

  // The handle is going: a write still waiting can never complete.
  _released() {
    const p = this._pending;
    this._pending = null;
    if (p) (p.final || p.cb)(p.final ? null : codeError(EPIPE, 'sup: write to stdin'));
  }
}

// ---- Subprocess ----------------------------------------------------------

class Subprocess {
  constructor(plan, live) {
    this._plan = plan;
    this._final = null;
    this._canceled = false;
    this._proc = new native.Proc(JSON.stringify(plan.spec));
    try {
      this._start(plan, live);
    } catch (err) {
      this._release();
      throw err;
    }
  }

  _start(plan, live) {
    this.pid = this._proc.pid();
    this.stdin = null;
    this.stdout = null;
    this.stderr = null;
    const readable = (r) => live && (r === 'pipe' || r === 'tee');
    if (readable(plan.routes.stdout) || (live && plan.pty)) this.stdout = new OutputStream(this, STDOUT);
    if (readable(plan.routes.stderr)) this.stderr = new OutputStream(this, STDERR);
    if (plan.stdinMode === 'pipe' && (live || plan.input !== undefined || plan.pty)) this.stdin = new InputStream(this);
    // A stream nobody reads is drained as it comes (see OutputStream).
    for (const s of [this.stdout, this.stderr]) if (s) s._arm(true);
    this.result = new Promise((resolve, reject) => {
      this._resolve = resolve;
      this._reject = reject;
    });
    // Unhandled only if the caller never looks: a run() caller awaits it.
    this.result.catch(() => {});
    this._proc.watchFinal((status) => this._finish(status));
    if (plan.signal) {
      this._onAbort = () => {
        this._canceled = true;
        this.interrupt();
      };
      plan.signal.addEventListener('abort', this._onAbort, { once: true });
    }
    if (plan.input !== undefined && this.stdin) {
      const stdin = this.stdin;
      plan.input.on('error', (err) => stdin.destroy(err));
      stdin.on('error', () => {}); // EPIPE: the child stopped reading, as with a pipe
      plan.input.pipe(stdin);
    } else if (!live && this.stdin && plan.pty) {
      this.stdin.on('error', () => {});
    }
  }

  _finish(status) {
    const proc = this._proc;
    if (this._plan.signal) this._plan.signal.removeEventListener('abort', this._onAbort);
    if (status < 0 || !proc) {
      this._release();
      return this._reject(codeError(status, 'sup: waiting for the result'));
    }
    const sum = proc.summary();
    const plan = this._plan;
    const captured = [null, proc.output(STDOUT) || Buffer.alloc(0), proc.output(STDERR) || Buffer.alloc(0)];
    // sup's result JSON escapes every kept byte: cheap for small output,
    // costly for megabytes. A large capture's handle is kept instead (until
    // raw is read or the result collected: the handle's finalizer frees it).
    const small = captured[STDOUT].length + captured[STDERR].length <= RAW_EAGER_BYTES;
    const json = small ? proc.result() : undefined;
    const outcome = OUTCOMES[sum.outcome];
    const s = {
      plan,
      json,
      keeper: small ? null : proc,
      command: plan.command,
      pid: this.pid,
      exitCode: sum.exitCode === null ? undefined : sum.exitCode,
      signal: sum.termSignal === null ? undefined : native.signalName(sum.termSignal),
      outcome,
      phase: PHASES[sum.phase],
      timedOut: outcome === 'idle_timeout' || outcome === 'max_runtime',
      isCanceled: this._canceled && (outcome === 'interrupted' || outcome === 'aborted'),
      forcedKill: sum.forcedKill === 1,
      failed: !(outcome === 'exited' && sum.exitCode === 0),
      stdout: decode(captured[STDOUT], plan),
      stderr: decode(captured[STDERR], plan),
      stdoutOmittedBytes: sum.stdoutOmitted,
      stderrOmittedBytes: sum.stderrOmitted,
      durationMs: sum.durationMs,
      hostDeath: HOST_DEATH[sum.hostDeath],
    };
    this._final = { captured, omitted: [0, sum.stdoutOmitted, sum.stderrOmitted], keep: !small };
    this._maybeRelease();
    if (!s.failed) return this._resolve(resultFields({}, s));
    const err = makeError(s, s.isCanceled ? plan.signal.reason : undefined);
    if (plan.reject) this._reject(err);
    else this._resolve(err);
  }

  // The handle is freed once the result is taken and every stream that is
  // being read has read to its end (or was destroyed).
  _maybeRelease() {
    if (!this._final || !this._proc) return;
    for (const s of [this.stdout, this.stderr]) if (s && s._busy) return;
    this._release();
  }

  _release() {
    const proc = this._proc;
    if (!proc) return;
    for (const s of [this.stdout, this.stderr]) if (s) s._armed = false;
    // No watch may outlive this: an armed one would hold the handle, and
    // a descriptor that stays readable would wake the loop for ever.
    proc.watchOutput(STDOUT, null);
    proc.watchOutput(STDERR, null);
    proc.watchInput(null);
    this._proc = null;
    // Kept for a lazy raw: every watch is stopped by now, so nothing but
    // the result holds the handle.
    if (!(this._final && this._final.keep)) proc.release();
    if (this.stdin) this.stdin._released();
  }

  // Graceful stop: killSignal to the child's tree, SIGKILL after the grace.
  // True when it was sent, false when the child had already ended.
  interrupt() {
    return this._proc ? this._proc.interrupt() === 0 : false;
  }

  // Hard stop: SIGKILL to the child's tree now. False when it had ended.
  abort() {
    return this._proc ? this._proc.abort() === 0 : false;
  }

  // The child's max runtime as if it had come now (sup_expire): ended as
  // `timeout` would end it, outcome 'max_runtime', whether timeout is set
  // or not. For a budget kept outside sup. True when latched, false when
  // the child had ended (or sup was already ending it for another cause,
  // which then stands).
  expire() {
    return this._proc ? this._proc.expire() === 0 : false;
  }

  // Whether the child is waiting for input it cannot get (sup_input_wanted):
  // a process of its tree asleep reading its stdin, or stopped by SIGTTIN.
  // null when sup may not look (another user's process); false once it has
  // ended. Costs about a millisecond, and up to ~40 ms the first time it
  // sees a reader (it looks twice before it says true).
  inputWanted() {
    if (!this._proc) return false;
    const rc = this._proc.inputWanted();
    if (rc === 1) return true;
    if (rc === 0 || rc === ESRCH) return false;
    if (rc === EPERM) return null;
    throw codeError(rc, 'sup: inputWanted');
  }

  // child_process's kill(): with a signal, send it to the child's process
  // group (sup's outcome is then "signaled" if it dies of it); without,
  // execa's: killSignal, then SIGKILL after the grace (interrupt()). True
  // when sent, false when the child had ended.
  kill(signal) {
    if (signal === undefined) return this.interrupt();
    let sig = signal;
    if (typeof signal === 'string') sig = native.signalParse(signal);
    if (typeof sig !== 'number' || !Number.isInteger(sig) || sig < 0 || sig > 64) {
      const err = new TypeError(`sup: kill: unknown signal: ${String(signal)}`);
      err.code = 'ERR_UNKNOWN_SIGNAL';
      throw err;
    }
    if (!this._proc) return false;
    const rc = this._proc.signal(sig);
    if (rc === 0) return true;
    if (rc === ESRCH) return false;
    throw codeError(rc, `sup: kill(${String(signal)})`);
  }

  // The pty's window size (the child gets SIGWINCH).
  resize(rows, cols) {
    for (const [k, v] of [['rows', rows], ['cols', cols]]) {
      if (!Number.isInteger(v) || v < 1 || v > 65535) throw typeError(k, `must be an integer 1..65535, not ${String(v)}`);
    }
    if (!this._plan.pty) {
      const err = new Error('sup: resize: the child has no pty (spawn it with pty: true)');
      err.code = 'ENOTSUP';
      throw err;
    }
    if (!this._proc) throw codeError(ESRCH, 'sup: resize: the child has ended');
    const rc = this._proc.resize(rows, cols);
    if (rc === ENOTSUP) throw codeError(rc, 'sup: resize: the child has no pty');
    if (rc < 0) throw codeError(rc, rc === ESRCH ? 'sup: resize: the child has ended' : 'sup: resize');
  }
}

function normalize(file, args, options) {
  if (options === undefined && args !== null && typeof args === 'object' && !Array.isArray(args)) {
    return [file, [], args];
  }
  return [file, args === undefined ? [] : args, options === undefined ? {} : options];
}

// spawn(file, args?, options?): the child running, with live streams.
// Throws (synchronously) a SupError when it cannot start (code 'ENOENT',
// ...), a TypeError for a bad option.
function spawn(file, args, options) {
  const plan = buildSpec(...normalize(file, args, options), true);
  if (plan.signal && plan.signal.aborted) throw canceledBeforeStart(plan);
  try {
    return new Subprocess(plan, true);
  } catch (e) {
    if (e && typeof e.errno === 'number') throw spawnError(e, plan);
    throw e;
  }
}

// run(file, args?, options?): the child to its end; resolves with the
// result, rejects with a SupError unless it exited with 0 (reject: false
// resolves with the SupError instead).
async function run(file, args, options) {
  const plan = buildSpec(...normalize(file, args, options), false);
  if (plan.signal && plan.signal.aborted) {
    const err = canceledBeforeStart(plan);
    if (plan.reject) throw err;
    return err;
  }
  let sub;
  try {
    sub = new Subprocess(plan, false);
  } catch (e) {
    if (e && typeof e.errno === 'number') {
      const err = spawnError(e, plan);
      if (plan.reject) throw err;
      return err;
    }
    throw e;
  }
  if (sub.stdin && plan.input === undefined) sub.stdin.end(); // pty: nothing to type
  return sub.result;
}

// One assignment each, so that `import { run } from 'sup'` finds every name
// (Node reads a CommonJS module's exports from its text).
exports.run = run;
exports.spawn = spawn;
exports.Subprocess = Subprocess;
exports.SupError = SupError;
exports.version = native.version();
// The libuv that libsup runs on inside this process: Node's own.
exports.uvVersion = native.uvVersion();
