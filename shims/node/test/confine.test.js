// The 0.4 options: descriptors as stdio, inputWaitTimeout and inputWanted(),
// expire(), maxOutput: Infinity, limits, sandbox, user/group/groups, signal
// dispositions, requireSentinel, and the result fields they fill.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { once } = require('node:events');
const { sup, sleep } = require('./helper');
const { run, spawn, SupError } = sup;

function tmpdir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sup-node-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('stdout as a descriptor number: the child writes into the file itself', async (t) => {
  const file = path.join(tmpdir(t), 'out');
  const fd = fs.openSync(file, 'w');
  t.after(() => fs.closeSync(fd));
  const r = await run('sh', ['-c', 'echo into the file; echo kept >&2'], { stdout: fd });
  assert.equal(r.stdout, '', 'not read by sup');
  assert.equal(r.stderr, 'kept');
  assert.equal(r.raw.stdout.routed, 'fd');
  assert.equal(fs.readFileSync(file, 'utf8'), 'into the file\n');
});

test('stderr as an fs.WriteStream after open, merged into a descriptor too', async (t) => {
  const dir = tmpdir(t);
  const ws = fs.createWriteStream(path.join(dir, 'err'));
  await once(ws, 'open');
  await run('sh', ['-c', 'echo to stderr >&2'], { stderr: ws });
  ws.end();
  await once(ws, 'close');
  assert.equal(fs.readFileSync(path.join(dir, 'err'), 'utf8'), 'to stderr\n');

  const fd = fs.openSync(path.join(dir, 'both'), 'w');
  t.after(() => fs.closeSync(fd));
  await run('sh', ['-c', 'echo one; echo two >&2'], { stdout: { fd }, merge: true });
  assert.equal(fs.readFileSync(path.join(dir, 'both'), 'utf8'), 'one\ntwo\n');
});

test('stdin as a descriptor: the child reads the file', async (t) => {
  const file = path.join(tmpdir(t), 'in');
  fs.writeFileSync(file, 'from a file\n');
  const rs = fs.createReadStream(file);
  await once(rs, 'open');
  t.after(() => rs.destroy());
  const r = await run('cat', [], { stdin: rs });
  assert.equal(r.stdout, 'from a file');
  const p = spawn('cat', [], { stdin: rs.fd });
  assert.equal(p.stdin, null, 'no Writable for a descriptor');
  await p.result;
});

test('a descriptor that is bad or not open yet is a clear error', async (t) => {
  const ws = fs.createWriteStream(path.join(tmpdir(t), 'late'));
  assert.throws(() => spawn('true', [], { stdout: ws }), (e) => e instanceof TypeError && /stdout: .*'open'/.test(e.message));
  await once(ws, 'open');
  ws.destroy();
  assert.throws(() => spawn('true', [], { stdout: -1 }), (e) => e instanceof TypeError && /stdout: .*file descriptor/.test(e.message));
  assert.throws(() => spawn('true', [], { stdin: 1.5 }), (e) => e instanceof TypeError && /stdin/.test(e.message));
  // 1000 is not open here: sup refuses it, naming the key.
  await assert.rejects(run('true', [], { stdout: 1000 }), (e) => e instanceof SupError && e.code === 'EBADF' && /stdout/.test(e.message));
});

test('maxOutput: Infinity keeps every byte past the 16 MiB default', async () => {
  const size = 20 << 20;
  const r = await run('head', ['-c', String(size), '/dev/zero'], { maxOutput: Infinity, encoding: 'buffer' });
  assert.equal(r.stdout.length, size);
  assert.equal(r.stdoutOmittedBytes, 0);
  const d = await run('head', ['-c', String(size), '/dev/zero'], { encoding: 'buffer' });
  assert.ok(d.stdoutOmittedBytes > 0, 'the default drops the middle');
  assert.throws(() => spawn('true', [], { maxOutput: -Infinity }), /maxOutput/);
});

test('inputWanted() is true while `read x` waits on a pipe, false once fed', async () => {
  const p = spawn('sh', ['-c', 'read x; echo got $x'], { stdin: 'pipe' });
  let wanted = false;
  for (let i = 0; i < 200 && !wanted; i++) {
    wanted = p.inputWanted();
    if (!wanted) await sleep(50);
  }
  assert.equal(wanted, true);
  p.stdin.end('it\n');
  const r = await p.result;
  assert.equal(r.stdout, 'got it');
  assert.equal(r.waitingForInput, false);
  assert.equal(p.inputWanted(), false, 'after the end');
});

test('inputWaitTimeout ends a child waiting for input: idle_timeout, phase input', async () => {
  const p = spawn('sh', ['-c', 'echo ready; read x'], { stdin: 'pipe', inputWaitTimeout: 300, grace: 1000 });
  await assert.rejects(p.result, (e) => {
    assert.ok(e instanceof SupError);
    assert.equal(e.outcome, 'idle_timeout');
    assert.equal(e.phase, 'input');
    assert.equal(e.timedOut, true);
    assert.equal(e.waitingForInput, true);
    assert.match(e.shortMessage, /waiting for input for 300 milliseconds/);
    assert.equal(e.stdout, 'ready');
    return true;
  });
  assert.throws(() => spawn('true', [], { inputWaitTimeout: 'soon' }), /inputWaitTimeout/);
});

