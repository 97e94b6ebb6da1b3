// run(): every option, the result's fields and SupError.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Readable } = require('node:stream');
const { sup, pkg } = require('./helper');
const { run, SupError } = sup;

test('a successful run: exitCode, stdout, stderr, durationMs, raw', async () => {
  const r = await run('sh', ['-c', 'echo out; echo err >&2']);
  assert.equal(r.exitCode, 0);
  assert.equal(r.outcome, 'exited');
  assert.equal(r.failed, false);
  assert.equal(r.signal, undefined);
  assert.equal(r.stdout, 'out');
  assert.equal(r.stderr, 'err');
  assert.equal(r.timedOut, false);
  assert.equal(r.isCanceled, false);
  assert.ok(r.pid > 0);
  assert.ok(r.durationMs > 0 && r.durationMs < 10000);
  assert.equal(r.command, 'sh -c echo out; echo err >&2');
  assert.deepEqual(r.raw.stdout.captured, 'out\n');
  assert.equal(r.raw.outcome, 'exited');
  assert.equal(r.raw, r.raw, 'parsed once');
});

test('options may follow the file directly', async () => {
  const r = await run('pwd', { cwd: '/tmp' });
  assert.equal(r.stdout, '/tmp');
});

test('a non-zero exit rejects with a SupError carrying the result', async () => {
  await assert.rejects(run('sh', ['-c', 'echo partial; echo why >&2; exit 3']), (err) => {
    assert.ok(err instanceof SupError && err instanceof Error);
    assert.equal(err.name, 'SupError');
    assert.equal(err.exitCode, 3);
    assert.equal(err.outcome, 'exited');
    assert.equal(err.failed, true);
    assert.equal(err.stdout, 'partial');
    assert.equal(err.stderr, 'why');
    assert.equal(err.shortMessage, "Command failed with exit code 3: sh -c echo partial; echo why >&2; exit 3");
    assert.match(err.message, /exit code 3[^]*why[^]*partial/);
    assert.equal(err.raw.exit_code, 3);
    return true;
  });
});

test('reject: false resolves with the SupError', async () => {
  const r = await run('sh', ['-c', 'exit 4'], { reject: false });
  assert.ok(r instanceof SupError);
  assert.equal(r.exitCode, 4);
});

test('a program that is not there: ENOENT, part exec, synchronously from spawn', async () => {
  await assert.rejects(run('sup-no-such-program'), (err) => {
    assert.ok(err instanceof SupError);
    assert.equal(err.code, 'ENOENT');
    assert.equal(err.errno, -2);
    assert.equal(err.part, 'exec');
    assert.equal(err.path, 'sup-no-such-program');
    assert.match(err.message, /not found in PATH/);
    return true;
  });
  assert.throws(() => sup.spawn('sup-no-such-program'), { code: 'ENOENT', part: 'exec' });
  const r = await run('sup-no-such-program', [], { reject: false });
  assert.equal(r.code, 'ENOENT');
  await assert.rejects(run('true', [], { cwd: '/nonexistent-sup-dir' }), { code: 'ENOENT', part: 'cwd' });
});

test('cwd as a string and as a file URL', async () => {
  assert.equal((await run('pwd', [], { cwd: os.tmpdir() })).stdout, fs.realpathSync(os.tmpdir()));
  assert.equal((await run('pwd', [], { cwd: new URL('file:///') })).stdout, '/');
});

test('env is merged with process.env; extendEnv: false replaces it', async () => {
  process.env.SUP_NODE_INHERITED = 'yes';
  try {
    const r = await run('sh', ['-c', 'echo "$SUP_NODE_INHERITED $SUP_NODE_SET $SUP_NODE_NUM"'], { env: { SUP_NODE_SET: 'set', SUP_NODE_NUM: 7 } });
    assert.equal(r.stdout, 'yes set 7');
    const clean = await run('/usr/bin/env', [], { env: { ONLY: '1' }, extendEnv: false });
    assert.equal(clean.stdout, 'ONLY=1');
  } finally {
    delete process.env.SUP_NODE_INHERITED;
  }
});

