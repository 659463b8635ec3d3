/*
 * tureen.h - the C interface of libtureen, an embeddable offline-first data
 * engine: JSON documents in SQLCipher-encrypted stores.
 *
 * Conventions, for every function below unless its comment says otherwise:
 *
 *  - Each function returns an int status: TUREEN_OK (0) or one of the
 *    TUREEN_E_* codes. On error, tureen_errmsg() describes what failed.
 *  - Strings passed in are UTF-8, NUL-terminated, and borrowed for the call
 *    only: the library copies what it keeps. A NULL pointer where a value is
 *    required is TUREEN_E_MISUSE; bytes that are not UTF-8 are TUREEN_E_INVALID.
 *  - Structured values (options, results) are UTF-8 JSON text.
 *  - Results come back through out-parameters. A string result (char **out)
 *    is allocated by the library and owned by the caller, who releases it
 *    with tureen_free(). On error, *out is set to NULL.
 *  - Handles are opaque. A handle that is NULL, closed, or was never returned
 *    by the library gets TUREEN_E_MISUSE; it is never dereferenced.
 *  - Thread-safety: any thread may call any function, on any handle, at any
 *    time. Calls on one store are serialised by the library.
 *  - No call aborts the process: bad input is reported as a status.
 *  - The library is never unloaded: do not dlclose() it.
 */
#ifndef TUREEN_H
#define TUREEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version this header describes: major * 10000 + minor * 100 + patch.
 * tureen_version_number() returns the loaded library's; bindings compare. */
#define TUREEN_VERSION_NUMBER 100

/* Status codes. The values are fixed and will never change. */
#define TUREEN_OK             0  /* success */
#define TUREEN_E_MISUSE       1  /* NULL or closed handle, call out of order */
#define TUREEN_E_INVALID      2  /* invalid argument, malformed JSON, bad option */
#define TUREEN_E_NOT_FOUND    3  /* unknown soup, entry, sync, target or file */
#define TUREEN_E_KEY          4  /* wrong key, or the file is not a Tureen store */
#define TUREEN_E_CORRUPT      5  /* damaged database */
#define TUREEN_E_IO           6  /* disk full, permission denied, file system error */
#define TUREEN_E_BUSY         7  /* locked by another process past the timeout */
#define TUREEN_E_CONSTRAINT   8  /* e.g. an external id that matches several entries */
#define TUREEN_E_QUERY        9  /* Smart SQL or query spec error (message says where) */
#define TUREEN_E_NETWORK     10  /* could not reach the server */
#define TUREEN_E_HTTP        11  /* the server answered with an error status */
#define TUREEN_E_CONFLICT    12  /* a change conflicts with the server's copy */
#define TUREEN_E_CANCELLED   13  /* stopped on request */
#define TUREEN_E_INTERNAL    99  /* a bug, or an environment Tureen cannot work in */

/* An open store. Obtained from tureen_store_open, released by tureen_store_close. */
typedef struct tureen_store tureen_store;

/* ------------------------------------------------------------------------ */
/* Library                                                                   */
/* ------------------------------------------------------------------------ */

/* The library's version as "MAJOR.MINOR.PATCH". The string is static: do not
 * free it. Thread-safe. Errors: none (it never fails). */
const char *tureen_version(void);

/* The library's version as a number, to compare with TUREEN_VERSION_NUMBER.
 * Thread-safe. Errors: none (it never fails). */
int tureen_version_number(void);

/* The message for the last error returned to the calling thread, or "" when
 * its last call succeeded. The string belongs to the library and stays valid
 * until the same thread's next tureen_* call; copy it to keep it. Each thread
 * has its own message. Errors: none (it never fails, never returns NULL). */
const char *tureen_errmsg(void);

/* *name receives the name of a status code without its prefix: "OK" for
 * TUREEN_OK, "MISUSE" for TUREEN_E_MISUSE, ... "INTERNAL" (the names of the
 * defines above), so a binding takes them from the library instead of
 * copying the numbers. The string is static: do not free it. Thread-safe.
 * Errors: TUREEN_E_MISUSE (name NULL); TUREEN_E_INVALID (a number that is no
 * status code; *name is set to NULL). */
int tureen_status_name(int status, const char **name);

/* Releases memory the library returned through a char ** out-parameter.
 * NULL is allowed and does nothing. Any thread may free what any thread got.
 * Passing memory that did not come from the library is undefined behaviour.
 * Errors: none (it returns nothing). */
void tureen_free(void *ptr);

/* Logging. Off until set; the environment variable TUREEN_LOG (error,
 * warning, info or debug; or a number 0-4; C8o's names are taken too:
 * "trace" as debug, "fatal" as error, "none" as off) turns it on from the
 * start, to standard error.
 * Categories: "store", "query" (queries slower than 500 ms, as warnings),
 * "sync" (each page and batch committed, each sync's end, as info), "http"
 * (one line per request: method, URL with its query values left out, status,
 * bytes, milliseconds; as debug). Nothing logged ever holds a key, a token or
 * a password. */
#define TUREEN_LOG_OFF     0
#define TUREEN_LOG_ERROR   1
#define TUREEN_LOG_WARNING 2
#define TUREEN_LOG_INFO    3
#define TUREEN_LOG_DEBUG   4

/* A log line: `category` and `message` are borrowed for the call. */
typedef void (*tureen_log_fn)(void *ctx, int level, const char *category, const char *message);

/* Sends the library's log lines at `level` and more severe to fn (NULL:
 * standard error), for the whole process. fn is called on whichever thread
 * does the work being logged (the caller's, the listener thread, a sync's
 * download thread), so it must be thread-safe; it should not call tureen_*
 * functions. free_ctx (may be NULL) is called once when the library lets go
 * of ctx: after a later tureen_log_set, once no log call uses it any more.
 * Errors: TUREEN_E_INVALID (a level outside 0..4; ctx is not taken). */
int tureen_log_set(int level, tureen_log_fn fn, void *ctx, void (*free_ctx)(void *));

/* ------------------------------------------------------------------------ */
/* Stores                                                                    */
/* ------------------------------------------------------------------------ */

/* Opens the store file at `path`, creating it when it does not exist.
 *
 * `options_json` is a JSON object with exactly one way of keying:
 *   {"key": "passphrase"}      a passphrase, stretched with PBKDF2-HMAC-SHA1,
 *                              once per open (not per connection); the file
 *                              is what SQLCipher makes of that passphrase;
 *   {"raw_key": "<64 hex>"}    a 256-bit key used as is (no KDF: fast to open;
 *                              for keys from a keystore or KMS);
 *   {"unencrypted": true}      no encryption at all. Never implied: a missing
 *                              key is TUREEN_E_INVALID, not a plaintext store.
 * and optionally:
 *   "kdf_iter": N              PBKDF2 rounds for "key" (1..100000000). The
 *                              default is 256000. SQLCipher 3.4 only offers
 *                              PBKDF2-HMAC-SHA1 and defaults to 64000 rounds,
 *                              too few for a human passphrase today; 256000 is
 *                              SQLCipher 4's count and costs about 0.15 s per
 *                              open on a 2020s x86 core. The count is not stored
 *                              in the file: a store made with a custom kdf_iter
 *                              must always be opened with the same one, and the
 *                              default will never change.
 *   "busy_timeout_ms": N       how long to wait for another process's (or
 *                              handle's) lock before TUREEN_E_BUSY (default
 *                              5000); the wait tries again every 1 to 4 ms,
 *                              so a writer among busy ones gets its turn;
 *   "query_timeout_ms": N      how long one tureen_query or tureen_count may
 *                              run before it is stopped with TUREEN_E_QUERY
 *                              (the message names query_timeout_ms). Default
 *                              60000: far beyond any query an app waits for,
 *                              yet a runaway one (an endless recursive CTE)
 *                              cannot hold a thread for good. 0: no limit;
 *   "query_memory_mb": N       how much memory SQLite may give one tureen_query
 *                              or tureen_count (sorters, temp tables, values),
 *                              and how large the page it returns (of entries,
 *                              or of rows: Smart SQL, selectPaths) may grow;
 *                              past it the query fails with TUREEN_E_QUERY
 *                              (the message names query_memory_mb) and the
 *                              store goes on. Default 512; 0: no limit. The
 *                              page is always held to it; SQLite's memory only
 *                              when libsqlcipher was first initialized by
 *                              Tureen (a host that opened SQLCipher databases
 *                              itself before its first tureen_store_open).
 *                              SQLite's copy of a row counts too: an entry
 *                              larger than about half the budget may not be
 *                              readable by a query (tureen_retrieve reads it).
 *                              The answer of one tureen_retrieve is held to
 *                              it too, past its first entry;
 *   "create": false            fail with TUREEN_E_NOT_FOUND instead of creating;
 *   "changes_keep_ms": N       how long the change feed (tureen_changes) keeps
 *                              a change: default 2592000000 (30 days); 0: no
 *                              limit;
 *   "changes_keep_count": N    how many changes it keeps at most: default
 *                              100000; 0: no limit. Older changes go as this
 *                              handle writes: at its first write, then after
 *                              a sixteenth of the count (at least 256
 *                              changes) or a minute; each handle applies its
 *                              own limits.
 * Unknown members are TUREEN_E_INVALID, so a misspelt option is not ignored.
 *
 * The store uses WAL journaling. A handle whose writes fill the write-ahead
 * log past 4 MB starts one thread of its own, which lives until
 * tureen_store_close: it copies the log back into the file (a checkpoint)
 * beside the commits, so no write waits for that. It never calls the host.
 * While it catches up the -wal file may grow to about 32 MB; past that, a
 * commit checkpoints itself. As with SQLite's own connections, a handle
 * must not be used in a child process after fork(): open one there.
 * The directory must exist: creating it is the caller's job. The same file
 * may be opened more than once in one process; each call returns its own
 * handle.
 *
 * On success *out is a new handle, owned by the caller until
 * tureen_store_close. On error *out is NULL.
 *
 * Errors: TUREEN_E_MISUSE (path or out NULL); TUREEN_E_INVALID (bad options,
 * empty path); TUREEN_E_KEY (wrong key; the message also says when the file is
 * an unencrypted SQLite database, an encrypted file opened as unencrypted, a
 * file that cannot be an SQLCipher database, another application's database,
 * or a store written by a newer Tureen); TUREEN_E_IO (directory missing or
 * read-only, permission denied; the message names the path);
 * TUREEN_E_NOT_FOUND (no file and "create" is false); TUREEN_E_BUSY;
 * TUREEN_E_CORRUPT; TUREEN_E_INTERNAL (libsqlcipher.so.0 cannot be loaded, or
 * the process's SQLite cannot encrypt: Tureen refuses rather than write
 * plaintext).
 *
 * SQLCipher is loaded from libsqlcipher.so.0 at the first open, bound so that
 * a libsqlite3 the host also loaded can never serve Tureen's calls.
 */
int tureen_store_open(const char *path, const char *options_json, tureen_store **out);

/* Closes the store and invalidates the handle; later calls with it get
 * TUREEN_E_MISUSE (closing twice included). Queries running on other threads
 * are interrupted, and calls that talk to a server (syncs, cached fetches,
 * blob fetches) are cancelled at their next request, or within about a
 * second of the one in flight: they return TUREEN_E_CANCELLED (a sync ends
 * STOPPED, its state saved). Every other call in progress finishes first;
 * close returns only after all of them have returned (a callback target's
 * callable that never returns keeps close waiting). Called from a callback
 * of one of those calls, close does not wait for that call, which stops at
 * its next request. The WAL is checkpointed into the main file. A
 * transaction this thread opened (tureen_transaction_begin) is rolled back
 * first; one another thread has open makes close fail with
 * TUREEN_E_MISUSE, the handle still open (that thread must commit or roll
 * back first: closed, it could not). A call made on another thread while
 * close runs either finishes first (and what it registered, a callback
 * target or a credential refresher, is released with the store) or fails
 * with TUREEN_E_MISUSE.
 * Errors: TUREEN_E_MISUSE. */
int tureen_store_close(tureen_store *store);

/* Stops every tureen_query and tureen_count running on this store right now,
 * on any thread: each returns TUREEN_E_CANCELLED within a few milliseconds.
 * Queries started after this call are not affected, and writes never are.
 * Safe to call from any thread, including a signal-free watchdog thread, at
 * any time; interrupting when nothing runs does nothing.
 * Errors: TUREEN_E_MISUSE (NULL or closed handle). */
int tureen_store_interrupt(tureen_store *store);

/* Re-encrypts the store under a new key, given as {"key": ...} (with an
 * optional "kdf_iter") or {"raw_key": ...}; {"unencrypted": true} decrypts it,
 * and rekeying an unencrypted store encrypts it. Afterwards only the new key
 * opens the store. The handle stays open and usable.
 *
 * The data is copied into a new file under the new key, checked, and moved
 * over the store by an atomic rename: if the process dies at any point, the
 * store opens with exactly one of the two keys (the old one until the rename),
 * with all its data, and the next open removes the unfinished copy. The copy
 * needs as much free disk as the store. Reads of this handle running on other
 * threads finish first, and new ones wait until the rekey is done, then read
 * with the new key. No other handle (in this process or another) may have the
 * store open meanwhile: in this process that is TUREEN_E_MISUSE; another
 * process holding it is TUREEN_E_BUSY once busy_timeout_ms has passed.
 *
 * Errors: TUREEN_E_MISUSE (also inside a transaction this thread has open);
 * TUREEN_E_INVALID (bad options); TUREEN_E_IO; TUREEN_E_BUSY. On error the
 * store keeps its old key and stays open. */
int tureen_store_rekey(tureen_store *store, const char *options_json);

/* Sets *bytes to the space the store takes on disk: the database file, its
 * write-ahead log and its blob files (see "Blobs"). Errors: TUREEN_E_MISUSE. */
int tureen_store_size(tureen_store *store, int64_t *bytes);

/* Deletes a closed store: the file at `path` and its -wal, -shm and -journal
 * companions. No key is needed. Errors: TUREEN_E_MISUSE (path NULL, or the
 * store is open in this process); TUREEN_E_NOT_FOUND (no file at path; stray
 * companions are still removed); TUREEN_E_IO. */
int tureen_store_remove(const char *path);


/* Gives the space of deleted entries back to the file system: removes the
 * blobs no entry refers to that are older than the default grace period
 * (see tureen_blob_collect), then VACUUM and a truncating WAL checkpoint.
 * Needs free disk about the size of the store while it runs; writes wait
 * meanwhile, reads do not.
 * Errors: TUREEN_E_MISUSE (also inside a transaction this thread has open);
 * TUREEN_E_IO; TUREEN_E_BUSY. */
int tureen_store_compact(tureen_store *store);

/* Verifies the whole store: SQLite's integrity check, with every page
 * authenticated by SQLCipher as it is read. TUREEN_OK when sound; otherwise
 * TUREEN_E_CORRUPT with the first problems in the message (also when a page
 * cannot be decrypted or authenticated at all). Runs beside
 * writes (it checks the last committed state). Errors: TUREEN_E_MISUSE. */
int tureen_store_check(tureen_store *store);

