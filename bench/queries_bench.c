/*
 * queries_bench.c - Tureen queries against the floor: the same SELECT written
 * by hand on the SQLCipher API, run on Tureen's own store file, in one
 * process tree.
 *
 * One forked child fills one store (4 soups) with tureen_upsert. Every
 * measurement then runs in its own forked child that opens that file (Tureen
 * with tureen_store_open; the floor with sqlite3_open_v2 and the same key and
 * settings), so each child's peak RSS (from wait4) is that workload's own.
 * The floor reads Tureen's tables and index columns by their generated names,
 * taken from Tureen's metadata tables (tureen_soups, tureen_soup_indexes).
 * See bench/README.md for what each row means.
 *
 * Workloads:
 *   1) exact and range queries, a page of 10, on indexes of a soup of
 *      BENCH_Q_N ~1 KB entries (the soups bench's shape);
 *   2) full text: "match" against "like '%term%'" over BENCH_Q_FTS_N entries,
 *      for a word in 1% of them (a page, a count) and a rare word (a page);
 *   3) a Smart SQL join with an aggregate, employees x departments.
 *
 * Environment: BENCH_Q_N (100000), BENCH_Q_FTS_N (50000), BENCH_Q_EMP
 *   (BENCH_Q_N), BENCH_Q_DEPTS (1000), BENCH_Q_QUERIES (200: pages per
 *   repetition and kind in 1 and 2), BENCH_Q_COUNT_QUERIES (20: counts, and rare-word pages, per
 *   repetition in 2), BENCH_Q_JOIN_CALLS (4: timed calls per repetition in
 *   3), BENCH_Q_JOIN_REPS (5), BENCH_Q_ONLY (123), BENCH_Q_KEEP (unset: keep
 *   the store for inspection), BENCH_REPS (3), BENCH_BATCH (1000), BENCH_TMP
 *   (/tmp), BENCH_FLOOR_PAGE_SIZE (4096), BENCH_FLOOR_SYNC (NORMAL),
 *   BENCH_FLOOR_CACHE_KIB (8192).
 * Exit status: 0 when everything ran (whether or not a bar was met), 1 on
 * any error (a failing tureen_* call prints tureen_errmsg()).
 */
#define BENCH_PROG "queries_bench"
#include "bench_common.h"

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

/* Workload 1: the soups bench's soup, the same five indexes. */
#define SOUP_BENCH "bench"
static const char *SPECS_BENCH =
    "[{\"path\":\"name\",\"type\":\"string\"},{\"path\":\"age\",\"type\":\"integer\"},"
    "{\"path\":\"score\",\"type\":\"floating\"},{\"path\":\"city\",\"type\":\"string\"},"
    "{\"path\":\"ext\",\"type\":\"string\"}]";
/* Workload 2: a string index and a full_text index on the same path. */
#define SOUP_DOCS "docs"
static const char *SPECS_DOCS = "[{\"path\":\"text\",\"type\":\"string\"},{\"path\":\"text\",\"type\":\"full_text\"}]";
/* Workload 3: employees and departments. */
#define SOUP_EMP "employees"
#define SOUP_DEPT "departments"
static const char *SPECS_EMP = "[{\"path\":\"deptCode\",\"type\":\"string\"},{\"path\":\"salary\",\"type\":\"integer\"}]";
static const char *SPECS_DEPT = "[{\"path\":\"deptCode\",\"type\":\"string\"},{\"path\":\"name\",\"type\":\"string\"}]";
static const char *JOIN_SMART_SQL =
    "select {departments:name}, count(*), sum({employees:salary}) from {employees}, {departments} "
    "where {departments:deptCode} = {employees:deptCode} group by {departments:name}";
#define JOIN_PAGE_SIZE 10000 /* one page holds every group (BENCH_Q_DEPTS <= this) */

#define VOCAB 500     /* words of the full-text field's vocabulary */
#define DOC_WORDS 5   /* distinct words per entry: a word is in 5/500 = 1% of them */
#define WORD_LEN 6    /* every word has 6 letters, so '%word%' matches only that word */
#define RARE_DOCS 5   /* entries per rare word: "q" + 6 digits, in 0.01% of 50000 entries */

static long g_n = 100000;     /* entries of workload 1's soup */
static long g_fts_n = 50000;  /* entries of workload 2's soup */
static long g_emp = 100000;   /* employees */
static long g_depts = 1000;   /* departments */
static long g_queries = 200;  /* queries per repetition, workloads 1 and 2 */
static long g_join_calls = 4; /* timed calls per repetition, workload 3 */
static long g_join_reps = 5;  /* repetitions of workload 3 */
static long g_count_queries = 20; /* counts per repetition in workloads 1c and 2 */
static long g_reps = 3;       /* repetitions per workload and side (median reported) */
static long g_batch = 1000;   /* entries per tureen_upsert call when filling */
/* The floor's connection settings (g_page, g_sync, g_cache_kib) are in
 * bench_common.h, with the key. */
static const char *g_only = "123";    /* BENCH_Q_ONLY */

/* ------------------------------------------------------------------------ */
/* Ids, hashed in order                                                      */
/* ------------------------------------------------------------------------ */

/* FNV-1a over 64-bit values: both sides hash the ids they return, in order. */
static uint64_t fnv(uint64_t h, int64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (uint64_t)((v >> (8 * i)) & 0xff);
        h *= 0x100000001b3ULL;
    }
    return h;
}
#define FNV_START 0xcbf29ce484222325ULL

/* ------------------------------------------------------------------------ */
/* Data: deterministic entries                                               */
/* ------------------------------------------------------------------------ */

static const char *TITLES[8] = {"engineer", "analyst", "manager", "designer", "clerk", "director", "technician", "consultant"};

static char g_vocab[VOCAB][WORD_LEN + 1];

/* The soups bench's filler (same seed, same text), and the vocabulary: VOCAB
 * distinct words of WORD_LEN lowercase letters. */
static void init_data(void)
{
    init_filler();
    uint64_t s = SEED ^ 0x766f636162ULL;
    for (int w = 0; w < VOCAB; w++) {
        for (;;) {
            for (int k = 0; k < WORD_LEN; k++) g_vocab[w][k] = (char)('a' + splitmix64(&s) % 26);
            g_vocab[w][WORD_LEN] = 0;
            int dup = 0;
            for (int v = 0; v < w && !dup; v++) dup = !strcmp(g_vocab[v], g_vocab[w]);
            if (!dup) break;
        }
    }
}

/* Workload 1: the soups bench's entry `idx`, byte for byte (bench_entry):
 * {"name","age","score","city","ext","rank","notes"}, 1000 to 1047 bytes. */
static void add_bench(batch *b, uint64_t idx)
{
    entry e;
    bench_entry(b, idx, 0, &e);
}

/* The DOC_WORDS distinct vocabulary words of document `idx`. */
static void doc_words(uint64_t idx, int *w)
{
    uint64_t s = SEED ^ 0x646f6373ULL ^ (idx * 0x9E3779B97F4A7C15ULL);
    for (int k = 0; k < DOC_WORDS; k++) {
        int dup;
        do {
            w[k] = (int)(splitmix64(&s) % VOCAB);
            dup = 0;
            for (int j = 0; j < k; j++) dup |= w[j] == w[k];
        } while (dup);
    }
}

