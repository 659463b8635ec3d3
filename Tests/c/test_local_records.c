/* Records by their own id and merge saves through the C ABI, without a
 * server: tureen_local_read and tureen_local_delete_records find records by
 * the sync's id field ($fh.sync's doRead/doDelete(uid)), tureen_local_merge
 * keeps the members an update does not name (SmartSync's StoreCache.save),
 * and both send the events their siblings send. */
#include "files.h"
#include "check.h"
#include "sync_util.h"
#include <pthread.h>
#include <unistd.h>

#define SPECS "[{\"path\":\"id\",\"type\":\"string\"},{\"path\":\"n\",\"type\":\"integer\"}]"
#define TASK_SPECS "[{\"path\":\"uid\",\"type\":\"string\"}]"
#define CLEAN "\"__local__\":false,\"__locally_created__\":false,\"__locally_updated__\":false,\"__locally_deleted__\":false"

/* The sync events seen, one line each, for substring checks. */
struct events {
    pthread_mutex_t lock;
    char text[16384];
    size_t used;
};

static void on_event(void *ctx, const char *json)
{
    struct events *e = ctx;
    pthread_mutex_lock(&e->lock);
    size_t n = strlen(json);
    if (e->used + n + 2 < sizeof e->text) {
        memcpy(e->text + e->used, json, n);
        e->used += n;
        e->text[e->used++] = '\n';
        e->text[e->used] = '\0';
    }
    pthread_mutex_unlock(&e->lock);
}

/* How many events hold all of `a`, `b` and `c`. */
static int events_with(struct events *e, const char *a, const char *b, const char *c)
{
    int n = 0;
    pthread_mutex_lock(&e->lock);
    for (char *line = e->text; line && *line;) {
        char *end = strchr(line, '\n');
        *end = '\0';
        if (strstr(line, a) && strstr(line, b) && strstr(line, c)) n++;
        *end = '\n';
        line = end + 1;
    }
    pthread_mutex_unlock(&e->lock);
    return n;
}

/* Waits up to 10 s for `want` events holding a, b and c, then checks the count. */
static void expect_events(struct events *e, int want, const char *a, const char *b, const char *c, const char *what)
{
    for (int i = 0; i < 200 && events_with(e, a, b, c) < want; i++) usleep(50 * 1000);
    usleep(100 * 1000);  /* a late duplicate would show now */
    CHECK(events_with(e, a, b, c) == want, what);
}

static void read_by_id(tureen_store *s)
{
    char *json = NULL;
    /* In the order asked for; an id no entry holds is skipped. */
    CHECK_RC(tureen_local_read(s, "items", NULL, "[\"r2\",\"missing\",\"r1\"]", &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"id\":\"r2\"") && strstr(json, "\"id\":\"r1\"")
          && strstr(json, "\"id\":\"r2\"") < strstr(json, "\"id\":\"r1\"") && !strstr(json, "missing"),
          "local_read: the records by their ids, in the order asked for");
    CHECK(occurrences(json, "\"_soupEntryId\":") == 2, "local_read: each entry with its _soupEntryId");
    tureen_free(json);
    json = NULL;

    /* Another id field, and a number for an integer index. */
    CHECK_RC(tureen_local_read(s, "items", "n", "[2]", &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"id\":\"r2\"") && occurrences(json, "\"_soupEntryId\":") == 1,
          "local_read by an integer id field");
    tureen_free(json);
    json = NULL;
    /* A number finds its text in a string index, as the index converts it. */
    CHECK_RC(tureen_upsert(s, "items", "{\"id\":\"7\",\"n\":70," CLEAN "}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_local_read(s, "items", "id", "[7]", &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"n\":70"), "local_read: 7 finds \"7\" in a string index");
    tureen_free(json);
    json = NULL;
    CHECK_RC(tureen_local_read(s, "items", NULL, "[]", &json), TUREEN_OK);
    CHECK(json && strcmp(json, "[]") == 0, "local_read of no ids is []");
    tureen_free(json);
    json = NULL;

    /* Refusals. */
    CHECK_RC(tureen_local_read(s, "items", "name", "[\"one\"]", &json), TUREEN_E_INVALID);
    CHECK_MSG_HAS("name");
    CHECK(json == NULL, "no answer on error");
    CHECK_RC(tureen_local_read(s, "items", NULL, "{\"id\":\"r1\"}", &json), TUREEN_E_INVALID);
    CHECK_RC(tureen_local_read(s, "items", NULL, "[{\"id\":\"r1\"}]", &json), TUREEN_E_INVALID);
    CHECK_RC(tureen_local_read(s, "items", NULL, "[null]", &json), TUREEN_E_INVALID);
    CHECK_RC(tureen_local_read(s, "nosuch", NULL, "[\"r1\"]", &json), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_local_read(s, "items", NULL, NULL, &json), TUREEN_E_MISUSE);
    CHECK_RC(tureen_local_read(s, "items", NULL, "[\"r1\"]", NULL), TUREEN_E_MISUSE);
    CHECK_RC(tureen_local_read(NULL, "items", NULL, "[\"r1\"]", &json), TUREEN_E_MISUSE);
}

