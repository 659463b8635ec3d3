/* A large result costs about its own size: the peak resident memory grown
 * by one query returning 40,000 entries of ~1 KB (one page) stays under
 * twice the size of the JSON it returns. */
#include "files.h"
#include "check.h"
#include <stdlib.h>
#include <sys/resource.h>

#define N 40000

static long peak_kb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

int main(void)
{
    char *dir = make_temp_dir();
    char path[256];
    snprintf(path, sizeof path, "%s/mem.db", dir);
    tureen_store *s = NULL;
    CHECK_RC(tureen_store_open(path, "{\"raw_key\":\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}", &s), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "big", "[{\"path\":\"n\",\"type\":\"integer\"}]"), TUREEN_OK);
    static char batch[1100 * 1000 + 16];
    for (int start = 0; start < N; start += 1000) {
        size_t len = 0;
        batch[len++] = '[';
        for (int i = start; i < start + 1000; i++)
            len += (size_t)snprintf(batch + len, sizeof batch - len, "%s{\"n\":%d,\"pad\":\"%01000d\"}", i > start ? "," : "", i, i);
        batch[len++] = ']';
        batch[len] = '\0';
        CHECK_RC(tureen_upsert(s, "big", batch, NULL, NULL), TUREEN_OK);
    }
    /* warm the reader connection so its page cache is not counted as the result's */
    char *json = NULL;
    CHECK_RC(tureen_query(s, "{\"queryType\":\"all\",\"soupName\":\"big\",\"pageSize\":2000}", 0, &json), TUREEN_OK);
    tureen_free(json);

    long before = peak_kb();
    CHECK_RC(tureen_query(s, "{\"queryType\":\"all\",\"soupName\":\"big\",\"pageSize\":100000}", 0, &json), TUREEN_OK);
    long after = peak_kb();
    size_t out = json ? strlen(json) : 0;
    CHECK(out > (size_t)N * 1000, "the result holds every entry");
    long grown = after - before;
    printf("result %zu KB; peak resident memory grew by %ld KB (%.2f x the result)\n",
           out / 1024, grown, (double)grown * 1024.0 / (double)out);
    CHECK(grown * 1024L <= 2L * (long)out, "a query's peak memory stays under twice its result");
    tureen_free(json);
    CHECK_RC(tureen_store_close(s), TUREEN_OK);

    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
