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
 *   2) full text: "match" against "like '%term%'" over BENCH_Q_FTS_N entries;
 *   3) a Smart SQL join with an aggregate, employees x departments.
 *
 * Environment: BENCH_Q_N (100000), BENCH_Q_FTS_N (50000), BENCH_Q_EMP
 *   (BENCH_Q_N), BENCH_Q_DEPTS (1000), BENCH_Q_QUERIES (200: pages per
 *   repetition and kind in 1 and 2), BENCH_Q_COUNT_QUERIES (20: counts per
 *   repetition in 2), BENCH_Q_JOIN_CALLS (4: timed calls per repetition in
 *   3), BENCH_Q_JOIN_REPS (5), BENCH_Q_ONLY (123), BENCH_Q_KEEP (unset: keep
 *   the store for inspection), BENCH_REPS (3), BENCH_BATCH (1000), BENCH_TMP
 *   (/tmp), BENCH_FLOOR_PAGE_SIZE (4096), BENCH_FLOOR_SYNC (NORMAL),
 *   BENCH_FLOOR_CACHE_KIB (8192).
 * Exit status: 0 when everything ran (whether or not a bar was met), 1 on
 * any error (a failing tureen_* call prints tureen_errmsg()).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include "tureen.h"

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

#define RAW_KEY_HEX "4f1c2a9be07d3318c5a6e2f0b19d874c36ae5b0f2d71c8e94a03b6f5d2e1c780"
#define SEED 0x7572656e2d62656eULL /* fixed: the data are the same every run */

static const char *TUREEN_OPTS = "{\"raw_key\": \"" RAW_KEY_HEX "\"}";
static const char *FLOOR_KEY_SQL = "PRAGMA key = \"x'" RAW_KEY_HEX "'\"";

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

static long g_n = 100000;     /* entries of workload 1's soup */
static long g_fts_n = 50000;  /* entries of workload 2's soup */
static long g_emp = 100000;   /* employees */
static long g_depts = 1000;   /* departments */
static long g_queries = 200;  /* queries per repetition, workloads 1 and 2 */
static long g_join_calls = 4; /* timed calls per repetition, workload 3 */
static long g_join_reps = 5;  /* repetitions of workload 3 */
static long g_count_queries = 20; /* counts per repetition in workload 2 */
static long g_reps = 3;       /* repetitions per workload and side (median reported) */
static long g_batch = 1000;   /* entries per tureen_upsert call when filling */
/* The floor's connection settings: what Tureen's Store.swift sets on every
 * connection. The floor reads Tureen's own file, so they must match it. */
static long g_page = 4096;            /* BENCH_FLOOR_PAGE_SIZE */
static const char *g_sync = "NORMAL"; /* BENCH_FLOOR_SYNC */
static long g_cache_kib = 8192;       /* BENCH_FLOOR_CACHE_KIB */
static const char *g_only = "123";    /* BENCH_Q_ONLY */
static char g_dir[4096];              /* the temporary directory */
static int g_is_child = 0;
static volatile pid_t g_child = 0; /* the running child, killed on SIGINT/SIGTERM */

/* ------------------------------------------------------------------------ */
/* Errors, time, files                                                       */
/* ------------------------------------------------------------------------ */

static void remove_dir(void);

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "queries_bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    fflush(stderr);
    if (g_is_child) _exit(1);
    remove_dir();
    exit(1);
}

/* Any tureen_* status other than TUREEN_OK ends the program. */
static void tcheck(int rc, const char *what)
{
    if (rc != TUREEN_OK) die("tureen: %s failed: status %d: %s", what, rc, tureen_errmsg());
}

static void scheck(sqlite3 *db, int rc, int expected, const char *what)
{
    if (rc != expected) die("sqlcipher: %s failed: status %d: %s", what, rc, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

static void sexec(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK) die("sqlcipher: '%s' failed: status %d: %s", sql, rc, err ? err : sqlite3_errstr(rc));
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory (%zu bytes)", n);
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) die("out of memory (%zu bytes)", n);
    return p;
}

static void path_in_dir(char *out, size_t cap, const char *name)
{
    if ((size_t)snprintf(out, cap, "%s/%s", g_dir, name) >= cap) die("path too long");
}

static double file_mb(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size / (1024.0 * 1024.0) : 0.0;
}

