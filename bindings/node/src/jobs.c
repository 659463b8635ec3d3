/* The calls that may take long (syncs, blob transfers, queries over many
 * entries) run on libuv's thread pool and return Promises, so the event
 * loop goes on meanwhile. The library's message is read on the pool's
 * thread right after the call, as tureen_errmsg is per thread. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "addon.h"

typedef enum { QUERY, COUNT, SYNC_DOWN, SYNC_UP, RESYNC, BLOB_PUT, BLOB_GET, BLOB_IMPORT, BLOB_EXPORT, BLOB_FETCH } job_kind;

/* How a kind reads its arguments after the store: an optional Buffer
 * first, then `strings` strings (bit i of `optional`: the i-th may be
 * null), then an optional page number. */
typedef struct {
    const char *name;
    job_kind kind;
    int buffer;
    size_t strings;
    unsigned optional;
    int page;
} job_shape;

typedef struct {
    const job_shape *shape;
    napi_async_work work;
    napi_deferred deferred;
    tureen_store *store;
    char *s[3];
    void *bytes; /* in: BLOB_PUT's copy; out: BLOB_GET's, the library's */
    size_t len;
    int32_t page;
    int rc;
    char *errmsg;
    char *json; /* the library's answer; a sync's state also on failure */
    int64_t number;
} job;

static void job_free(napi_env env, job *j)
{
    addon_free_strings(j->s, j->shape->strings);
    if (j->shape->kind == BLOB_PUT) free(j->bytes);
    else tureen_free(j->bytes);
    tureen_free(j->json);
    free(j->errmsg);
    if (j->work != NULL) napi_delete_async_work(env, j->work);
    free(j);
}

static void execute(napi_env env, void *data)
{
    (void)env;
    job *j = data;
    int fetched = 0;
    switch (j->shape->kind) {
    case QUERY: j->rc = tureen_query(j->store, j->s[0], j->page, &j->json); break;
    case COUNT: j->rc = tureen_count(j->store, j->s[0], &j->number); break;
    case SYNC_DOWN: j->rc = tureen_sync_down(j->store, j->s[0], j->s[1], j->s[2], NULL, NULL, &j->json); break;
    case SYNC_UP: j->rc = tureen_sync_up(j->store, j->s[0], j->s[1], j->s[2], NULL, NULL, &j->json); break;
    case RESYNC: j->rc = tureen_resync(j->store, j->s[0], NULL, NULL, &j->json); break;
    case BLOB_PUT: j->rc = tureen_blob_put(j->store, j->bytes, j->len, j->s[0], &j->json); break;
    case BLOB_GET: j->rc = tureen_blob_get(j->store, j->s[0], &j->bytes, &j->len); break;
    case BLOB_IMPORT: j->rc = tureen_blob_import(j->store, j->s[0], j->s[1], &j->json); break;
    case BLOB_EXPORT: j->rc = tureen_blob_export(j->store, j->s[0], j->s[1]); break;
    case BLOB_FETCH:
        j->rc = tureen_blob_fetch(j->store, j->s[0], &fetched);
        j->number = fetched;
        break;
    }
    if (j->rc != TUREEN_OK) j->errmsg = strdup(tureen_errmsg());
}

static void release_bytes(napi_env env, void *data, void *hint)
{
    (void)env;
    (void)hint;
    tureen_free(data);
}

/* What the Promise resolves to, by kind. */
static napi_value result(napi_env env, job *j)
{
    napi_value value;
    switch (j->shape->kind) {
    case COUNT: NAPI_OK(env, napi_create_int64(env, j->number, &value)); return value;
    case BLOB_FETCH: NAPI_OK(env, napi_get_boolean(env, j->number != 0, &value)); return value;
    case BLOB_EXPORT: NAPI_OK(env, napi_get_undefined(env, &value)); return value;
    case BLOB_GET:
        /* The library's memory becomes the Buffer's where Node allows it. */
        if (j->len > 0 &&
            napi_create_external_buffer(env, j->len, j->bytes, release_bytes, NULL, &value) == napi_ok) {
            j->bytes = NULL;
            return value;
        }
        NAPI_OK(env, napi_create_buffer_copy(env, j->len, j->bytes, NULL, &value));
        return value;
    default: return addon_json_string(env, j->json);
    }
}

