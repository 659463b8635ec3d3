/* Syncs run again without tureen_resync, through the C ABI, against an
 * in-memory server behind callback targets: a named sync given again to
 * tureen_sync_down / tureen_sync_up runs again ($fh.sync's manage), another
 * definition under its name is refused naming tureen_sync_update, and
 * tureen_sync_loop_force with no loop runs syncs once on the calling thread
 * ($fh.sync's forceSync, RhoConnect's syncAll). */
#include "files.h"
#include "check.h"
#include "sync_util.h"
#include <unistd.h>

#define SPECS "[{\"path\":\"id\",\"type\":\"string\"},{\"path\":\"n\",\"type\":\"integer\"}]"
#define MEM "{\"type\":\"callback\",\"name\":\"mem\"}"
#define BROKEN "{\"type\":\"callback\",\"name\":\"broken\"}"

/* The server: records by id with their stamps, and what was asked of it
 * ("f" a fetch, "c" a create), in order. */
static struct {
    char ids[32][16];
    long stamps[32];
    int n;
    long clock;
    char log[256];
} server = {.clock = 100};

static void server_add(const char *id)
{
    snprintf(server.ids[server.n], sizeof server.ids[0], "%s", id);
    server.stamps[server.n++] = ++server.clock;
}

static void note(const char *what) { strncat(server.log, what, sizeof server.log - strlen(server.log) - 1); }

static int mem_fetch(void *ctx, const char *request, char **response)
{
    (void)ctx;
    note("f");
    long since = json_int(request, "since");
    size_t cap = 64 + 64 * (size_t)server.n, len = 0;
    char *out = malloc(cap);
    len += (size_t)snprintf(out, cap, "{\"records\":[");
    for (int i = 0; i < server.n; i++) {
        if (server.stamps[i] < since) continue;
        len += (size_t)snprintf(out + len, cap - len, "%s{\"id\":\"%s\",\"n\":%d,\"last_modified\":%ld}",
                                out[len - 1] == '[' ? "" : ",", server.ids[i], i, server.stamps[i]);
    }
    snprintf(out + len, cap - len, "],\"cursor\":null}");
    *response = out;
    return TUREEN_OK;
}

/* Takes the record as sent; its copy on the server gains a stamp. */
static int mem_create(void *ctx, const char *request, char **response)
{
    (void)ctx;
    note("c");
    const char *id = strstr(request, "\"id\":\"");
    char name[16] = "";
    if (id) sscanf(id + 6, "%15[^\"]", name);
    server_add(name);
    char *out = malloc(128);
    snprintf(out, 128, "{\"record\":{\"id\":\"%s\",\"last_modified\":%ld}}", name, server.clock);
    *response = out;
    return TUREEN_OK;
}

static int refuse(void *ctx, const char *request, char **response)
{
    (void)ctx; (void)request;
    *response = strdup("{\"error\":\"the broken server refuses\"}");
    return TUREEN_E_HTTP;
}

static void release(void *ctx, char *response) { (void)ctx; free(response); }

/* A server whose first page has a next one, and whose host cancels the
 * sync reading it meanwhile (ctx: the store). */
static int cancelling_fetch(void *ctx, const char *request, char **response)
{
    (void)request;
    note("x");
    tureen_sync_cancel(ctx, "first");
    *response = strdup("{\"records\":[],\"cursor\":\"more\"}");
    return TUREEN_OK;
}

/* Whether sync `name`'s saved status is `status`. */
static int status_is(tureen_store *s, const char *name, const char *status)
{
    char *state = NULL;
    int is = tureen_sync_status(s, name, &state) == TUREEN_OK && json_has(state, "status", status);
    tureen_free(state);
    return is;
}

static int syncs_listed(tureen_store *s)
{
    char *json = NULL;
    if (tureen_syncs(s, &json) != TUREEN_OK) return -1;
    int n = occurrences(json, "\"type\":\"sync");
    tureen_free(json);
    return n;
}

