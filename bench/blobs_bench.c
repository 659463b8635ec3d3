/*
 * blobs_bench.c - a large file into a store and back out: tureen_blob_import
 * and tureen_blob_export against the floor, the same bytes moved by hand
 * through SQLCipher's incremental blob I/O (sqlite3_blob_open, write, read)
 * with the same key, the same settings and the same 256 KiB chunks, in one
 * process.
 *
 * Every measurement runs in a forked child (bench_common.h), so its peak RSS
 * (from wait4) is that measurement's own: importing a file of hundreds of
 * MB must cost a few MB. See bench/README.md for what each row means.
 *
 * Usage: blobs_bench
 * Environment: BENCH_BLOB_MIB (256: the file's size), BENCH_REPS (3),
 *   BENCH_TMP (/tmp), BENCH_FLOOR_PAGE_SIZE (4096), BENCH_FLOOR_SYNC
 *   (NORMAL), BENCH_FLOOR_CACHE_KIB (8192): the floor's connection settings.
 * Exit status: 0 when everything ran (whether or not a bar was met), 1 on
 * any error.
 */
#define BENCH_PROG "blobs_bench"
#pragma GCC diagnostic ignored "-Wunused-function" /* bench_common.h serves the entry benches too */
#include "bench_common.h"

#define CHUNK (256 * 1024) /* Tureen's chunk (BlobTables.chunkSize): the floor uses the same */
#define FLOOR_TABLE "floor_chunks"
#define BAR 0.80 /* tureen's throughput / the floor's, at least */

static long g_mib = 256; /* the file's size */
static long g_reps = 3;
static const char *SIDE_NAME[2] = {"tureen", "floor"};

/* The files: the source, each side's store (the last import is kept for the
 * exports), and where exports go. */
static char g_src[4200], g_store[2][4200], g_out[4200];

/* ------------------------------------------------------------------------ */
/* Files                                                                     */
/* ------------------------------------------------------------------------ */

static size_t read_full(int fd, char *buf, size_t cap, const char *what)
{
    size_t got = 0;
    while (got < cap) {
        ssize_t n = read(fd, buf + got, cap - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("reading %s: %s", what, strerror(errno));
        if (n == 0) break;
        got += (size_t)n;
    }
    return got;
}

static void write_full(int fd, const char *buf, size_t len, const char *what)
{
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fd, buf + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) die("writing %s: %s", what, strerror(errno));
        done += (size_t)w;
    }
}

/* g_mib MiB of pseudo-random bytes (incompressible, the same every run). */
static void make_source(void)
{
    int fd = open(g_src, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) die("cannot create %s: %s", g_src, strerror(errno));
    uint64_t s = SEED;
    uint64_t *buf = xmalloc(1 << 20);
    for (long m = 0; m < g_mib; m++) {
        for (size_t i = 0; i < (1 << 20) / sizeof *buf; i++) buf[i] = splitmix64(&s);
        write_full(fd, (const char *)buf, 1 << 20, g_src);
    }
    free(buf);
    if (fsync(fd) != 0 || close(fd) != 0) die("writing %s: %s", g_src, strerror(errno));
}

/* Whether the file at `path` holds exactly the source's bytes. */
static int same_as_source(const char *path)
{
    int a = open(g_src, O_RDONLY | O_CLOEXEC), b = open(path, O_RDONLY | O_CLOEXEC);
    if (a < 0 || b < 0) die("cannot open %s or %s: %s", g_src, path, strerror(errno));
    char *x = xmalloc(1 << 20), *y = xmalloc(1 << 20);
    int same = 1;
    for (;;) {
        size_t n = read_full(a, x, 1 << 20, g_src), m = read_full(b, y, 1 << 20, path);
        if (n != m || memcmp(x, y, n) != 0) { same = 0; break; }
        if (n == 0) break;
    }
    free(x);
    free(y);
    close(a);
    close(b);
    return same;
}

static void remove_db(const char *path)
{
    static const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[4300];
    for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        if (unlink(p) != 0 && errno != ENOENT) die("cannot remove %s: %s", p, strerror(errno));
    }
}

/* ------------------------------------------------------------------------ */
/* Workloads: each runs in a child and returns numbers through a pipe        */
/* ------------------------------------------------------------------------ */

