// The package under test: the installed copy run-tests.sh made from the
// tarball (SUP_NODE_PACKAGE), else this checkout's (after npm install).
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const pkg = process.env.SUP_NODE_PACKAGE || path.join(__dirname, '..');
const sup = require(pkg);

// Whether a pid names a live process that is not a zombie.
function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function threads() {
  return fs.readdirSync('/proc/self/task').length;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(fn, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (fn()) return;
    await sleep(10);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

module.exports = { sup, pkg, alive, threads, sleep, until };
