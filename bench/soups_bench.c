/*
 * soups_bench.c - Tureen soups against the floor: the same work written by
 * hand in C on the SQLCipher API, in one process.
 *
 * Every measurement runs in a forked child on a fresh (or freshly copied)
 * file, so each child's peak RSS (from wait4) is that workload's own. The
 * data are generated in the child, batch by batch, outside the timed region.
 * See bench/README.md for what each row means.
 *
 * Usage: soups_bench [N]
 * Environment: BENCH_N (100000), BENCH_REPS (3), BENCH_BATCH (1000),
 *   BENCH_EXT (10000), BENCH_RETRIEVE_IDS (1000), BENCH_RETRIEVE_CALLS (50),
 *   BENCH_REPS_ALTER (BENCH_REPS), BENCH_TMP (/tmp), BENCH_ONLY (abcd: the
 *   workloads to run; b, c and d fill the soups once when a is left out),
 *   BENCH_FLOOR_PAGE_SIZE (4096), BENCH_FLOOR_SYNC (NORMAL),
 *   BENCH_FLOOR_CACHE_KIB (8192): the floor's connection settings.
 * Exit status: 0 when everything ran (whether or not a bar was met), 1 on
 * any error.
 */
#define BENCH_PROG "soups_bench"
#include "bench_common.h"

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

#define SOUP "bench"
#define FLOOR_TABLE "soup_bench"

/* The soup's index specs: the same five columns on both sides. */
static const char *SPECS =
    "[{\"path\":\"name\",\"type\":\"string\"},{\"path\":\"age\",\"type\":\"integer\"},"
    "{\"path\":\"score\",\"type\":\"floating\"},{\"path\":\"city\",\"type\":\"string\"},"
    "{\"path\":\"ext\",\"type\":\"string\"}]";
/* ... plus, for the alter workload, an integer index on "rank". */
static const char *SPECS_ALTERED =
    "[{\"path\":\"name\",\"type\":\"string\"},{\"path\":\"age\",\"type\":\"integer\"},"
    "{\"path\":\"score\",\"type\":\"floating\"},{\"path\":\"city\",\"type\":\"string\"},"
    "{\"path\":\"ext\",\"type\":\"string\"},{\"path\":\"rank\",\"type\":\"integer\"}]";

static long g_n = 100000;      /* entries in the soup */
static long g_reps = 3;        /* repetitions per workload and side (median reported) */
static long g_reps_alter = 3;  /* repetitions of the alter workload */
static long g_batch = 1000;    /* entries per tureen_upsert call / floor transaction */
static long g_ext = 10000;     /* entries upserted by external id */
static long g_ret_ids = 1000;  /* ids per retrieve call */
static long g_ret_calls = 50;  /* retrieve calls per repetition */
/* The floor's connection settings (g_page, g_sync, g_cache_kib) are in
 * bench_common.h, with the key. */
static const char *g_only = "abcd"; /* the workloads to run (BENCH_ONLY) */

static const char *SIDE_NAME[2] = {"tureen", "floor"};

/* ------------------------------------------------------------------------ */
/* Time, files                                                               */
/* ------------------------------------------------------------------------ */

static int64_t epoch_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void unlink_quiet(const char *path)
{
    if (unlink(path) != 0 && errno != ENOENT) die("cannot remove %s: %s", path, strerror(errno));
}

/* A store and its -wal, -shm and -journal companions. */
static void remove_db(const char *path)
{
    static const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[4200];
    for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink_quiet(p);
    }
}

static void copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0) die("cannot open %s: %s", from, strerror(errno));
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0) die("cannot create %s: %s", to, strerror(errno));
    size_t cap = 1 << 20;
    char *buf = xmalloc(cap);
    for (;;) {
        ssize_t n = read(in, buf, cap);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("reading %s: %s", from, strerror(errno));
        if (n == 0) break;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) die("writing %s: %s", to, strerror(errno));
            done += w;
        }
    }
    free(buf);
    close(in);
    if (close(out) != 0) die("closing %s: %s", to, strerror(errno));
}

/* A closed database file (checkpointed, so its WAL is empty or absent) copied
 * with its companions, giving a fresh file with the same content. */
static void copy_db(const char *from, const char *to)
{
    char wal[4200], wal_to[4200];
    struct stat st;
    remove_db(to);
    copy_file(from, to);
    snprintf(wal, sizeof wal, "%s-wal", from);
    snprintf(wal_to, sizeof wal_to, "%s-wal", to);
    if (stat(wal, &st) == 0 && st.st_size > 0) copy_file(wal, wal_to);
}