struct result {
    double secs;      /* timed seconds */
    double bytes;     /* bytes moved in them */
    char digest[80];  /* import: the blob's digest (tureen) */
};

struct warg {
    int side;
    const char *digest; /* export: the blob to export (tureen) */
};

/* The import: the file into a fresh store. Opening the store and creating the
 * floor's table are not timed; the checkpoints SQLite runs on commit are, on
 * both sides (Tureen commits every 2 MiB; the floor once, at the end). */
static void wl_import(const warg *a, result *r)
{
    const char *path = g_store[a->side];
    double t0, t;
    if (a->side == TUREEN) {
        int rc = tureen_store_remove(path);
        if (rc != TUREEN_OK && rc != TUREEN_E_NOT_FOUND) tcheck(rc, "tureen_store_remove");
        tureen_store *st = tureen_open(path);
        char *json = NULL;
        t0 = now_s();
        tcheck(tureen_blob_import(st, g_src, "application/octet-stream", &json), "tureen_blob_import");
        t = now_s() - t0;
        const char *d = strstr(json, "\"sha256-");
        if (!d || strlen(d + 1) < 71) die("tureen: no digest in %s", json);
        memcpy(r->digest, d + 1, 71);
        r->digest[71] = 0;
        tureen_free(json);
        tcheck(tureen_store_close(st), "tureen_store_close");
    } else {
        remove_db(path);
        sqlite3 *db = floor_open(path, FLOOR_OWN_FILE);
        sexec(db, "CREATE TABLE " FLOOR_TABLE " (id INTEGER PRIMARY KEY, data BLOB NOT NULL)");
        sqlite3_stmt *ins = floor_prepare(db, "INSERT INTO " FLOOR_TABLE " (id, data) VALUES (?, zeroblob(?))");
        char *buf = xmalloc(CHUNK);
        sqlite3_blob *b = NULL;
        t0 = now_s();
        int fd = open(g_src, O_RDONLY | O_CLOEXEC);
        if (fd < 0) die("cannot open %s: %s", g_src, strerror(errno));
        sexec(db, "BEGIN IMMEDIATE");
        for (sqlite3_int64 id = 1;; id++) {
            size_t n = read_full(fd, buf, CHUNK, g_src);
            if (n == 0) break;
            sqlite3_bind_int64(ins, 1, id);
            sqlite3_bind_int(ins, 2, (int)n);
            scheck(db, sqlite3_step(ins), SQLITE_DONE, "insert zeroblob");
            sqlite3_reset(ins);
            if (!b)
                scheck(db, sqlite3_blob_open(db, "main", FLOOR_TABLE, "data", id, 1, &b), SQLITE_OK, "sqlite3_blob_open");
            else
                scheck(db, sqlite3_blob_reopen(b, id), SQLITE_OK, "sqlite3_blob_reopen");
            scheck(db, sqlite3_blob_write(b, buf, (int)n, 0), SQLITE_OK, "sqlite3_blob_write");
            if (n < CHUNK) break;
        }
        if (b) sqlite3_blob_close(b);
        sexec(db, "COMMIT");
        close(fd);
        t = now_s() - t0;
        free(buf);
        sqlite3_finalize(ins);
        floor_close(db);
    }
    r->secs = t;
    r->bytes = (double)g_mib * 1048576.0;
}

/* The export: the blob from the kept store into a new file, flushed
 * (tureen_blob_export fsyncs before it renames; the floor fsyncs too). The
 * file is compared with the source afterwards, untimed. */
