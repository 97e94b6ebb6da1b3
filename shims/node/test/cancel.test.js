// AbortSignal before, during and after a run; interrupt(), abort(), kill();
// the seeds: interrupt first and SIGKILL after the grace, an abort of rg
// over a large tree within 150 ms, a cancelled run's output kept.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { sup, alive, sleep, until } = require('./helper');
const { run, spawn, SupError } = sup;

test('an AbortSignal aborted before the start: nothing is spawned', async () => {
  const ac = new AbortController();
  ac.abort(new Error('user pressed ESC'));
  await assert.rejects(run('sh', ['-c', 'touch /nonexistent-should-not-run'], { signal: ac.signal }), (err) => {
    assert.ok(err instanceof SupError);
    assert.equal(err.isCanceled, true);
    assert.equal(err.pid, undefined);
    assert.equal(err.cause.message, 'user pressed ESC');
    return true;
  });
  assert.throws(() => spawn('true', [], { signal: ac.signal }), { isCanceled: true });
  const r = await run('true', [], { signal: ac.signal, reject: false });
  assert.equal(r.isCanceled, true);
});

test('an AbortSignal during the run: interrupt, then SIGKILL after the grace; output kept', async () => {
  const ac = new AbortController();
  // The seed's two tiers: the child gets killSignal first, and a child that
  // ignores it is killed once the grace is over.
  const p = spawn('sh', ['-c', 'trap "echo got TERM" TERM; echo working; while :; do sleep 0.05; done'], { signal: ac.signal, grace: 300 });
  const it = p.stdout.lines()[Symbol.asyncIterator]();
  assert.equal((await it.next()).value, 'working');
  const t0 = Date.now();
  ac.abort('timeout tier one');
  const err = await p.result.catch((e) => e);
  const took = Date.now() - t0;
  assert.ok(err instanceof SupError);
  assert.equal(err.isCanceled, true);
  assert.equal(err.outcome, 'interrupted');
  assert.equal(err.forcedKill, true);
  assert.equal(err.signal, 'SIGKILL');
  assert.deepEqual(err.raw.signals_sent.map((s) => s.signal), ['SIGTERM', 'SIGKILL']);
  assert.ok(took >= 250, `${took} ms`);
  assert.match(err.stdout, /^working\ngot TERM/);
  assert.equal(err.cause, 'timeout tier one');
  assert.match(err.shortMessage, /canceled/);
});

test('a child that stops on the interrupt ends within the grace, its output kept', async () => {
  const ac = new AbortController();
  const p = spawn('sh', ['-c', 'trap "echo partial result; exit 130" TERM; echo started; while :; do sleep 0.05; done'], { signal: ac.signal, grace: 5000 });
  for await (const line of p.stdout.lines()) if (line === 'started') break;
  ac.abort();
  const err = await p.result.catch((e) => e);
  assert.equal(err.outcome, 'interrupted');
  assert.equal(err.forcedKill, false);
  assert.equal(err.exitCode, 130);
  assert.equal(err.stdout, 'started\npartial result');
  assert.ok(err.durationMs < 4000);
});

test('an AbortSignal after the end changes nothing', async () => {
  const ac = new AbortController();
  const r = await run('echo', ['done'], { signal: ac.signal });
  ac.abort();
  await sleep(20);
  assert.equal(r.isCanceled, false);
  assert.equal(r.outcome, 'exited');
  assert.equal(r.stdout, 'done');
});

test('interrupt(), abort(), kill() and their results', async () => {
  const a = spawn('sleep', ['10']);
  assert.equal(a.abort(), true);
  const ra = await a.result.catch((e) => e);
  assert.equal(ra.outcome, 'aborted');
  assert.equal(ra.signal, 'SIGKILL');
  assert.equal(ra.isCanceled, false);
  assert.equal(a.abort(), false, 'after the end');
  assert.equal(a.interrupt(), false);
  assert.equal(a.kill(), false);
  assert.equal(a.kill('SIGTERM'), false);

  const i = spawn('sleep', ['10'], { killSignal: 'SIGINT' });
  assert.equal(i.kill(), true);
  const ri = await i.result.catch((e) => e);
  assert.equal(ri.outcome, 'interrupted');
  assert.equal(ri.signal, 'SIGINT');

  const k = spawn('sleep', ['10']);
  assert.equal(k.kill('SIGUSR1'), true);
  const rk = await k.result.catch((e) => e);
  assert.equal(rk.outcome, 'signaled');
  assert.equal(rk.signal, 'SIGUSR1');
  const n = spawn('sleep', ['10']);
  assert.equal(n.kill(9), true);
  assert.equal((await n.result.catch((e) => e)).signal, 'SIGKILL');
});

test('the whole process group ends with the child', async () => {
  const p = spawn('sh', ['-c', 'sleep 30 & echo $!; wait']);
  const it = p.stdout.lines()[Symbol.asyncIterator]();
  const grandchild = Number((await it.next()).value);
  assert.ok(alive(grandchild));
  p.abort();
  await p.result.catch(() => {});
  await until(() => !alive(grandchild), 2000, 'the grandchild to die');
});

const RG = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v rg'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
})();

// 20,000 files of 2,000 matching lines (hard links): rg needs seconds to
// print the ~2.5 GB it finds.
function rgTree() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'sup-node-rg-'));
  const master = path.join(base, 'master.txt');
  let text = '';
  for (let i = 0; i < 2000; i++) text += `needle line ${i} of a file that rg finds\n`;
  fs.writeFileSync(master, text);
  const root = path.join(base, 'tree');
  for (let d = 0; d < 200; d++) {
    fs.mkdirSync(path.join(root, `pkg${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) fs.linkSync(master, path.join(root, `pkg${d}`, `mod${f}.py`));
  }
  return { base, root };
}

test('the seed: abort of rg over a large tree within 150 ms, partial output kept', { skip: RG ? false : 'ripgrep (rg) is not installed' }, async () => {
  const { base, root } = rgTree();
  try {
    for (const how of ['abort', 'interrupt']) {
      const p = spawn(RG, ['needle', root], { idleTimeout: 20000, timeout: 60000, grace: 2000 });
      const first = await new Promise((resolve) => p.stdout.once('data', resolve));
      assert.match(first.toString(), /needle/);
      const t0 = process.hrtime.bigint();
      p[how]();
      const r = await p.result.catch((e) => e);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      console.log(`rg ${how}: final ${ms.toFixed(1)} ms after the request, ${r.stdout.length} chars kept`);
      assert.equal(r.outcome, how === 'abort' ? 'aborted' : 'interrupted');
      assert.ok(ms < 150, `${ms} ms`);
      assert.ok(r.stdout.includes('needle line'), 'partial output kept');
      assert.ok(r.raw.stdout.bytes >= first.length);
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});
