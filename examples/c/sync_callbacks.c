/* The Sync area of tureen.h, with a server the host implements: a callback
 * target whose fetch, create, update and remove functions keep the records
 * in this process (a stand-in for any API the host already talks to). Sync
 * down fills a soup with progress reported per page, an offline edit and a
 * new record go back up, and the sync states are read with cJSON.
 * (examples/c/sync_quickstart.c does the same against Kinto.)
 * Usage: sync_callbacks [directory]   (default: /tmp) */
#include <string.h>
#include "example.h"

/* The host's records, as the "server" holds them, and its clock. */
typedef struct {
    cJSON *records;
    long long clock;
    int requests;
} host_server;

static char *answer(cJSON *tree) /* what a callback returns: JSON the host allocated */
{
    char *text = cJSON_PrintUnformatted(tree);
    cJSON_Delete(tree);
    return text;
}

static cJSON *find(host_server *server, const char *id)
{
    cJSON *r;
    cJSON_ArrayForEach(r, server->records) if (strcmp(string_of(r, "id"), id) == 0) return r;
    return NULL;
}

/* fetch: the records modified at or after "since", three per page, the
 * cursor being the index to go on from. */
static int host_fetch(void *ctx, const char *request_json, char **response)
{
    host_server *server = ctx;
    server->requests++;
    cJSON *request = cJSON_Parse(request_json);
    long long since = (long long)number_of(request, "since");
    const cJSON *cursor = cJSON_GetObjectItemCaseSensitive(request, "cursor");
    int from = cJSON_IsNumber(cursor) ? cursor->valueint : 0, i = 0, sent = 0;
    cJSON_Delete(request);
    cJSON *page = cJSON_CreateObject(), *records = cJSON_AddArrayToObject(page, "records"), *r;
    cJSON_ArrayForEach(r, server->records) {
        if (i++ < from || (long long)number_of(r, "last_modified") < since) continue;
        if (sent == 3) break;
        cJSON_AddItemToArray(records, cJSON_Duplicate(r, 1));
        sent++;
    }
    if (r) cJSON_AddNumberToObject(page, "cursor", i - 1); /* more to come */
    else cJSON_AddNullToObject(page, "cursor");
    cJSON_AddNumberToObject(page, "total", cJSON_GetArraySize(server->records));
    *response = answer(page);
    return TUREEN_OK;
}

/* create and update: store the record with a new last_modified and answer
 * with the server's copy. */
static int host_write(void *ctx, const char *request_json, char **response)
{
    host_server *server = ctx;
    server->requests++;
    cJSON *request = cJSON_Parse(request_json);
    cJSON *record = cJSON_DetachItemFromObjectCaseSensitive(request, "record");
    cJSON_Delete(request);
    cJSON_DeleteItemFromObjectCaseSensitive(record, "last_modified");
    cJSON_AddNumberToObject(record, "last_modified", (double)++server->clock);
    cJSON *old = find(server, string_of(record, "id"));
    if (old) cJSON_ReplaceItemViaPointer(server->records, old, cJSON_Duplicate(record, 1));
    else cJSON_AddItemToArray(server->records, cJSON_Duplicate(record, 1));
    cJSON *reply = cJSON_CreateObject();
    cJSON_AddItemToObject(reply, "record", record);
    *response = answer(reply);
    return TUREEN_OK;
}

static int host_remove(void *ctx, const char *request_json, char **response)
{
    host_server *server = ctx;
    server->requests++;
    cJSON *request = cJSON_Parse(request_json);
    cJSON *old = find(server, string_of(request, "id"));
    cJSON_Delete(request);
    *response = NULL;
    if (!old) return TUREEN_E_NOT_FOUND; /* already gone counts as applied */
    cJSON_Delete(cJSON_DetachItemViaPointer(server->records, old));
    return TUREEN_OK;
}

static void host_release(void *ctx, char *response)
{
    (void)ctx;
    cJSON_free(response); /* the allocator that made it */
}

/* Progress after each page or batch, on the thread that called the sync. */
static void on_progress(void *ctx, const char *state_json)
{
    (void)ctx;
    cJSON *state = cJSON_Parse(state_json);
    printf("  %s %s: %d of %d\n", string_of(state, "type"), string_of(state, "status"),
           (int)number_of(state, "done"), (int)number_of(state, "totalSize"));
    cJSON_Delete(state);
}

