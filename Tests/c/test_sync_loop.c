/* The sync loop, sync events and managed syncs through the C ABI, against
 * the real Kinto the runner started: two stores with loops converge, events
 * arrive on the library's thread with their fields, syncs are defined
 * without running, updated, listed and deleted, and misuse is refused. */
#include "files.h"
#include "check.h"
#include "sync_util.h"
#include <pthread.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#define SPECS "[{\"path\":\"id\",\"type\":\"string\"},{\"path\":\"n\",\"type\":\"integer\"}]"

/* Events counted per code; the thread that delivered them recorded. */
struct events {
    pthread_mutex_t lock;
    int started, complete, failed, local_applied, remote_applied, record_delta;
    int fh_local, fh_remote, fh_complete;  /* with $fh.sync's dataset_id, uid and message */
    int freed;
    pthread_t thread;
};

static void on_event(void *ctx, const char *json)
{
    struct events *e = ctx;
    pthread_mutex_lock(&e->lock);
    e->thread = pthread_self();
    if (json_has(json, "code", "sync_started")) e->started++;
    if (json_has(json, "code", "sync_complete")) e->complete++;
    if (json_has(json, "code", "sync_failed")) e->failed++;
    if (json_has(json, "code", "local_update_applied")) e->local_applied++;
    if (json_has(json, "code", "remote_update_applied")) e->remote_applied++;
    if (json_has(json, "code", "record_delta_received")) e->record_delta++;
    if (json_has(json, "code", "local_update_applied") && json_has(json, "dataset_id", "items")
        && json_has(json, "message", "create") && (json_has(json, "uid", "a1") || json_has(json, "uid", "a2")))
        e->fh_local++;
    if (json_has(json, "code", "remote_update_applied") && json_has(json, "dataset_id", "up")
        && strstr(json, "\"message\":{\"action\":\"create\",\"type\":\"applied\",\"uid\":\"a"))
        e->fh_remote++;
    if (json_has(json, "code", "sync_complete") && json_has(json, "message", "online")
        && (json_has(json, "dataset_id", "up") || json_has(json, "dataset_id", "down")) && !strstr(json, "\"uid\""))
        e->fh_complete++;
    pthread_mutex_unlock(&e->lock);
}

static void on_free(void *ctx)
{
    struct events *e = ctx;
    pthread_mutex_lock(&e->lock);
    e->freed++;
    pthread_mutex_unlock(&e->lock);
}

static int get(struct events *e, int *field)
{
    pthread_mutex_lock(&e->lock);
    int v = *field;
    pthread_mutex_unlock(&e->lock);
    return v;
}

/* Entries still flagged as local changes (the soup holds a handful). */
static long long count_local(tureen_store *s)
{
    char *page = NULL;
    if (tureen_query(s, "{\"queryType\":\"all\",\"soupName\":\"items\",\"pageSize\":100}", 0, &page) != TUREEN_OK)
        return -1;
    long long n = occurrences(page, "\"__local__\":true");
    tureen_free(page);
    return n;
}

/* Polls `cond` for up to 20 s. */
#define EVENTUALLY(cond, what)                                                   \
    do {                                                                         \
        int ok_ = 0;                                                             \
        for (int i_ = 0; i_ < 400 && !ok_; i_++) {                               \
            if (cond) ok_ = 1; else usleep(50 * 1000);                           \
        }                                                                        \
        CHECK(ok_, what);                                                        \
    } while (0)

static int refresh_frees;
static int host_refresh(void *ctx, const char *request, char **credentials)
{
    (void)ctx; (void)request;
    *credentials = strdup("{\"bearer\":\"fresh\"}");
    return TUREEN_OK;
}
static void host_release(void *ctx, char *credentials) { (void)ctx; free(credentials); }
static void host_free_ctx(void *ctx) { (void)ctx; refresh_frees++; }

/* tureen_sync_update refuses a sync while it runs (MISUSE), and the loop
 * runs it every cycle: try between runs, a bounded number of times. */
static int update_between_runs(tureen_store *s, const char *name, const char *target, const char *options)
{
    int rc = TUREEN_E_MISUSE;
    for (int i = 0; i < 200 && rc == TUREEN_E_MISUSE; i++) {
        rc = tureen_sync_update(s, name, target, options);
        if (rc == TUREEN_E_MISUSE) usleep(50 * 1000);
    }
    return rc;
}

