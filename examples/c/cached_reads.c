/* The Cached reads area of tureen.h: read server data through the store's
 * encrypted cache. A record and a query of records from Kinto, answered by
 * the server then by the cache within its time to live; a server-side
 * change picked up by a background refresh that a listener on "cache_soup"
 * hears of; a size budget; clearing.
 * Usage: cached_reads KINTO_URL [directory]   (`make demo` starts a Kinto) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "example.h"

static char target[1024];

/* Fetches through the cache and prints where the answer came from. */
static cJSON *fetch(tureen_store *store, const char *resource, const char *options)
{
    char request[1536], *json = NULL;
    snprintf(request, sizeof request, "{\"target\": %s, %s}", target, resource);
    check(tureen_cache_fetch(store, request, options, &json), "cache fetch");
    cJSON *answer = take_json(json);
    printf("  %-28s %-38s -> from the %s, %.0f ms old\n", resource, options ? options : "(default policy)",
           string_of(answer, "source"), number_of(answer, "ageMs"));
    return answer;
}

/* Counts the change events of cache_soup; runs on the library's thread. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int refreshed;

static void on_cache_change(void *ctx, const char *json)
{
    (void)ctx;
    cJSON *event = cJSON_Parse(json);
    int updated = event ? cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(event, "updated")) : 0;
    cJSON_Delete(event);
    pthread_mutex_lock(&lock);
    refreshed += updated;
    pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv)
{
    kinto_target_from_args(argc, argv, "cache-c", target, sizeof target);
    const char *dir = argc > 2 ? argv[2] : "/tmp";

    /* A device publishes a price list (a sync up); the app reads it cached. */
    tureen_store *publisher = open_fresh_store(dir, "cached-reads-publisher");
    check(tureen_soup_register(publisher, "prices", "[{\"path\": \"id\", \"type\": \"string\"}]"), "register");
    check(tureen_local_upsert(publisher, "prices", "[{\"id\": \"tea\", \"eur\": 4}, {\"id\": \"rice\", \"eur\": 2},"
                                                   " {\"id\": \"miso\", \"eur\": 6}]", NULL, NULL), "local upsert");
    check(tureen_sync_up(publisher, target, "prices", NULL, NULL, NULL, NULL), "sync up");

    tureen_store *app = open_fresh_store(dir, "cached-reads-app");
    cJSON *a = fetch(app, "\"id\": \"tea\"", "{\"policy\": \"LOCAL\", \"ttl_ms\": 60000}");
    expect(strcmp(string_of(a, "source"), "server") == 0, "the first read did not ask the server");
    cJSON_Delete(a);
    a = fetch(app, "\"id\": \"tea\"", "{\"policy\": \"LOCAL\", \"ttl_ms\": 60000}");
    expect(strcmp(string_of(a, "source"), "cache") == 0, "a fresh answer was not served from the cache");
    cJSON_Delete(a);
    a = fetch(app, "\"query\": {\"eur\": 2}", NULL);
    printf("  costing 2 EUR: %d record(s)\n", cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a, "data")));
    cJSON_Delete(a);

    /* The price changes on the server: the app answers at once from the
     * cache, and a refresh in the background brings the new price. */
    check(tureen_local_upsert(publisher, "prices", "{\"id\": \"tea\", \"eur\": 5}", NULL, NULL), "local upsert");
    check(tureen_sync_up(publisher, target, "prices", NULL, NULL, NULL, NULL), "sync up");
    tureen_listener *listener = NULL;
    check(tureen_soup_listen(app, "cache_soup", on_cache_change, NULL, NULL, &listener), "listen");
    a = fetch(app, "\"id\": \"tea\"", "{\"policy\": \"ReturnCacheDataAndReload\"}");
    printf("  tea now: %.0f EUR (refreshing: %s)\n", number_of(cJSON_GetObjectItemCaseSensitive(a, "data"), "eur"),
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "refreshing")) ? "yes" : "no");
    cJSON_Delete(a);
    int heard = 0;
    for (int i = 0; i < 1000 && !heard; i++) { /* at most 10 s */
        pthread_mutex_lock(&lock);
        heard = refreshed;
        pthread_mutex_unlock(&lock);
        if (!heard) nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    expect(heard, "the refreshed answer was not announced");
    check(tureen_listener_remove(listener), "remove listener");
    a = fetch(app, "\"id\": \"tea\"", "{\"policy\": \"ReturnCacheDataDontReload\"}");
    printf("  after the refresh: tea %.0f EUR\n", number_of(cJSON_GetObjectItemCaseSensitive(a, "data"), "eur"));
    expect(number_of(cJSON_GetObjectItemCaseSensitive(a, "data"), "eur") == 5, "the refresh did not bring the new price");
    cJSON_Delete(a);

    /* A budget of 1 KiB keeps the most recently used answers; then clear. */
    check(tureen_cache_configure(app, "{\"max_bytes\": 1024}"), "configure");
    int64_t removed = 0;
    check(tureen_cache_clear(app, NULL, &removed), "clear");
    printf("cleared %lld cached answer(s)\n", (long long)removed);
    check(tureen_store_close(app), "close");
    check(tureen_store_close(publisher), "close");
    return 0;
}
