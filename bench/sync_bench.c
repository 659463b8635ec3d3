/*
 * sync_bench.c - Tureen's sync against a Kinto server, beside the floor (the
 * same pages fetched with plain libcurl and inserted by hand on the SQLCipher
 * API) and a peer (the kinto-http Python client and Python's sqlite3, in
 * bench/sync_bench_peer.py), in one run against one Kinto.
 *
 * 1) sync down: BENCH_SYNC_N records of about 1 KB, seeded into a fresh
 *    collection through Kinto's /batch, fetched by tureen_sync_down into a
 *    fresh passphrase-keyed store; by the floor; by the peer. Beside them,
 *    the floor's time in HTTP, and Tureen's own requests fetched alone
 *    (floor_fetch_by_stamp): what Kinto takes to serve the pages.
 * 2) sync up: BENCH_SYNC_UP_N records saved with tureen_local_upsert, then
 *    sent by tureen_sync_up into a fresh collection; the requests it sent
 *    (its state's "requests", and Kinto's own request log) and its time,
 *    beside the floor sending the same batches by hand.
 * 3) encrypted against plain: BENCH_SYNC_ENC_N records synced down (3a) and
 *    up (3b) by Tureen with a target carrying "encryption" and with the same
 *    target without it, alternating. The collections 3a reads were filled by
 *    tureen_sync_up with the same two targets, so the encrypted one holds
 *    sealed envelopes (checked) and the plain one the records in clear.
 *
 * Every Tureen and floor repetition runs in a forked child on a fresh file,
 * so each child's peak RSS (from wait4) is its own; the peer is a separate
 * Python process. Sides alternate. See bench/README.md for what each row
 * means.
 *
 * Environment: BENCH_SYNC_URL (required: Kinto's http://host:port/v1),
 *   BENCH_SYNC_KINTO_LOG (Kinto's log, to count its requests; optional),
 *   BENCH_SYNC_PYTHON (python3) and BENCH_SYNC_PEER
 *   (bench/sync_bench_peer.py; "" leaves the peer out), BENCH_SYNC_N (10000),
 *   BENCH_SYNC_UP_N (1000), BENCH_SYNC_REPS (5: sync down),
 *   BENCH_SYNC_UP_REPS (3: sync up), BENCH_SYNC_ENC_N (10000),
 *   BENCH_SYNC_ENC_REPS (3: workload 3), BENCH_SYNC_TIMEOUT (600:
 *   seconds a peer run or an HTTP request may take), BENCH_TMP (/tmp),
 *   BENCH_FLOOR_PAGE_SIZE (4096), BENCH_FLOOR_SYNC (NORMAL),
 *   BENCH_FLOOR_CACHE_KIB (8192).
 * Exit status: 0 when everything ran (whether or not a bar was met), 1 on
 * any error.
 */
#define BENCH_PROG "sync_bench"
/* The shared header's static helpers serve the soups and queries benchmarks
 * too; this program needs only some of them, and is built with -Werror. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "bench_common.h"
#pragma GCC diagnostic pop

#include <poll.h>
#include <sched.h>

#include <curl/curl.h>

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

#define SOUP "records"
#define FLOOR_TABLE "sync_floor"
/* Tureen's Kinto target asks for pages of 1000 unless told otherwise; the
 * floor and the peer ask for the same pages. */
#define KINTO_PAGE 1000
#define USER "bench"
#define PASSWORD "bench-password"

static const char *SPECS = "[{\"path\":\"id\",\"type\":\"string\"}]";
/* A passphrase with Tureen's default settings (PBKDF2, 256000 rounds): what
 * an application storing a user's data would open. Opening is not timed. */
static const char *PASSPHRASE_OPTS = "{\"key\": \"sync bench passphrase\"}";

static const char *g_url;          /* BENCH_SYNC_URL, without a trailing '/' */
static char g_url_path[256];       /* its path ("/v1"): what /batch subrequests start with */
static const char *g_kinto_log;    /* BENCH_SYNC_KINTO_LOG, or NULL */
static const char *g_python = "python3";
static const char *g_peer = "bench/sync_bench_peer.py";
static long g_n = 10000;           /* records synced down */
static long g_up_n = 1000;         /* local changes synced up */
static long g_reps = 5;            /* sync down repetitions per side (median reported) */
static long g_up_reps = 3;         /* sync up repetitions per side: Kinto's writes make each one long */
static long g_enc_n = 10000;       /* records synced down and up in workload 3 */
static long g_enc_reps = 3;        /* workload 3's repetitions per side */
static long g_timeout_s = 600;     /* bound on a peer run and on one HTTP request */
static long g_batch_max = 25;      /* Kinto's batch_max_requests, read from the server */
static char g_bucket[64];          /* this run's bucket: several runs may share a server */
static char g_kinto_version[64] = "?";

enum { PEER = 2 };
static const char *SIDE_NAME[3] = {"tureen", "floor", "peer"};

/* Workload 3's two sides: both are Tureen, with and without the target's
 * "encryption" member (a fixed key: what is measured is the sealing). */
enum { PLAIN = 0, ENCRYPTED = 1 };
static const char *ENC_NAME[2] = {"plain", "encrypted"};
#define ENCRYPTION_MEMBER "\"encryption\":{\"keys\":[{\"id\":\"k1\",\"key\":\"" RAW_KEY_HEX "\"}]}"

/* ------------------------------------------------------------------------ */
/* Time, files, text                                                         */
/* ------------------------------------------------------------------------ */

static int64_t epoch_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void remove_db(const char *path)
{
    static const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[4200];
    for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        if (unlink(p) != 0 && errno != ENOENT) die("cannot remove %s: %s", p, strerror(errno));
    }
}

static void tureen_remove_if_there(const char *path)
{
    int rc = tureen_store_remove(path);
    if (rc != TUREEN_OK && rc != TUREEN_E_NOT_FOUND) tcheck(rc, "tureen_store_remove");
}

typedef struct {
    char *data;
    size_t len, cap;
} text;

static void text_reserve(text *t, size_t more)
{
    if (t->len + more + 1 > t->cap) {
        while (t->len + more + 1 > t->cap) t->cap = t->cap ? t->cap * 2 : 1 << 16;
        t->data = xrealloc(t->data, t->cap);
    }
}

static void text_add(text *t, const char *s, size_t n)
{
    text_reserve(t, n);
    memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = 0;
}

static void text_str(text *t, const char *s) { text_add(t, s, strlen(s)); }

static void text_fmt(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    text_reserve(t, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(t->data + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static void text_clear(text *t)
{
    t->len = 0;
    if (t->data) t->data[0] = 0;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    size_t l = strlen(needle);
    for (const char *p = hay; p && (p = strstr(p, needle)) != NULL; p += l) n++;
    return n;
}

/* The integer after "key": in a JSON text Tureen wrote (no spaces), or -1. */
static long long json_int(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = json ? strstr(json, pat) : NULL;
    return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */
/* ------------------------------------------------------------------------ */

/* The soups bench's entry `idx` (bench_entry: about 1 KB), preceded by
 * "id": id when id is not NULL. So every side syncs the data the other
 * benchmarks store. */
static void record_json(text *out, uint64_t idx, const char *id)
{
    static batch scratch;
    entry e;
    batch_start(&scratch);
    bench_entry(&scratch, idx, 0, &e);
    if (id) {
        text_fmt(out, "{\"id\":\"%s\",", id);
        text_add(out, scratch.buf + e.off + 1, e.len - 1);
    } else {
        text_add(out, scratch.buf + e.off, e.len);
    }
}

static void down_id(char *out, size_t cap, long i) { snprintf(out, cap, "rec-%06ld", i); }

/* ------------------------------------------------------------------------ */
/* HTTP with libcurl: one handle per side, kept for every request (as        */
/* Tureen keeps one per sync), so connections are reused                     */
/* ------------------------------------------------------------------------ */

typedef struct {
    CURL *h;
    text body;
    char next[8192];    /* the Next-Page header, "" when absent */
    long long total;    /* the Total-Objects header, -1 when absent */
} http;

static size_t on_body(char *p, size_t size, size_t n, void *user)
{
    text_add((text *)user, p, size * n);
    return size * n;
}

/* Copies the value of header `name` (lower case, with its colon) from one
 * header line into out, trimmed. Returns 1 when the line was that header. */
static int header_value(const char *line, size_t len, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    if (len < nl || strncasecmp(line, name, nl) != 0) return 0;
    const char *v = line + nl, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) end--;
    size_t vl = (size_t)(end - v);
    if (vl >= cap) die("http: a %s header of %zu bytes", name, vl);
    memcpy(out, v, vl);
    out[vl] = 0;
    return 1;
}

static size_t on_header(char *p, size_t size, size_t n, void *user)
{
    http *c = user;
    size_t len = size * n;
    char num[32];
    if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        /* A new response (after a 100 or a redirect): forget the last one's. */
        c->next[0] = 0;
        c->total = -1;
    } else if (header_value(p, len, "total-objects:", num, sizeof num)) {
        c->total = strtoll(num, NULL, 10);
    } else {
        header_value(p, len, "next-page:", c->next, sizeof c->next);
    }
    return len;
}

static void http_open(http *c)
{
    memset(c, 0, sizeof *c);
    c->h = curl_easy_init();
    if (!c->h) die("curl_easy_init failed");
}

static void http_close(http *c)
{
    curl_easy_cleanup(c->h);
    free(c->body.data);
}

/* Sends one request; `extra` is one more header line or NULL. Returns the
 * HTTP status; the body is in c->body. Options are set afresh each time
 * (reset keeps the connection), as Tureen's client does. */
static long http_send(http *c, const char *method, const char *url, const char *body, size_t blen, const char *extra)
{
    CURL *h = c->h;
    struct curl_slist *hdr = NULL;
    hdr = curl_slist_append(hdr, "Accept: application/json");
    hdr = curl_slist_append(hdr, "Expect:"); /* no 100-continue round trip for large bodies */
    if (body) hdr = curl_slist_append(hdr, "Content-Type: application/json");
    if (extra) hdr = curl_slist_append(hdr, extra);
    if (!hdr) die("curl_slist_append failed");
    curl_easy_reset(h);
    text_clear(&c->body);
    c->next[0] = 0;
    c->total = -1;
    CURLcode rc = CURLE_OK;
#define SET(opt, val) do { if (rc == CURLE_OK) rc = curl_easy_setopt(h, opt, val); } while (0)
    SET(CURLOPT_URL, url);
    SET(CURLOPT_HTTPHEADER, hdr);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_TIMEOUT_MS, g_timeout_s * 1000L);
    SET(CURLOPT_ACCEPT_ENCODING, "");
    SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    SET(CURLOPT_USERNAME, USER);
    SET(CURLOPT_PASSWORD, PASSWORD);
    SET(CURLOPT_USERAGENT, "sync_bench");
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, &c->body);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, c);
    if (!strcmp(method, "GET")) {
        SET(CURLOPT_HTTPGET, 1L);
    } else if (!strcmp(method, "HEAD")) {
        SET(CURLOPT_NOBODY, 1L);
    } else {
        SET(CURLOPT_CUSTOMREQUEST, method);
        if (body) {
            SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
            SET(CURLOPT_POSTFIELDS, body);
        }
    }
