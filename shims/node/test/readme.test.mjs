// The README's example runs as it stands (an ES module, `import from 'sup'`).
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = process.env.SUP_NODE_PACKAGE || path.join(here, '..');

test('the README example', async () => {
  const readme = fs.readFileSync(path.join(here, '..', 'README.md'), 'utf8');
  const m = readme.match(/<!-- run-tests\.sh: example -->\n```js\n([^]*?)```/);
  assert.ok(m, 'README.md has a marked example');
  assert.ok(m[1].split('\n').length <= 22, 'about 20 lines');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sup-node-readme-'));
  const file = path.join(dir, 'example.mjs');
  const body = m[1].replace("from 'sup'", `from ${JSON.stringify(pathToFileURL(path.join(pkg, 'index.js')).href)}`);
  fs.writeFileSync(file, `const seen = []; const show = (l) => seen.push(l); const keep = () => {};\n${body}\nconsole.log('lines', seen.length);\n`);
  try {
    const out = execFileSync(process.execPath, [file], { cwd: here, encoding: 'utf8', timeout: 30000 });
    assert.match(out, /^lines \d+$/m);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('named ES module imports', async () => {
  const mod = await import(pathToFileURL(path.join(pkg, 'index.js')).href);
  for (const name of ['run', 'spawn', 'Subprocess', 'SupError', 'version', 'uvVersion']) assert.ok(name in mod, name);
  assert.equal(createRequire(import.meta.url)(pkg).run, mod.run);
  assert.equal((await mod.run('echo', ['esm'])).stdout, 'esm');
});
