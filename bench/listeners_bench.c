/* Live queries under load (issue 11), side by side in one run:
 *
 *  1) latency from a commit (tureen_upsert returned) to a live query's
 *     callback, with 100 live queries over a 100,000-entry soup and each
 *     write touching 5 of their pages: p50 and p95 (bar: p95 <= 10 ms);
 *  2) cost to writers: batch upsert throughput with those 100 live queries
 *     registered against none, alternating (bar: with/none >= 0.85);
 *  3) a burst of 10,000 single-entry writes: how many times each live query
 *     was delivered (re-runs coalesce: a handful, not 10,000).
 *
 * Settings: BENCH_LIVE_ENTRIES (100000), BENCH_LIVE_WRITES (200),
 * BENCH_LIVE_BURST (10000). Run by bench/run.sh (make bench). */
#define BENCH_PROG "listeners_bench"
/* bench_common.h also holds the floor's helpers, which this program (no floor) does not use. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "bench_common.h"
#include <pthread.h>

#define QUERIES 100
#define GROUPS 1000
#define TOUCHED 5
#define SOUP_SPECS "[{\"path\":\"g\",\"type\":\"integer\"},{\"path\":\"n\",\"type\":\"integer\"}]"

/* What each live query received, written by the library's thread. */
typedef struct {
    pthread_mutex_t lock;
    long deliveries;
    double last_at; /* now_s() of the last delivery */
} watch;

static watch g_watch[QUERIES];

static void on_page(void *ctx, const char *page)
{
    (void)page;
    watch *w = ctx;
    double t = now_s();
    pthread_mutex_lock(&w->lock);
    w->deliveries++;
    w->last_at = t;
    pthread_mutex_unlock(&w->lock);
}

static long deliveries(int q)
{
    pthread_mutex_lock(&g_watch[q].lock);
    long n = g_watch[q].deliveries;
    pthread_mutex_unlock(&g_watch[q].lock);
    return n;
}

/* Waits (at most 10 s) until live query q has more than `seen` deliveries;
 * returns the time of the last one, or -1. */
static double wait_delivery(int q, long seen)
{
    double deadline = now_s() + 10;
    while (now_s() < deadline) {
        pthread_mutex_lock(&g_watch[q].lock);
        long n = g_watch[q].deliveries;
        double at = g_watch[q].last_at;
        pthread_mutex_unlock(&g_watch[q].lock);
        if (n > seen) return at;
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
    return -1;
}

/* Waits until no live query has been delivered for `quiet` seconds. */
static void wait_quiet(double quiet)
{
    long before = -1, now = 0;
    while (before != now) {
        before = now;
        struct timespec ts = {0, (long)(quiet * 1e9)};
        nanosleep(&ts, NULL);
        now = 0;
        for (int q = 0; q < QUERIES; q++) now += deliveries(q);
    }
}

static tureen_listener *g_live[QUERIES];

static void register_live(tureen_store *st)
{
    for (int q = 0; q < QUERIES; q++) {
        char spec[256];
        snprintf(spec, sizeof spec,
                 "{\"queryType\":\"exact\",\"soupName\":\"items\",\"indexPath\":\"g\",\"matchKey\":%d,"
                 "\"orderPath\":\"n\",\"pageSize\":10}", q);
        long seen = deliveries(q);
        tcheck(tureen_live_query(st, spec, on_page, &g_watch[q], NULL, &g_live[q]), "tureen_live_query");
        if (wait_delivery(q, seen) < 0) die("live query %d delivered no first page", q);
    }
}

static void remove_live(void)
{
    for (int q = 0; q < QUERIES; q++) tcheck(tureen_listener_remove(g_live[q]), "tureen_listener_remove");
}

/* Upserts `count` entries in batches of `per`, groups spread over all
 * GROUPS (a tenth of them watched); returns entries per second. */
static double batch_upserts(tureen_store *st, long count, long per, uint64_t *seed, long *next_n)
{
    size_t cap = (size_t)per * 64 + 16;
    char *json = xmalloc(cap);
    double t0 = now_s();
    for (long done = 0; done < count; done += per) {
        size_t len = 0;
        json[len++] = '[';
        for (long i = 0; i < per; i++) {
            long g = (long)(splitmix64(seed) % GROUPS);
            len += (size_t)snprintf(json + len, cap - len, "%s{\"g\":%ld,\"n\":%ld}", i ? "," : "", g, (*next_n)++);
        }
        json[len++] = ']';
        json[len] = 0;
        tcheck(tureen_upsert(st, "items", json, NULL, NULL), "tureen_upsert (batch)");
    }
    double dt = now_s() - t0;
    free(json);
    return (double)count / dt;
}

static double percentile(double *v, long n, double p)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    long i = (long)(p * (double)(n - 1) + 0.5);
    return v[i];
}