#undef SET
    if (rc != CURLE_OK) die("libcurl refused an option: %s", curl_easy_strerror(rc));
    rc = curl_easy_perform(h);
    curl_slist_free_all(hdr);
    if (rc != CURLE_OK) die("http: %s %s: %s", method, url, curl_easy_strerror(rc));
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

static void http_expect(http *c, long status, long want, long want2, const char *method, const char *url)
{
    if (status != want && status != want2)
        die("http: %s %s answered %ld: %.300s", method, url, status, c->body.data ? c->body.data : "");
}

static void records_url(char *out, size_t cap, const char *collection)
{
    if ((size_t)snprintf(out, cap, "%s/buckets/%s/collections/%s/records", g_url, g_bucket, collection) >= cap)
        die("URL too long");
}

/* Creates this run's bucket (once) and `collection` in it, empty. */
static void make_collection(http *c, const char *collection)
{
    static int bucket_made = 0;
    char url[1024];
    const char *empty = "{\"data\":{}}";
    if (!bucket_made) {
        snprintf(url, sizeof url, "%s/buckets/%s", g_url, g_bucket);
        http_expect(c, http_send(c, "PUT", url, empty, strlen(empty), "If-None-Match: *"), 201, 412, "PUT", url);
        bucket_made = 1;
    }
    snprintf(url, sizeof url, "%s/buckets/%s/collections/%s", g_url, g_bucket, collection);
    http_expect(c, http_send(c, "PUT", url, empty, strlen(empty), "If-None-Match: *"), 201, 201, "PUT", url);
}

/* How many records the collection holds now (Kinto's Total-Objects). */
static long long server_count(http *c, const char *collection)
{
    char url[1024];
    records_url(url, sizeof url, collection);
    http_expect(c, http_send(c, "HEAD", url, NULL, 0, NULL), 200, 200, "HEAD", url);
    if (c->total < 0) die("http: HEAD %s: no Total-Objects header", url);
    return c->total;
}

/* Deletes `collection` and its records: workload 3 fills many, which Kinto's
 * memory backend would otherwise keep until it stops. */
static void drop_collection(http *c, const char *collection)
{
    char url[1024];
    snprintf(url, sizeof url, "%s/buckets/%s/collections/%s", g_url, g_bucket, collection);
    http_expect(c, http_send(c, "DELETE", url, NULL, 0, NULL), 200, 200, "DELETE", url);
}

/* Workload 3 must compare what each side really moves: the first records of
 * the encrypted side's collection must be envelopes with no field of the
 * entry in clear, and the plain side's must be the entries. */
static void check_sealed(http *c, const char *collection, int encrypted)
{
    char url[1100], base[1024];
    records_url(base, sizeof base, collection);
    snprintf(url, sizeof url, "%s?_limit=5", base);
    http_expect(c, http_send(c, "GET", url, NULL, 0, NULL), 200, 200, "GET", url);
    int envelopes = count_of(c->body.data, "\"enc\":"), clear = count_of(c->body.data, "\"notes\":");
    if (encrypted ? (envelopes != 5 || clear != 0) : (envelopes != 0 || clear != 5))
        die("collection %s is not held %s on the server: %.400s", collection, encrypted ? "sealed" : "in clear", c->body.data);
}

/* POSTs one /batch body and checks that each of its `count` subrequests got
 * `want` (201: created). */
static void post_batch(http *c, const text *body, long count, const char *want)
{
    char url[1024];
    snprintf(url, sizeof url, "%s/batch", g_url);
    http_expect(c, http_send(c, "POST", url, body->data, body->len, NULL), 200, 200, "POST", url);
    if (count_of(c->body.data, want) != count)
        die("http: POST %s: %d of %ld subrequests answered %s: %.500s", url, count_of(c->body.data, want), count, want,
            c->body.data);
}

/* Puts BENCH_SYNC_N records into `collection` through /batch, g_batch_max per
 * request. Returns the number of requests. */
static long seed_down(http *c, const char *collection)
{
    text body = {0};
    char id[32];
    long requests = 0;
    for (long i = 0; i < g_n; i += g_batch_max) {
        text_clear(&body);
        text_str(&body, "{\"defaults\":{\"method\":\"PUT\"},\"requests\":[");
        long k = 0;
        for (; k < g_batch_max && i + k < g_n; k++) {
            down_id(id, sizeof id, i + k);
            text_fmt(&body, "%s{\"path\":\"%s/buckets/%s/collections/%s/records/%s\",\"body\":{\"data\":", k ? "," : "",
                     g_url_path, g_bucket, collection, id);
            record_json(&body, (uint64_t)(i + k), id);
            text_str(&body, "}}");
        }
        text_str(&body, "]}");
        post_batch(c, &body, k, "\"status\":201");
        requests++;
    }
    free(body.data);
    return requests;
}

/* Kinto's version and batch_max_requests, from GET /v1/. */
static void read_server(http *c)
{
    char url[1024];
    snprintf(url, sizeof url, "%s/", g_url);
    http_expect(c, http_send(c, "GET", url, NULL, 0, NULL), 200, 200, "GET", url);
    const char *p = strstr(c->body.data, "\"batch_max_requests\":");
    if (p) g_batch_max = strtol(p + strlen("\"batch_max_requests\":"), NULL, 10);
    if (g_batch_max < 1) die("Kinto's batch_max_requests is %ld", g_batch_max);
    p = strstr(c->body.data, "\"project_version\":");
    if (p && (p = strchr(p + strlen("\"project_version\":"), '"')) != NULL) {
        size_t n = strcspn(p + 1, "\"");
        if (n < sizeof g_kinto_version) {
            memcpy(g_kinto_version, p + 1, n);
            g_kinto_version[n] = 0;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* The floor's JSON: just enough to cut a page into records and find each    */
/* record's id                                                               */
/* ------------------------------------------------------------------------ */

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* p at '"': returns the byte after the closing quote, or NULL. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\') p++;
        else if (*p == '"') return p + 1;
    }
    return NULL;
}

/* Returns the byte after the JSON value at p, or NULL. */
static const char *skip_value(const char *p, const char *end)
{
    if (p >= end) return NULL;
    if (*p == '"') return skip_string(p, end);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            if (*p == '"') {
                p = skip_string(p, end);
                if (!p) return NULL;
                continue;
            }
            if (*p == '{' || *p == '[') depth++;
            else if (*p == '}' || *p == ']') {
                if (--depth == 0) return p + 1;
            }
            p++;
        }
        return NULL;
    }
    while (p < end && !strchr(",}] \t\r\n", *p)) p++;
    return p;
}

/* The span of member `key`'s value in the object at p (which ends at end),
 * or NULL. */
