/*
 * open_bench.c - the time to open a store: tureen_store_open against the same
 * file opened by hand on the SQLCipher API (the floor), with a passphrase
 * (PBKDF2-HMAC-SHA1, 256,000 rounds, the key derivation of both sides) and
 * with a raw 256-bit key (no derivation). Issue 50 item 6.
 *
 * Both sides open the file Tureen wrote (a soup of BENCH_OPEN_N entries with
 * the soups bench's 5 indexes), so they read the same pages:
 *   - tureen: tureen_store_open(path, {"key": pass} or {"raw_key": hex}):
 *     derive the key (passphrase), open the writer connection, set it up,
 *     read the catalog; timed until it returns. Then, timed apart and shown
 *     without a bar, the first read (tureen_count), which opens the reader
 *     connection with the key already derived;
 *   - floor: sqlite3_open_v2, PRAGMA key (the passphrase with PRAGMA
 *     kdf_iter = 256000, or x'<hex>'), cipher_page_size, journal_mode WAL
 *     (a first read: SQLCipher derives the key and checks it here),
 *     synchronous, cache_size, and a SELECT count(*) of the schema;
 *     timed until that answers.
 * Closing is not timed. The sides alternate, in one process, BENCH_OPEN_REPS
 * times each; medians reported. Bar: tureen / floor <= 1.10 with the
 * passphrase; with a raw key the ratio and the difference are shown.
 *
 * Settings: BENCH_OPEN_N (1000), BENCH_OPEN_REPS (9), BENCH_TMP (/tmp),
 * BENCH_FLOOR_* as in soups_bench.
 * Exit status: 1 on an error, else 0 (a bar not met is reported, not an error).
 */
#define BENCH_PROG "open_bench"
#include "bench_common.h"

#define PASSPHRASE "open bench passphrase"
#define KDF_ITER 256000 /* Tureen's default (StoreOptions.defaultKdfIter) */

static const char *SPECS =
    "[{\"path\":\"name\",\"type\":\"string\"},{\"path\":\"age\",\"type\":\"integer\"},"
    "{\"path\":\"score\",\"type\":\"floating\"},{\"path\":\"city\",\"type\":\"string\"},"
    "{\"path\":\"ext\",\"type\":\"string\"}]";
static const char *PASS_OPTS = "{\"key\": \"" PASSPHRASE "\"}";

struct result { double secs; };
struct warg { int unused; };

enum key_kind { PASS = 0, RAW = 1 };
static const char *KEY_NAME[2] = {"passphrase (PBKDF2, 256000 rounds)", "raw key"};

static const char *opts_of(enum key_kind k) { return k == PASS ? PASS_OPTS : TUREEN_OPTS; }

/* A store of n entries in the soups bench's soup, written by Tureen. */
static void make_store(const char *path, enum key_kind k, long n)
{
    tureen_store *st = NULL;
    tcheck(tureen_store_open(path, opts_of(k), &st), "tureen_store_open");
    tcheck(tureen_soup_register(st, "bench", SPECS), "tureen_soup_register");
    batch b;
    memset(&b, 0, sizeof b);
    batch_start(&b);
    for (long i = 0; i < n; i++) {
        entry e;
        bench_entry(&b, (uint64_t)i, 0, &e);
    }
    batch_end(&b);
    tcheck(tureen_upsert(st, "bench", b.buf, NULL, NULL), "tureen_upsert");
    batch_free(&b);
    tcheck(tureen_store_close(st), "tureen_store_close");
}

/* Tureen's open (timed) and then its first read (timed apart). */
static void tureen_side(const char *path, enum key_kind k, double *open_s, double *read_s)
{
    tureen_store *st = NULL;
    double t0 = now_s();
    tcheck(tureen_store_open(path, opts_of(k), &st), "tureen_store_open");
    double t1 = now_s();
    int64_t n = tureen_count_q(st, "{\"queryType\":\"all\",\"soupName\":\"bench\",\"pageSize\":10}");
    double t2 = now_s();
    if (n < 1) die("the store %s holds no entry", path);
    tcheck(tureen_store_close(st), "tureen_store_close");
    *open_s = t1 - t0;
    *read_s = t2 - t1;
}