/* ------------------------------------------------------------------------ */
/* Soups                                                                     */
/* ------------------------------------------------------------------------ */
/*
 * A soup is a named collection of JSON object entries with index specs:
 *   [{"path": "Name", "type": "string"}, {"path": "Owner.Age", "type": "integer"}]
 * Types: "string", "integer", "floating", "full_text". Paths are
 * case-sensitive, dot-separated member names ("Owner.Name"); they cannot
 * contain '{', '}', ':' or control characters, or have empty segments. A soup
 * has 1 to 900 specs (each is a column SQLite binds on every upsert).
 *
 * How an entry's value at a path becomes the indexed value:
 *  - a missing path, or JSON null, indexes NULL (the entry is not found by
 *    that index), whatever the type;
 *  - a path that meets an array continues into every element and yields every
 *    match: {"tags": [{"n": "a"}, {"n": "b"}]} at "tags.n" yields "a" and "b";
 *    a path ending on an array yields its elements;
 *  - string: a string as is; a number as its JSON text ("42", "1.5"); a
 *    boolean as "true" / "false"; an object as its JSON text; several values
 *    (or any path through an array) as the JSON array text of them: ["a","b"];
 *  - full_text: as string, except several values are joined by spaces, so
 *    each one is searchable;
 *  - integer: an integer; a floating number truncated toward zero; a number
 *    beyond the 64-bit range (1e30, 18446744073709551616) as the nearest
 *    limit, INT64_MAX or INT64_MIN (SmartStore's Java long conversion); a
 *    boolean as 1 / 0; a string holding a finite number ("42", " 7.9 ",
 *    "1e30") converted the same way; anything else (other strings, "NaN",
 *    objects, several values) NULL;
 *  - floating: a number; a boolean as 1.0 / 0.0; a string holding a finite
 *    number; anything else NULL.
 *
 * Soup names: a letter or '_', then letters, digits, '_', '-' or '.'; at most
 * 100 characters. Every function below taking a soup name returns
 * TUREEN_E_NOT_FOUND for a soup that does not exist, unless said otherwise.
 */

/* Creates a soup. Registering an existing soup with the same specs (in any
 * order) does nothing; with different specs it is TUREEN_E_INVALID (use
 * tureen_soup_alter). Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID (malformed
 * name, no specs or more than 900, unknown type, bad path, a repeated
 * spec). */
int tureen_soup_register(tureen_store *store, const char *soup, const char *index_specs_json);

/* Sets *exists to 1 when the soup exists, else 0. Errors: TUREEN_E_MISUSE. */
int tureen_soup_exists(tureen_store *store, const char *soup, int *exists);

/* Sets *json to the JSON array of soup names, sorted. Free it with
 * tureen_free. Errors: TUREEN_E_MISUSE. */
int tureen_soup_names(tureen_store *store, char **json);

/* Sets *json to the soup's index specs as a JSON array, in registration
 * order. Free it with tureen_free.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_NOT_FOUND (unknown soup). */
int tureen_soup_index_specs(tureen_store *store, const char *soup, char **json);

/* Replaces the soup's index specs. Indexes whose path and type are kept keep
 * their values. With `reindex` non-zero, a new index covers every entry at
 * once: it is computed from the stored entry by SQLite (an index on an
 * expression), so the alter reads every entry but rewrites none, and SQLite
 * keeps the index current on every later write. With `reindex` zero, a new
 * index is NULL for the existing entries (they are not found by it) until
 * tureen_soup_reindex, as in SmartStore. Entries, ids and dates are kept.
 *
 * Crash-safe: the intent is committed first and the soup is changed in one
 * transaction. If the process dies during an alter, the next
 * tureen_store_open finishes it, so the soup has the new specs and every
 * entry. If the alter fails (an error, not a crash) the soup is unchanged.
 * Reads on other threads continue during an alter; writes wait.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID (bad specs); TUREEN_E_NOT_FOUND. */
int tureen_soup_alter(tureen_store *store, const char *soup, const char *index_specs_json, int reindex);

/* Recomputes the values of the given indexed paths (a JSON array of path
 * strings) from every entry, in one transaction.
 * Errors: TUREEN_E_INVALID (a path that is not indexed); TUREEN_E_NOT_FOUND. */
int tureen_soup_reindex(tureen_store *store, const char *soup, const char *paths_json);

/* Removes every entry of the soup and keeps the soup; ids are not reused.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_NOT_FOUND (unknown soup);
 * TUREEN_E_INVALID ("syncs_soup", which belongs to the sync engine). */
int tureen_soup_clear(tureen_store *store, const char *soup);

/* Deletes the soup, its entries and its index specs.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_NOT_FOUND (unknown soup);
 * TUREEN_E_INVALID ("syncs_soup", which belongs to the sync engine). */
int tureen_soup_drop(tureen_store *store, const char *soup);

/* ------------------------------------------------------------------------ */
/* Entries                                                                   */
/* ------------------------------------------------------------------------ */

/* Inserts or updates entries: `entries_json` is one JSON object or an array
 * of them. An array is one transaction: all entries are written or none, and
 * the error message names the failing entry by its position ("entry 3: ...").
 *
 * Each entry gains "_soupEntryId" (integer, never reused in the soup) and
 * "_soupLastModifiedDate" (epoch milliseconds). Which entry is updated:
 *  - one carrying a non-null "_soupEntryId" updates that entry; if no entry
 *    has that id, it is inserted with a new id (SmartStore's behaviour);
 *  - else, with `external_id_path` (a string, integer or floating index path
 *    of the soup), the one entry whose indexed value equals the entry's is
 *    updated, and a new entry is inserted when none does. The entry's value
 *    there must not be missing or null (TUREEN_E_INVALID); several matching
 *    entries are TUREEN_E_CONSTRAINT. An entry inserted earlier in the same
 *    batch counts as a match. "_soupEntryId" as the path means by id.
 *  - else it is inserted.
 * `external_id_path` may be NULL.
 *
 * An entry's text is stored as given (its spacing and number spellings
 * kept) unless every reader seeing the same values needs it written out
 * again: a member name given twice (the last counts), a \u escape of a
 * printable ASCII character, an integer beyond 64 bits (kept as the nearest
 * double, as indexes and Smart SQL see it). Sync down keeps records' text by the
 * same rule.
 *
 * *json receives the entries as stored (one object or an array, as given);
 * pass json = NULL when the result is not needed (faster for large batches).
 * Free it with tureen_free.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID (malformed JSON, an entry that is
 * not an object, a bad external id path or value); TUREEN_E_CONSTRAINT;
 * TUREEN_E_NOT_FOUND; TUREEN_E_IO; TUREEN_E_BUSY. */
int tureen_upsert(tureen_store *store, const char *soup, const char *entries_json,
                  const char *external_id_path, char **json);

/* Sets *json to the JSON array of the entries with the ids in `ids_json` (a
 * JSON array of integers), in the order asked for (an id given twice is
 * returned twice); ids with no entry are skipped. Reads a consistent
 * snapshot and runs beside writes.
 * The answer is held to the store option query_memory_mb, as a query's page
 * is: once the entries after the first outgrow it, the call stops there
 * and fails with TUREEN_E_QUERY (the message names query_memory_mb; *json
 * is NULL), and the store goes on; ask for fewer ids at a time. The first
 * entry is always returned, however large, so any one entry can be read.
 * Free *json with tureen_free. Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID;
 * TUREEN_E_NOT_FOUND (unknown soup); TUREEN_E_QUERY (query_memory_mb). */
int tureen_retrieve(tureen_store *store, const char *soup, const char *ids_json, char **json);

/* Removes the entries with the ids in `ids_json` (a JSON array of integers),
 * in one transaction. Ids with no entry are ignored.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID. */
int tureen_remove(tureen_store *store, const char *soup, const char *ids_json);

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
/* ------------------------------------------------------------------------ */
/*
 * A query spec is a JSON object (SmartStore's shape):
 *   {"queryType": "all" | "exact" | "range" | "like" | "match",
 *    "soupName": "...", "indexPath": "...",
 *    "matchKey": v (exact; match: a full-text query, below), "beginKey": v,
 *    "endKey": v (range; null or missing means open-ended), "likeKey":
 *    "pat%" (like, SQL LIKE: % and _), "orderPath": "..." (default:
 *    indexPath; null: unordered; also "_soupEntryId",
 *    "_soupLastModifiedDate", "_soupCreatedDate"),
 *    "order": "ascending" | "descending", "pageSize": n (default 10)}
 * Keys are converted to the index's type by the index rules above. Keys are
 * bound as SQL parameters: quotes in them never change the statement.
 * Ordered results are ordered by the path, then by entry id, so pages never
 * overlap. "selectPaths": ["path", ...] on an entry query returns rows (JSON
 * arrays) of those paths' values instead of entries, read as {soup:path} is
 * in Smart SQL (below).
 *
 * Smart queries: {"queryType": "smart", "smartSql": "...", "args": [...],
 * "pageSize": n} run one SELECT over soups and return rows. In the SQL,
 * {soup} is the soup's table and {soup:path} a path's value: an indexed path
 * reads its index (so a path through arrays gives its index value, flattened
 * as above); any other path is read from the entry by SmartStore's
 * projection: objects and arrays come back as JSON, booleans as 1 / 0, and
 * an array met before the path's end gives the array of what each element
 * yields, elements yielding nothing left out, so the document's nesting
 * stays: {"d": [{"dd": [{"x": "a"}, {"x": "b"}]}, {"dd": [{"x": "c"}]}]} at
 * "d.dd.x" is [["a","b"],["c"]]; a path that leads nowhere (an array
 * yielding nothing included) is null. Also
 * {soup:_soup} (the entry, as a JSON object), {soup:_soupEntryId},
 * {soup:_soupLastModifiedDate}, {soup:_soupCreatedDate}. A table alias goes
 * before the reference: mgr.{employees:lastName}. Braces inside quoted
 * literals and comments are left alone. "?" parameters are bound from
 * "args" (strings, numbers, booleans, null), one per "?". Joins, aggregates,
 * GROUP BY and subqueries work. Only one read-only SELECT runs (or WITH
 * ... SELECT, or VALUES): INSERT, UPDATE, DELETE, DROP, ATTACH, PRAGMA,
 * EXPLAIN, a second statement, or a write in a CTE are TUREEN_E_QUERY; for
 * a statement that starts with another word, the message names that word.
 * So are an unknown soup and a malformed reference (the message gives the
 * character position). Smart SQL reads soup tables only (not Tureen's or
 * SQLite's own tables) and may not call Tureen's internal tureen_*
 * functions, fts3_tokenizer or load_extension. A soup
 * with full_text indexes also has {soup}_fts, the FTS4 table of those
 * paths, whose docid is {soup:_soupEntryId}: "... FROM {docs}, {docs}_fts
 * WHERE {docs}_fts.docid = {docs:_soupEntryId} AND {docs}_fts MATCH 'cat'"
 * searches with FTS4's own syntax. A statement may end with ';' or a
 * comment. tureen_count counts a smart query's rows;
 * tureen_remove_by_query does not take smart queries.
 *
 * Full-text ("match") queries search the soup's full_text indexes: all of
 * them when "indexPath" is null, else only that full_text path. The match key
 * uses SmartStore's syntax: words side by side must all occur (AND); "a OR b";
 * "a NOT b" (a without b); "pre*" (words starting with pre); "\"a phrase\"";
 * and {soup:path}:word to search one full_text path. Words are letters,
 * digits and '_', compared without case; other characters separate words.
 * The system SQLCipher's FTS4 negates single words only, so NOT before a
 * phrase or a {soup:path}:word, and {soup:path}:"a phrase", are refused
 * rather than answered wrongly (set "indexPath" to search a phrase in one
 * path). With "indexPath" set, a qualifier naming another path is refused.
 * A malformed key is TUREEN_E_QUERY with the character position.
 */

/* Sets *json to the JSON array of the entries on page `page_index` (from 0)
 * of the query. Pages are not snapshots: a change between two calls shows on
 * the next page read. Free *json with tureen_free.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_QUERY (malformed spec, a path with no
 * index, negative page); TUREEN_E_NOT_FOUND (unknown soup). */
int tureen_query(tureen_store *store, const char *query_spec_json, int page_index, char **json);

/* Sets *count to the number of entries the query matches (all pages); for a
 * smart query, the number of rows it returns. Errors: as tureen_query. */
int tureen_count(tureen_store *store, const char *query_spec_json, int64_t *count);

/* Removes every entry the query matches (every page, not one), in one
 * transaction. Errors: as tureen_query. */
int tureen_remove_by_query(tureen_store *store, const char *query_spec_json);

/* ------------------------------------------------------------------------ */
/* Sync                                                                      */
/* ------------------------------------------------------------------------ */