/* Workload 2: {"title","text","notes"}, about 1 KB; "text" holds DOC_WORDS
 * words of the vocabulary and one rare word, shared by RARE_DOCS entries in a
 * row (digits in it: no vocabulary word is part of it, nor it of one). */
static void add_doc(batch *b, uint64_t idx)
{
    int w[DOC_WORDS];
    doc_words(idx, w);
    uint64_t s = SEED ^ 0x7469746c65ULL ^ (idx * 0xD1B54A32D192ED03ULL);
    uint64_t r = splitmix64(&s);
    char head[256];
    int hl = snprintf(head, sizeof head, "{\"title\":\"doc-%llu\",\"text\":\"%s %s %s %s %s q%06llu\",\"notes\":\"",
                      (unsigned long long)idx, g_vocab[w[0]], g_vocab[w[1]], g_vocab[w[2]], g_vocab[w[3]], g_vocab[w[4]],
                      (unsigned long long)(idx / RARE_DOCS));
    batch_put(b, head, (size_t)hl, 1000 + r % 48, r);
}

/* Workload 3: an employee of about 300 bytes, in one of g_depts departments. */
static void add_emp(batch *b, uint64_t idx)
{
    uint64_t s = SEED ^ 0x656d70ULL ^ (idx * 0xD1B54A32D192ED03ULL);
    uint64_t r1 = splitmix64(&s), r2 = splitmix64(&s), r3 = splitmix64(&s), r4 = splitmix64(&s);
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "{\"name\":\"emp-%llu\",\"deptCode\":\"D%05llu\",\"salary\":%lld,\"title\":\"%s\",\"email\":\"emp-%llu@example.com\",\"notes\":\"",
                      (unsigned long long)idx, (unsigned long long)(r1 % (uint64_t)g_depts), 30000 + (long long)(r2 % 90000),
                      TITLES[r3 % 8], (unsigned long long)idx);
    batch_put(b, head, (size_t)hl, 280 + r4 % 48, r4);
}

static void add_dept(batch *b, uint64_t idx)
{
    uint64_t s = SEED ^ 0x64657074ULL ^ (idx * 0xD1B54A32D192ED03ULL);
    uint64_t r = splitmix64(&s);
    char head[256];
    int hl = snprintf(head, sizeof head, "{\"deptCode\":\"D%05llu\",\"name\":\"Dept %05llu\",\"floor\":%d,\"notes\":\"",
                      (unsigned long long)idx, (unsigned long long)idx, (int)(r % 40));
    batch_put(b, head, (size_t)hl, 120 + r % 32, r);
}

/* ------------------------------------------------------------------------ */
/* The queries of workloads 1 and 2                                          */
/* ------------------------------------------------------------------------ */

#define AGES 80 /* ages 18..97 */

/* 1a) query q: age = 18 + q % 80, page q / 80. */
static long exact_age(long q) { return 18 + q % AGES; }
static long exact_page(long q) { return q / AGES; }

/* 1b) query q: score in [lo, lo + width], about 100 entries whatever N. The
 * bounds are decimal text, parsed the same way on both sides. */
static void range_bounds(long q, char *lo, char *hi, size_t cap)
{
    long long width_c = (long long)(10000000.0 * 100.0 / (double)g_n); /* in cents */
    if (width_c < 1) width_c = 1;
    long long span = 10000000 - width_c;
    long long lo_c = ((long long)q * 4999937LL + 12345) % (span > 0 ? span : 1);
    snprintf(lo, cap, "%lld.%02lld", lo_c / 100, lo_c % 100);
    snprintf(hi, cap, "%lld.%02lld", (lo_c + width_c) / 100, (lo_c + width_c) % 100);
}

/* 2) query q's term: a different vocabulary word for each of up to VOCAB queries. */
static const char *fts_term(long q) { return g_vocab[(q * 7 + 3) % VOCAB]; }

/* 2c) query q's rare word, spread over the soup; in RARE_DOCS entries. */
static void rare_term(long q, char out[24])
{
    snprintf(out, 24, "q%06ld", (q * 7919 + 11) % (g_fts_n / RARE_DOCS));
}

/* The ids in a Tureen result, hashed in order; *n counts them. */
static uint64_t hash_ids(uint64_t h, const char *json, long *n)
{
    static const char key[] = "\"_soupEntryId\":";
    for (const char *p = json; (p = strstr(p, key)) != NULL;) {
        p += sizeof key - 1;
        h = fnv(h, strtoll(p, NULL, 10));
        (*n)++;
    }
    return h;
}

static long count_ids(const char *json)
{
    long n = 0;
    hash_ids(FNV_START, json, &n);
    return n;
}

/* ------------------------------------------------------------------------ */
/* The floor: Tureen's tables by their generated names                       */
/* ------------------------------------------------------------------------ */

#define MAX_IDX 8
typedef struct {
    char table[64];
    int n;
    char path[MAX_IDX][128];
    char type[MAX_IDX][16];
    char column[MAX_IDX][64];
} soup_meta;

/* The soups' names in SQL, read from Tureen's metadata by the parent. */
static soup_meta g_m_bench, g_m_docs, g_m_emp, g_m_dept;
/* The SQL the floor runs, built from them. */
static char g_sql_exact[512], g_sql_range[512], g_sql_count[512], g_sql_join[1024];

static void read_meta(sqlite3 *db, const char *soup, soup_meta *m)
{
    memset(m, 0, sizeof *m);
    sqlite3_stmt *s = floor_prepare(db, "SELECT id FROM tureen_soups WHERE name = ?");
    sqlite3_bind_text(s, 1, soup, -1, SQLITE_STATIC);
    scheck(db, sqlite3_step(s), SQLITE_ROW, "finding the soup in tureen_soups");
    snprintf(m->table, sizeof m->table, "TABLE_%lld", (long long)sqlite3_column_int64(s, 0));
    sqlite3_int64 id = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    s = floor_prepare(db, "SELECT path, type, column_name, computed FROM tureen_soup_indexes WHERE soup_id = ? ORDER BY position");
    sqlite3_bind_int64(s, 1, id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (m->n == MAX_IDX) die("soup %s has more than %d indexes", soup, MAX_IDX);
        if (sqlite3_column_int64(s, 3) != 0) die("soup %s has a computed index: the floor expects stored columns", soup);
        snprintf(m->path[m->n], sizeof m->path[0], "%s", (const char *)sqlite3_column_text(s, 0));
        snprintf(m->type[m->n], sizeof m->type[0], "%s", (const char *)sqlite3_column_text(s, 1));
        snprintf(m->column[m->n], sizeof m->column[0], "%s", (const char *)sqlite3_column_text(s, 2));
        m->n++;
    }
    scheck(db, rc, SQLITE_DONE, "reading tureen_soup_indexes");
    sqlite3_finalize(s);
}

static const char *meta_col(const soup_meta *m, const char *path, const char *type)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->path[i], path) && !strcmp(m->type[i], type)) return m->column[i];
    die("no %s index on '%s' in %s's metadata", type, path, m->table);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Children                                                                  */
/* ------------------------------------------------------------------------ */

