// Node child_process peer: peer.js {spawn|capture} COUNT, printing one BENCH
// line (see ../README.md). spawn runs /bin/true with spawn() and stdout and
// stderr collected from 'data' events until 'close', as a Node program
// capturing a command would; capture counts SUP_BENCH_WRITER's stdout chunks.
'use strict';

const { spawn } = require('node:child_process');

const WARMUP = 5;

function fail(msg) {
  process.stderr.write(`peer_node: ${msg}\n`);
  process.exit(1);
}

function run(file, args, stdio, onChunk) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio });
    child.stdout.on('data', onChunk);
    if (child.stderr) child.stderr.on('data', onChunk);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${file} ended with ${signal || `exit ${code}`}`));
    });
  });
}

async function main(argv) {
  if (argv.length !== 2) {
    process.stderr.write('usage: peer.js {spawn|capture} COUNT\n');
    return 2;
  }
  const [mode, countArg] = argv;
  const count = /^[0-9]+$/.test(countArg) ? Number(countArg) : 0;
  if (count <= 0) {
    process.stderr.write(`peer_node: bad count '${countArg}'\n`);
    return 2;
  }
  const version = process.versions.node;
  if (mode === 'spawn') {
    const samples = [];
    const chunks = [];
    for (let i = 0; i < count + WARMUP; i++) {
      const t0 = process.hrtime.bigint();
      await run('/bin/true', [], ['ignore', 'pipe', 'pipe'], (c) => chunks.push(c));
      const us = Number(process.hrtime.bigint() - t0) / 1e3;
      if (i >= WARMUP) samples.push(us.toFixed(2));
    }
    process.stdout.write(`BENCH impl=node version=${version} mode=spawn count=${count} ` +
                         `samples_us=${samples.join(',')}\n`);
    return 0;
  }
  if (mode === 'capture') {
    const writer = process.env.SUP_BENCH_WRITER || '';
    if (!writer) {
      process.stderr.write('peer_node: SUP_BENCH_WRITER is not set\n');
      return 2;
    }
    let got = 0;
    const t0 = process.hrtime.bigint();
    await run(writer, [countArg], ['ignore', 'pipe', 'inherit'], (c) => { got += c.length; });
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    if (got !== count) fail(`read ${got} of ${count} bytes`);
    process.stdout.write(`BENCH impl=node version=${version} mode=capture count=${count} ` +
                         `bytes=${got} seconds=${secs.toFixed(6)}\n`);
    return 0;
  }
  process.stderr.write(`peer_node: unknown mode '${mode}'\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => fail(err.message),
);