static void remove_dir(void)
{
    if (!g_dir[0]) return;
    DIR *d = opendir(g_dir);
    if (d) {
        struct dirent *e;
        char p[4400];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(g_dir);
    g_dir[0] = 0;
}

/* Interrupted: stop the child and leave no files behind. */
static void on_signal(int sig)
{
    pid_t c = g_child;
    if (c > 0) {
        kill(c, SIGKILL);
        waitpid(c, NULL, 0);
    }
    remove_dir();
    _exit(128 + sig);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median of v[0..n) (sorts v). */
static double median(double *v, long n)
{
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static const char *CITIES[16] = {
    "Paris", "Lyon", "Berlin", "Hamburg", "Madrid", "Sevilla", "Roma", "Milano",
    "Lisboa", "Porto", "Wien", "Praha", "Oslo", "Dublin", "Gent", "Zurich"};

static const char *TITLES[8] = {"engineer", "analyst", "manager", "designer", "clerk", "director", "technician", "consultant"};

#define FILLER_LEN 8192
static char g_filler[FILLER_LEN]; /* words of letters, cut at random offsets for "notes" */
static char g_vocab[VOCAB][WORD_LEN + 1];

/* The soups bench's filler (same seed, same text), and the vocabulary: VOCAB
 * distinct words of WORD_LEN lowercase letters. */
static void init_data(void)
{
    uint64_t s = SEED;
    size_t i = 0;
    while (i < FILLER_LEN) {
        uint64_t r = splitmix64(&s);
        size_t w = 2 + r % 9;
        for (size_t k = 0; k < w && i < FILLER_LEN; k++) g_filler[i++] = (char)('a' + (splitmix64(&s) % 26));
        if (i < FILLER_LEN) g_filler[i++] = ' ';
    }
    s = SEED ^ 0x766f636162ULL;
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

/* A batch: one JSON array "[e1,e2,...]" of entries. */
typedef struct {
    char *buf;
    size_t len, cap;
    long count;
} batch;

static void batch_reserve(batch *b, size_t more)
{
    if (b->len + more + 1 > b->cap) {
        while (b->len + more + 1 > b->cap) b->cap = b->cap ? b->cap * 2 : 1 << 20;
        b->buf = xrealloc(b->buf, b->cap);
    }
}

static void batch_start(batch *b)
{
    b->len = 0;
    b->count = 0;
    batch_reserve(b, 1);
    b->buf[b->len++] = '[';
}

static void batch_end(batch *b)
{
    batch_reserve(b, 1);
    b->buf[b->len++] = ']';
    b->buf[b->len] = 0;
}

/* Appends `head` (an object's first members, ending with "notes":") padded
 * with filler so that the entry has `total` bytes. */
static void batch_put(batch *b, const char *head, size_t hl, size_t total, uint64_t r)
{
    if (b->count++ > 0) {
        batch_reserve(b, 1);
        b->buf[b->len++] = ',';
    }
    size_t notes = total > hl + 2 ? total - hl - 2 : 0;
    size_t from = (size_t)((r >> 8) % (FILLER_LEN - notes));
    batch_reserve(b, hl + notes + 2);
    memcpy(b->buf + b->len, head, hl);
    b->len += hl;
    memcpy(b->buf + b->len, g_filler + from, notes);
    b->len += notes;
    b->buf[b->len++] = '"';
    b->buf[b->len++] = '}';
}

/* Workload 1: the soups bench's entry `idx`, byte for byte:
 * {"name","age","score","city","ext","rank","notes"}, 1000 to 1047 bytes. */
static void add_bench(batch *b, uint64_t idx)
{
    uint64_t s = SEED ^ (idx * 0xD1B54A32D192ED03ULL);
    uint64_t r1 = splitmix64(&s), r2 = splitmix64(&s), r3 = splitmix64(&s), r4 = splitmix64(&s);
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "{\"name\":\"name-%llu\",\"age\":%lld,\"score\":%.2f,\"city\":\"%s\",\"ext\":\"ext-%llu\",\"rank\":%lld,\"notes\":\"",
                      (unsigned long long)idx, 18 + (long long)(r1 % 80), (double)(r2 % 10000000) / 100.0,
                      CITIES[r3 % 16], (unsigned long long)idx, (long long)idx);
    batch_put(b, head, (size_t)hl, 1000 + r4 % 48, r4);
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
 * words of the vocabulary. */
static void add_doc(batch *b, uint64_t idx)
{
    int w[DOC_WORDS];
    doc_words(idx, w);
    uint64_t s = SEED ^ 0x7469746c65ULL ^ (idx * 0xD1B54A32D192ED03ULL);
    uint64_t r = splitmix64(&s);
    char head[256];
    int hl = snprintf(head, sizeof head, "{\"title\":\"doc-%llu\",\"text\":\"%s %s %s %s %s\",\"notes\":\"",
                      (unsigned long long)idx, g_vocab[w[0]], g_vocab[w[1]], g_vocab[w[2]], g_vocab[w[3]], g_vocab[w[4]]);
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
static char g_sql_exact[512], g_sql_range[512], g_sql_join[1024];

/* Opened as Tureen opens its stores: no mutex, raw key, the same cipher page
 * size, WAL, the same synchronous and cache_size. */
static sqlite3 *floor_open(const char *path)
{
    sqlite3 *db = NULL;
    char sql[128];
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    scheck(db, rc, SQLITE_OK, "sqlite3_open_v2");
    sexec(db, FLOOR_KEY_SQL);
    snprintf(sql, sizeof sql, "PRAGMA cipher_page_size = %ld", g_page);
    sexec(db, sql);
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt *s = NULL;
    rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &s, NULL);
    if (rc != SQLITE_OK)
        die("sqlcipher: the floor's key and cipher settings cannot read Tureen's file %s (%s): is Tureen's cipher_page_size "
            "still %ld? (BENCH_FLOOR_PAGE_SIZE)", path, sqlite3_errmsg(db), g_page);
    scheck(db, sqlite3_step(s), SQLITE_ROW, "PRAGMA journal_mode = WAL");
    const char *mode = (const char *)sqlite3_column_text(s, 0);
    if (!mode || strcmp(mode, "wal") != 0) die("sqlcipher: %s is not in WAL mode (%s)", path, mode ? mode : "?");
    sqlite3_finalize(s);
    snprintf(sql, sizeof sql, "PRAGMA synchronous = %s", g_sync);
    sexec(db, sql);
    snprintf(sql, sizeof sql, "PRAGMA cache_size = -%ld", g_cache_kib);
    sexec(db, sql);
    return db;
}

static void floor_close(sqlite3 *db)
{
    sexec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    scheck(NULL, sqlite3_close(db), SQLITE_OK, "sqlite3_close");
}

static sqlite3_stmt *floor_prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) die("sqlcipher: preparing '%s': %s", sql, sqlite3_errmsg(db));
    return s;
}

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
/* Tureen's side                                                             */
/* ------------------------------------------------------------------------ */

static tureen_store *tureen_open(const char *path)
{
    tureen_store *st = NULL;
    tcheck(tureen_store_open(path, TUREEN_OPTS, &st), "tureen_store_open");
    return st;
}

static int64_t tureen_count_q(tureen_store *st, const char *q)
{
    int64_t n = -1;
    tcheck(tureen_count(st, q, &n), "tureen_count");
    return n;
}

/* ------------------------------------------------------------------------ */
/* Children                                                                  */
/* ------------------------------------------------------------------------ */

#define KINDS 2
#define MAX_JOIN_CALLS 64
typedef struct {
    double us[KINDS];       /* median microseconds per query, by kind */
    uint64_t hash[KINDS];   /* the ids returned, hashed in order (1) */
    double check[3];        /* workload-specific checks */
    long ncalls;            /* 3): timed calls, each in calls[] (us) */
    double calls[MAX_JOIN_CALLS];
    double fill_s[4];       /* fill: seconds per soup */
} result;

enum side { TUREEN = 0, FLOOR = 1, LIKE = 1 };

typedef struct {
    int side;
    const char *path; /* Tureen's store */
} warg;

typedef void (*work_fn)(const warg *a, result *r);

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
    free(b.buf);
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
        if (len + sl + 80 > cap) {
            cap = (len + sl + 80) * 2;
            out = xrealloc(out, cap);
        }
        if (len > 1) out[len++] = ',';
        memcpy(out + len, soup, sl - 1);
        len += sl - 1;
        len += (size_t)sprintf(out + len, ",\"_soupEntryId\":%lld,\"_soupLastModifiedDate\":%lld}", id, lm);
        *h = fnv(*h, id);
        (*n)++;
    }
    scheck(db, rc, SQLITE_DONE, "stepping a page");
    sqlite3_reset(s);
    out[len++] = ']';
    out[len] = 0;
    return out;
}