/* ------------------------------------------------------------------------ */
/* Data: batches of entries of about 1 KB (bench_entry)                      */
/* ------------------------------------------------------------------------ */

/* Appends entry `idx` (bench_entry), keeping its values in b->e. */
static void batch_add(batch *b, uint64_t idx, int variant)
{
    if (b->count == b->ecap) {
        b->ecap = b->ecap ? b->ecap * 2 : 1024;
        b->e = xrealloc(b->e, (size_t)b->ecap * sizeof *b->e);
    }
    bench_entry(b, idx, variant, &b->e[b->count]);
}

/* The external-id workload's entry j: even j edits an existing entry (spread
 * over the soup), odd j is a new one. */
static void ext_entry(batch *b, long j)
{
    long matching = (g_ext + 1) / 2;
    if (j % 2 == 0) {
        long k = j / 2;
        uint64_t idx = (uint64_t)((k * (g_n / (matching < g_n ? matching : g_n))) % g_n);
        batch_add(b, idx, 1);
    } else {
        batch_add(b, (uint64_t)(g_n + j / 2), 0);
    }
}

static long ext_new_count(void) { return g_ext / 2; }

/* ------------------------------------------------------------------------ */
/* The floor's side: SQLCipher by hand                                       */
/* ------------------------------------------------------------------------ */

/* Whether the floor's key and cipher settings read a store Tureen wrote: then
 * both sides have the same on-disk format. Sets *page_size from the file. */
static int floor_reads_tureen_file(const char *path, long *page_size, char *why, size_t cap)
{
    sqlite3 *db = NULL;
    char sql[128];
    int ok = 0;
    *page_size = 0;
    snprintf(why, cap, "ok");
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        snprintf(why, cap, "%s", db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return 0;
    }
    sqlite3_exec(db, FLOOR_KEY_SQL, NULL, NULL, NULL);
    snprintf(sql, sizeof sql, "PRAGMA cipher_page_size = %ld", g_page);
    sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
        sqlite3_finalize(s);
        s = NULL;
        if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
            *page_size = (long)sqlite3_column_int64(s, 0);
            ok = 1;
        }
    }
    if (!ok) snprintf(why, cap, "%s", sqlite3_errmsg(db));
    sqlite3_finalize(s);
    sqlite3_close(db);
    return ok;
}

/* Tureen's soup table, column for column, with the same seven indexes. */
static void floor_create(sqlite3 *db)
{
    sexec(db, "BEGIN IMMEDIATE");
    sexec(db, "CREATE TABLE " FLOOR_TABLE " (id INTEGER PRIMARY KEY AUTOINCREMENT, soup TEXT NOT NULL, "
              "created INTEGER NOT NULL, lastModified INTEGER NOT NULL, "
              "name TEXT, age INTEGER, score REAL, city TEXT, ext TEXT)");
    sexec(db, "CREATE INDEX " FLOOR_TABLE "_created_idx ON " FLOOR_TABLE " (created)");
    sexec(db, "CREATE INDEX " FLOOR_TABLE "_lastModified_idx ON " FLOOR_TABLE " (lastModified)");
    sexec(db, "CREATE INDEX " FLOOR_TABLE "_name_idx ON " FLOOR_TABLE " (name)");
    sexec(db, "CREATE INDEX " FLOOR_TABLE "_age_idx ON " FLOOR_TABLE " (age)");
    sexec(db, "CREATE INDEX " FLOOR_TABLE "_score_idx ON " FLOOR_TABLE " (score)");
    sexec(db, "CREATE INDEX " FLOOR_TABLE "_city_idx ON " FLOOR_TABLE " (city)");
    sexec(db, "CREATE INDEX " FLOOR_TABLE "_ext_idx ON " FLOOR_TABLE " (ext)");
    sexec(db, "COMMIT");
}

static const char *FLOOR_INSERT =
    "INSERT INTO " FLOOR_TABLE " (soup, created, lastModified, name, age, score, city, ext) VALUES (?,?,?,?,?,?,?,?)";
static const char *FLOOR_UPDATE =
    "UPDATE " FLOOR_TABLE " SET soup = ?, lastModified = ?, name = ?, age = ?, score = ?, city = ?, ext = ? WHERE id = ?";

