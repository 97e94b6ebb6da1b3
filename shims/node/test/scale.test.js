// 200 concurrent runs on Node's loop: no thread per child; and a Ctrl-C of
// the Node process ends its children (the sentinel).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn: cpSpawn } = require('node:child_process');
const { sup, pkg, alive, threads, until } = require('./helper');

test('200 concurrent runs add no more than a few threads', async () => {
  const before = threads();
  let peak = before;
  const sampler = setInterval(() => { peak = Math.max(peak, threads()); }, 5);
  const runs = [];
  for (let i = 0; i < 200; i++) {
    runs.push(sup.run('sh', ['-c', `sleep 0.3; echo ${i}`], { idleTimeout: 10000 }));
  }
  peak = Math.max(peak, threads());
  const results = await Promise.all(runs);
  clearInterval(sampler);
  results.forEach((r, i) => assert.equal(r.stdout, String(i)));
  console.log(`threads: ${before} before, ${peak} at the peak of 200 runs`);
  // libsup's loop and spawner threads: two; a few more for slack.
  assert.ok(peak - before <= 4, `${before} -> ${peak}`);
});

test('200 concurrent live streams', async () => {
  const subs = [];
  for (let i = 0; i < 200; i++) subs.push(sup.spawn('sh', ['-c', `for j in 1 2 3; do echo ${i}.$j; sleep 0.05; done`]));
  const all = await Promise.all(subs.map(async (p) => {
    const lines = [];
    for await (const l of p.stdout.lines()) lines.push(l);
    await p.result;
    return lines;
  }));
  all.forEach((lines, i) => assert.deepEqual(lines, [`${i}.1`, `${i}.2`, `${i}.3`]));
});

// Ctrl-C of a Node program: Node's default SIGINT ends it, and sup's
// sentinel ends every tree it supervised (within a second).
test('a Ctrl-C (SIGINT) of the Node process ends its children', async () => {
  const script = `const sup = require(${JSON.stringify(pkg)});
    const p = sup.spawn('sh', ['-c', 'sleep 60 & echo $!; sleep 60']);
    p.stdout.once('data', (c) => console.log(p.pid + ' ' + c.toString().trim()));`;
  const host = cpSpawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    host.stdout.once('data', (c) => resolve(c.toString()));
    host.once('exit', (code) => reject(new Error(`host exited early (${code})`)));
  });
  const [child, grandchild] = line.trim().split(' ').map(Number);
  assert.ok(alive(child) && alive(grandchild));
  host.kill('SIGINT');
  const [, signal] = await new Promise((resolve) => host.once('exit', (...a) => resolve(a)));
  assert.equal(signal, 'SIGINT');
  await until(() => !alive(child) && !alive(grandchild), 3000, 'the children of the interrupted host to end');
});

test('worker threads: each has its own addon instance on its own loop', async () => {
  const { Worker } = require('node:worker_threads');
  const code = `const sup = require(${JSON.stringify(pkg)}); const { parentPort, workerData } = require('node:worker_threads');
    sup.run('echo', ['worker ' + workerData]).then((r) => parentPort.postMessage(r.stdout));`;
  const results = await Promise.all([1, 2].map((n) => new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: n });
    w.once('message', resolve);
    w.once('error', reject);
  })));
  assert.deepEqual(results, ['worker 1', 'worker 2']);
  assert.equal((await sup.run('echo', ['main'])).stdout, 'main');
});
