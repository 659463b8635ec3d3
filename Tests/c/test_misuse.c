/* Every entry point called with bad arguments: NULL pointers, bytes that are
 * not UTF-8, malformed JSON, closed and made-up handles. Each must return a
 * status with a message; none may crash the process. */
#include "files.h"
#include "check.h"
#include <pthread.h>
#include <unistd.h>

static const char *bad_utf8 = "\xff\xfe/not-utf8.db";

static void *fail_on_other_thread(void *arg)
{
    (void)arg;
    tureen_store *s = NULL;
    int rc = tureen_store_open(NULL, "{\"key\":\"k\"}", &s);
    return (void *)(long)(rc == TUREEN_E_MISUSE && strstr(tureen_errmsg(), "path") != NULL);
}

int main(void)
{
    char *dir = make_temp_dir();
    char path[256];
    snprintf(path, sizeof path, "%s/misuse.db", dir);
    tureen_store *s = NULL;

    /* version and memory functions never fail */
    CHECK(tureen_version() != NULL && tureen_version()[0] != '\0', "version string");
    CHECK(tureen_version_number() == TUREEN_VERSION_NUMBER, "version number matches the header");
    tureen_free(NULL);

    /* tureen_status_name: every define of the header, by the library */
    static const struct { int code; const char *name; } statuses[] = {
        {TUREEN_OK, "OK"}, {TUREEN_E_MISUSE, "MISUSE"}, {TUREEN_E_INVALID, "INVALID"},
        {TUREEN_E_NOT_FOUND, "NOT_FOUND"}, {TUREEN_E_KEY, "KEY"}, {TUREEN_E_CORRUPT, "CORRUPT"},
        {TUREEN_E_IO, "IO"}, {TUREEN_E_BUSY, "BUSY"}, {TUREEN_E_CONSTRAINT, "CONSTRAINT"},
        {TUREEN_E_QUERY, "QUERY"}, {TUREEN_E_NETWORK, "NETWORK"}, {TUREEN_E_HTTP, "HTTP"},
        {TUREEN_E_CONFLICT, "CONFLICT"}, {TUREEN_E_CANCELLED, "CANCELLED"}, {TUREEN_E_INTERNAL, "INTERNAL"}};
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        const char *name = NULL;
        CHECK_RC(tureen_status_name(statuses[i].code, &name), TUREEN_OK);
        CHECK(name != NULL && strcmp(name, statuses[i].name) == 0, statuses[i].name);
    }
    const char *no_name = "untouched";
    CHECK_RC(tureen_status_name(14, &no_name), TUREEN_E_INVALID);
    CHECK(no_name == NULL, "an unknown status: *name is NULL");
    CHECK_RC(tureen_status_name(-1, &no_name), TUREEN_E_INVALID);
    CHECK_RC(tureen_status_name(TUREEN_OK, NULL), TUREEN_E_MISUSE);

    /* tureen_store_open */
    CHECK_RC(tureen_store_open(NULL, "{\"key\":\"k\"}", &s), TUREEN_E_MISUSE);
    CHECK_MSG_HAS("path");
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\"}", NULL), TUREEN_E_MISUSE);
    CHECK_RC(tureen_store_open(path, NULL, &s), TUREEN_E_MISUSE);
    CHECK_MSG_HAS("options_json");
    CHECK(s == NULL, "out stays NULL on error");
    CHECK_RC(tureen_store_open(bad_utf8, "{\"key\":\"k\"}", &s), TUREEN_E_INVALID);
    CHECK_MSG_HAS("UTF-8");
    CHECK_RC(tureen_store_open(path, "{\"key\":\"\xff\"}", &s), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_open("", "{\"key\":\"k\"}", &s), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_open(path, "{\"key\":", &s), TUREEN_E_INVALID);
    CHECK_MSG_HAS("malformed JSON");
    CHECK_RC(tureen_store_open(path, "[\"key\"]", &s), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_open(path, "{}", &s), TUREEN_E_INVALID);
    CHECK_MSG_HAS("unencrypted");
    CHECK_RC(tureen_store_open(path, "{\"key\":\"a\",\"raw_key\":\"00\"}", &s), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_open(path, "{\"raw_key\":\"abc\"}", &s), TUREEN_E_INVALID);
    CHECK_MSG_HAS("64 hex");
    CHECK_RC(tureen_store_open(path, "{\"key\":\"a\",\"kdf_iter\":0}", &s), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_open(path, "{\"key\":\"a\",\"kdf_iter\":\"many\"}", &s), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_open(path, "{\"key\":\"a\",\"kdf_itr\":1000}", &s), TUREEN_E_INVALID);
    CHECK_MSG_HAS("kdf_itr");
    CHECK_RC(tureen_store_open(path, "{\"unencrypted\":false}", &s), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_open(path, "{\"key\":\"a\",\"create\":false}", &s), TUREEN_E_NOT_FOUND);
    CHECK(s == NULL, "nothing opened by the failed calls");
    CHECK(access(path, F_OK) != 0, "no file created by the failed calls");

    /* a real store for the handle checks */
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &s), TUREEN_OK);
    int64_t bytes = -1;

    /* tureen_store_size */
    CHECK_RC(tureen_store_size(NULL, &bytes), TUREEN_E_MISUSE);
    CHECK_RC(tureen_store_size(s, NULL), TUREEN_E_MISUSE);
    CHECK_RC(tureen_store_size((tureen_store *)(void *)0x1234, &bytes), TUREEN_E_MISUSE);
    CHECK_RC(tureen_store_size(s, &bytes), TUREEN_OK);
    CHECK(bytes > 0, "size is positive");

    /* tureen_store_rekey */
    CHECK_RC(tureen_store_rekey(NULL, "{\"key\":\"n\"}"), TUREEN_E_MISUSE);
    CHECK_RC(tureen_store_rekey(s, NULL), TUREEN_E_MISUSE);
    CHECK_RC(tureen_store_rekey(s, "{\"key\":\"\xc3\"}"), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_rekey(s, "not json"), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_rekey(s, "{\"key\":\"n\",\"busy_timeout_ms\":5}"), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_rekey(s, "{}"), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_size(s, &bytes), TUREEN_OK); /* still usable after the refusals */

    /* tureen_store_remove */
    CHECK_RC(tureen_store_remove(NULL), TUREEN_E_MISUSE);
    CHECK_RC(tureen_store_remove(bad_utf8), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_remove(""), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_remove(path), TUREEN_E_MISUSE); /* still open */
    CHECK(access(path, F_OK) == 0, "an open store is not removed");

    /* the error message is per thread */
    tureen_store *dummy = s;
    CHECK_RC(tureen_store_open(NULL, "{}", &dummy), TUREEN_E_MISUSE);
    CHECK(dummy == NULL, "out is NULL after a failed open");
    pthread_t t;
    void *ok = NULL;
    pthread_create(&t, NULL, fail_on_other_thread, NULL);
    pthread_join(t, &ok);
    CHECK(ok == (void *)1L, "other thread saw its own error");
    CHECK_MSG_HAS("path"); /* this thread's message survives the other thread's call */

    /* the cached-fetch calls: every bad argument refused before any request */
    {
        const char *req = "{\"target\": {\"type\": \"rest\", \"url\": \"http://127.0.0.1:9/x\"}, \"id\": \"a\"}";
        char *answer = (char *)"untouched";
        int64_t removed = -1;
        CHECK_RC(tureen_cache_fetch(NULL, req, NULL, &answer), TUREEN_E_MISUSE);
        CHECK(answer == NULL, "the answer is NULL on error");
        CHECK_RC(tureen_cache_fetch(s, NULL, NULL, &answer), TUREEN_E_MISUSE);
        CHECK_MSG_HAS("request_json");
        CHECK_RC(tureen_cache_fetch(s, req, NULL, NULL), TUREEN_E_MISUSE);
        CHECK_RC(tureen_cache_fetch(s, "{\"target\":", NULL, &answer), TUREEN_E_INVALID);
        CHECK_RC(tureen_cache_fetch(s, "{\"id\": \"a\"}", NULL, &answer), TUREEN_E_INVALID);
        CHECK_MSG_HAS("target");
        CHECK_RC(tureen_cache_fetch(s, req, "{\"policy\": \"Often\"}", &answer), TUREEN_E_INVALID);
        CHECK_MSG_HAS("IgnoreCacheData");
        CHECK_RC(tureen_cache_fetch(s, req, "{\"ttl_ms\": -5}", &answer), TUREEN_E_INVALID);
        CHECK_RC(tureen_cache_fetch(s, req, "{\"polcy\": \"LOCAL\"}", &answer), TUREEN_E_INVALID);
        CHECK_MSG_HAS("polcy");
        CHECK_RC(tureen_cache_fetch(s, "{\"target\": {\"type\": \"rest\", \"url\": \"http://u:p@127.0.0.1:9/x\"}}",
                                    NULL, &answer), TUREEN_E_INVALID);
        CHECK_RC(tureen_cache_fetch(s, req, "{\"policy\": \"ReturnCacheDataDontReload\"}", &answer), TUREEN_E_NOT_FOUND);
        CHECK_RC(tureen_cache_clear(NULL, NULL, &removed), TUREEN_E_MISUSE);
        CHECK_RC(tureen_cache_clear(s, "[]", &removed), TUREEN_E_INVALID);
        CHECK(removed == 0, "no count on error");
        CHECK_RC(tureen_cache_clear(s, NULL, NULL), TUREEN_OK);
        /* With no count asked for (NULL), the call still runs: it checks and clears. */
        CHECK_RC(tureen_cache_clear(s, "{}", NULL), TUREEN_E_INVALID);
        CHECK_RC(tureen_cache_configure(s, NULL), TUREEN_E_MISUSE);
        CHECK_RC(tureen_cache_configure(s, "{\"max_bytes\": 1}"), TUREEN_E_INVALID);
        CHECK_RC(tureen_cache_configure(s, "{\"max_byte\": 4096}"), TUREEN_E_INVALID);
        CHECK_RC(tureen_cache_configure(s, "{\"max_bytes\": 4096}"), TUREEN_OK);
    }

    /* blobs: bad arguments, and streams that outlive their store */
    tureen_blob_writer *w = NULL;
    tureen_blob_reader *r = NULL;
    {
        char *ref = NULL;
        void *data = NULL;
        size_t len = 0, got = 0;
        int64_t length = 0;
        char buf[8];
        const char *absent = "sha256-0000000000000000000000000000000000000000000000000000000000000000";
        CHECK_RC(tureen_blob_put(NULL, "x", 1, NULL, &ref), TUREEN_E_MISUSE);
        CHECK_RC(tureen_blob_put(s, NULL, 5, NULL, &ref), TUREEN_E_MISUSE);
        CHECK_MSG_HAS("data is NULL");
        CHECK_RC(tureen_blob_put(s, NULL, (size_t)-1, NULL, &ref), TUREEN_E_MISUSE);
        CHECK_MSG_HAS("data is NULL");
        CHECK_RC(tureen_blob_put(s, "x", (size_t)-1, NULL, &ref), TUREEN_E_INVALID);
        CHECK_RC(tureen_blob_put(s, "x", 1, NULL, NULL), TUREEN_E_MISUSE);
        CHECK_RC(tureen_blob_put(s, NULL, 0, NULL, &ref), TUREEN_OK);
        CHECK(ref && strstr(ref, "\"length\":0"), "an empty blob is a blob");
        tureen_free(ref);
        CHECK_RC(tureen_blob_get(s, "sha256-xyz", &data, &len), TUREEN_E_INVALID);
        CHECK_RC(tureen_blob_get(s, absent, &data, &len), TUREEN_E_NOT_FOUND);
        CHECK(data == NULL && len == 0, "nothing is handed out on error");
        CHECK_RC(tureen_blob_get(s, absent, NULL, &len), TUREEN_E_MISUSE);
        CHECK_RC(tureen_blob_import(s, "/nonexistent/file", NULL, &ref), TUREEN_E_NOT_FOUND);
        CHECK_RC(tureen_blob_import(s, dir, NULL, &ref), TUREEN_E_IO);
        CHECK_RC(tureen_blob_export(s, absent, "/tmp/never"), TUREEN_E_NOT_FOUND);
        CHECK_RC(tureen_blob_collect(s, "{\"min_age_ms\": -1}", NULL), TUREEN_E_INVALID);
        CHECK_RC(tureen_blob_collect(s, "{\"min_age\": 1}", NULL), TUREEN_E_INVALID);
        CHECK_RC(tureen_blob_fetch(s, NULL, NULL), TUREEN_E_MISUSE);
        CHECK_RC(tureen_blob_fetch(s, "xyz", NULL), TUREEN_E_INVALID);
        {   /* An unreferenced blob goes, whether or not the count is asked for. */
            char *loose = NULL, *info = NULL;
            CHECK_RC(tureen_blob_put(s, "loose bytes", 11, NULL, &loose), TUREEN_OK);
            CHECK_RC(tureen_blob_collect(s, "{\"min_age_ms\": 0}", NULL), TUREEN_OK);
            CHECK_RC(tureen_blob_info(s, "sha256-159506d839cab6c54c6181085acefa7f3f2431dbacd9f137a7f85089a4352fd7", &info),
                     TUREEN_E_NOT_FOUND);
            tureen_free(info);
            tureen_free(loose);
        }
        CHECK_RC(tureen_blob_writer_write(NULL, "x", 1), TUREEN_E_MISUSE);
        CHECK_RC(tureen_blob_writer_open(s, NULL, &w), TUREEN_OK);
        CHECK_RC(tureen_blob_writer_write(w, NULL, (size_t)-1), TUREEN_E_MISUSE);
        CHECK_MSG_HAS("data is NULL");
        CHECK_RC(tureen_blob_writer_cancel(w), TUREEN_OK);
        CHECK_RC(tureen_blob_writer_open(s, "text/plain", &w), TUREEN_OK);
        CHECK_RC(tureen_blob_writer_write(w, "hello", 5), TUREEN_OK);
        CHECK_RC(tureen_blob_writer_finish(w, &ref), TUREEN_OK);
        CHECK_RC(tureen_blob_writer_write(w, "x", 1), TUREEN_E_MISUSE); /* finished: stale */
        CHECK_RC(tureen_blob_reader_open(s, "sha256-2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", &r, &length),
                 TUREEN_OK);
        CHECK(length == 5, "the reader gives the blob's length");
        CHECK_RC(tureen_blob_reader_read(r, -1, buf, sizeof buf, &got), TUREEN_E_INVALID);
        CHECK_RC(tureen_blob_reader_read(r, 0, NULL, sizeof buf, &got), TUREEN_E_MISUSE);
        CHECK_RC(tureen_blob_reader_read(r, 1, buf, sizeof buf, &got), TUREEN_OK);
        CHECK(got == 4 && memcmp(buf, "ello", 4) == 0, "a read from an offset");
        CHECK_RC(tureen_blob_reader_read(r, 99, buf, sizeof buf, &got), TUREEN_OK);
        CHECK(got == 0, "a read past the end reads nothing");
        tureen_free(ref);
        CHECK_RC(tureen_blob_writer_open(s, NULL, &w), TUREEN_OK);  /* left open: the close makes it stale */
    }

    /* tureen_store_close, then every call on the closed handle */
    CHECK_RC(tureen_store_close(NULL), TUREEN_E_MISUSE);
    CHECK_RC(tureen_store_close((tureen_store *)(void *)0xdeadbeef), TUREEN_E_MISUSE);
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK_RC(tureen_store_close(s), TUREEN_E_MISUSE);
    CHECK_MSG_HAS("closed");
    CHECK_RC(tureen_store_size(s, &bytes), TUREEN_E_MISUSE);
    CHECK_RC(tureen_store_rekey(s, "{\"key\":\"n\"}"), TUREEN_E_MISUSE);
    CHECK_RC(tureen_blob_writer_write(w, "x", 1), TUREEN_E_MISUSE);
    CHECK_RC(tureen_blob_writer_cancel(w), TUREEN_E_MISUSE);
    CHECK_RC(tureen_blob_reader_read(r, 0, (char[4]){0}, 4, &(size_t){0}), TUREEN_E_MISUSE);
    CHECK_RC(tureen_blob_reader_close(r), TUREEN_E_MISUSE);

    /* once closed, the store can be removed, and a second removal finds nothing */
    CHECK_RC(tureen_store_remove(path), TUREEN_OK);
    CHECK(access(path, F_OK) != 0, "store file removed");
    CHECK_RC(tureen_store_remove(path), TUREEN_E_NOT_FOUND);
    rmdir(dir);
    return DONE();
}
