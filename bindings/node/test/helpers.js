'use strict';
// What the tests share: a fresh directory per test file, removed at exit.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

function scratch(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `tureen-node-${name}-`));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// The library's entry points, for the tests that run a child process.
const bindingPath = path.join(__dirname, '..');

module.exports = { scratch, bindingPath };
