/* Soup listeners and live queries. The library calls back on a thread of
 * its own; each event is handed to the JS thread through a thread-safe
 * function, queued without blocking, so the library's thread never waits
 * for JS (and tureen_listener_remove or close on the JS thread cannot
 * deadlock with a callback in flight). The thread-safe function is
 * released when the library lets go of the listener (free_ctx): removed,
 * or its store closed; until then it keeps the event loop alive. */
#include <stdlib.h>
#include <string.h>
#include "addon.h"

typedef struct {
    napi_threadsafe_function tsfn;
} listener_ctx;

/* On the library's thread. */
static void on_event(void *ctx, const char *json)
{
    listener_ctx *l = ctx;
    char *copy = strdup(json);
    if (copy == NULL) return;
    if (napi_call_threadsafe_function(l->tsfn, copy, napi_tsfn_nonblocking) != napi_ok) free(copy);
}

static void release_ctx(void *ctx)
{
    listener_ctx *l = ctx;
    napi_release_threadsafe_function(l->tsfn, napi_tsfn_release);
}

/* On the JS thread; env is NULL when the environment is going away. */
static void deliver(napi_env env, napi_value fn, void *context, void *data)
{
    (void)context;
    if (env != NULL && fn != NULL) {
        napi_value undefined, json;
        if (napi_get_undefined(env, &undefined) == napi_ok &&
            napi_create_string_utf8(env, data, NAPI_AUTO_LENGTH, &json) == napi_ok) {
            /* What the callback throws goes to 'uncaughtException', as
             * from any event callback (left pending, Node 20 would only
             * warn and drop it). */
            napi_value thrown;
            if (napi_call_function(env, undefined, fn, 1, &json, NULL) == napi_pending_exception &&
                napi_get_and_clear_last_exception(env, &thrown) == napi_ok)
                napi_fatal_exception(env, thrown);
        }
    }
    free(data);
}

static void finalize(napi_env env, void *data, void *hint)
{
    (void)env;
    (void)hint;
    free(data);
}

typedef int (*listen_fn)(tureen_store *, const char *, tureen_event_fn, void *, void (*)(void *), tureen_listener **);

/* (store, soup or spec, callback) -> the listener handle. */
static napi_value listen_with(napi_env env, napi_callback_info info, listen_fn fn, int optional)
{
    addon_args a;
    void *store;
    char *what;
    if (!addon_get_args(env, info, 3, &a) || !addon_pointer(env, a.argv[0], &store) ||
        !addon_string(env, a.argv[1], optional, &what))
        return NULL;
    listener_ctx *l = calloc(1, sizeof *l);
    napi_value name;
    if (l == NULL || napi_create_string_utf8(env, "tureen listener", NAPI_AUTO_LENGTH, &name) != napi_ok ||
        napi_create_threadsafe_function(env, a.argv[2], NULL, name, 0, 1, NULL, finalize, l, deliver, &l->tsfn) !=
            napi_ok) {
        free(what);
        free(l);
        addon_throw_napi(env);
        return NULL;
    }
    tureen_listener *listener = NULL;
    int rc = fn(store, what, on_event, l, release_ctx, &listener);
    free(what);
    if (rc != TUREEN_OK) {
        /* The library did not take l: finalize frees it. */
        napi_value thrown = addon_throw_status(env, rc);
        napi_release_threadsafe_function(l->tsfn, napi_tsfn_abort);
        return thrown;
    }
    return addon_external(env, listener);
}

static napi_value soup_listen(napi_env env, napi_callback_info info)
{
    return listen_with(env, info, tureen_soup_listen, 1);
}

static napi_value live_query(napi_env env, napi_callback_info info)
{
    return listen_with(env, info, tureen_live_query, 0);
}

static napi_value listener_remove(napi_env env, napi_callback_info info)
{
    addon_args a;
    void *listener;
    if (!addon_get_args(env, info, 1, &a) || !addon_pointer(env, a.argv[0], &listener)) return NULL;
    int rc = tureen_listener_remove(listener);
    if (rc != TUREEN_OK) return addon_throw_status(env, rc);
    return NULL;
}

int addon_listeners_init(napi_env env, napi_value exports)
{
    static const addon_function functions[] = {
        {"listen", soup_listen},
        {"liveQuery", live_query},
        {"listenerRemove", listener_remove},
    };
    return addon_define(env, exports, functions, sizeof functions / sizeof functions[0]);
}