int main(void)
{
    char cipher[64];
    long entries = env_long("BENCH_LIVE_ENTRIES", 100000, 1000);
    long writes = env_long("BENCH_LIVE_WRITES", 200, 10);
    long burst = env_long("BENCH_LIVE_BURST", 10000, 100);
    bench_start("listeners", cipher, sizeof cipher);
    for (int q = 0; q < QUERIES; q++) pthread_mutex_init(&g_watch[q].lock, NULL);

    char path[4200];
    path_in_dir(path, sizeof path, "live.tureen");
    tureen_store *st = tureen_open(path);
    tcheck(tureen_soup_register(st, "items", SOUP_SPECS), "register");
    uint64_t seed = SEED;
    long next_n = 1000000;
    fprintf(stderr, "listeners_bench: loading %ld entries\n", entries);
    batch_upserts(st, entries, 1000, &seed, &next_n);

    /* 2) cost to writers, alternating none / with, 3 rounds each. */
    fprintf(stderr, "listeners_bench: writer cost\n");
    enum { ROUNDS = 3 };
    double none[ROUNDS], with[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        none[r] = batch_upserts(st, 20000, 200, &seed, &next_n);
        register_live(st);
        with[r] = batch_upserts(st, 20000, 200, &seed, &next_n);
        wait_quiet(0.05);
        remove_live();
    }

    /* 1) latency: each write adds 5 entries that open 5 watched pages. */
    fprintf(stderr, "listeners_bench: latency over %ld writes\n", writes);
    register_live(st);
    wait_quiet(0.05);
    double *lat = xmalloc(sizeof(double) * (size_t)(writes * TOUCHED));
    long nlat = 0, late = 0;
    long first_n = -1;
    for (long w = 0; w < writes; w++) {
        char json[512];
        size_t len = 0;
        int qs[TOUCHED];
        long seen[TOUCHED];
        json[len++] = '[';
        for (int k = 0; k < TOUCHED; k++) {
            qs[k] = (int)((w * TOUCHED + k) % QUERIES);
            seen[k] = deliveries(qs[k]);
            /* A smaller n than any before: first on its page, so the page changes. */
            len += (size_t)snprintf(json + len, sizeof json - len, "%s{\"g\":%d,\"n\":%ld}", k ? "," : "", qs[k], first_n--);
        }
        json[len++] = ']';
        json[len] = 0;
        tcheck(tureen_upsert(st, "items", json, NULL, NULL), "tureen_upsert (latency)");
        double committed = now_s();
        for (int k = 0; k < TOUCHED; k++) {
            double at = wait_delivery(qs[k], seen[k]);
            if (at < 0) { late++; continue; }
            lat[nlat++] = (at - committed) * 1000.0;
        }
    }
    double p50 = nlat ? percentile(lat, nlat, 0.50) : -1, p95 = nlat ? percentile(lat, nlat, 0.95) : -1;

    /* 3) a burst of single-entry writes to watched groups. */
    fprintf(stderr, "listeners_bench: burst of %ld writes\n", burst);
    wait_quiet(0.05);
    long before[QUERIES];
    for (int q = 0; q < QUERIES; q++) before[q] = deliveries(q);
    double b0 = now_s();
    for (long i = 0; i < burst; i++) {
        char json[96];
        snprintf(json, sizeof json, "{\"g\":%ld,\"n\":%ld}", i % QUERIES, first_n--);
        tcheck(tureen_upsert(st, "items", json, NULL, NULL), "tureen_upsert (burst)");
    }
    double burst_s = now_s() - b0;
    wait_quiet(0.2);
    long total = 0, most = 0;
    for (int q = 0; q < QUERIES; q++) {
        long d = deliveries(q) - before[q];
        total += d;
        if (d > most) most = d;
    }
    remove_live();
    tcheck(tureen_store_close(st), "close");

    double mn = median(none, ROUNDS), mw = median(with, ROUNDS);
    printf("listeners_bench: live queries over one soup (%ld entries, %d live queries)\n", entries, QUERIES);
    print_versions(cipher);
    printf("  machine              %ld CPU(s) online\n", sysconf(_SC_NPROCESSORS_ONLN));
    printf("\n%-44s | %-26s | %-26s | %-12s | %s\n", "workload", "measured", "against", "ratio", "bar");
    printf("---------------------------------------------+----------------------------+----------------------------+--------------+------------------------\n");
    char measured[64], against[64], ratio[32];
    printf("%-44s | %-26s | %-26s | %-12s | %s\n", "1) commit -> live query callback", "", "", "", "");
    snprintf(measured, sizeof measured, "p50 %6.2f ms", p50);
    printf("   %-41s | %-26s | %-26s | %-12s | -\n", "5 pages changed per write", measured, "-", "-");
    snprintf(measured, sizeof measured, "p95 %6.2f ms", p95);
    printf("   %-41s | %-26s | %-26s | %-12s | p95 <= 10 ms %s\n", "(over all deliveries)", measured, "-", "-",
           p95 <= 10 ? "ok" : "NOT MET");
    bench_bar("listeners", "1) commit -> live query callback, 5 pages changed per write", measured, "-", "-",
              "p95 <= 10 ms", p95 <= 10);
    snprintf(measured, sizeof measured, "%8.0f entries/s", mw);
    snprintf(against, sizeof against, "none %8.0f entries/s", mn);
    snprintf(ratio, sizeof ratio, "%5.2f w/n", mw / mn);
    printf("%-44s | %-26s | %-26s | %-12s | w/n >= 0.85 %s\n", "2) batch upsert, 100 live queries",
           measured, against, ratio, mw / mn >= 0.85 ? "ok" : "NOT MET");
    bench_bar("listeners", "2) batch upsert, 100 live queries", measured, against, ratio, "w/n >= 0.85", mw / mn >= 0.85);
    snprintf(measured, sizeof measured, "%ld deliveries in all", total);
    snprintf(against, sizeof against, "%ld writes in %.2f s", burst, burst_s);
    snprintf(ratio, sizeof ratio, "max %ld/query", most);
    printf("%-44s | %-26s | %-26s | %-12s | - (report)\n", "3) burst of single writes", measured, against, ratio);
    printf("\nEach round (entries/s): none");
    for (int r = 0; r < ROUNDS; r++) printf(" %.0f", none[r]);
    printf("; with");
    for (int r = 0; r < ROUNDS; r++) printf(" %.0f", with[r]);
    printf("\nLatency: %ld deliveries measured, %ld not seen within 10 s. Latency is taken from the moment\n"
           "tureen_upsert returned (the commit is done) to the moment the callback ran.\n", nlat, late);
    printf("Burst: %.1f deliveries per live query on average for %ld writes to their pages.\n",
           (double)total / QUERIES, burst);
    free(lat);
    remove_dir();
    return late > 0;
}
