'use strict';
// Opening, keys, soups, entries and queries on the JS thread, and the
// errors they throw.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { Store, TureenError, Status } = require('..');
const { scratch } = require('./helpers');

const dir = scratch('store');
const contacts = [
  { path: 'name', type: 'string' },
  { path: 'age', type: 'integer' },
];

test('the status names come from the library, with their numbers', () => {
  assert.deepEqual(Status, {
    OK: 0, MISUSE: 1, INVALID: 2, NOT_FOUND: 3, KEY: 4, CORRUPT: 5, IO: 6, BUSY: 7, CONSTRAINT: 8,
    QUERY: 9, NETWORK: 10, HTTP: 11, CONFLICT: 12, CANCELLED: 13, INTERNAL: 99,
  });
  assert.ok(Object.isFrozen(Status));
});

test('a wrong key is a TureenError with code KEY; the right key opens the store', () => {
  const file = path.join(dir, 'keyed.tureen');
  Store.open(file, { key: 'correct horse' }).close();
  assert.throws(() => Store.open(file, { key: 'wrong guess' }), (e) => {
    assert.ok(e instanceof TureenError);
    assert.ok(e instanceof Error);
    assert.equal(e.name, 'TureenError');
    assert.equal(e.code, 'KEY');
    assert.equal(e.status, 4);
    assert.match(e.message, /wrong key/);
    return true;
  });
  const store = Store.open(file, { key: 'correct horse' });
  store.close();
});

test('a raw key opens what it made; no way of keying is refused', () => {
  const file = path.join(dir, 'raw.tureen');
  const rawKey = 'ab'.repeat(32);
  Store.open(file, { raw_key: rawKey }).close();
  Store.open(file, { raw_key: rawKey }).close();
  assert.throws(() => Store.open(file, { raw_key: 'cd'.repeat(32) }), { name: 'TureenError', code: 'KEY' });
  assert.throws(() => Store.open(path.join(dir, 'nokey.tureen'), {}), { code: 'INVALID', status: 2 });
  assert.throws(() => Store.open(file), TypeError);
});

test('errors carry the library code of each failure and its message', () => {
  assert.throws(() => Store.open(path.join(dir, 'missing-dir', 'x.tureen'), { key: 'k' }), {
    code: 'IO',
    message: /missing-dir/,
  });
  assert.throws(() => Store.open(path.join(dir, 'absent.tureen'), { key: 'k', create: false }), {
    code: 'NOT_FOUND',
  });
  const store = Store.open(path.join(dir, 'errors.tureen'), { key: 'k' });
  try {
    assert.throws(() => store.query({ queryType: 'all', soupName: 'nope', indexPath: 'name' }), {
      code: 'NOT_FOUND',
      status: 3,
      message: /nope/,
    });
    store.registerSoup('people', contacts);
    assert.throws(() => store.query({ queryType: 'exact', soupName: 'people', indexPath: 'city', matchKey: 'x' }), {
      code: 'QUERY',
    });
    assert.throws(() => store.upsert('people', '[not json'), { code: 'INVALID' });
  } finally {
    store.close();
  }
});

test('entries go in and come back as JS values', () => {
  const store = Store.open(path.join(dir, 'roundtrip.tureen'), { key: 'k' });
  try {
    store.registerSoup('people', contacts);
    const saved = store.upsert('people', [
      { name: 'Ada', age: 36, langs: ['en', 'fr'] },
      { name: 'Linus', age: 28 },
    ]);
    assert.equal(saved.length, 2);
    assert.equal(typeof saved[0]._soupEntryId, 'number');
    assert.deepEqual(saved[0].langs, ['en', 'fr']);
    const one = store.upsert('people', { name: 'Grace', age: 85 });
    assert.equal(one.name, 'Grace');

    const page = store.query({ queryType: 'range', soupName: 'people', indexPath: 'age', beginKey: 30, order: 'descending' });
    assert.deepEqual(page.map((e) => [e.name, e.age]), [['Grace', 85], ['Ada', 36]]);

    const updated = store.upsert('people', { name: 'Ada', age: 37 }, 'name');
    assert.equal(updated._soupEntryId, saved[0]._soupEntryId);
    assert.deepEqual(store.retrieve('people', [saved[0]._soupEntryId]).map((e) => e.age), [37]);

    const second = store.query({ queryType: 'all', soupName: 'people', indexPath: 'name', pageSize: 2 }, 1);
    assert.deepEqual(second.map((e) => e.name), ['Linus']);

    store.remove('people', [saved[1]._soupEntryId]);
    assert.deepEqual(store.query({ queryType: 'exact', soupName: 'people', indexPath: 'name', matchKey: 'Linus' }), []);
  } finally {
    store.close();
  }
});

test('a closed store throws MISUSE, closing again included', () => {
  const store = Store.open(path.join(dir, 'closed.tureen'), { key: 'k' });
  store.registerSoup('people', contacts);
  store.close();
  assert.throws(() => store.upsert('people', { name: 'x' }), { code: 'MISUSE' });
  assert.throws(() => store.close(), { code: 'MISUSE' });
});

test('Store.remove deletes a closed store, says false when none is there, refuses an open one', () => {
  const file = path.join(dir, 'removed.tureen');
  const store = Store.open(file, { key: 'k' });
  assert.throws(() => Store.remove(file), { code: 'MISUSE' });
  store.close();
  assert.equal(Store.remove(file), true);
  assert.equal(Store.remove(file), false);
  assert.throws(() => Store.open(file, { key: 'k', create: false }), { code: 'NOT_FOUND' });
});
