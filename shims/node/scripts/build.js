#!/usr/bin/env node
// Builds the addon at install time, offline: node-gyp (the one npm ships)
// against the Node headers already on this machine, with libsup's sources
// compiled in. `node scripts/build.js --vendor` only copies the sources
// (npm pack's prepack step).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const here = path.resolve(__dirname, '..');
const vendor = path.join(here, 'vendor');

function die(message) {
  process.stderr.write(`sup: ${message}\n`);
  process.exit(1);
}

// In the repository (shims/node), the library's sources are ../../lib and
// ../../include: copied into vendor/ (git-ignored) so that the build, and
// the tarball npm pack makes, use one layout. Outside it, vendor/ came in
// the tarball.
function copyVendor() {
  const repo = path.resolve(here, '..', '..');
  const lib = path.join(repo, 'lib');
  const include = path.join(repo, 'include');
  if (!fs.existsSync(path.join(lib, 'api.cpp')) || !fs.existsSync(path.join(include, 'sup.h'))) {
    if (fs.existsSync(path.join(vendor, 'lib', 'api.cpp'))) return;
    die(`libsup's sources are missing: neither ${lib} nor ${path.join(vendor, 'lib')} holds api.cpp`);
  }
  fs.rmSync(vendor, { recursive: true, force: true });
  fs.mkdirSync(path.join(vendor, 'lib'), { recursive: true });
  fs.mkdirSync(path.join(vendor, 'include'), { recursive: true });
  for (const f of fs.readdirSync(lib)) {
    if (/\.(cpp|hpp|c|h)$/.test(f)) fs.copyFileSync(path.join(lib, f), path.join(vendor, 'lib', f));
  }
  fs.copyFileSync(path.join(include, 'sup.h'), path.join(vendor, 'include', 'sup.h'));
}

// The directory whose include/node holds node_api.h and uv.h: npm's
// --nodedir (npm_config_nodedir) when given, else the prefix of the node
// running this script (/usr for /usr/bin/node). node-api-headers alone
// would not do: it has no uv.h.
function nodeDir() {
  const given = process.env.npm_config_nodedir;
  const candidates = given ? [given] : [path.resolve(path.dirname(process.execPath), '..')];
  for (const dir of candidates) {
    const inc = path.join(dir, 'include', 'node');
    if (fs.existsSync(path.join(inc, 'node_api.h')) && fs.existsSync(path.join(inc, 'uv.h')) &&
        fs.existsSync(path.join(inc, 'common.gypi'))) return dir;
  }
  die(`Node's headers (node_api.h, uv.h, common.gypi) are not in ${candidates.map((d) => path.join(d, 'include', 'node')).join(' or ')}: ` +
      'install them (Debian: apt-get install libnode-dev, or the nodejs package from nodesource, which has them) ' +
      'or pass npm --nodedir=DIR naming a directory whose include/node has them');
}

// npm sets npm_config_node_gyp to the node-gyp it ships; elsewhere, look
// beside npm itself.
function nodeGyp() {
  const candidates = [process.env.npm_config_node_gyp];
  const npmDir = path.resolve(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm');
  candidates.push(path.join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  try {
    candidates.push(require.resolve('node-gyp/bin/node-gyp.js'));
  } catch {}
  for (const c of candidates) if (c && fs.existsSync(c)) return c;
  die('node-gyp is missing: it ships with npm (npm_config_node_gyp); install npm, or node-gyp');
}

function need(tool, what) {
  const r = spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
  if (r.status !== 0) die(`${tool} is missing: it is needed to build ${what} (Debian: apt-get install ${tool === 'make' ? 'make' : 'g++'})`);
}

function hasCjson() {
  return ['/usr/include/cjson/cJSON.h', '/usr/local/include/cjson/cJSON.h'].some((f) => fs.existsSync(f));
}

copyVendor();
if (process.argv.includes('--vendor')) process.exit(0);
need('make', 'the addon');
need('g++', "the addon (libsup's C++ sources)");
need('cc', 'the addon');
if (!hasCjson()) die('cJSON is missing: libsup parses its spec with it (Debian: apt-get install libcjson-dev)');
const python = ['python3', 'python'].find((p) => spawnSync('sh', ['-c', `command -v ${p}`]).status === 0);
if (!python) die('python3 is missing: node-gyp needs it (Debian: apt-get install python3)');

// Every CPU: libsup is some twenty C++ files.
const args = [nodeGyp(), 'rebuild', `--nodedir=${nodeDir()}`, `--python=${python}`, '--jobs=max'];
if (process.env.SUP_NODE_DEBUG) args.push('--debug');
const r = spawnSync(process.execPath, args, { cwd: here, stdio: 'inherit', env: { ...process.env, npm_config_offline: 'true' } });
if (r.status !== 0) die(`building the addon failed (node-gyp exited with ${r.status ?? r.signal})`);
const sentinel = path.join(here, 'build', 'Release', 'sup-sentinel');
if (!fs.existsSync(sentinel)) die(`the build made no ${sentinel}`);
