/* The Transactions area of tureen.h: several calls that commit or roll back
 * together, a failing call inside that undoes only itself, and listeners
 * that hear of a transaction once, at its commit.
 * Usage: transactions [directory]   (default: /tmp) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "example.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int events, markers;

static void on_change(void *ctx, const char *json)
{
    (void)ctx;
    cJSON *event = cJSON_Parse(json);
    int is_marker = event && strcmp(string_of(event, "soup"), "markers") == 0;
    cJSON_Delete(event);
    if (!is_marker) printf("  change: %s\n", json);
    pthread_mutex_lock(&lock);
    if (is_marker) markers++; else events++;
    pthread_mutex_unlock(&lock);
}

static int64_t count(tureen_store *store, const char *soup)
{
    char spec[128];
    snprintf(spec, sizeof spec, "{\"queryType\": \"all\", \"soupName\": \"%s\"}", soup);
    int64_t n = 0;
    check(tureen_count(store, spec, &n), "count");
    return n;
}

/* Events arrive on the library's thread, in commit order. To know every
 * event of the commits so far has arrived, commit a marker and wait (at most
 * 5 s) for its event: whatever came before it has been delivered. */
static int events_so_far(tureen_store *store)
{
    pthread_mutex_lock(&lock);
    int want = markers + 1;
    pthread_mutex_unlock(&lock);
    check(tureen_upsert(store, "markers", "{\"at\": 1}", NULL, NULL), "marker");
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&lock);
        int arrived = markers >= want, n = events;
        pthread_mutex_unlock(&lock);
        if (arrived) return n;
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    expect(0, "the marker's event did not arrive within 5 s");
    return -1;
}

int main(int argc, char **argv)
{
    tureen_store *store = open_fresh_store(argc > 1 ? argv[1] : "/tmp", "transactions-c");
    check(tureen_soup_register(store, "accounts", "[{\"path\": \"owner\", \"type\": \"string\"}]"), "register");
    check(tureen_soup_register(store, "ledger", "[{\"path\": \"account\", \"type\": \"string\"}]"), "register");
    check(tureen_soup_register(store, "markers", "[{\"path\": \"at\", \"type\": \"integer\"}]"), "register");
    tureen_listener *listener = NULL;
    check(tureen_soup_listen(store, NULL, on_change, NULL, NULL, &listener), "listen to every soup");

    /* Rolled back: nothing stays, and nobody hears of it. */
    check(tureen_transaction_begin(store), "begin");
    check(tureen_upsert(store, "accounts", "{\"owner\": \"ada\", \"balance\": 100}", NULL, NULL), "upsert");
    check(tureen_upsert(store, "ledger", "{\"account\": \"ada\", \"amount\": 100}", NULL, NULL), "upsert");
    printf("inside the transaction: %lld account(s)\n", (long long)count(store, "accounts"));
    check(tureen_transaction_rollback(store), "rollback");
    int heard = events_so_far(store);
    printf("after rollback: %lld account(s), %d event(s)\n", (long long)count(store, "accounts"), heard);
    expect(count(store, "accounts") == 0 && heard == 0, "a rolled-back write stayed or was announced");

    /* Committed: both soups at once, one event per soup. A call that fails
     * inside (a bad entry) undoes only itself. */
    check(tureen_transaction_begin(store), "begin");
    int rc = tureen_transaction_begin(store);
    printf("a second begin on the same thread: status %d (TUREEN_E_MISUSE is %d)\n", rc, TUREEN_E_MISUSE);
    expect(rc == TUREEN_E_MISUSE, "transactions nested");
    check(tureen_upsert(store, "accounts", "[{\"owner\": \"ada\", \"balance\": 100}, {\"owner\": \"alan\", \"balance\": 0}]",
                        NULL, NULL), "upsert");
    rc = tureen_upsert(store, "ledger", "[{\"account\": \"ada\"}, \"not an entry\"]", NULL, NULL);
    printf("a failing call inside: status %d; the transaction goes on\n", rc);
    expect(rc == TUREEN_E_INVALID, "a bad entry was accepted");
    check(tureen_upsert(store, "ledger", "[{\"account\": \"ada\", \"amount\": 100}, {\"account\": \"alan\", \"amount\": 0}]",
                        NULL, NULL), "upsert");
    check(tureen_transaction_commit(store), "commit");
    heard = events_so_far(store);
    printf("after commit: %lld accounts, %lld ledger lines, %d events\n", (long long)count(store, "accounts"),
           (long long)count(store, "ledger"), heard);
    expect(count(store, "accounts") == 2 && count(store, "ledger") == 2, "the commit lost writes");
    expect(heard == 2, "the transaction was not announced once per soup");

    check(tureen_listener_remove(listener), "remove listener");
    check(tureen_store_close(store), "close");
    return 0;
}
