/* Remote transformers through the C API: registration (validation,
 * replace, free_ctx called exactly once, remove), a target naming one that
 * is not registered, and a sync up and down through one on Kinto: encode
 * runs before sending, decode after fetching, both on the calling thread. */
#include "files.h"
#include "check.h"
#include "sync_util.h"
#include <pthread.h>
#include <stdlib.h>

static int freed[4];
static int encodes, decodes, off_thread, refuse;
static pthread_t caller;

/* {"record":{...}} -> {"record":{"enc":1,...}}: the server's form carries a mark. */
static int encode(void *ctx, const char *request, char **response)
{
    (void)ctx;
    encodes++;
    if (!pthread_equal(pthread_self(), caller)) off_thread++;
    if (refuse) {
        *response = strdup("{\"error\":\"refused by the test\"}");
        return TUREEN_E_INVALID;
    }
    const char *open = "{\"record\":{";
    if (strncmp(request, open, strlen(open)) != 0) return TUREEN_E_INVALID;
    size_t n = strlen(request) + 16;
    char *out = malloc(n);
    snprintf(out, n, "{\"record\":{\"enc\":1,%s", request + strlen(open));
    *response = out;
    return TUREEN_OK;
}

static int decode(void *ctx, const char *request, char **response)
{
    (void)ctx;
    decodes++;
    if (!pthread_equal(pthread_self(), caller)) off_thread++;
    *response = strdup(request);
    return TUREEN_OK;
}

static void release_response(void *ctx, char *response) { (void)ctx; free(response); }
static void free_ctx(void *ctx) { freed[*(int *)ctx]++; }

static int ids[4] = {0, 1, 2, 3};

static tureen_transformer transformer(int n)
{
    tureen_transformer t = TUREEN_TRANSFORMER_INIT;
    t.ctx = &ids[n];
    t.encode = encode;
    t.decode = decode;
    t.release = release_response;
    t.free_ctx = free_ctx;
    return t;
}

static tureen_store *open_store(const char *dir, const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    tureen_store *s = NULL;
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &s), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "notes", "[{\"path\":\"id\",\"type\":\"string\"}]"), TUREEN_OK);
    return s;
}

int main(void)
{
    caller = pthread_self();
    char *dir = make_temp_dir();
    tureen_store *s = open_store(dir, "one.db");

    /* Validation. */
    tureen_transformer t = transformer(0);
    CHECK_RC(tureen_transformer_register(NULL, "t", &t), TUREEN_E_MISUSE);
    CHECK_RC(tureen_transformer_register(s, NULL, &t), TUREEN_E_MISUSE);
    CHECK_RC(tureen_transformer_register(s, "t", NULL), TUREEN_E_MISUSE);
    tureen_transformer bad = t;
    bad.version = 99;
    CHECK_RC(tureen_transformer_register(s, "t", &bad), TUREEN_E_INVALID);
    CHECK_MSG_HAS("TUREEN_TRANSFORMER_INIT");
    bad = t;
    bad.decode = NULL;
    CHECK_RC(tureen_transformer_register(s, "t", &bad), TUREEN_E_INVALID);
    CHECK_RC(tureen_transformer_register(s, "bad name!", &t), TUREEN_E_INVALID);
    CHECK(freed[0] == 0, "a refused registration does not take ctx");
    CHECK_RC(tureen_transformer_remove(s, "t"), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_transformer_remove(s, NULL), TUREEN_E_MISUSE);
    CHECK_RC(tureen_transformer_remove(NULL, "t"), TUREEN_E_MISUSE);

    /* Replace: the old ctx is freed once, the new one when removed. */
    CHECK_RC(tureen_transformer_register(s, "t", &t), TUREEN_OK);
    tureen_transformer t1 = transformer(1);
    CHECK_RC(tureen_transformer_register(s, "t", &t1), TUREEN_OK);
    CHECK(freed[0] == 1 && freed[1] == 0, "replacing frees the old ctx once");
    CHECK_RC(tureen_transformer_remove(s, "t"), TUREEN_OK);
    CHECK(freed[0] == 1 && freed[1] == 1, "remove frees the ctx once");
    CHECK_RC(tureen_transformer_remove(s, "t"), TUREEN_E_NOT_FOUND);

    /* A target naming an unregistered transformer: nothing is saved or sent. */
    char *state = NULL;
    CHECK_RC(tureen_local_upsert(s, "notes", "{\"id\":\"n1\",\"title\":\"hello\"}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_sync_up(s, "{\"type\":\"kinto\",\"url\":\"http://127.0.0.1:9/v1\",\"bucket\":\"b\","
                               "\"collection\":\"c\",\"transformers\":[\"t\"]}", "notes", NULL, NULL, NULL, &state),
             TUREEN_E_NOT_FOUND);
    CHECK_MSG_HAS("'t'");
    tureen_free(state);
    state = NULL;

    /* Through Kinto: the server holds the encoded form. */
    char target[1024], plain[1024];
    kinto_target(plain, sizeof plain, "transformers");
    snprintf(target, sizeof target, "%.*s,\"transformers\":[\"t\"]}", (int)strlen(plain) - 1, plain);
    tureen_transformer t2 = transformer(2);
    CHECK_RC(tureen_transformer_register(s, "t", &t2), TUREEN_OK);
    CHECK_RC(tureen_sync_up(s, target, "notes", NULL, NULL, NULL, &state), TUREEN_OK);
    CHECK(encodes == 1, "encode ran once for the one record");
    tureen_free(state);
    state = NULL;

    tureen_store *two = open_store(dir, "two.db");
    CHECK_RC(tureen_sync_down(two, plain, "notes", NULL, NULL, NULL, &state), TUREEN_OK);
    tureen_free(state);
    state = NULL;
    char *read = NULL;
    CHECK_RC(tureen_local_read(two, "notes", NULL, "[\"n1\"]", &read), TUREEN_OK);
    CHECK(read && strstr(read, "\"enc\":1") && strstr(read, "hello"), "the server holds the encoded record");
    tureen_free(read);

    CHECK_RC(tureen_sync_down(s, target, "notes", NULL, NULL, NULL, &state), TUREEN_OK);
    CHECK(decodes >= 1, "decode ran on the fetched record");
    tureen_free(state);
    state = NULL;

    /* An encode error fails the record, not the call's other work. */
    refuse = 1;
    CHECK_RC(tureen_local_upsert(s, "notes", "{\"id\":\"n2\",\"title\":\"no\"}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_sync_up(s, target, "notes", NULL, NULL, NULL, &state), TUREEN_E_HTTP);
    CHECK(state && strstr(state, "refused by the test") && strstr(state, "transformer 't'"),
          "recordErrors says which transformer refused");
    tureen_free(state);
    CHECK(off_thread == 0, "encode and decode run on the calling thread");

    /* Close lets go of the registered transformer once. */
    CHECK(freed[2] == 0, "still registered");
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK(freed[2] == 1, "close frees ctx once");
    CHECK_RC(tureen_store_close(two), TUREEN_OK);
    return DONE();
}
