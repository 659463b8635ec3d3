/* TureenError: the class comes from lib/tureen.js (setErrorClass), so
 * errors thrown here and in JS are the same class; the names of the
 * statuses come from the library. */
#include <stdlib.h>
#include <string.h>
#include "addon.h"

static void drop_class(napi_env env, void *data, void *hint)
{
    (void)hint;
    napi_delete_reference(env, (napi_ref)data);
}

static napi_value set_error_class(napi_env env, napi_callback_info info)
{
    addon_args a;
    if (!addon_get_args(env, info, 1, &a)) return NULL;
    napi_ref ref;
    NAPI_OK(env, napi_create_reference(env, a.argv[0], 1, &ref));
    NAPI_OK(env, napi_set_instance_data(env, ref, drop_class, NULL));
    return NULL;
}

/* The name of a status code, or null for a number that is none. */
static napi_value status_name(napi_env env, napi_callback_info info)
{
    addon_args a;
    if (!addon_get_args(env, info, 1, &a)) return NULL;
    int32_t status;
    NAPI_OK(env, napi_get_value_int32(env, a.argv[0], &status));
    const char *name = NULL;
    napi_value value;
    if (tureen_status_name(status, &name) != TUREEN_OK) {
        NAPI_OK(env, napi_get_null(env, &value));
    } else {
        NAPI_OK(env, napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &value));
    }
    return value;
}

napi_value addon_error(napi_env env, int status, const char *message)
{
    const char *name = NULL;
    if (tureen_status_name(status, &name) != TUREEN_OK) name = "UNKNOWN";
    napi_value args[3], error;
    NAPI_OK(env, napi_create_string_utf8(env, message ? message : "", NAPI_AUTO_LENGTH, &args[0]));
    NAPI_OK(env, napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &args[1]));
    NAPI_OK(env, napi_create_int32(env, status, &args[2]));
    napi_ref ref = NULL;
    napi_value cls = NULL;
    if (napi_get_instance_data(env, (void **)&ref) == napi_ok && ref != NULL &&
        napi_get_reference_value(env, ref, &cls) == napi_ok && cls != NULL) {
        NAPI_OK(env, napi_new_instance(env, cls, 3, args, &error));
        return error;
    }
    /* Before lib/tureen.js set the class: a plain Error with the same fields. */
    NAPI_OK(env, napi_create_error(env, args[1], args[0], &error));
    NAPI_OK(env, napi_set_named_property(env, error, "status", args[2]));
    return error;
}

napi_value addon_throw_status(napi_env env, int status)
{
    /* Copied first: the message lasts only until this thread's next
     * tureen_* call, and addon_error asks the library for the status name. */
    char *msg = strdup(tureen_errmsg());
    napi_value error = addon_error(env, status, msg ? msg : "out of memory");
    free(msg);
    if (error != NULL) napi_throw(env, error);
    return NULL;
}

int addon_errors_init(napi_env env, napi_value exports)
{
    static const addon_function functions[] = {
        {"setErrorClass", set_error_class},
        {"statusName", status_name},
    };
    return addon_define(env, exports, functions, sizeof functions / sizeof functions[0]);
}
