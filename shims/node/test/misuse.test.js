// Misuse: clear errors naming what is wrong, and never a crash.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { sup } = require('./helper');
const { run, spawn } = sup;

test('bad types and values name the option', async () => {
  const cases = [
    [() => run(42), /file: must be a string/],
    [() => run(''), /file: must not be empty/],
    [() => run('true', 'x'), /args: must be an array/],
    [() => run('true', [1]), /args\[0\]: must be a string/],
    [() => run('true', [], null), /options: must be an object/],
    [() => run('true', [], { idleTimeout: -1 }), /idleTimeout: must be a non-negative number/],
    [() => run('true', [], { timeout: '5s' }), /timeout: must be a non-negative number/],
    [() => run('true', [], { grace: NaN }), /grace: must be/],
    [() => run('true', [], { maxOutput: 1.5 }), /maxOutput: must be a non-negative integer/],
    [() => run('true', [], { killSignal: 'SIGNOPE' }), /killSignal: must be a signal/],
    [() => run('true', [], { stdout: 'file' }), /stdout: must be 'pipe', 'tee', 'inherit', 'ignore', a file descriptor or a stream with one/],
    [() => run('true', [], { stdout: 1.5 }), /stdout: must be a file descriptor/],
    [() => run('true', [], { stdin: 'tee' }), /stdin: must be 'pipe', 'inherit', 'ignore'/],
    [() => run('true', [], { env: { A: {} } }), /env\.A: must be a string/],
    [() => run('true', [], { env: 'A=1' }), /env: must be an object/],
    [() => run('true', [], { extendEnv: 'no' }), /extendEnv: must be true or false/],
    [() => run('true', [], { input: 5 }), /input: must be a string, a Buffer/],
    [() => run('true', [], { input: 'x', stdin: 'pipe' }), /input: cannot be set with stdin/],
    [() => run('true', [], { merge: true, stderr: 'ignore' }), /merge: cannot be set with stderr/],
    [() => run('true', [], { pty: true, stdout: 'pipe' }), /stdout: cannot be set with pty/],
    [() => run('true', [], { pty: { rows: 2, colz: 3 } }), /pty\.colz: unknown key/],
    [() => run('true', [], { contain: 'jail' }), /contain: must be 'group', 'cgroup', 'auto'/],
    [() => run('true', [], { signal: {} }), /signal: must be an AbortSignal/],
    [() => run('true', [], { encoding: 'klingon' }), /encoding: must be 'buffer' or a Buffer encoding/],
    [() => run('true', [], { reject: 0 }), /reject: must be true or false/],
    [() => run('true', [], { maxBuffer: 10 }), /maxBuffer: unknown option/],
    [() => run('true', [], { stdio: 'pipe' }), /stdio: unknown option/],
    [() => run('true', [], { limits: { cpuSeconds: 1.5 } }), /limits\.cpuSeconds: must be a positive integer/],
    [() => run('true', [], { sandbox: [] }), /sandbox: must be an object/],
  ];
  for (const [fn, re] of cases) {
    await assert.rejects(fn(), (err) => {
      assert.ok(err instanceof TypeError, `${re}: ${err}`);
      assert.match(err.message, re);
      return true;
    });
  }
  assert.throws(() => spawn('true', [], { timeout: -5 }), TypeError);
});

test('a value the library refuses is a SupError naming the key', async () => {
  await assert.rejects(run('true', [], { cwd: 'a\0b' }), (err) => {
    assert.equal(err.code, 'EINVAL');
    assert.equal(err.part, 'spec');
    assert.match(err.message, /cwd/);
    return true;
  });
  await assert.rejects(run('true', [], { idleTimeout: 100, stdout: 'ignore', stderr: 'ignore' }), { code: 'EINVAL', part: 'spec' });
  await assert.rejects(run('true', [], { pty: { rows: 0 } }), { code: 'EINVAL' });
});

test('use after the end: methods say so, nothing crashes', async () => {
  const p = spawn('true');
  await p.result;
  assert.equal(p.interrupt(), false);
  assert.equal(p.abort(), false);
  assert.equal(p.kill(), false);
  assert.equal(p.kill('SIGKILL'), false);
  assert.throws(() => p.kill('SIGNOPE'), { code: 'ERR_UNKNOWN_SIGNAL' });
  assert.throws(() => p.kill({}), { code: 'ERR_UNKNOWN_SIGNAL' });
  assert.throws(() => p.resize(10, 10), /no pty/);
  assert.throws(() => p.resize(0, 10), /rows: must be an integer/);
  const q = spawn('sleep', ['10'], { pty: true });
  q.abort();
  await q.result.catch(() => {});
  assert.throws(() => q.resize(10, 10), { code: 'ESRCH' });
  // The same result, however often it is awaited.
  assert.equal(await p.result, await p.result);
});

test('the native handle refuses misuse with errors', async () => {
  const p = spawn('sleep', ['10']);
  const proc = p._proc;
  assert.throws(() => proc.read(7), /stream must be 1/);
  assert.throws(() => proc.read('x'), /stream must be a number/);
  assert.throws(() => proc.read(1, 0), /max must be/);
  assert.throws(() => proc.watchOutput(1, 42), /callback must be a function or null/);
  assert.throws(() => proc.write('text'), /write\(buffer\)/);
  assert.throws(() => proc.seek(1, -1), /pos must be/);
  assert.throws(() => proc.resize('a', 1), /rows must be a number/);
  assert.throws(() => proc.read.call({}, 1), /Illegal invocation|not a sup process handle/);
  assert.throws(() => new (Object.getPrototypeOf(proc).constructor)(42), /spec must be a JSON string/);
  assert.throws(() => new (Object.getPrototypeOf(proc).constructor)('{"argv": []}'), (e) => e.errno === -22);
  p.abort();
  await p.result.catch(() => {});
  assert.equal(proc.released(), true);
  assert.throws(() => proc.read(1), { code: 'ERR_SUP_RELEASED' });
  assert.throws(() => proc.interrupt(), { code: 'ERR_SUP_RELEASED' });
  proc.release(); // idempotent
});

test('an abandoned subprocess is ended when collected', { skip: typeof global.gc !== 'function' ? 'run node with --expose-gc' : false }, async () => {
  const { alive, until } = require('./helper');
  let pid;
  (() => {
    const p = spawn('sleep', ['30'], { stdout: 'ignore', stderr: 'ignore', stdin: 'ignore' });
    pid = p.pid;
    // Nothing waits on it: dropping the final watch lets it be collected.
    p._proc.watchFinal(null);
  })();
  await until(() => { global.gc(); return !alive(pid); }, 5000, 'the abandoned child to end');
});