static void wl_export(const warg *a, result *r)
{
    const char *path = g_store[a->side];
    double t0, t;
    unlink(g_out);
    if (a->side == TUREEN) {
        tureen_store *st = tureen_open(path);
        t0 = now_s();
        tcheck(tureen_blob_export(st, a->digest, g_out), "tureen_blob_export");
        t = now_s() - t0;
        tcheck(tureen_store_close(st), "tureen_store_close");
    } else {
        sqlite3 *db = floor_open(path, FLOOR_OWN_FILE);
        char *buf = xmalloc(CHUNK);
        sqlite3_blob *b = NULL;
        t0 = now_s();
        int fd = open(g_out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) die("cannot create %s: %s", g_out, strerror(errno));
        sexec(db, "BEGIN");
        for (sqlite3_int64 id = 1;; id++) {
            int rc = b ? sqlite3_blob_reopen(b, id) : sqlite3_blob_open(db, "main", FLOOR_TABLE, "data", id, 0, &b);
            if (rc != SQLITE_OK) break; /* past the last chunk */
            int n = sqlite3_blob_bytes(b);
            if (n > CHUNK) die("floor: chunk %lld holds %d bytes", (long long)id, n);
            scheck(db, sqlite3_blob_read(b, buf, n, 0), SQLITE_OK, "sqlite3_blob_read");
            write_full(fd, buf, (size_t)n, g_out);
        }
        if (b) sqlite3_blob_close(b);
        sexec(db, "COMMIT");
        if (fsync(fd) != 0 || close(fd) != 0) die("writing %s: %s", g_out, strerror(errno));
        t = now_s() - t0;
        free(buf);
        floor_close(db);
    }
    if (!same_as_source(g_out)) die("%s: the exported file differs from the source", SIDE_NAME[a->side]);
    unlink(g_out);
    r->secs = t;
    r->bytes = (double)g_mib * 1048576.0;
}

static void wl_idle(const warg *a, result *r)
{
    (void)a;
    (void)r;
}

/* ------------------------------------------------------------------------ */
/* Measuring, reporting                                                      */
/* ------------------------------------------------------------------------ */

typedef struct {
    double each[2][MAX_SHOWN_REPS]; /* MB/s of each repetition */
    double rate[2];                 /* median MB/s */
    double peak[2];                 /* max peak RSS over the repetitions, MB */
    char digest[80];                /* tureen's import: the blob */
} summary;

/* Runs g_reps repetitions on both sides, alternating, so slow drift on the
 * machine hits both. */
static summary measure(const char *label, work_fn fn, const char *digest)
{
    summary s;
    memset(&s, 0, sizeof s);
    double rate[2][64];
    long reps = g_reps < 64 ? g_reps : 64;
    for (long rep = 0; rep < reps; rep++) {
        for (int side = 0; side < 2; side++) {
            warg a = {side, digest};
            result r;
            double peak = 0, t0 = now_s();
            char who[48];
            snprintf(who, sizeof who, "a %s child (%s)", SIDE_NAME[side], label);
            run_in_child(fn, &a, &r, sizeof r, who, &peak);
            rate[side][rep] = r.secs > 0 ? r.bytes / 1e6 / r.secs : 0;
            if (rep < MAX_SHOWN_REPS) s.each[side][rep] = rate[side][rep];
            if (peak > s.peak[side]) s.peak[side] = peak;
            if (side == TUREEN && r.digest[0]) memcpy(s.digest, r.digest, sizeof s.digest);
            fprintf(stderr, "  %-8s rep %ld/%ld %-6s %8.1f MB/s  %7.3f s  peak %6.1f MB  (child %.1f s)\n", label, rep + 1,
                    reps, SIDE_NAME[side], rate[side][rep], r.secs, peak, now_s() - t0);
        }
    }
    for (int side = 0; side < 2; side++) s.rate[side] = median(rate[side], reps);
    return s;
}

static void row(const char *workload, const summary *s)
{
    char tv[32], fv[32], bar[40], peak[40];
    double ratio = s->rate[FLOOR] > 0 ? s->rate[TUREEN] / s->rate[FLOOR] : 0;
    snprintf(tv, sizeof tv, "%.1f MB/s", s->rate[TUREEN]);
    snprintf(fv, sizeof fv, "%.1f MB/s", s->rate[FLOOR]);
    snprintf(bar, sizeof bar, "ratio >= %.2f %s", BAR, ratio >= BAR ? "ok" : "BELOW BAR");
    snprintf(peak, sizeof peak, "%.1f / %.1f", s->peak[TUREEN], s->peak[FLOOR]);
    printf("%-28s | %-14s | %-14s | %5.2f | %-24s | %s\n", workload, tv, fv, ratio, bar, peak);
    char ratio_s[32], bar_s[40];
    snprintf(ratio_s, sizeof ratio_s, "%.2f", ratio);
    snprintf(bar_s, sizeof bar_s, "ratio >= %.2f", BAR);
    bench_bar("blobs", workload, tv, fv, ratio_s, bar_s, ratio >= BAR);
}