test('input: a string, a Buffer, a Readable', async () => {
  assert.equal((await run('cat', [], { input: 'text in' })).stdout, 'text in');
  assert.deepEqual((await run('cat', [], { input: Buffer.from([0, 1, 2, 255]), encoding: 'buffer' })).stdout, Buffer.from([0, 1, 2, 255]));
  const big = Buffer.alloc(3 << 20, 'abcdefgh');
  const r = await run('cat', [], { input: Readable.from([big.subarray(0, 1 << 20), big.subarray(1 << 20)]), encoding: 'buffer' });
  assert.equal(r.stdout.length, big.length);
  assert.ok(r.stdout.equals(big));
});

test('stdin: ignore (run\'s default) reads end of file; inherit is this process\'s', async () => {
  assert.equal((await run('cat')).stdout, '');
  assert.equal((await run('cat', [], { stdin: 'ignore' })).stdout, '');
  const r = await run('sh', ['-c', 'test -e /proc/self/fd/0 && readlink /proc/self/fd/0']);
  assert.equal(r.stdout, '/dev/null');
  const inherit = await run('sh', ['-c', 'readlink /proc/self/fd/0'], { stdin: 'inherit' });
  assert.equal(inherit.stdout, fs.readlinkSync('/proc/self/fd/0'));
});

test('stdout and stderr: ignore, inherit and tee', async () => {
  const ignored = await run('sh', ['-c', 'echo a; echo b >&2'], { stdout: 'ignore', stderr: 'ignore' });
  assert.equal(ignored.stdout, '');
  assert.equal(ignored.raw.stdout.routed, 'null');
  // inherit and tee: checked in a child node, whose own stdout this run keeps.
  const inner = (route) => `const sup = require(${JSON.stringify(pkg)});
    sup.run('sh', ['-c', 'echo ${route}'], { stdout: '${route}' })
      .then((r) => process.stderr.write('kept:' + r.stdout + ':' + r.raw.stdout.routed));`;
  const inherit = await run(process.execPath, ['-e', inner('inherit')]);
  assert.equal(inherit.stdout, 'inherit');
  assert.equal(inherit.stderr, 'kept::inherit');
  const tee = await run(process.execPath, ['-e', inner('tee')]);
  assert.equal(tee.stdout, 'tee');
  assert.equal(tee.stderr, 'kept:tee:tee');
});

test('merge: stderr into stdout in the order written', async () => {
  const r = await run('sh', ['-c', 'echo 1; echo 2 >&2; echo 3; echo 4 >&2'], { merge: true });
  assert.equal(r.stdout, '1\n2\n3\n4');
  assert.equal(r.stderr, '');
  assert.equal(r.raw.stderr.routed, 'stdout');
});

test('encoding: buffer, latin1, hex; stripFinalNewline', async () => {
  const b = await run('printf', ['x\\n'], { encoding: 'buffer' });
  assert.deepEqual(b.stdout, Buffer.from('x'));
  assert.equal((await run('printf', ['\\351'], { encoding: 'latin1' })).stdout, '\u00e9');
  assert.equal((await run('printf', ['AB'], { encoding: 'hex' })).stdout, '4142');
  assert.equal((await run('printf', ['a\\r\\n'])).stdout, 'a');
  assert.equal((await run('printf', ['a\\n\\n'], { stripFinalNewline: false })).stdout, 'a\n\n');
  assert.equal((await run('printf', ['a\\n\\n'])).stdout, 'a\n');
});

test('maxOutput keeps head and tail and counts what it dropped', async () => {
  const r = await run('sh', ['-c', 'printf "%s" "$(seq 1 3000)"'], { maxOutput: 100 });
  assert.ok(r.stdoutOmittedBytes > 0);
  assert.equal(r.stdout.length, 100);
  assert.ok(r.stdout.startsWith('1\n2\n3\n'));
  assert.ok(r.stdout.endsWith('2999\n3000'));
  assert.equal(r.raw.stdout.omitted_bytes, r.stdoutOmittedBytes);
  assert.equal(r.stderrOmittedBytes, 0);
});