/*
 * A sync moves records between a soup and a server. Sync down fetches the
 * server's records into the soup; sync up sends the soup's local changes.
 * Every sync is kept as a sync state, an entry of the soup "syncs_soup"
 * (created on first use), and identified by its _soupEntryId (passed as a
 * decimal string) or by its optional unique name. The app may read
 * "syncs_soup" (queries, Smart SQL) but only the sync engine writes it:
 * tureen_upsert, tureen_remove, tureen_remove_by_query, tureen_soup_clear,
 * tureen_soup_drop, tureen_soup_alter, tureen_soup_register and the local
 * change functions refuse it with TUREEN_E_INVALID.
 *
 * Records. A record's id is the target's id field ("id" by default); the soup
 * must have a string index on it (sync down upserts by it). Records stored by
 * sync down carry "__local__", "__locally_created__", "__locally_updated__"
 * and "__locally_deleted__", all false. To change data offline, either set
 * these flags yourself (SmartSync's convention: "__local__": true plus one of
 * the three) or use tureen_local_upsert / tureen_local_delete, which set them
 * in the same transaction as the change and give a new record a client id.
 * A record sync up could not send keeps its flags and gets "__last_error__".
 * Any string is a valid record id: it goes into a URL as one percent-encoded
 * path segment, and an id made only of dots ("." or "..") has its dots
 * encoded too ("%2E%2E"), so no request ever leaves <collection url>/<id>
 * whatever id an app or a server planted; a server that refuses such an id
 * fails that record alone.
 *
 * Targets (target_json):
 *   {"type": "kinto", "url": "http://host:8888/v1", "bucket": "b",
 *    "collection": "c", "auth": {"user": "u", "password": "p"}}
 *      a Kinto server. "auth" may also be {"bearer": "token"} or omitted.
 *      "create": true creates the bucket and collection when missing.
 *      "since_overlap_ms" (default 5000, 0..86400000): a sync down from a
 *      position asks for the records from that long before it, so a record
 *      committed late with a lower stamp (Kinto's PostgreSQL trigger under
 *      concurrent writers, see packaging/kinto/README.md) is still found;
 *      records read again are applied as any other but not counted in
 *      "done"; those that leave a local change alone are said under
 *      "mergeMode". Once a run that began
 *      since_overlap_ms after the position last moved has completed, later
 *      runs read from the position again ("overlapUntil" in the state), so
 *      idle runs fetch nothing; a commit later than that is missed.
 *   {"type": "rest", "url": "https://api/items", ...}
 *      any JSON REST API; the members are listed in README's "REST targets"
 *      (where records sit, paging by header or cursor, since parameter,
 *      id and modification fields, tombstones, create by PUT or POST, update
 *      by PUT or PATCH, ETag or version concurrency). "kinto" is a preset of it.
 *      Its "concurrency" ({"ifMatch": "\"{}\""} or {"versionField": "rev"})
 *      sends each update and delete with the version of the base copy it was
 *      made against, so the server refuses it when its copy moved. Without
 *      it, every merge mode but OVERWRITE reads the server's copy first (a
 *      GET of the record) and compares its modification field with the
 *      base's: a copy that moved or is gone is treated as a refused
 *      precondition would be, so the modes keep their promises. A write the
 *      server takes between that read and the update is not seen: use
 *      "concurrency" where the API offers one. Its "blobs" says where the
 *      blobs records refer to are kept (see "Blobs").
 *   {"type": "callback", "name": "n"}
 *      host functions registered with tureen_target_register.
 * Common members: "headers": {...} extra request headers; "timeout_ms"
 * (default 30000) per request: each attempt ends within it, setting up
 * its connection (name lookup, TCP, TLS) included, which alone may take
 * at most timeout_ms or 10 s, the lesser. A blob's upload or download has
 * no total limit: once its connection is set up (within that limit), it
 * ends when less than 1 KiB moved within timeout_ms, at most about a
 * second later, so a large blob on a slow link still arrives, a slow
 * handshake is not taken for a stall, and a server that accepts and then
 * sends nothing, or stalls or trickles half way, still ends it (within
 * the connection's limit plus timeout_ms and that second). A request
 * that timed out or stalled is a network error, retried up to
 * max_retries, so a call may wait that many times as long, plus the
 * delays between; "verify_tls" (default true); "max_retries"
 * (default 5); "max_response_bytes" (default 67108864, 64 MiB; 1024..2^40):
 * the most one response may hold, headers and body counted after content
 * decoding, so a gzip bomb or an endless body cannot exhaust memory (past it
 * the request fails with TUREEN_E_HTTP naming max_response_bytes, and is not
 * retried; sync down parses a page of records in memory, a bounded multiple
 * of this size); "max_wait_ms" (default 60000; 0..3600000): the longest
 * pause a server's Retry-After or Backoff may impose on the call, see
 * "Errors and retries"; "upload_connections" (default 1; 1..16): how many
 * batches (or, without a batch endpoint, single requests) sync up may have
 * on the wire at once, each over its own connection and thread, for a
 * server with several workers; 1 sends them one after another. Batches
 * still commit in order with the state (those already answered when one's
 * turn comes in one transaction with it), so a crash or a cancel leaves
 * what it leaves with one connection (changes sent but not
 * recorded are sent again by the next run and recognised there); two
 * batches holding the same record are never on the wire together, and each
 * record ends (synced, conflict, failed) as it would over one connection.
 * When a batch ends the sync, the batches already answered after it are
 * still recorded. A credential refresher (see tureen_auth_register) may
 * then be called from these threads, one call at a time; "transformers":
 * ["name", ...] (kinto and rest targets): records pass through these
 * transformers, registered with tureen_transformer_register (see there).
 * Target URLs must be http:// or https://, without
 * spaces, control characters or credentials (give those in "auth"); header
 * names must be HTTP tokens and header values, like "bearer", hold no CR, LF
 * or other control character: anything else is TUREEN_E_INVALID before a
 * request is sent.
 *
 * Secrets. The target is kept whole inside the encrypted store, in a table
 * that neither queries nor Smart SQL can read. Every state the library shows
 * (returned, passed to progress callbacks, from tureen_sync_status, or read
 * from "syncs_soup") has "auth"'s "bearer" and "password" and every "headers"
 * value replaced by "<redacted>". Text a server sends back (an error
 * message or page) that repeats one of them (also a bearer token without
 * its scheme, and basic credentials as base64) has it replaced the same way
 * before it reaches an error, a state, an entry's "__last_error__" or the
 * log; values shorter than 3 characters are left as they are.
 *
 * A server's next-page link or cursor that names a page this run already
 * read fails the run (TUREEN_E_HTTP) instead of reading it again. A
 * conflict copy of a record (a 409/412's "conflictRecordPath", or the copy
 * fetched after one) that names another record fails that change alone:
 * it stays local and no conflict is recorded.
 *
 * A write whose answer never came (a process killed while the request was
 * out, a connection lost after the server's commit) stays a local change,
 * and Tureen keeps the copy it sent. What it promises then:
 *   - a create under a random UUID (version 4: the ids tureen_local_upsert
 *     and sync up give, and most apps') is never published twice. Before it
 *     is sent again, the server is asked for that id, tombstones included
 *     (Kinto: one GET). A tombstone means the create went through and was
 *     deleted since: the deletion stands, and reaches this store. Another
 *     copy than the one sent means another device wrote over it: the entry
 *     takes that copy, and nothing is sent. Sync down does the same in
 *     LEAVE_IF_CHANGED as in OVERWRITE. If the entry was changed here after
 *     the lost send, that change meets the other device's delete or write
 *     as any local change meets a remote one, by the merge mode (OVERWRITE
 *     publishes it; LEAVE_IF_CHANGED records a conflict). A create under an
 *     id the app chose may have been chosen on another device too: it is
 *     sent again as any create (with Kinto's If-None-Match: *, which a
 *     tombstone does not stop), and on a server that keeps no tombstones
 *     a deleted record cannot be told from one never created;
 *   - an update or a delete is sent again. A server that holds the very
 *     copy sent counts it as done, and a change made here after it goes on
 *     top of it in every merge mode (see "mergeMode"). A server that holds
 *     another copy cannot say whether it was written before or after the
 *     lost one arrived. The copy (or the delete) sent again unchanged goes
 *     with its base's precondition in every mode, OVERWRITE too, and
 *     another copy on the server is a conflict in OVERWRITE, and in
 *     MERGE_ACCEPT_YOURS where both changed a field: sending it would undo
 *     a write another device may have made, and been told was made, after
 *     the lost one.
 *     A change made here since is a new write, which the merge mode
 *     decides as for any remote change: OVERWRITE sends the local copy
 *     over it; the other modes compare it with the base (a conflict, or a
 *     merge), never overwriting it unseen.
 *   The same holds inside one run: a write request that failed after it
 *   may have reached the server (the connection broke once made; a 500,
 *   502 or 504) is not sent again as it was, neither by the target's
 *   retries nor by libcurl's own repeat of a request whose reused
 *   connection closed unanswered. Its changes go again as copies whose
 *   answer never came (above), after the retry's pause, up to the
 *   target's network retries; then the run fails and the next one goes
 *   on from there. A write sent while settling a failed precondition (a
 *   merge, OVERWRITE's copy over the server's) that fails so ends the run
 *   at once.
 *   Not covered: "fieldlist" syncs, whose sent copies are partial, and a
 *   "rest" target without "concurrency": it has no precondition to send.
 *
 * Options (options_json, may be NULL):
 *   "name": "contacts-down"   a unique name for the sync (else unnamed).
 *      Given again, with the same target, soup and options (compared as
 *      given, secrets included; for a target whose auth has "refresh", the
 *      credentials its refresher gave since do not count), the call runs
 *      that sync again as tureen_resync does, same results, events and
 *      errors ("start": false: returns its state, nothing run), so an app
 *      may make it at every start ($fh.sync's manage). Another target,
 *      soup or options under that name is TUREEN_E_INVALID, its message
 *      naming what differs and tureen_sync_update; a sync up under the
 *      name of a sync down (or the other way round) too;
 *   "mergeMode": for sync down "OVERWRITE" (default) or "LEAVE_IF_CHANGED"
 *      (records changed locally are kept). OVERWRITE replaces a record
 *      changed locally (edited or deleted) with the copy, or the deletion,
 *      the run receives, and clears its flags. A run from no position (a
 *      new sync, or one whose maxTimeStamp is still -1) receives every
 *      record the server holds and does so for each, whether the server
 *      changed it or not. A run from the sync's position (a resync)
 *      receives what changed since, and again the records at or just below
 *      the position (see tureen_resync and "since_overlap_ms"); it leaves
 *      a local change alone against the very copy the change was made from
 *      (read again, or this device's own sync up coming back, also written
 *      again under a new stamp: the server changed nothing; that stamp
 *      becomes the change's base) and against a deletion read again. Neither mode
 *      takes, over a local change, a copy the server holds that sync up
 *      sent from this store and no answer confirmed (a process killed
 *      while the request was out,
 *      a connection lost after the server's commit): that copy becomes the
 *      change's base. Nor is it a conflict for sync up in any mode: the
 *      change, made after it, is sent again on top of it, unmerged. Sync
 *      up keeps each copy it sends until an answer confirms one (not with
 *      "fieldlist", whose copies are partial). For sync up also
 *      "MERGE_ACCEPT_YOURS", "MERGE_FAIL_IF_CONFLICT", "MERGE_FAIL_IF_CHANGED",
 *      which compare the server copy with the base copy kept at sync down.
 *      On sync up every mode but OVERWRITE holds on every target: through
 *      the target's precondition, or by reading first where a "rest"
 *      target has no "concurrency" (see Targets). OVERWRITE sends without
 *      a precondition, except a copy an earlier run sent and no answer
 *      confirmed, sent again unchanged (see "A write whose answer never
 *      came" above). A sync up on a "kinto" or "rest" target none of whose
 *      requests connected (host not resolved, connection refused) counts
 *      as not having sent;
 *   "fieldlist": ["a", "b"]   sync up sends only these fields (and the id);
 *   "maxAttempts": n          sync up (default 5; 1..1000000): how many syncs
 *      in a row may send a change the server refuses; then it is no longer
 *      sent, counts as failed, and waits for tureen_sync_error_resolve;
 *   "start": false            define the sync without running it: the call
 *      returns its state with status NEW (and TUREEN_OK); tureen_resync or
 *      the sync loop runs it later, and it can be updated or deleted first.
 *
 * Sync state (*state_json, a JSON object):
 *   {"_soupEntryId", "type": "syncDown"|"syncUp", "name", "target",
 *    "soupName", "options", "status": "NEW"|"RUNNING"|"DONE"|"FAILED"|"STOPPED",
 *    "progress" (0-100), "done", "totalSize" (-1 when unknown), "maxTimeStamp"
 *    (epoch ms), "maxTimeStampText" (null, or the highest stamp as the server
 *    wrote it when that was a date-time),
 *    "startTime", "endTime" (epoch ms), "error" (null or a message),
 *    "synced", "failed", "conflicts" (counts) and "failedIds", "conflictIds"
 *    (soup entry ids), "failedRecordIds" (server ids of records sync down
 *    refused; null for one without an id), "recordErrors" (sync up: for the
 *    first 100 failed entries {"entryId", "id", "operation":
 *    "create"|"update"|"delete", "status" (the failure's status code by
 *    its name, as tureen_status_name gives it: "HTTP" for a change the
 *    server refused, "CONFLICT", a transformer's own status, "CORRUPT" or
 *    "KEY" for a record that does not decrypt, ...), "httpStatus" (a
 *    number, or null when the server gave none), "error" (a message)};
 *    sync down: the same for records a transformer failed on, "entryId"
 *    null when none is stored), "retryAt" (null, or the epoch ms before
 *    which the server asked not to be called again), "serverFlushed" (see
 *    tureen_sync_republish), "overlapUntil" (sync down with a since overlap:
 *    null once the window below maxTimeStamp has settled, else the epoch ms,
 *    this device's clock, after which a run that completes reads it for the
 *    last time), "requests" (the HTTP requests its last run made)}.
 * The counts are those of what was committed: a page or batch whose commit
 * failed counts for nothing.
 * A sync is DONE when every record went through, or (as SmartSync says)
 * when under LEAVE_IF_CHANGED the only records left are those it left alone
 * because the server changed them: they are counted in "conflicts", listed
 * by tureen_conflicts and announced by collision_detected. Otherwise, when
 * some records failed or are in conflict the others are still synced, the
 * status is FAILED, "error" says how many, and the call returns
 * TUREEN_E_HTTP (a record failed) or TUREEN_E_CONFLICT (conflicts only, under
 * the MERGE_FAIL_* modes).
 *
 * A change the server refuses keeps its local flags and gains
 * "__last_error__" (the message, as SmartSync), "__last_error_status__" (the
 * HTTP status as a number, or null), "__last_error_op__" ("create", "update"
 * or "delete") and "__sync_attempts__" (syncs in a row that failed to send
 * it); none of these is ever sent to the server, and a successful send or a
 * new local write clears them.
 *
 * Errors and retries. Network errors, HTTP 5xx but 501 (Not Implemented:
 * the server lacks the method, which asking again cannot change), 429 and
 * a 409 that carries Retry-After (Kinto's "integrity constraint violated,
 * please retry" under concurrent writers) are retried with exponential
 * backoff and jitter, honouring Retry-After (seconds or an HTTP-date) and
 * Backoff headers, up to max_retries (a network error in a run of the sync
 * loop: once at most, the loop tries again later); then the sync is FAILED
 * with TUREEN_E_NETWORK or TUREEN_E_HTTP. Sync up's writes are the
 * exception where the failure may have reached the server (a network
 * error once connected, a 500, 502 or 504): they are sent again as writes
 * whose answer never came, under preconditions (see "A write whose answer
 * never came" before tureen_sync_down), never as they were; changes the
 * server still answers 5xx then fail alone (their "__last_error_status__",
 * counted toward max_attempts), and the run goes on. A Retry-After
 * longer than the target's max_wait_ms ends the call at once with
 * TUREEN_E_HTTP: the message names the delay, and the state's "retryAt"
 * says when the server will take requests again. Kinto's Backoff (seconds) is remembered per
 * server by the store handle until it expires: every later request to that
 * server, in this run, a later call or the sync loop, waits for it, or ends
 * at once the same way when the rest of the pause is longer than max_wait_ms. HTTP 401 and 403 fail at once
 * with TUREEN_E_HTTP. A record the server rejects (4xx) fails alone.
 *
 * What sync down accepts. A record's modification field must be a JSON
 * integer from 0 to 2^53-1 (what a double holds exactly), or an RFC 3339
 * (ISO 8601) date-time string with its zone, from 1970 on:
 * "2026-11-24T10:15:30.123Z", "...+00:00", "...+0000" (Salesforce's
 * LastModifiedDate), "...-05:00". Date-times are ordered by the instant they
 * name, to the millisecond; maxTimeStamp holds that instant in epoch ms and
 * "maxTimeStampText" the server's own text, which a resync sends back as the
 * since parameter unchanged (an integer stamp goes back one less when the
 * parameter is exclusive, so records sharing it come again, and further by
 * the target's overlap: Kinto's "since_overlap_ms"; records read again are
 * applied, never undo a local change the server did not overtake, and are
 * not counted in "done"; a date-time
 * cannot be lowered without rewriting it, so with an exclusive parameter a
 * record written later in that same millisecond is missed: prefer an
 * inclusive one). A record without a usable id or with any other stamp (a
 * float, a boolean, null, missing, 9223372036854775807, a string that is no
 * date-time, a date-time without a zone, "2026-02-30T00:00:00Z") fails
 * alone: it is not stored, does not move maxTimeStamp, and is listed in
 * "failedRecordIds"; the sync ends FAILED. So does a record holding a blob
 * reference an upsert would refuse (see "Blobs": a "digest" that is not
 * "sha256-" and 64 lowercase hex digits, a "length" that is not an integer
 * of 0 or more), but its stamp moves maxTimeStamp: it comes again once the
 * server changes it. A page that lists a record
 * more than once applies only its copy with the latest stamp (the last of
 * equal stamps); the others count in "done" and are passed over.
 * A "next page" link from the server must stay on the target's collection
 * URL (same scheme, host, port and path; the query may change), else the
 * sync fails with TUREEN_E_HTTP and the link is not followed. On Kinto's
 * bucket "default" (an alias of the signed-in user's own bucket, whose id
 * Kinto's links name) a link may also name that collection in the bucket
 * the server root gives as "user.bucket", asked once, when a link first
 * needs it. A first sync
 * down (no maxTimeStamp yet) receives no tombstones, so it saves as
 * maxTimeStamp at most the collection's timestamp when its first page was
 * served (Kinto's ETag; a REST target's "snapshotHeader"), and once it has
 * read the whole feed, that timestamp itself, even when no record reached
 * it (an empty collection, or one whose latest changes are deletions): the
 * next resync then receives every deletion made since, also after a first
 * run that was killed and resumed. Kinto's feed is sorted by last_modified then id, so
 * records sharing a stamp across a page boundary are all received.
 *
 * What sync up counts as sent. A change is marked clean only when the
 * server's answer can be read: a 2xx whose body is JSON holding the record
 * (at "recordPath") with the record's id, or a 204 without a body. A 2xx that
 * is not JSON, is cut short or names no record leaves the change local, with
 * "__last_error__", and the sync FAILED. Kinto advertises how many requests
 * a /batch may hold (settings.batch_max_requests at the server root): sync up
 * reads it and never sends more per batch. MERGE_ACCEPT_YOURS and OVERWRITE
 * publish your copy again when the server deleted the record; the other
 * modes keep such a record as a conflict ("theirs" null).
 *
 * Crash safety. Creates carry client ids and are sent as PUT with
 * If-None-Match: *, so a retried create cannot make a second record; a
 * retried update or delete that the server already applied is recognised as
 * applied. A record is marked clean only after the server confirmed it, in
 * one transaction with its new base copy: kill the process at any point and
 * the next sync up (or tureen_resync) brings the server level with the soup.
 *
 * Progress. `progress`, when not NULL, is called on the calling thread with
 * the sync state JSON (borrowed for the call) after each page or batch and at
 * the end. `ctx` is passed through untouched. The callback must not call
 * tureen_* functions on the same store that write (reads are fine).
 *
 * Threading. A sync runs on the calling thread, beside reads and writes of
 * other threads (it writes in short transactions). Sync down from a "kinto"
 * or "rest" target downloads the next page on a helper thread of its own
 * while the calling thread commits the current one; the helper has ended
 * when the call returns, and it never calls host code: progress and
 * callback-target functions always run on the calling thread.
 * tureen_sync_cancel may be called from any thread.
 */