#define KINDS 3       /* query kinds a child times: 1) exact, range; 2) page, count, rare page */
#define INDEX_KINDS 2 /* workload 1's pages */
#define COUNT_KIND 2  /* workload 1's count (1c), in us[] and hash[] after the pages */
#define MAX_JOIN_CALLS 64
struct result {
    double us[KINDS];       /* median microseconds per query, by kind */
    uint64_t hash[KINDS];   /* the ids returned, hashed in order (1) */
    double check[3];        /* workload-specific checks */
    long ncalls;            /* 3): timed calls, each in calls[] (us) */
    double calls[MAX_JOIN_CALLS];
    double fill_s[4];       /* fill: seconds per soup */
    double floor_us[INDEX_KINDS]; /* 1'): the floor's medians, beside Tureen's in us[] */
};

enum { LIKE = FLOOR }; /* workload 2's second side: the like child */

struct warg {
    int side;
    const char *path; /* Tureen's store */
};

static void upsert_all(tureen_store *st, const char *soup, long n, void (*add)(batch *, uint64_t), double *secs)
{
    batch b = {0};
    double t0 = now_s();
    for (long i = 0; i < n; i += g_batch) {
        batch_start(&b);
        for (long k = i; k < i + g_batch && k < n; k++) add(&b, (uint64_t)k);
        batch_end(&b);
        tcheck(tureen_upsert(st, soup, b.buf, NULL, NULL), "tureen_upsert");
    }
    *secs = now_s() - t0;
    batch_free(&b);
    char q[128];
    snprintf(q, sizeof q, "{\"queryType\":\"all\",\"soupName\":\"%s\"}", soup);
    if (tureen_count_q(st, q) != n) die("tureen: soup %s does not hold %ld entries after the upserts", soup, n);
}

/* Fills the store once: the four soups, through tureen_upsert. */
static void wl_fill(const warg *a, result *r)
{
    tureen_store *st = tureen_open(a->path);
    if (strchr(g_only, '1')) {
        tcheck(tureen_soup_register(st, SOUP_BENCH, SPECS_BENCH), "tureen_soup_register bench");
        upsert_all(st, SOUP_BENCH, g_n, add_bench, &r->fill_s[0]);
    }
    if (strchr(g_only, '2')) {
        tcheck(tureen_soup_register(st, SOUP_DOCS, SPECS_DOCS), "tureen_soup_register docs");
        upsert_all(st, SOUP_DOCS, g_fts_n, add_doc, &r->fill_s[1]);
    }
    if (strchr(g_only, '3')) {
        tcheck(tureen_soup_register(st, SOUP_EMP, SPECS_EMP), "tureen_soup_register employees");
        tcheck(tureen_soup_register(st, SOUP_DEPT, SPECS_DEPT), "tureen_soup_register departments");
        upsert_all(st, SOUP_EMP, g_emp, add_emp, &r->fill_s[2]);
        upsert_all(st, SOUP_DEPT, g_depts, add_dept, &r->fill_s[3]);
    }
    tcheck(tureen_store_close(st), "tureen_store_close");
}

/* Does nothing: its peak RSS is what every child starts from. */
static void wl_idle(const warg *a, result *r)
{
    (void)a;
    (void)r;
}

/* The floor's page of entries: the JSON array Tureen returns, each stored
 * entry with its id and date spliced in. Returns a malloc'd string. */
static char *floor_page(sqlite3 *db, sqlite3_stmt *s, uint64_t *h, long *n)
{
    size_t cap = 16384, len = 0;
    char *out = xmalloc(cap);
    out[len++] = '[';
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        long long id = sqlite3_column_int64(s, 0);
        const char *soup = (const char *)sqlite3_column_text(s, 1);
        size_t sl = (size_t)sqlite3_column_bytes(s, 1);
        long long lm = sqlite3_column_int64(s, 2);
        len = splice_entry(&out, &cap, len, soup, sl, id, lm);
        *h = fnv(*h, id);
        (*n)++;
    }
    scheck(db, rc, SQLITE_DONE, "stepping a page");
    sqlite3_reset(s);
    out[len++] = ']';
    out[len] = 0;
    return out;
}

/* Workload 1's query qq of `kind` through tureen_query: its microseconds;
 * the page's ids go into *h (q >= 0) and must be 10. */
static double tureen_index_query(tureen_store *st, int kind, long qq, long q, uint64_t *h)
{
    char spec[512], lo[32], hi[32];
    int page = 0;
    if (kind == 0) {
        snprintf(spec, sizeof spec, "{\"queryType\":\"exact\",\"soupName\":\"" SOUP_BENCH "\",\"indexPath\":\"age\","
                 "\"matchKey\":%ld,\"pageSize\":10}", exact_age(qq));
        page = (int)exact_page(qq);
    } else {
        range_bounds(qq, lo, hi, sizeof lo);
        snprintf(spec, sizeof spec, "{\"queryType\":\"range\",\"soupName\":\"" SOUP_BENCH "\",\"indexPath\":\"score\","
                 "\"beginKey\":%s,\"endKey\":%s,\"pageSize\":10}", lo, hi);
    }
    char *out = NULL;
    double t0 = now_s();
    tcheck(tureen_query(st, spec, page, &out), "tureen_query");
    double t = now_s() - t0;
    if (q >= 0) {
        long n = 0;
        *h = hash_ids(*h, out, &n);
        if (n != 10) die("tureen: %s returned %ld entries on page %d, not 10", spec, n, page);
    }
    tureen_free(out);
    return t * 1e6;
}

/* The same query on the floor's statements s (exact, range). */
static double floor_index_query(sqlite3 *db, sqlite3_stmt *const *s, int kind, long qq, long q, uint64_t *h)
{
    char lo[32], hi[32];
    uint64_t hq = FNV_START;
    long n = 0;
    double t0 = now_s();
    if (kind == 0) {
        sqlite3_bind_int64(s[0], 1, exact_age(qq));
        sqlite3_bind_int64(s[0], 2, exact_page(qq) * 10);
    } else {
        range_bounds(qq, lo, hi, sizeof lo);
        sqlite3_bind_double(s[1], 1, strtod(lo, NULL));
        sqlite3_bind_double(s[1], 2, strtod(hi, NULL));
    }
    char *out = floor_page(db, s[kind], q >= 0 ? h : &hq, &n);
    double t = now_s() - t0;
    if (q >= 0 && n != 10) die("floor: query %ld of kind %d returned %ld rows, not 10", q, kind, n);
    free(out);
    return t * 1e6;
}

/* 1c) count q: the entries of age exact_age(q) (about N / 80), through
 * tureen_count or the floor's SELECT count(*) (statement c); the count goes
 * into *h. Returns its microseconds. */
static double index_count(tureen_store *st, sqlite3 *db, sqlite3_stmt *c, long q, uint64_t *h)
{
    int64_t n = -1;
    double t0 = now_s();
    if (st) {
        char spec[256];
        snprintf(spec, sizeof spec, "{\"queryType\":\"exact\",\"soupName\":\"" SOUP_BENCH "\",\"indexPath\":\"age\","
                 "\"matchKey\":%ld,\"pageSize\":10}", exact_age(q));
        tcheck(tureen_count(st, spec, &n), "tureen_count");
    } else {
        sqlite3_bind_int64(c, 1, exact_age(q));
        scheck(db, sqlite3_step(c), SQLITE_ROW, "SELECT count(*)");
        n = sqlite3_column_int64(c, 0);
        sqlite3_reset(c);
    }
    double t = now_s() - t0;
    if (n < 1) die("1c) the count of age %ld is %lld", exact_age(q), (long long)n);
    *h = fnv(*h, n);
    return t * 1e6;
}

