/* Sync end to end through the C ABI against a real Kinto on loopback:
 * local changes go up in batches, come down into a second store, resync
 * brings deletions, a conflict is recorded and resolved, progress is
 * reported, a callback target works, and bad input is refused cleanly. */
#include "files.h"
#include "check.h"
#include "sync_util.h"
#include <stddef.h>
#include <unistd.h>

#define SPECS "[{\"path\":\"id\",\"type\":\"string\"},{\"path\":\"n\",\"type\":\"integer\"}]"

static int progress_calls;
static void on_progress(void *ctx, const char *state)
{
    (void)ctx;
    if (state && strstr(state, "\"done\":")) progress_calls++;
}

/* An in-memory "server" for the callback target. */
static int host_fetch(void *ctx, const char *request, char **response)
{
    (void)ctx;
    /* Two pages: the cursor says which. */
    if (strstr(request, "\"cursor\":null"))
        *response = strdup("{\"records\":[{\"id\":\"a\",\"n\":1,\"last_modified\":10},{\"id\":\"b\",\"n\":2,\"last_modified\":11}],\"cursor\":\"p2\"}");
    else
        *response = strdup("{\"records\":[{\"id\":\"c\",\"n\":3,\"last_modified\":12}],\"cursor\":null}");
    return TUREEN_OK;
}
static int host_created;
static int host_write(void *ctx, const char *request, char **response)
{
    (void)ctx;
    host_created++;
    /* Echo the record back as the server's copy. */
    const char *r = strstr(request, "\"record\":");
    size_t n = strlen(request);
    char *out = malloc(n + 16);
    snprintf(out, n + 16, "{%s", r ? r : "\"record\":null}");
    *response = out;
    return TUREEN_OK;
}
static int host_remove(void *ctx, const char *request, char **response)
{
    (void)ctx; (void)request;
    *response = NULL;
    return TUREEN_E_NOT_FOUND;  /* already gone: counts as applied */
}
static int released, freed;
static void host_release(void *ctx, char *response) { (void)ctx; released++; free(response); }
static void host_free_ctx(void *ctx) { (void)ctx; freed++; }