/* Progress callback: `state_json` is borrowed for the duration of the call. */
typedef void (*tureen_progress_fn)(void *ctx, const char *state_json);

/* Fetches every record of the target into `soup` and saves the sync state.
 * On return *state_json (may be NULL if unwanted) holds the final state, also
 * when the sync failed or was cancelled; free it with tureen_free.
 * Errors: TUREEN_E_MISUSE (also: a sync of that name running now, as for
 * tureen_resync); TUREEN_E_INVALID (bad target or options, a name an
 * existing sync has with another target, soup or options (see "name"), a
 * soup without an index on the id field, an engine's soup:
 * syncs_soup or cache_soup, refused before any state is saved; the same for
 * tureen_sync_up); TUREEN_E_NOT_FOUND
 * (unknown soup or callback target); TUREEN_E_NETWORK; TUREEN_E_HTTP;
 * TUREEN_E_CONFLICT; TUREEN_E_CANCELLED (status STOPPED); TUREEN_E_BUSY,
 * TUREEN_E_IO (the store could not be written: locked by another process
 * past busy_timeout_ms, a full disk).
 * A run saves its outcome (DONE, FAILED, STOPPED) at its end, trying
 * again while the store stays locked: three tries of busy_timeout_ms each
 * (one once tureen_store_close has begun). When it cannot be saved, the
 * call returns the run's own error, or the store's, with a message saying
 * the outcome is not saved yet; *state_json holds the outcome, which
 * tureen_sync_status and the list of syncs on this handle show. The
 * handle goes on trying on a thread of its own (pauses from 10 ms growing
 * to 1 s, each try waiting up to busy_timeout_ms), and saves it once the
 * store lets it, with no further call; at the latest when it next runs or
 * changes a sync, or in tureen_store_close (which ends that thread, after
 * its try under way). Until then other handles see the sync RUNNING, and
 * other processes refuse it as running now (see tureen_resync). What the
 * run synced is saved either way, page by page or batch by batch; if the
 * process ends first, the sync is one a killed process left RUNNING. */
int tureen_sync_down(tureen_store *store, const char *target_json, const char *soup, const char *options_json,
                     tureen_progress_fn progress, void *ctx, char **state_json);

/* Sends the soup's local changes (records with "__local__" true) to the
 * target: creates, updates and deletes, through the target's batch endpoint
 * when it has one (Kinto: 25 changes per request). Same arguments and
 * results as tureen_sync_down. Errors: as tureen_sync_down. */
int tureen_sync_up(tureen_store *store, const char *target_json, const char *soup, const char *options_json,
                   tureen_progress_fn progress, void *ctx, char **state_json);

/* Runs an existing sync again. A sync down fetches only what changed since
 * its maxTimeStamp (records sharing that timestamp are fetched again, so none
 * is lost), including deletions; a stopped or failed sync continues from its
 * last saved page. A sync up sends the changes made since.
 * A soup's syncs run one at a time, across every handle of the store and
 * every process (a sync down beside a sync up of its soup could take the
 * device's own change, sent but not yet recorded, for the server's):
 *   - the same sync running on another handle or in another process is
 *     refused as running now, until that run ends or its process is gone
 *     (then a sync up it left RUNNING is a crashed one, sent again here).
 *     A run that could not remove its claim at its end (the store locked
 *     past busy_timeout_ms, a full disk), or save its outcome (see
 *     tureen_sync_down), holds it until its handle's thread that tries
 *     again removes it once the store lets it (or the handle next claims
 *     a sync, or closes, or its process ends);
 *   - another sync of the soup running anywhere is waited for (the wait
 *     ends with it, with tureen_sync_cancel of this sync on this handle,
 *     or with tureen_store_close: then TUREEN_E_CANCELLED, nothing run,
 *     and *state_json holds the sync's state as it is: a new sync of
 *     tureen_sync_down or tureen_sync_up stays defined, status NEW, as
 *     one defined with "start": false, and runs with tureen_resync or the
 *     sync loop). The wait only reads the store: a writer holding it
 *     meanwhile, past busy_timeout_ms, does not end it;
 *     called from a callback of a running sync (a callback target's
 *     callable, a progress callback) or inside this thread's own
 *     transaction (tureen_transaction_begin), it is refused at once
 *     instead, as it would wait for itself.
 * The same holds for tureen_sync_down and tureen_sync_up (a new sync runs
 * once defined), tureen_sync_update, tureen_sync_delete,
 * tureen_sync_republish and tureen_clean_ghosts.
 * Errors: as tureen_sync_down; TUREEN_E_NOT_FOUND (no such sync);
 * TUREEN_E_MISUSE (the sync is running now, here or elsewhere; see above). */
int tureen_resync(tureen_store *store, const char *sync_id_or_name, tureen_progress_fn progress, void *ctx,
                  char **state_json);

/* Sets *state_json to the sync's state. Free it with tureen_free.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_NOT_FOUND. */
int tureen_sync_status(tureen_store *store, const char *sync_id_or_name, char **state_json);

/* Asks a running sync to stop. It stops between pages or batches, saves what
 * it has, and ends STOPPED (its call returns TUREEN_E_CANCELLED); a resync
 * continues it. Cancelling a sync that is not running does nothing;
 * one waiting for another sync of its soup stops waiting (see
 * tureen_resync: a new one stays defined, NEW).
 * A new sync given a "name" can be cancelled by that name as soon as its
 * tureen_sync_down / tureen_sync_up call has checked its arguments, even
 * before its state is saved: it then stops before its first page.
 * Any thread. Errors: TUREEN_E_MISUSE; TUREEN_E_NOT_FOUND (no such sync). */
int tureen_sync_cancel(tureen_store *store, const char *sync_id_or_name);

/* For a sync down: fetches the ids the server holds now and removes the
 * soup's records that are not local changes and that the server no longer
 * has. *removed receives how many were removed. Errors: as tureen_resync;
 * TUREEN_E_INVALID for a sync up. */
int tureen_clean_ghosts(tureen_store *store, const char *sync_id_or_name, int64_t *removed);

/* Local changes. tureen_local_upsert saves entries (an object or an array)
 * and marks them in the same transaction: an entry without "_soupEntryId" and
 * without a match on `id_field` (NULL: "id") is new, gets a client id when it
 * has none (a random UUID) and "__locally_created__"; otherwise the stored
 * entry is updated and gets "__locally_updated__" (a record created locally
 * and not yet synced stays "created"). *json (may be NULL) receives the
 * entries as stored, each as its own write stored it (a record given twice
 * shows both writes), as tureen_upsert answers. Errors: as tureen_upsert. */
int tureen_local_upsert(tureen_store *store, const char *soup, const char *entries_json, const char *id_field,
                        char **json);

/* tureen_local_upsert that merges, as SmartSync's StoreCache.save does: an
 * entry found stored (by "_soupEntryId", else by `id_field_or_null`, NULL:
 * "id") keeps the members the given entry does not name, and each member
 * given replaces the stored one (null included: it is set to null, not
 * removed); the merge is shallow, a member holding an object is replaced
 * whole. tureen_local_upsert instead replaces the entry (a member not given
 * is dropped). The entry is marked changed as tureen_local_upsert marks it
 * ("__locally_updated__", or still "created" when created locally and not
 * yet synced; "__last_error__" and the other error fields are cleared), in
 * the same transaction, and the same events follow (local_update_applied,
 * offline_update, soup listeners). An entry not found is created as
 * tureen_local_upsert creates it. *json (may be NULL) receives the entries
 * as stored, merged, free with tureen_free. Any thread.
 * Errors: as tureen_local_upsert: TUREEN_E_MISUSE; TUREEN_E_INVALID (bad
 * JSON, an entry that is no object, an engine's soup); TUREEN_E_NOT_FOUND
 * (unknown soup, a blob not in the store); TUREEN_E_CONSTRAINT (several
 * entries hold the id); TUREEN_E_BUSY, TUREEN_E_IO. Nothing is written
 * when an entry fails. */
int tureen_local_merge(tureen_store *store, const char *soup, const char *entries_json,
                       const char *id_field_or_null, char **json);

/* Marks entries (a JSON array of _soupEntryId) deleted locally: the next sync
 * up deletes them on the server, then from the soup. An entry created locally
 * is removed at once only when no sync up ever sent its create; once one was
 * sent (even by a sync that failed or was killed before the server answered)
 * the server may hold it, so it stays, marked deleted, until the next sync up
 * deletes it there by its client id (a 404 counts as deleted). An id given
 * twice counts once, as in tureen_remove. Its events ("recordId") name a
 * record by the id field the soup's last tureen_local_upsert was given
 * (kept in the store; "id" before any).
 * Errors: TUREEN_E_NOT_FOUND (an id that is not in the soup; nothing is
 * changed); TUREEN_E_INVALID ("syncs_soup"). */
int tureen_local_delete(tureen_store *store, const char *soup, const char *ids_json);

/* Records by their own id, as $fh.sync's doRead(uid) and doDelete(uid),
 * RhoConnect's find by object id and C8o's fs://.get / .delete by docid
 * name them: `record_ids_json` is a JSON array of the values the sync's id
 * field `id_field_or_null` (NULL: "id") holds, strings or numbers (converted
 * as the index converts what it holds: 7 finds "7" in a string index). The
 * id field must be a string, integer or floating index of the soup.
 *
 * tureen_local_read: *json receives the entries, as tureen_retrieve gives
 * them (with "_soupEntryId", and the local change flags: a record deleted
 * locally and not yet synced comes with "__locally_deleted__": true), in the
 * order asked for; an id no entry holds is skipped. The answer is held to
 * query_memory_mb past its first entry, as tureen_retrieve's. It reads a
 * snapshot, beside a writer. Free *json with tureen_free. Any thread.
 * Errors: TUREEN_E_MISUSE (NULL store, soup, ids or json); TUREEN_E_INVALID
 * (not an array of strings and numbers, the id field not such an index);
 * TUREEN_E_NOT_FOUND (unknown soup); TUREEN_E_CONSTRAINT (several entries
 * hold one id); TUREEN_E_QUERY (past query_memory_mb). */
int tureen_local_read(tureen_store *store, const char *soup, const char *id_field_or_null,
                      const char *record_ids_json, char **json);

/* tureen_local_delete of the records these ids name (see tureen_local_read):
 * the same marks, the same removal at once of a record created here whose
 * create was never sent, the same events (local_update_applied with the
 * record's id from `id_field_or_null`, offline_update, soup listeners). An
 * id given twice counts once. Any thread.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID (as tureen_local_read;
 * "syncs_soup"); TUREEN_E_NOT_FOUND (unknown soup, or an id no entry holds:
 * nothing is changed); TUREEN_E_CONSTRAINT (several entries hold one id);
 * TUREEN_E_BUSY, TUREEN_E_IO. */
int tureen_local_delete_records(tureen_store *store, const char *soup, const char *id_field_or_null,
                                const char *record_ids_json);

/* Conflicts: sync up with LEAVE_IF_CHANGED or a MERGE_FAIL_* mode, and sync
 * down with LEAVE_IF_CHANGED meeting a deletion, keep both copies and record
 * a conflict instead. *json receives the soup's conflicts as a JSON array:
 *   [{"entryId", "id", "syncId", "base", "theirs", "yours", "remoteChanges",
 *     "localChanges", "conflictingChanges"}]
 * "theirs" is null when the server deleted the record, "yours" when it was
 * deleted locally; the *Changes members are arrays of field names.
 * "theirs" is the server's latest copy seen: a later one that a sync up's
 * failed precondition or a LEAVE_IF_CHANGED sync down receives while the
 * conflict is open replaces it (with that sync's "syncId").
 * Errors: TUREEN_E_MISUSE; TUREEN_E_NOT_FOUND (unknown soup). */
int tureen_conflicts(tureen_store *store, const char *soup, char **json);

/* Resolves the conflict of entry `entry_id` of `soup`:
 *   "yours"   keep the local record: the next sync up overwrites the server's
 *             copy, or makes the record again where the server deleted it;
 *   "theirs"  replace the local record by the server's (or remove it when the
 *             server deleted it): nothing to send;
 *   "merged"  save `merged_json` (an object) as the local record: the next
 *             sync up sends it.
 * `merged_json` must be NULL except for "merged". Blobs the server's copy
 * refers to that the store lacks are awaited, as a lazy sync's are (see
 * "Blobs"); so are those of a copy sync up adopts from the server's answer.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID (bad resolution or merged
 * record, or "theirs" holding a blob reference an upsert would refuse);
 * TUREEN_E_NOT_FOUND (no conflict for that entry, or a merged record
 * referring to a blob neither stored nor awaited). */
