'use strict';
// Syncs against a real Kinto (make node-test starts one and sets
// TUREEN_KINTO_URL): Promises that resolve to the sync's state, or reject
// with a TureenError carrying it.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { Store, TureenError } = require('..');
const { scratch } = require('./helpers');

const dir = scratch('sync');
const url = process.env.TUREEN_KINTO_URL;

function target(collection, base = url) {
  return {
    type: 'kinto',
    url: base,
    bucket: 'node-tests',
    collection: `${collection}-${process.pid}-${Date.now()}`,
    auth: { user: 'node', password: 'node-password' },
    create: true,
  };
}

function device(name) {
  const store = Store.open(path.join(dir, `${name}.tureen`), { key: 'k' });
  store.registerSoup('notes', [
    { path: 'id', type: 'string' },
    { path: 'title', type: 'string' },
  ]);
  return store;
}

test('a Kinto is there (make node-test starts it)', () => {
  assert.match(url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/v1$/, 'TUREEN_KINTO_URL is not set');
});

test('sync up from one store, sync down into another', async () => {
  const laptop = device('laptop');
  const phone = device('phone');
  try {
    const where = target('notes');
    laptop.localUpsert('notes', [
      { id: 'groceries', title: 'Groceries', body: 'milk' },
      { id: 'trip', title: 'Trip', body: 'book a train' },
    ]);
    const up = laptop.syncUp(where, 'notes', { name: 'up' });
    assert.ok(up instanceof Promise);
    const upState = await up;
    assert.equal(upState.status, 'DONE');
    assert.equal(upState.name, 'up');

    const downState = await phone.syncDown(where, 'notes', { name: 'down' });
    assert.equal(downState.status, 'DONE');
    const notes = phone.query({ queryType: 'all', soupName: 'notes', indexPath: 'id' });
    assert.deepEqual(notes.map((n) => [n.id, n.title, n.body]), [
      ['groceries', 'Groceries', 'milk'],
      ['trip', 'Trip', 'book a train'],
    ]);

    // Again by name: only what changed since comes down.
    laptop.localUpsert('notes', { id: 'trip', title: 'Trip', body: 'train booked' });
    assert.equal((await laptop.resync('up')).status, 'DONE');
    assert.equal((await phone.resync('down')).status, 'DONE');
    const trip = phone.query({ queryType: 'exact', soupName: 'notes', indexPath: 'id', matchKey: 'trip' });
    assert.equal(trip[0].body, 'train booked');
  } finally {
    laptop.close();
    phone.close();
  }
});

test('sync events reach a listener with origin sync', async () => {
  const store = device('listened');
  const other = device('writer');
  try {
    const where = target('events');
    other.localUpsert('notes', { id: 'n1', title: 'One' });
    await other.syncUp(where, 'notes', { name: 'up' });
    const origins = [];
    const listener = store.listen('notes', (event) => origins.push(event.origin));
    await store.syncDown(where, 'notes', { name: 'down' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    listener.remove();
    assert.ok(origins.length > 0);
    assert.ok(origins.every((o) => o === 'sync'), origins.join());
  } finally {
    store.close();
    other.close();
  }
});

test('a sync to a server that is not there rejects with NETWORK and its state', async () => {
  const store = device('offline');
  try {
    store.localUpsert('notes', { id: 'n1', title: 'One' });
    const nowhere = target('nowhere', 'http://127.0.0.1:9/v1');
    await assert.rejects(store.syncUp(nowhere, 'notes', { name: 'up' }), (e) => {
      assert.ok(e instanceof TureenError);
      assert.equal(e.code, 'NETWORK');
      assert.equal(e.state.status, 'FAILED');
      assert.equal(e.state.name, 'up');
      return true;
    });
    await assert.rejects(store.syncDown(target('x'), 'no-such-soup', {}), { code: 'NOT_FOUND' });
    await assert.rejects(store.resync('never-defined'), { code: 'NOT_FOUND' });
  } finally {
    store.close();
  }
});

test('close with a sync waiting on the server: the sync rejects with CANCELLED', async () => {
  const net = require('node:net');
  // A server that accepts and never answers, so the sync is still in flight.
  const silent = net.createServer(() => {});
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const store = device('cancelled');
  try {
    const running = store.syncDown(target('silent', `http://127.0.0.1:${silent.address().port}/v1`), 'notes', {
      name: 'down',
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    store.close();
    assert.ok(Date.now() - started < 5000);
    await assert.rejects(running, { code: 'CANCELLED' });
  } finally {
    silent.close();
  }
});