test('timeout: the max runtime, killSignal, then SIGKILL after the grace', async () => {
  const r = await run('sleep', ['10'], { timeout: 150, reject: false });
  assert.equal(r.outcome, 'max_runtime');
  assert.equal(r.timedOut, true);
  assert.equal(r.signal, 'SIGTERM');
  assert.equal(r.isTerminated, true);
  assert.match(r.shortMessage, /timed out after 150 milliseconds/);
  // A child that ignores killSignal is killed after the grace.
  const stubborn = await run('sh', ['-c', 'trap "" INT; echo ready; sleep 10'], { timeout: 100, grace: 200, killSignal: 'SIGINT', reject: false });
  assert.equal(stubborn.outcome, 'max_runtime');
  assert.equal(stubborn.signal, 'SIGKILL');
  assert.equal(stubborn.forcedKill, true);
  assert.deepEqual(stubborn.raw.signals_sent.map((s) => s.signal), ['SIGINT', 'SIGKILL']);
  assert.ok(stubborn.durationMs >= 290, `${stubborn.durationMs}`);
  assert.equal(stubborn.stdout, 'ready');
  const kill = await run('sleep', ['10'], { timeout: 100, onTimeout: 'kill', reject: false });
  assert.equal(kill.signal, 'SIGKILL');
  const numeric = await run('sleep', ['10'], { timeout: 100, killSignal: 10, reject: false });
  assert.equal(numeric.signal, 'SIGUSR1');
});

test('idleTimeout and firstOutputTimeout', async () => {
  const idle = await run('sh', ['-c', 'echo once; sleep 10'], { idleTimeout: 200, reject: false });
  assert.equal(idle.outcome, 'idle_timeout');
  assert.equal(idle.phase, 'idle');
  assert.equal(idle.timedOut, true);
  assert.equal(idle.stdout, 'once');
  assert.match(idle.shortMessage, /silent for 200 milliseconds/);
  const first = await run('sleep', ['10'], { firstOutputTimeout: 150, reject: false });
  assert.equal(first.outcome, 'idle_timeout');
  assert.equal(first.phase, 'first_output');
  // Chatty output keeps an idle child alive.
  const chatty = await run('sh', ['-c', 'for i in 1 2 3 4 5; do echo $i; sleep 0.1; done'], { idleTimeout: 1000 });
  assert.equal(chatty.exitCode, 0);
});

test('contain: group, auto (cgroup where possible)', async () => {
  const g = await run('true', [], { contain: 'group' });
  assert.equal(g.raw.contained, 'group');
  const a = await run('true', [], { contain: 'auto' });
  assert.ok(['group', 'cgroup'].includes(a.raw.contained));
  const c = await run('true', [], { contain: 'cgroup', reject: false });
  assert.ok(c.exitCode === 0 || c.code === 'ENOTSUP', String(c.message));
});

test('cgroupParent and ttyForeground reach the spec', async () => {
  const r = await run('true', [], { contain: 'auto', cgroupParent: '/sys/fs/cgroup/sup-node-no-such-dir' });
  if (r.raw.contained === 'group') assert.match(r.raw.contain_fallback, /sup-node-no-such-dir/);
  // Not in the foreground of a terminal here: the key is accepted and ignored.
  assert.equal((await run('true', [], { ttyForeground: true, stdin: 'inherit' })).exitCode, 0);
});

test('pty: the child on a terminal; input typed; run resolves', async () => {
  const r = await run('sh', ['-c', 'test -t 0 && test -t 1 && stty size'], { pty: { rows: 30, cols: 100 } });
  assert.equal(r.stdout, '30 100');
  assert.equal(r.raw.stdout.routed, 'pty');
  const typed = await run('sh', ['-c', 'stty -echo; read line; echo "got $line"'], { pty: true, input: 'hello\n' });
  assert.match(typed.stdout, /got hello/);
});

test('the library runs on Node\'s own libuv, with no libuv.so loaded', () => {
  assert.equal(sup.uvVersion, process.versions.uv);
  const maps = fs.readFileSync('/proc/self/maps', 'utf8');
  assert.doesNotMatch(maps, /libuv\.so/);
  assert.ok(sup.version >= 300);
});

test('the sentinel is built beside the addon, and runs for this process', async () => {
  const dir = path.join(pkg, 'build', 'Release');
  const program = path.join(dir, 'sup-sentinel');
  fs.accessSync(program, fs.constants.X_OK);
  await run('true');
  // libsup found it beside the addon (dladdr of its own code): one
  // sentinel runs, started as "sup-sentinel <this pid>" from that path.
  const mine = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv[0] === 'sup-sentinel' && argv[1] === String(process.pid)) mine.push(fs.readlinkSync(`/proc/${pid}/exe`));
    } catch {}
  }
  assert.deepEqual(mine, [fs.realpathSync(program)]);
});
