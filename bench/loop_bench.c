/* The sync loop (issue 12), side by side in one run against one Kinto:
 *
 *  1) propagation: a change made on device A (loop with auto sync, an
 *     hour's frequency, so only the change itself starts the sync up)
 *     appears on device B (loop polling every 200 ms), seen by B's
 *     record_delta_received event; p50 and p95 over BENCH_LOOP_CHANGES
 *     changes, one at a time (bar: p95 <= 1 s). Against it: the same change
 *     carried by direct calls (A's tureen_sync_up, then B's tureen_resync)
 *     with no loop and no waiting, the floor a loop cannot beat;
 *  2) what a cycle with nothing new costs the server: the requests an
 *     idle sync down and an idle sync up send (from their states), and the
 *     bytes of that sync down's one request and answer, fetched again with
 *     libcurl on the same URL.
 *
 * Settings: BENCH_LOOP_CHANGES (200). Needs BENCH_SYNC_URL (bench/run.sh
 * starts Kinto). Run by bench/run.sh (make bench). */
#define BENCH_PROG "loop_bench"
/* bench_common.h also holds the floor's helpers, which this program does not use. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "bench_common.h"
#include <curl/curl.h>
#include <pthread.h>

#define SPECS "[{\"path\":\"id\",\"type\":\"string\"}]"

/* Arrivals on B: record id -> when record_delta_received came. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_awaited[64];
static double g_arrived = -1;

static void on_event(void *ctx, const char *json)
{
    (void)ctx;
    double t = now_s();
    char pat[96];
    pthread_mutex_lock(&g_lock);
    snprintf(pat, sizeof pat, "\"recordId\":\"%s\"", g_awaited);
    if (g_awaited[0] && strstr(json, pat) && g_arrived < 0) g_arrived = t;
    pthread_mutex_unlock(&g_lock);
}

static void await(const char *id)
{
    pthread_mutex_lock(&g_lock);
    snprintf(g_awaited, sizeof g_awaited, "%s", id);
    g_arrived = -1;
    pthread_mutex_unlock(&g_lock);
}

/* Waits (at most 10 s) for the awaited record; its arrival time, or -1. */
static double arrival(void)
{
    double deadline = now_s() + 10;
    while (now_s() < deadline) {
        pthread_mutex_lock(&g_lock);
        double t = g_arrived;
        pthread_mutex_unlock(&g_lock);
        if (t >= 0) return t;
        usleep(500);
    }
    return -1;
}

/* Writes change <prefix><i> on A, B awaiting it; returns when the write began. */
static double write_change(tureen_store *a, const char *prefix, long i)
{
    char id[64], entry[128];
    snprintf(id, sizeof id, "%s%ld", prefix, i);
    snprintf(entry, sizeof entry, "{\"id\":\"%s\",\"n\":%ld}", id, i);
    await(id);
    double t0 = now_s();
    tcheck(tureen_local_upsert(a, "items", entry, NULL, NULL), "local_upsert");
    return t0;
}

static long state_int(tureen_store *st, const char *sync, const char *key)
{
    char *state = NULL, pat[64];
    tcheck(tureen_sync_status(st, sync, &state), "tureen_sync_status");
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(state, pat);
    long v = p ? strtol(p + strlen(pat), NULL, 10) : -1;
    tureen_free(state);
    return v;
}

static size_t sink(char *p, size_t s, size_t n, void *u) { (void)p; (void)u; return s * n; }

static double pct(double *v, long n, double q)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    long i = (long)(q * (double)(n - 1) + 0.5);
    return v[i];
}