static void floor_insert(sqlite3 *db, sqlite3_stmt *ins, const batch *b, const entry *e, int64_t now)
{
    sqlite3_bind_text(ins, 1, b->buf + e->off, (int)e->len, SQLITE_STATIC);
    sqlite3_bind_int64(ins, 2, now);
    sqlite3_bind_int64(ins, 3, now);
    sqlite3_bind_text(ins, 4, e->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(ins, 5, e->age);
    sqlite3_bind_double(ins, 6, e->score);
    sqlite3_bind_text(ins, 7, e->city, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 8, e->ext, -1, SQLITE_STATIC);
    scheck(db, sqlite3_step(ins), SQLITE_DONE, "insert");
    sqlite3_reset(ins);
}

static int64_t floor_count(sqlite3 *db)
{
    sqlite3_stmt *s = floor_prepare(db, "SELECT count(*) FROM " FLOOR_TABLE);
    scheck(db, sqlite3_step(s), SQLITE_ROW, "count");
    int64_t n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
}

/* The integer after "rank": in a stored entry: all the JSON work the floor
 * does to reindex (it knows the documents' shape; Tureen parses them). */
static void rank_of(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *t = (const char *)sqlite3_value_text(argv[0]);
    const char *p = t ? strstr(t, "\"rank\":") : NULL;
    if (!p) {
        sqlite3_result_null(ctx);
        return;
    }
    sqlite3_result_int64(ctx, strtoll(p + 7, NULL, 10));
}

/* ------------------------------------------------------------------------ */
/* Tureen's side                                                             */
/* ------------------------------------------------------------------------ */

static int64_t tureen_count_all(tureen_store *st)
{
    return tureen_count_q(st, "{\"queryType\":\"all\",\"soupName\":\"" SOUP "\"}");
}

static void tureen_remove_if_there(const char *path)
{
    int rc = tureen_store_remove(path);
    if (rc != TUREEN_OK && rc != TUREEN_E_NOT_FOUND) tcheck(rc, "tureen_store_remove");
}

/* ------------------------------------------------------------------------ */
/* Workloads: each runs in a child and returns numbers through a pipe        */
/* ------------------------------------------------------------------------ */

struct result {
    double secs;  /* timed seconds */
    double count; /* entries processed in them */
    double extra; /* workload-specific (e.g. median ms per call) */
    double closing; /* a: seconds the close after the timed work took (its final checkpoint) */
};

struct warg {
    int side;
    const char *path; /* the file to work on */
    const char *src;  /* a filled file to copy to `path` first, or NULL */
};

/* a) N entries, g_batch per call (Tureen) or per transaction (floor). */
static void wl_upsert(const warg *a, result *r)
{
    batch b = {0};
    double t = 0;
    if (a->side == TUREEN) {
        tureen_remove_if_there(a->path);
        tureen_store *st = tureen_open(a->path);
        tcheck(tureen_soup_register(st, SOUP, SPECS), "tureen_soup_register");
        for (long i = 0; i < g_n; i += g_batch) {
            batch_start(&b);
            for (long k = i; k < i + g_batch && k < g_n; k++) batch_add(&b, (uint64_t)k, 0);
            batch_end(&b);
            double t0 = now_s();
            tcheck(tureen_upsert(st, SOUP, b.buf, NULL, NULL), "tureen_upsert");
            t += now_s() - t0;
        }
        if (tureen_count_all(st) != g_n) die("tureen: the soup does not hold %ld entries after the upserts", g_n);
        double c0 = now_s();
        tcheck(tureen_store_close(st), "tureen_store_close");
        r->closing = now_s() - c0;
    } else {
        remove_db(a->path);
        sqlite3 *db = floor_open(a->path, FLOOR_OWN_FILE);
        floor_create(db);
        sqlite3_stmt *ins = floor_prepare(db, FLOOR_INSERT);
        for (long i = 0; i < g_n; i += g_batch) {
            batch_start(&b);
            for (long k = i; k < i + g_batch && k < g_n; k++) batch_add(&b, (uint64_t)k, 0);
            batch_end(&b);
            double t0 = now_s();
            int64_t now = epoch_ms();
            sexec(db, "BEGIN IMMEDIATE");
            for (long k = 0; k < b.count; k++) floor_insert(db, ins, &b, &b.e[k], now);
            sexec(db, "COMMIT");
            t += now_s() - t0;
        }
        sqlite3_finalize(ins);
        if (floor_count(db) != g_n) die("floor: the table does not hold %ld entries", g_n);
        double c0 = now_s();
        floor_close(db);
        r->closing = now_s() - c0;
    }
    batch_free(&b);
    r->secs = t;
    r->count = (double)g_n;
}

/* b) g_ext entries by external id "ext": half edit existing entries, half are new. */
static void wl_ext(const warg *a, result *r)
{
    batch b = {0};
    double t = 0;
    if (a->side == TUREEN) {
        tureen_remove_if_there(a->path);
        copy_db(a->src, a->path);
        tureen_store *st = tureen_open(a->path);
        for (long i = 0; i < g_ext; i += g_batch) {
            batch_start(&b);
            for (long j = i; j < i + g_batch && j < g_ext; j++) ext_entry(&b, j);
            batch_end(&b);
            double t0 = now_s();
            tcheck(tureen_upsert(st, SOUP, b.buf, "ext", NULL), "tureen_upsert by external id");
            t += now_s() - t0;
        }
        if (tureen_count_all(st) != g_n + ext_new_count())
            die("tureen: %lld entries after the external-id upserts, expected %ld", (long long)tureen_count_all(st), g_n + ext_new_count());
        tcheck(tureen_store_close(st), "tureen_store_close");
    } else {
        copy_db(a->src, a->path);
        sqlite3 *db = floor_open(a->path, FLOOR_OWN_FILE);
        sqlite3_stmt *find = floor_prepare(db, "SELECT id FROM " FLOOR_TABLE " WHERE ext = ? LIMIT 2");
        sqlite3_stmt *ins = floor_prepare(db, FLOOR_INSERT);
        sqlite3_stmt *upd = floor_prepare(db, FLOOR_UPDATE);
        for (long i = 0; i < g_ext; i += g_batch) {
            batch_start(&b);
            for (long j = i; j < i + g_batch && j < g_ext; j++) ext_entry(&b, j);
            batch_end(&b);
            double t0 = now_s();
            int64_t now = epoch_ms();
            sexec(db, "BEGIN IMMEDIATE");
            for (long k = 0; k < b.count; k++) {
                const entry *e = &b.e[k];
                sqlite3_bind_text(find, 1, e->ext, -1, SQLITE_STATIC);
                int rc = sqlite3_step(find);
                int64_t id = -1;
                if (rc == SQLITE_ROW) {
                    id = sqlite3_column_int64(find, 0);
                    if (sqlite3_step(find) == SQLITE_ROW) die("floor: several entries match %s", e->ext);
                } else {
                    scheck(db, rc, SQLITE_DONE, "find by ext");
                }
                sqlite3_reset(find);
                if (id >= 0) {
                    sqlite3_bind_text(upd, 1, b.buf + e->off, (int)e->len, SQLITE_STATIC);
                    sqlite3_bind_int64(upd, 2, now);
                    sqlite3_bind_text(upd, 3, e->name, -1, SQLITE_STATIC);
                    sqlite3_bind_int64(upd, 4, e->age);
                    sqlite3_bind_double(upd, 5, e->score);
                    sqlite3_bind_text(upd, 6, e->city, -1, SQLITE_STATIC);
                    sqlite3_bind_text(upd, 7, e->ext, -1, SQLITE_STATIC);
                    sqlite3_bind_int64(upd, 8, id);
                    scheck(db, sqlite3_step(upd), SQLITE_DONE, "update");
                    sqlite3_reset(upd);
                } else {
                    floor_insert(db, ins, &b, e, now);
                }
            }
            sexec(db, "COMMIT");
            t += now_s() - t0;
        }
        sqlite3_finalize(find);
        sqlite3_finalize(ins);
        sqlite3_finalize(upd);
        if (floor_count(db) != g_n + ext_new_count()) die("floor: wrong count after the external-id upserts");
        floor_close(db);
    }
    batch_free(&b);
    r->secs = t;
    r->count = (double)g_ext;
}

/* The ids of retrieve call `c`: g_ret_ids ids spread over 1..N. */
static void retrieve_ids(long c, int64_t *ids, long *count)
{
    long n = g_ret_ids < g_n ? g_ret_ids : g_n;
    long step = g_n / n;
    for (long k = 0; k < n; k++) ids[k] = 1 + (k * step + c * 7919) % g_n;
    *count = n;
}

static size_t count_entries(const char *json)
{
    size_t n = 0;
    for (const char *p = json; (p = strstr(p, "\"_soupEntryId\":")) != NULL; p++) n++;
    return n;
}

/* c) retrieve g_ret_ids entries by id, g_ret_calls times; the median call. */
static void wl_retrieve(const warg *a, result *r)
{
    int64_t *ids = xmalloc((size_t)g_ret_ids * sizeof *ids);
    double *ms = xmalloc((size_t)g_ret_calls * sizeof *ms);
    long n = 0;
    char *text = xmalloc((size_t)g_ret_ids * 24 + 4);
    if (a->side == TUREEN) {
        tureen_store *st = tureen_open(a->path);
        for (long c = 0; c < g_ret_calls; c++) {
            retrieve_ids(c, ids, &n);
            size_t len = 0;
            text[len++] = '[';
            for (long k = 0; k < n; k++) len += (size_t)sprintf(text + len, k ? ",%lld" : "%lld", (long long)ids[k]);
            text[len++] = ']';
            text[len] = 0;
            char *out = NULL;
            double t0 = now_s();
            tcheck(tureen_retrieve(st, SOUP, text, &out), "tureen_retrieve");
            ms[c] = (now_s() - t0) * 1000;
            if (count_entries(out) != (size_t)n) die("tureen: retrieve returned %zu entries, not %ld", count_entries(out), n);
            tureen_free(out);
        }
        tcheck(tureen_store_close(st), "tureen_store_close");
    } else {
        sqlite3 *db = floor_open(a->path, FLOOR_OWN_FILE);
        sqlite3_stmt *sel = floor_prepare(db, "SELECT soup, lastModified FROM " FLOOR_TABLE " WHERE id = ?");
        for (long c = 0; c < g_ret_calls; c++) {
            retrieve_ids(c, ids, &n);
            double t0 = now_s();
            /* Reads in one transaction and returns the JSON array Tureen
             * returns: each entry with its id and date spliced in. */
            size_t cap = (size_t)n * 1100 + 2, len = 0;
            char *out = xmalloc(cap);
            sexec(db, "BEGIN");
            out[len++] = '[';
            for (long k = 0; k < n; k++) {
                sqlite3_bind_int64(sel, 1, ids[k]);
                int rc = sqlite3_step(sel);
                if (rc == SQLITE_ROW) {
                    const char *soup = (const char *)sqlite3_column_text(sel, 0);
                    size_t sl = (size_t)sqlite3_column_bytes(sel, 0);
                    long long lm = sqlite3_column_int64(sel, 1);
                    len = splice_entry(&out, &cap, len, soup, sl, (long long)ids[k], lm);
                } else {
                    scheck(db, rc, SQLITE_DONE, "select by id");
                }
                sqlite3_reset(sel);
            }
            out[len++] = ']';
            out[len] = 0;
            sexec(db, "COMMIT");
            ms[c] = (now_s() - t0) * 1000;
            if (count_entries(out) != (size_t)n) die("floor: retrieve returned %zu entries, not %ld", count_entries(out), n);
            free(out);
        }
        sqlite3_finalize(sel);
        floor_close(db);
    }
    r->extra = median(ms, g_ret_calls);
    r->secs = r->extra / 1000;
    r->count = (double)n;
    free(ids);
    free(ms);
    free(text);
}

/* d) add an integer index on "rank" (in every entry) and compute it for all N. */
static void wl_alter(const warg *a, result *r)
{
    double t;
    copy_db(a->src, a->path);
    if (a->side == TUREEN) {
        tureen_store *st = tureen_open(a->path);
        double t0 = now_s();
        tcheck(tureen_soup_alter(st, SOUP, SPECS_ALTERED, 1), "tureen_soup_alter");
        t = now_s() - t0;
        /* Every entry must be found by its new index value. */
        char q[256];
        int64_t n = -1;
        snprintf(q, sizeof q, "{\"queryType\":\"range\",\"soupName\":\"" SOUP "\",\"indexPath\":\"rank\",\"beginKey\":0,\"endKey\":%ld}", g_n);
        tcheck(tureen_count(st, q, &n), "tureen_count on the new index");
        if (n != g_n) die("tureen: %lld entries found by the new index, expected %ld", (long long)n, g_n);
        tcheck(tureen_store_close(st), "tureen_store_close");
    } else {
        sqlite3 *db = floor_open(a->path, FLOOR_OWN_FILE);
        scheck(db, sqlite3_create_function(db, "rank_of", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, rank_of, NULL, NULL),
               SQLITE_OK, "sqlite3_create_function");
        double t0 = now_s();
        sexec(db, "BEGIN IMMEDIATE");
        sexec(db, "ALTER TABLE " FLOOR_TABLE " ADD COLUMN rank INTEGER");
        sexec(db, "UPDATE " FLOOR_TABLE " SET rank = rank_of(soup)");
        sexec(db, "CREATE INDEX " FLOOR_TABLE "_rank_idx ON " FLOOR_TABLE " (rank)");
        sexec(db, "COMMIT");
        t = now_s() - t0;
        sqlite3_stmt *s = floor_prepare(db, "SELECT count(*) FROM " FLOOR_TABLE " WHERE rank BETWEEN 0 AND ?");
        sqlite3_bind_int64(s, 1, g_n);
        scheck(db, sqlite3_step(s), SQLITE_ROW, "count by rank");
        if (sqlite3_column_int64(s, 0) != g_n) die("floor: wrong count by the new index");
        sqlite3_finalize(s);
        floor_close(db);
    }
    r->secs = t;
    r->count = (double)g_n;
}

/* Does nothing: its peak RSS is what every child starts from. */
static void wl_idle(const warg *a, result *r)
{
    (void)a;
    r->secs = 0;
    r->count = 0;
}

/* Runs `fn` in a forked child; *peak_mb is the child's peak RSS (wait4). */
static result run_child(work_fn fn, const warg *a, double *peak_mb)
{
    result r;
    char who[32];
    snprintf(who, sizeof who, "a %s child", SIDE_NAME[a->side]);
    run_in_child(fn, a, &r, sizeof r, who, peak_mb);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Reporting                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
    long reps;
    double each[2][MAX_SHOWN_REPS]; /* entries/s of each repetition (the first ones) */
    double rate[2];  /* median entries/s */
    double ms[2];    /* median ms per call (retrieve), else median seconds * 1000 */
    double closed[2]; /* median entries/s counting the close after the work too (a) */
    double peak[2];  /* max peak RSS over the repetitions, MB */
} summary;

/* Runs `reps` repetitions of a workload on both sides, alternating sides. */
static summary measure(const char *label, work_fn fn, long reps, const char *path_t, const char *path_f,
                       const char *src_t, const char *src_f, int remove_after)
{
    summary s;
    memset(&s, 0, sizeof s);
    s.reps = reps;
    double *rate[2], *ms[2], *closed[2];
    for (int side = 0; side < 2; side++) {
        rate[side] = xmalloc((size_t)reps * sizeof(double));
        ms[side] = xmalloc((size_t)reps * sizeof(double));
        closed[side] = xmalloc((size_t)reps * sizeof(double));
    }
    for (long rep = 0; rep < reps; rep++) {
        for (int side = 0; side < 2; side++) {
            warg a = {side, side == TUREEN ? path_t : path_f, side == TUREEN ? src_t : src_f};
            double peak = 0;
            double t0 = now_s();
            result r = run_child(fn, &a, &peak);
            rate[side][rep] = r.secs > 0 ? r.count / r.secs : 0;
            closed[side][rep] = r.secs + r.closing > 0 ? r.count / (r.secs + r.closing) : 0;
            if (rep < MAX_SHOWN_REPS) s.each[side][rep] = rate[side][rep];
            ms[side][rep] = r.extra > 0 ? r.extra : r.secs * 1000;
            if (peak > s.peak[side]) s.peak[side] = peak;
            fprintf(stderr, "  %-28s rep %ld/%ld %-6s %12.0f entries/s  %9.2f ms  peak %6.1f MB  (child %.1f s)\n",
                    label, rep + 1, reps, SIDE_NAME[side], rate[side][rep], ms[side][rep], peak, now_s() - t0);
            if (remove_after) remove_db(a.path);
        }
    }
    for (int side = 0; side < 2; side++) {
        s.rate[side] = median(rate[side], reps);
        s.ms[side] = median(ms[side], reps);
        s.closed[side] = median(closed[side], reps);
        free(rate[side]);
        free(ms[side]);
        free(closed[side]);
    }
    return s;
}

/* Every repetition's entries/s, to judge the spread behind each median. */
static void print_runs(const char *name, const summary *s)
{
    const double *each[2] = {s->each[TUREEN], s->each[FLOOR]};
    print_reps(name, 26, SIDE_NAME, each, s->reps, 0);
}

static void fmt_rate(char *out, size_t cap, double r)
{
    snprintf(out, cap, "%.0f e/s", r);
}

static void row(const char *workload, const char *tv, const char *fv, double ratio, const char *bar, int below,
                const summary *s)
{
    char ratio_s[32], bar_s[64], peak_s[48];
    snprintf(ratio_s, sizeof ratio_s, "%.2f", ratio);
    snprintf(bar_s, sizeof bar_s, "%s%s", bar, bar[0] == '-' ? "" : (below ? " BELOW BAR" : " ok"));
    snprintf(peak_s, sizeof peak_s, "%.1f / %.1f", s->peak[TUREEN], s->peak[FLOOR]);
    printf("%-36s | %-24s | %-24s | %5s | %-30s | %s\n", workload, tv, fv, ratio_s, bar_s, peak_s);
    if (bar[0] != '-') bench_bar("soups", workload, tv, fv, ratio_s, bar, !below);
}

static int want(char w) { return strchr(g_only, w) != NULL; }

int main(int argc, char **argv)
{
    g_n = env_long("BENCH_N", 100000, 1);
    if (argc > 1) {
        char *end = NULL;
        g_n = strtol(argv[1], &end, 10);
        if (*end || g_n < 1) die("usage: %s [N]   (N: entries, >= 1)", argv[0]);
    }
    g_reps = env_long("BENCH_REPS", 3, 1);
    g_reps_alter = env_long("BENCH_REPS_ALTER", g_reps, 1);
    g_batch = env_long("BENCH_BATCH", 1000, 1);
    g_ext = env_long("BENCH_EXT", 10000, 2);
    g_ret_ids = env_long("BENCH_RETRIEVE_IDS", 1000, 1);
    g_ret_calls = env_long("BENCH_RETRIEVE_CALLS", 50, 1);
    floor_settings_from_env();
    const char *only = getenv("BENCH_ONLY");
    if (only && *only) g_only = only;
    init_filler();

    char cipher[64];
    bench_start("tureen-bench", cipher, sizeof cipher);
    char fill_t[4200], fill_f[4200], work_t[4200], work_f[4200];
    path_in_dir(fill_t, sizeof fill_t, "filled.tureen");
    path_in_dir(fill_f, sizeof fill_f, "filled-floor.db");
    path_in_dir(work_t, sizeof work_t, "work.tureen");
    path_in_dir(work_f, sizeof work_f, "work-floor.db");

    double base = 0;
    warg idle = {TUREEN, NULL, NULL};
    run_child(wl_idle, &idle, &base);

    printf("Tureen soups benchmark: Tureen (libtureen) against the floor (hand-written C on the SQLCipher API)\n");
    print_versions(cipher);
    printf("  N                    %ld entries of ~1 KB JSON (name, age, score, city, ext, rank, notes), fixed seed\n", g_n);
    printf("  indexes              5 on both sides: name string, age integer, score floating, city string, ext string\n");
    printf("                       (+ SQL indexes on created and lastModified on both sides)\n");
    printf("  batch                %ld entries per tureen_upsert call (json out = NULL) / per floor transaction\n", g_batch);
    print_floor_settings();
    printf("  repetitions          %ld per workload and side, median reported (alter: %ld); peak MB is the max over them\n",
           g_reps, g_reps_alter);
    printf("  files                %s (removed afterwards)\n", g_dir);
    print_peak_and_machine(base);
    printf("\n");
    fflush(stdout);

    double t_all = now_s();
    summary none;
    memset(&none, 0, sizeof none);
    summary sa = none, sb = none, sc = none, sd = none;
    if (want('a')) {
        fprintf(stderr, "a) batch upsert\n");
        sa = measure("a) batch upsert", wl_upsert, g_reps, fill_t, fill_f, NULL, NULL, 0);
    } else if (want('b') || want('c') || want('d')) {
        fprintf(stderr, "filling the soups once for b), c), d) (a) not selected)\n");
        measure("fill", wl_upsert, 1, fill_t, fill_f, NULL, NULL, 0);
    }
    /* The last repetition's files stay: they are the filled soups for b), c), d). */
    double sizes[2] = {file_mb(fill_t), file_mb(fill_f)};
    long tureen_page = 0;
    char why[256];
    int same_format = floor_reads_tureen_file(fill_t, &tureen_page, why, sizeof why);
    if (want('b')) {
        fprintf(stderr, "b) upsert by external id\n");
        sb = measure("b) upsert by external id", wl_ext, g_reps, work_t, work_f, fill_t, fill_f, 1);
    }
    if (want('c')) {
        fprintf(stderr, "c) retrieve by id\n");
        sc = measure("c) retrieve by id", wl_retrieve, g_reps, fill_t, fill_f, NULL, NULL, 0);
    }
    if (want('d')) {
        fprintf(stderr, "d) alter with reindex\n");
        sd = measure("d) alter + reindex", wl_alter, g_reps_alter, work_t, work_f, fill_t, fill_f, 1);
    }

    char tv[64], fv[64], label[64];
    printf("%-36s | %-24s | %-24s | %5s | %-30s | %s\n", "workload", "tureen", "floor", "ratio", "bar", "peak MB (tureen / floor)");
    printf("%.36s-+-%.24s-+-%.24s-+-%.5s-+-%.30s-+-%.24s\n",
           "------------------------------------------------", "------------------------------------------------",
           "------------------------------------------------", "------------------------------------------------",
           "------------------------------------------------", "------------------------------------------------");

    if (want('a')) {
        double ra = sa.rate[FLOOR] > 0 ? sa.rate[TUREEN] / sa.rate[FLOOR] : 0;
        snprintf(label, sizeof label, "a) batch upsert %ld (x%ld)", g_n, g_batch);
        fmt_rate(tv, sizeof tv, sa.rate[TUREEN]);
        fmt_rate(fv, sizeof fv, sa.rate[FLOOR]);
        row(label, tv, fv, ra, "ratio >= 0.90", ra < 0.90, &sa);
        /* Tureen checkpoints on a thread of its own beside the upserts, the
         * floor inside its commits (SQLite's default): what Tureen's thread
         * has not copied yet when the work ends is paid by the close. */
        double rc = sa.closed[FLOOR] > 0 ? sa.closed[TUREEN] / sa.closed[FLOOR] : 0;
        fmt_rate(tv, sizeof tv, sa.closed[TUREEN]);
        fmt_rate(fv, sizeof fv, sa.closed[FLOOR]);
        row("a') the same, counting the close", tv, fv, rc, "-", 0, &sa);
    }
    if (want('b')) {
        double rb = sb.rate[FLOOR] > 0 ? sb.rate[TUREEN] / sb.rate[FLOOR] : 0;
        snprintf(label, sizeof label, "b) upsert by ext id %ld (half new)", g_ext);
        fmt_rate(tv, sizeof tv, sb.rate[TUREEN]);
        fmt_rate(fv, sizeof fv, sb.rate[FLOOR]);
        row(label, tv, fv, rb, "-", 0, &sb);
    }
    if (want('c')) {
        double rc = sc.rate[FLOOR] > 0 ? sc.rate[TUREEN] / sc.rate[FLOOR] : 0;
        snprintf(label, sizeof label, "c) retrieve %ld ids x%ld calls", g_ret_ids < g_n ? g_ret_ids : g_n, g_ret_calls);
        snprintf(tv, sizeof tv, "%.2f ms (%.0f e/s)", sc.ms[TUREEN], sc.rate[TUREEN]);
        snprintf(fv, sizeof fv, "%.2f ms (%.0f e/s)", sc.ms[FLOOR], sc.rate[FLOOR]);
        row(label, tv, fv, rc, "ratio >= 0.95", rc < 0.95, &sc);
    }
    if (want('d')) {
        double rd = sd.rate[FLOOR] > 0 ? sd.rate[TUREEN] / sd.rate[FLOOR] : 0;
        snprintf(label, sizeof label, "d) alter +1 integer index, reindex");
        fmt_rate(tv, sizeof tv, sd.rate[TUREEN]);
        fmt_rate(fv, sizeof fv, sd.rate[FLOOR]);
        row(label, tv, fv, rd, "tureen >= 100000 e/s", sd.rate[TUREEN] < 100000, &sd);
    }
    printf("\n");
    printf("e/s = entries per second (median of the repetitions); ratio = tureen / floor (higher is better for tureen).\n");
    printf("c) times one call (median of %ld calls per repetition, median of the repetitions).\n", g_ret_calls);
    printf("Each repetition, entries/s (sides alternate, each on a fresh or freshly copied file):\n");
    print_runs("a) batch upsert", &sa);
    print_runs("b) upsert by external id", &sb);
    print_runs("c) retrieve by id", &sc);
    print_runs("d) alter + reindex", &sd);
    printf("Filled files after a): tureen %.1f MB, floor %.1f MB. Total run %.1f s.\n", sizes[TUREEN], sizes[FLOOR],
           now_s() - t_all);
    if (same_format && tureen_page == g_page)
        printf("Format check: the floor's key and cipher settings read Tureen's file (page size %ld on both sides).\n", tureen_page);
    else if (same_format)
        printf("WARNING: Tureen's file has page size %ld, the floor's %ld: set BENCH_FLOOR_PAGE_SIZE=%ld to compare like with like.\n",
               tureen_page, g_page, tureen_page);
    else
        printf("WARNING: the floor's key and cipher settings cannot read Tureen's file (%s): the two sides do not use the same "
               "on-disk format (cipher_page_size?), so the comparison is not like with like.\n", why);
    fflush(stdout);
    remove_dir();
    return 0;
}
