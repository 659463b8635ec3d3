'use strict';
// Tureen for Node.js: a Store over the C library, JSON in and out as JS
// values. Short calls return their result; syncs, blob transfers,
// queryAsync and count return Promises and run on libuv's thread pool.
const native = require('./addon');
const { TureenError, Status } = require('./errors');

const opening = Symbol('opening');

// A failed sync's rejection carries its final state, as JSON text from the
// addon: made a value here like every other answer.
function parseState(error) {
  if (error instanceof TureenError && typeof error.state === 'string') error.state = JSON.parse(error.state);
  throw error;
}

function parsed(promise) {
  return promise.then(JSON.parse, parseState);
}

class Store {
  #handle;
  #listeners = new Set();

  constructor(token, handle) {
    if (token !== opening) throw new TypeError('use Store.open(path, options)');
    this.#handle = handle;
  }

  // options: {key}, {raw_key} or {unencrypted: true}, and the other
  // options of tureen_store_open (kdf_iter, create, ...).
  static open(path, options) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError('Store.open needs options: {key}, {raw_key} or {unencrypted: true}');
    }
    return new Store(opening, native.open(String(path), JSON.stringify(options)));
  }

  // Deletes a closed store's files: true, or false when there was none.
  static remove(path) {
    try {
      native.removeStore(String(path));
      return true;
    } catch (e) {
      if (e instanceof TureenError && e.code === 'NOT_FOUND') return false;
      throw e;
    }
  }

  // specs: [{path, type}], type "string", "integer", "floating" or "full_text".
  registerSoup(name, specs) {
    native.registerSoup(this.#handle, name, JSON.stringify(specs), null);
  }

  // entries: one object or an array (one transaction); returns them as stored.
  upsert(soup, entries, externalIdPath = null) {
    return JSON.parse(native.upsert(this.#handle, soup, JSON.stringify(entries), externalIdPath));
  }

  // As upsert, marking the entries as local changes for the next sync up.
  localUpsert(soup, entries, idField = null) {
    return JSON.parse(native.localUpsert(this.#handle, soup, JSON.stringify(entries), idField));
  }

  retrieve(soup, ids) {
    return JSON.parse(native.retrieve(this.#handle, soup, JSON.stringify(ids), null));
  }

  remove(soup, ids) {
    native.remove(this.#handle, soup, JSON.stringify(ids), null);
  }

  // One page of a query spec (SmartStore's shape), on this thread.
  query(spec, page = 0) {
    return JSON.parse(native.query(this.#handle, JSON.stringify(spec), page));
  }

  // The same off the event loop, for queries that take long.
  queryAsync(spec, page = 0) {
    return parsed(native.queryAsync(this.#handle, JSON.stringify(spec), page));
  }

  // How many entries (or Smart SQL rows) the query matches, over all pages.
  count(spec) {
    return native.count(this.#handle, JSON.stringify(spec));
  }

  // Resolve to the sync's final state; a failure rejects with a
  // TureenError whose .state is that state.
  syncDown(target, soup, options = {}) {
    return parsed(native.syncDown(this.#handle, JSON.stringify(target), soup, JSON.stringify(options)));
  }

  syncUp(target, soup, options = {}) {
    return parsed(native.syncUp(this.#handle, JSON.stringify(target), soup, JSON.stringify(options)));
  }

  resync(syncIdOrName) {
    return parsed(native.resync(this.#handle, String(syncIdOrName)));
  }

  // Blobs: the reference resolved is what entries hold ({digest, ...}).
  blobPut(bytes, contentType = null) {
    return parsed(native.blobPut(this.#handle, Buffer.from(bytes), contentType));
  }

  blobGet(digest) {
    return native.blobGet(this.#handle, digest);
  }

  blobImport(path, contentType = null) {
    return parsed(native.blobImport(this.#handle, String(path), contentType));
  }

  blobExport(digest, path) {
    return native.blobExport(this.#handle, digest, String(path));
  }

  // Resolves to true when a lazy sync awaited the blob and it was fetched.
  blobFetch(digest) {
    return native.blobFetch(this.#handle, digest);
  }

  // cb(event) on the JS thread for each commit to `soup` (null: every
  // soup). Returns {remove()}.
  listen(soup, cb) {
    return this.#listen(native.listen, soup, cb);
  }

  // cb(page) with the query's first page now and whenever it changes.
  liveQuery(spec, cb) {
    return this.#listen(native.liveQuery, JSON.stringify(spec), cb);
  }

  #listen(start, what, cb) {
    if (typeof cb !== 'function') throw new TypeError('the callback must be a function');
    // Events already queued for the JS thread when remove() or close()
    // runs are dropped, so none arrives after either returned.
    const listener = {
      active: true,
      remove: () => {
        if (!listener.active) return;
        listener.active = false;
        this.#listeners.delete(listener);
        native.listenerRemove(handle);
      },
    };
    const handle = start(this.#handle, what, (json) => {
      if (listener.active) cb(JSON.parse(json));
    });
    this.#listeners.add(listener);
    return { remove: listener.remove };
  }

  // Waits for calls in flight on the thread pool: queries are interrupted
  // and syncs cancelled (their Promises reject with code CANCELLED), other
  // calls finish first. Listeners are removed. Later calls throw MISUSE.
  close() {
    native.close(this.#handle);
    for (const listener of this.#listeners) listener.active = false;
    this.#listeners.clear();
  }
}

module.exports = { Store, TureenError, Status, version: native.version };
