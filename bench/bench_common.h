/*
 * bench_common.h - what soups_bench.c and queries_bench.c share: the key and
 * the floor's connection settings, error and time helpers, the temporary
 * directory and its clean-up on signals, the deterministic data (splitmix64,
 * the filler, the soups bench's ~1 KB entry, JSON batches), the floor's
 * connection (open, prepare, close, the entry JSON Tureen returns), the
 * forked child that runs one measurement and reports its peak RSS, and the
 * start of a run and of its report.
 *
 * Everything is static: each program includes this header once, first
 * (it defines _GNU_SOURCE), after defining BENCH_PROG, its name for
 * messages. Each program defines `struct result` (what a child sends back)
 * and `struct warg` (what a child works on), and its own settings.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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

#ifndef BENCH_PROG
#error "define BENCH_PROG (the program's name, for messages) before including bench_common.h"
#endif

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

#define RAW_KEY_HEX "4f1c2a9be07d3318c5a6e2f0b19d874c36ae5b0f2d71c8e94a03b6f5d2e1c780"
#define SEED 0x7572656e2d62656eULL /* fixed: the data are the same every run */

static const char *TUREEN_OPTS = "{\"raw_key\": \"" RAW_KEY_HEX "\"}";
static const char *FLOOR_KEY_SQL = "PRAGMA key = \"x'" RAW_KEY_HEX "'\"";

/* The floor's connection settings. They default to what Tureen's Store.swift
 * sets on every connection (cipher_page_size 4096, synchronous NORMAL,
 * cache_size -8192 KiB), so both sides do the same I/O. soups_bench checks the
 * page size by reading Tureen's own file with them; queries_bench reads
 * Tureen's file with them, so they must match it. */
static long g_page = 4096;            /* BENCH_FLOOR_PAGE_SIZE */
static const char *g_sync = "NORMAL"; /* BENCH_FLOOR_SYNC */
static long g_cache_kib = 8192;       /* BENCH_FLOOR_CACHE_KIB */

static char g_dir[4096];           /* the temporary directory */
static int g_is_child = 0;
static volatile pid_t g_child = 0; /* the running child, killed on SIGINT/SIGTERM */

enum side { TUREEN = 0, FLOOR = 1 };

#define MAX_SHOWN_REPS 16 /* repetitions listed under "Each repetition" */

/* ------------------------------------------------------------------------ */
/* Errors, time, files, settings                                             */
/* ------------------------------------------------------------------------ */

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

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, BENCH_PROG ": ");
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

