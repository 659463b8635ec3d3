/* The Managed syncs area of tureen.h: syncs defined ahead and run later,
 * listed, given new request headers without losing their place, a change the
 * server refused rolled back, a sync deleted, and RhoConnect's full reset at
 * log-out.
 * Usage: managed_syncs KINTO_URL [directory]   (`make demo` starts a Kinto) */
#include <string.h>
#include <time.h>
#include "example.h"

static char target[1024];

static void print_syncs(tureen_store *store)
{
    char *json = NULL;
    check(tureen_syncs(store, &json), "syncs");
    cJSON *syncs = take_json(json);
    const cJSON *s;
    cJSON_ArrayForEach(s, syncs) {
        const cJSON *auth = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "target"), "auth");
        const cJSON *headers = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "target"), "headers");
        printf("  %-5s %-8s %-7s synced=%d password=%s X-App-Version=%s\n", string_of(s, "name"), string_of(s, "type"),
               string_of(s, "status"), (int)number_of(s, "synced"), string_of(auth, "password"),
               string_of(headers, "X-App-Version"));
    }
    cJSON_Delete(syncs);
}

/* The target, sending the app's version in a header. */
static const char *target_with(const char *url, const char *collection, const char *app_version)
{
    snprintf(target, sizeof target,
             "{\"type\": \"kinto\", \"url\": \"%s\", \"bucket\": \"examples\", \"collection\": \"%s\","
             " \"auth\": {\"user\": \"demo\", \"password\": \"demo-password\"}, \"create\": true,"
             " \"headers\": {\"X-App-Version\": \"%s\"}}", url, collection, app_version);
    return target;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s KINTO_URL [directory]\n", argv[0]);
        return 2;
    }
    char collection[64];
    snprintf(collection, sizeof collection, "managed-c-%ld", (long)time(NULL));
    tureen_store *store = open_fresh_store(argc > 2 ? argv[2] : "/tmp", "managed-syncs-c");
    check(tureen_soup_register(store, "orders", "[{\"path\": \"id\", \"type\": \"string\"}]"), "register");

    /* Defined now ("start": false), run later by name. */
    char *state = NULL;
    const char *t = target_with(argv[1], collection, "1.0");
    check(tureen_sync_up(store, t, "orders", "{\"name\": \"push\", \"start\": false}", NULL, NULL, NULL), "define up");
    check(tureen_sync_down(store, t, "orders", "{\"name\": \"pull\", \"start\": false}", NULL, NULL, NULL),
          "define down");
    printf("two syncs defined (passwords and header values are redacted in every state):\n");
    print_syncs(store);

    check(tureen_local_upsert(store, "orders", "[{\"id\": \"o-1\", \"total\": 12}, {\"id\": \"o-2\", \"total\": 30}]",
                              NULL, NULL), "local upsert");
    check(tureen_resync(store, "push", NULL, NULL, &state), "push");
    tureen_free(state);
    check(tureen_resync(store, "pull", NULL, NULL, &state), "pull");
    tureen_free(state);

    /* New headers (or credentials) for the same collection: the sync keeps
     * its position; another collection would start it from scratch. */
    check(tureen_sync_update(store, "pull", target_with(argv[1], collection, "1.1"), NULL), "update");
    check(tureen_sync_status(store, "pull", &state), "status");
    cJSON *pull = take_json(state);
    printf("after new headers, pull is %s at maxTimeStamp %.0f\n", string_of(pull, "status"),
           number_of(pull, "maxTimeStamp"));
    expect(number_of(pull, "maxTimeStamp") > 0, "new headers lost the sync's position");
    cJSON_Delete(pull);

    /* Kinto refuses this id ("o 3!" is not a valid record id): the change
     * stays local with __last_error__, and the app rolls it back. */
    char *json = NULL;
    check(tureen_local_upsert(store, "orders", "{\"id\": \"o 3!\", \"total\": 5}", NULL, &json), "local upsert");
    cJSON *bad = take_json(json);
    int64_t bad_entry = (int64_t)number_of(bad, "_soupEntryId");
    cJSON_Delete(bad);
    int rc = tureen_resync(store, "push", NULL, NULL, &state);
    cJSON *push = take_json(state);
    const cJSON *error = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(push, "recordErrors"), 0);
    printf("push: status %d, %s: record %s refused with HTTP %d\n", rc, string_of(push, "status"),
           string_of(error, "id"), (int)number_of(error, "httpStatus"));
    expect(rc == TUREEN_E_HTTP && number_of(push, "failed") == 1, "the bad id was not refused");
    cJSON_Delete(push);
    check(tureen_sync_error_resolve(store, "orders", bad_entry, "rollback"), "rollback");
    int64_t n = 0;
    check(tureen_count(store, "{\"queryType\": \"all\", \"soupName\": \"orders\"}", &n), "count");
    printf("rolled back: the server never had it, so it is gone; %lld orders left\n", (long long)n);
    expect(n == 2, "the rollback left the refused record");
    check(tureen_resync(store, "push", NULL, NULL, &state), "push again");
    tureen_free(state);

    check(tureen_sync_delete(store, "pull"), "delete");
    printf("pull deleted; left:\n");
    print_syncs(store);

    /* Log-out: every synced soup emptied, every sync and credential gone. */
    check(tureen_sync_reset(store), "reset");
    check(tureen_count(store, "{\"queryType\": \"all\", \"soupName\": \"orders\"}", &n), "count");
    check(tureen_syncs(store, &json), "syncs");
    cJSON *left = take_json(json);
    printf("after the reset: %lld orders, %d syncs\n", (long long)n, cJSON_GetArraySize(left));
    expect(n == 0 && cJSON_GetArraySize(left) == 0, "the reset left data behind");
    cJSON_Delete(left);
    check(tureen_store_close(store), "close");
    return 0;
}
