'use strict';
// The README's first program is the example that make node-test runs.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

test("the README's first program is examples/node/quickstart.js, word for word", () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const example = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'examples', 'node', 'quickstart.js'), 'utf8');
  const section = readme.split('## A first program')[1];
  assert.ok(section, 'no "A first program" section');
  const block = section.match(/```js\n([\s\S]*?)```/);
  assert.ok(block, 'no js block in the section');
  assert.equal(block[1], example);
});