__attribute__((unused)) static double file_mb(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size / (1024.0 * 1024.0) : 0.0;
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

static long env_long(const char *name, long def, long min)
{
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (*end || n < min) die("%s must be an integer >= %ld (got '%s')", name, min, v);
    return n;
}

/* BENCH_FLOOR_PAGE_SIZE, BENCH_FLOOR_CACHE_KIB, BENCH_FLOOR_SYNC. */
static void floor_settings_from_env(void)
{
    g_page = env_long("BENCH_FLOOR_PAGE_SIZE", 4096, 512);
    g_cache_kib = env_long("BENCH_FLOOR_CACHE_KIB", 8192, 1);
    const char *sync = getenv("BENCH_FLOOR_SYNC");
    if (sync && *sync) {
        if (strcasecmp(sync, "OFF") && strcasecmp(sync, "NORMAL") && strcasecmp(sync, "FULL") && strcasecmp(sync, "EXTRA"))
            die("BENCH_FLOOR_SYNC must be OFF, NORMAL, FULL or EXTRA");
        g_sync = sync;
    }
}

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

#define FILLER_LEN 8192
static char g_filler[FILLER_LEN]; /* words of letters, cut at random offsets for "notes" */

static void init_filler(void)
{
    uint64_t s = SEED;
    size_t i = 0;
    while (i < FILLER_LEN) {
        uint64_t r = splitmix64(&s);
        size_t w = 2 + r % 9;
        for (size_t k = 0; k < w && i < FILLER_LEN; k++) g_filler[i++] = (char)('a' + (splitmix64(&s) % 26));
        if (i < FILLER_LEN) g_filler[i++] = ' ';
    }
}

/* The soups bench's entry: where its JSON text lies in a batch, and the
 * values of its indexed fields (which the floor binds). */
typedef struct {
    size_t off, len; /* the entry's JSON text within the batch buffer */
    char name[32];
    long long age;
    double score;
    const char *city;
    char ext[32];
    long long rank;
} entry;

/* A batch: one JSON array "[e1,e2,...]" of entries. soups_bench also keeps
 * each entry's values in e[0..count) (queries_bench leaves e NULL). */
typedef struct {
    char *buf;
    size_t len, cap;
    entry *e;
    long count, ecap;
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

static void batch_free(batch *b)
{
    free(b->buf);
    free(b->e);
}

/* Appends `head` (an object's first members, ending with "notes":") padded
 * with filler (cut at an offset taken from r) so that the entry has `total`
 * bytes. Returns the offset of the entry's text in b->buf. */
static size_t batch_put(batch *b, const char *head, size_t hl, size_t total, uint64_t r)
{
    if (b->count++ > 0) {
        batch_reserve(b, 1);
        b->buf[b->len++] = ',';
    }
    size_t notes = total > hl + 2 ? total - hl - 2 : 0;
    size_t from = (size_t)((r >> 8) % (FILLER_LEN - notes));
    batch_reserve(b, hl + notes + 2);
    size_t off = b->len;
    memcpy(b->buf + b->len, head, hl);
    b->len += hl;
    memcpy(b->buf + b->len, g_filler + from, notes);
    b->len += notes;
    b->buf[b->len++] = '"';
    b->buf[b->len++] = '}';
    return off;
}

/* Appends the soups bench's entry `idx`, 1000 to 1047 bytes of
 * {"name","age","score","city","ext","rank","notes"}, and sets *e. Variant 1
 * is an edited version of the same entry (the same name, ext and rank, other
 * age, score, city and notes). */
static void bench_entry(batch *b, uint64_t idx, int variant, entry *e)
{
    uint64_t s = SEED ^ (idx * 0xD1B54A32D192ED03ULL) ^ ((uint64_t)variant << 60);
    uint64_t r1 = splitmix64(&s), r2 = splitmix64(&s), r3 = splitmix64(&s), r4 = splitmix64(&s);
    snprintf(e->name, sizeof e->name, "name-%llu", (unsigned long long)idx);
    snprintf(e->ext, sizeof e->ext, "ext-%llu", (unsigned long long)idx);
    e->age = 18 + (long long)(r1 % 80);
    e->score = (double)(r2 % 10000000) / 100.0;
    e->city = CITIES[r3 % 16];
    e->rank = (long long)idx;
    char head[256];
    int hl = snprintf(head, sizeof head,
                      "{\"name\":\"%s\",\"age\":%lld,\"score\":%.2f,\"city\":\"%s\",\"ext\":\"%s\",\"rank\":%lld,\"notes\":\"",
                      e->name, e->age, e->score, e->city, e->ext, e->rank);
    e->off = batch_put(b, head, (size_t)hl, 1000 + r4 % 48, r4); /* about 1 KB of JSON per entry */
    e->len = b->len - e->off;
}

/* ------------------------------------------------------------------------ */
/* The floor's side: SQLCipher by hand                                       */
/* ------------------------------------------------------------------------ */

enum floor_file {
    FLOOR_OWN_FILE,   /* the floor's own file: created when missing */
    FLOOR_TUREEN_FILE /* a file Tureen wrote: must exist and be readable with the floor's settings */
};

/* Opened as Tureen opens its stores: no mutex, raw key, the same cipher page
 * size, WAL, the same synchronous and cache_size. */
__attribute__((unused)) static sqlite3 *floor_open(const char *path, enum floor_file which)
{
    sqlite3 *db = NULL;
    char sql[128];
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (which == FLOOR_OWN_FILE ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(path, &db, flags, NULL);
    scheck(db, rc, SQLITE_OK, "sqlite3_open_v2");
    sexec(db, FLOOR_KEY_SQL);
    snprintf(sql, sizeof sql, "PRAGMA cipher_page_size = %ld", g_page);
    sexec(db, sql);
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt *s = NULL;
    rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &s, NULL);
    if (rc != SQLITE_OK && which == FLOOR_TUREEN_FILE)
        die("sqlcipher: the floor's key and cipher settings cannot read Tureen's file %s (%s): is Tureen's cipher_page_size "
            "still %ld? (BENCH_FLOOR_PAGE_SIZE)", path, sqlite3_errmsg(db), g_page);
    scheck(db, rc, SQLITE_OK, "prepare journal_mode");
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

__attribute__((unused)) static void floor_close(sqlite3 *db)
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

/* Appends a stored entry (its JSON text `soup`, sl bytes) to the JSON array
 * being built in *out (len bytes used of *cap), as Tureen returns it: with
 * its id and date spliced in. Returns the new length. */
__attribute__((unused)) static size_t splice_entry(char **out, size_t *cap, size_t len, const char *soup, size_t sl, long long id, long long lm)
{
    if (len + sl + 80 > *cap) {
        *cap = (len + sl + 80) * 2;
        *out = xrealloc(*out, *cap);
    }
    if (len > 1) (*out)[len++] = ',';
    memcpy(*out + len, soup, sl - 1);
    len += sl - 1;
    len += (size_t)sprintf(*out + len, ",\"_soupEntryId\":%lld,\"_soupLastModifiedDate\":%lld}", id, lm);
    return len;
}

/* ------------------------------------------------------------------------ */
/* Tureen's side                                                             */
/* ------------------------------------------------------------------------ */

__attribute__((unused)) static tureen_store *tureen_open(const char *path)
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
/* Children: each measurement runs in a forked child                         */
/* ------------------------------------------------------------------------ */

typedef struct result result; /* each program's: what a child sends back */
typedef struct warg warg;     /* each program's: what a child works on */
typedef void (*work_fn)(const warg *a, result *r);

/* Runs fn(a, r) in a forked child, r being `size` bytes (zeroed first), and
 * copies the child's r back. *peak_mb is the child's peak RSS (wait4). `who`
 * names the child in messages ("a child"). */
__attribute__((unused)) static void run_in_child(work_fn fn, const warg *a, result *r, size_t size, const char *who, double *peak_mb)
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
        memset(r, 0, size);
        fn(a, r);
        if (write(p[1], r, size) != (ssize_t)size) _exit(1);
        _exit(0);
    }
    g_child = pid;
    close(p[1]);
    memset(r, 0, size);
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(p[0], (char *)r + got, size - got);
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
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != size) {
        if (WIFSIGNALED(status)) die("%s died of signal %d", who, WTERMSIG(status));
        die("%s failed (exit status %d); its message is above", who, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    *peak_mb = (double)ru.ru_maxrss / 1024.0; /* ru_maxrss is in KiB on Linux */
}

/* ------------------------------------------------------------------------ */
/* Start of a run, report                                                    */
/* ------------------------------------------------------------------------ */

/* After the settings are read: checks that header and library agree, reads
 * the floor's SQLCipher version into `cipher`, and makes the temporary
 * directory $BENCH_TMP/<name>-XXXXXX, removed on SIGINT, SIGTERM, SIGHUP. */
static void bench_start(const char *name, char *cipher, size_t cap)
{
    const char *tmp = getenv("BENCH_TMP");
    if (!tmp || !*tmp) tmp = "/tmp";

    if (tureen_version_number() != TUREEN_VERSION_NUMBER)
        die("header version %d, library version %d", TUREEN_VERSION_NUMBER, tureen_version_number());

    /* The floor's SQLCipher: version and cipher, from an in-memory keyed db. */
    snprintf(cipher, cap, "?");
    {
        sqlite3 *db = NULL;
        scheck(db, sqlite3_open(":memory:", &db), SQLITE_OK, "sqlite3_open(:memory:)");
        sexec(db, FLOOR_KEY_SQL);
        sqlite3_stmt *s = floor_prepare(db, "PRAGMA cipher_version");
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
            snprintf(cipher, cap, "%s", (const char *)sqlite3_column_text(s, 0));
        else
            die("the linked SQLite has no PRAGMA cipher_version: it is not SQLCipher");
        sqlite3_finalize(s);
        sqlite3_close(db);
    }

    snprintf(g_dir, sizeof g_dir, "%s/%s-XXXXXX", tmp, name);
    if (!mkdtemp(g_dir)) {
        g_dir[0] = 0;
        die("mkdtemp in %s: %s", tmp, strerror(errno));
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);
}

/* The report's lines on Tureen's library and the floor's SQLCipher. */
static void print_versions(const char *cipher)
{
    Dl_info dl;
    struct stat lst;
    char built[64] = "?";
    union { const char *(*fn)(void); void *ptr; } addr;
    addr.fn = tureen_version;
    const char *libpath = dladdr(addr.ptr, &dl) && dl.dli_fname ? dl.dli_fname : "?";
    if (stat(libpath, &lst) == 0) strftime(built, sizeof built, "%Y-%m-%d %H:%M:%S UTC", gmtime(&lst.st_mtime));
    printf("  tureen_version       %s (%s, modified %s)\n", tureen_version(), libpath, built);
    printf("  floor                SQLite %s, SQLCipher %s (PRAGMA cipher_version), linked -lsqlcipher\n",
           sqlite3_libversion(), cipher);
}

/* One "Each repetition" line: `name` in `width` columns, then each side's
 * figures (the first MAX_SHOWN_REPS of `reps`) with `prec` decimals. */
/* The lines saying what ran that the soups and blobs benchmarks share: the
 * key and the floor's connection settings... */
static inline void print_floor_settings(void)
{
    printf("  key                  raw 256-bit key (no KDF) on both sides, WAL on both sides\n");
    printf("  floor settings       cipher_page_size %ld, synchronous %s, cache_size -%ld KiB (meant to equal Tureen's)\n",
           g_page, g_sync, g_cache_kib);
}

/* ... and how peak memory is measured (idle_mb: what an idle child peaks
 * at), and the machine. */
static inline void print_peak_and_machine(double idle_mb)
{
    printf("  peak MB              child ru_maxrss from wait4, one forked child per run; an idle child peaks at %.1f MB\n", idle_mb);
    printf("  machine              %ld online CPUs\n", sysconf(_SC_NPROCESSORS_ONLN));
}

static void print_reps(const char *name, int width, const char *names[2], const double *each[2], long reps, int prec)
{
    if (reps == 0) return;
    printf("  %-*s", width, name);
    for (int side = 0; side < 2; side++) {
        printf("%s%s:", side ? "; " : "", names[side]);
        for (long i = 0; i < reps && i < MAX_SHOWN_REPS; i++) printf(" %.*f", prec, each[side][i]);
    }
    printf("\n");
}

/* A text as a JSON string's contents, into out (cap bytes, NUL-terminated). */
static void bench_json_text(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 7 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c < 0x20) {
            n += (size_t)snprintf(out + n, cap - n, "\\u%04x", c);
        } else {
            out[n++] = (char)c;
        }
    }
    out[n] = '\0';
}