int tureen_conflict_resolve(tureen_store *store, const char *soup, int64_t entry_id, const char *resolution,
                            const char *merged_json);

/* Callback targets: host functions doing SmartSync's custom-target work.
 * Each function gets `ctx`, a request (JSON, borrowed for the call) and
 * returns a status with, in *response, a JSON text that the host allocated.
 * The library reads it, then hands it back with release(ctx, response) exactly
 * once (for every non-NULL *response, whatever the status), so the host frees
 * it with its own allocator. Requests and responses:
 *   fetch   {"since": ms, a date-time text (when the highest stamp seen was
 *           one, as the host wrote it) or null, "cursor": value or null}
 *           -> {"records": [...], "cursor": value or null (last page),
 *               "total": count (optional)}; a deleted record is
 *               {"id": "...", "deleted": true}. "since" is the highest
 *               "last_modified" seen by earlier syncs: return records
 *               modified at or after it (those at it again are harmless).
 *   create  {"record": {...}, "ifMatch": null} -> {"record": server copy}
 *   update  {"record": {...}, "base": the server copy it was made against
 *           or null, "ifMatch": the base's "last_modified" as a string, or
 *           null to overwrite whatever the server holds}
 *           -> {"record": server copy}; or TUREEN_E_CONFLICT with
 *           {"record": the server's current copy, or null when it was deleted}
 *   remove  {"id": "...", "base": ..., "ifMatch": as for update}
 *           -> anything; TUREEN_E_NOT_FOUND means already gone (applied)
 * Return TUREEN_OK; TUREEN_E_NETWORK to have the call retried; TUREEN_E_HTTP,
 * TUREEN_E_INVALID or others to fail that record (page, for fetch), with an
 * optional {"error": "message"} response. Records use the id field "id" and
 * the modification field "last_modified" (an integer) unless the target JSON
 * sets "idField" / "modifiedField". Callbacks run on the thread that called
 * the sync function. */
typedef int (*tureen_host_fn)(void *ctx, const char *request_json, char **response);

/* The struct starts with its version so that it can grow without breaking
 * hosts built against this header: set `version` to TUREEN_CALLBACKS_VERSION
 * (TUREEN_CALLBACKS_INIT does), or registration fails with TUREEN_E_INVALID. */
#define TUREEN_CALLBACKS_VERSION 1

typedef struct tureen_callbacks {
    int version;                              /* TUREEN_CALLBACKS_VERSION */
    void *ctx;
    tureen_host_fn fetch;                     /* required */
    tureen_host_fn create;                    /* required for sync up */
    tureen_host_fn update;                    /* required for sync up */
    tureen_host_fn remove;                    /* required for sync up */
    void (*release)(void *ctx, char *response); /* required */
    void (*free_ctx)(void *ctx);              /* may be NULL; called once, when the library lets go */
} tureen_callbacks;

#define TUREEN_CALLBACKS_INIT {TUREEN_CALLBACKS_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, NULL}

/* Registers callback target `name` for this store handle (copying the
 * struct). Registering a name again replaces it: the old free_ctx is called
 * once no sync uses it, on the thread that lets go last: the one registering,
 * unregistering or closing the store, or the one whose sync was using it.
 * A registration running while tureen_store_close runs on another thread
 * either ends first, and close releases its target before it returns, or
 * fails with TUREEN_E_MISUSE without taking ctx (free_ctx is not called).
 * Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID (a version this library does not
 * know, a required function is NULL, bad name). */
int tureen_target_register(tureen_store *store, const char *name, const tureen_callbacks *callbacks);

/* Removes callback target `name`, waiting for a sync using it to finish, and
 * calls its free_ctx. Errors: TUREEN_E_NOT_FOUND. */
int tureen_target_unregister(tureen_store *store, const char *name);

/* Remote transformers (kinto.js's): a "kinto" or "rest" target's
 * "transformers": ["a", "b"] names transformers registered on the store
 * handle. Before a record is sent (create, update, and delete, whose
 * record is its tombstone {"id": "...", "deleted": true}) it is encoded
 * through them in list order (a, then b); every record the server sends
 * back (sync down's pages, tombstones included, the copies a write's
 * answer, a refused precondition or a read before a write brings, a
 * cached fetch's records) is decoded through them in reverse order (b,
 * then a). What the store keeps (entries, the server copies merges compare
 * with, conflicts' "theirs") is the decoded form, so merge modes,
 * "fieldlist" and conflicts work as without transformers; the server
 * holds the encoded form. A deletion sends only the id: its encoded
 * tombstone is not sent, but an encode error still keeps it local. A
 * "fieldlist" update is encoded and sent whole: its fields over the
 * server copy it was made against.
 *   encode  {"record": {...}} -> {"record": the record as the server is to
 *           hold it}
 *   decode  {"record": {...} as the server sent it} -> {"record": {...}}; a
 *           decoded record the target reads as a tombstone (Kinto's
 *           "deleted": true) is a deletion. A decoded record without the
 *           modification field gets the server's.
 * Both must keep the record's id field as it is. A function returns
 * TUREEN_OK and its response (a JSON text it allocated, handed back with
 * release(ctx, response) exactly once for every non-NULL response, as for
 * callback targets); TUREEN_E_NETWORK to be called again after a delay,
 * as a request is retried (up to the target's "max_retries"; still failing,
 * it fails the sync with TUREEN_E_NETWORK); any other status, with an
 * optional {"error": "message"}, or a response without a "record" object,
 * or a changed id, fails that record alone: a change stays local with
 * "__last_error__", a fetched record is not applied (its id in
 * "failedRecordIds"), and both are listed in the state's "recordErrors"
 * with the transformer's name in "error" and, in "status", the status it
 * returned ("INVALID" for a response without a record or a changed id);
 * the rest of the page or batch goes on and the sync ends FAILED. A change is sent by a later sync once its encode
 * succeeds; a fetched record that failed comes again when the server
 * changes it, or with a sync down from no position (its stamp counts).
 * The functions run on the thread running the sync (the caller's, or the
 * sync loop's; a cached fetch's on the thread of the call or of the
 * cache's refresher); with transformers, pages are not fetched ahead on
 * another thread and "upload_connections" is not used. A target naming a
 * transformer that is not registered fails with TUREEN_E_NOT_FOUND before
 * anything is saved or sent. */
#define TUREEN_TRANSFORMER_VERSION 1

typedef struct tureen_transformer {
    int version;                                /* TUREEN_TRANSFORMER_VERSION */
    void *ctx;
    tureen_host_fn encode;                      /* required: {"record": {...}} -> {"record": {...}} */
    tureen_host_fn decode;                      /* required: {"record": {...}} -> {"record": {...}} */
    void (*release)(void *ctx, char *response); /* required */
    void (*free_ctx)(void *ctx);                /* may be NULL; called once, when the library lets go */
} tureen_transformer;

#define TUREEN_TRANSFORMER_INIT {TUREEN_TRANSFORMER_VERSION, NULL, NULL, NULL, NULL, NULL}

/* Registers transformer `name` for this store handle (copying the struct).
 * Registering a name again replaces it: syncs that start later use the new
 * one, a sync running keeps the one it started with; the old free_ctx is
 * called once no sync uses it, on the thread that lets go last (the one
 * registering, removing or closing the store, or the one whose sync was
 * using it). Closing the store stops its syncs first, then releases its
 * transformers. Beside tureen_store_close: as tureen_target_register.
 * Errors: TUREEN_E_MISUSE (NULL or closed store, NULL name or struct);
 * TUREEN_E_INVALID (a version this library does not know, encode, decode
 * or release NULL, bad name). */
int tureen_transformer_register(tureen_store *store, const char *name, const tureen_transformer *t);

/* Removes transformer `name`: syncs that start later no longer find it
 * (TUREEN_E_NOT_FOUND); its free_ctx runs once no sync uses it.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_NOT_FOUND (no transformer of that name). */
int tureen_transformer_remove(tureen_store *store, const char *name);

/* End-to-end encryption: a kinto or rest target's member
 *   "encryption": {"keys": [{"id": "k2", "key": "<64 hex digits>"}, ...]}
 * encrypts every record before it is sent and decrypts every record the
 * server sends, so the server holds no entry value and no field name. Key
 * ids are 1 to 32 letters, digits, '-', '_' or '.', distinct; each key is
 * 256 bits. The first key encrypts; every listed key decrypts, so a new key
 * is rotated in by listing it first (then tureen_reencrypt).
 * On the server a record holds only
 *   {"id", "last_modified", "deleted" (tombstones), "enc": {"v": 1,
 *    "kid": key id, "n": nonce (base64), "c": ciphertext and tag (base64)}}
 * where "c" is the record's other members as one JSON text, sealed with
 * AES-256-GCM (OpenSSL's libcrypto, loaded at run time; no cipher of the
 * library's own) under a random 96-bit nonce, its associated data binding
 * the collection, the record's id and the key id. The collection is
 * "bucket/collection" on a kinto target (the server may move to another
 * URL) and the "url" on a rest target, which must keep "id",
 * "last_modified" and a "deleted": true tombstone (TUREEN_E_INVALID
 * otherwise). Tombstones are not encrypted (they hold nothing else).
 * Encryption is the last step of the target's "transformers" to encode
 * and the first to decode: the host's transformers see records in clear.
 * It runs on any of the sync's threads, so pages are still fetched ahead
 * (sync down decodes one page while the next is fetched) and
 * "upload_connections" still used.
 * A record the server sends that does not decrypt is a record error (as a
 * transformer's, named "encryption"): not applied, the rest of the page is,
 * the sync ends FAILED; its "recordErrors" entry's "status" says which
 * ("CORRUPT" or "KEY"):
 *   TUREEN_E_CORRUPT  the envelope was altered or truncated, is another
 *                     record's (moved to this id) or another collection's,
 *                     is malformed or missing (a record in clear);
 *   TUREEN_E_KEY      its key id is none of the target's keys.
 * What a hostile server can still do, undetected: send back an older
 * envelope of the same record (a rollback to an earlier version of it,
 * which is applied), withhold records or deletions, and read the record
 * ids, stamps, deletions, the lengths of the records and when they change.
 * An envelope of any size within "max_response_bytes" is a record or a
 * record error, never more.
 * Blobs on an encrypted target (kinto-attachment, or a rest target's
 * "blobs") are sealed too, streamed a 64 KiB chunk at a time (memory does
 * not grow with a blob's size): AES-256-GCM under a key of the blob's own
 * (HMAC-SHA256 of the first key and a random salt), each chunk
 * authenticated with its place and whether it is the last. The entry's
 * reference (its plaintext "digest", "length", "content_type") travels only
 * inside the sealed record. On the server a blob goes by a keyed name,
 * HMAC-SHA256(key, its digest) in hex: a kinto-attachment record of that
 * id holding the sealed bytes as "<name>.bin", application/octet-stream; a
 * rest target's "{hex}" is that name, "{digest}" "hmac-sha256-<name>", and
 * the body application/octet-stream (a server that checks that a blob's
 * bytes hash to its name refuses them: it cannot host sealed blobs). Two
 * records sharing a blob share its
 * upload. The server learns each blob's sealed size (its length, a 42 to
 * 73-byte header and 16 bytes a chunk) and when it was uploaded, not its
 * digest, type or bytes. A blob uploaded under an older listed key is found under that
 * key's name and opens with it (until tureen_reencrypt seals it again). A download is opened as it arrives and
 * kept only when every chunk opened, the last included, and the bytes
 * hash to the reference's digest: a blob altered, cut short (at a chunk
 * boundary too), another blob's swapped in, or larger than the sealed size
 * of its length fails the record that refers to it (TUREEN_E_CORRUPT, in
 * "recordErrors"; the rest of the page is applied) and stores nothing; so
 * does one the server holds under no listed key's name (TUREEN_E_KEY:
 * sealed under a key not listed, or missing). A lazy sync's blob fails its
 * read (tureen_blob_fetch, or a read through the sync) the same way. A
 * sealed download resumes within a run but not across runs.
 * The keys are secrets: sync states (tureen_sync_status, progress, sync
 * events, tureen_syncs) show each key's id and "<redacted>" for its key,
 * the whole target being kept encrypted in the store as credentials are;
 * no message names a key. tureen_sync_update may change the keys and keeps
 * the sync's position. A bad "encryption" member fails with
 * TUREEN_E_INVALID before anything is saved or sent. "encryption" on a
 * callback target is TUREEN_E_INVALID. */

/* On an "encryption" target: reads every record of its collection (every
 * page; tombstones skipped) and writes again, sealed under the first key,
 * each one sealed under another listed key or held in clear. Each write
 * carries the target's precondition (kinto: If-Match on the stamp read;
 * a rest target's "concurrency", without which it overwrites), so a record
 * changed on the server since it was read is left as it is (the device
 * that changed it sealed it with its own first key). Blobs too: each blob
 * a record that decrypts refers to (whichever key sealed the record) that
 * the server holds only under an older listed key's name is downloaded,
 * opened and verified (or read from this store, when it holds it), sealed
 * under the first key and uploaded under its name, streamed both ways
 * through the store (a blob fetched stays there unreferenced until
 * tureen_store_compact removes it), before the records of its page are
 * written. Once every page is done, each such blob is removed from under
 * its older names (kinto: its blob record deleted, the plugin deleting its
 * file unless it keeps old files; rest: DELETE of its URL under that name,
 * kept when the API answers 405 or 501): list the first key on every
 * device before calling, as a device without it no longer finds them. A
 * blob the server holds under none of its names is left to fail its
 * records as it did. Sets *json to
 * {"reencrypted": n, "skipped": m, "blobs": k}: m counts the records left
 * as they were, changed or deleted meanwhile, or not decrypting
 * (TUREEN_E_CORRUPT or TUREEN_E_KEY for a sync); k the blobs uploaded
 * again under the first key. After it, the older keys can be dropped from
 * every device's list. Free it with tureen_free. A write the server
 * refuses otherwise ends the call with its error: records and blobs written
 * stay so, and calling again goes on (and removes the older names a call
 * cut short left). Beside tureen_store_close: as tureen_sync_down.
 * Errors: TUREEN_E_MISUSE (NULL or closed store, NULL target_json or json);
 * TUREEN_E_INVALID (bad target JSON, a callback target, a target without
 * "encryption"); TUREEN_E_NOT_FOUND (its "auth" "refresh" is not
 * registered); TUREEN_E_HTTP, TUREEN_E_NETWORK, TUREEN_E_CANCELLED (the
 * store closed) as a sync. */
int tureen_reencrypt(tureen_store *store, const char *target_json, char **json);

