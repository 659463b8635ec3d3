/* The Stores area of tureen.h: open with options, a wrong key refused, size,
 * compaction, the integrity check, stopping a runaway query from another
 * thread, rekeying, and removing the files.
 * Usage: stores [directory]   (default: /tmp) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "example.h"

static const char *endless =
    "{\"queryType\": \"smart\", \"pageSize\": 1, \"smartSql\":"
    " \"WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n\"}";

/* A watchdog: after 200 ms, stops whatever query runs on the store. */
static void *watchdog(void *arg)
{
    nanosleep(&(struct timespec){0, 200000000}, NULL);
    tureen_store_interrupt(arg);
    return NULL;
}

static int64_t size_of(tureen_store *store)
{
    int64_t bytes = 0;
    check(tureen_store_size(store, &bytes), "size");
    return bytes;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/stores-c.tureen", dir);
    tureen_store_remove(path);

    /* "create": false refuses to make a new file; a queries' time limit. */
    tureen_store *store = NULL;
    int rc = tureen_store_open(path, "{\"key\": \"open sesame\", \"create\": false}", &store);
    printf("no file and create false: status %d (TUREEN_E_NOT_FOUND is %d)\n", rc, TUREEN_E_NOT_FOUND);
    expect(rc == TUREEN_E_NOT_FOUND, "a store was created although create was false");
    check(tureen_store_open(path, "{\"key\": \"open sesame\", \"busy_timeout_ms\": 2000, \"query_timeout_ms\": 10000}",
                            &store), "open");

    /* 2,000 entries of 1 KB, then most of them deleted. */
    check(tureen_soup_register(store, "logs", "[{\"path\": \"n\", \"type\": \"integer\"}]"), "register");
    cJSON *batch = cJSON_CreateArray();
    char filler[1001];
    memset(filler, 'x', 1000);
    filler[1000] = '\0';
    for (int i = 0; i < 2000; i++) {
        cJSON *entry = cJSON_CreateObject();
        cJSON_AddNumberToObject(entry, "n", i);
        cJSON_AddStringToObject(entry, "text", filler);
        cJSON_AddItemToArray(batch, entry);
    }
    char *entries = give_json(batch);
    check(tureen_upsert(store, "logs", entries, NULL, NULL), "upsert");
    free(entries);
    int64_t full = size_of(store);
    check(tureen_remove_by_query(store, "{\"queryType\": \"range\", \"soupName\": \"logs\", \"indexPath\": \"n\","
                                        " \"beginKey\": 100, \"pageSize\": 10}"), "remove by query");
    check(tureen_store_compact(store), "compact");
    int64_t compacted = size_of(store);
    printf("on disk: %lld bytes with 2000 entries, %lld after removing 1900 and compacting\n", (long long)full,
           (long long)compacted);
    expect(compacted < full / 2, "compaction gave no space back");
    check(tureen_store_check(store), "integrity check");
    printf("integrity check: sound\n");

    /* A query that would never end, stopped by another thread. */
    pthread_t dog;
    expect(pthread_create(&dog, NULL, watchdog, store) == 0, "no thread");
    char *json = NULL;
    rc = tureen_query(store, endless, 0, &json);
    pthread_join(dog, NULL);
    printf("an endless query, interrupted: status %d (TUREEN_E_CANCELLED is %d): %s\n", rc, TUREEN_E_CANCELLED,
           tureen_errmsg());
    expect(rc == TUREEN_E_CANCELLED && json == NULL, "the endless query was not cancelled");

    /* Rekey to a raw key (from a keystore, say): the passphrase stops working. */
    check(tureen_store_rekey(store, "{\"raw_key\": \"6b1e9d0c8f3a4e5b7c2d1f0e9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b\"}"),
          "rekey");
    check(tureen_store_close(store), "close");
    rc = tureen_store_open(path, "{\"key\": \"open sesame\"}", &store);
    printf("after rekey the passphrase is refused: status %d (TUREEN_E_KEY is %d)\n", rc, TUREEN_E_KEY);
    expect(rc == TUREEN_E_KEY, "the old key still opens the store");
    check(tureen_store_open(path, "{\"raw_key\": \"6b1e9d0c8f3a4e5b7c2d1f0e9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b\"}",
                            &store), "open with the raw key");
    int64_t left = 0;
    check(tureen_count(store, "{\"queryType\": \"all\", \"soupName\": \"logs\"}", &left), "count");
    printf("the raw key opens it, with its %lld entries\n", (long long)left);
    expect(left == 100, "entries were lost");

    /* Removing an open store is refused; closed, its files go. */
    expect(tureen_store_remove(path) == TUREEN_E_MISUSE, "an open store was removed");
    check(tureen_store_close(store), "close");
    check(tureen_store_remove(path), "remove");
    printf("store removed\n");
    return 0;
}