/* One row of a bar for run.sh's summary of every bar: a JSON line appended
 * to the file $BENCH_BARS names (nothing when it is unset). The cells are
 * those the program prints; met is the verdict. */
__attribute__((unused)) static void bench_bar(const char *program, const char *workload, const char *measured,
                                              const char *against, const char *ratio, const char *bar, int met)
{
    const char *path = getenv("BENCH_BARS");
    if (!path || !*path) return;
    /* run.sh names a second pass of one program this way (its pinned run),
     * so the summary tells its rows from the first pass's. */
    const char *pass = getenv("BENCH_BAR_PROGRAM");
    if (pass && *pass) program = pass;
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "bench: cannot append to %s: %s\n", path, strerror(errno));
        return;
    }
    const char *cells[6] = {program, workload, measured, against, ratio, bar};
    const char *keys[6] = {"program", "workload", "measured", "against", "ratio", "bar"};
    fputc('{', f);
    for (int i = 0; i < 6; i++) {
        char text[512];
        const char *c = cells[i];
        while (*c == ' ') c++; /* cells printed in columns may start padded */
        bench_json_text(text, sizeof text, c);
        fprintf(f, "\"%s\": \"%s\", ", keys[i], text);
    }
    fprintf(f, "\"verdict\": \"%s\"}\n", met ? "ok" : "NOT MET");
    fclose(f);
}

#endif /* BENCH_COMMON_H */