static void delete_by_id(tureen_store *s, struct events *ev)
{
    char *json = NULL;
    /* A synced record: marked, kept for sync up; an id given twice counts once. */
    CHECK_RC(tureen_local_delete_records(s, "items", NULL, "[\"r1\",\"r1\"]"), TUREEN_OK);
    CHECK_RC(tureen_local_read(s, "items", NULL, "[\"r1\"]", &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"__locally_deleted__\":true") && strstr(json, "\"__local__\":true"),
          "delete_records marks a synced record deleted and keeps it");
    tureen_free(json);
    json = NULL;
    expect_events(ev, 1, "\"local_update_applied\"", "\"recordId\":\"r1\"", "\"operation\":\"delete\"",
                  "delete_records: one local_update_applied for r1, as tureen_local_delete sends");

    /* An id no entry holds: nothing changes. */
    CHECK_RC(tureen_local_delete_records(s, "items", NULL, "[\"r2\",\"nope\"]"), TUREEN_E_NOT_FOUND);
    CHECK_MSG_HAS("nope");
    CHECK_RC(tureen_local_read(s, "items", NULL, "[\"r2\"]", &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"__locally_deleted__\":false"), "a failed delete_records changes nothing");
    tureen_free(json);
    json = NULL;

    /* A record created here and never sent goes at once. */
    CHECK_RC(tureen_local_upsert(s, "items", "{\"id\":\"fresh\",\"n\":5}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_local_delete_records(s, "items", "id", "[\"fresh\"]"), TUREEN_OK);
    CHECK_RC(tureen_local_read(s, "items", NULL, "[\"fresh\"]", &json), TUREEN_OK);
    CHECK(json && strcmp(json, "[]") == 0, "delete_records removes a record never sent at once");
    tureen_free(json);
    json = NULL;

    /* Another id field names the record in the event too. */
    CHECK_RC(tureen_upsert(s, "tasks", "{\"uid\":\"u1\",\"title\":\"t\"," CLEAN "}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_local_delete_records(s, "tasks", "uid", "[\"u1\"]"), TUREEN_OK);
    CHECK_RC(tureen_local_read(s, "tasks", "uid", "[\"u1\"]", &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"__locally_deleted__\":true"), "delete_records by the id field \"uid\"");
    tureen_free(json);
    json = NULL;
    expect_events(ev, 1, "\"soup\":\"tasks\"", "\"recordId\":\"u1\"", "\"operation\":\"delete\"",
                  "delete_records by \"uid\": the event names the record by its uid");

    CHECK_RC(tureen_local_delete_records(s, "items", "name", "[\"x\"]"), TUREEN_E_INVALID);
    CHECK_RC(tureen_local_delete_records(s, "items", NULL, "[true]"), TUREEN_E_INVALID);
    CHECK_RC(tureen_local_delete_records(s, "syncs_soup", "name", "[\"x\"]"), TUREEN_E_INVALID);
    CHECK_RC(tureen_local_delete_records(s, "nosuch", NULL, "[\"x\"]"), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_local_delete_records(s, "items", NULL, NULL), TUREEN_E_MISUSE);
}

static void merge(tureen_store *s, struct events *ev)
{
    char *json = NULL;
    CHECK_RC(tureen_upsert(s, "items",
                           "{\"id\":\"m1\",\"n\":1,\"name\":\"one\",\"extra\":{\"a\":1},\"gone\":5,"
                           "\"__last_error__\":\"refused\"," CLEAN "}", NULL, NULL), TUREEN_OK);
    /* Members not given are kept; given ones replace (null included); shallow. */
    CHECK_RC(tureen_local_merge(s, "items", "{\"id\":\"m1\",\"name\":\"ONE\",\"extra\":{\"b\":2},\"gone\":null}",
                                NULL, &json), TUREEN_OK);
    CHECK(json && json[0] == '{', "merge of an object answers an object");
    CHECK(json && strstr(json, "\"n\":1") && strstr(json, "\"name\":\"ONE\"") && strstr(json, "\"extra\":{\"b\":2}")
          && strstr(json, "\"gone\":null"), "merge keeps the members not given and replaces the rest");
    CHECK(json && strstr(json, "\"__local__\":true") && strstr(json, "\"__locally_updated__\":true")
          && strstr(json, "\"__locally_created__\":false") && !strstr(json, "__last_error__"),
          "merge marks the entry updated and clears its error");
    tureen_free(json);
    json = NULL;
    CHECK_RC(tureen_local_read(s, "items", NULL, "[\"m1\"]", &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"n\":1") && strstr(json, "\"name\":\"ONE\""), "the merge is what is stored");
    tureen_free(json);
    json = NULL;
    expect_events(ev, 1, "\"local_update_applied\"", "\"recordId\":\"m1\"", "\"operation\":\"update\"",
                  "merge: one local_update_applied update, as tureen_local_upsert sends");

    /* tureen_local_upsert, by contrast, drops what it is not given. */
    CHECK_RC(tureen_local_upsert(s, "items", "{\"id\":\"m1\",\"name\":\"only\"}", NULL, &json), TUREEN_OK);
    CHECK(json && !strstr(json, "\"n\":") && !strstr(json, "extra"), "local_upsert replaces the whole entry");
    tureen_free(json);
    json = NULL;

    /* By _soupEntryId, in a batch; a record not found is created. */
    long long m1 = -1;
    CHECK_RC(tureen_local_read(s, "items", NULL, "[\"m1\"]", &json), TUREEN_OK);
    m1 = json_int(json, "_soupEntryId");
    tureen_free(json);
    json = NULL;
    char batch[256];
    snprintf(batch, sizeof batch, "[{\"_soupEntryId\":%lld,\"n\":11},{\"n\":12}]", m1);
    int created = events_with(ev, "\"local_update_applied\"", "\"operation\":\"create\"", "\"soup\":\"items\"");
    CHECK_RC(tureen_local_merge(s, "items", batch, NULL, &json), TUREEN_OK);
    const char *kept = json ? strstr(json, "\"name\":\"only\"") : NULL, *n11 = json ? strstr(json, "\"n\":11") : NULL;
    const char *n12 = json ? strstr(json, "\"n\":12") : NULL;
    CHECK(json && json[0] == '[' && kept && n11 && n12 && kept < n12 && n11 < n12
          && occurrences(json, "\"__locally_created__\":true") == 1,
          "merge by _soupEntryId keeps the rest; an entry not found is created");
    tureen_free(json);
    json = NULL;
    expect_events(ev, created + 1, "\"local_update_applied\"", "\"operation\":\"create\"", "\"soup\":\"items\"",
                  "merge: a created entry's local_update_applied");

    /* A record created here and merged stays created. */
    CHECK_RC(tureen_local_merge(s, "tasks", "{\"uid\":\"u2\",\"title\":\"draft\",\"due\":3}", "uid", NULL), TUREEN_OK);
    CHECK_RC(tureen_local_merge(s, "tasks", "{\"uid\":\"u2\",\"title\":\"final\"}", "uid", &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"due\":3") && strstr(json, "\"title\":\"final\"")
          && strstr(json, "\"__locally_created__\":true") && strstr(json, "\"__locally_updated__\":false"),
          "merge by the id field \"uid\"; a local create stays created");
    tureen_free(json);
    json = NULL;

    /* Nothing is written when an entry fails. */
    CHECK_RC(tureen_local_merge(s, "items", "[{\"id\":\"m1\",\"n\":99},7]", NULL, &json), TUREEN_E_INVALID);
    CHECK(json == NULL, "no answer on error");
    CHECK_RC(tureen_local_read(s, "items", NULL, "[\"m1\"]", &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"n\":11"), "a failed merge writes nothing");
    tureen_free(json);
    json = NULL;
    CHECK_RC(tureen_local_merge(s, "syncs_soup", "{\"id\":\"x\"}", NULL, NULL), TUREEN_E_INVALID);
    CHECK_RC(tureen_local_merge(s, "nosuch", "{\"id\":\"x\"}", NULL, NULL), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_local_merge(s, "items", NULL, NULL, NULL), TUREEN_E_MISUSE);
}

int main(void)
{
    char path[600];
    const char *dir = make_temp_dir();
    snprintf(path, sizeof path, "%s/records.tureen", dir);
    tureen_store *s = NULL;
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &s), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "items", SPECS), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "tasks", TASK_SPECS), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "items",
                           "[{\"id\":\"r1\",\"n\":1,\"name\":\"one\"," CLEAN "},"
                           "{\"id\":\"r2\",\"n\":2,\"name\":\"two\"," CLEAN "}]", NULL, NULL), TUREEN_OK);

    static struct events ev = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};
    tureen_listener *sync_listener = NULL, *soup_listener = NULL;
    CHECK_RC(tureen_sync_listen(s, "{\"codes\":[\"local_update_applied\"]}", on_event, &ev, NULL, &sync_listener),
             TUREEN_OK);

    static struct events soup_ev = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};
    CHECK_RC(tureen_soup_listen(s, "items", on_event, &soup_ev, NULL, &soup_listener), TUREEN_OK);
    read_by_id(s);
    /* r2 is entry 2: each call's commit reaches soup listeners as an update of it. */
    CHECK_RC(tureen_local_delete_records(s, "items", NULL, "[\"r2\"]"), TUREEN_OK);
    expect_events(&soup_ev, 1, "\"soup\":\"items\"", "\"updated\":[2]", "\"origin\":\"app\"",
                  "a soup listener hears delete_records' commit");
    CHECK_RC(tureen_local_merge(s, "items", "{\"id\":\"r2\",\"name\":\"back\"}", NULL, NULL), TUREEN_OK);
    expect_events(&soup_ev, 2, "\"soup\":\"items\"", "\"updated\":[2]", "\"origin\":\"app\"",
                  "a soup listener hears local_merge's commit");
    CHECK_RC(tureen_listener_remove(soup_listener), TUREEN_OK);
    /* r2 merged back: a merge revives a record deleted here, as an upsert does. */
    char *json = NULL;
    CHECK_RC(tureen_local_read(s, "items", NULL, "[\"r2\"]", &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"__locally_deleted__\":false") && strstr(json, "\"n\":2"),
          "a merge of a record deleted here revives it with its members");
    tureen_free(json);

    delete_by_id(s, &ev);
    merge(s, &ev);

    CHECK_RC(tureen_listener_remove(sync_listener), TUREEN_OK);
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    return DONE();
}
