/* SmartSync's cache policies through the C ABI, against the real Kinto the
 * runner started: every policy of the Mobile SDK guide's table, in its iOS
 * and its Android spelling, answers a cold and a warm cache as the table
 * says, and leaves the cache as it says; near misses are refused. */
#include "files.h"
#include "check.h"
#include "sync_util.h"
#include <unistd.h>

#define SPECS "[{\"path\":\"id\",\"type\":\"string\"},{\"path\":\"n\",\"type\":\"integer\"}]"

/* What a fetch gave: its source ("server", "cache", "null") or, on error, "rc=N". */
struct seen {
    char source[16];
    int held; /* whether a cached answer is there afterwards */
};

static const struct policy {
    const char *ios, *android;
    struct seen cold, warm;
} policies[] = {
    {"IgnoreCacheData", "IGNORE_CACHE_DATA", {"server", 0}, {"server", 1}},
    {"ReloadAndReturnCacheOnFailure", "RELOAD_AND_RETURN_CACHE_ON_FAILURE", {"server", 1}, {"server", 1}},
    {"ReturnCacheDataDontReload", "RETURN_CACHE_DATA_DONT_RELOAD", {"rc=3", 0}, {"cache", 1}},
    {"ReloadAndReturnCacheData", "RELOAD_AND_RETURN_CACHE_DATA", {"server", 1}, {"server", 1}},
    {"ReloadIfExpiredAndReturnCacheData", "RELOAD_IF_EXPIRED_AND_RETURN_CACHE_DATA", {"server", 1}, {"cache", 1}},
    {"InvalidateCacheDontReload", "INVALIDATE_CACHE_DONT_RELOAD", {"null", 0}, {"null", 0}},
    {"InvalidateCacheAndReload", "INVALIDATE_CACHE_AND_RELOAD", {"server", 1}, {"server", 1}},
};

static char request[1400];

static int fetch(tureen_store *s, const char *policy, char *source, size_t n)
{
    char options[128], *json = NULL;
    snprintf(options, sizeof options, "{\"policy\":\"%s\"}", policy);
    int rc = tureen_cache_fetch(s, request, options, &json);
    if (rc != TUREEN_OK) snprintf(source, n, "rc=%d", rc);
    else if (strstr(json, "\"source\":null")) snprintf(source, n, "null");
    else {
        const char *p = strstr(json, "\"source\":\"");
        snprintf(source, n, "%.*s", p ? (int)strcspn(p + 10, "\"") : 0, p ? p + 10 : "");
    }
    tureen_free(json);
    return rc;
}

/* Runs `policy` on a cold cache (nothing cached) or a warm one. */
static struct seen outcome(tureen_store *s, const char *policy, int warm)
{
    struct seen out;
    char ignored[16];
    tureen_cache_clear(s, NULL, NULL);
    if (warm) fetch(s, "ReloadAndReturnCacheOnError", ignored, sizeof ignored);
    fetch(s, policy, out.source, sizeof out.source);
    out.held = fetch(s, "ReturnCacheDataDontReload", ignored, sizeof ignored) == TUREEN_OK;
    return out;
}

static int same(struct seen a, struct seen b) { return strcmp(a.source, b.source) == 0 && a.held == b.held; }

int main(void)
{
    char path[600], target[1024], collection[64], what[256];
    const char *dir = make_temp_dir();
    snprintf(path, sizeof path, "%s/cache.tureen", dir);
    snprintf(collection, sizeof collection, "cache%ld", (long)getpid());
    kinto_target(target, sizeof target, collection);
    snprintf(request, sizeof request, "{\"target\":%s,\"id\":\"r1\"}", target);

    tureen_store *s = NULL;
    CHECK_RC(tureen_store_open(path, "{\"key\":\"c\",\"kdf_iter\":1000}", &s), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "items", SPECS), TUREEN_OK);
    /* The record the fetches read, published by a sync up. */
    CHECK_RC(tureen_local_upsert(s, "items", "{\"id\":\"r1\",\"n\":1}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_sync_up(s, target, "items", NULL, NULL, NULL, NULL), TUREEN_OK);

    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++) {
        const struct policy *p = &policies[i];
        const char *names[2] = {p->ios, p->android};
        for (int k = 0; k < 2; k++) {
            for (int warm = 0; warm < 2; warm++) {
                struct seen want = warm ? p->warm : p->cold, got = outcome(s, names[k], warm);
                snprintf(what, sizeof what, "%s on a %s cache: %s (held %d), expected %s (held %d)", names[k],
                         warm ? "warm" : "cold", got.source, got.held, want.source, want.held);
                CHECK(same(got, want), what);
            }
        }
    }

    /* Neither spelling: refused, the message saying both are taken. */
    char source[16];
    const char *near[] = {"reload_and_return_cache_data", "RELOADANDRETURNCACHEDATA", "Reload_And_Return_Cache_Data"};
    for (size_t i = 0; i < 3; i++) {
        CHECK(fetch(s, near[i], source, sizeof source) == TUREEN_E_INVALID, near[i]);
        CHECK(strstr(tureen_errmsg(), "Android") != NULL, "the message names the Android spelling");
    }

    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
