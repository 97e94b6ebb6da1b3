// Types of the sup package (hand-written; checked with tsc --strict).
/// <reference types="node" />
import { Readable, Stream, Writable } from 'node:stream';

/** Where a child's stdout or stderr goes. 'pipe': sup keeps it (and, with
 * spawn, it is `subprocess.stdout`); 'tee': the same, and every byte is also
 * copied to this process's own descriptor; 'inherit': this process's
 * descriptor itself, not read by sup; 'ignore': /dev/null. */
export type OutputRoute = 'pipe' | 'tee' | 'inherit' | 'ignore' | StdioFd;

/** A descriptor of this process the child gets a copy of, as its stdin,
 * stdout or stderr (not read by sup): a number, or a stream with one (an
 * fs.WriteStream or fs.ReadStream after its 'open' event, process.stdout,
 * `{ fd: 3 }`), as child_process's stdio takes them. A stream without a
 * numeric fd is a TypeError. */
export type StdioFd = number | Stream | { readonly fd: number | null | undefined };

/** Resource limits the child sets on itself before exec (rlimits, soft ==
 * hard), or its cgroup's where contain is 'cgroup' and the controller is
 * there (memoryBytes, processes: then for the whole tree). Unset: the
 * host's own. See `confined` in the result for what applied. */
export interface Limits {
  /** RLIMIT_DATA (a process's data), or the cgroup's memory.max. */
  memoryBytes?: number;
  /** RLIMIT_CPU: SIGXCPU, then SIGKILL a second later (limit 'cpu'). */
  cpuSeconds?: number;
  /** RLIMIT_NPROC (the user's processes; not for root), or pids.max. */
  processes?: number;
  /** RLIMIT_FSIZE: a larger write gets SIGXFSZ (limit 'file_size'). */
  fileBytes?: number;
  /** RLIMIT_NOFILE. */
  openFiles?: number;
  /** false: RLIMIT_CORE 0. */
  coreDump?: boolean;
}

/** A Landlock ruleset (and, with network: false, a seccomp filter) the
 * child applies on itself. Best effort unless strict; `confined.sandbox`
 * in the result says what the kernel enforced. */
export interface Sandbox {
  /** The only writable paths (besides /dev/null, /dev/tty, the pty). */
  write?: readonly (string | URL)[];
  /** The only readable paths; null or unset: everything. */
  read?: readonly (string | URL)[] | null;
  /** The only executable paths; null or unset: everything. */
  exec?: readonly (string | URL)[] | null;
  /** false: no sockets but AF_UNIX, no TCP bind or connect. Default true. */
  network?: boolean;
  /** true: fail (ENOTSUP) rather than run with a rule the kernel cannot enforce. */
  strict?: boolean;
  /** true: a private, writable TMPDIR, removed with everything in it at the end. */
  tmp?: boolean;
}

/** What sup applied, one entry per limit given (keys as in Limits), plus
 * `sandbox` and `user` (sup's result "confined", keys in camelCase). */
export interface Confined {
  memoryBytes?: ConfinedLimit;
  cpuSeconds?: ConfinedLimit;
  processes?: ConfinedLimit;
  fileBytes?: ConfinedLimit;
  openFiles?: ConfinedLimit;
  coreDump?: ConfinedLimit;
  sandbox?: {
    /** The kernel's Landlock ABI; 0: none. */
    landlockAbi: number;
    filesystem: boolean;
    /** null when the network was allowed. */
    network: boolean | null;
    landlockTcp: boolean;
    noNewPrivs: boolean;
    /** What the kernel could not enforce. */
    notEnforced: string[];
    /** The private directory (sandbox.tmp). */
    tmp?: string;
  };
  user?: { uid: number | null; gid: number | null; groups: number[] | null };
}
export interface ConfinedLimit {
  value: number | boolean;
  /** null: not applied (see reason). */
  mechanism: 'rlimit' | 'cgroup' | null;
  scope?: 'process' | 'user' | 'tree';
  reason?: string;
}

/** What ended the child, decided once: aborted > idle_timeout / max_runtime
 * > interrupted > signaled > exited. */
export type Outcome = 'exited' | 'signaled' | 'idle_timeout' | 'max_runtime' | 'interrupted' | 'aborted';

/** A signal name ('SIGTERM', 'TERM', 'SIGRTMIN+3') or number. */
export type SignalLike = NodeJS.Signals | string | number;