int main(void)
{
    g_mib = env_long("BENCH_BLOB_MIB", 256, 1);
    g_reps = env_long("BENCH_REPS", 3, 1);
    floor_settings_from_env();

    char cipher[64];
    bench_start("tureen-blobs-bench", cipher, sizeof cipher);
    path_in_dir(g_src, sizeof g_src, "source.bin");
    path_in_dir(g_store[TUREEN], sizeof g_store[TUREEN], "blobs.tureen");
    path_in_dir(g_store[FLOOR], sizeof g_store[FLOOR], "blobs-floor.db");
    path_in_dir(g_out, sizeof g_out, "exported.bin");

    fprintf(stderr, "writing the %ld MiB source file\n", g_mib);
    make_source();
    double base = 0;
    warg idle = {TUREEN, NULL};
    result ir;
    run_in_child(wl_idle, &idle, &ir, sizeof ir, "an idle child", &base);

    printf("Tureen blobs benchmark: tureen_blob_import / tureen_blob_export against the floor (SQLCipher incremental blob I/O by hand)\n");
    print_versions(cipher);
    printf("  file                 %ld MiB of pseudo-random bytes (fixed seed), in the page cache (written just before)\n", g_mib);
    printf("  tureen               tureen_blob_import (reads the file 1 MiB at a time, SHA-256, 256 KiB chunks, a commit every\n");
    printf("                       8 MiB); tureen_blob_export (reads the chunks in order, hashes them on a second thread,\n");
    printf("                       writes a file beside the target, checks the SHA-256, fsync, rename)\n");
    printf("  floor                one table (id INTEGER PRIMARY KEY, data BLOB); import: in one transaction, per 256 KiB read\n");
    printf("                       from the file, INSERT zeroblob(n) then sqlite3_blob_write; export: in one read transaction,\n");
    printf("                       sqlite3_blob_read of each chunk, write to the file, fsync; no hashing\n");
    print_floor_settings();
    printf("  timed                the import or export call only (opening and closing the store are not); checkpoints run\n");
    printf("                       on commit are timed on both sides; the exported file is compared with the source, untimed\n");
    printf("  repetitions          %ld per workload and side, sides alternating, median reported; peak MB is the max\n", g_reps);
    printf("  files                %s (removed afterwards)\n", g_dir);
    print_peak_and_machine(base);
    printf("\n");
    fflush(stdout);

    double t_all = now_s();
    fprintf(stderr, "import\n");
    summary si = measure("import", wl_import, NULL);
    if (!si.digest[0]) die("the import returned no digest");
    double sizes[2] = {file_mb(g_store[TUREEN]), file_mb(g_store[FLOOR])};
    fprintf(stderr, "export\n");
    summary se = measure("export", wl_export, si.digest);

    char label[64];
    printf("%-28s | %-14s | %-14s | %5s | %-24s | %s\n", "workload", "tureen", "floor", "ratio", "bar", "peak MB (tureen / floor)");
    printf("%.28s-+-%.14s-+-%.14s-+-%.5s-+-%.24s-+-%.24s\n", "--------------------------------", "----------------",
           "----------------", "-----", "--------------------------------", "--------------------------------");
    snprintf(label, sizeof label, "import %ld MiB file", g_mib);
    row(label, &si);
    snprintf(label, sizeof label, "export %ld MiB file", g_mib);
    row(label, &se);
    printf("\n");
    printf("MB/s = 10^6 bytes per second of the timed call (median of the repetitions); ratio = tureen / floor (higher is\n");
    printf("better for tureen).\n");
    printf("Each repetition, MB/s:\n");
    const double *ei[2] = {si.each[TUREEN], si.each[FLOOR]}, *ee[2] = {se.each[TUREEN], se.each[FLOOR]};
    print_reps("import", 8, SIDE_NAME, ei, g_reps, 1);
    print_reps("export", 8, SIDE_NAME, ee, g_reps, 1);
    printf("Stores after the import: tureen %.1f MB, floor %.1f MB. Blob %s. Total run %.1f s.\n", sizes[TUREEN],
           sizes[FLOOR], si.digest, now_s() - t_all);
    fflush(stdout);
    remove_dir();
    return 0;
}
