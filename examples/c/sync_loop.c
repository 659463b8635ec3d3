/* The sync loop area of tureen.h: two devices, each with a loop in the
 * background. A local change on one is pushed by its loop on its own
 * (auto_sync_local_updates); the other's loop, forced, pulls it; the loop's
 * status is read with cJSON; the loops stop.
 * Usage: sync_loop KINTO_URL [directory]   (`make demo` starts a Kinto) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "example.h"

/* The record ids that arrived through record events, per device. */
typedef struct {
    pthread_mutex_t lock;
    int pushed, pulled;
} arrivals;

static void on_event(void *ctx, const char *json)
{
    arrivals *a = ctx;
    cJSON *event = cJSON_Parse(json);
    if (!event) return;
    const char *code = string_of(event, "code");
    printf("  event %s %s\n", code, string_of(event, "recordId"));
    pthread_mutex_lock(&a->lock);
    if (strcmp(code, "remote_update_applied") == 0) a->pushed++;
    if (strcmp(code, "record_delta_received") == 0) a->pulled++;
    pthread_mutex_unlock(&a->lock);
    cJSON_Delete(event);
}

/* Waits at most 10 s for *counter to reach n. */
static void wait_for(arrivals *a, int *counter, int n, const char *what)
{
    for (int tries = 0; tries < 1000; tries++) {
        pthread_mutex_lock(&a->lock);
        int have = *counter;
        pthread_mutex_unlock(&a->lock);
        if (have >= n) return;
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    fprintf(stderr, "no %s within 10 s\n", what);
    exit(1);
}

/* A device: a store with a soup, a sync up and a sync down defined (not run)
 * and a listener; the loop is started by the caller. */
static tureen_store *device(const char *dir, const char *name, const char *target, arrivals *a, tureen_listener **l)
{
    char file[64];
    snprintf(file, sizeof file, "sync-loop-%s", name);
    tureen_store *store = open_fresh_store(dir, file);
    check(tureen_soup_register(store, "notes", "[{\"path\": \"id\", \"type\": \"string\"}]"), "register");
    check(tureen_sync_up(store, target, "notes", "{\"name\": \"up\", \"start\": false}", NULL, NULL, NULL), "define up");
    check(tureen_sync_down(store, target, "notes", "{\"name\": \"down\", \"start\": false}", NULL, NULL, NULL),
          "define down");
    pthread_mutex_init(&a->lock, NULL);
    check(tureen_sync_listen(store, "{\"codes\": [\"remote_update_applied\", \"record_delta_received\"]}", on_event,
                             a, NULL, l), "listen");
    return store;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    char target[1024];
    kinto_target_from_args(argc, argv, "loop-c", target, sizeof target);
    arrivals at_desk = {0}, at_home = {0};
    tureen_listener *desk_listener = NULL, *home_listener = NULL;
    tureen_store *desk = device(dir, "desk", target, &at_desk, &desk_listener);
    tureen_store *home = device(dir, "home", target, &at_home, &home_listener);

    /* The desk syncs every second and pushes local changes 50 ms after they
     * settle; home syncs every minute, so only a forced run brings it news. */
    check(tureen_sync_loop_start(desk, "{\"sync_frequency_ms\": 1000, \"debounce_ms\": 50}"), "start desk loop");
    check(tureen_sync_loop_start(home, "{\"sync_frequency\": 60, \"syncs\": [\"down\"]}"), "start home loop");
    int rc = tureen_sync_loop_start(home, NULL);
    printf("a second loop on one handle: status %d (TUREEN_E_MISUSE is %d)\n", rc, TUREEN_E_MISUSE);
    expect(rc == TUREEN_E_MISUSE, "two loops ran on one handle");

    check(tureen_local_upsert(desk, "notes", "{\"id\": \"n1\", \"text\": \"written at the desk\"}", NULL, NULL),
          "local upsert");
    wait_for(&at_desk, &at_desk.pushed, 1, "push by the desk's loop");
    check(tureen_sync_loop_force(home, "down"), "force");
    wait_for(&at_home, &at_home.pulled, 1, "pull by home's loop");

    char *json = NULL;
    check(tureen_sync_loop_status(home, &json), "loop status");
    cJSON *status = take_json(json);
    printf("home's loop: running=%s offline=%s cycles=%d every %.0f ms\n",
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "running")) ? "yes" : "no",
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "offline")) ? "yes" : "no",
           (int)number_of(status, "cycles"), number_of(status, "syncFrequencyMs"));
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(status, "syncs"))
        printf("  %-4s %-8s %-5s runs=%d\n", string_of(s, "name"), string_of(s, "type"), string_of(s, "status"),
               (int)number_of(s, "runs"));
    cJSON_Delete(status);

    check(tureen_sync_loop_stop(desk), "stop desk loop");
    check(tureen_sync_loop_stop(home), "stop home loop");
    check(tureen_sync_loop_status(home, &json), "loop status");
    status = take_json(json);
    expect(!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(status, "running")), "the loop still runs");
    cJSON_Delete(status);
    check(tureen_listener_remove(desk_listener), "remove");
    check(tureen_listener_remove(home_listener), "remove");
    check(tureen_store_close(desk), "close");
    check(tureen_store_close(home), "close");
    printf("the note went from desk to home through the two loops\n");
    return 0;
}