export interface Options<E extends Encoding = 'utf8'> {
  /** Working directory of the child (default: this process's). */
  cwd?: string | URL;
  /** Variables to set, merged with process.env unless extendEnv is false. */
  env?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** false: the environment is exactly `env` (execa's extendEnv). Default true. */
  extendEnv?: boolean;
  /** Written to the child's stdin, which is then closed. */
  input?: string | Uint8Array | Readable;
  /** 'pipe' (spawn's default: `subprocess.stdin`), 'inherit', 'ignore'
   * (run's default), or a descriptor the child reads itself. */
  stdin?: 'pipe' | 'inherit' | 'ignore' | StdioFd;
  stdout?: OutputRoute;
  stderr?: OutputRoute;
  /** stderr into stdout's pipe, in the order written (not execa's `all`,
   * which also keeps them apart). */
  merge?: boolean;
  /** End the child after this many ms without a byte on stdout or stderr. */
  idleTimeout?: number;
  /** End the child when it wrote nothing this many ms after it started. */
  firstOutputTimeout?: number;
  /** End the child this many ms after it was spawned (its max runtime). */
  timeout?: number;
  /** End the child (outcome 'idle_timeout', phase 'input') once it has
   * waited this many ms for input it cannot get (see inputWanted()). */
  inputWaitTimeout?: number;
  /** Between killSignal and SIGKILL, in ms (execa's forceKillAfterDelay).
   * Default 5000. */
  grace?: number;
  /** The signal that asks the child to stop (default 'SIGTERM'). */
  killSignal?: SignalLike;
  /** On a timeout: 'interrupt' (killSignal, SIGKILL after the grace;
   * default) or 'kill' (SIGKILL at once). */
  onTimeout?: 'interrupt' | 'kill';
  /** Aborting it interrupts the child (killSignal), then SIGKILL after the grace. */
  signal?: AbortSignal;
  /** Bytes kept per stream: past it, the first and the newest halves
   * (default 16 MiB). Not execa's maxBuffer: the run does not fail.
   * Infinity keeps every byte (memory grows with the output). */
  maxOutput?: number;
  /** What is ended with the child: its process group ('group', default), a
   * cgroup of its own ('cgroup': every process it ever started), or 'auto'. */
  contain?: 'group' | 'cgroup' | 'auto';
  /** With contain 'cgroup' or 'auto': where sup makes its cgroups. */
  cgroupParent?: string;
  /** Make the child the foreground job of this process's terminal. */
  ttyForeground?: boolean;
  /** Resource limits (see Limits). */
  limits?: Limits;
  /** Filesystem and network confinement (see Sandbox). */
  sandbox?: Sandbox;
  /** A user name or uid the child runs as, with its groups (needs root). */
  user?: string | number;
  /** A group name or gid the child runs as. */
  group?: string | number;
  /** Exactly the child's supplementary groups. */
  groups?: readonly (string | number)[];
  /** true: signals this process ignores stay ignored in the child (as a
   * shell passes them on), except resetSignals. Default false. */
  keepIgnoredSignals?: boolean;
  /** Signals at their default in the child even with keepIgnoredSignals. */
  resetSignals?: readonly SignalLike[];
  /** true: fail (ENOTSUP) where no sentinel would end the child's tree
   * should this process die. Default false. */
  requireSentinel?: boolean;
  /** The child on a pseudo-terminal of its own (stdin, stdout and stderr). */
  pty?: boolean | { rows?: number; cols?: number };
  /** 'buffer': stdout and stderr of the result are Buffers. Default 'utf8'. */
  encoding?: E;
  /** false: a failed run resolves with its SupError instead of rejecting. */
  reject?: boolean;
  /** Drop one final newline from stdout and stderr (execa's default: true). */
  stripFinalNewline?: boolean;
}

/** Which silence limit ended an 'idle_timeout' child. */
export type Phase = 'first_output' | 'idle' | 'input';
/** The limit that ended the child (its outcome is unchanged). */
export type LimitHit = 'memory' | 'processes' | 'cpu' | 'file_size';

export type Encoding = 'buffer' | Exclude<BufferEncoding, 'buffer'>;
type Output<E extends Encoding> = E extends 'buffer' ? Buffer : string;

export interface Result<E extends Encoding = 'utf8'> {
  /** file and args, joined by spaces. */
  command: string;
  pid: number | undefined;
  /** The exit code; undefined when the child died from a signal. */
  exitCode: number | undefined;
  /** The signal that ended the child ('SIGTERM'); undefined when it exited. */
  signal: string | undefined;
  /** undefined only for a run that never started. */
  outcome: Outcome | undefined;
  /** For 'idle_timeout': which silence limit fired. */
  phase: Phase | undefined;
  /** An idleTimeout, firstOutputTimeout or timeout ended the child. */
  timedOut: boolean;
  /** The `signal` option's AbortSignal ended the child. */
  isCanceled: boolean;
  /** The child died from a signal. */
  isTerminated: boolean;
  /** A SIGKILL sup sent reached a process (after the grace, abort()). */
  forcedKill: boolean;
  /** Anything but an exit with code 0. */
  failed: boolean;
  stdout: Output<E>;
  stderr: Output<E>;
  /** Bytes written but not kept (past maxOutput), per stream. */
  stdoutOmittedBytes: number;
  stderrOmittedBytes: number;
  /** From the spawn to the final result. */
  durationMs: number;
  /** Whether the child was waiting for input at its end; null when nobody
   * asked (inputWaitTimeout, inputWanted()) or sup could not see. */
  waitingForInput: boolean | null;
  /** What limits, sandbox and user applied; null without them. */
  confined: Confined | null;
  /** The limit that ended the child, else null. */
  limit: LimitHit | null;
  /** What would have ended with this process had it died: 'tree' (the
   * sentinel's work) or 'main_process'. undefined for a run that never
   * started. */
  hostDeath: 'tree' | 'main_process' | undefined;
  /** sup's result JSON (include/sup.h, sup_result), parsed when first read;
   * null for a run that never started. */
  readonly raw: Record<string, unknown> | null;
}

export class SupError<E extends Encoding = 'utf8'> extends Error implements Result<E> {
  command: string;
  pid: number | undefined;
  exitCode: number | undefined;
  signal: string | undefined;
  outcome: Outcome | undefined;
  phase: Phase | undefined;
  timedOut: boolean;
  isCanceled: boolean;
  isTerminated: boolean;
  forcedKill: boolean;
  failed: boolean;
  stdout: Output<E>;
  stderr: Output<E>;
  stdoutOmittedBytes: number;
  stderrOmittedBytes: number;
  durationMs: number;
  waitingForInput: boolean | null;
  confined: Confined | null;
  limit: LimitHit | null;
  hostDeath: 'tree' | 'main_process' | undefined;
  readonly raw: Record<string, unknown> | null;
  /** The first line of the message, without the output. */
  shortMessage: string;
  /** A spawn that failed: 'ENOENT', 'EACCES', 'EINVAL' (a bad option
   * value), ... */
  code?: string;
  errno?: number;
  /** A spawn that failed: which part ('spec', 'exec', 'cwd', 'system'). */
  part?: 'spec' | 'exec' | 'cwd' | 'system';
}

/** A child's stdout or stderr. Lossless at the reader's pace once read;
 * bytes sup did not keep (past maxOutput) are reported as 'omitted'. */
export interface OutputStream extends Readable {
  /** Lines without their "\n" ("\r\n"); a gap is "[sup: N bytes omitted]". */
  lines(): AsyncGenerator<string, void, undefined>;
  /** Bytes this reader never got because sup had not kept them. */
  readonly omittedBytes: number;
  on(event: 'omitted', listener: (bytes: number) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}

export class Subprocess<E extends Encoding = 'utf8'> {
  private constructor();
  readonly pid: number;
  /** null unless stdin is 'pipe' (spawn's default) or pty. */
  readonly stdin: Writable | null;
  /** null unless stdout is 'pipe' or 'tee' (with pty: the terminal). */
  readonly stdout: OutputStream | null;
  /** null unless stderr is 'pipe' or 'tee' (not merged, no pty). */
  readonly stderr: OutputStream | null;
  /** Resolves once the child and its tree have ended (see run). */
  readonly result: Promise<Result<E>>;
  /** killSignal to the child's tree, SIGKILL after the grace. False when it had ended. */
  interrupt(): boolean;
  /** SIGKILL to the child's tree now. False when it had ended. */
  abort(): boolean;
  /** With a signal: send it to the child's process group (child_process's
   * kill). Without: interrupt() (execa's kill). False when it had ended. */
  kill(signal?: SignalLike): boolean;
  /** The child's max runtime as if it came now: ended as `timeout` would
   * end it (outcome 'max_runtime'). False when it had ended. */
  expire(): boolean;
  /** Whether the child is waiting for input it cannot get (a process of
   * its tree asleep reading its stdin, or stopped by SIGTTIN); null when
   * sup may not look; false after the end. Blocks up to ~40 ms the first
   * time it sees a reader. */
  inputWanted(): boolean | null;
  /** The pty's size; throws without pty or after the end. */
  resize(rows: number, cols: number): void;
}

export function run(file: string | URL, options?: Options<'utf8'>): Promise<Result<'utf8'>>;
export function run<E extends Encoding = 'utf8'>(file: string | URL, args?: readonly string[], options?: Options<E>): Promise<Result<E>>;
export function run<E extends Encoding = 'utf8'>(file: string | URL, options?: Options<E>): Promise<Result<E>>;

export function spawn(file: string | URL, options?: Options<'utf8'>): Subprocess<'utf8'>;
export function spawn<E extends Encoding = 'utf8'>(file: string | URL, args?: readonly string[], options?: Options<E>): Subprocess<E>;
export function spawn<E extends Encoding = 'utf8'>(file: string | URL, options?: Options<E>): Subprocess<E>;

/** The libsup version compiled into the addon (MAJOR * 10000 + MINOR * 100 + PATCH). */
export const version: number;
/** The libuv libsup runs on here: Node's own (process.versions.uv). */
export const uvVersion: string;