/* 1) g_queries exact pages (age) and g_queries range pages (score), each
 * kind after one untimed warm-up query; median per kind. Then 1c)
 * g_count_queries counts of an age, after one untimed warm-up count. */
static void wl_index(const warg *a, result *r)
{
    double *us = xmalloc((size_t)(g_queries > g_count_queries ? g_queries : g_count_queries) * sizeof *us);
    tureen_store *st = a->side == TUREEN ? tureen_open(a->path) : NULL;
    sqlite3 *db = a->side == TUREEN ? NULL : floor_open(a->path, FLOOR_TUREEN_FILE);
    sqlite3_stmt *s[INDEX_KINDS] = {NULL, NULL};
    if (db) {
        s[0] = floor_prepare(db, g_sql_exact);
        s[1] = floor_prepare(db, g_sql_range);
    }
    for (int kind = 0; kind < INDEX_KINDS; kind++) {
        uint64_t h = FNV_START;
        for (long q = -1; q < g_queries; q++) { /* q = -1: warm-up */
            long qq = q < 0 ? g_queries : q;
            double t = st ? tureen_index_query(st, kind, qq, q, &h) : floor_index_query(db, s, kind, qq, q, &h);
            if (q >= 0) us[q] = t;
        }
        r->us[kind] = median(us, g_queries);
        r->hash[kind] = h;
    }
    sqlite3_stmt *c = db ? floor_prepare(db, g_sql_count) : NULL;
    uint64_t hc = FNV_START, warm = FNV_START;
    index_count(st, db, c, g_count_queries, &warm);
    for (long q = 0; q < g_count_queries; q++) us[q] = index_count(st, db, c, q, &hc);
    r->us[COUNT_KIND] = median(us, g_count_queries);
    r->hash[COUNT_KIND] = hc;
    if (st) tcheck(tureen_store_close(st), "tureen_store_close");
    if (db) {
        sqlite3_finalize(s[0]);
        sqlite3_finalize(s[1]);
        sqlite3_finalize(c);
        floor_close(db);
    }
    free(us);
}

/* 1') The queries of 1) with both sides in one child, taking turns query by
 * query (which goes first alternates), so that both meet the same moment of
 * the machine: the ratio holds still where 1)'s separate children move
 * with the machine between them. Tureen's medians go to us[], the floor's
 * to floor_us[]. Not a bar: both sides' caches share the CPU here. */
static void wl_index_paired(const warg *a, result *r)
{
    double *us[2] = {xmalloc((size_t)g_queries * sizeof(double)), xmalloc((size_t)g_queries * sizeof(double))};
    tureen_store *st = tureen_open(a->path);
    sqlite3 *db = floor_open(a->path, FLOOR_TUREEN_FILE);
    sqlite3_stmt *s[INDEX_KINDS] = {floor_prepare(db, g_sql_exact), floor_prepare(db, g_sql_range)};
    for (int kind = 0; kind < INDEX_KINDS; kind++) {
        uint64_t h[2] = {FNV_START, FNV_START};
        for (long q = -1; q < g_queries; q++) {
            long qq = q < 0 ? g_queries : q;
            for (int turn = 0; turn < 2; turn++) {
                int side = (int)((q + 1 + turn) & 1) ? TUREEN : FLOOR;
                double t = side == TUREEN ? tureen_index_query(st, kind, qq, q, &h[TUREEN])
                                          : floor_index_query(db, s, kind, qq, q, &h[FLOOR]);
                if (q >= 0) us[side][q] = t;
            }
        }
        if (h[TUREEN] != h[FLOOR]) die("1') tureen and the floor returned different entries (query kind %d)", kind);
        r->us[kind] = median(us[TUREEN], g_queries);
        r->floor_us[kind] = median(us[FLOOR], g_queries);
    }
    tcheck(tureen_store_close(st), "tureen_store_close");
    sqlite3_finalize(s[0]);
    sqlite3_finalize(s[1]);
    floor_close(db);
    free(us[0]);
    free(us[1]);
}

static void fts_spec(char *spec, size_t cap, int like, const char *term)
{
    if (like)
        snprintf(spec, cap, "{\"queryType\":\"like\",\"soupName\":\"" SOUP_DOCS "\",\"indexPath\":\"text\",\"likeKey\":\"%%%s%%\","
                 "\"orderPath\":null,\"pageSize\":10}", term);
    else
        snprintf(spec, cap, "{\"queryType\":\"match\",\"soupName\":\"" SOUP_DOCS "\",\"indexPath\":\"text\",\"matchKey\":\"%s\","
                 "\"orderPath\":null,\"pageSize\":10}", term);
}

/* 2) "match" (side TUREEN) or "like" (side LIKE) on g_queries terms:
 *   kind 0: tureen_query, one page of 10 per term, after one untimed warm-up;
 *   kind 1: tureen_count of the same spec, on the first g_count_queries terms
 *           (every matching entry: like reads the whole soup).
 * The counts are hashed: the parent checks that like and match count the
 * same entries (the words have a fixed length, so '%term%' matches exactly
 * the entries holding the word). The match child also averages the entries
 * per term over every term (untimed). */
static void wl_fts(const warg *a, result *r)
{
    double *us = xmalloc((size_t)g_queries * sizeof *us);
    char spec[512];
    tureen_store *st = tureen_open(a->path);
    for (long q = -1; q < g_queries; q++) {
        const char *term = fts_term(q < 0 ? VOCAB - 1 : q);
        fts_spec(spec, sizeof spec, a->side == LIKE, term);
        char *out = NULL;
        double t0 = now_s();
        tcheck(tureen_query(st, spec, 0, &out), "tureen_query");
        double t = now_s() - t0;
        if (q >= 0) {
            us[q] = t * 1e6;
            long n = count_ids(out);
            if (n != 10) die("tureen: %s returned %ld entries, not 10", spec, n);
        }
        tureen_free(out);
    }
    r->us[0] = median(us, g_queries);
    uint64_t h = FNV_START;
    for (long q = 0; q < g_count_queries; q++) {
        fts_spec(spec, sizeof spec, a->side == LIKE, fts_term(q));
        int64_t n = -1;
        double t0 = now_s();
        tcheck(tureen_count(st, spec, &n), "tureen_count");
        us[q] = (now_s() - t0) * 1e6;
        h = fnv(h, n);
    }
    r->us[1] = median(us, g_count_queries);
    r->hash[1] = h;
    /* 2c) a page of 10 for a rare word: fewer than 10 entries hold it, so
     * like reads the whole soup to fill the page, as a search for a name or
     * a code does. As many as counts: each like reads every entry. */
    for (long q = 0; q < g_count_queries; q++) {
        char term[24];
        rare_term(q, term);
        fts_spec(spec, sizeof spec, a->side == LIKE, term);
        char *out = NULL;
        double t0 = now_s();
        tcheck(tureen_query(st, spec, 0, &out), "tureen_query");
        us[q] = (now_s() - t0) * 1e6;
        long n = count_ids(out);
        if (n != RARE_DOCS) die("tureen: %s returned %ld entries, not %d", spec, n, RARE_DOCS);
        tureen_free(out);
    }
    r->us[2] = median(us, g_count_queries);
    if (a->side == TUREEN) {
        double total = 0;
        for (long q = 0; q < g_queries; q++) {
            fts_spec(spec, sizeof spec, 0, fts_term(q));
            total += (double)tureen_count_q(st, spec);
        }
        r->check[0] = total / (double)g_queries; /* mean entries per term */
    }
    tcheck(tureen_store_close(st), "tureen_store_close");
    free(us);
}