static void complete(napi_env env, napi_status status, void *data)
{
    job *j = data;
    napi_value value = NULL;
    if (status == napi_cancelled) {
        value = addon_error(env, TUREEN_E_CANCELLED, "the call was cancelled before it ran");
    } else if (j->rc != TUREEN_OK) {
        value = addon_error(env, j->rc, j->errmsg ? j->errmsg : "out of memory");
        /* A failed sync still has its state, as the C call gives it. */
        napi_value state = addon_json_string(env, j->json);
        if (value != NULL && state != NULL && j->json != NULL) napi_set_named_property(env, value, "state", state);
    } else {
        value = result(env, j);
        if (value != NULL) napi_resolve_deferred(env, j->deferred, value);
        job_free(env, j);
        return;
    }
    if (value == NULL) {
        /* Building the error failed: reject with what is pending instead. */
        napi_get_and_clear_last_exception(env, &value);
    }
    napi_reject_deferred(env, j->deferred, value);
    job_free(env, j);
}

static napi_value start(napi_env env, napi_callback_info info)
{
    addon_args a;
    if (!addon_get_args(env, info, 1, &a)) return NULL;
    const job_shape *shape = a.data;
    job *j = calloc(1, sizeof *j);
    if (j == NULL) {
        napi_throw_error(env, NULL, "out of memory");
        return NULL;
    }
    j->shape = shape;
    size_t at = 1;
    if (!addon_pointer(env, a.argv[0], (void **)&j->store)) goto fail;
    if (shape->buffer) {
        void *data;
        if (napi_get_buffer_info(env, a.argv[at++], &data, &j->len) != napi_ok) {
            napi_throw_type_error(env, NULL, "expected a Buffer");
            goto fail;
        }
        /* Copied: JS may change the Buffer while the pool's thread reads. */
        j->bytes = malloc(j->len ? j->len : 1);
        if (j->bytes == NULL) {
            napi_throw_error(env, NULL, "out of memory");
            goto fail;
        }
        if (j->len) memcpy(j->bytes, data, j->len);
    }
    if (!addon_strings(env, &a, at, shape->strings, shape->optional, j->s)) goto fail;
    at += shape->strings;
    if (shape->page && napi_get_value_int32(env, a.argv[at], &j->page) != napi_ok) {
        napi_throw_type_error(env, NULL, "expected a page number");
        goto fail;
    }
    napi_value promise, name;
    if (napi_create_promise(env, &j->deferred, &promise) != napi_ok ||
        napi_create_string_utf8(env, shape->name, NAPI_AUTO_LENGTH, &name) != napi_ok ||
        napi_create_async_work(env, NULL, name, execute, complete, j, &j->work) != napi_ok ||
        napi_queue_async_work(env, j->work) != napi_ok) {
        addon_throw_napi(env);
        goto fail;
    }
    return promise;
fail:
    job_free(env, j);
    return NULL;
}

int addon_jobs_init(napi_env env, napi_value exports)
{
    static const job_shape shapes[] = {
        {"queryAsync", QUERY, 0, 1, 0, 1},    {"count", COUNT, 0, 1, 0, 0},
        {"syncDown", SYNC_DOWN, 0, 3, 4u, 0}, {"syncUp", SYNC_UP, 0, 3, 4u, 0},
        {"resync", RESYNC, 0, 1, 0, 0},       {"blobPut", BLOB_PUT, 1, 1, 1u, 0},
        {"blobGet", BLOB_GET, 0, 1, 0, 0},    {"blobImport", BLOB_IMPORT, 0, 2, 2u, 0},
        {"blobExport", BLOB_EXPORT, 0, 2, 0, 0}, {"blobFetch", BLOB_FETCH, 0, 1, 0, 0},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (!addon_define_one(env, exports, shapes[i].name, start, (void *)&shapes[i])) return 0;
    return 1;
}