/* Sessions (RhoConnect's login, C8o's sessions). A "kinto" or "rest"
 * target's "auth" may name a credential refresher registered on the store
 * handle: {"bearer": "...", "refresh": "name"} ("bearer" or "user" may be
 * left out: the first 401 asks). When the server answers 401, the library
 * calls refresh(ctx, request_json, &credentials_json) on the thread running
 * the sync (the caller's, or the sync loop's; during a sync up over several
 * connections, see "upload_connections", possibly one of its upload
 * threads, never two calls at once), with request_json
 * {"target": the target with secrets redacted, "status": 401}; the host
 * returns TUREEN_OK and a JSON text it allocated, {"bearer": "..."} or
 * {"user": "...", "password": "..."}, which the library reads and hands back
 * with release(ctx, credentials_json) exactly once. The request is then sent
 * once more with them; a second 401, a refresher status other than
 * TUREEN_OK or an unreadable answer fails the sync with TUREEN_E_HTTP. The
 * new credentials are kept (encrypted, with the target) for the sync's next
 * runs. tureen_sync_update replaces credentials by hand. */
#define TUREEN_AUTH_CALLBACKS_VERSION 1

typedef struct tureen_auth_callbacks {
    int version;                                        /* TUREEN_AUTH_CALLBACKS_VERSION */
    void *ctx;
    int (*refresh)(void *ctx, const char *request_json, char **credentials_json); /* required */
    void (*release)(void *ctx, char *credentials_json); /* required */
    void (*free_ctx)(void *ctx);                        /* may be NULL; called once, when the library lets go */
} tureen_auth_callbacks;

#define TUREEN_AUTH_CALLBACKS_INIT {TUREEN_AUTH_CALLBACKS_VERSION, NULL, NULL, NULL, NULL}

/* Registers credential refresher `name` for this store handle (copying the
 * struct); a name registered again is replaced, the old free_ctx called once
 * no sync uses it. A target naming an unregistered refresher fails with
 * TUREEN_E_NOT_FOUND when its sync starts. Beside tureen_store_close: as
 * tureen_target_register. Errors: TUREEN_E_MISUSE;
 * TUREEN_E_INVALID (a version this library does not know, refresh or release
 * NULL, bad name). */
int tureen_auth_register(tureen_store *store, const char *name, const tureen_auth_callbacks *callbacks);

/* Removes credential refresher `name`; its free_ctx runs once no sync uses
 * it. Errors: TUREEN_E_MISUSE; TUREEN_E_NOT_FOUND. */
int tureen_auth_unregister(tureen_store *store, const char *name);

/* ------------------------------------------------------------------------ */
/* Events: soup listeners and live queries                                   */
/* ------------------------------------------------------------------------ */
/*
 * The store tells the host what each commit changed, without being asked.
 *
 * Change events (tureen_soup_listen) are JSON objects, one per commit per
 * soup:
 *   {"soup": "contacts", "created": [ids], "updated": [ids], "deleted": [ids],
 *    "origin": "app"|"sync"|"external", "cleared": false}
 * ids are _soupEntryId values, ascending. "origin" is "sync" for what a sync
 * wrote (records from the server, their local flags, sync states), "app" for
 * every other call. "cleared": true after tureen_soup_clear or
 * tureen_soup_drop (the lists may then be empty); "altered": true (only
 * present then) after tureen_soup_alter or a reindex; "dropped": true (only
 * present then) after tureen_soup_drop. A rolled-back transaction yields
 * nothing. Every write of every handle of the same file in this process is
 * seen. Writes of other processes are noticed within about 100 ms while a
 * listener exists (once this process's own writes pause), read from the
 * change feed (tureen_changes): one event per soup they changed, "origin":
 * "external", with their ids, folded over the commits noticed together (an
 * entry created and deleted meanwhile is in no list). When the feed no
 * longer holds all of them (changes_keep_ms, changes_keep_count), every soup
 * is told with empty lists instead. A write that changed no entry (or one
 * by a Tureen older than the feed, which writes none) tells no soup
 * listener. Live queries re-run whenever another connection committed.
 *
 * Listener rules (the same for every tureen_listener):
 *  - Callbacks run on a thread the library owns, one per store handle, in
 *    commit order for the commits of one handle; never while the store's
 *    write lock is held, so a callback may read and write the store (its
 *    own writes notify later, never recursively). The JSON is borrowed for
 *    the call.
 *  - tureen_listener_remove waits for the listener's callback in flight, then
 *    calls free_ctx (if not NULL) exactly once; afterwards the callback never
 *    runs again. Called from inside that listener's own callback it does not
 *    wait (that would deadlock): the callback never runs again, and free_ctx
 *    runs right after the callback returns, on the library's thread.
 *  - Closing the store removes its listeners (free_ctx once each) and makes
 *    their handles stale: removing a stale or made-up handle is
 *    TUREEN_E_MISUSE, never a crash. On error, a registration has not taken
 *    ctx: free_ctx is not called.
 */
typedef struct tureen_listener tureen_listener;

/* Event callback: `json` is borrowed for the duration of the call. */
typedef void (*tureen_event_fn)(void *ctx, const char *json);

/* Calls fn with each commit's changes to `soup` (NULL: every soup, one event
 * per soup a commit changed). The soup need not exist yet. *out receives the
 * listener. Errors: TUREEN_E_MISUSE (store, fn or out NULL; closed store);
 * TUREEN_E_INVALID (malformed soup name). */
int tureen_soup_listen(tureen_store *store, const char *soup_or_null, tureen_event_fn fn, void *ctx,
                       void (*free_ctx)(void *), tureen_listener **out);

/* A live query: fn receives the first page of `query_spec_json` (its
 * "pageSize"; page 0) exactly as tureen_query returns it, once right away
 * (on the library's thread), then again after any commit that changes that
 * page, only when the page differs. A commit to a soup the query does not
 * read never re-runs it; a Smart SQL query reads every soup it names. Bursts
 * coalesce: one re-run at a time, and one more after it if commits arrived
 * meanwhile, so a thousand quick writes cost a handful of re-runs. A query
 * that fails when run, the first time included (its soup was dropped, its
 * page outgrew query_memory_mb), delivers {"error": "...", "code": N} once,
 * and runs again after every commit to its soups until it succeeds. The
 * library keeps each live query's last page to compare with the next one:
 * memory grows with the number of live queries times their pages' size.
 * Errors: TUREEN_E_MISUSE;
 * TUREEN_E_INVALID or TUREEN_E_QUERY (bad spec); TUREEN_E_NOT_FOUND (unknown
 * soup). */
int tureen_live_query(tureen_store *store, const char *query_spec_json, tureen_event_fn fn, void *ctx,
                      void (*free_ctx)(void *), tureen_listener **out);

/* Removes a listener (see the rules above); the handle is then stale.
 * Errors: TUREEN_E_MISUSE (NULL, stale or made-up handle). */
int tureen_listener_remove(tureen_listener *listener);

/* The change feed, CouchDB's _changes and C8o's change listeners kept on
 * disk: every entry a commit created, updated or deleted, in any soup, by any
 * handle or process, written in that commit (a rolled-back write leaves
 * none), numbered by "seq", which only grows and is never given twice.
 * options_json_or_null (NULL: all defaults):
 *   "since": seq | "now"  the changes after this position (default 0: from
 *                         the start); "now": none, only "lastSeq";
 *   "soup": name          only this soup's changes (dropped soups' too);
 *   "limit": n            at most n changes, 1..100000 (default 1000).
 * *json receives {"changes": [{"seq", "soup", "entryId", "recordId",
 * "kind": "create"|"update"|"delete", "origin": "app"|"sync"}, ...],
 * "lastSeq": n}, in "seq" order. "recordId" is the entry's top-level "id"
 * (the record id Kinto and a sync's default id field give it) as stored,
 * a string or an integer, at the change (a delete's: just before it), or
 * null. A clear or drop is a delete per entry; an upsert that replaces an
 * entry's text is an update even when nothing differs; changing index specs
 * or reindexing changes no entry. Within one call the changes come by soup,
 * then by entryId.
 * Pass "lastSeq" as the next "since": it is the last change's "seq" when
 * the answer holds "limit" changes (there may be more), else the newest
 * position of the whole store (past other soups' changes). The feed keeps
 * changes for the open options changes_keep_ms and changes_keep_count; a
 * "since" older than what it keeps is TUREEN_E_NOT_FOUND, never a silent
 * gap: read the soups again and go on from "lastSeq" of {"since": "now"}.
 * Changes written by a Tureen older than the feed (which writes none) are
 * not in it. Reads one snapshot, beside writes; any thread; inside a
 * transaction this thread opened, it also reads the changes of that
 * transaction's calls so far. *json is the caller's to
 * release with tureen_free.
 * Errors: TUREEN_E_MISUSE (store or json NULL, closed store);
 * TUREEN_E_INVALID (bad options, a "since" past the newest position);
 * TUREEN_E_NOT_FOUND (changes after "since" are no longer kept). */
int tureen_changes(tureen_store *store, const char *options_json_or_null, char **json);

/* ------------------------------------------------------------------------ */
/* Sync events                                                               */
/* ------------------------------------------------------------------------ */
/*
 * Red Hat $fh.sync's eleven notification codes, from direct sync calls and
 * from the sync loop alike, on the store handle that ran them. Each event is
 * a JSON object {"code", "time" (epoch ms), ...}; sync events add "syncId",
 * "name" (null when unnamed), "soup", "type" ("syncDown"|"syncUp"); record
 * events add "recordId" (the server id), "entryId", "operation"
 * ("create"|"update"|"delete").
 * Every event also carries $fh.sync's own members, so code ported from it
 * reads what it knows: "dataset_id" (a string: the sync's name, or its id
 * as text when unnamed; for local_update_applied and offline_update, which
 * come from a local write and no sync, the soup's name), "message" (below)
 * and, on record events only, "uid" (the record id, as "recordId").
 * "message" is $fh.sync's: null for sync_started; "online" for
 * sync_complete; for sync_failed "offline" when the server was out of
 * reach ("errorCode" TUREEN_E_NETWORK), else "error"; the operation for
 * record_delta_received, local_update_applied and offline_update;
 * "partial dataset" for delta_received; for remote_update_applied,
 * remote_update_failed and collision_detected an update object
 * {"action": the operation, "type": "applied"|"failed"|"collision",
 * "uid"} ("msg": the error, when failed); "error" for
 * client_storage_failed; "direction" for the blob events.
 *   sync_started           a sync began (after its state was saved RUNNING).
 *   sync_complete          it ended DONE: "status", "synced", "failed",
 *                          "conflicts", and RhoConnect's object notification:
 *                          "created", "updated", "deleted", the record ids
 *                          the run created, updated and deleted (on the
 *                          device for a sync down, on the server for a sync
 *                          up).
 *   sync_failed            it ended FAILED or STOPPED: the counts, "error",
 *                          "errorCode" (a TUREEN_E_* code), "retryAt".
 *   offline_update         a local change (tureen_local_upsert,
 *                          tureen_local_merge, tureen_local_delete or
 *                          tureen_local_delete_records) committed while the server
 *                          is out of reach (the last sync on this handle
 *                          that tried failed with TUREEN_E_NETWORK); a
 *                          record event with "soup".
 *   collision_detected     a record was left in conflict (listed by
 *                          tureen_conflicts); a record event.
 *   remote_update_failed   the server refused a change (or it was held back
 *                          after maxAttempts): a record event with "error"
 *                          and "httpStatus" (a number or null).
 *   remote_update_applied  the server applied a change; a record event.
 *   local_update_applied   a local change committed (tureen_local_upsert,
 *                          tureen_local_merge, tureen_local_delete,
 *                          tureen_local_delete_records); a record event
 *                          with "soup".
 *   delta_received         a page of server changes was committed by a sync
 *                          down: "created", "updated", "deleted" (counts).
 *   record_delta_received  one server change was applied to the soup; a
 *                          record event.
 *   client_storage_failed  the store itself failed while syncing (I/O,
 *                          busy past the timeout, damage, key): "error",
 *                          "errorCode"; sync_failed follows.
 *   blob_transferred       (Tureen's own) a blob an entry refers to went up
 *                          or came down (see "Blobs"): "digest", "length",
 *                          "direction" ("up"|"down"); the sync state counts
 *                          them in "blobs" and "blobBytes".
 *   blob_progress          (Tureen's own) every 4 MiB of a blob in flight:
 *                          "digest", "length", "direction", "done" (its
 *                          bytes moved so far; lower again when a retry
 *                          sends it from the start). The sync state's
 *                          "blobBytes" counts them too, and the progress
 *                          callback is called. (A lazy blob fetched on
 *                          read or by tureen_blob_fetch runs outside any
 *                          sync: no event.)
 * Record events follow the commit that made them true. Events are queued
 * behind the commits published before them, so a listener sees a record's
 * change event (tureen_soup_listen) before its record_delta_received.
 */

/* Calls fn with each sync event whose code the filter selects. filter_json
 * may be NULL (every code), {"codes": ["sync_complete", ...]}, or $fh.sync's
 * flags {"notify_sync_complete": true, ...} (the "notify_" prefix optional):
 * codes set true are wanted; when only false flags are given, every other
 * code is. The listener rules above apply (same thread, same removal).
 * An event's JSON is built only when a listener wants its code.
 * Errors: TUREEN_E_MISUSE (store, fn or out NULL; closed store);
 * TUREEN_E_INVALID (a filter that is not an object of known codes). */
int tureen_sync_listen(tureen_store *store, const char *filter_json_or_null, tureen_event_fn fn, void *ctx,
                       void (*free_ctx)(void *), tureen_listener **out);

/* ------------------------------------------------------------------------ */
/* Managed syncs                                                             */
/* ------------------------------------------------------------------------ */

/* *json receives every sync of the store as a JSON array of sync states (see
 * "Sync state"; credentials redacted), in id order; free it with tureen_free.
 * Errors: TUREEN_E_MISUSE. */
int tureen_syncs(tureen_store *store, char **json);

/* Changes a sync ($fh.sync's manage): target_json (may be NULL) replaces its
 * target: the same place (Kinto server, bucket and collection, or REST url,
 * or callback name) with new credentials, headers or parameters keeps its
 * position (maxTimeStamp); another place starts it from scratch (status NEW,
 * maxTimeStamp -1). options_json (may be NULL) replaces its options (as for
 * tureen_sync_down; "name" kept when not given; "start" refused). The new
 * target is validated as tureen_sync_down does. Takes effect with the next
 * run. Errors: TUREEN_E_MISUSE (the sync is running now); TUREEN_E_NOT_FOUND;
 * TUREEN_E_INVALID (bad target or options, a name already used). */
int tureen_sync_update(tureen_store *store, const char *sync_id_or_name, const char *target_json_or_null,
                       const char *options_json_or_null);

/* Deletes a sync's state and its kept credentials; the soup's records and
 * local changes stay. Errors: TUREEN_E_MISUSE (running now);
 * TUREEN_E_NOT_FOUND. */
int tureen_sync_delete(tureen_store *store, const char *sync_id_or_name);

/* Acts on an entry whose change the server refused (it has
 * "__last_error__"), as RhoConnect's onCreateError / onUpdateError /
 * onDeleteError let an app do. action:
 *   "retry"     send it again with the next sync up (attempts start over);
 *   "rollback"  drop the local change: the entry becomes the server's copy
 *               as last synced again, or is removed if the server never had it;
 *   "recreate"  the server's record is gone: the next sync up creates it;
 *   "delete"    delete it here, and with the next sync up on the server.
 * The error fields are cleared in every case. Errors: TUREEN_E_MISUSE;
 * TUREEN_E_INVALID (unknown action); TUREEN_E_NOT_FOUND (no such soup or
 * entry, or the entry has no sync error). */