static const char *member(const char *p, const char *end, const char *key, const char **vend)
{
    size_t kl = strlen(key);
    p = skip_ws(p, end);
    if (p >= end || *p != '{') return NULL;
    p = skip_ws(p + 1, end);
    while (p < end && *p == '"') {
        const char *k = p + 1, *kend = skip_string(p, end);
        if (!kend) return NULL;
        p = skip_ws(kend, end);
        if (p >= end || *p != ':') return NULL;
        const char *v = skip_ws(p + 1, end), *ve = skip_value(v, end);
        if (!ve) return NULL;
        if ((size_t)(kend - 1 - k) == kl && !memcmp(k, key, kl)) {
            *vend = ve;
            return v;
        }
        p = skip_ws(ve, end);
        if (p < end && *p == ',') p = skip_ws(p + 1, end);
    }
    return NULL;
}

typedef struct {
    sqlite3 *db;
    sqlite3_stmt *ins;
    int64_t now;
} floor_page;

/* Inserts every record of a Kinto list page ({"data": [...]}); returns how
 * many. */
static long floor_insert_page(floor_page *f, const char *body, size_t len)
{
    const char *end = body + len, *aend = NULL;
    const char *p = member(body, end, "data", &aend);
    if (!p || *p != '[') die("floor: the page has no \"data\" array: %.200s", body);
    long n = 0;
    p = skip_ws(p + 1, aend);
    while (p < aend && *p == '{') {
        const char *rend = skip_value(p, aend), *iend = NULL;
        const char *id = rend ? member(p, rend, "id", &iend) : NULL;
        if (!id || *id != '"') die("floor: a record without a string id");
        sqlite3_bind_text(f->ins, 1, p, (int)(rend - p), SQLITE_STATIC);
        sqlite3_bind_int64(f->ins, 2, f->now);
        sqlite3_bind_int64(f->ins, 3, f->now);
        sqlite3_bind_text(f->ins, 4, id + 1, (int)(iend - id - 2), SQLITE_STATIC);
        scheck(f->db, sqlite3_step(f->ins), SQLITE_DONE, "insert");
        sqlite3_reset(f->ins);
        n++;
        p = skip_ws(rend, aend);
        if (p < aend && *p == ',') p = skip_ws(p + 1, aend);
    }
    return n;
}

/* Tureen's own requests, fetched alone and nothing written: what Kinto takes
 * to serve them. Its Kinto preset pages by stamp (StampPaging.swift): the
 * first page as the floor asks for it, then each from the last one's highest
 * stamp on (min_last_modified, one record more, the one already received
 * dropped), sorted by stamp alone. Kinto serves these slower than its own
 * links (a filter on last_modified includes deletions; the memory backend
 * then filters every record twice), which Tureen cannot use: they skip
 * records sharing a stamp across a page boundary. Tureen also counts the
 * records first (a HEAD, its progress's total), which is left out here: its
 * time includes it, the floor's does not. Returns the seconds in HTTP;
 * *records counts the records, each once (the seeding gives each its own
 * stamp). */
static double floor_fetch_by_stamp(http *c, const char *base, double *records)
{
    char url[8192];
    snprintf(url, sizeof url, "%s?_limit=%d&_sort=last_modified", base, KINTO_PAGE);
    long long from = -1;
    double secs = 0;
    while (url[0]) {
        double t0 = now_s();
        http_expect(c, http_send(c, "GET", url, NULL, 0, NULL), 200, 200, "GET", url);
        secs += now_s() - t0;
        const char *end = c->body.data + c->body.len, *aend = NULL;
        const char *p = member(c->body.data, end, "data", &aend);
        if (!p || *p != '[') die("floor: the page has no \"data\" array: %.200s", c->body.data);
        long long last = from;
        for (p = skip_ws(p + 1, aend); p < aend && *p == '{';) {
            const char *rend = skip_value(p, aend), *mend = NULL;
            const char *m = rend ? member(p, rend, "last_modified", &mend) : NULL;
            if (!m) die("floor: a record without last_modified");
            long long stamp = strtoll(m, NULL, 10);
            if (stamp > from) (*records)++;
            if (stamp > last) last = stamp;
            p = skip_ws(rend, aend);
            if (p < aend && *p == ',') p = skip_ws(p + 1, aend);
        }
        if (!c->next[0]) break;
        if (last <= from) die("floor: a page by stamp did not move past %lld", from);
        from = last;
        snprintf(url, sizeof url, "%s?_sort=last_modified&_limit=%d&min_last_modified=%lld", base, KINTO_PAGE + 1, from);
    }
    return secs;
}

/* Tureen's soup table for a soup with one string index, column for column
 * (the index is a column here), with the same three indexes. `local` is the
 * floor's dirty flag for sync up. */
static void floor_create(sqlite3 *db, int with_local)
{
    sexec(db, "BEGIN IMMEDIATE");
    sexec(db, with_local
                  ? "CREATE TABLE " FLOOR_TABLE " (id INTEGER PRIMARY KEY AUTOINCREMENT, soup TEXT NOT NULL, "
                    "created INTEGER NOT NULL, lastModified INTEGER NOT NULL, rid TEXT, local INTEGER NOT NULL)"
                  : "CREATE TABLE " FLOOR_TABLE " (id INTEGER PRIMARY KEY AUTOINCREMENT, soup TEXT NOT NULL, "
                    "created INTEGER NOT NULL, lastModified INTEGER NOT NULL, rid TEXT)");
    sexec(db, "CREATE INDEX " FLOOR_TABLE "_created_idx ON " FLOOR_TABLE " (created)");
    sexec(db, "CREATE INDEX " FLOOR_TABLE "_lastModified_idx ON " FLOOR_TABLE " (lastModified)");
    sexec(db, "CREATE INDEX " FLOOR_TABLE "_rid_idx ON " FLOOR_TABLE " (rid)");
    if (with_local) sexec(db, "CREATE INDEX " FLOOR_TABLE "_local_idx ON " FLOOR_TABLE " (local)");
    sexec(db, "COMMIT");
}

static int64_t floor_count(sqlite3 *db, const char *where)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM " FLOOR_TABLE "%s", where);
    sqlite3_stmt *s = floor_prepare(db, sql);
    scheck(db, sqlite3_step(s), SQLITE_ROW, "count");
    int64_t n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
}

/* ------------------------------------------------------------------------ */
/* Workloads: each runs in a child and returns numbers through a pipe        */
/* ------------------------------------------------------------------------ */

struct result {
    double secs;      /* timed seconds */
    double fetch;     /* floor: seconds in HTTP (the rest is local work) */
    double fetch_own; /* floor: seconds fetching Tureen's own pages alone (floor_fetch_by_stamp) */
    double requests;  /* tureen: the state's "requests"; floor: requests sent */
    double count;     /* records synced */
    double first_read; /* tureen: seconds of the untimed first read (open_fresh_store) */
    double file_mb;    /* the store or file after the sync, closed (so checkpointed) */
};

struct warg {
    int side;
    const char *path;       /* the store or database file */
    const char *collection; /* the Kinto collection */
    int encrypted;          /* workload 3: the target carries "encryption" */
    long n;                 /* workload 3: the records synced */
};

static void kinto_target(char *out, size_t cap, const char *collection, int encrypted)
{
    if ((size_t)snprintf(out, cap,
                         "{\"type\":\"kinto\",\"url\":\"%s\",\"bucket\":\"%s\",\"collection\":\"%s\","
                         "\"auth\":{\"user\":\"" USER "\",\"password\":\"" PASSWORD "\"}%s%s}",
                         g_url, g_bucket, collection, encrypted ? "," : "", encrypted ? ENCRYPTION_MEMBER : "") >= cap)
        die("target too long");
}

/* A finished sync's state must say DONE with `want` records synced. */
static void check_state(const char *state, long want, const char *what)
{
    if (!state || !strstr(state, "\"status\":\"DONE\"") || json_int(state, "synced") != want)
        die("tureen: %s did not sync %ld records: %.600s", what, want, state ? state : "(no state)");
}

/* A fresh store with the soup, and one read: the store opens its reader
 * connection on the first read. An application has read its store before it
 * syncs, so that cost belongs to opening; returns its seconds, which the
 * report shows (it was 0.3 s while each connection derived the passphrase
 * key again). */
static double open_fresh_store(const char *path, tureen_store **st)
{
    tureen_remove_if_there(path);
    tcheck(tureen_store_open(path, PASSPHRASE_OPTS, st), "tureen_store_open");
    tcheck(tureen_soup_register(*st, SOUP, SPECS), "tureen_soup_register");
    double t0 = now_s();
    if (tureen_count_q(*st, "{\"queryType\":\"all\",\"soupName\":\"" SOUP "\"}") != 0) die("tureen: a fresh soup is not empty");
    return now_s() - t0;
}

/* 1) every record of the collection into a fresh store or file (3a: a->n
 * records, Tureen only). */