int main(void)
{
    char a_path[600], b_path[600], target[1024], collection[64];
    const char *dir = make_temp_dir();
    snprintf(a_path, sizeof a_path, "%s/a.tureen", dir);
    snprintf(b_path, sizeof b_path, "%s/b.tureen", dir);
    snprintf(collection, sizeof collection, "c%ld", (long)getpid());
    kinto_target(target, sizeof target, collection);

    tureen_store *a = NULL, *b = NULL;
    char *state = NULL, *json = NULL;
    CHECK_RC(tureen_store_open(a_path, "{\"key\":\"a\",\"kdf_iter\":1000}", &a), TUREEN_OK);
    CHECK_RC(tureen_store_open(b_path, "{\"key\":\"b\",\"kdf_iter\":1000}", &b), TUREEN_OK);
    CHECK_RC(tureen_soup_register(a, "items", SPECS), TUREEN_OK);
    CHECK_RC(tureen_soup_register(b, "items", SPECS), TUREEN_OK);

    /* 100 local creates go up in batches of 25. */
    char entries[100 * 40 + 8];
    size_t off = 0;
    entries[off++] = '[';
    for (int i = 0; i < 100; i++)
        off += (size_t)snprintf(entries + off, sizeof entries - off, "%s{\"n\":%d}", i ? "," : "", i);
    entries[off++] = ']';
    entries[off] = '\0';
    CHECK_RC(tureen_local_upsert(a, "items", entries, NULL, &json), TUREEN_OK);
    CHECK(occurrences(json, "\"__locally_created__\":true") == 100, "local_upsert marks new records created");
    CHECK(occurrences(json, "\"id\":\"") == 100, "local_upsert gives each new record a client id");
    tureen_free(json);

    progress_calls = 0;
    CHECK_RC(tureen_sync_up(a, target, "items", "{\"name\":\"up\"}", on_progress, NULL, &state), TUREEN_OK);
    CHECK(json_has(state, "status", "DONE"), "sync up ends DONE");
    CHECK(json_int(state, "synced") == 100, "sync up reports 100 synced");
    /* Exactly: 2 PUTs making sure the bucket and collection exist ("create"),
     * a GET of the server root for its batch limit (25 by default), then 4
     * /batch requests of 25; one request per change would be 103. */
    CHECK(json_int(state, "requests") == 2 + 1 + 4, "100 changes take 4 batch requests (plus creating the collection and reading the batch limit)");
    CHECK(progress_calls >= 4, "progress is reported after each batch");
    tureen_free(state);

    /* Down into another store. */
    CHECK_RC(tureen_sync_down(b, target, "items", "{\"name\":\"down\"}", NULL, NULL, &state), TUREEN_OK);
    CHECK(json_int(state, "synced") == 100, "sync down brings the 100 records");
    CHECK(json_int(state, "maxTimeStamp") > 0, "sync down keeps maxTimeStamp");
    tureen_free(state);
    CHECK(count_all(b, "items") == 100, "store b holds 100 entries");
    CHECK_RC(tureen_query(b, "{\"queryType\":\"exact\",\"soupName\":\"items\",\"indexPath\":\"n\",\"matchKey\":7,\"pageSize\":5}", 0, &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"__local__\":false"), "synced records are not local changes");
    tureen_free(json);

    /* A deletion on a, up; resync on b removes it. */
    CHECK_RC(tureen_local_delete(a, "items", "[1,2]"), TUREEN_OK);
    CHECK_RC(tureen_resync(a, "up", NULL, NULL, &state), TUREEN_OK);
    CHECK(json_int(state, "synced") == 2, "two deletions sent");
    tureen_free(state);
    CHECK(count_all(a, "items") == 98, "deleted entries leave the soup once the server has them");
    CHECK_RC(tureen_resync(b, "down", NULL, NULL, &state), TUREEN_OK);
    tureen_free(state);
    CHECK(count_all(b, "items") == 98, "resync applies the server's deletions");

    /* Both sides change entry n=10: LEAVE_IF_CHANGED records a conflict. */
    const char *q10 = "{\"queryType\":\"exact\",\"soupName\":\"items\",\"indexPath\":\"n\",\"matchKey\":10,\"pageSize\":1}";
    CHECK_RC(tureen_query(a, q10, 0, &json), TUREEN_OK);
    long long a10 = json_int(json, "_soupEntryId");
    char *idp = json ? strstr(json, "\"id\":\"") : NULL;
    char rid[64] = "";
    if (idp) { sscanf(idp + 6, "%63[^\"]", rid); }
    tureen_free(json);
    char change[256];
    snprintf(change, sizeof change, "{\"id\":\"%s\",\"n\":10,\"who\":\"b\"}", rid);
    CHECK_RC(tureen_local_upsert(b, "items", change, NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_sync_up(b, target, "items", "{\"name\":\"up-b\"}", NULL, NULL, &state), TUREEN_OK);
    tureen_free(state);
    snprintf(change, sizeof change, "{\"_soupEntryId\":%lld,\"id\":\"%s\",\"n\":10,\"who\":\"a\"}", a10, rid);
    CHECK_RC(tureen_local_upsert(a, "items", change, NULL, NULL), TUREEN_OK);
    /* LEAVE_IF_CHANGED leaving the record alone is what was asked: DONE, as
     * SmartSync says, with the conflict counted. */
    CHECK_RC(tureen_sync_up(a, target, "items", "{\"name\":\"up-a\",\"mergeMode\":\"LEAVE_IF_CHANGED\"}", NULL, NULL, &state),
             TUREEN_OK);
    CHECK(json_has(state, "status", "DONE") && json_int(state, "conflicts") == 1, "the conflict is counted in a DONE state");
    tureen_free(state);
    CHECK_RC(tureen_conflicts(a, "items", &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"conflictingChanges\":[\"who\"]"), "the conflict lists the field changed on both sides");
    tureen_free(json);
    CHECK_RC(tureen_conflict_resolve(a, "items", a10, "theirs", "{}"), TUREEN_E_INVALID);
    CHECK_RC(tureen_conflict_resolve(a, "items", a10, "yours", NULL), TUREEN_OK);
    CHECK_RC(tureen_conflict_resolve(a, "items", a10, "yours", NULL), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_resync(a, "up-a", NULL, NULL, &state), TUREEN_OK);
    tureen_free(state);
    CHECK_RC(tureen_resync(b, "down", NULL, NULL, &state), TUREEN_OK);
    tureen_free(state);
    CHECK_RC(tureen_query(b, q10, 0, &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"who\":\"a\""), "after 'yours' the local version wins on the server");
    tureen_free(json);

    /* Status, names and bad input. */
    CHECK_RC(tureen_sync_status(a, "up", &state), TUREEN_OK);
    CHECK(json_has(state, "type", "syncUp"), "status by name");
    tureen_free(state);
    CHECK_RC(tureen_sync_status(a, "nope", &state), TUREEN_E_NOT_FOUND);
    CHECK(state == NULL, "no state on error");
    CHECK_RC(tureen_sync_down(a, target, "items", "{\"name\":\"up\"}", NULL, NULL, &state), TUREEN_E_INVALID);
    CHECK_RC(tureen_sync_down(a, "{\"type\":\"kinto\"}", "items", NULL, NULL, NULL, &state), TUREEN_E_INVALID);
    CHECK_RC(tureen_sync_down(a, "{\"type\":\"ftp\"}", "items", NULL, NULL, NULL, &state), TUREEN_E_INVALID);
    CHECK_RC(tureen_sync_down(a, target, "nosoup", NULL, NULL, NULL, &state), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_sync_down(a, target, "items", "{\"mergeMode\":\"MERGE_ACCEPT_YOURS\"}", NULL, NULL, &state), TUREEN_E_INVALID);
    CHECK_RC(tureen_sync_down(a, target, "items", "{\"mergeMod\":\"OVERWRITE\"}", NULL, NULL, &state), TUREEN_E_INVALID);
    CHECK_RC(tureen_sync_down(NULL, target, "items", NULL, NULL, NULL, &state), TUREEN_E_MISUSE);
    CHECK_RC(tureen_sync_cancel(a, "nope"), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_local_delete(a, "items", "[999999]"), TUREEN_E_NOT_FOUND);

    /* Wrong password: 401 fails at once with a clear message. */
    char bad[1024];
    snprintf(bad, sizeof bad, "{\"type\":\"kinto\",\"url\":\"%s\",\"bucket\":\"ctests\",\"collection\":\"%s\",\"auth\":{\"bearer\":\"nonsense\"}}",
             getenv("TUREEN_KINTO_URL") ? getenv("TUREEN_KINTO_URL") : "", collection);
    CHECK_RC(tureen_sync_down(a, bad, "items", NULL, NULL, NULL, &state), TUREEN_E_HTTP);
    CHECK_MSG_HAS("401");
    tureen_free(state);
    /* Nothing listens there: a network error after bounded retries. */
    CHECK_RC(tureen_sync_down(a, "{\"type\":\"kinto\",\"url\":\"http://127.0.0.1:9/v1\",\"bucket\":\"x\",\"collection\":\"y\",\"max_retries\":1}",
                              "items", NULL, NULL, NULL, &state), TUREEN_E_NETWORK);
    tureen_free(state);

    /* A callback target: two pages down, one change up. */
    tureen_callbacks cb = {TUREEN_CALLBACKS_VERSION, NULL, host_fetch, host_write, host_write, host_remove, host_release,
                           host_free_ctx};
    /* The layout hosts in other languages copy (ctypes, FFI): version first. */
    CHECK(offsetof(tureen_callbacks, version) == 0 && offsetof(tureen_callbacks, ctx) == sizeof(void *)
          && offsetof(tureen_callbacks, free_ctx) == 7 * sizeof(void *) && sizeof(tureen_callbacks) == 8 * sizeof(void *),
          "tureen_callbacks: an int version, then seven pointers");
    tureen_callbacks unversioned = cb;
    unversioned.version = 0;
    CHECK_RC(tureen_target_register(a, "bad", &unversioned), TUREEN_E_INVALID);
    /* A refused name: the registration has not taken ctx (free_ctx is the host's to call). */
    CHECK_RC(tureen_target_register(a, "1 bad name", &cb), TUREEN_E_INVALID);
    CHECK(strstr(tureen_errmsg(), "callback target name") != NULL, "the error names what was refused");
    CHECK(freed == 0, "a refused target name does not free ctx");
    CHECK_RC(tureen_target_register(a, "mem", &cb), TUREEN_OK);
    CHECK_RC(tureen_soup_register(a, "memsoup", SPECS), TUREEN_OK);
    CHECK_RC(tureen_sync_down(a, "{\"type\":\"callback\",\"name\":\"mem\"}", "memsoup", NULL, NULL, NULL, &state), TUREEN_OK);
    CHECK(json_int(state, "synced") == 3, "callback fetch pages are followed");
    tureen_free(state);
    CHECK_RC(tureen_local_upsert(a, "memsoup", "{\"n\":4}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_sync_up(a, "{\"type\":\"callback\",\"name\":\"mem\"}", "memsoup", NULL, NULL, NULL, &state), TUREEN_OK);
    tureen_free(state);
    CHECK(host_created == 1, "the host's create ran once");
    CHECK(released == 3, "every host response was handed back to release");
    CHECK_RC(tureen_sync_down(a, "{\"type\":\"callback\",\"name\":\"other\"}", "memsoup", NULL, NULL, NULL, &state), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_target_unregister(a, "mem"), TUREEN_OK);
    CHECK(freed == 1, "unregister calls free_ctx");
    CHECK_RC(tureen_target_unregister(a, "mem"), TUREEN_E_NOT_FOUND);

    CHECK_RC(tureen_store_close(a), TUREEN_OK);
    CHECK_RC(tureen_store_close(b), TUREEN_OK);
    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
