// A user's script, type-checked with tsc --strict --noEmit against the
// installed package (run-tests.sh): what the types allow and refuse.
import { run, spawn, SupError, type Result, type Subprocess } from 'sup';

async function main(): Promise<void> {
  const r: Result = await run('git', ['status', '--short'], { cwd: '/tmp', timeout: 5000, idleTimeout: 1000 });
  const out: string = r.stdout;
  const code: number | undefined = r.exitCode;
  console.log(out, code, r.outcome, r.durationMs, r.stdoutOmittedBytes, r.raw?.['outcome']);

  const b = await run('cat', { input: Buffer.from('x'), encoding: 'buffer' });
  const bytes: Buffer = b.stdout;
  console.log(bytes.length);

  const ac = new AbortController();
  const p: Subprocess = spawn('make', ['-j4'], {
    signal: ac.signal,
    grace: 2000,
    killSignal: 'SIGINT',
    env: { CC: 'clang' },
    extendEnv: true,
    stdout: 'pipe',
    stderr: 'tee',
    maxOutput: 1 << 20,
    contain: 'auto',
  });
  if (p.stdout) {
    for await (const line of p.stdout.lines()) console.log(line);
    p.stdout.on('omitted', (n: number) => console.log(`${n} bytes lost`));
  }
  p.stdin?.end('input');
  p.interrupt();
  p.kill('SIGUSR1');
  p.kill();
  p.abort();
  try {
    await p.result;
  } catch (err) {
    if (err instanceof SupError) {
      const why: string = err.shortMessage;
      console.log(why, err.timedOut, err.isCanceled, err.signal, err.code, err.part);
    }
  }
  const t = spawn('bash', { pty: { rows: 24, cols: 80 } });
  t.resize(40, 120);
  const e = await run('false', [], { reject: false });
  console.log(e.failed);

  const fs = await import('node:fs');
  const log = fs.createWriteStream('/tmp/log');
  const c = await run('make', [], {
    stdout: log,
    stderr: 2,
    stdin: { fd: 0 },
    maxOutput: Infinity,
    inputWaitTimeout: 5000,
    limits: { memoryBytes: 1 << 30, cpuSeconds: 60, processes: 100, fileBytes: 1 << 20, openFiles: 256, coreDump: false },
    sandbox: { write: ['/tmp', new URL('file:///var/tmp')], read: null, network: false, strict: false, tmp: true },
    user: 'nobody',
    group: 65534,
    groups: ['nogroup', 65534],
    keepIgnoredSignals: true,
    resetSignals: ['SIGPIPE', 'XFSZ', 25],
    requireSentinel: true,
    reject: false,
  });
  const waiting: boolean | null = c.waitingForInput;
  const hit: 'memory' | 'processes' | 'cpu' | 'file_size' | null = c.limit;
  const abi: number | undefined = c.confined?.sandbox?.landlockAbi;
  const cpu = c.confined?.cpuSeconds?.mechanism;
  console.log(waiting, hit, abi, cpu, c.hostDeath, c.phase === 'input');
  const w = spawn('sh', ['-c', 'read x'], { stdin: 'pipe' });
  const wanted: boolean | null = w.inputWanted();
  const expired: boolean = w.expire();
  console.log(wanted, expired);
  // @ts-expect-error: limits take sup's names in camelCase
  await run('true', [], { limits: { cpu: 1 } });
  // @ts-expect-error: inputWanted() may be null (sup could not see)
  const never: boolean = w.inputWanted();
  console.log(never);

  // @ts-expect-error: maxBuffer is execa's; sup's is maxOutput
  await run('true', [], { maxBuffer: 10 });
  // @ts-expect-error: a route sup does not know
  await run('true', [], { stdout: 'file' });
  // @ts-expect-error: args are strings
  await run('true', [1]);
  // @ts-expect-error: resize takes numbers
  t.resize('40', 120);
}

void main();