/* The floor: the same file opened by hand, keyed as SQLCipher knows it. */
static double floor_side(const char *path, enum key_kind k)
{
    char sql[160];
    sqlite3 *db = NULL;
    double t0 = now_s();
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    scheck(db, rc, SQLITE_OK, "sqlite3_open_v2");
    if (k == PASS) {
        sexec(db, "PRAGMA key = '" PASSPHRASE "'");
        snprintf(sql, sizeof sql, "PRAGMA kdf_iter = %d", KDF_ITER);
        sexec(db, sql);
    } else {
        sexec(db, FLOOR_KEY_SQL);
    }
    snprintf(sql, sizeof sql, "PRAGMA cipher_page_size = %ld", g_page);
    sexec(db, sql);
    sqlite3_stmt *s = floor_prepare(db, "PRAGMA journal_mode = WAL");
    scheck(db, sqlite3_step(s), SQLITE_ROW, "PRAGMA journal_mode = WAL");
    sqlite3_finalize(s);
    snprintf(sql, sizeof sql, "PRAGMA synchronous = %s", g_sync);
    sexec(db, sql);
    snprintf(sql, sizeof sql, "PRAGMA cache_size = -%ld", g_cache_kib);
    sexec(db, sql);
    s = floor_prepare(db, "SELECT count(*) FROM sqlite_master");
    scheck(db, sqlite3_step(s), SQLITE_ROW, "SELECT count(*) FROM sqlite_master");
    if (sqlite3_column_int64(s, 0) < 1) die("the floor read no schema from %s", path);
    sqlite3_finalize(s);
    double secs = now_s() - t0;
    scheck(NULL, sqlite3_close(db), SQLITE_OK, "sqlite3_close");
    return secs;
}

