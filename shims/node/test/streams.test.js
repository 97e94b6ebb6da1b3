// spawn(): live streams with backpressure, lines(), stdin as a Writable.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { pipeline, finished } = require('node:stream/promises');
const { once } = require('node:events');
const { Writable } = require('node:stream');
const { sup, sleep } = require('./helper');
const { spawn } = sup;

// A child that writes `mib` MiB of numbered 64-byte lines.
function writer(mib) {
  return ['sh', ['-c', `seq -f '%063g' 1 ${mib * 16384}`]];
}
function expectedHash(mib) {
  const h = crypto.createHash('sha256');
  for (let i = 1; i <= mib * 16384; i++) h.update(String(i).padStart(63, '0') + '\n');
  return h.digest('hex');
}

test('a slow consumer loses nothing: 24 MiB through a stream past a 1 MiB maxOutput', async () => {
  const [file, args] = writer(24);
  const p = spawn(file, args, { maxOutput: 1 << 20 });
  const hash = crypto.createHash('sha256');
  let bytes = 0;
  let pauses = 0;
  await pipeline(p.stdout, new Writable({
    highWaterMark: 1 << 16,
    write(chunk, _enc, cb) {
      hash.update(chunk);
      bytes += chunk.length;
      // Slow: a pause now and then, long enough for the child to fill
      // every buffer between it and this consumer.
      if (bytes % (4 << 20) < chunk.length) {
        pauses++;
        setTimeout(cb, 50);
      } else cb();
    },
  }));
  const r = await p.result;
  assert.equal(bytes, 24 << 20);
  assert.equal(hash.digest('hex'), expectedHash(24));
  assert.equal(p.stdout.omittedBytes, 0);
  assert.ok(pauses >= 5);
  // The result keeps head and tail, and says how much it dropped.
  assert.equal(r.stdoutOmittedBytes, (24 << 20) - (1 << 20));
  assert.equal(r.raw.stdout.bytes, 24 << 20);
});

test('the child waits for a consumer that has stopped reading', async () => {
  const p = spawn('sh', ['-c', 'head -c 8000000 /dev/zero; echo done >&2']);
  let settled = false;
  p.result.then(() => { settled = true; });
  await once(p.stdout, 'readable');
  const first = p.stdout.read();
  await sleep(300);
  // Nothing is done: the child is blocked on its pipe.
  assert.equal(settled, false);
  let bytes = first.length;
  const ended = finished(p.stdout);
  p.stdout.removeAllListeners('readable');
  p.stdout.on('data', (c) => { bytes += c.length; });
  await ended;
  const r = await p.result;
  assert.equal(bytes, 8000000);
  assert.equal(r.stderr, 'done');
});

test('lines() and async iteration', async () => {
  const p = spawn('sh', ['-c', 'printf "a\\nb\\r\\nc"; printf "x\\n" >&2']);
  const lines = [];
  for await (const line of p.stdout.lines()) lines.push(line);
  assert.deepEqual(lines, ['a', 'b', 'c']);
  const chunks = [];
  for await (const c of p.stderr) chunks.push(c);
  assert.equal(Buffer.concat(chunks).toString(), 'x\n');
  assert.equal((await p.result).stdout, 'a\nb\r\nc');
});

test('a stream read late starts at byte 0 of what sup kept', async () => {
  const p = spawn('sh', ['-c', 'echo early; echo more']);
  await p.result;
  await sleep(20);
  const lines = [];
  for await (const line of p.stdout.lines()) lines.push(line);
  assert.deepEqual(lines, ['early', 'more']);
});

test('a stream read late past maxOutput is told what it lost', async () => {
  const p = spawn('sh', ['-c', 'seq 1 20000'], { maxOutput: 1000 });
  const r = await p.result;
  const omitted = [];
  p.stdout.on('omitted', (n) => omitted.push(n));
  const lines = [];
  for await (const line of p.stdout.lines()) lines.push(line);
  assert.equal(omitted.length, 1);
  assert.equal(omitted[0], r.stdoutOmittedBytes);
  assert.equal(p.stdout.omittedBytes, r.stdoutOmittedBytes);
  assert.ok(lines.includes(`[sup: ${r.stdoutOmittedBytes} bytes omitted]`), lines.join('|'));
  assert.equal(lines[0], '1');
  assert.equal(lines[lines.length - 1], '20000');
});

test('a stream nobody reads never holds the child back', async () => {
  const p = spawn('sh', ['-c', 'head -c 20000000 /dev/zero'], { maxOutput: 1 << 20 });
  const r = await p.result;
  assert.equal(r.raw.stdout.bytes, 20000000);
});

test('stdin as a Writable: 4 MiB through cat, with backpressure both ways', async () => {
  const p = spawn('cat');
  const data = crypto.randomBytes(4 << 20);
  const out = [];
  p.stdout.on('data', (c) => out.push(c));
  const ended = finished(p.stdout);
  p.stdin.end(data);
  const r = await p.result;
  await ended;
  assert.ok(Buffer.concat(out).equals(data));
  assert.equal(r.raw.stdout.bytes, data.length);
});

test('stdin after the child ended: EPIPE, as child_process', async () => {
  const p = spawn('true');
  await p.result;
  const err = await new Promise((resolve) => {
    p.stdin.on('error', resolve);
    p.stdin.write('late');
  });
  assert.equal(err.code, 'EPIPE');
});

test('a pty: typed input, resize, Ctrl-C', async () => {
  const p = spawn('sh', ['-c', 'stty size; read x; stty size; echo "x=$x"; sleep 10'], { pty: { rows: 10, cols: 40 } });
  assert.equal(p.stderr, null);
  const seen = [];
  const it = p.stdout.lines()[Symbol.asyncIterator]();
  const next = async () => { const { value } = await it.next(); seen.push(value); return value; };
  assert.equal(await next(), '10 40');
  p.resize(20, 60);
  p.stdin.write('typed\n');
  while (!seen.includes('x=typed')) await next();
  assert.ok(seen.includes('20 60'), seen.join('|'));
  p.stdin.write('\x03');
  const r = await p.result.catch((e) => e);
  assert.equal(r.signal, 'SIGINT');
  assert.equal(r.outcome, 'signaled');
  assert.throws(() => p.resize(5, 5), { code: 'ESRCH' });
});

test('a large capture: raw is built when read, from the handle kept for it', async () => {
  const p = spawn('sh', ['-c', 'head -c 3000000 /dev/zero | tr "\\0" a; echo; echo tail'], { stdin: 'ignore' });
  const r = await p.result;
  assert.equal(r.stdout.length, 3000000 + 5);
  assert.equal(r.raw.stdout.bytes, 3000000 + 6);
  assert.ok(r.raw.stdout.captured.endsWith('a\ntail\n'));
  // A stream first read after the end still reads from the start.
  let n = 0;
  for await (const c of p.stdout) n += c.length;
  assert.equal(n, 3000000 + 6);
});
