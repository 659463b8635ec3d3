'use strict';
// Listeners: the library's thread hands events to the JS thread; remove()
// and close() stop them, and the process can exit once none is active.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { Store } = require('..');
const { scratch, bindingPath } = require('./helpers');

const dir = scratch('listen');

function open(name) {
  const store = Store.open(path.join(dir, name), { key: 'k' });
  store.registerSoup('people', [{ path: 'name', type: 'string' }]);
  return store;
}

// Resolves with the next `count` values a listener pushes into `seen`.
function waitFor(seen, count, ms = 3000) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      if (seen.length >= count) {
        clearInterval(poll);
        resolve(seen.slice(0, count));
      } else if (Date.now() - started > ms) {
        clearInterval(poll);
        reject(new Error(`${seen.length} of ${count} events after ${ms} ms`));
      }
    }, 5);
  });
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('a listener receives each commit as an object on the JS thread, until removed', async () => {
  const store = open('listen.tureen');
  try {
    const seen = [];
    const listener = store.listen('people', (event) => seen.push(event));
    assert.equal(typeof listener.remove, 'function');
    const saved = store.upsert('people', [{ name: 'Ada' }, { name: 'Grace' }]);
    store.remove('people', [saved[0]._soupEntryId]);
    const [created, deleted] = await waitFor(seen, 2);
    assert.deepEqual(created, {
      soup: 'people',
      created: saved.map((e) => e._soupEntryId),
      updated: [],
      deleted: [],
      origin: 'app',
      cleared: false,
    });
    assert.deepEqual(deleted.deleted, [saved[0]._soupEntryId]);

    listener.remove();
    listener.remove(); // a second remove does nothing
    store.upsert('people', { name: 'Linus' });
    await pause(200);
    assert.equal(seen.length, 2);
  } finally {
    store.close();
  }
});

test('a listener on every soup, and one on another soup that stays quiet', async () => {
  const store = open('every.tureen');
  try {
    store.registerSoup('pets', [{ path: 'name', type: 'string' }]);
    const all = [];
    const quiet = [];
    store.listen(null, (event) => all.push(event.soup));
    store.listen('pets', (event) => quiet.push(event));
    store.upsert('people', { name: 'Ada' });
    assert.deepEqual(await waitFor(all, 1), ['people']);
    await pause(100);
    assert.deepEqual(quiet, []);
  } finally {
    store.close();
  }
});

test('a live query delivers its first page, then each change of it', async () => {
  const store = open('live.tureen');
  try {
    const pages = [];
    const live = store.liveQuery({ queryType: 'all', soupName: 'people', indexPath: 'name' }, (page) =>
      pages.push(page.map((e) => e.name)),
    );
    assert.deepEqual(await waitFor(pages, 1), [[]]);
    store.upsert('people', { name: 'Grace' });
    assert.deepEqual(await waitFor(pages, 2), [[], ['Grace']]);
    live.remove();
  } finally {
    store.close();
  }
});

test('a listener on a malformed soup name throws INVALID', () => {
  const store = open('bad.tureen');
  try {
    assert.throws(() => store.listen('no spaces allowed', () => {}), { code: 'INVALID' });
    assert.throws(() => store.listen('people'), TypeError);
  } finally {
    store.close();
  }
});

test('close stops the listeners; no event arrives afterwards', async () => {
  const store = open('close.tureen');
  const seen = [];
  const listener = store.listen('people', (event) => seen.push(event));
  store.upsert('people', { name: 'Ada' });
  store.close();
  await pause(150);
  assert.deepEqual(seen, []);
  listener.remove(); // already stopped by close: nothing to do
});

// A child process must end by itself: a live listener would hold its event
// loop open, so this fails (by the timeout) if remove or close leaks one.
for (const [how, ending] of [
  ['removed', 'l.remove(); s.close();'],
  ['left to close', 's.close();'],
]) {
  test(`a process whose listener was ${how} exits on its own`, () => {
    const script = `
      const { Store } = require(${JSON.stringify(bindingPath)});
      const s = Store.open(${JSON.stringify(path.join(dir, `exit-${how.replace(/ /g, '-')}.tureen`))}, { key: 'k' });
      s.registerSoup('people', [{ path: 'name', type: 'string' }]);
      let got = 0;
      const l = s.listen('people', () => {
        got++;
        ${ending}
        console.log('events', got);
      });
      s.upsert('people', { name: 'Ada' });`;
    const child = spawnSync(process.execPath, ['-e', script], { timeout: 10000, encoding: 'utf8' });
    assert.equal(child.error, undefined, `the child did not exit: ${child.stderr}`);
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout.trim(), 'events 1');
  });
}

test("what a listener's callback throws reaches 'uncaughtException'", () => {
  const script = `
    const { Store } = require(${JSON.stringify(bindingPath)});
    const s = Store.open(${JSON.stringify(path.join(dir, 'throws.tureen'))}, { key: 'k' });
    s.registerSoup('people', [{ path: 'name', type: 'string' }]);
    process.on('uncaughtException', (e) => {
      console.log('caught', e.message);
      s.close();
    });
    s.listen('people', () => { throw new Error('from the callback'); });
    s.upsert('people', { name: 'Ada' });`;
  const child = spawnSync(process.execPath, ['-e', script], { timeout: 10000, encoding: 'utf8' });
  assert.equal(child.error, undefined, `the child did not exit: ${child.stderr}`);
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout.trim(), 'caught from the callback');
});