int main(void)
{
    long n = env_long("BENCH_OPEN_N", 1000, 1);
    long reps = env_long("BENCH_OPEN_REPS", 9, 1);
    floor_settings_from_env();
    init_filler();
    char cipher[64];
    bench_start("tureen-open-bench", cipher, sizeof cipher);
    char path[2][4200];
    path_in_dir(path[PASS], sizeof path[PASS], "pass.tureen");
    path_in_dir(path[RAW], sizeof path[RAW], "raw.tureen");

    double *t_open[2], *t_read[2], *f_open[2];
    for (int k = 0; k < 2; k++) {
        make_store(path[k], (enum key_kind)k, n);
        t_open[k] = xmalloc((size_t)reps * sizeof(double));
        t_read[k] = xmalloc((size_t)reps * sizeof(double));
        f_open[k] = xmalloc((size_t)reps * sizeof(double));
    }
    /* One untimed open of each kind by each side: the files in the OS cache. */
    for (int k = 0; k < 2; k++) {
        double a, b;
        tureen_side(path[k], (enum key_kind)k, &a, &b);
        floor_side(path[k], (enum key_kind)k);
    }
    for (long r = 0; r < reps; r++)
        for (int k = 0; k < 2; k++) {
            /* Which side goes first alternates. */
            if (r % 2 == 0) {
                tureen_side(path[k], (enum key_kind)k, &t_open[k][r], &t_read[k][r]);
                f_open[k][r] = floor_side(path[k], (enum key_kind)k);
            } else {
                f_open[k][r] = floor_side(path[k], (enum key_kind)k);
                tureen_side(path[k], (enum key_kind)k, &t_open[k][r], &t_read[k][r]);
            }
            fprintf(stderr, "  open, %s, rep %ld/%ld: tureen %.2f ms (+ first read %.2f ms), floor %.2f ms\n", KEY_NAME[k],
                    r + 1, reps, 1e3 * t_open[k][r], 1e3 * t_read[k][r], 1e3 * f_open[k][r]);
        }

    printf("Tureen open benchmark: tureen_store_open against the same file opened by hand on the SQLCipher API\n");
    print_versions(cipher);
    printf("  store                %ld entries of ~1 KB in soup \"bench\" (5 indexes), written by Tureen; both sides open it\n", n);
    printf("  tureen               tureen_store_open with {\"key\": ...} (Tureen derives the key itself, once per open) or\n"
           "                       {\"raw_key\": ...}; timed until it returns; its first read (tureen_count, which opens the\n"
           "                       reader connection) is timed apart\n");
    printf("  floor                sqlite3_open_v2, PRAGMA key ('passphrase' with kdf_iter %d, or x'<hex>'), cipher_page_size\n"
           "                       %ld, journal_mode WAL (SQLCipher derives the key here), synchronous %s, cache_size -%ld KiB,\n"
           "                       SELECT count(*) FROM sqlite_master; timed until it answers\n",
           KDF_ITER, g_page, g_sync, g_cache_kib);
    printf("  repetitions          %ld per side and key, alternating in one process (which side goes first alternates),\n"
           "                       after one untimed open each; medians; closing is not timed\n", reps);
    printf("  machine              %ld online CPUs\n\n", sysconf(_SC_NPROCESSORS_ONLN));
    printf("%-48s | %-26s | %-12s | %-8s | %s\n", "workload", "tureen (first read)", "floor", "ratio", "bar");
    printf("%.48s-+-%.26s-+-%.12s-+-%.8s-+-%.22s\n", "------------------------------------------------------",
           "------------------------------------------------------", "------------------------------------------------------",
           "------------------------------------------------------", "------------------------------------------------------");
    double each_t[2][MAX_SHOWN_REPS], each_f[2][MAX_SHOWN_REPS];
    for (int k = 0; k < 2; k++) {
        for (long i = 0; i < reps && i < MAX_SHOWN_REPS; i++) {
            each_t[k][i] = 1e3 * t_open[k][i];
            each_f[k][i] = 1e3 * f_open[k][i];
        }
        double mt = median(t_open[k], reps), mr = median(t_read[k], reps), mf = median(f_open[k], reps);
        double ratio = mf > 0 ? mt / mf : 0;
        char label[96], tv[64], fv[64], rs[32];
        snprintf(label, sizeof label, "open a store, %s", KEY_NAME[k]);
        snprintf(tv, sizeof tv, "%.2f ms (+ %.2f ms)", 1e3 * mt, 1e3 * mr);
        snprintf(fv, sizeof fv, "%.2f ms", 1e3 * mf);
        snprintf(rs, sizeof rs, "%.2f t/f", ratio);
        /* With a raw key the floor does less than a store's open (no
         * catalog, no checks of the file, no checkpoint thread): a ratio
         * there says what those cost, not what could be shaved off. */
        if (k == PASS) {
            printf("%-48s | %-26s | %-12s | %-8s | t/f <= 1.10 %s\n", label, tv, fv, rs, ratio <= 1.10 ? "ok" : "BELOW BAR");
            bench_bar("open", label, tv, fv, rs, "t/f <= 1.10", ratio <= 1.10);
        } else {
            printf("%-48s | %-26s | %-12s | %-8s | - (+%.2f ms)\n", label, tv, fv, rs, 1e3 * (mt - mf));
        }
    }
    printf("\nTimes are medians; t/f = tureen's open / the floor's (lower is better for tureen). In brackets, Tureen's first\n"
           "read after the open, which opens its reader connection (no bar: the floor opens one connection).\n");
    printf("Each repetition, ms (in order):\n");
    const char *names[2] = {"tureen", "floor"};
    for (int k = 0; k < 2; k++) {
        const double *e[2] = {each_t[k], each_f[k]};
        print_reps(k == PASS ? "passphrase" : "raw key", 12, names, e, reps, 2);
    }
    for (int k = 0; k < 2; k++) {
        free(t_open[k]);
        free(t_read[k]);
        free(f_open[k]);
    }
    remove_dir();
    return 0;
}