int main(int argc, char **argv)
{
    tureen_store *store = open_fresh_store(argc > 1 ? argv[1] : "/tmp", "sync-callbacks-c");
    check(tureen_soup_register(store, "cities", "[{\"path\": \"id\", \"type\": \"string\"},"
                                                " {\"path\": \"country\", \"type\": \"string\"}]"), "register");
    host_server server = {cJSON_CreateArray(), 0, 0};
    const char *names[] = {"Lisbon", "Porto", "Lyon", "Nantes", "Turin", "Genoa", "Ghent"};
    const char *countries[] = {"PT", "PT", "FR", "FR", "IT", "IT", "BE"};
    for (int i = 0; i < 7; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "id", names[i]);
        cJSON_AddStringToObject(r, "country", countries[i]);
        cJSON_AddNumberToObject(r, "last_modified", (double)++server.clock);
        cJSON_AddItemToArray(server.records, r);
    }
    tureen_callbacks callbacks = TUREEN_CALLBACKS_INIT;
    callbacks.ctx = &server;
    callbacks.fetch = host_fetch;
    callbacks.create = host_write;
    callbacks.update = host_write;
    callbacks.remove = host_remove;
    callbacks.release = host_release;
    check(tureen_target_register(store, "cities-api", &callbacks), "register target");
    const char *target = "{\"type\": \"callback\", \"name\": \"cities-api\"}";

    char *json = NULL;
    check(tureen_sync_down(store, target, "cities", "{\"name\": \"cities-down\"}", on_progress, NULL, &json),
          "sync down");
    cJSON *state = take_json(json);
    printf("sync down %s: %d records in %d requests\n", string_of(state, "status"), (int)number_of(state, "synced"),
           server.requests);
    expect(number_of(state, "synced") == 7, "sync down missed records");
    cJSON_Delete(state);

    /* Offline: a new city and a changed one, marked as local changes. */
    check(tureen_local_upsert(store, "cities", "[{\"id\": \"Bruges\", \"country\": \"BE\"},"
                                               " {\"id\": \"Turin\", \"country\": \"IT\", \"river\": \"Po\"}]",
                              NULL, NULL), "local upsert");
    check(tureen_sync_up(store, target, "cities", "{\"name\": \"cities-up\"}", on_progress, NULL, &json), "sync up");
    state = take_json(json);
    printf("sync up %s: %d changes sent; the server has %d cities, Turin by the %s\n", string_of(state, "status"),
           (int)number_of(state, "synced"), cJSON_GetArraySize(server.records),
           string_of(find(&server, "Turin"), "river"));
    expect(cJSON_GetArraySize(server.records) == 8 && find(&server, "Bruges"), "sync up lost a change");
    cJSON_Delete(state);

    /* The server changes a record; resync fetches only what changed since. */
    cJSON *lyon = find(&server, "Lyon");
    cJSON_ReplaceItemInObjectCaseSensitive(lyon, "last_modified", cJSON_CreateNumber((double)++server.clock));
    cJSON_AddStringToObject(lyon, "river", "Rhone");
    check(tureen_resync(store, "cities-down", NULL, NULL, &json), "resync");
    tureen_free(json);
    check(tureen_sync_status(store, "cities-down", &json), "status");
    state = take_json(json);
    printf("resync %s; maxTimeStamp %d\n", string_of(state, "status"), (int)number_of(state, "maxTimeStamp"));
    cJSON_Delete(state);
    check(tureen_query(store, "{\"queryType\": \"exact\", \"soupName\": \"cities\", \"indexPath\": \"id\","
                              " \"matchKey\": \"Lyon\"}", 0, &json), "query");
    cJSON *rows = take_json(json);
    printf("Lyon here: by the %s\n", string_of(cJSON_GetArrayItem(rows, 0), "river"));
    expect(strcmp(string_of(cJSON_GetArrayItem(rows, 0), "river"), "Rhone") == 0, "resync missed the change");
    cJSON_Delete(rows);

    check(tureen_target_unregister(store, "cities-api"), "unregister target");
    check(tureen_store_close(store), "close");
    cJSON_Delete(server.records);
    return 0;
}