/* 1) g_queries exact pages (age) and g_queries range pages (score), each
 * kind after one untimed warm-up query; median per kind. */
static void wl_index(const warg *a, result *r)
{
    double *us = xmalloc((size_t)g_queries * sizeof *us);
    char spec[512], lo[32], hi[32];
    long n;
    if (a->side == TUREEN) {
        tureen_store *st = tureen_open(a->path);
        char *out = NULL;
        for (int kind = 0; kind < KINDS; kind++) {
            uint64_t h = FNV_START;
            for (long q = -1; q < g_queries; q++) { /* q = -1: warm-up */
                long qq = q < 0 ? g_queries : q;
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
                double t0 = now_s();
                tcheck(tureen_query(st, spec, page, &out), "tureen_query");
                double t = now_s() - t0;
                if (q >= 0) {
                    us[q] = t * 1e6;
                    n = 0;
                    h = hash_ids(h, out, &n);
                    if (n != 10) die("tureen: %s returned %ld entries on page %d, not 10", spec, n, page);
                }
                tureen_free(out);
            }
            r->us[kind] = median(us, g_queries);
            r->hash[kind] = h;
        }
        tcheck(tureen_store_close(st), "tureen_store_close");
    } else {
        sqlite3 *db = floor_open(a->path);
        sqlite3_stmt *s[KINDS] = {floor_prepare(db, g_sql_exact), floor_prepare(db, g_sql_range)};
        for (int kind = 0; kind < KINDS; kind++) {
            uint64_t h = FNV_START;
            for (long q = -1; q < g_queries; q++) {
                long qq = q < 0 ? g_queries : q;
                uint64_t hq = FNV_START;
                n = 0;
                double t0 = now_s();
                if (kind == 0) {
                    sqlite3_bind_int64(s[0], 1, exact_age(qq));
                    sqlite3_bind_int64(s[0], 2, exact_page(qq) * 10);
                } else {
                    range_bounds(qq, lo, hi, sizeof lo);
                    sqlite3_bind_double(s[1], 1, strtod(lo, NULL));
                    sqlite3_bind_double(s[1], 2, strtod(hi, NULL));
                }
                char *out = floor_page(db, s[kind], q >= 0 ? &h : &hq, &n);
                double t = now_s() - t0;
                if (q >= 0) {
                    us[q] = t * 1e6;
                    if (n != 10) die("floor: query %ld of kind %d returned %ld rows, not 10", q, kind, n);
                }
                free(out);
            }
            r->us[kind] = median(us, g_queries);
            r->hash[kind] = h;
        }
        sqlite3_finalize(s[0]);
        sqlite3_finalize(s[1]);
        floor_close(db);
    }
    free(us);
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
        sqlite3 *db = floor_open(a->path);
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
    int p[2];
    if (pipe(p) != 0) die("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) die("fork: %s", strerror(errno));
    if (pid == 0) {
        g_is_child = 1;
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        close(p[0]);
        /* Forget the parent's peak (inherited through fork): count from here. */
        int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (write(fd, "5", 1) != 1) { /* not fatal: the parent is small anyway */ }
            close(fd);
        }
        result r;
        memset(&r, 0, sizeof r);
        fn(a, &r);
        if (write(p[1], &r, sizeof r) != (ssize_t)sizeof r) _exit(1);
        _exit(0);
    }
    g_child = pid;
    close(p[1]);
    result r;
    memset(&r, 0, sizeof r);
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = read(p[0], (char *)&r + got, sizeof r - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(p[0]);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) die("wait4: %s", strerror(errno));
    }
    g_child = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != sizeof r) {
        if (WIFSIGNALED(status)) die("a child died of signal %d", WTERMSIG(status));
        die("a child failed (exit status %d); its message is above", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    *peak_mb = (double)ru.ru_maxrss / 1024.0; /* ru_maxrss is in KiB on Linux */
    return r;
}

/* ------------------------------------------------------------------------ */
/* Measuring and reporting                                                   */
/* ------------------------------------------------------------------------ */

#define MAX_SHOWN_REPS 16
typedef struct {
    long reps;
    double each[2][KINDS][MAX_SHOWN_REPS]; /* each repetition's median us, by side and kind */
    double us[2][KINDS];                   /* median over the repetitions */
    double peak[2];                        /* max peak RSS over the repetitions, MB */
    result last[2];                        /* the last repetition's result, for checks */
} summary;

/* `reps` repetitions on both sides, alternating sides so that slow drift on
 * the machine hits both. Workloads 1 and 2 report the median of the
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
        for (int side = 0; side < 2; side++) {
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
            fprintf(stderr, "  peak %6.1f MB  (child %.1f s)\n", peak, now_s() - t0);
        }
        if (fn == wl_index)
            for (int k = 0; k < KINDS; k++)
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
}

static void print_runs(const char *name, const char *names[2], const summary *s, int kind)
{
    if (s->reps == 0) return;
    printf("  %-30s", name);
    for (int side = 0; side < 2; side++) {
        printf("%s%s:", side ? "; " : "", names[side]);
        for (long i = 0; i < s->reps && i < MAX_SHOWN_REPS; i++) printf(" %.1f", s->each[side][kind][i]);
    }
    printf("\n");
}

static int want(char w) { return strchr(g_only, w) != NULL; }

static long env_long(const char *name, long def, long min)
{
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (*end || n < min) die("%s must be an integer >= %ld (got '%s')", name, min, v);
    return n;
}

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
    g_page = env_long("BENCH_FLOOR_PAGE_SIZE", 4096, 512);
    g_cache_kib = env_long("BENCH_FLOOR_CACHE_KIB", 8192, 1);
    const char *sync = getenv("BENCH_FLOOR_SYNC");
    if (sync && *sync) {
        if (strcasecmp(sync, "OFF") && strcasecmp(sync, "NORMAL") && strcasecmp(sync, "FULL") && strcasecmp(sync, "EXTRA"))
            die("BENCH_FLOOR_SYNC must be OFF, NORMAL, FULL or EXTRA");
        g_sync = sync;
    }
    const char *only = getenv("BENCH_Q_ONLY");
    if (only && *only) {
        if (strspn(only, "123") != strlen(only)) die("BENCH_Q_ONLY takes the digits 1, 2 and 3");
        g_only = only;
    }
    /* 1a) needs 3 pages of every age: ~N/80 entries per age. */
    if (want('1') && g_queries > AGES && g_n / AGES < 60) die("BENCH_Q_N is too small for %ld exact queries (pages of ages)", g_queries);
    const char *tmp = getenv("BENCH_TMP");
    if (!tmp || !*tmp) tmp = "/tmp";
    init_data();

    if (tureen_version_number() != TUREEN_VERSION_NUMBER)
        die("header version %d, library version %d", TUREEN_VERSION_NUMBER, tureen_version_number());

    /* The floor's SQLCipher: version and cipher, from an in-memory keyed db. */
    char cipher[64] = "?";
    {
        sqlite3 *db = NULL;
        scheck(db, sqlite3_open(":memory:", &db), SQLITE_OK, "sqlite3_open(:memory:)");
        sexec(db, FLOOR_KEY_SQL);
        sqlite3_stmt *s = floor_prepare(db, "PRAGMA cipher_version");
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
            snprintf(cipher, sizeof cipher, "%s", (const char *)sqlite3_column_text(s, 0));
        else
            die("the linked SQLite has no PRAGMA cipher_version: it is not SQLCipher");
        sqlite3_finalize(s);
        sqlite3_close(db);
    }

    snprintf(g_dir, sizeof g_dir, "%s/tureen-qbench-XXXXXX", tmp);
    if (!mkdtemp(g_dir)) {
        g_dir[0] = 0;
        die("mkdtemp in %s: %s", tmp, strerror(errno));
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
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
        sqlite3 *db = floor_open(store);
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
    Dl_info dl;
    struct stat lst;
    char built[64] = "?";
    union { const char *(*fn)(void); void *ptr; } addr;
    addr.fn = tureen_version;
    const char *libpath = dladdr(addr.ptr, &dl) && dl.dli_fname ? dl.dli_fname : "?";
    if (stat(libpath, &lst) == 0) strftime(built, sizeof built, "%Y-%m-%d %H:%M:%S UTC", gmtime(&lst.st_mtime));
    printf("  tureen_version       %s (%s, modified %s)\n", tureen_version(), libpath, built);
    printf("  floor                SQLite %s, SQLCipher %s (PRAGMA cipher_version), linked -lsqlcipher\n", sqlite3_libversion(), cipher);
    printf("  store                one file filled once through tureen_upsert (%ld per call) in %.1f s, %.1f MB; every run reads it\n",
           g_batch, fill.fill_s[0] + fill.fill_s[1] + fill.fill_s[2] + fill.fill_s[3], file_mb(store));
    if (want('1'))
        printf("  1) soup bench        %ld entries of ~1 KB (the soups bench's data), 5 indexes; floor: %s\n", g_n, g_m_bench.table);
    if (want('2'))
        printf("  2) soup docs         %ld entries of ~1 KB; \"text\" = %d of %d 6-letter words, indexed string + full_text\n",
               g_fts_n, DOC_WORDS, VOCAB);
    if (want('3'))
        printf("  3) soups             employees %ld (~300 B; deptCode string, salary integer), departments %ld (deptCode, name)\n",
               g_emp, g_depts);
    printf("  key                  raw 256-bit key (no KDF) on both sides, WAL\n");
    printf("  floor settings       cipher_page_size %ld, synchronous %s, cache_size -%ld KiB (Tureen's); Tureen's file read with "
           "them: page size %ld\n", g_page, g_sync, g_cache_kib, file_page);
    printf("  repetitions          1), 2): %ld per side, 3): %ld per side; sides alternate, one forked child each\n", g_reps, g_join_reps);
    printf("  queries              1), 2): %ld pages per repetition and kind after 1 untimed warm-up, median per repetition,\n"
           "                       then median of the repetitions; 2) counts: %ld per repetition;\n"
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
    memset(&s1, 0, sizeof s1);
    memset(&s2, 0, sizeof s2);
    memset(&s3, 0, sizeof s3);
    if (want('1')) {
        fprintf(stderr, "1) exact / range, pages of 10 (us: exact, range)\n");
        s1 = measure("1) exact, range", TF, wl_index, g_reps, store);
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
        static const char *what[KINDS] = {"1a) exact age=k, page of 10", "1b) range score [a,b], page of 10"};
        for (int k = 0; k < KINDS; k++) {
            snprintf(label, sizeof label, "%s (%ld)", what[k], g_n);
            fmt_time(tv, sizeof tv, "", s1.us[TUREEN][k]);
            fmt_time(fv, sizeof fv, "floor ", s1.us[FLOOR][k]);
            snprintf(rv, sizeof rv, "%.2f t/f", s1.us[FLOOR][k] > 0 ? s1.us[TUREEN][k] / s1.us[FLOOR][k] : 0);
            row(label, tv, fv, rv, "-", 0, &s1);
        }
    }
    if (want('2')) {
        double speedup = s2.us[TUREEN][0] > 0 ? s2.us[LIKE][0] / s2.us[TUREEN][0] : 0;
        snprintf(label, sizeof label, "2a) match vs like %%term%%, page of 10 (%ld)", g_fts_n);
        fmt_time(tv, sizeof tv, "match ", s2.us[TUREEN][0]);
        fmt_time(fv, sizeof fv, "like ", s2.us[LIKE][0]);
        snprintf(rv, sizeof rv, "%.1fx like/match", speedup);
        row(label, tv, fv, rv, "like/match >= 10", speedup < 10, &s2);
        speedup = s2.us[TUREEN][1] > 0 ? s2.us[LIKE][1] / s2.us[TUREEN][1] : 0;
        snprintf(label, sizeof label, "2b) match vs like %%term%%, tureen_count");
        fmt_time(tv, sizeof tv, "match ", s2.us[TUREEN][1]);
        fmt_time(fv, sizeof fv, "like ", s2.us[LIKE][1]);
        snprintf(rv, sizeof rv, "%.1fx like/match", speedup);
        row(label, tv, fv, rv, "-", 0, &s2);
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
    if (want('3'))
        printf("3) Both sides returned %.0f groups counting %.0f employees, salaries summing to %.0f.\n", s3.last[TUREEN].check[0],
               s3.last[TUREEN].check[1], s3.last[TUREEN].check[2]);
    printf("Each repetition, median us (sides alternate, each a forked child on the same file):\n");
    print_runs("1a) exact", TF, &s1, 0);
    print_runs("1b) range", TF, &s1, 1);
    print_runs("2a) full text, page", ML, &s2, 0);
    print_runs("2b) full text, count", ML, &s2, 1);
    print_runs("3) smart join (call median)", TF, &s3, 0);
    printf("Total run %.1f s (fill included).\n", now_s() - t_all);
    fflush(stdout);
    if (getenv("BENCH_Q_KEEP") && *getenv("BENCH_Q_KEEP")) {
        fprintf(stderr, "queries_bench: BENCH_Q_KEEP: the store stays at %s\n", store);
        g_dir[0] = 0;
    }
    remove_dir();
    return 0;
}