int main(void)
{
    char path[600];
    const char *dir = make_temp_dir();
    snprintf(path, sizeof path, "%s/again.tureen", dir);
    tureen_store *s = NULL;
    char *state = NULL;
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &s), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "items", SPECS), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "other", SPECS), TUREEN_OK);
    tureen_callbacks mem = TUREEN_CALLBACKS_INIT, broken = TUREEN_CALLBACKS_INIT;
    mem.fetch = mem_fetch;
    mem.create = mem.update = mem.remove = mem_create;
    mem.release = release;
    broken.fetch = broken.create = broken.update = broken.remove = refuse;
    broken.release = release;
    CHECK_RC(tureen_target_register(s, "mem", &mem), TUREEN_OK);
    CHECK_RC(tureen_target_register(s, "broken", &broken), TUREEN_OK);

    /* A named sync down given again fetches what changed since. */
    server_add("a");
    CHECK_RC(tureen_sync_down(s, MEM, "items", "{\"name\":\"down\"}", NULL, NULL, &state), TUREEN_OK);
    long long id = json_int(state, "_soupEntryId");
    tureen_free(state);
    CHECK(count_all(s, "items") == 1, "the first run fetched a");
    server_add("b");
    CHECK_RC(tureen_sync_down(s, MEM, "items", "{\"name\":\"down\"}", NULL, NULL, &state), TUREEN_OK);
    CHECK(json_has(state, "status", "DONE") && json_int(state, "_soupEntryId") == id, "the same sync ran again, DONE");
    CHECK(json_int(state, "maxTimeStamp") == server.clock, "from where it was, to b's stamp");
    tureen_free(state);
    CHECK(count_all(s, "items") == 2 && syncs_listed(s) == 1, "b came down; still one sync");
    /* "start": false given again: its state, nothing run. */
    CHECK_RC(tureen_sync_down(s, MEM, "items", "{\"name\":\"down\",\"start\":false}", NULL, NULL, &state), TUREEN_OK);
    CHECK(json_has(state, "status", "DONE") && strcmp(server.log, "ff") == 0, "start:false runs nothing");
    tureen_free(state);

    /* Another definition under the name: refused, naming what to call. */
    CHECK_RC(tureen_sync_down(s, BROKEN, "items", "{\"name\":\"down\"}", NULL, NULL, &state), TUREEN_E_INVALID);
    CHECK_MSG_HAS("tureen_sync_update");
    CHECK_MSG_HAS("another target");
    CHECK(state == NULL, "no state for a refused definition");
    CHECK_RC(tureen_sync_down(s, MEM, "other", "{\"name\":\"down\"}", NULL, NULL, NULL), TUREEN_E_INVALID);
    CHECK_MSG_HAS("another soup ('items')");
    CHECK_RC(tureen_sync_down(s, MEM, "items", "{\"name\":\"down\",\"mergeMode\":\"LEAVE_IF_CHANGED\"}", NULL, NULL, NULL),
             TUREEN_E_INVALID);
    CHECK_MSG_HAS("another options");
    CHECK_RC(tureen_sync_up(s, MEM, "items", "{\"name\":\"down\"}", NULL, NULL, NULL), TUREEN_E_INVALID);
    CHECK_MSG_HAS("tureen_sync_delete");
    CHECK(strcmp(server.log, "ff") == 0 && syncs_listed(s) == 1, "nothing ran, nothing was defined");

    /* A named sync up given again sends the new changes. */
    CHECK_RC(tureen_local_upsert(s, "items", "{\"id\":\"u1\",\"n\":7}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_sync_up(s, MEM, "items", "{\"name\":\"up\"}", NULL, NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_local_upsert(s, "items", "{\"id\":\"u2\",\"n\":8}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_sync_up(s, MEM, "items", "{\"name\":\"up\"}", NULL, NULL, &state), TUREEN_OK);
    CHECK(json_int(state, "synced") == 1 && strcmp(server.log, "ffcc") == 0, "the second call sent u2 alone");
    tureen_free(state);
    CHECK(syncs_listed(s) == 2, "two syncs: down and up");

    /* No loop: a forced sync runs here, before the call returns. */
    server_add("c");
    CHECK_RC(tureen_sync_loop_force(s, "down"), TUREEN_OK);
    CHECK(count_all(s, "items") == 5 && strcmp(server.log, "ffccf") == 0, "the forced sync down fetched c");
    /* Every sync: the soup's sync up first, then its sync down. */
    CHECK_RC(tureen_local_upsert(s, "items", "{\"id\":\"u3\",\"n\":9}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_sync_loop_force(s, NULL), TUREEN_OK);
    CHECK(strcmp(server.log, "ffccfcf") == 0, "one cycle: up (u3 created), then down");
    CHECK_RC(tureen_sync_status(s, "up", &state), TUREEN_OK);
    CHECK(json_has(state, "status", "DONE") && json_int(state, "synced") == 1, "the sync up's state: DONE, u3 sent");
    tureen_free(state);

    /* A sync that fails does not keep the others from running. */
    CHECK_RC(tureen_sync_down(s, BROKEN, "other", "{\"name\":\"bad\",\"start\":false}", NULL, NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_sync_loop_force(s, NULL), TUREEN_E_HTTP);
    CHECK_MSG_HAS("('bad')");
    CHECK(strcmp(server.log, "ffccfcff") == 0, "up had nothing to send; down ran once more");
    CHECK(status_is(s, "bad", "FAILED"), "the failed sync's state says so");
    CHECK_RC(tureen_sync_loop_force(s, "bad"), TUREEN_E_HTTP);
    CHECK_MSG_HAS("the broken server refuses");
    CHECK_RC(tureen_sync_loop_force(s, "nope"), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_sync_loop_force(NULL, NULL), TUREEN_E_MISUSE);

    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK_RC(tureen_sync_loop_force(s, NULL), TUREEN_E_MISUSE);

    /* A cancelled run ends the cycle: the syncs after it are not run. */
    snprintf(path, sizeof path, "%s/cancel.tureen", dir);
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &s), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "items", SPECS), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "other", SPECS), TUREEN_OK);
    tureen_callbacks cancelling = mem;
    cancelling.ctx = s;
    cancelling.fetch = cancelling_fetch;
    CHECK_RC(tureen_target_register(s, "cancelling", &cancelling), TUREEN_OK);
    CHECK_RC(tureen_target_register(s, "mem", &mem), TUREEN_OK);
    CHECK_RC(tureen_sync_down(s, "{\"type\":\"callback\",\"name\":\"cancelling\"}", "items",
                              "{\"name\":\"first\",\"start\":false}", NULL, NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_sync_down(s, MEM, "other", "{\"name\":\"second\",\"start\":false}", NULL, NULL, NULL), TUREEN_OK);
    server.log[0] = '\0';
    CHECK_RC(tureen_sync_loop_force(s, NULL), TUREEN_E_CANCELLED);
    CHECK_MSG_HAS("('first')");
    CHECK(strcmp(server.log, "x") == 0, "the cycle ended with the cancelled run");
    CHECK(status_is(s, "first", "STOPPED"), "the cancelled sync: STOPPED");
    CHECK(status_is(s, "second", "NEW"), "the sync after it did not run");
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