/* Sums over the rows [name, count, sum] of the join: rows, counts, sums. */
static void join_sums_tureen(const char *json, double *rows, double *count, double *sum)
{
    *rows = *count = *sum = 0;
    /* Rows look like ["Dept 00042",97,7243911]: the name holds no quote. */
    for (const char *p = json; (p = strstr(p, "[\"")) != NULL;) {
        const char *q = strchr(p + 2, '"');
        if (!q) break;
        long long c = 0, s = 0;
        if (sscanf(q, "\",%lld,%lld]", &c, &s) != 2) die("tureen: unexpected join row: %.60s", p);
        *rows += 1;
        *count += (double)c;
        *sum += (double)s;
        p = q;
    }
}

/* 3) the join with an aggregate: one untimed warm-up call, then
 * g_join_calls timed calls, each returned (the parent pools them). */
static void wl_join(const warg *a, result *r)
{
    double *us = r->calls;
    if (a->side == TUREEN) {
        tureen_store *st = tureen_open(a->path);
        char spec[1024];
        snprintf(spec, sizeof spec, "{\"queryType\":\"smart\",\"smartSql\":\"%s\",\"pageSize\":%d}", JOIN_SMART_SQL, JOIN_PAGE_SIZE);
        for (long c = -1; c < g_join_calls; c++) {
            char *out = NULL;
            double t0 = now_s();
            tcheck(tureen_query(st, spec, 0, &out), "tureen_query (smart)");
            double t = now_s() - t0;
            if (c >= 0) us[c] = t * 1e6;
            join_sums_tureen(out, &r->check[0], &r->check[1], &r->check[2]);
            tureen_free(out);
        }
        tcheck(tureen_store_close(st), "tureen_store_close");
    } else {
        sqlite3 *db = floor_open(a->path, FLOOR_TUREEN_FILE);
        sqlite3_stmt *s = floor_prepare(db, g_sql_join);
        for (long c = -1; c < g_join_calls; c++) {
            double t0 = now_s();
            /* The same result Tureen returns: a JSON array of rows. */
            size_t cap = 65536, len = 0;
            char *out = xmalloc(cap);
            double rows = 0, cnt = 0, sum = 0;
            out[len++] = '[';
            int rc;
            while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
                const char *name = (const char *)sqlite3_column_text(s, 0);
                long long k = sqlite3_column_int64(s, 1), v = sqlite3_column_int64(s, 2);
                if (len + strlen(name) + 64 > cap) {
                    cap *= 2;
                    out = xrealloc(out, cap);
                }
                len += (size_t)sprintf(out + len, "%s[\"%s\",%lld,%lld]", len > 1 ? "," : "", name, k, v);
                rows += 1;
                cnt += (double)k;
                sum += (double)v;
            }
            scheck(db, rc, SQLITE_DONE, "stepping the join");
            sqlite3_reset(s);
            out[len++] = ']';
            out[len] = 0;
            double t = now_s() - t0;
            if (c >= 0) us[c] = t * 1e6;
            r->check[0] = rows;
            r->check[1] = cnt;
            r->check[2] = sum;
            free(out);
        }
        sqlite3_finalize(s);
        floor_close(db);
    }
    r->ncalls = g_join_calls;
}

/* Runs `fn` in a forked child; *peak_mb is the child's peak RSS (wait4). */
static result run_child(work_fn fn, const warg *a, double *peak_mb)
{
    result r;
    run_in_child(fn, a, &r, sizeof r, "a child", peak_mb);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Measuring and reporting                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
    long reps;
    double each[2][KINDS][MAX_SHOWN_REPS]; /* each repetition's median us, by side and kind */
    double us[2][KINDS];                   /* median over the repetitions */
    double peak[2];                        /* max peak RSS over the repetitions, MB */
    result last[2];                        /* the last repetition's result, for checks */
} summary;

/* `reps` repetitions on both sides, alternating sides so that slow drift on
 * the machine hits both; which side goes first alternates too (T F, F T,
 * ...), as the first child of a pair met a colder machine more often (pages
 * of the file fallen out of the OS cache, seen as refaults under perf), and
 * with Tureen always first that fell on Tureen alone. Workloads 1 and 2 report the median of the
 * repetitions' medians; workload 3 (few, long calls) the median of every
 * timed call of every repetition, pooled. */
static summary measure(const char *label, const char *names[2], work_fn fn, long reps, const char *path)
{
    summary s;
    memset(&s, 0, sizeof s);
    s.reps = reps;
    double *v[2][KINDS], *pool[2];
    long pooled[2] = {0, 0};
    for (int side = 0; side < 2; side++) {
        for (int k = 0; k < KINDS; k++) v[side][k] = xmalloc((size_t)reps * sizeof(double));
        pool[side] = xmalloc((size_t)reps * MAX_JOIN_CALLS * sizeof(double));
    }
    for (long rep = 0; rep < reps; rep++) {
        for (int turn = 0; turn < 2; turn++) {
            int side = (int)((rep + turn) & 1);
            warg a = {side, path};
            double peak = 0, t0 = now_s();
            result r = run_child(fn, &a, &peak);
            if (r.ncalls > 0) {
                memcpy(pool[side] + pooled[side], r.calls, (size_t)r.ncalls * sizeof(double));
                pooled[side] += r.ncalls;
                double tmp[MAX_JOIN_CALLS];
                memcpy(tmp, r.calls, (size_t)r.ncalls * sizeof(double));
                r.us[0] = median(tmp, r.ncalls);
            }
            for (int k = 0; k < KINDS; k++) {
                v[side][k][rep] = r.us[k];
                if (rep < MAX_SHOWN_REPS) s.each[side][k][rep] = r.us[k];
            }
            if (peak > s.peak[side]) s.peak[side] = peak;
            s.last[side] = r;
            fprintf(stderr, "  %-18s rep %ld/%ld %-6s %10.1f us", label, rep + 1, reps, names[side], r.us[0]);
            if (fn != wl_join) fprintf(stderr, " %10.1f us", r.us[1]);
            if (fn == wl_fts) fprintf(stderr, " %10.1f us", r.us[2]);
            fprintf(stderr, "  peak %6.1f MB  (child %.1f s)\n", peak, now_s() - t0);
        }
        if (fn == wl_index)
            for (int k = 0; k <= COUNT_KIND; k++)
                if (s.last[TUREEN].hash[k] != s.last[FLOOR].hash[k])
                    die("%s: tureen and the floor returned different entries (query kind %d)", label, k);
        if (fn == wl_fts && s.last[TUREEN].hash[1] != s.last[LIKE].hash[1])
            die("%s: match and like count different numbers of entries for the same terms", label);
    }
    for (int side = 0; side < 2; side++) {
        for (int k = 0; k < KINDS; k++) {
            s.us[side][k] = median(v[side][k], reps);
            free(v[side][k]);
        }
        if (pooled[side] > 0) s.us[side][0] = median(pool[side], pooled[side]);
        free(pool[side]);
    }
    return s;
}

