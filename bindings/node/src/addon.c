/* The module's entry point and the argument helpers every part uses. */
#include <stdlib.h>
#include "addon.h"

void addon_throw_napi(napi_env env)
{
    bool pending = false;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending) return;
    const napi_extended_error_info *info = NULL;
    napi_get_last_error_info(env, &info);
    napi_throw_type_error(env, NULL, info && info->error_message ? info->error_message : "N-API call failed");
}

int addon_get_args(napi_env env, napi_callback_info info, size_t min, addon_args *args)
{
    args->argc = sizeof args->argv / sizeof args->argv[0];
    if (napi_get_cb_info(env, info, &args->argc, args->argv, NULL, &args->data) != napi_ok) {
        addon_throw_napi(env);
        return 0;
    }
    if (args->argc < min) {
        napi_throw_type_error(env, NULL, "too few arguments");
        return 0;
    }
    /* Missing optional arguments read as undefined. */
    napi_value undefined;
    napi_get_undefined(env, &undefined);
    for (size_t i = args->argc; i < sizeof args->argv / sizeof args->argv[0]; i++) args->argv[i] = undefined;
    return 1;
}

int addon_string(napi_env env, napi_value value, int optional, char **out)
{
    *out = NULL;
    napi_valuetype type;
    if (napi_typeof(env, value, &type) != napi_ok) {
        addon_throw_napi(env);
        return 0;
    }
    if (optional && (type == napi_null || type == napi_undefined)) return 1;
    if (type != napi_string) {
        napi_throw_type_error(env, NULL, optional ? "expected a string or null" : "expected a string");
        return 0;
    }
    size_t len = 0;
    if (napi_get_value_string_utf8(env, value, NULL, 0, &len) != napi_ok) {
        addon_throw_napi(env);
        return 0;
    }
    char *s = malloc(len + 1);
    if (s == NULL) {
        napi_throw_error(env, NULL, "out of memory");
        return 0;
    }
    if (napi_get_value_string_utf8(env, value, s, len + 1, &len) != napi_ok) {
        free(s);
        addon_throw_napi(env);
        return 0;
    }
    *out = s;
    return 1;
}

int addon_strings(napi_env env, const addon_args *args, size_t from, size_t count, unsigned optional, char **out)
{
    for (size_t i = 0; i < count; i++) {
        if (!addon_string(env, args->argv[from + i], (optional >> i) & 1u, &out[i])) {
            addon_free_strings(out, i);
            return 0;
        }
    }
    return 1;
}

void addon_free_strings(char **strings, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(strings[i]);
        strings[i] = NULL;
    }
}

int addon_pointer(napi_env env, napi_value value, void **out)
{
    napi_valuetype type;
    if (napi_typeof(env, value, &type) != napi_ok || type != napi_external ||
        napi_get_value_external(env, value, out) != napi_ok) {
        napi_throw_type_error(env, NULL, "expected a handle made by the addon");
        return 0;
    }
    return 1;
}

napi_value addon_external(napi_env env, void *pointer)
{
    napi_value value;
    NAPI_OK(env, napi_create_external(env, pointer, NULL, NULL, &value));
    return value;
}

napi_value addon_json_string(napi_env env, const char *json)
{
    napi_value value;
    if (json == NULL) {
        NAPI_OK(env, napi_get_undefined(env, &value));
    } else {
        NAPI_OK(env, napi_create_string_utf8(env, json, NAPI_AUTO_LENGTH, &value));
    }
    return value;
}

int addon_define_one(napi_env env, napi_value exports, const char *name, napi_callback fn, void *data)
{
    napi_value value;
    if (napi_create_function(env, name, NAPI_AUTO_LENGTH, fn, data, &value) != napi_ok ||
        napi_set_named_property(env, exports, name, value) != napi_ok) {
        addon_throw_napi(env);
        return 0;
    }
    return 1;
}

int addon_define(napi_env env, napi_value exports, const addon_function *functions, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!addon_define_one(env, exports, functions[i].name, functions[i].fn, NULL)) return 0;
    return 1;
}

static napi_value init(napi_env env, napi_value exports)
{
    if (!addon_errors_init(env, exports) || !addon_calls_init(env, exports) || !addon_jobs_init(env, exports) ||
        !addon_listeners_init(env, exports))
        return NULL;
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
