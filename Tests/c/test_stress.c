/* 8 threads upsert, query and remove through the C ABI at once. At the end
 * every acknowledged write is present, every acknowledged removal is gone,
 * no caller ever saw TUREEN_E_BUSY (or any error), and the file is sound. */
#include "files.h"
#include "check.h"
#include <pthread.h>
#include <stdlib.h>

#define THREADS 8
#define ROUNDS 60
#define BATCH 5

static tureen_store *store;

struct worker {
    int id;
    long long kept[ROUNDS * BATCH];
    int nkept;
    long long removed[ROUNDS];
    int nremoved;
    int errors;
    int busy;
    char first_error[256];
};

static void note_error(struct worker *w, int rc, const char *what)
{
    if (rc == TUREEN_E_BUSY) w->busy++;
    if (w->errors++ == 0) snprintf(w->first_error, sizeof w->first_error, "%s: %d %s", what, rc, tureen_errmsg());
}

/* Collects the ids in a result array ("_soupEntryId":N). */
static int ids_in(const char *json, long long *out, int max)
{
    int n = 0;
    const char *p = json;
    while (n < max && (p = strstr(p, "\"_soupEntryId\":")) != NULL) {
        p += strlen("\"_soupEntryId\":");
        out[n++] = strtoll(p, NULL, 10);
    }
    return n;
}

static void *work(void *arg)
{
    struct worker *w = arg;
    char batch[2048], spec[256];
    for (int r = 0; r < ROUNDS; r++) {
        size_t len = 0;
        len += (size_t)snprintf(batch + len, sizeof batch - len, "[");
        for (int b = 0; b < BATCH; b++)
            len += (size_t)snprintf(batch + len, sizeof batch - len, "%s{\"t\":%d,\"ext\":\"t%d-r%d-b%d\",\"body\":\"thread %d round %d\"}",
                                    b ? "," : "", w->id, w->id, r, b, w->id, r);
        snprintf(batch + len, sizeof batch - len, "]");
        char *json = NULL;
        int rc = tureen_upsert(store, "stress", batch, "ext", &json);
        if (rc != TUREEN_OK) { note_error(w, rc, "upsert"); continue; }
        w->nkept += ids_in(json, w->kept + w->nkept, BATCH);
        tureen_free(json);

        snprintf(spec, sizeof spec, "{\"queryType\":\"exact\",\"soupName\":\"stress\",\"indexPath\":\"t\",\"matchKey\":%d,\"pageSize\":3}", w->id);
        int64_t n = 0;
        rc = tureen_count(store, spec, &n);
        if (rc != TUREEN_OK) note_error(w, rc, "count");
        else if (n < 1) note_error(w, -1, "own writes not visible to count");
        rc = tureen_query(store, spec, r % 4, &json);
        if (rc != TUREEN_OK) note_error(w, rc, "query");
        tureen_free(json);

        if (r % 3 == 2 && w->nkept > 0) {
            long long victim = w->kept[--w->nkept];
            char ids[64];
            snprintf(ids, sizeof ids, "[%lld]", victim);
            rc = tureen_remove(store, "stress", ids);
            if (rc != TUREEN_OK) { note_error(w, rc, "remove"); w->kept[w->nkept++] = victim; }
            else w->removed[w->nremoved++] = victim;
        }
    }
    return NULL;
}

int main(void)
{
    char *dir = make_temp_dir();
    char path[256];
    snprintf(path, sizeof path, "%s/stress.db", dir);
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":2000}", &store), TUREEN_OK);
    CHECK_RC(tureen_soup_register(store, "stress", "[{\"path\":\"t\",\"type\":\"integer\"},{\"path\":\"ext\",\"type\":\"string\"},{\"path\":\"body\",\"type\":\"full_text\"}]"), TUREEN_OK);

    static struct worker workers[THREADS];
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i].id = i;
        pthread_create(&threads[i], NULL, work, &workers[i]);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);

    int busy = 0, errors = 0, kept = 0;
    for (int i = 0; i < THREADS; i++) {
        busy += workers[i].busy;
        errors += workers[i].errors;
        kept += workers[i].nkept;
        if (workers[i].errors) fprintf(stderr, "thread %d: %s\n", i, workers[i].first_error);
    }
    CHECK(busy == 0, "no TUREEN_E_BUSY reached a caller");
    CHECK(errors == 0, "no call failed");

    /* every acknowledged write present, every acknowledged removal gone */
    int missing = 0, resurrected = 0;
    for (int i = 0; i < THREADS; i++) {
        struct worker *w = &workers[i];
        for (int k = 0; k < w->nkept; k++) {
            char ids[64], *json = NULL;
            snprintf(ids, sizeof ids, "[%lld]", w->kept[k]);
            if (tureen_retrieve(store, "stress", ids, &json) != TUREEN_OK || strstr(json, "\"_soupEntryId\"") == NULL) missing++;
            tureen_free(json);
        }
        for (int k = 0; k < w->nremoved; k++) {
            char ids[64], *json = NULL;
            snprintf(ids, sizeof ids, "[%lld]", w->removed[k]);
            if (tureen_retrieve(store, "stress", ids, &json) != TUREEN_OK || strcmp(json, "[]") != 0) resurrected++;
            tureen_free(json);
        }
    }
    CHECK(missing == 0, "every acknowledged write is present");
    CHECK(resurrected == 0, "every acknowledged removal is gone");
    int64_t total = -1;
    CHECK_RC(tureen_count(store, "{\"queryType\":\"all\",\"soupName\":\"stress\"}", &total), TUREEN_OK);
    CHECK(total == kept, "the soup holds exactly the acknowledged entries");
    CHECK_RC(tureen_store_check(store), TUREEN_OK);
    CHECK_RC(tureen_store_close(store), TUREEN_OK);
    printf("%d threads x %d rounds: %d entries kept\n", THREADS, ROUNDS, kept);

    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
