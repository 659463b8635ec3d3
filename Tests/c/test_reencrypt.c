/* tureen_reencrypt through the C API: its arguments (NULL store, target or
 * out pointer; a target without "encryption" or with a bad one; a callback
 * target), then a rotation on Kinto: records sealed under k1 are sealed
 * again under k2, and a second call finds nothing left to do. */
#include "files.h"
#include "check.h"
#include "sync_util.h"
#include <stdlib.h>

#define K1 "{\"id\":\"k1\",\"key\":\"1111111111111111111111111111111111111111111111111111111111111111\"}"
#define K2 "{\"id\":\"k2\",\"key\":\"2222222222222222222222222222222222222222222222222222222222222222\"}"

/* `plain` (a target's JSON object) with an "encryption" member of `keys`. */
static void with_keys(char *out, size_t n, const char *plain, const char *keys)
{
    snprintf(out, n, "%.*s,\"encryption\":{\"keys\":[%s]}}", (int)strlen(plain) - 1, plain, keys);
}

int main(void)
{
    char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/one.db", dir);
    tureen_store *s = NULL;
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &s), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "notes", "[{\"path\":\"id\",\"type\":\"string\"}]"), TUREEN_OK);

    char plain[1024], old[2048], rotated[2048];
    kinto_target(plain, sizeof plain, "reencrypt");
    with_keys(old, sizeof old, plain, K1);
    with_keys(rotated, sizeof rotated, plain, K2 "," K1);

    /* Arguments. */
    char *json = (char *)"untouched";
    CHECK_RC(tureen_reencrypt(NULL, rotated, &json), TUREEN_E_MISUSE);
    CHECK(json == NULL, "*json is NULL on error");
    CHECK_RC(tureen_reencrypt(s, NULL, &json), TUREEN_E_MISUSE);
    CHECK_RC(tureen_reencrypt(s, rotated, NULL), TUREEN_E_MISUSE);
    CHECK_RC(tureen_reencrypt(s, "not json", &json), TUREEN_E_INVALID);
    CHECK_RC(tureen_reencrypt(s, plain, &json), TUREEN_E_INVALID);
    CHECK_MSG_HAS("encryption");
    CHECK_RC(tureen_reencrypt(s, "{\"type\":\"callback\",\"name\":\"x\",\"encryption\":{\"keys\":[" K1 "]}}", &json),
             TUREEN_E_INVALID);
    char bad[2048];
    with_keys(bad, sizeof bad, plain, "{\"id\":\"k1\",\"key\":\"abcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcz\"}");
    CHECK_RC(tureen_reencrypt(s, bad, &json), TUREEN_E_INVALID);
    CHECK(!strstr(tureen_errmsg(), "abcdefabcdef"), "the message names no key");
    CHECK(json == NULL, "*json stays NULL");

    /* A record in the old key, then rotation. */
    char *state = NULL;
    CHECK_RC(tureen_local_upsert(s, "notes", "[{\"id\":\"n1\",\"title\":\"hello\"},{\"id\":\"n2\",\"title\":\"there\"}]",
                                 NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_sync_up(s, old, "notes", NULL, NULL, NULL, &state), TUREEN_OK);
    CHECK(state && !strstr(state, "1111111111111111") && strstr(state, "<redacted>"), "the state shows no key");
    tureen_free(state);
    state = NULL;
    CHECK_RC(tureen_reencrypt(s, rotated, &json), TUREEN_OK);
    CHECK(json_int(json, "reencrypted") >= 2, "both records sealed again");
    tureen_free(json);
    CHECK_RC(tureen_reencrypt(s, rotated, &json), TUREEN_OK);
    CHECK(json_int(json, "reencrypted") == 0, "nothing left to re-encrypt");
    tureen_free(json);

    /* The old key alone no longer reads them. */
    snprintf(path, sizeof path, "%s/two.db", dir);
    tureen_store *two = NULL;
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &two), TUREEN_OK);
    CHECK_RC(tureen_soup_register(two, "notes", "[{\"path\":\"id\",\"type\":\"string\"}]"), TUREEN_OK);
    CHECK_RC(tureen_sync_down(two, old, "notes", NULL, NULL, NULL, &state), TUREEN_E_HTTP);
    CHECK(state && strstr(state, "\\\"k2\\\", which is not among the target's keys"), "a KEY record error");
    tureen_free(state);
    state = NULL;
    CHECK_RC(tureen_sync_down(two, rotated, "notes", "{\"name\":\"r\"}", NULL, NULL, &state), TUREEN_OK);
    tureen_free(state);

    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK_RC(tureen_store_close(two), TUREEN_OK);
    return DONE();
}
