/* The Sync events area of tureen.h: $fh.sync's notifications from direct
 * sync calls. One device writes and syncs up; another syncs down; each
 * listens for the codes it cares about. Then a server out of reach: the
 * sync fails, and a local change made meanwhile is an offline_update.
 * Usage: sync_events KINTO_URL [directory]   (`make demo` starts a Kinto) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "example.h"

/* Counts of each code received; the callback runs on the library's thread. */
static const char *codes[] = {"sync_started", "sync_complete", "sync_failed", "offline_update",
                              "collision_detected", "remote_update_failed", "remote_update_applied",
                              "local_update_applied", "delta_received", "record_delta_received",
                              "client_storage_failed"};
#define NCODES (int)(sizeof codes / sizeof codes[0])
typedef struct {
    const char *device;
    pthread_mutex_t lock;
    int count[NCODES];
} tally;

static void on_event(void *ctx, const char *json)
{
    tally *t = ctx;
    cJSON *event = cJSON_Parse(json);
    if (!event) return;
    const char *code = string_of(event, "code");
    printf("  %-6s %-22s", t->device, code);
    if (cJSON_GetObjectItemCaseSensitive(event, "recordId"))
        printf(" record %s (%s)", string_of(event, "recordId"), string_of(event, "operation"));
    if (strcmp(code, "sync_complete") == 0 || strcmp(code, "sync_failed") == 0)
        printf(" %s synced=%d %s", string_of(event, "type"), (int)number_of(event, "synced"),
               string_of(event, "error"));
    printf("\n");
    pthread_mutex_lock(&t->lock);
    for (int i = 0; i < NCODES; i++) if (strcmp(codes[i], code) == 0) t->count[i]++;
    pthread_mutex_unlock(&t->lock);
    cJSON_Delete(event);
}

/* Waits (at most 5 s) for `n` events of `code` in all. */
static void wait_for(tally *t, const char *code, int n)
{
    int i = 0;
    while (strcmp(codes[i], code) != 0) i++;
    for (int tries = 0; tries < 500; tries++) {
        pthread_mutex_lock(&t->lock);
        int have = t->count[i];
        pthread_mutex_unlock(&t->lock);
        if (have >= n) return;
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    fprintf(stderr, "%s: no %d %s event(s) within 5 s\n", t->device, n, code);
    exit(1);
}

static tureen_store *device(const char *dir, const char *name, tally *t, const char *filter, tureen_listener **out)
{
    char file[64];
    snprintf(file, sizeof file, "sync-events-%s", name);
    tureen_store *store = open_fresh_store(dir, file);
    check(tureen_soup_register(store, "tasks", "[{\"path\": \"id\", \"type\": \"string\"}]"), "register");
    t->device = name;
    pthread_mutex_init(&t->lock, NULL);
    check(tureen_sync_listen(store, filter, on_event, t, NULL, out), "sync listen");
    return store;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    char target[1024];
    kinto_target_from_args(argc, argv, "events-c", target, sizeof target);

    /* The writer hears everything; the reader only what a sync down brings,
     * in $fh.sync's flag style. */
    tally writer_events = {0}, reader_events = {0};
    tureen_listener *writer_listener = NULL, *reader_listener = NULL;
    tureen_store *writer = device(dir, "writer", &writer_events, NULL, &writer_listener);
    tureen_store *reader = device(dir, "reader", &reader_events,
                                  "{\"notify_record_delta_received\": true, \"notify_delta_received\": true,"
                                  " \"notify_sync_complete\": true}", &reader_listener);

    check(tureen_local_upsert(writer, "tasks", "[{\"id\": \"t1\", \"title\": \"water plants\"},"
                                               " {\"id\": \"t2\", \"title\": \"pay rent\"}]", NULL, NULL), "local upsert");
    wait_for(&writer_events, "local_update_applied", 2);
    char *state = NULL;
    check(tureen_sync_up(writer, target, "tasks", "{\"name\": \"up\"}", NULL, NULL, &state), "sync up");
    tureen_free(state);
    wait_for(&writer_events, "remote_update_applied", 2);
    wait_for(&writer_events, "sync_complete", 1);

    check(tureen_sync_down(reader, target, "tasks", "{\"name\": \"down\"}", NULL, NULL, &state), "sync down");
    tureen_free(state);
    wait_for(&reader_events, "sync_complete", 1);
    wait_for(&reader_events, "record_delta_received", 2);
    pthread_mutex_lock(&reader_events.lock);
    expect(reader_events.count[0] == 0, "the reader's filter let sync_started through");
    pthread_mutex_unlock(&reader_events.lock);

    /* The server out of reach (a closed port): the sync fails with
     * TUREEN_E_NETWORK (a sync up with nothing to send would not even try),
     * and the next local change is an offline_update. */
    check(tureen_local_upsert(writer, "tasks", "{\"id\": \"t3\", \"title\": \"fix the bike\"}", NULL, NULL),
          "local upsert");
    const char *unreachable = "{\"type\": \"kinto\", \"url\": \"http://127.0.0.1:9/v1\", \"bucket\": \"b\","
                              " \"collection\": \"c\", \"max_retries\": 0}";
    int rc = tureen_sync_up(writer, unreachable, "tasks", NULL, NULL, NULL, NULL);
    printf("sync up to a closed port: status %d (TUREEN_E_NETWORK is %d)\n", rc, TUREEN_E_NETWORK);
    expect(rc == TUREEN_E_NETWORK, "a closed port did not fail as a network error");
    wait_for(&writer_events, "sync_failed", 1);
    check(tureen_local_upsert(writer, "tasks", "{\"id\": \"t4\", \"title\": \"buy stamps\"}", NULL, NULL),
          "local upsert");
    wait_for(&writer_events, "offline_update", 1);

    check(tureen_listener_remove(writer_listener), "remove");
    check(tureen_listener_remove(reader_listener), "remove");
    check(tureen_store_close(writer), "close");
    check(tureen_store_close(reader), "close");
    printf("every expected event arrived\n");
    return 0;
}