static void fmt_time(char *out, size_t cap, const char *prefix, double us)
{
    if (us < 10000)
        snprintf(out, cap, "%s%.1f us", prefix, us);
    else
        snprintf(out, cap, "%s%.2f ms", prefix, us / 1000);
}

static void row(const char *workload, const char *tv, const char *fv, const char *ratio, const char *bar, int below,
                const summary *s)
{
    char bar_s[64], peak_s[48];
    snprintf(bar_s, sizeof bar_s, "%s%s", bar, bar[0] == '-' ? "" : (below ? " BELOW BAR" : " ok"));
    snprintf(peak_s, sizeof peak_s, "%.1f / %.1f", s->peak[0], s->peak[1]);
    printf("%-44s | %-16s | %-18s | %-17s | %-29s | %s\n", workload, tv, fv, ratio, bar_s, peak_s);
    if (bar[0] != '-') bench_bar("queries", workload, tv, fv, ratio, bar, !below);
}

static void print_runs(const char *name, const char *names[2], const summary *s, int kind)
{
    const double *each[2] = {s->each[0][kind], s->each[1][kind]};
    print_reps(name, 30, names, each, s->reps, 1);
}

static int want(char w) { return strchr(g_only, w) != NULL; }

/* The floor's query plan for `sql`, on one line. */
static void plan(sqlite3 *db, const char *sql, char *out, size_t cap)
{
    char q[2048];
    snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
    sqlite3_stmt *s = floor_prepare(db, q);
    size_t len = 0;
    out[0] = 0;
    while (sqlite3_step(s) == SQLITE_ROW && len + 8 < cap) {
        const char *d = (const char *)sqlite3_column_text(s, 3);
        len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? "; " : "", d ? d : "?");
    }
    sqlite3_finalize(s);
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) die("usage: queries_bench (settings come from BENCH_* environment variables; see bench/README.md)");
    g_n = env_long("BENCH_Q_N", 100000, 200);
    g_fts_n = env_long("BENCH_Q_FTS_N", 50000, 5000);
    g_emp = env_long("BENCH_Q_EMP", g_n, 1);
    g_depts = env_long("BENCH_Q_DEPTS", 1000, 1);
    if (g_depts > JOIN_PAGE_SIZE) die("BENCH_Q_DEPTS must be at most %d (one page holds every group)", JOIN_PAGE_SIZE);
    g_queries = env_long("BENCH_Q_QUERIES", 200, 1);
    if (g_queries > VOCAB - 1) die("BENCH_Q_QUERIES must be at most %d (one vocabulary word per full-text query)", VOCAB - 1);
    g_count_queries = env_long("BENCH_Q_COUNT_QUERIES", 20, 1);
    if (g_count_queries > g_queries) g_count_queries = g_queries;
    g_join_calls = env_long("BENCH_Q_JOIN_CALLS", 4, 1);
    if (g_join_calls > MAX_JOIN_CALLS) die("BENCH_Q_JOIN_CALLS must be at most %d", MAX_JOIN_CALLS);
    g_reps = env_long("BENCH_REPS", 3, 1);
    g_join_reps = env_long("BENCH_Q_JOIN_REPS", 5, 1);
    g_batch = env_long("BENCH_BATCH", 1000, 1);
    floor_settings_from_env();
    const char *only = getenv("BENCH_Q_ONLY");
    if (only && *only) {
        if (strspn(only, "123") != strlen(only)) die("BENCH_Q_ONLY takes the digits 1, 2 and 3");
        g_only = only;
    }
    /* 1a) needs 3 pages of every age: ~N/80 entries per age. */
    if (want('1') && g_queries > AGES && g_n / AGES < 60) die("BENCH_Q_N is too small for %ld exact queries (pages of ages)", g_queries);
    init_data();

    char cipher[64];
    bench_start("tureen-qbench", cipher, sizeof cipher);
    char store[4200];
    path_in_dir(store, sizeof store, "queries.tureen");

    double t_all = now_s();
    double base = 0;
    warg idle = {TUREEN, NULL};
    run_child(wl_idle, &idle, &base);

    /* Fill once, in a child, through Tureen. */
    fprintf(stderr, "filling the store through tureen_upsert\n");
    double fill_peak = 0;
    warg fa = {TUREEN, store};
    result fill = run_child(wl_fill, &fa, &fill_peak);
    fprintf(stderr, "  filled in %.1f s (bench %.1f s, docs %.1f s, employees %.1f s, departments %.1f s), %.1f MB\n",
            fill.fill_s[0] + fill.fill_s[1] + fill.fill_s[2] + fill.fill_s[3], fill.fill_s[0], fill.fill_s[1],
            fill.fill_s[2], fill.fill_s[3], file_mb(store));

    /* The floor's names for Tureen's tables, from Tureen's metadata, read
     * with the floor's key and settings (closed again before any fork). */
    char plan_exact[512] = "", plan_range[512] = "", plan_join[1024] = "", plan_like[512] = "";
    long file_page = 0;
    {
        sqlite3 *db = floor_open(store, FLOOR_TUREEN_FILE);
        sqlite3_stmt *s = floor_prepare(db, "PRAGMA page_size");
        scheck(db, sqlite3_step(s), SQLITE_ROW, "PRAGMA page_size");
        file_page = (long)sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
        if (want('1')) {
            read_meta(db, SOUP_BENCH, &g_m_bench);
            const char *age = meta_col(&g_m_bench, "age", "integer"), *score = meta_col(&g_m_bench, "score", "floating");
            snprintf(g_sql_exact, sizeof g_sql_exact,
                     "SELECT id, soup, lastModified FROM %s WHERE %s = ? ORDER BY %s, id LIMIT 10 OFFSET ?", g_m_bench.table, age, age);
            snprintf(g_sql_range, sizeof g_sql_range,
                     "SELECT id, soup, lastModified FROM %s WHERE %s >= ? AND %s <= ? ORDER BY %s, id LIMIT 10", g_m_bench.table,
                     score, score, score);
            snprintf(g_sql_count, sizeof g_sql_count, "SELECT count(*) FROM %s WHERE %s = ?", g_m_bench.table, age);
            plan(db, g_sql_exact, plan_exact, sizeof plan_exact);
            plan(db, g_sql_range, plan_range, sizeof plan_range);
        }
        if (want('2')) {
            read_meta(db, SOUP_DOCS, &g_m_docs);
            char like[512];
            snprintf(like, sizeof like, "SELECT id, soup, lastModified FROM %s WHERE %s LIKE ? LIMIT 10", g_m_docs.table,
                     meta_col(&g_m_docs, "text", "string"));
            meta_col(&g_m_docs, "text", "full_text");
            plan(db, like, plan_like, sizeof plan_like);
        }
        if (want('3')) {
            read_meta(db, SOUP_EMP, &g_m_emp);
            read_meta(db, SOUP_DEPT, &g_m_dept);
            const char *e = g_m_emp.table, *d = g_m_dept.table;
            snprintf(g_sql_join, sizeof g_sql_join,
                     "select %s.%s, count(*), sum(%s.%s) from %s, %s where %s.%s = %s.%s group by %s.%s",
                     d, meta_col(&g_m_dept, "name", "string"), e, meta_col(&g_m_emp, "salary", "integer"), e, d,
                     d, meta_col(&g_m_dept, "deptCode", "string"), e, meta_col(&g_m_emp, "deptCode", "string"),
                     d, meta_col(&g_m_dept, "name", "string"));
            plan(db, g_sql_join, plan_join, sizeof plan_join);
        }
        floor_close(db);
    }
    if (file_page != g_page) die("Tureen's file has page size %ld, the floor's settings %ld: set BENCH_FLOOR_PAGE_SIZE=%ld", file_page, g_page, file_page);

    printf("Tureen queries benchmark: tureen_query against the floor (the same SELECT by hand on the SQLCipher API, on Tureen's file)\n");
    print_versions(cipher);
    printf("  store                one file filled once through tureen_upsert (%ld per call) in %.1f s, %.1f MB; every run reads it\n",
           g_batch, fill.fill_s[0] + fill.fill_s[1] + fill.fill_s[2] + fill.fill_s[3], file_mb(store));
    if (want('1'))
        printf("  1) soup bench        %ld entries of ~1 KB (the soups bench's data), 5 indexes; floor: %s\n", g_n, g_m_bench.table);
    if (want('2'))
        printf("  2) soup docs         %ld entries of ~1 KB; \"text\" = %d of %d 6-letter words (each in ~1%% of the entries)\n"
               "                       and a rare word \"q\" + 6 digits (in %d entries), indexed string + full_text\n",
               g_fts_n, DOC_WORDS, VOCAB, RARE_DOCS);
    if (want('3'))
        printf("  3) soups             employees %ld (~300 B; deptCode string, salary integer), departments %ld (deptCode, name)\n",
               g_emp, g_depts);
    printf("  key                  raw 256-bit key (no KDF) on both sides, WAL\n");
    printf("  floor settings       cipher_page_size %ld, synchronous %s, cache_size -%ld KiB (Tureen's); Tureen's file read with "
           "them: page size %ld\n", g_page, g_sync, g_cache_kib, file_page);
    printf("  repetitions          1), 2): %ld per side, 3): %ld per side; sides alternate, one forked child each\n", g_reps, g_join_reps);
    printf("  queries              1), 2): %ld pages per repetition and kind after 1 untimed warm-up, median per repetition,\n"
           "                       then median of the repetitions; 2b), 2c): %ld per repetition;\n"
           "                       3): %ld timed calls per repetition after 1 warm-up, median of all %ld calls pooled\n",
           g_queries, g_count_queries, g_join_calls, g_join_calls * g_join_reps);
    printf("  files                %s (removed afterwards)\n", g_dir);
    printf("  peak MB              child ru_maxrss from wait4; an idle child peaks at %.1f MB; the fill child at %.1f MB\n", base, fill_peak);
    printf("  machine              %ld online CPUs\n", sysconf(_SC_NPROCESSORS_ONLN));
    if (want('1')) {
        printf("  floor SQL 1a)        %s\n", g_sql_exact);
        printf("            plan       %s\n", plan_exact);
        printf("  floor SQL 1b)        %s\n", g_sql_range);
        printf("            plan       %s\n", plan_range);
        printf("  floor SQL 1c)        %s (%ld counts per repetition, ages 18 + q)\n", g_sql_count, g_count_queries);
    }
    if (want('2')) printf("  plan of like 2)      %s (the like page's SQL, by hand)\n", plan_like);
    if (want('3')) {
        printf("  floor SQL 3)         %s\n", g_sql_join);
        printf("            plan       %s\n", plan_join);
    }
    printf("\n");
    fflush(stdout);

    static const char *TF[2] = {"tureen", "floor"};
    static const char *ML[2] = {"match", "like"};
    summary s1, s2, s3;
    /* 1'): each repetition's medians by side and kind, and its ratios. */
    double *paired[2][INDEX_KINDS];
    double paired_each[INDEX_KINDS][MAX_SHOWN_REPS];
    summary sp; /* 1'): only its peaks (one child holds both sides) */
    memset(&sp, 0, sizeof sp);
    for (int side = 0; side < 2; side++)
        for (int k = 0; k < INDEX_KINDS; k++) paired[side][k] = xmalloc((size_t)g_reps * sizeof(double));
    memset(&s1, 0, sizeof s1);
    memset(&s2, 0, sizeof s2);
    memset(&s3, 0, sizeof s3);
    if (want('1')) {
        fprintf(stderr, "1) exact / range, pages of 10 (us: exact, range)\n");
        s1 = measure("1) exact, range", TF, wl_index, g_reps, store);
        fprintf(stderr, "1') the same, both sides in one child (us: tureen exact, floor exact, tureen range, floor range)\n");
        for (long rep = 0; rep < g_reps; rep++) {
            warg a = {TUREEN, store};
            double peak = 0;
            result r = run_child(wl_index_paired, &a, &peak);
            if (peak > sp.peak[0]) sp.peak[0] = sp.peak[1] = peak;
            for (int k = 0; k < INDEX_KINDS; k++) {
                paired[TUREEN][k][rep] = r.us[k];
                paired[FLOOR][k][rep] = r.floor_us[k];
                if (rep < MAX_SHOWN_REPS) paired_each[k][rep] = r.floor_us[k] > 0 ? r.us[k] / r.floor_us[k] : 0;
            }
            fprintf(stderr, "  1') paired         rep %ld/%ld %10.1f %10.1f %10.1f %10.1f us\n", rep + 1, g_reps, r.us[0],
                    r.floor_us[0], r.us[1], r.floor_us[1]);
        }
    }
    if (want('2')) {
        fprintf(stderr, "2) full text: match / like\n");
        s2 = measure("2) match / like", ML, wl_fts, g_reps, store);
    }
    if (want('3')) {
        fprintf(stderr, "3) smart SQL join + aggregate\n");
        s3 = measure("3) smart join", TF, wl_join, g_join_reps, store);
        const result *t = &s3.last[TUREEN], *f = &s3.last[FLOOR];
        if (t->check[0] != f->check[0] || t->check[1] != f->check[1] || t->check[2] != f->check[2])
            die("3) tureen and the floor disagree: rows %.0f / %.0f, count %.0f / %.0f, sum %.0f / %.0f",
                t->check[0], f->check[0], t->check[1], f->check[1], t->check[2], f->check[2]);
        if (t->check[1] != (double)g_emp) die("3) the join counts %.0f employees, not %ld", t->check[1], g_emp);
    }

    char tv[64], fv[64], rv[64], label[64];
    printf("%-44s | %-16s | %-18s | %-17s | %-29s | %s\n", "workload", "tureen", "against", "ratio", "bar",
           "peak MB (tureen / against)");
    printf("%.44s-+-%.16s-+-%.18s-+-%.17s-+-%.29s-+-%.26s\n", "--------------------------------------------------",
           "--------------------------------------------------", "--------------------------------------------------",
           "--------------------------------------------------", "--------------------------------------------------",
           "--------------------------------------------------");
    if (want('1')) {
        static const char *what[INDEX_KINDS] = {"1a) exact age=k, page of 10", "1b) range score [a,b], page of 10"};
        for (int k = 0; k < INDEX_KINDS; k++) {
            snprintf(label, sizeof label, "%s (%ld)", what[k], g_n);
            fmt_time(tv, sizeof tv, "", s1.us[TUREEN][k]);
            fmt_time(fv, sizeof fv, "floor ", s1.us[FLOOR][k]);
            double ratio = s1.us[FLOOR][k] > 0 ? s1.us[TUREEN][k] / s1.us[FLOOR][k] : 0;
            snprintf(rv, sizeof rv, "%.2f t/f", ratio);
            row(label, tv, fv, rv, "t/f <= 1.10", ratio > 1.10, &s1);
        }
        {
            snprintf(label, sizeof label, "1c) count of age=k (%ld)", g_n);
            fmt_time(tv, sizeof tv, "", s1.us[TUREEN][COUNT_KIND]);
            fmt_time(fv, sizeof fv, "floor ", s1.us[FLOOR][COUNT_KIND]);
            double ratio = s1.us[FLOOR][COUNT_KIND] > 0 ? s1.us[TUREEN][COUNT_KIND] / s1.us[FLOOR][COUNT_KIND] : 0;
            snprintf(rv, sizeof rv, "%.2f t/f", ratio);
            row(label, tv, fv, rv, "t/f <= 1.10", ratio > 1.10, &s1);
        }
        static const char *paired_what[INDEX_KINDS] = {"1a') exact, paired in one child", "1b') range, paired in one child"};
        for (int k = 0; k < INDEX_KINDS; k++) {
            double t = median(paired[TUREEN][k], g_reps), f = median(paired[FLOOR][k], g_reps);
            fmt_time(tv, sizeof tv, "", t);
            fmt_time(fv, sizeof fv, "floor ", f);
            snprintf(rv, sizeof rv, "%.2f t/f", f > 0 ? t / f : 0);
            row(paired_what[k], tv, fv, rv, "- (see 1a, 1b)", 0, &sp);
        }
    }
    if (want('2')) {
        double speedup = s2.us[TUREEN][0] > 0 ? s2.us[LIKE][0] / s2.us[TUREEN][0] : 0;
        snprintf(label, sizeof label, "2a) match vs like %%term%%, page of 10 (%ld)", g_fts_n);
        fmt_time(tv, sizeof tv, "match ", s2.us[TUREEN][0]);
        fmt_time(fv, sizeof fv, "like ", s2.us[LIKE][0]);
        snprintf(rv, sizeof rv, speedup < 100 ? "%.1fx like/match" : "%.0fx like/match", speedup);
        /* No bar here: like stops at the 10th match of a common word, so
         * this row measures no search of the soup (see bench/README.md). */
        row(label, tv, fv, rv, "- (like stops early)", 0, &s2);
        speedup = s2.us[TUREEN][1] > 0 ? s2.us[LIKE][1] / s2.us[TUREEN][1] : 0;
        snprintf(label, sizeof label, "2b) match vs like %%term%%, tureen_count");
        fmt_time(tv, sizeof tv, "match ", s2.us[TUREEN][1]);
        fmt_time(fv, sizeof fv, "like ", s2.us[LIKE][1]);
        snprintf(rv, sizeof rv, speedup < 100 ? "%.1fx like/match" : "%.0fx like/match", speedup);
        row(label, tv, fv, rv, "like/match >= 10", speedup < 10, &s2);
        speedup = s2.us[TUREEN][2] > 0 ? s2.us[LIKE][2] / s2.us[TUREEN][2] : 0;
        snprintf(label, sizeof label, "2c) match vs like %%rare%%, page of 10");
        fmt_time(tv, sizeof tv, "match ", s2.us[TUREEN][2]);
        fmt_time(fv, sizeof fv, "like ", s2.us[LIKE][2]);
        snprintf(rv, sizeof rv, speedup < 100 ? "%.1fx like/match" : "%.0fx like/match", speedup);
        row(label, tv, fv, rv, "like/match >= 10", speedup < 10, &s2);
    }
    if (want('3')) {
        double ratio = s3.us[FLOOR][0] > 0 ? s3.us[TUREEN][0] / s3.us[FLOOR][0] : 0;
        snprintf(label, sizeof label, "3) smart join + group by (%ld x %ld)", g_emp, g_depts);
        fmt_time(tv, sizeof tv, "", s3.us[TUREEN][0]);
        fmt_time(fv, sizeof fv, "floor ", s3.us[FLOOR][0]);
        snprintf(rv, sizeof rv, "%.3f t/f", ratio);
        row(label, tv, fv, rv, "t/f <= 1.10", ratio > 1.10, &s3);
    }
    printf("\n");
    printf("Times are medians per query (per call in 3); ratio t/f = tureen time / floor time (lower is better for tureen,\n");
    printf("1.00 = equal). 2) compares two tureen queries, both orderPath null: like time / match time (higher: match faster).\n");
    printf("Peak MB of 1) and 2): one child runs every query of the workload (2: the match child / the like child).\n");
    if (want('1')) printf("1) Both sides returned the same entries, in the same order, for all %ld queries of each kind.\n", g_queries);
    if (want('2'))
        printf("2) A term is in %.0f of %ld entries on average (%.2f%%); match and like counted the same entries for each term.\n",
               s2.last[TUREEN].check[0], g_fts_n, 100.0 * s2.last[TUREEN].check[0] / (double)g_fts_n);
    if (want('2')) printf("2c) Each rare word's page held its %d entries, on both sides.\n", RARE_DOCS);
    if (want('3'))
        printf("3) Both sides returned %.0f groups counting %.0f employees, salaries summing to %.0f.\n", s3.last[TUREEN].check[0],
               s3.last[TUREEN].check[1], s3.last[TUREEN].check[2]);
    printf("Each repetition, median us (sides alternate, each a forked child on the same file):\n");
    print_runs("1a) exact", TF, &s1, 0);
    print_runs("1b) range", TF, &s1, 1);
    if (want('1')) {
        static const char *RATIO[2] = {"exact t/f", "range t/f"};
        const double *each[2] = {paired_each[0], paired_each[1]};
        print_reps("1') paired, ratio", 30, RATIO, each, g_reps, 2);
    }
    print_runs("2a) full text, page", ML, &s2, 0);
    print_runs("2b) full text, count", ML, &s2, 1);
    print_runs("2c) full text, rare word", ML, &s2, 2);
    print_runs("3) smart join (call median)", TF, &s3, 0);
    for (int side = 0; side < 2; side++)
        for (int k = 0; k < INDEX_KINDS; k++) free(paired[side][k]);
    printf("Total run %.1f s (fill included).\n", now_s() - t_all);
    fflush(stdout);
    if (getenv("BENCH_Q_KEEP") && *getenv("BENCH_Q_KEEP")) {
        fprintf(stderr, "queries_bench: BENCH_Q_KEEP: the store stays at %s\n", store);
        g_dir[0] = 0;
    }
    remove_dir();
    return 0;
}
