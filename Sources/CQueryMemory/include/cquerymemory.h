#ifndef CQUERYMEMORY_H
#define CQUERYMEMORY_H
/* A memory budget for the query running on the calling thread, kept by
 * wrappers around SQLCipher's allocator (TureenStore/Queries/QueryMemory.swift).
 * SQLite 3.15 has no hard heap limit, and a query's sorter, temp tables
 * (TEMP_STORE=2 keeps them in memory) and values all come from this
 * allocator. Not part of Tureen's API; the version script keeps these
 * symbols out of the shared object's exports. */
#include <stdint.h>

/* Installs the wrappers through `config`, the address of the library's
 * sqlite3_config. Must run before the library's sqlite3_initialize (its
 * first open); returns 0 when installed, else SQLite's error code (the
 * library was already initialized by someone else: no budget applies). */
int cquerymemory_install(void *config);

/* From now until cquerymemory_end on this thread, an allocation that would
 * take this thread's SQLite memory past `limit` bytes fails (SQLITE_NOMEM). */
void cquerymemory_begin(int64_t limit);

/* Ends the budget; 1 when an allocation was refused under it, else 0. */
int cquerymemory_end(void);

#endif
