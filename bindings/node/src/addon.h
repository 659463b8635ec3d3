/* What the parts of the addon share: argument reading, errors and the
 * registration of each part's functions on the module's exports. */
#ifndef TUREEN_NODE_ADDON_H
#define TUREEN_NODE_ADDON_H

#define NAPI_VERSION 8
#include <node_api.h>
#include <stddef.h>
#include "tureen.h"

/* Evaluates a napi call; on failure throws (unless one is pending) and
 * returns NULL from the calling function. */
#define NAPI_OK(env, call)                                            \
    do {                                                              \
        if ((call) != napi_ok) {                                      \
            addon_throw_napi(env);                                    \
            return NULL;                                              \
        }                                                             \
    } while (0)

/* The arguments of a call, at most eight, and the data its function was
 * defined with. */
typedef struct {
    size_t argc;
    napi_value argv[8];
    void *data;
} addon_args;

int addon_get_args(napi_env env, napi_callback_info info, size_t min, addon_args *args);

/* A string argument copied into malloc'd memory (free with free()); NULL
 * when the argument is null or undefined and `optional` is set. Throws and
 * returns 0 when it is neither a string nor an allowed null. */
int addon_string(napi_env env, napi_value value, int optional, char **out);

/* Arguments from..from+count-1 as strings (addon_string); bit i of
 * `optional` allows null for the i-th. On failure frees what it copied. */
int addon_strings(napi_env env, const addon_args *args, size_t from, size_t count, unsigned optional, char **out);
void addon_free_strings(char **strings, size_t count);

/* The store or listener handle held by an External made by this addon. */
int addon_pointer(napi_env env, napi_value value, void **out);
napi_value addon_external(napi_env env, void *pointer);

/* A JS string from the library's JSON (NULL: undefined). */
napi_value addon_json_string(napi_env env, const char *json);

/* The TureenError for a status and message: .code is the library's name for
 * the status, .status the number. */
napi_value addon_error(napi_env env, int status, const char *message);

/* Throws the TureenError of a failed call made on this thread: the message
 * is read from tureen_errmsg here, before any other tureen_* call. */
napi_value addon_throw_status(napi_env env, int status);

/* Throws a TypeError for a napi failure unless an exception is pending. */
void addon_throw_napi(napi_env env);

/* Each part adds its functions to the exports. */
typedef struct {
    const char *name;
    napi_callback fn;
} addon_function;

int addon_define_one(napi_env env, napi_value exports, const char *name, napi_callback fn, void *data);
int addon_define(napi_env env, napi_value exports, const addon_function *functions, size_t count);

int addon_errors_init(napi_env env, napi_value exports);
int addon_calls_init(napi_env env, napi_value exports);
int addon_jobs_init(napi_env env, napi_value exports);
int addon_listeners_init(napi_env env, napi_value exports);

#endif