static void wl_down(const warg *a, result *r)
{
    long want = a->n ? a->n : g_n;
    if (a->side == TUREEN) {
        tureen_store *st = NULL;
        char target[1024];
        char *state = NULL;
        r->first_read = open_fresh_store(a->path, &st);
        kinto_target(target, sizeof target, a->collection, a->encrypted);
        double t0 = now_s();
        int rc = tureen_sync_down(st, target, SOUP, NULL, NULL, NULL, &state);
        r->secs = now_s() - t0;
        tcheck(rc, "tureen_sync_down");
        check_state(state, want, "tureen_sync_down");
        r->requests = (double)json_int(state, "requests");
        tureen_free(state);
        if (tureen_count_q(st, "{\"queryType\":\"all\",\"soupName\":\"" SOUP "\"}") != want)
            die("tureen: the soup does not hold %ld records after sync down", want);
        tcheck(tureen_store_close(st), "tureen_store_close");
        r->file_mb = file_mb(a->path);
    } else {
        remove_db(a->path);
        sqlite3 *db = floor_open(a->path, FLOOR_OWN_FILE);
        floor_create(db, 0);
        floor_page f = {db, floor_prepare(db, "INSERT INTO " FLOOR_TABLE " (soup, created, lastModified, rid) VALUES (?,?,?,?)"), 0};
        http c;
        http_open(&c);
        char url[8192], base[1024];
        records_url(base, sizeof base, a->collection);
        snprintf(url, sizeof url, "%s?_limit=%d&_sort=last_modified", base, KINTO_PAGE);
        double fetch = 0, t0 = now_s();
        while (url[0]) {
            double t1 = now_s();
            http_expect(&c, http_send(&c, "GET", url, NULL, 0, NULL), 200, 200, "GET", url);
            fetch += now_s() - t1;
            r->requests++;
            f.now = epoch_ms();
            /* One transaction per page, as Tureen commits each page. */
            sexec(db, "BEGIN IMMEDIATE");
            r->count += (double)floor_insert_page(&f, c.body.data, c.body.len);
            sexec(db, "COMMIT");
            snprintf(url, sizeof url, "%s", c.next);
        }
        r->secs = now_s() - t0;
        r->fetch = fetch;
        double own_records = 0;
        r->fetch_own = floor_fetch_by_stamp(&c, base, &own_records);
        if (own_records != (double)g_n) die("floor: Tureen's pages brought %.0f records, not %ld", own_records, g_n);
        http_close(&c);
        sqlite3_finalize(f.ins);
        if (floor_count(db, "") != g_n) die("floor: the table does not hold %ld records after the fetch", g_n);
        floor_close(db);
        r->file_mb = file_mb(a->path);
    }
}

/* 2) g_up_n new records saved locally (untimed), then sent (timed); 3b and
 * the filling of 3a's collections: a->n records, Tureen only. */
static void wl_up(const warg *a, result *r)
{
    text arr = {0};
    if (a->side == TUREEN) {
        long want = a->n ? a->n : g_up_n;
        tureen_store *st = NULL;
        char target[1024];
        char *state = NULL;
        r->first_read = open_fresh_store(a->path, &st);
        text_str(&arr, "[");
        for (long i = 0; i < want; i++) {
            if (i) text_str(&arr, ",");
            record_json(&arr, (uint64_t)(g_n + i), NULL);
        }
        text_str(&arr, "]");
        tcheck(tureen_local_upsert(st, SOUP, arr.data, NULL, NULL), "tureen_local_upsert");
        kinto_target(target, sizeof target, a->collection, a->encrypted);
        double t0 = now_s();
        int rc = tureen_sync_up(st, target, SOUP, NULL, NULL, NULL, &state);
        r->secs = now_s() - t0;
        tcheck(rc, "tureen_sync_up");
        check_state(state, want, "tureen_sync_up");
        r->requests = (double)json_int(state, "requests");
        r->count = (double)want;
        tureen_free(state);
        tcheck(tureen_store_close(st), "tureen_store_close");
    } else {
        /* The floor's local changes: rows flagged local, with ids given. */
        remove_db(a->path);
        sqlite3 *db = floor_open(a->path, FLOOR_OWN_FILE);
        floor_create(db, 1);
        sqlite3_stmt *ins = floor_prepare(db, "INSERT INTO " FLOOR_TABLE " (soup, created, lastModified, rid, local) VALUES (?,?,?,?,1)");
        int64_t now = epoch_ms();
        char id[32];
        sexec(db, "BEGIN IMMEDIATE");
        for (long i = 0; i < g_up_n; i++) {
            text_clear(&arr);
            snprintf(id, sizeof id, "loc-%06ld", i);
            record_json(&arr, (uint64_t)(g_n + i), id);
            sqlite3_bind_text(ins, 1, arr.data, (int)arr.len, SQLITE_STATIC);
            sqlite3_bind_int64(ins, 2, now);
            sqlite3_bind_int64(ins, 3, now);
            sqlite3_bind_text(ins, 4, id, -1, SQLITE_STATIC);
            scheck(db, sqlite3_step(ins), SQLITE_DONE, "insert");
            sqlite3_reset(ins);
        }
        sexec(db, "COMMIT");
        sqlite3_finalize(ins);

        sqlite3_stmt *sel = floor_prepare(db, "SELECT id, rid, soup FROM " FLOOR_TABLE " WHERE local = 1 ORDER BY id");
        sqlite3_stmt *upd = floor_prepare(db, "UPDATE " FLOOR_TABLE " SET local = 0, lastModified = ? WHERE id = ?");
        http c;
        http_open(&c);
        text body = {0};
        long long *ids = xmalloc((size_t)g_up_n * sizeof *ids);
        double fetch = 0, t0 = now_s();
        /* Reads the changes, then sends them g_batch_max per /batch, each a
         * create that cannot overwrite (as Tureen sends creates), and marks
         * each batch's rows clean in one transaction once the server took it. */
        sexec(db, "BEGIN");
        long n = 0;
        text all = {0};
        size_t *ends = xmalloc((size_t)g_up_n * sizeof *ends);
        int rc;
        while ((rc = sqlite3_step(sel)) == SQLITE_ROW && n < g_up_n) {
            ids[n] = sqlite3_column_int64(sel, 0);
            text_fmt(&all, "{\"method\":\"PUT\",\"path\":\"%s/buckets/%s/collections/%s/records/%s\","
                           "\"headers\":{\"If-None-Match\":\"*\"},\"body\":{\"data\":",
                     g_url_path, g_bucket, a->collection, (const char *)sqlite3_column_text(sel, 1));
            text_add(&all, (const char *)sqlite3_column_text(sel, 2), (size_t)sqlite3_column_bytes(sel, 2));
            text_str(&all, "}}");
            ends[n++] = all.len;
        }
        if (rc != SQLITE_ROW) scheck(db, rc, SQLITE_DONE, "select local changes");
        sqlite3_reset(sel);
        sexec(db, "COMMIT");
        for (long i = 0; i < n; i += g_batch_max) {
            long k = n - i < g_batch_max ? n - i : g_batch_max;
            text_clear(&body);
            text_str(&body, "{\"requests\":[");
            for (long j = i; j < i + k; j++) {
                size_t s = j ? ends[j - 1] : 0;
                if (j > i) text_str(&body, ",");
                text_add(&body, all.data + s, ends[j] - s);
            }
            text_str(&body, "]}");
            double t1 = now_s();
            post_batch(&c, &body, k, "\"status\":201");
            fetch += now_s() - t1;
            r->requests++;
            int64_t stamp = epoch_ms();
            sexec(db, "BEGIN IMMEDIATE");
            for (long j = i; j < i + k; j++) {
                sqlite3_bind_int64(upd, 1, stamp);
                sqlite3_bind_int64(upd, 2, ids[j]);
                scheck(db, sqlite3_step(upd), SQLITE_DONE, "update");
                sqlite3_reset(upd);
            }
            sexec(db, "COMMIT");
        }
        r->secs = now_s() - t0;
        r->fetch = fetch;
        r->count = (double)n;
        if (n != g_up_n || floor_count(db, " WHERE local = 1") != 0) die("floor: %ld of %ld changes sent", n, g_up_n);
        free(all.data);
        free(ends);
        free(ids);
        free(body.data);
        http_close(&c);
        sqlite3_finalize(sel);
        sqlite3_finalize(upd);
        floor_close(db);
    }
    free(arr.data);
}

/* Does nothing: its peak RSS is what every child starts from. */
static void wl_idle(const warg *a, result *r)
{
    (void)a;
    r->secs = 0;
}

static result run_child(work_fn fn, const warg *a, double *peak_mb)
{
    result r;
    char who[32];
    snprintf(who, sizeof who, "a %s child", SIDE_NAME[a->side]);
    run_in_child(fn, a, &r, sizeof r, who, peak_mb);
    return r;
}

/* ------------------------------------------------------------------------ */
/* The peer: bench/sync_bench_peer.py in its own process                     */
/* ------------------------------------------------------------------------ */

typedef struct {
    double secs, fetch, insert, peak_mb;
    long records;
    char about[160]; /* python, kinto_http and sqlite versions */
} peer_result;

static double field_double(const char *line, const char *name)
{
    const char *p = strstr(line, name);
    return p ? strtod(p + strlen(name), NULL) : -1;
}

static void field_word(const char *line, const char *name, char *out, size_t cap)
{
    const char *p = strstr(line, name);
    snprintf(out, cap, "?");
    if (p) snprintf(out, cap, "%.*s", (int)strcspn(p + strlen(name), " \n"), p + strlen(name));
}

