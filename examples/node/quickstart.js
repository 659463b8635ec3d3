// Tureen quickstart in Node.js: open an encrypted store, see a wrong key
// refused, query a soup, watch a listener, run a long query off the event
// loop, and sync two stores through Kinto.
// Usage: node quickstart.js [directory] [KINTO_URL]   (`make node-test` runs it)
'use strict';
const path = require('node:path');
const { Store, TureenError } = require('../../bindings/node'); // require('tureen') once installed

async function main() {
  const dir = process.argv[2] || '/tmp';
  const kinto = process.argv[3] || process.env.TUREEN_KINTO_URL;
  const file = path.join(dir, 'quickstart-node.tureen');
  Store.remove(file); // a leftover from an earlier run, if any

  let store = Store.open(file, { key: 'correct horse battery staple' });
  store.close();
  try {
    Store.open(file, { key: 'wrong guess' });
    throw new Error('a wrong key was accepted');
  } catch (e) {
    if (!(e instanceof TureenError) || e.code !== 'KEY') throw e;
    console.log(`a wrong key is refused: ${e.code} (${e.status}): ${e.message}`);
  }
  store = Store.open(file, { key: 'correct horse battery staple' });

  store.registerSoup('contacts', [
    { path: 'name', type: 'string' },
    { path: 'city', type: 'string' },
  ]);
  // Events come from the library's thread, delivered on the JS thread.
  let listener;
  const firstEvent = new Promise((resolve) => {
    listener = store.listen('contacts', resolve);
  });
  store.upsert('contacts', [
    { name: 'Ada', city: 'London' },
    { name: 'Grace', city: 'New York' },
    { name: 'Linus', city: 'London' },
  ]);
  const londoners = store.query({ queryType: 'exact', soupName: 'contacts', indexPath: 'city', matchKey: 'London', orderPath: 'name' });
  console.log('in London:', londoners.map((c) => c.name).join(', '));
  if (londoners.map((c) => c.name).join() !== 'Ada,Linus') throw new Error('wrong Londoners');

  // Long queries, syncs and blobs return Promises: the event loop runs meanwhile.
  const [[count]] = await store.queryAsync({ queryType: 'smart', smartSql: 'SELECT count(*) FROM {contacts}' });
  const event = await firstEvent;
  console.log(`${count} contacts; the listener saw:`, JSON.stringify(event));
  if (count !== 3 || event.created.length !== 3) throw new Error('wrong count or event');
  listener.remove();

  if (kinto) {
    const target = {
      type: 'kinto', url: kinto, bucket: 'quickstart', collection: `contacts-node-${Date.now()}`,
      auth: { user: 'demo', password: 'demo-password' }, create: true,
    };
    store.registerSoup('notes', [{ path: 'id', type: 'string' }]);
    store.localUpsert('notes', [{ id: 'groceries', body: 'milk' }]);
    const up = await store.syncUp(target, 'notes', { name: 'up' });
    const phoneFile = path.join(dir, 'quickstart-node-phone.tureen');
    Store.remove(phoneFile);
    const phone = Store.open(phoneFile, { key: 'another key' });
    phone.registerSoup('notes', [{ path: 'id', type: 'string' }]);
    const down = await phone.syncDown(target, 'notes', { name: 'down' });
    const notes = phone.query({ queryType: 'all', soupName: 'notes', indexPath: 'id' });
    console.log(`sync up ${up.status}, sync down ${down.status}: the phone has`, notes.map((n) => n.body));
    if (notes.length !== 1 || notes[0].body !== 'milk') throw new Error('the note did not come down');
    phone.close();
  }
  store.close();
}

main().catch((e) => {
  console.error(e instanceof TureenError ? `${e.code}: ${e.message}` : e);
  process.exit(1);
});