int main(void)
{
    char cipher[64], target[2048], pa[4200], pb[4200];
    long changes = env_long("BENCH_LOOP_CHANGES", 200, 10);
    const char *url = getenv("BENCH_SYNC_URL");
    if (!url || !*url) die("BENCH_SYNC_URL must name a Kinto server; bench/run.sh starts one");
    bench_start("loop", cipher, sizeof cipher);
    snprintf(target, sizeof target,
             "{\"type\":\"kinto\",\"url\":\"%s\",\"bucket\":\"loopbench\",\"collection\":\"c%ld\","
             "\"auth\":{\"user\":\"bench\",\"password\":\"pw\"},\"create\":true}", url, (long)getpid());
    path_in_dir(pa, sizeof pa, "a.tureen");
    path_in_dir(pb, sizeof pb, "b.tureen");
    tureen_store *a = tureen_open(pa), *b = tureen_open(pb);
    tcheck(tureen_soup_register(a, "items", SPECS), "register a");
    tcheck(tureen_soup_register(b, "items", SPECS), "register b");
    tcheck(tureen_sync_up(a, target, "items", "{\"name\":\"up\"}", NULL, NULL, NULL), "define a's sync up");
    tcheck(tureen_sync_down(b, target, "items", "{\"name\":\"down\"}", NULL, NULL, NULL), "define b's sync down");
    tureen_listener *l = NULL;
    tcheck(tureen_sync_listen(b, "{\"codes\":[\"record_delta_received\"]}", on_event, NULL, NULL, &l), "listen on b");

    double *direct = xmalloc(sizeof(double) * (size_t)changes);
    double *looped = xmalloc(sizeof(double) * (size_t)changes);

    /* The floor: direct calls, no waiting. */
    fprintf(stderr, "loop_bench: %ld changes by direct calls\n", changes);
    for (long i = 0; i < changes; i++) {
        double t0 = write_change(a, "d", i);
        tcheck(tureen_resync(a, "up", NULL, NULL, NULL), "resync up");
        tcheck(tureen_resync(b, "down", NULL, NULL, NULL), "resync down");
        double t1 = arrival();
        if (t1 < 0) die("change d%ld never reached B by direct calls", i);
        direct[i] = (t1 - t0) * 1000;
    }

    /* The loops: A sends on its own, B polls every 200 ms. */
    fprintf(stderr, "loop_bench: %ld changes through the loops\n", changes);
    tcheck(tureen_sync_loop_start(a, "{\"sync_frequency\":3600,\"debounce_ms\":10}"), "loop a");
    tcheck(tureen_sync_loop_start(b, "{\"sync_frequency_ms\":200}"), "loop b");
    usleep(500 * 1000); /* both loops past their first cycle */
    long lost = 0;
    for (long i = 0; i < changes; i++) {
        double t0 = write_change(a, "l", i);
        double t1 = arrival();
        if (t1 < 0) { lost++; looped[i] = 10000; continue; }
        looped[i] = (t1 - t0) * 1000;
        usleep((useconds_t)(37 * 1000 * (i % 7))); /* changes land at varying points of B's period */
    }
    tcheck(tureen_sync_loop_stop(a), "stop a");
    tcheck(tureen_sync_loop_stop(b), "stop b");

    /* 2) an idle cycle: nothing new on either side. */
    tcheck(tureen_resync(b, "down", NULL, NULL, NULL), "idle resync down");
    long down_requests = state_int(b, "down", "requests");
    long since = state_int(b, "down", "maxTimeStamp");
    tcheck(tureen_resync(a, "up", NULL, NULL, NULL), "idle resync up");
    long up_requests = state_int(a, "up", "requests");
    char list[2600];
    snprintf(list, sizeof list, "%s/buckets/loopbench/collections/c%ld/records?_since=%ld&_sort=last_modified,id",
             url, (long)getpid(), since);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, list);
    curl_easy_setopt(c, CURLOPT_USERPWD, "bench:pw");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    long header_bytes = 0, request_bytes = 0;
    curl_off_t body_bytes = 0;
    if (curl_easy_perform(c) != CURLE_OK) die("GET %s failed", list);
    curl_easy_getinfo(c, CURLINFO_HEADER_SIZE, &header_bytes);
    curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &request_bytes);
    curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &body_bytes);
    curl_easy_cleanup(c);

    double d50 = pct(direct, changes, 0.5), d95 = pct(direct, changes, 0.95);
    double l50 = pct(looped, changes, 0.5), l95 = pct(looped, changes, 0.95);
    printf("loop_bench: propagation A -> Kinto -> B (%ld changes, one at a time), Kinto (memory backend) on loopback\n", changes);
    print_versions(cipher);
    printf("  machine              %ld CPU(s) online\n", sysconf(_SC_NPROCESSORS_ONLN));
    printf("\n%-44s | %-26s | %-26s | %-12s | %s\n", "workload", "measured (loops)", "against (direct calls)", "ratio", "bar");
    printf("---------------------------------------------+----------------------------+----------------------------+--------------+------------------------\n");
    char m[64], g[64], r[32];
    snprintf(m, sizeof m, "p50 %8.1f ms", l50);
    snprintf(g, sizeof g, "p50 %8.1f ms", d50);
    snprintf(r, sizeof r, "%6.2f l/d", l50 / d50);
    printf("%-44s | %-26s | %-26s | %-12s | -\n", "1) change on A seen on B (B polls 200 ms)", m, g, r);
    snprintf(m, sizeof m, "p95 %8.1f ms", l95);
    snprintf(g, sizeof g, "p95 %8.1f ms", d95);
    snprintf(r, sizeof r, "%6.2f l/d", l95 / d95);
    printf("   %-41s | %-26s | %-26s | %-12s | p95 <= 1 s %s\n", "(A: auto sync; B: loop)", m, g, r,
           l95 <= 1000 && lost == 0 ? "ok" : "NOT MET");
    bench_bar("loop", "1) change on A seen on B (B polls 200 ms)", m, g, r, "p95 <= 1 s, none lost", l95 <= 1000 && lost == 0);
    snprintf(m, sizeof m, "%ld request(s)", down_requests);
    snprintf(g, sizeof g, "req %ld B, answer %ld+%ld B", request_bytes, header_bytes, (long)body_bytes);
    printf("%-44s | %-26s | %-26s | %-12s | - (report)\n", "2) idle sync down (nothing new)", m, g, "-");
    snprintf(m, sizeof m, "%ld request(s)", up_requests);
    printf("%-44s | %-26s | %-26s | %-12s | - (report)\n", "   idle sync up (nothing to send)", m, "-", "-");
    printf("\nPropagation is taken from tureen_local_upsert on A to B's record_delta_received event for that\n"
           "record. Direct calls: A's tureen_resync(up) then B's tureen_resync(down) right after the write,\n"
           "no loop and no waiting: the floor. %ld change(s) not seen on B within 10 s (counted as 10 s).\n"
           "Idle cycle: the request an incremental sync down sends when nothing changed (GET of the\n"
           "records since maxTimeStamp) and its answer (headers + body), measured again with libcurl.\n", lost);
    tureen_listener_remove(l);
    tureen_store_close(a);
    tureen_store_close(b);
    remove_dir();
    free(direct);
    free(looped);
    return 0;
}
