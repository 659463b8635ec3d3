/* The Events area of tureen.h: a soup listener that hears what each commit
 * created, updated and deleted, and a live query that re-delivers its page
 * when a commit changes it, each with a context the library frees through
 * free_ctx when the listener is removed.
 * Usage: events [directory]   (default: /tmp) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "example.h"

/* What a listener has received. Callbacks run on the library's thread, so
 * the main thread reads it under the lock and waits on the condition. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int events;
    int created, updated, deleted; /* ids seen in soup events */
    int last_page_size;            /* entries on the live query's last page */
} received;

static received *received_new(void)
{
    received *r = calloc(1, sizeof *r);
    expect(r != NULL, "out of memory");
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
    return r;
}

/* free_ctx: the library calls it once, when the listener is removed. */
static void received_free(void *ctx)
{
    received *r = ctx;
    printf("  (listener context freed after %d events)\n", r->events);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->changed);
    free(r);
}

static void on_change(void *ctx, const char *json)
{
    received *r = ctx;
    cJSON *event = cJSON_Parse(json); /* borrowed for the call: parse, don't keep */
    if (!event) return;
    printf("  change: %s\n", json);
    pthread_mutex_lock(&r->lock);
    r->events++;
    r->created += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(event, "created"));
    r->updated += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(event, "updated"));
    r->deleted += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(event, "deleted"));
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    cJSON_Delete(event);
}

static void on_page(void *ctx, const char *json)
{
    received *r = ctx;
    cJSON *page = cJSON_Parse(json);
    if (!page) return;
    printf("  live page:");
    const cJSON *e;
    cJSON_ArrayForEach(e, page) printf(" %s", string_of(e, "task"));
    printf("\n");
    pthread_mutex_lock(&r->lock);
    r->events++;
    r->last_page_size = cJSON_GetArraySize(page);
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    cJSON_Delete(page);
}

/* Waits (at most 5 s) until `r` has had at least `events` events. */
static void wait_for(received *r, int events)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    pthread_mutex_lock(&r->lock);
    int rc = 0;
    while (r->events < events && rc == 0) rc = pthread_cond_timedwait(&r->changed, &r->lock, &until);
    pthread_mutex_unlock(&r->lock);
    expect(rc == 0, "an event did not arrive within 5 s");
}

int main(int argc, char **argv)
{
    tureen_store *store = open_fresh_store(argc > 1 ? argv[1] : "/tmp", "events-c");
    check(tureen_soup_register(store, "todos", "[{\"path\": \"task\", \"type\": \"string\"},"
                                               " {\"path\": \"done\", \"type\": \"integer\"}]"), "register");

    received *changes = received_new(), *live = received_new();
    tureen_listener *soup_listener = NULL, *live_query = NULL;
    check(tureen_soup_listen(store, "todos", on_change, changes, received_free, &soup_listener), "listen");
    /* The open todos, by task: delivered now, then after each commit that changes the page. */
    check(tureen_live_query(store, "{\"queryType\": \"exact\", \"soupName\": \"todos\", \"indexPath\": \"done\","
                                   " \"matchKey\": 0, \"orderPath\": \"task\"}",
                            on_page, live, received_free, &live_query), "live query");
    wait_for(live, 1);

    char *json = NULL;
    check(tureen_upsert(store, "todos", "[{\"task\": \"buy milk\", \"done\": 0}, {\"task\": \"call Ada\", \"done\": 0}]",
                        NULL, &json), "upsert");
    cJSON *stored = take_json(json);
    int64_t milk = (int64_t)number_of(cJSON_GetArrayItem(stored, 0), "_soupEntryId");
    cJSON_Delete(stored);
    wait_for(changes, 1);
    wait_for(live, 2);

    /* Ticking off the milk: one update, and the live page loses it. */
    char entry[128];
    snprintf(entry, sizeof entry, "{\"_soupEntryId\": %lld, \"task\": \"buy milk\", \"done\": 1}", (long long)milk);
    check(tureen_upsert(store, "todos", entry, NULL, NULL), "tick off");
    wait_for(changes, 2);
    wait_for(live, 3);
    char ids[32];
    snprintf(ids, sizeof ids, "[%lld]", (long long)milk);
    check(tureen_remove(store, "todos", ids), "remove");
    wait_for(changes, 3);

    pthread_mutex_lock(&changes->lock);
    printf("soup events: %d created, %d updated, %d deleted\n", changes->created, changes->updated, changes->deleted);
    expect(changes->created == 2 && changes->updated == 1 && changes->deleted == 1, "wrong soup events");
    pthread_mutex_unlock(&changes->lock);
    pthread_mutex_lock(&live->lock);
    int open_todos = live->last_page_size;
    pthread_mutex_unlock(&live->lock);
    expect(open_todos == 1, "the live page is out of date");

    /* Removing waits for a callback in flight, then frees the context. */
    check(tureen_listener_remove(live_query), "remove live query");
    check(tureen_listener_remove(soup_listener), "remove listener");
    int rc = tureen_listener_remove(soup_listener);
    printf("removing it twice: status %d (TUREEN_E_MISUSE is %d)\n", rc, TUREEN_E_MISUSE);
    expect(rc == TUREEN_E_MISUSE, "a stale listener handle was accepted");
    check(tureen_store_close(store), "close");
    return 0;
}