test('expire(): ended as its timeout would end it, outcome max_runtime', async () => {
  const p = spawn('sleep', ['30'], { stdin: 'ignore' });
  assert.equal(p.expire(), true);
  await assert.rejects(p.result, (e) => e.outcome === 'max_runtime' && e.timedOut && e.signal === 'SIGTERM');
  assert.equal(p.expire(), false, 'after the end');
});

test('sandbox: writes outside sandbox.write are refused', async (t) => {
  const dir = tmpdir(t);
  const outside = tmpdir(t);
  const r = await run('sh', ['-c', `echo a > ${dir}/in; echo b > ${outside}/out`], { sandbox: { write: [dir] }, reject: false });
  assert.ok(r.confined && r.confined.sandbox, 'confined.sandbox is reported');
  if (!r.confined.sandbox.filesystem) {
    t.skip(`this kernel cannot enforce a Landlock ruleset (landlockAbi ${r.confined.sandbox.landlockAbi})`);
    return;
  }
  assert.equal(r.exitCode, 2);
  assert.match(r.stderr, /Permission denied/);
  assert.equal(fs.readFileSync(path.join(dir, 'in'), 'utf8'), 'a\n');
  assert.equal(fs.existsSync(path.join(outside, 'out')), false);
  assert.equal(r.confined.sandbox.noNewPrivs, true, 'keys in camelCase');
  assert.throws(() => spawn('true', [], { sandbox: { writable: [dir] } }), (e) => e instanceof TypeError && /sandbox\.writable/.test(e.message));
  assert.throws(() => spawn('true', [], { sandbox: { write: [1] } }), /sandbox\.write\[0\]/);
});

test('limits.cpuSeconds ends a spinner: limit cpu', { timeout: 60000 }, async () => {
  const r = await run('sh', ['-c', 'while :; do :; done'], { limits: { cpuSeconds: 1, coreDump: false }, timeout: 45000, reject: false });
  assert.equal(r.limit, 'cpu');
  assert.equal(r.outcome, 'signaled');
  assert.ok(r.signal === 'SIGXCPU' || r.signal === 'SIGKILL', r.signal);
  assert.deepEqual(r.confined.cpuSeconds, { value: 1, mechanism: 'rlimit', scope: 'process' });
  assert.equal(r.confined.coreDump.value, false);
  const ok = await run('true');
  assert.equal(ok.limit, null);
  assert.equal(ok.confined, null);
  assert.throws(() => spawn('true', [], { limits: { cpuSeconds: 0 } }), /limits\.cpuSeconds: must be a positive integer/);
  assert.throws(() => spawn('true', [], { limits: { cpu: 1 } }), /limits\.cpu: unknown key/);
});

test('user, group, groups: the ids the child runs with (EPERM unless root)', async () => {
  const p = run('id', ['-u'], { user: 65534, group: 'nogroup', groups: [65534] });
  if (process.getuid() !== 0) {
    await assert.rejects(p, (e) => e instanceof SupError && e.code === 'EPERM');
    return;
  }
  const r = await p;
  assert.equal(r.stdout, '65534');
  assert.deepEqual(r.confined.user, { uid: 65534, gid: 65534, groups: [65534] });
  assert.throws(() => spawn('true', [], { user: {} }), /user: must be a name or/);
  assert.throws(() => spawn('true', [], { groups: 'wheel' }), /groups: must be an array/);
  await assert.rejects(run('true', [], { user: 'no-such-user-here' }), (e) => e.code === 'EINVAL' && /user/.test(e.message));
});

test('keepIgnoredSignals passes this process\'s SIG_IGN on; resetSignals takes it back', async () => {
  // Node ignores SIGPIPE (13): bit 12 of SigIgn.
  const ign = async (options) => {
    const r = await run('sh', ['-c', 'grep SigIgn /proc/self/status'], options);
    return (BigInt('0x' + r.stdout.split(/\s+/)[1]) >> 12n) & 1n;
  };
  assert.equal(await ign({}), 0n);
  assert.equal(await ign({ keepIgnoredSignals: true }), 1n);
  assert.equal(await ign({ keepIgnoredSignals: true, resetSignals: ['PIPE'] }), 0n);
  assert.throws(() => spawn('true', [], { resetSignals: ['PIPE', 'NOPE'] }), /resetSignals\[1\]/);
  assert.throws(() => spawn('true', [], { keepIgnoredSignals: 'yes' }), /keepIgnoredSignals/);
});

test('requireSentinel: the sentinel built beside the addon runs; hostDeath tree', async () => {
  const r = await run('true', [], { requireSentinel: true });
  assert.equal(r.hostDeath, 'tree');
  assert.equal(r.raw.host_death, 'tree');
  assert.throws(() => spawn('true', [], { requireSentinel: 1 }), /requireSentinel/);
});