int tureen_sync_error_resolve(tureen_store *store, const char *soup, int64_t entry_id, const char *action);

/* RhoConnect's database_full_reset_and_logout: stops this handle's sync
 * loop, then in one transaction empties every soup a sync reads or writes
 * (local changes and conflicts included) and deletes every sync state with
 * its kept credentials. Soups and their indexes stay. Errors:
 * TUREEN_E_MISUSE (a sync is running now, on this handle, another one or
 * in another process: cancel it first); TUREEN_E_BUSY. */
int tureen_sync_reset(tureen_store *store);

/* A server that lost data: a sync down whose server's collection timestamp
 * (Kinto's ETag, a REST target's "snapshotHeader") is older than the sync's
 * maxTimeStamp was flushed or restored from an older copy. Such a run
 * applies nothing, ends FAILED with TUREEN_E_CONFLICT, and its state says
 * "serverFlushed": true (every run, until this call or a new position).
 * tureen_sync_republish marks every record of that sync down's soup as
 * created here (records deleted here are removed: the server has none), so
 * the next sync up publishes them all again (creates carry client ids and
 * If-None-Match, so records the server still has are recognised), and
 * starts the sync down from scratch (NEW, maxTimeStamp -1). *count (may be
 * NULL) receives how many records will be published. Errors:
 * TUREEN_E_MISUSE (the sync is running); TUREEN_E_NOT_FOUND;
 * TUREEN_E_INVALID (a sync up). */
int tureen_sync_republish(tureen_store *store, const char *sync_down_id_or_name, int64_t *count);

/* ------------------------------------------------------------------------ */
/* The sync loop                                                             */
/* ------------------------------------------------------------------------ */
/*
 * One loop per store handle, on a thread of its own, runs the store's syncs
 * in the background ($fh.sync's loop). config_json (may be NULL), members
 * all optional:
 *   "syncs": [id or name, ...]   which syncs (default: every sync, including
 *                                those defined after the loop started);
 *   "sync_frequency": s          seconds between runs of a sync (default 10,
 *                                as $fh.sync; 1..86400), or
 *   "sync_frequency_ms": ms      the same in milliseconds (10..86400000);
 *   "auto_sync_local_updates"    default true: a commit by the app to a soup
 *                                (seen through the store's change stream:
 *                                tureen_local_upsert, tureen_local_delete,
 *                                tureen_conflict_resolve...) makes that
 *                                soup's syncs up due after "debounce_ms";
 *   "debounce_ms"                default 200 (0..60000): lets a burst of
 *                                local writes settle into one sync up;
 *   "sync_active"                default true; false starts paused (until
 *                                tureen_sync_loop_force);
 *   "order": "up_down"|"down_up" per soup, its syncs up first, then down
 *                                (default), or the other way round;
 *   "order_by_soup": {"soup": "down_up"}  the order for one soup;
 *   "max_backoff_ms"             default 60000: the longest wait between
 *                                tries while the server is unreachable;
 *   "crashed_count_wait", "resend_crashed_updates": $fh.sync's crashed
 *                                updates are changes sent without an answer
 *                                (the device died or lost the network). Here
 *                                they are the changes of a sync up that a
 *                                killed process left RUNNING. Tureen resends
 *                                them safely (client ids with If-None-Match,
 *                                If-Match, and a resend already applied counts
 *                                as applied), so by default (true, and 0
 *                                cycles, where $fh.sync waits 10 because its
 *                                server answers in a later cycle) the next
 *                                cycle resends them; crashed_count_wait = n
 *                                lets n cycles pass first; false leaves such
 *                                a sync to the app (tureen_resync).
 * Unknown members are TUREEN_E_INVALID.
 *
 * Each run is what tureen_resync does, and sends the same sync events. A run
 * retries a network error once, not the target's max_retries times, so the
 * first cycle that finds the network gone reports it, as $fh.sync does
 * (sync_failed with TUREEN_E_NETWORK, and offline_update for writes from
 * then on): at most 250 ms after its first failed request, plus the second
 * attempt (refused at once, or within timeout_ms). Such a run marks the loop
 * offline and is tried again after an exponential delay (a quarter of the
 * frequency, at least 250 ms, doubling, up to max_backoff_ms); the first
 * run that reaches the server clears it. A server that asks to wait (Retry-After
 * past max_wait_ms, Kinto's Backoff) is not called before that time. A sync
 * running through a direct call, or on another handle or in another
 * process, is skipped that cycle, and so is one whose soup another sync is
 * running (the loop never waits; its "lastError" says why); a sync up
 * RUNNING elsewhere is a crashed one only once that process is gone. A sync down that
 * finds nothing new costs one request (Kinto: GET of the records changed
 * since maxTimeStamp, an empty page).
 */

/* Starts the loop. Errors: TUREEN_E_MISUSE (closed store; a loop already
 * runs on this handle); TUREEN_E_INVALID (bad config); TUREEN_E_INTERNAL (no
 * thread could be started). */
int tureen_sync_loop_start(tureen_store *store, const char *config_json_or_null);

/* Stops the loop: a run in flight is cancelled at its next safe point
 * (between requests, pages or batches; one page or batch at most commits
 * after the call) and waited for, then the thread ends; typically well under
 * a second. tureen_store_close stops it too. Errors: TUREEN_E_MISUSE (no
 * loop runs on this handle). */
int tureen_sync_loop_stop(tureen_store *store);

/* $fh.sync's forceSync / doSync. With the loop running: makes one sync (by
 * id or name), or every sync of the loop (NULL), due now, resumes a paused
 * loop, and returns at once.
 * With no loop on this handle: runs the sync, or every sync of the store
 * (NULL; RhoConnect's syncAll), once, on the calling thread, before it
 * returns: each as tureen_resync runs it (the same waits, sync events and
 * saved states; no progress callback), a soup's syncs up before its syncs
 * down, soups in the order of their first sync's id. A run that fails does
 * not keep the others from running. Returns TUREEN_OK when every run ended
 * DONE; else the status of the first that did not, once all have run (for
 * one sync, its error as tureen_resync returns it; for NULL, a message
 * naming that sync and how many failed). Read the outcomes with
 * tureen_sync_status or tureen_syncs. tureen_sync_cancel of the sync
 * running (or waiting for its soup), or tureen_store_close, ends the cycle
 * there: the syncs after it are not run, and the call returns
 * TUREEN_E_CANCELLED. The callback rules of tureen_resync apply.
 * Errors: TUREEN_E_MISUSE (closed store; without a loop also a sync running
 * now, as for tureen_resync); TUREEN_E_NOT_FOUND (no such sync);
 * TUREEN_E_INVALID (with a loop, a sync the loop's "syncs" leaves out: it
 * never runs it); without a loop, a run's own error: TUREEN_E_NETWORK,
 * TUREEN_E_HTTP, TUREEN_E_CONFLICT, TUREEN_E_CANCELLED, TUREEN_E_BUSY,
 * TUREEN_E_IO. */
int tureen_sync_loop_force(tureen_store *store, const char *sync_id_or_name_or_null);

/* *json receives the loop's state: {"running", "active", "offline",
 * "cycles", "current" (the sync running now, or null), "syncFrequencyMs",
 * "syncs": [{"syncId", "name", "soup", "type", "status", "runs",
 * "failures" (tries in a row that could not reach the server or were asked
 * to wait), "nextRunAt" (epoch ms), "lastError", "retryAt"}]}; without a loop
 * {"running": false, "offline"}. Free it with tureen_free. Errors:
 * TUREEN_E_MISUSE. */
int tureen_sync_loop_status(tureen_store *store, char **json);

/* ------------------------------------------------------------------------ */
/* Cached reads                                                              */
/* ------------------------------------------------------------------------ */
/*
 * A cached fetch reads a resource of a "kinto" or "rest" target through a
 * cache kept in the encrypted store (SmartSync's cache policies, Convertigo
 * C8o's local cache with priority and time to live). request_json:
 *   {"target": a "kinto" or "rest" target (see Targets; not "callback"),
 *    "id": "record id"            one record: GET <records URL>/<id>, the
 *                                 record at the target's "recordPath" (an
 *                                 id of 1 to 4096 bytes); or
 *    "query": {"param": value}    the records the query selects, every page
 *                                 (Kinto: its filters, "_sort", "_limit"...;
 *                                 they replace the target's own parameters of
 *                                 the same name), as a JSON array;
 *    neither: every record of the target's collection, as "query": {}.}
 * The cache key is the records URL, the id or the query (parameters in any
 * order are one key) and the account: the target's auth "user"; without
 * one, the credential refresher named in auth "refresh"; without either, a
 * SHA-256 digest of the bearer token and the target's "headers" (a token or
 * API key changed by hand then starts afresh). Never a password, token or
 * header value itself: a refreshed token still finds its answers, and two
 * accounts never share them.
 *
 * options_json (may be NULL), members all optional:
 *   "policy"   what to do (default "ReloadAndReturnCacheOnError"):
 *     "IgnoreCacheData"            the server only; the cache is neither read
 *                                  nor written;
 *     "ReloadAndReturnCacheOnError" (also "ReloadAndReturnCacheOnFailure")
 *                                  the server, caching its answer; when it
 *                                  cannot be used, the cached answer, however
 *                                  old;
 *     "ReturnCacheDataDontReload"  the cached answer, however old; never the
 *                                  server (nothing cached: TUREEN_E_NOT_FOUND);
 *     "ReloadAndReturnCacheData"   the server, caching its answer; when it
 *                                  cannot be used, its error (the cached
 *                                  answer stays, but is not given);
 *     "ReturnCacheDataAndReload"   the cached answer now, and a refresh in the
 *                                  background ("refreshing": true): the new
 *                                  answer is written to the soup "cache_soup"
 *                                  with "origin": "sync", so a listener
 *                                  (tureen_soup_listen on "cache_soup") hears
 *                                  of it; nothing cached: as
 *                                  "InvalidateCacheAndReload";
 *     "ReloadIfExpiredAndReturnCacheData"  a fresh cached answer; else the
 *                                  server; when it cannot be used, the
 *                                  expired answer;
 *     "InvalidateCacheDontReload"  removes the cached answer; answers
 *                                  {"source": null, "data": null};
 *     "InvalidateCacheAndReload"   removes it, then the server (no fallback);
 *     "SERVER"                     C8o's priority: the server; when it cannot
 *                                  be used, a fresh cached answer;
 *     "LOCAL"                      C8o's priority: a fresh cached answer; else
 *                                  the server (no fallback).
 *              SmartSync's names are also taken in its Android spelling: the
 *              words in capitals joined by "_" (IGNORE_CACHE_DATA,
 *              RELOAD_AND_RETURN_CACHE_ON_FAILURE, RELOAD_AND_RETURN_CACHE_DATA,
 *              RETURN_CACHE_DATA_DONT_RELOAD, INVALIDATE_CACHE_AND_RELOAD...).
 *   "ttl_ms"   N (1..2^50): an answer is fresh while younger than N ms; the
 *              answer this call stores also expires N ms after it is stored
 *              ("expiresAt"), for every later call. Default: no limit.
 *   "now_ms"   the time to judge ages by, in epoch ms (default: the wall
 *              clock), for hosts with a clock of their own.
 * "The server cannot be used": unreachable, timed out (the target's
 * "timeout_ms", after its "max_retries"), 5xx, 429, or asking to wait
 * longer than "max_wait_ms". Other answers (401, 403, 400) are errors
 * whatever the policy; a record the server does not have (404, 410, a
 * tombstone) is TUREEN_E_NOT_FOUND and its cached answer is removed.
 *
 * *json receives {"source": "server"|"cache"|null, "data": the record or
 * the array of records, "storedAt": epoch ms when the answer given was
 * stored (null if it was not), "ageMs", "expiresAt" (null: never),
 * "expired" (true for a cached answer past its "expiresAt"), "cached"
 * (whether the answer is in the cache now), "refreshing", "error" (null,
 * or why the server was not used when the cache answered instead)}; free it
 * with tureen_free.
 *
 * Limits. Answers live in the soup "cache_soup" (readable by the app, like
 * "syncs_soup", written only by this layer), encrypted with the store; a
 * list of records may hold at most the target's "max_response_bytes" in
 * all and 10000 pages, and a server whose next page is one already read
 * (its link or cursor repeats) fails the fetch at its first repeat, with
 * TUREEN_E_HTTP, as it fails a sync down. The cache keeps within a size
 * budget (see tureen_cache_configure) by evicting the least recently used
 * answers (a hit counts as a use); an answer larger than the budget alone
 * is returned but not cached ("cached": false).
 *
 * Threading. The fetch runs on the calling thread. Background refreshes
 * run on one thread per store handle, one at a time, each request once
 * however often it is asked meanwhile; each new answer is written in one
 * transaction, so a process killed during a refresh keeps the old answer;
 * a refresh that fails keeps it too (and logs why). Closing the store
 * cancels the refresh in flight and drops the queued ones, and cancels a
 * fetch running on another thread (it returns TUREEN_E_CANCELLED; close
 * waits for it).
 *
 * Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID (bad request, options or
 * target; a callback target); TUREEN_E_NOT_FOUND (nothing cached under
 * ReturnCacheDataDontReload; no such record); TUREEN_E_NETWORK and
 * TUREEN_E_HTTP (the server could not be used and the policy had no cached
 * answer to give); TUREEN_E_CANCELLED (the store was closed meanwhile);
 * TUREEN_E_IO, TUREEN_E_BUSY (the store). */
int tureen_cache_fetch(tureen_store *store, const char *request_json, const char *options_json_or_null, char **json);

/* Removes the cached answer to one request (request_json as for
 * tureen_cache_fetch; its options are not taken), or every cached answer
 * (NULL). *removed (may be NULL) receives how many were removed.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID (bad request); TUREEN_E_IO;
 * TUREEN_E_BUSY. */
int tureen_cache_clear(tureen_store *store, const char *request_json_or_null, int64_t *removed);

/* Sets the cache's size budget for this store handle: {"max_bytes": N}
 * (1024..2^40; default 33554432, 32 MiB), the bytes of the answers' JSON
 * together. A budget below what is cached evicts the least recently used
 * answers at once. Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID (bad config);
 * TUREEN_E_IO; TUREEN_E_BUSY. */
int tureen_cache_configure(tureen_store *store, const char *config_json);

