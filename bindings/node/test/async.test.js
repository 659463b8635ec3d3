'use strict';
// The calls that return Promises: they run on libuv's thread pool, so the
// event loop goes on while they work, and closing the store settles them.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Store, TureenError } = require('..');
const { scratch } = require('./helpers');

const dir = scratch('async');

// A Smart SQL query that counts to n: about a quarter second per million here.
function counting(n) {
  return {
    queryType: 'smart',
    smartSql: `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${n}) SELECT count(*) FROM c`,
    pageSize: 1,
  };
}

function open(name) {
  const store = Store.open(path.join(dir, name), { key: 'k' });
  store.registerSoup('people', [{ path: 'name', type: 'string' }]);
  store.upsert('people', [{ name: 'Ada' }, { name: 'Grace' }, { name: 'Linus' }]);
  return store;
}

test('queryAsync and count resolve to what query answers', async () => {
  const store = open('query.tureen');
  try {
    const spec = { queryType: 'all', soupName: 'people', indexPath: 'name', pageSize: 2 };
    const pending = store.queryAsync(spec, 1);
    assert.ok(pending instanceof Promise);
    assert.deepEqual(await pending, store.query(spec, 1));
    assert.deepEqual((await pending).map((e) => e.name), ['Linus']);
    assert.equal(await store.count(spec), 3);
    assert.deepEqual(await store.queryAsync(counting(1000)), [[1000]]);
  } finally {
    store.close();
  }
});

test('a failing Promise rejects with a TureenError read on the worker thread', async () => {
  const store = open('reject.tureen');
  try {
    await assert.rejects(store.queryAsync({ queryType: 'all', soupName: 'nope', indexPath: 'name' }), (e) => {
      assert.ok(e instanceof TureenError);
      assert.equal(e.code, 'NOT_FOUND');
      assert.match(e.message, /nope/);
      return true;
    });
    await assert.rejects(store.queryAsync({ queryType: 'smart', smartSql: 'DELETE FROM {people}' }), {
      code: 'QUERY',
      message: /DELETE/,
    });
  } finally {
    store.close();
  }
});

test('a long query leaves the event loop running', async () => {
  const store = open('long.tureen');
  try {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = Date.now();
    const rows = await store.queryAsync(counting(2000000));
    const took = Date.now() - started;
    clearInterval(timer);
    assert.deepEqual(rows, [[2000000]]);
    // Blocking, the timer could not fire before the query ended, and then
    // the await would resume first: no tick at all. A loaded machine slows
    // the timer, so a few ticks are asked for, not one per 5 ms.
    assert.ok(took >= 100, `the query took ${took} ms, too short to tell`);
    assert.ok(ticks >= 3, `${ticks} ticks in ${took} ms`);
  } finally {
    store.close();
  }
});

test('close with a query in flight: the query rejects with CANCELLED, close returns', async () => {
  const store = open('close.tureen');
  const running = store.queryAsync(counting(500000000));
  await new Promise((resolve) => setTimeout(resolve, 150));
  const started = Date.now();
  store.close();
  assert.ok(Date.now() - started < 2000);
  await assert.rejects(running, { code: 'CANCELLED' });
  await assert.rejects(store.queryAsync(counting(10)), { code: 'MISUSE' });
});

test('blobs: put, get, export and import round trip as Promises', async () => {
  const store = open('blobs.tureen');
  try {
    const bytes = Buffer.from(Array.from({ length: 70000 }, (_, i) => i % 251));
    const ref = await store.blobPut(bytes, 'application/x-test');
    assert.match(ref.digest, /^sha256-[0-9a-f]{64}$/);
    assert.equal(ref.length, bytes.length);
    const back = await store.blobGet(ref.digest);
    assert.ok(Buffer.isBuffer(back));
    assert.ok(back.equals(bytes));

    const file = path.join(dir, 'exported.bin');
    await store.blobExport(ref.digest, file);
    assert.ok(fs.readFileSync(file).equals(bytes));
    const imported = await store.blobImport(file, 'application/x-test');
    assert.equal(imported.digest, ref.digest);

    assert.equal((await store.blobGet((await store.blobPut(Buffer.alloc(0))).digest)).length, 0);
    assert.equal(await store.blobFetch(ref.digest), false);
    await assert.rejects(store.blobGet(`sha256-${'0'.repeat(64)}`), { code: 'NOT_FOUND' });
    await assert.rejects(store.blobGet('not-a-digest'), { code: 'INVALID' });
    await assert.rejects(store.blobImport(path.join(dir, 'no-such-file')), { code: 'NOT_FOUND' });
  } finally {
    store.close();
  }
});