int main(void)
{
    char a_path[600], b_path[600], target[1024], collection[64], def[1200];
    const char *dir = make_temp_dir();
    snprintf(a_path, sizeof a_path, "%s/a.tureen", dir);
    snprintf(b_path, sizeof b_path, "%s/b.tureen", dir);
    snprintf(collection, sizeof collection, "loop%ld", (long)getpid());
    kinto_target(target, sizeof target, collection);

    tureen_store *a = NULL, *b = NULL;
    char *json = NULL;
    CHECK_RC(tureen_store_open(a_path, "{\"key\":\"a\",\"kdf_iter\":1000}", &a), TUREEN_OK);
    CHECK_RC(tureen_store_open(b_path, "{\"key\":\"b\",\"kdf_iter\":1000}", &b), TUREEN_OK);
    tureen_store *stores[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        CHECK_RC(tureen_soup_register(stores[i], "items", SPECS), TUREEN_OK);
        CHECK_RC(tureen_sync_up(stores[i], target, "items", "{\"name\":\"up\",\"start\":false}", NULL, NULL, &json), TUREEN_OK);
        CHECK(json_has(json, "status", "NEW"), "start:false defines the sync: NEW");
        tureen_free(json);
        CHECK_RC(tureen_sync_down(stores[i], target, "items", "{\"name\":\"down\",\"start\":false}", NULL, NULL, NULL), TUREEN_OK);
    }
    CHECK_RC(tureen_syncs(a, &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"name\":\"up\"") && strstr(json, "\"name\":\"down\"") && strstr(json, "<redacted>")
          && !strstr(json, "\"pw\""), "tureen_syncs lists both, credentials redacted");
    tureen_free(json);

    struct events ev = {.lock = PTHREAD_MUTEX_INITIALIZER};
    tureen_listener *listener = NULL;
    CHECK_RC(tureen_sync_listen(a, NULL, on_event, &ev, on_free, &listener), TUREEN_OK);
    CHECK_RC(tureen_sync_listen(a, "{\"codes\":[\"nonsense\"]}", on_event, &ev, on_free, &listener), TUREEN_E_INVALID);

    CHECK_RC(tureen_sync_loop_start(a, "{\"sync_frequency_ms\":150,\"debounce_ms\":20}"), TUREEN_OK);
    CHECK_RC(tureen_sync_loop_start(a, NULL), TUREEN_E_MISUSE);
    CHECK_RC(tureen_sync_loop_start(b, "{\"sync_frequency_ms\":150,\"debounce_ms\":20}"), TUREEN_OK);
    CHECK_RC(tureen_sync_loop_start(b, "{\"sync_frequency\":0}"), TUREEN_E_INVALID);

    /* Writes on both devices; the loops carry them across. */
    CHECK_RC(tureen_local_upsert(a, "items", "[{\"id\":\"a1\",\"n\":1},{\"id\":\"a2\",\"n\":2}]", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_local_upsert(b, "items", "[{\"id\":\"b1\",\"n\":3}]", NULL, NULL), TUREEN_OK);
    EVENTUALLY(count_all(a, "items") == 3 && count_all(b, "items") == 3 && count_local(a) == 0 && count_local(b) == 0,
               "both stores hold all three records, none left local");
    EVENTUALLY(get(&ev, &ev.complete) >= 2, "sync_complete events arrive");
    CHECK(get(&ev, &ev.started) >= 2, "sync_started events arrive");
    CHECK(get(&ev, &ev.local_applied) == 2, "local_update_applied: one per local change");
    CHECK(get(&ev, &ev.remote_applied) == 2, "remote_update_applied: one per change the server took");
    EVENTUALLY(get(&ev, &ev.record_delta) >= 1, "record_delta_received for b's record");
    CHECK(get(&ev, &ev.fh_local) == 2, "local_update_applied carries dataset_id (the soup), uid and message");
    CHECK(get(&ev, &ev.fh_remote) == 2, "remote_update_applied carries dataset_id (the sync's name) and $fh.sync's update object");
    CHECK(get(&ev, &ev.fh_complete) == get(&ev, &ev.complete), "sync_complete carries dataset_id and message \"online\", no uid");
    pthread_mutex_lock(&ev.lock);
    CHECK(!pthread_equal(ev.thread, pthread_self()), "events arrive on the library's thread");
    pthread_mutex_unlock(&ev.lock);

    CHECK_RC(tureen_sync_loop_status(a, &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"running\":true") && strstr(json, "\"offline\":false") && json_int(json, "cycles") > 0,
          "the loop's status says it runs and is online");
    tureen_free(json);
    CHECK_RC(tureen_sync_loop_force(a, "nope"), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_sync_loop_force(a, "down"), TUREEN_OK);
    CHECK_RC(tureen_sync_loop_force(a, NULL), TUREEN_OK);

    /* Managed: a running loop's sync can be updated between runs. */
    snprintf(def, sizeof def, "%s", target);
    CHECK_RC(update_between_runs(a, "down", NULL, "{\"mergeMode\":\"LEAVE_IF_CHANGED\"}"), TUREEN_OK);
    CHECK_RC(tureen_sync_update(a, "nope", NULL, NULL), TUREEN_E_NOT_FOUND);
    CHECK_RC(update_between_runs(a, "down", "{\"type\":\"kinto\"}", NULL), TUREEN_E_INVALID);
    CHECK_RC(tureen_sync_update(NULL, "down", NULL, NULL), TUREEN_E_MISUSE);

    CHECK_RC(tureen_sync_loop_stop(a), TUREEN_OK);
    CHECK_RC(tureen_sync_loop_stop(a), TUREEN_E_MISUSE);
    /* Without a loop, forcing runs a's syncs once, here (test_sync_again.c). */
    CHECK_RC(tureen_sync_loop_force(a, NULL), TUREEN_OK);
    CHECK_RC(tureen_sync_loop_status(a, &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"running\":false"), "no loop after stop");
    tureen_free(json);

    CHECK_RC(tureen_sync_delete(a, "down"), TUREEN_OK);
    CHECK_RC(tureen_sync_delete(a, "down"), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_sync_error_resolve(a, "items", 1, "retry"), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_sync_error_resolve(a, "items", 1, "explode"), TUREEN_E_INVALID);
    CHECK_RC(tureen_sync_error_resolve(a, NULL, 1, "retry"), TUREEN_E_MISUSE);
    /* Credential refreshers: versioned, required functions, removable. */
    CHECK(offsetof(tureen_auth_callbacks, ctx) == sizeof(void *) && offsetof(tureen_auth_callbacks, free_ctx) == 4 * sizeof(void *)
          && sizeof(tureen_auth_callbacks) == 5 * sizeof(void *), "tureen_auth_callbacks: an int version, then four pointers");
    tureen_auth_callbacks auth = TUREEN_AUTH_CALLBACKS_INIT;
    CHECK_RC(tureen_auth_register(a, "login", &auth), TUREEN_E_INVALID);
    auth.refresh = host_refresh;
    auth.release = host_release;
    auth.free_ctx = host_free_ctx;
    tureen_auth_callbacks old = auth;
    old.version = 0;
    CHECK_RC(tureen_auth_register(a, "login", &old), TUREEN_E_INVALID);
    CHECK_RC(tureen_auth_register(a, "login", NULL), TUREEN_E_MISUSE);
    CHECK_RC(tureen_auth_register(a, "login", &auth), TUREEN_OK);
    CHECK_RC(tureen_auth_unregister(a, "login"), TUREEN_OK);
    CHECK(refresh_frees == 1, "unregister calls the refresher's free_ctx once");
    CHECK_RC(tureen_auth_unregister(a, "login"), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_sync_down(a, "{\"type\":\"rest\",\"url\":\"http://127.0.0.1:9/x\",\"auth\":{\"refresh\":\"login\"}}",
                              "items", NULL, NULL, NULL, NULL), TUREEN_E_NOT_FOUND);

    int64_t republished = -1;
    CHECK_RC(tureen_sync_republish(a, "up", &republished), TUREEN_E_INVALID);
    CHECK_RC(tureen_sync_republish(a, "nope", &republished), TUREEN_E_NOT_FOUND);
    CHECK(republished == 0, "no count on error");
    CHECK_RC(tureen_sync_republish(a, NULL, NULL), TUREEN_E_MISUSE);

    CHECK_RC(tureen_sync_reset(a), TUREEN_OK);
    CHECK(count_all(a, "items") == 0, "reset empties the synced soup");
    CHECK_RC(tureen_syncs(a, &json), TUREEN_OK);
    CHECK(json && strcmp(json, "[]") == 0, "reset forgets every sync");
    tureen_free(json);
    CHECK_RC(tureen_syncs(a, NULL), TUREEN_E_MISUSE);

    /* Close with a loop running and a listener registered: both end, free_ctx once. */
    CHECK_RC(tureen_store_close(b), TUREEN_OK);
    CHECK_RC(tureen_store_close(a), TUREEN_OK);
    CHECK(get(&ev, &ev.freed) == 1, "free_ctx ran once when the store closed");
    CHECK_RC(tureen_listener_remove(listener), TUREEN_E_MISUSE);
    CHECK_RC(tureen_sync_loop_start(a, NULL), TUREEN_E_MISUSE);
    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