/* ------------------------------------------------------------------------ */
/* Blobs                                                                     */
/* ------------------------------------------------------------------------ */
/*
 * Blobs are bytes kept beside the entries (photos, documents), named by
 * their SHA-256 and stored once however many entries refer to them. An entry
 * refers to a blob anywhere in its JSON with the object the put calls
 * return:
 *   {"@type": "blob", "digest": "sha256-<64 lowercase hex>", "length": N,
 *    "content_type": "image/jpeg"}
 *
 * Where they live. In files beside the store, in the directory
 * "<store path>.blobs" (made on the first blob, readable by the owner
 * alone), one file per blob: a blob is written once, at the disk's speed,
 * where inside the store every byte went to the write-ahead log and again
 * into the database at the checkpoint, encrypted a 4 KiB page at a time
 * (Couchbase Lite keeps attachments beside its database for the same
 * reason). Each file is sealed with AES-256-GCM (OpenSSL's libcrypto) in
 * chunks of 64 KiB, under a key of its own derived from the store's blob
 * key, a random key that the store keeps inside itself, so that SQLCipher
 * encrypts it under the store's key: a rekey re-encrypts that key with the
 * rest of the store and leaves the files as they are. (An unencrypted
 * store keeps the blob key in clear; its files are then only
 * authenticated.) A file is named by the blob's row in the store, never by
 * its digest, so names say nothing of the contents. It is written and
 * flushed to disk (fdatasync) under a temporary name, then renamed and
 * the directory flushed, before the transaction that names the blob
 * commits: a crash may leave a file no row names, which tureen_blob_collect
 * removes, never a row without its file. A store copied or moved must take
 * its ".blobs" directory along; tureen_store_remove removes it. Blobs that
 * stores written by earlier versions kept inside themselves, in chunks of
 * 256 KiB, are read where they are.
 *
 * Integrity. A damaged chunk fails authentication (a file moved under
 * another blob's name too); a missing, short or long file or chunk is
 * detected; and the bytes are hashed as they are read in
 * order, so reading a blob from start to end (tureen_blob_get,
 * tureen_blob_export, sync uploads, a reader read in order) checks its
 * digest before handing out the last bytes: damage is TUREEN_E_CORRUPT,
 * never wrong bytes.
 *
 * Lifetime. An upsert whose entry refers to a blob the store does not hold
 * (nor awaits from a lazy sync) is refused with TUREEN_E_NOT_FOUND, and a
 * reference whose "length" differs from the blob's with TUREEN_E_INVALID.
 * A blob lives while an entry (or a pending conflict) refers to it;
 * tureen_blob_collect and tureen_store_compact remove the others once they
 * are older than a grace period (one hour by default: the time an app may
 * take between putting a blob and upserting the entry that refers to it).
 * Collection runs in one write transaction: no entry is written while it
 * decides, so a blob referred to by an entry committed before or after it
 * is never removed.
 *
 * Sync. Blobs travel with the records that refer to them: sync up puts
 * every blob a change refers to on the server before it sends the change
 * (a blob the server refuses fails the sync and keeps the change back; a
 * blob a lazy sync awaits is not here to upload, so the change goes when
 * the server holds it, and fails alone, TUREEN_E_NOT_FOUND, when not);
 * sync down fetches the blobs of a page before the page commits (the page
 * fails, keeping its records out, when one is missing, when its bytes do
 * not hash to its digest, or when a reference's "length" is not the
 * blob's), or, with the sync option "blobs": "lazy", on first
 * read or with tureen_blob_fetch. Downloads are written into the store as
 * they arrive, never more than the reference's "length". Two conventions:
 * - "kinto" targets: Kinto's attachment plugin (kinto-attachment). Each
 *   blob is a record of the companion collection <collection>-blobs
 *   (target member "blobs_collection") whose attachment holds the bytes;
 *   files are downloaded only from the target's "attachments_url" (a URL
 *   prefix), or the server's own origin without one, never with the
 *   target's credentials; a redirect is followed only to such a URL.
 * - "rest" targets with a "blobs" member:
 *     {"url": "https://api/blobs/{hex}", "upload": "put"|"post"|"multipart",
 *      "uploadUrl": "https://api/uploads", "field": "file", "check": true,
 *      "redirects": ["https://cdn.example.com/"]}
 *   "url" (required) is each blob's own URL, with {hex} (the digest's 64
 *   hex digits) or {digest} ("sha256-<hex>") in it: GET reads the blob
 *   and, unless "check" is false, HEAD asks before an upload whether the
 *   server holds it (a success with the blob's Content-Length skips the
 *   upload; 404, 410 and a redirect upload it; 405 and 501 (no HEAD) are
 *   asked again at once, not retried, by a GET with "Range: bytes=0-0",
 *   whose Content-Range total stands for the length, and a server that
 *   ignores the Range is cut off after one byte and gets the upload; any
 *   other answer, to HEAD or to that GET (401, 403, a 5xx or 429 after
 *   its retries), fails the sync with TUREEN_E_HTTP naming the status:
 *   nothing is uploaded to a server that refused us). The same
 *   question, asked even with "check": false, decides whether a change
 *   referring to a blob a lazy sync left on the server may go (an answer
 *   that fails the sync keeps the change for the next). "upload": "put"
 *   (the default) and "post" send the bytes as the body with the blob's
 *   Content-Type;
 *   "multipart" POSTs multipart/form-data whose part "field" (default
 *   "file"; an HTTP token) holds them. "uploadUrl" (default "url") is where uploads go;
 *   it may omit {hex} for "post" and "multipart" (one upload endpoint),
 *   and the server must then serve the blob at "url". The target's
 *   "auth" and "headers" go only to blob URLs on the target url's own
 *   origin; a blob URL elsewhere (a file server, a CDN) is asked without
 *   them. A download answered with a redirect (301, 302, 303, 307, 308)
 *   follows it, at most 5 times, only to the blob URL's own origin or
 *   under one of the "redirects" prefixes (each with a path, at least
 *   "/"), never to a URL holding ".." (a Location is absolute or a path
 *   from "/"); elsewhere the download fails and nothing is fetched. Unknown
 *   members, a "url" without {hex} or {digest} and a "field" without
 *   "multipart" are TUREEN_E_INVALID.
 * Every blob request is retried like the target's others (see "Errors and
 * retries"). A download whose connection breaks off goes on from the bytes
 * already staged, asking for the rest with a Range header, where the
 * server answers 206 from exactly there (a 206 from elsewhere fails the
 * download, keeping nothing); a server that answers with the whole body
 * again is read from the start. A download that a crash or a kill cuts
 * off, or whose run fails because the connection failed (after its
 * retries) or the sync was cancelled, keeps what it had written (in whole
 * chunks of 64 KiB) as an invisible staging blob; a download that fails on an answer
 * of the server keeps nothing. The next download of the same blob, in this
 * process or another, takes a staging blob over once its writer is gone
 * (its process ended, or its run failed), hashes the staged bytes again
 * and asks only for the rest. Staged bytes are kept only if the whole blob
 * then hashes to its digest; those nothing takes over are removed by
 * tureen_blob_collect after the grace period. (A writer's process is told
 * apart by its pid and start time, which /proc gives: processes sharing a
 * store in WAL mode run on one machine. A writer that another took over,
 * from another pid namespace, fails with TUREEN_E_BUSY instead of mixing
 * bytes.)
 *
 * Threading: any thread; a writer or reader may be used from any thread,
 * one call at a time is served (calls on one stream are serialised).
 */

/* Stores `len` bytes at `data` (NULL allowed when len is 0) as a blob.
 * content_type may be NULL ("application/octet-stream"). *blob_json
 * receives the reference to put in entries; free it with tureen_free. The
 * same bytes stored twice are kept once.
 * Errors: TUREEN_E_MISUSE (also data NULL with len > 0); TUREEN_E_INVALID
 * (len beyond any buffer); TUREEN_E_IO; TUREEN_E_BUSY. */
int tureen_blob_put(tureen_store *store, const void *data, size_t len, const char *content_type, char **blob_json);

/* Copies the whole blob named `digest` ("sha256-...") into memory:
 * *data (free with tureen_free; never NULL on success, even for 0 bytes)
 * and *len. For large blobs use tureen_blob_export or a reader. A blob that
 * a lazy sync awaits is fetched from its server first.
 * Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID (not a digest);
 * TUREEN_E_NOT_FOUND; TUREEN_E_CORRUPT; TUREEN_E_NETWORK, TUREEN_E_HTTP
 * (fetching an awaited blob); TUREEN_E_IO. */
int tureen_blob_get(tureen_store *store, const char *digest, void **data, size_t *len);

/* Stores the file at `path` as a blob, read 1 MiB at a time (a 1 GB file
 * costs a few MB of memory: the piece read and a batch of sealed chunks).
 * *blob_json as for tureen_blob_put. Other writers get turns while it runs
 * (it holds the write lock only to start and to name the blob); the blob
 * is visible only once complete, and a process killed meanwhile leaves
 * nothing readable (its pieces are collected later). A file of 1 MiB or
 * more is hashed on a thread of the call's own while it is sealed and
 * written on the caller's; the thread has ended when the call returns.
 * Only a regular file is read: a directory, FIFO, socket or device is
 * TUREEN_E_IO at once (a FIFO with no writer would hold the call for ever).
 * Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID; TUREEN_E_NOT_FOUND (no such
 * file); TUREEN_E_IO; TUREEN_E_BUSY. */
int tureen_blob_import(tureen_store *store, const char *path, const char *content_type, char **blob_json);

/* Writes the blob named `digest` to the file at `path`, streamed and
 * verified. The bytes go to a temporary file in the same directory renamed
 * to `path` once complete and flushed: on any error (damage included)
 * `path` is left as it was. An awaited lazy blob is fetched first. The
 * call hashes the chunks on a short-lived thread of its own while it reads
 * and writes them on the caller's, and returns once that thread ended.
 * Errors: as tureen_blob_get, and TUREEN_E_IO for the file. */
int tureen_blob_export(tureen_store *store, const char *digest, const char *path);

/* Fetches now a blob that a lazy sync down awaits (the sync option
 * "blobs": "lazy"), from that sync's server. *fetched (may be NULL)
 * receives 1, or 0 when no sync awaits it (stored already, or unknown).
 * Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID (not a digest; the sync's
 * target cannot fetch blobs); TUREEN_E_NOT_FOUND (the server lacks it);
 * TUREEN_E_NETWORK; TUREEN_E_HTTP (also: bytes that do not hash to the
 * digest, which are not kept); TUREEN_E_BUSY (what it had staged was
 * collected, or taken over, before it completed); TUREEN_E_IO. */
int tureen_blob_fetch(tureen_store *store, const char *digest, int *fetched);

/* The reference to the stored blob named `digest` (*blob_json, free with
 * tureen_free), or TUREEN_E_NOT_FOUND when it is not stored here (an
 * awaited lazy blob is not fetched). Errors: TUREEN_E_MISUSE;
 * TUREEN_E_INVALID; TUREEN_E_NOT_FOUND; TUREEN_E_IO. */
int tureen_blob_info(tureen_store *store, const char *digest, char **blob_json);

/* Removes the blobs that no entry refers to, older than options
 * {"min_age_ms": N} (NULL: the default grace period, 3600000), and the
 * pieces of imports and downloads abandoned as long ago. min_age_ms 0
 * removes every unreferenced blob, and the pieces of imports and downloads
 * running now (their writer then fails with TUREEN_E_BUSY, leaving
 * nothing): use it only when no thread or process is importing or
 * syncing, or between putting a blob and upserting its entry (that upsert
 * would then fail, never dangle).
 * *removed (may be NULL) receives
 * how many blobs went. Errors: TUREEN_E_MISUSE; TUREEN_E_INVALID;
 * TUREEN_E_IO; TUREEN_E_BUSY. */
int tureen_blob_collect(tureen_store *store, const char *options_json_or_null, int64_t *removed);

/* A blob being written piece by piece (from a socket, a camera, a pipe). */
typedef struct tureen_blob_writer tureen_blob_writer;

/* Starts a blob. content_type may be NULL. *writer must be finished or
 * cancelled (each releases it); closing the store makes it stale. Once
 * 1 MiB was written, the writer hashes on a thread of its own, which ends
 * when it is finished or cancelled (or the store closed).
 * Errors: TUREEN_E_MISUSE. */
int tureen_blob_writer_open(tureen_store *store, const char *content_type, tureen_blob_writer **writer);

/* Appends `len` bytes. On an error the writer is spent: what it wrote is
 * dropped, and only tureen_blob_writer_cancel may follow.
 * Errors: TUREEN_E_MISUSE (stale writer, data NULL with len > 0);
 * TUREEN_E_IO; TUREEN_E_BUSY. */
int tureen_blob_writer_write(tureen_blob_writer *writer, const void *data, size_t len);

/* Completes the blob and releases the writer, also on error. *blob_json as
 * for tureen_blob_put. Errors: TUREEN_E_MISUSE; TUREEN_E_IO; TUREEN_E_BUSY. */
int tureen_blob_writer_finish(tureen_blob_writer *writer, char **blob_json);

/* Drops what the writer wrote and releases it. Errors: TUREEN_E_MISUSE
 * (stale writer). */
int tureen_blob_writer_cancel(tureen_blob_writer *writer);

/* A stored blob read by ranges. */
typedef struct tureen_blob_reader tureen_blob_reader;

/* Opens the blob named `digest`; *length (may be NULL) receives its size.
 * An awaited lazy blob is fetched first. Release with
 * tureen_blob_reader_close; closing the store makes it stale.
 * Errors: as tureen_blob_get. */
int tureen_blob_reader_open(tureen_store *store, const char *digest, tureen_blob_reader **reader, int64_t *length);

/* Copies up to `capacity` bytes from `offset` into `buffer`; *read
 * receives how many (0 at or past the end). Reads in order from offset 0
 * verify the digest before the last bytes are given (see above).
 * Errors: TUREEN_E_MISUSE (stale reader, buffer or read NULL);
 * TUREEN_E_INVALID (negative offset); TUREEN_E_CORRUPT; TUREEN_E_NOT_FOUND
 * (the blob was collected meanwhile); TUREEN_E_IO. */
int tureen_blob_reader_read(tureen_blob_reader *reader, int64_t offset, void *buffer, size_t capacity, size_t *read);

/* Releases the reader. Errors: TUREEN_E_MISUSE (stale reader). */
int tureen_blob_reader_close(tureen_blob_reader *reader);

/* ------------------------------------------------------------------------ */
/* Transactions across calls                                                 */
/* ------------------------------------------------------------------------ */
/*
 * tureen_transaction_begin opens a write transaction on the store for the
 * calling thread. Until that thread calls tureen_transaction_commit or
 * tureen_transaction_rollback, its writes on the handle (upserts, removes,
 * soup changes, local changes) go into the transaction and its reads see
 * them; they commit or roll back together, and listeners hear of them once,
 * at the commit. Other threads' writes on the handle wait meanwhile (their
 * reads see the last commit). Each call inside keeps its own all-or-nothing
 * rule: a call that fails undoes only itself, except where the store
 * cannot confine the failure to the call (disk full, an I/O error, out of
 * memory while pages were written): then the whole transaction is rolled
 * back, and every later call of the thread inside it fails with
 * TUREEN_E_IO, writing nothing, until the transaction ends (its commit
 * fails the same way, and ends it). Closing the store on the owning thread rolls the transaction
 * back. Do not sync or rekey inside one.
 */

/* Errors: TUREEN_E_MISUSE (closed store; this thread already has one open);
 * TUREEN_E_BUSY (another process holds the write lock past busy_timeout_ms). */
int tureen_transaction_begin(tureen_store *store);

/* Commits the calling thread's transaction. Errors: TUREEN_E_MISUSE (none
 * open on this thread); TUREEN_E_IO. On error the transaction is rolled back
 * and ended. */
int tureen_transaction_commit(tureen_store *store);

/* Rolls back the calling thread's transaction. Errors: TUREEN_E_MISUSE (none
 * open on this thread). */
int tureen_transaction_rollback(tureen_store *store);

#ifdef __cplusplus
}
#endif

#endif /* TUREEN_H */