/* Runs the peer once on `collection` and reads its SYNC_BENCH_PEER line.
 * The peer's stderr goes to ours; it is killed after g_timeout_s. */
static peer_result run_peer(const char *collection, const char *db)
{
    int p[2];
    if (pipe(p) != 0) die("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    char expect[32];
    snprintf(expect, sizeof expect, "%ld", g_n);
    char limit[32];
    snprintf(limit, sizeof limit, "%d", KINTO_PAGE);
    pid_t pid = fork();
    if (pid < 0) die("fork: %s", strerror(errno));
    if (pid == 0) {
        close(p[0]);
        if (dup2(p[1], 1) < 0) _exit(127);
        close(p[1]);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        execlp(g_python, g_python, g_peer, "down", "--url", g_url, "--bucket", g_bucket, "--collection", collection, "--user",
               USER, "--password", PASSWORD, "--db", db, "--limit", limit, "--expect", expect, (char *)NULL);
        fprintf(stderr, BENCH_PROG ": cannot run %s: %s\n", g_python, strerror(errno));
        _exit(127);
    }
    g_child = pid;
    close(p[1]);
    text out = {0};
    double deadline = now_s() + (double)g_timeout_s;
    char buf[4096];
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            g_child = 0;
            die("the peer did not finish within %ld s (BENCH_SYNC_TIMEOUT)", g_timeout_s);
        }
        struct pollfd pf = {p[0], POLLIN, 0};
        int pr = poll(&pf, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0) die("poll: %s", strerror(errno));
        if (pr == 0) continue;
        ssize_t n = read(p[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text_add(&out, buf, (size_t)n);
    }
    close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) die("waitpid: %s", strerror(errno));
    }
    g_child = 0;
    const char *line = out.data ? strstr(out.data, "SYNC_BENCH_PEER down ") : NULL;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !line)
        die("the peer (%s %s) failed (status %d); its output: %s", g_python, g_peer, status, out.data ? out.data : "");
    peer_result r;
    memset(&r, 0, sizeof r);
    r.secs = field_double(line, " seconds=");
    r.fetch = field_double(line, " fetch=");
    r.insert = field_double(line, " insert=");
    r.peak_mb = field_double(line, " peak_mb=");
    r.records = (long)field_double(line, " records=");
    char py[32], kh[32], sq[32];
    field_word(line, " python=", py, sizeof py);
    field_word(line, " kinto_http=", kh, sizeof kh);
    field_word(line, " sqlite=", sq, sizeof sq);
    snprintf(r.about, sizeof r.about, "Python %s, kinto-http %s, sqlite3 %s (unencrypted)", py, kh, sq);
    if (r.secs <= 0 || r.records != g_n) die("the peer's line is not what was expected: %s", line);
    free(out.data);
    return r;
}

/* ------------------------------------------------------------------------ */
/* Kinto's request log: an independent count of what reached the server     */
/* ------------------------------------------------------------------------ */

static long long log_size(void)
{
    struct stat st;
    if (!g_kinto_log || stat(g_kinto_log, &st) != 0) return -1;
    return (long long)st.st_size;
}

/* Requests Kinto logged (its request.summary lines) after byte `from`, and
 * the subrequests their batches carried. */
static void log_count(long long from, long *requests, long *subrequests)
{
    *requests = *subrequests = -1;
    if (from < 0) return;
    FILE *f = fopen(g_kinto_log, "r");
    if (!f) return;
    if (fseek(f, (long)from, SEEK_SET) != 0) {
        fclose(f);
        return;
    }
    *requests = *subrequests = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[0] != '{' || !strstr(line, "\"request.summary\"")) continue;
        (*requests)++;
        const char *b = strstr(line, "\"batch_size\":");
        if (b) *subrequests += strtol(b + strlen("\"batch_size\":"), NULL, 10);
    }
    free(line);
    fclose(f);
}

/* Kinto writes its summary as it answers; waits (at most 2 s) until the
 * count stops moving, so a line still in flight is not missed. */
static void log_count_settled(long long from, long *requests, long *subrequests)
{
    long prev = -2, sub = 0;
    double deadline = now_s() + 2.0;
    for (;;) {
        log_count(from, requests, &sub);
        if (*requests == prev || *requests < 0 || now_s() > deadline) break;
        prev = *requests;
        usleep(100 * 1000);
    }
    *subrequests = sub;
}

/* ------------------------------------------------------------------------ */
/* Report                                                                    */
/* ------------------------------------------------------------------------ */

static void row(const char *workload, const char *tv, const char *av, const char *ratio, const char *bar, int below,
                const char *peak)
{
    char bar_s[64];
    snprintf(bar_s, sizeof bar_s, "%s%s", bar, bar[0] == '-' ? "" : (below ? " BELOW BAR" : " ok"));
    printf("%-40s | %-22s | %-26s | %-10s | %-27s | %s\n", workload, tv, av, ratio, bar_s, peak);
    if (bar[0] != '-') bench_bar("sync", workload, tv, av, ratio, bar, !below);
}

/* The CPUs this process (and so every child) may run on, as "0-1" or "1". */
static void cpu_list(char *out, size_t cap)
{
    cpu_set_t set;
    size_t n = 0;
    out[0] = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        snprintf(out, cap, "? (%s)", strerror(errno));
        return;
    }
    for (int i = 0; i < CPU_SETSIZE && n + 16 < cap; i++) {
        if (!CPU_ISSET(i, &set)) continue;
        int j = i;
        while (j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, &set)) j++;
        n += (size_t)snprintf(out + n, cap - n, n ? ",%d" : "%d", i);
        if (j > i) n += (size_t)snprintf(out + n, cap - n, "-%d", j);
        i = j;
    }
}

static double max_of(const double *v, long n)
{
    double m = 0;
    for (long i = 0; i < n; i++) if (v[i] > m) m = v[i];
    return m;
}

