/* The calls that run on the JS thread: they return at once (opening,
 * writing entries, one page of a query). Each takes and returns JSON text;
 * lib/tureen.js converts it to and from JS values. */
#include <stdint.h>
#include <stdlib.h>
#include "addon.h"

/* A call's result: the library's JSON as a JS string, or its error thrown. */
static napi_value answer(napi_env env, int rc, char *json)
{
    if (rc != TUREEN_OK) return addon_throw_status(env, rc);
    napi_value value = addon_json_string(env, json);
    tureen_free(json);
    return value;
}

static napi_value store_open(napi_env env, napi_callback_info info)
{
    addon_args a;
    char *s[2];
    if (!addon_get_args(env, info, 2, &a) || !addon_strings(env, &a, 0, 2, 0, s)) return NULL;
    tureen_store *store = NULL;
    int rc = tureen_store_open(s[0], s[1], &store);
    addon_free_strings(s, 2);
    if (rc != TUREEN_OK) return addon_throw_status(env, rc);
    return addon_external(env, store);
}

/* Blocks until the calls in flight on other threads have returned: see
 * tureen_store_close. The handle stays a valid pointer that later calls
 * find closed (TUREEN_E_MISUSE), so a job still queued cannot crash. */
static napi_value store_close(napi_env env, napi_callback_info info)
{
    addon_args a;
    void *store;
    if (!addon_get_args(env, info, 1, &a) || !addon_pointer(env, a.argv[0], &store)) return NULL;
    return answer(env, tureen_store_close(store), NULL);
}

static napi_value store_remove(napi_env env, napi_callback_info info)
{
    addon_args a;
    char *file;
    if (!addon_get_args(env, info, 1, &a) || !addon_string(env, a.argv[0], 0, &file)) return NULL;
    int rc = tureen_store_remove(file);
    free(file);
    return answer(env, rc, NULL);
}

/* (store, a, b, c?) with c optional, for the calls of that shape. */
typedef int (*three_strings_fn)(tureen_store *, const char *, const char *, const char *, char **);

static napi_value three_strings(napi_env env, napi_callback_info info, three_strings_fn fn)
{
    addon_args a;
    void *store;
    char *s[3];
    if (!addon_get_args(env, info, 3, &a) || !addon_pointer(env, a.argv[0], &store) ||
        !addon_strings(env, &a, 1, 3, 4u, s))
        return NULL;
    char *json = NULL;
    int rc = fn(store, s[0], s[1], s[2], &json);
    addon_free_strings(s, 3);
    return answer(env, rc, json);
}

static int register_soup(tureen_store *store, const char *soup, const char *specs, const char *unused, char **json)
{
    (void)unused;
    *json = NULL;
    return tureen_soup_register(store, soup, specs);
}

static int retrieve(tureen_store *store, const char *soup, const char *ids, const char *unused, char **json)
{
    (void)unused;
    return tureen_retrieve(store, soup, ids, json);
}

static int remove_ids(tureen_store *store, const char *soup, const char *ids, const char *unused, char **json)
{
    (void)unused;
    *json = NULL;
    return tureen_remove(store, soup, ids);
}

static napi_value soup_register(napi_env env, napi_callback_info info)
{
    return three_strings(env, info, register_soup);
}

static napi_value upsert(napi_env env, napi_callback_info info)
{
    return three_strings(env, info, tureen_upsert);
}

static napi_value local_upsert(napi_env env, napi_callback_info info)
{
    return three_strings(env, info, tureen_local_upsert);
}

static napi_value retrieve_entries(napi_env env, napi_callback_info info)
{
    return three_strings(env, info, retrieve);
}

static napi_value remove_entries(napi_env env, napi_callback_info info)
{
    return three_strings(env, info, remove_ids);
}

static napi_value query(napi_env env, napi_callback_info info)
{
    addon_args a;
    void *store;
    char *spec;
    int32_t page = 0;
    if (!addon_get_args(env, info, 3, &a) || !addon_pointer(env, a.argv[0], &store)) return NULL;
    NAPI_OK(env, napi_get_value_int32(env, a.argv[2], &page));
    if (!addon_string(env, a.argv[1], 0, &spec)) return NULL;
    char *json = NULL;
    int rc = tureen_query(store, spec, page, &json);
    free(spec);
    return answer(env, rc, json);
}

static napi_value version(napi_env env, napi_callback_info info)
{
    (void)info;
    return addon_json_string(env, tureen_version());
}

int addon_calls_init(napi_env env, napi_value exports)
{
    static const addon_function functions[] = {
        {"open", store_open},         {"close", store_close},         {"removeStore", store_remove},         {"registerSoup", soup_register},
        {"upsert", upsert},           {"localUpsert", local_upsert},  {"retrieve", retrieve_entries},
        {"remove", remove_entries},   {"query", query},               {"version", version},
    };
    return addon_define(env, exports, functions, sizeof functions / sizeof functions[0]);
}