int main(void)
{
    g_url = getenv("BENCH_SYNC_URL");
    if (!g_url || !*g_url) die("BENCH_SYNC_URL must name a Kinto server (http://host:port/v1); bench/run.sh starts one");
    static char url_copy[1024];
    snprintf(url_copy, sizeof url_copy, "%s", g_url);
    while (*url_copy && url_copy[strlen(url_copy) - 1] == '/') url_copy[strlen(url_copy) - 1] = 0;
    g_url = url_copy;
    {
        const char *s = strstr(g_url, "://");
        const char *path = s ? strchr(s + 3, '/') : NULL;
        snprintf(g_url_path, sizeof g_url_path, "%s", path ? path : "");
    }
    g_kinto_log = getenv("BENCH_SYNC_KINTO_LOG");
    if (g_kinto_log && !*g_kinto_log) g_kinto_log = NULL;
    if (getenv("BENCH_SYNC_PYTHON") && *getenv("BENCH_SYNC_PYTHON")) g_python = getenv("BENCH_SYNC_PYTHON");
    if (getenv("BENCH_SYNC_PEER")) g_peer = getenv("BENCH_SYNC_PEER");
    int with_peer = g_peer[0] != 0;
    g_n = env_long("BENCH_SYNC_N", 10000, 1);
    g_up_n = env_long("BENCH_SYNC_UP_N", 1000, 2);
    g_reps = env_long("BENCH_SYNC_REPS", 5, 1);
    g_up_reps = env_long("BENCH_SYNC_UP_REPS", 3, 1);
    g_enc_n = env_long("BENCH_SYNC_ENC_N", 10000, 5);
    g_enc_reps = env_long("BENCH_SYNC_ENC_REPS", 3, 1);
    g_timeout_s = env_long("BENCH_SYNC_TIMEOUT", 600, 10);
    /* Which workloads run: run.sh's pinned pass runs only 1). */
    const char *only = getenv("BENCH_SYNC_ONLY");
    if (!only || !*only) only = "123";
    int do_up = strchr(only, '2') != NULL, do_enc = strchr(only, '3') != NULL;
    if (!do_up) g_up_reps = 0;
    if (!do_enc) g_enc_reps = 0;
    floor_settings_from_env();
    init_filler();
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) die("curl_global_init failed");

    char cipher[64];
    bench_start("tureen-sync-bench", cipher, sizeof cipher);
    snprintf(g_bucket, sizeof g_bucket, "syncbench-%ld-%ld", (long)getpid(), (long)(epoch_ms() % 100000000));

    http c;
    http_open(&c);
    read_server(&c);
    fprintf(stderr, "seeding %ld records into %s/buckets/%s/collections/down\n", g_n, g_url, g_bucket);
    make_collection(&c, "down");
    double t_seed = now_s();
    long seed_requests = seed_down(&c, "down");
    t_seed = now_s() - t_seed;
    if (server_count(&c, "down") != g_n) die("the collection holds %lld records after seeding, not %ld", server_count(&c, "down"), g_n);

    char store_t[4200], file_f[4200], file_p[4200];
    path_in_dir(store_t, sizeof store_t, "sync.tureen");
    path_in_dir(file_f, sizeof file_f, "sync-floor.db");
    path_in_dir(file_p, sizeof file_p, "sync-peer.db");

    double base = 0;
    warg idle = {TUREEN, NULL, NULL, 0, 0};
    run_child(wl_idle, &idle, &base);

    /* 1) sync down: tureen, floor, peer, one after the other, g_reps times. */
    double *down[3], *down_fetch[3], down_req[MAX_SHOWN_REPS] = {0}, down_peak[3] = {0};
    for (int s = 0; s < 3; s++) {
        down[s] = xmalloc((size_t)g_reps * sizeof(double));
        down_fetch[s] = xmalloc((size_t)g_reps * sizeof(double));
        memset(down[s], 0, (size_t)g_reps * sizeof(double));
        memset(down_fetch[s], 0, (size_t)g_reps * sizeof(double));
    }
    double floor_requests = 0, down_mb[2] = {0};
    double *first_read = xmalloc((size_t)g_reps * sizeof(double));
    double *down_own = xmalloc((size_t)g_reps * sizeof(double));
    char peer_about[160] = "not run (BENCH_SYNC_PEER is empty)";
    fprintf(stderr, "1) sync down %ld records\n", g_n);
    for (long rep = 0; rep < g_reps; rep++) {
        for (int side = 0; side < 3; side++) {
            double peak = 0, t0 = now_s();
            if (side == PEER) {
                if (!with_peer) continue;
                peer_result pr = run_peer("down", file_p);
                down[side][rep] = pr.secs;
                down_fetch[side][rep] = pr.fetch;
                peak = pr.peak_mb;
                snprintf(peer_about, sizeof peer_about, "%s", pr.about);
                remove_db(file_p);
            } else {
                warg a = {side, side == TUREEN ? store_t : file_f, "down", 0, 0};
                result r = run_child(wl_down, &a, &peak);
                down[side][rep] = r.secs;
                down_fetch[side][rep] = r.fetch;
                if (side == TUREEN && rep < MAX_SHOWN_REPS) down_req[rep] = r.requests;
                if (side == TUREEN) first_read[rep] = r.first_read;
                if (side == FLOOR) floor_requests = r.requests;
                if (side == FLOOR) down_own[rep] = r.fetch_own;
                down_mb[side] = r.file_mb;
                if (side == TUREEN) tureen_remove_if_there(store_t);
                else remove_db(file_f);
            }
            if (peak > down_peak[side]) down_peak[side] = peak;
            fprintf(stderr, "  sync down %ld  rep %ld/%ld %-6s %8.3f s  %9.0f records/s  peak %6.1f MB  (%.1f s)\n", g_n,
                    rep + 1, g_reps, SIDE_NAME[side], down[side][rep], (double)g_n / down[side][rep], peak, now_s() - t0);
        }
    }

    /* 2) sync up: tureen, floor, each into its own fresh collection. */
    double *up[2], *up_req[2], *up_http = xmalloc((size_t)g_up_reps * sizeof(double)), up_peak[2] = {0};
    long *up_logged[2], *up_logged_sub[2];
    for (int s = 0; s < 2; s++) {
        up[s] = xmalloc((size_t)g_up_reps * sizeof(double));
        up_req[s] = xmalloc((size_t)g_up_reps * sizeof(double));
        up_logged[s] = xmalloc((size_t)g_up_reps * sizeof(long));
        up_logged_sub[s] = xmalloc((size_t)g_up_reps * sizeof(long));
    }
    if (do_up) fprintf(stderr, "2) sync up %ld local changes\n", g_up_n);
    for (long rep = 0; rep < g_up_reps; rep++) {
        for (int side = 0; side < 2; side++) {
            char coll[64];
            snprintf(coll, sizeof coll, "up-%s-%ld", SIDE_NAME[side], rep + 1);
            make_collection(&c, coll);
            warg a = {side, side == TUREEN ? store_t : file_f, coll, 0, 0};
            double peak = 0, t0 = now_s();
            long long from = log_size();
            result r = run_child(wl_up, &a, &peak);
            log_count_settled(from, &up_logged[side][rep], &up_logged_sub[side][rep]);
            long long held = server_count(&c, coll);
            if (held != g_up_n) die("%s's sync up left %lld records in %s, not %ld", SIDE_NAME[side], held, coll, g_up_n);
            up[side][rep] = r.secs;
            up_req[side][rep] = r.requests;
            if (side == FLOOR) up_http[rep] = r.fetch;
            if (peak > up_peak[side]) up_peak[side] = peak;
            if (side == TUREEN) tureen_remove_if_there(store_t);
            else remove_db(file_f);
            fprintf(stderr, "  sync up %ld  rep %ld/%ld %-6s %8.3f s  %4.0f requests (Kinto logged %ld, %ld subrequests)  peak %6.1f MB  (%.1f s)\n",
                    g_up_n, rep + 1, g_up_reps, SIDE_NAME[side], r.secs, r.requests, up_logged[side][rep],
                    up_logged_sub[side][rep], peak, now_s() - t0);
        }
    }
    /* 3) encrypted against plain: first one collection per side filled by
     * Tureen's own sync up (so the encrypted one holds what an encrypting
     * device leaves there), then per repetition 3a) sync down of it into a
     * fresh store and 3b) sync up into a fresh collection. Both sides are
     * Tureen; their order flips every repetition, so drift on the shared
     * machine falls on both. */
    double *enc_down[2], *enc_up[2], enc_down_peak[2] = {0}, enc_up_peak[2] = {0}, enc_fill[2] = {0};
    for (int s = 0; s < 2; s++) {
        enc_down[s] = xmalloc((size_t)g_enc_reps * sizeof(double));
        enc_up[s] = xmalloc((size_t)g_enc_reps * sizeof(double));
    }
    if (do_enc) fprintf(stderr, "3) sync down and up %ld records, encrypted vs plain\n", g_enc_n);
    for (int e = 0; e < 2 && do_enc; e++) {
        char coll[64];
        snprintf(coll, sizeof coll, "enc-down-%s", ENC_NAME[e]);
        make_collection(&c, coll);
        warg a = {TUREEN, store_t, coll, e, g_enc_n};
        double peak = 0;
        result r = run_child(wl_up, &a, &peak);
        tureen_remove_if_there(store_t);
        if (server_count(&c, coll) != g_enc_n) die("filling %s left %lld records, not %ld", coll, server_count(&c, coll), g_enc_n);
        check_sealed(&c, coll, e);
        enc_fill[e] = r.secs;
        fprintf(stderr, "  filled %s by tureen_sync_up in %.3f s\n", coll, r.secs);
    }
    for (long rep = 0; rep < g_enc_reps; rep++) {
        for (int k = 0; k < 2; k++) {
            int e = rep % 2 ? 1 - k : k;
            char coll[64];
            snprintf(coll, sizeof coll, "enc-down-%s", ENC_NAME[e]);
            warg a = {TUREEN, store_t, coll, e, g_enc_n};
            double peak = 0;
            result r = run_child(wl_down, &a, &peak);
            tureen_remove_if_there(store_t);
            enc_down[e][rep] = r.secs;
            if (peak > enc_down_peak[e]) enc_down_peak[e] = peak;
            fprintf(stderr, "  3a) sync down %ld  rep %ld/%ld %-9s %8.3f s  %9.0f records/s  peak %6.1f MB\n", g_enc_n,
                    rep + 1, g_enc_reps, ENC_NAME[e], r.secs, (double)g_enc_n / r.secs, peak);
        }
        for (int k = 0; k < 2; k++) {
            int e = rep % 2 ? 1 - k : k;
            char coll[64];
            snprintf(coll, sizeof coll, "enc-up-%s-%ld", ENC_NAME[e], rep + 1);
            make_collection(&c, coll);
            warg a = {TUREEN, store_t, coll, e, g_enc_n};
            double peak = 0;
            result r = run_child(wl_up, &a, &peak);
            tureen_remove_if_there(store_t);
            long long held = server_count(&c, coll);
            if (held != g_enc_n) die("the %s sync up left %lld records in %s, not %ld", ENC_NAME[e], held, coll, g_enc_n);
            check_sealed(&c, coll, e);
            drop_collection(&c, coll);
            enc_up[e][rep] = r.secs;
            if (peak > enc_up_peak[e]) enc_up_peak[e] = peak;
            fprintf(stderr, "  3b) sync up %ld  rep %ld/%ld %-9s %8.3f s  %9.0f records/s  peak %6.1f MB\n", g_enc_n,
                    rep + 1, g_enc_reps, ENC_NAME[e], r.secs, (double)g_enc_n / r.secs, peak);
        }
    }
    for (int e = 0; e < 2 && do_enc; e++) {
        char coll[64];
        snprintf(coll, sizeof coll, "enc-down-%s", ENC_NAME[e]);
        drop_collection(&c, coll);
    }
    http_close(&c);

    /* The report. Medians are taken on copies: the per-repetition figures
     * are printed in order below. */
    double each_down[3][MAX_SHOWN_REPS], each_fetch[3][MAX_SHOWN_REPS], each_up[2][MAX_SHOWN_REPS], each_own[MAX_SHOWN_REPS];
    for (int s = 0; s < 3; s++)
        for (long i = 0; i < g_reps && i < MAX_SHOWN_REPS; i++) {
            each_down[s][i] = down[s][i];
            each_fetch[s][i] = down_fetch[s][i];
            each_own[i] = down_own[i];
        }
    double m_own = median(down_own, g_reps);
    for (int s = 0; s < 2; s++)
        for (long i = 0; i < g_up_reps && i < MAX_SHOWN_REPS; i++) each_up[s][i] = up[s][i];
    double m_down[3], m_fetch[3], m_up[2];
    for (int s = 0; s < 3; s++) {
        m_down[s] = with_peer || s != PEER ? median(down[s], g_reps) : 0;
        m_fetch[s] = with_peer || s != PEER ? median(down_fetch[s], g_reps) : 0;
    }
    for (int s = 0; s < 2; s++) m_up[s] = median(up[s], g_up_reps);
    double tureen_up_req = max_of(up_req[TUREEN], g_up_reps);
    long logged_max = -1, logged_sub = -1;
    for (long i = 0; i < g_up_reps; i++) {
        if (up_logged[TUREEN][i] > logged_max) logged_max = up_logged[TUREEN][i];
        if (up_logged_sub[TUREEN][i] > logged_sub) logged_sub = up_logged_sub[TUREEN][i];
    }
    long req_bar = (g_up_n + 24) / 25 + 1;

    printf("Tureen sync benchmark: tureen_sync_down / tureen_sync_up against Kinto, beside the floor (libcurl + hand-written\n"
           "SQLCipher) and a peer (the kinto-http Python client + Python's sqlite3)\n");
    print_versions(cipher);
    printf("  libcurl              %s (the floor's; libtureen links the system libcurl too)\n", curl_version_info(CURLVERSION_NOW)->version);
    printf("  peer                 %s: %s\n", with_peer ? g_peer : "-", peer_about);
    printf("  server               Kinto %s at %s, memory backend, batch_max_requests %ld, one server for every side\n",
           g_kinto_version, g_url, g_batch_max);
    printf("  records              %ld of ~1 KB: \"id\" + the soups bench's entry (name, age, score, city, ext, rank, notes),\n"
           "                       seeded into bucket %s, collection \"down\" through /batch (%ld requests, %.1f s)\n",
           g_n, g_bucket, seed_requests, t_seed);
    printf("  1) tureen            tureen_sync_down, Kinto target, pages of %d (_limit=%d&_sort=last_modified, then by stamp),\n"
           "                       into a fresh store: passphrase key (PBKDF2, default settings), soup \"%s\" with a string index on\n"
           "                       \"id\", default merge mode; opening, registering the soup and a first read (tureen_count,\n"
           "                       which opens the store's reader connection) are not timed; Tureen\n"
           "                       downloads the next page on a second thread while it commits the current one, where the\n"
           "                       floor and the peer fetch, then write (as the issue defines them)\n",
           KINTO_PAGE, KINTO_PAGE, SOUP);
    printf("     floor             the same pages with libcurl (one handle, keep-alive), each page cut into records by a small\n"
           "                       scanner and inserted (record text, created, lastModified, id) in one transaction per page;\n"
           "                       table: Tureen's soup table with the id as a column, indexes on created, lastModified, id\n"
           "                       (1a), its time in HTTP alone (1c); then, nothing written, Tureen's own requests (1d): after\n"
           "                       the first page, _sort=last_modified&_limit=%d&min_last_modified=<the last page's highest stamp>\n",
           KINTO_PAGE + 1);
    printf("     peer              client.get_records(_limit=%d, _sort=\"last_modified\", pages=inf), then executemany of\n"
           "                       (id, json.dumps(record)) in one transaction; table (id TEXT indexed, json TEXT)\n", KINTO_PAGE);
    printf("  2) tureen            %ld records saved by tureen_local_upsert (untimed), then tureen_sync_up (timed) into a fresh\n"
           "                       collection; requests: the state's \"requests\" and Kinto's own log (%s)\n",
           g_up_n, g_kinto_log ? g_kinto_log : "not given: BENCH_SYNC_KINTO_LOG");
    printf("     floor             the same %ld records as rows flagged local: one SELECT, then /batch POSTs of %ld PUTs with\n"
           "                       If-None-Match: * (as Tureen creates), each batch's rows marked clean in one transaction\n",
           g_up_n, g_batch_max);
    printf("  floor settings       raw key (opening is not timed; per page, encryption costs the same as Tureen's passphrase key),\n"
           "                       cipher_page_size %ld, synchronous %s, cache_size -%ld KiB (meant to equal Tureen's), WAL\n",
           g_page, g_sync, g_cache_kib);
    printf("  repetitions          1) %ld, 2) %ld per side; sides alternate (1: tureen, floor, peer; 2: tureen, floor), each on\n"
           "                       a fresh store or file; the median is reported\n", g_reps, g_up_reps);
    printf("  files                %s (removed afterwards)\n", g_dir);
    printf("  peak MB              tureen / floor: child ru_maxrss from wait4 (an idle child peaks at %.1f MB); peer: its own\n"
           "                       ru_maxrss (the Python interpreter included)\n", base);
    printf("  3a) encrypted        tureen_sync_down as 1), of %ld records, from a collection tureen_sync_up filled (%.1f s) with a\n"
           "                       target carrying \"encryption\" (one 256-bit key, AES-256-GCM), so it holds only envelopes\n"
           "                       (checked); each record is opened on the device\n"
           "     plain             the same from a collection the same target without \"encryption\" filled (%.1f s), in clear\n",
           g_enc_n, enc_fill[ENCRYPTED], enc_fill[PLAIN]);
    printf("  3b) encrypted        as 2), %ld records saved (untimed), then tureen_sync_up (timed) into a fresh collection with\n"
           "                       the encrypting target (sealed on the server: checked), the collection deleted afterwards\n"
           "     plain             the same with the target without \"encryption\"\n", g_enc_n);
    printf("  repetitions 3)       %ld per side; both sides are Tureen, in a fresh child and store each; the order of the sides\n"
           "                       flips every repetition; the median is reported\n", g_enc_reps);
    {
        char cpus[256];
        cpu_list(cpus, sizeof cpus);
        printf("  machine              %ld online CPUs; this program and its children run on CPU %s (sched_getaffinity);\n"
               "                       Kinto runs on the same machine, on the CPUs it was started with\n",
               sysconf(_SC_NPROCESSORS_ONLN), cpus);
    }
    printf("\n");

    printf("%-40s | %-22s | %-26s | %-10s | %-27s | %s\n", "workload", "tureen", "against", "ratio", "bar", "peak MB (tureen / against)");
    printf("%.40s-+-%.22s-+-%.26s-+-%.10s-+-%.27s-+-%.26s\n",
           "--------------------------------------------------", "--------------------------------------------------",
           "--------------------------------------------------", "--------------------------------------------------",
           "--------------------------------------------------", "--------------------------------------------------");
    char label[96], tv[64], av[64], ratio[32], peak[48];
    double rf = m_down[FLOOR] > 0 ? m_down[TUREEN] / m_down[FLOOR] : 0;
    snprintf(label, sizeof label, "1a) sync down %ld (pages of %d)", g_n, KINTO_PAGE);
    snprintf(tv, sizeof tv, "%.3f s (%.0f r/s)", m_down[TUREEN], (double)g_n / m_down[TUREEN]);
    snprintf(av, sizeof av, "floor %.3f s (%.0f r/s)", m_down[FLOOR], (double)g_n / m_down[FLOOR]);
    snprintf(ratio, sizeof ratio, "%.2f t/f", rf);
    snprintf(peak, sizeof peak, "%.1f / %.1f", down_peak[TUREEN], down_peak[FLOOR]);
    row(label, tv, av, ratio, "t/f <= 1.30", rf > 1.30, peak);
    if (with_peer) {
        double rp = m_down[PEER] > 0 ? m_down[TUREEN] / m_down[PEER] : 0;
        snprintf(label, sizeof label, "1b) sync down %ld, against the peer", g_n);
        snprintf(av, sizeof av, "peer %.3f s (%.0f r/s)", m_down[PEER], (double)g_n / m_down[PEER]);
        snprintf(ratio, sizeof ratio, "%.2f t/p", rp);
        snprintf(peak, sizeof peak, "%.1f / %.1f", down_peak[TUREEN], down_peak[PEER]);
        row(label, tv, av, ratio, "t/p <= 1.00", rp > 1.00, peak);
    }
    /* The physical floor: the floor's time in HTTP alone, the same pages
     * fetched with curl and nothing written (what Kinto takes to serve
     * them). Tureen pipelines, so it can come close to this. */
    double rh = m_fetch[FLOOR] > 0 ? m_down[TUREEN] / m_fetch[FLOOR] : 0;
    snprintf(label, sizeof label, "1c) sync down %ld, against fetching", g_n);
    snprintf(av, sizeof av, "fetch %.3f s (%.0f r/s)", m_fetch[FLOOR], (double)g_n / m_fetch[FLOOR]);
    snprintf(ratio, sizeof ratio, "%.2f t/fetch", rh);
    snprintf(peak, sizeof peak, "%.1f / -", down_peak[TUREEN]);
    row(label, tv, av, ratio, "t/fetch <= 1.10", rh > 1.10, peak);
    /* The same against Tureen's own requests fetched alone: the time Kinto
     * takes to serve the very pages Tureen asks for. */
    double ro = m_own > 0 ? m_down[TUREEN] / m_own : 0;
    snprintf(label, sizeof label, "1d) sync down %ld, vs its own pages", g_n);
    snprintf(av, sizeof av, "fetch %.3f s (%.0f r/s)", m_own, (double)g_n / m_own);
    snprintf(ratio, sizeof ratio, "%.2f t/fetch", ro);
    row(label, tv, av, ratio, "t/fetch <= 1.10", ro > 1.10, peak);
    if (do_up) {
        snprintf(label, sizeof label, "2a) sync up %ld changes: requests", g_up_n);
        snprintf(tv, sizeof tv, "%.0f (%.1f changes/req)", tureen_up_req, tureen_up_req > 0 ? (double)g_up_n / tureen_up_req : 0);
        if (logged_max >= 0)
            snprintf(av, sizeof av, "Kinto logged %ld (%ld sub)", logged_max, logged_sub);
        else
            snprintf(av, sizeof av, "Kinto log not read");
        snprintf(ratio, sizeof ratio, "-");
        snprintf(peak, sizeof peak, "%.1f / %.1f", up_peak[TUREEN], up_peak[FLOOR]);
        {
            char bar[48];
            snprintf(bar, sizeof bar, "requests <= %ld", req_bar);
            long worst = (long)tureen_up_req > logged_max ? (long)tureen_up_req : logged_max;
            row(label, tv, av, ratio, bar, worst > req_bar, peak);
    }
    double ru = m_up[FLOOR] > 0 ? m_up[TUREEN] / m_up[FLOOR] : 0;
    snprintf(label, sizeof label, "2b) sync up %ld changes: time", g_up_n);
    snprintf(tv, sizeof tv, "%.3f s (%.0f r/s)", m_up[TUREEN], (double)g_up_n / m_up[TUREEN]);
    snprintf(av, sizeof av, "floor %.3f s (%.0f r/s)", m_up[FLOOR], (double)g_up_n / m_up[FLOOR]);
    snprintf(ratio, sizeof ratio, "%.2f t/f", ru);
    row(label, tv, av, ratio, "-", 0, peak);
    }
    double m_enc_down[2], m_enc_up[2], each_enc_down[2][MAX_SHOWN_REPS], each_enc_up[2][MAX_SHOWN_REPS];
    for (int e = 0; e < 2; e++) {
        for (long i = 0; i < g_enc_reps && i < MAX_SHOWN_REPS; i++) {
            each_enc_down[e][i] = enc_down[e][i];
            each_enc_up[e][i] = enc_up[e][i];
        }
        m_enc_down[e] = median(enc_down[e], g_enc_reps);
        m_enc_up[e] = median(enc_up[e], g_enc_reps);
    }
    if (do_enc) {
        double red = m_enc_down[PLAIN] > 0 ? m_enc_down[ENCRYPTED] / m_enc_down[PLAIN] : 0;
        snprintf(label, sizeof label, "3a) sync down %ld, encrypted vs plain", g_enc_n);
        snprintf(tv, sizeof tv, "%.3f s (%.0f r/s)", m_enc_down[ENCRYPTED], (double)g_enc_n / m_enc_down[ENCRYPTED]);
        snprintf(av, sizeof av, "plain %.3f s (%.0f r/s)", m_enc_down[PLAIN], (double)g_enc_n / m_enc_down[PLAIN]);
        snprintf(ratio, sizeof ratio, "%.2f e/p", red);
        snprintf(peak, sizeof peak, "%.1f / %.1f", enc_down_peak[ENCRYPTED], enc_down_peak[PLAIN]);
        row(label, tv, av, ratio, "e/p <= 1.15", red > 1.15, peak);
        double reu = m_enc_up[PLAIN] > 0 ? m_enc_up[ENCRYPTED] / m_enc_up[PLAIN] : 0;
        snprintf(label, sizeof label, "3b) sync up %ld, encrypted vs plain", g_enc_n);
        snprintf(tv, sizeof tv, "%.3f s (%.0f r/s)", m_enc_up[ENCRYPTED], (double)g_enc_n / m_enc_up[ENCRYPTED]);
        snprintf(av, sizeof av, "plain %.3f s (%.0f r/s)", m_enc_up[PLAIN], (double)g_enc_n / m_enc_up[PLAIN]);
        snprintf(ratio, sizeof ratio, "%.2f e/p", reu);
        snprintf(peak, sizeof peak, "%.1f / %.1f", enc_up_peak[ENCRYPTED], enc_up_peak[PLAIN]);
        row(label, tv, av, ratio, "e/p <= 1.15", reu > 1.15, peak);
    }
    printf("\n");
    printf("Times are the median of the repetitions; r/s = records per second; t/f and t/p = tureen's time / the floor's or\n"
           "the peer's (lower is better for tureen); e/p = the encrypted side's time / the plain side's. Every side waits on\n"
           "the same Kinto, which is most of each time.\n");
    double m_up_http = median(up_http, g_up_reps);
    printf("Where the time goes (medians): sync down: floor %.3f s in HTTP + %.3f s local", m_fetch[FLOOR],
           m_down[FLOOR] - m_fetch[FLOOR]);
    if (with_peer) printf("; peer %.3f s in get_records + %.3f s in sqlite3", m_fetch[PEER], m_down[PEER] - m_fetch[PEER]);
    printf(".\n");
    if (do_up) printf("  sync up: floor %.3f s in HTTP + %.3f s local.\n", m_up_http, m_up[FLOOR] - m_up_http);
    printf("Requests: sync down: tureen %.0f (state), floor %.0f; sync up: tureen %.0f (state), floor %.0f.\n",
           max_of(down_req, g_reps < MAX_SHOWN_REPS ? g_reps : MAX_SHOWN_REPS), floor_requests, tureen_up_req,
           max_of(up_req[FLOOR], g_up_reps));
    printf("Files after sync down (closed): tureen %.1f MB, floor %.1f MB. Tureen also marks each entry as its own base\n"
           "(the server copy merge modes compare with) in tureen_sync_bases; the floor keeps none.\n", down_mb[TUREEN], down_mb[FLOOR]);
    printf("The untimed first read after opening took %.3f s (median): it opens the store's reader connection, which a\n"
           "sync started right after tureen_store_open pays inside tureen_sync_down.\n", median(first_read, g_reps));
    printf("Each repetition, seconds (in order):\n");
    {
        const char *names2[2] = {"tureen", "floor"};
        const double *e1[2] = {each_down[TUREEN], each_down[FLOOR]};
        print_reps("1) sync down", 16, names2, e1, g_reps, 3);
        if (with_peer) {
            const char *names_p[2] = {"peer", "peer get_records"};
            const double *ep[2] = {each_down[PEER], each_fetch[PEER]};
            print_reps("1) sync down", 16, names_p, ep, g_reps, 3);
        }
        const char *names_f[2] = {"floor HTTP", "floor local"};
        double local[MAX_SHOWN_REPS];
        for (long i = 0; i < g_reps && i < MAX_SHOWN_REPS; i++) local[i] = each_down[FLOOR][i] - each_fetch[FLOOR][i];
        const double *ef[2] = {each_fetch[FLOOR], local};
        print_reps("1) sync down", 16, names_f, ef, g_reps, 3);
        const char *names_o[2] = {"floor HTTP of Tureen's pages", "tureen beyond that"};
        double beyond[MAX_SHOWN_REPS];
        for (long i = 0; i < g_reps && i < MAX_SHOWN_REPS; i++) beyond[i] = each_down[TUREEN][i] - each_own[i];
        const double *eo[2] = {each_own, beyond};
        print_reps("1) sync down", 16, names_o, eo, g_reps, 3);
        const double *e2[2] = {each_up[TUREEN], each_up[FLOOR]};
        print_reps("2) sync up", 16, names2, e2, g_up_reps, 3);
        const char *names_e[2] = {"encrypted", "plain"};
        const double *e3a[2] = {each_enc_down[ENCRYPTED], each_enc_down[PLAIN]};
        print_reps("3a) sync down", 16, names_e, e3a, g_enc_reps, 3);
        const double *e3b[2] = {each_enc_up[ENCRYPTED], each_enc_up[PLAIN]};
        print_reps("3b) sync up", 16, names_e, e3b, g_enc_reps, 3);
    }
    fflush(stdout);

    free(first_read);
    free(down_own);
    free(up_http);
    for (int s = 0; s < 3; s++) {
        free(down[s]);
        free(down_fetch[s]);
    }
    for (int s = 0; s < 2; s++) {
        free(enc_down[s]);
        free(enc_up[s]);
        free(up[s]);
        free(up_req[s]);
        free(up_logged[s]);
        free(up_logged_sub[s]);
    }
    curl_global_cleanup();
    remove_dir();
    return 0;
}
