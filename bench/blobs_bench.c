/*
 * blobs_bench.c - a large file into a store and back out: tureen_blob_import
 * and tureen_blob_export against the floor, the same bytes sealed by hand
 * into a file with the same AEAD from libcrypto (AES-256-GCM in 64 KiB
 * chunks, the key set once, a nonce and associated data per chunk), flushed
 * with fdatasync and renamed into place, and opened back the same way.
 *
 * Every measurement runs in a forked child (bench_common.h), so its peak RSS
 * (from wait4) is that measurement's own: importing a file of hundreds of
 * MB must cost a few MB. See bench/README.md for what each row means.
 *
 * Usage: blobs_bench
 * Environment: BENCH_BLOB_MIB (256: the file's size), BENCH_REPS (3),
 *   BENCH_TMP (/tmp).
 * Exit status: 0 when everything ran (whether or not a bar was met), 1 on
 * any error.
 */
#define BENCH_PROG "blobs_bench"
#pragma GCC diagnostic ignored "-Wunused-function" /* bench_common.h serves the entry benches too */
#include "bench_common.h"
#include <openssl/evp.h>

#define CHUNK (64 * 1024) /* Tureen's chunk (SealedBlob.chunkSize): the floor uses the same */
#define TAG 16
#define PIECE (1 << 20)   /* read from the file, and sealed chunks gathered per write(2), as Tureen does */
#define HEADER_SIZE 45    /* Tureen's header: magic, chunk size, key id "b1", 32-byte salt */
#define BAR 0.90      /* tureen's throughput / the floor's, at least */
#define PEAK_BAR 64.0 /* tureen's peak RSS, MB, at most */

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

/* ------------------------------------------------------------------------ */
/* The floor: AES-256-GCM by hand                                            */
/* ------------------------------------------------------------------------ */

static unsigned char g_header[HEADER_SIZE];
static void gcm_check(int ok, const char *what)
{
    if (ok != 1) die("floor: libcrypto's %s failed", what);
}

/* Whether the floor takes the SHA-256 of the plaintext, as a content-addressed store must (inline, on one thread);
 * the reference rows run without it. */
static int g_floor_hash = 1;

/* The floor's SHA-256 of the bytes it moves (a digest a store would name the blob by), or nothing. */
static EVP_MD_CTX *floor_hasher(void)
{
    if (!g_floor_hash) return NULL;
    EVP_MD_CTX *h = EVP_MD_CTX_new();
    if (!h) die("floor: no digest context");
    gcm_check(EVP_DigestInit_ex(h, EVP_sha256(), NULL), "DigestInit");
    return h;
}

static void floor_hash(EVP_MD_CTX *h, const unsigned char *p, size_t n)
{
    if (h) gcm_check(EVP_DigestUpdate(h, p, n), "DigestUpdate");
}

static void floor_hash_end(EVP_MD_CTX *h)
{
    unsigned char md[32];
    unsigned int len;
    if (!h) return;
    gcm_check(EVP_DigestFinal_ex(h, md, &len), "DigestFinal");
    EVP_MD_CTX_free(h);
}

/* A context holding the key (its schedule made once, as Tureen's ChunkCipher does). */
static EVP_CIPHER_CTX *floor_cipher(void)
{
    static const unsigned char key[32] = {7};
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx) die("floor: no cipher context");
    gcm_check(EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL), "EncryptInit");
    gcm_check(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL), "SET_IVLEN");
    gcm_check(EVP_EncryptInit_ex(ctx, NULL, NULL, key, NULL), "EncryptInit (key)");
    memcpy(g_header, "TRB\x01", 4);
    for (int i = 0; i < 4; i++) g_header[4 + i] = (unsigned char)(CHUNK >> (24 - 8 * i));
    g_header[8] = 2;
    memcpy(g_header + 9, "b1", 2);
    return ctx;
}

/* Chunk `index`'s nonce and associated data (the header, then 1 on the last chunk). */
static void floor_start(EVP_CIPHER_CTX *ctx, int enc, uint64_t index, int last)
{
    unsigned char iv[12] = {0};
    for (int i = 0; i < 8; i++) iv[4 + i] = (unsigned char)(index >> (56 - 8 * i));
    int len;
    unsigned char flag = (unsigned char)last;
    gcm_check(EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc), "CipherInit (nonce)");
    gcm_check(EVP_CipherUpdate(ctx, NULL, &len, g_header, HEADER_SIZE), "CipherUpdate (header)");
    gcm_check(EVP_CipherUpdate(ctx, NULL, &len, &flag, 1), "CipherUpdate (flag)");
}

/* Seals `n` bytes as chunk `index` into `out`; returns n + TAG. */
static size_t floor_seal(EVP_CIPHER_CTX *ctx, const unsigned char *in, size_t n, uint64_t index, int last, unsigned char *out)
{
    int len;
    floor_start(ctx, 1, index, last);
    if (n > 0) gcm_check(EVP_EncryptUpdate(ctx, out, &len, in, (int)n), "EncryptUpdate");
    gcm_check(EVP_EncryptFinal_ex(ctx, out + n, &len), "EncryptFinal");
    gcm_check(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAG, out + n), "GET_TAG");
    return n + TAG;
}

/* Opens chunk `index` (`n` plaintext bytes and the tag) into `out`. */
static void floor_unseal(EVP_CIPHER_CTX *ctx, unsigned char *in, size_t n, uint64_t index, int last, unsigned char *out)
{
    int len;
    floor_start(ctx, 0, index, last);
    if (n > 0) gcm_check(EVP_DecryptUpdate(ctx, out, &len, in, (int)n), "DecryptUpdate");
    gcm_check(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG, in + n), "SET_TAG");
    if (EVP_DecryptFinal_ex(ctx, out + n, &len) != 1) die("floor: chunk %llu does not authenticate", (unsigned long long)index);
}

static void sync_dir_of(const char *path)
{
    char d[4200];
    snprintf(d, sizeof d, "%s", path);
    char *slash = strrchr(d, '/');
    if (slash) *slash = 0;
    int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) die("cannot flush %s: %s", d, strerror(errno));
    close(fd);
}

/* The floor's import: the file sealed into a temporary file beside g_store[FLOOR], fdatasync, rename, the directory
 * flushed (what Tureen does before a row may name the blob); no hashing. */
static void floor_import(void)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.part", g_store[FLOOR]);
    EVP_CIPHER_CTX *ctx = floor_cipher();
    unsigned char *in = xmalloc(PIECE), *out = xmalloc(PIECE + PIECE / CHUNK * TAG + TAG);
    int src = open(g_src, O_RDONLY | O_CLOEXEC);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (src < 0 || fd < 0) die("floor: cannot open %s or %s: %s", g_src, tmp, strerror(errno));
    write_full(fd, (const char *)g_header, HEADER_SIZE, tmp);
    EVP_MD_CTX *h = floor_hasher();
    uint64_t index = 0;
    for (;;) {
        size_t n = read_full(src, (char *)in, PIECE, g_src), o = 0, at = 0;
        floor_hash(h, in, n);
        for (; n - at >= CHUNK; at += CHUNK) o += floor_seal(ctx, in + at, CHUNK, index++, 0, out + o);
        if (n < PIECE) o += floor_seal(ctx, in + at, n - at, index++, 1, out + o);
        write_full(fd, (const char *)out, o, tmp);
        if (n < PIECE) break;
    }
    floor_hash_end(h);
    if (fdatasync(fd) != 0 || close(fd) != 0) die("floor: writing %s: %s", tmp, strerror(errno));
    if (rename(tmp, g_store[FLOOR]) != 0) die("floor: rename: %s", strerror(errno));
    sync_dir_of(g_store[FLOOR]);
    close(src);
    free(in);
    free(out);
    EVP_CIPHER_CTX_free(ctx);
}

/* The floor's export: the sealed file opened chunk by chunk into a temporary file beside g_out, fdatasync, rename
 * (what tureen_blob_export does, less its hashing). */
static void floor_export(void)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.part", g_out);
    EVP_CIPHER_CTX *ctx = floor_cipher();
    size_t sealed_piece = PIECE / CHUNK * (CHUNK + TAG);
    unsigned char *in = xmalloc(sealed_piece), *out = xmalloc(PIECE);
    int src = open(g_store[FLOOR], O_RDONLY | O_CLOEXEC);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (src < 0 || fd < 0) die("floor: cannot open %s or %s: %s", g_store[FLOOR], tmp, strerror(errno));
    if (read_full(src, (char *)in, HEADER_SIZE, g_store[FLOOR]) != HEADER_SIZE) die("floor: no header");
    EVP_MD_CTX *h = floor_hasher();
    uint64_t index = 0;
    for (;;) {
        size_t n = read_full(src, (char *)in, sealed_piece, g_store[FLOOR]), o = 0, at = 0;
        for (; n - at > CHUNK + TAG || (n == sealed_piece && n - at == CHUNK + TAG); at += CHUNK + TAG, o += CHUNK)
            floor_unseal(ctx, in + at, CHUNK, index++, 0, out + o);
        if (n < sealed_piece) {
            floor_unseal(ctx, in + at, n - at - TAG, index++, 1, out + o);
            o += n - at - TAG;
        }
        floor_hash(h, out, o);
        write_full(fd, (const char *)out, o, tmp);
        if (n < sealed_piece) break;
    }
    floor_hash_end(h);
    if (fdatasync(fd) != 0 || close(fd) != 0) die("floor: writing %s: %s", tmp, strerror(errno));
    if (rename(tmp, g_out) != 0) die("floor: rename: %s", strerror(errno));
    close(src);
    free(in);
    free(out);
    EVP_CIPHER_CTX_free(ctx);
}

/* The import: the file into a fresh store (Tureen) or a fresh sealed file (the floor). Opening the store is not
 * timed. */
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
        unlink(path);
        t0 = now_s();
        floor_import();
        t = now_s() - t0;
    }
    r->secs = t;
    r->bytes = (double)g_mib * 1048576.0;
}

/* The export: the blob from the kept store (or the floor's sealed file) into a new file, flushed and renamed into
 * place. The file is compared with the source afterwards, untimed. */
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
        t0 = now_s();
        floor_export();
        t = now_s() - t0;
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
    int ok = ratio >= BAR && s->peak[TUREEN] <= PEAK_BAR;
    snprintf(bar, sizeof bar, ">= %.2f, <= %.0f MB %s", BAR, PEAK_BAR, ok ? "ok" : "BELOW BAR");
    snprintf(peak, sizeof peak, "%.1f / %.1f", s->peak[TUREEN], s->peak[FLOOR]);
    printf("%-28s | %-14s | %-14s | %5.2f | %-24s | %s\n", workload, tv, fv, ratio, bar, peak);
    char ratio_s[32], bar_s[40];
    snprintf(ratio_s, sizeof ratio_s, "%.2f", ratio);
    snprintf(bar_s, sizeof bar_s, "ratio >= %.2f, peak <= %.0f MB", BAR, PEAK_BAR);
    bench_bar("blobs", workload, tv, fv, ratio_s, bar_s, ok);
}

/* A row without a bar: against the floor that does not hash. */
static void reference_row(const char *workload, const summary *s)
{
    char tv[32], fv[32], peak[40];
    snprintf(tv, sizeof tv, "%.1f MB/s", s->rate[TUREEN]);
    snprintf(fv, sizeof fv, "%.1f MB/s", s->rate[FLOOR]);
    snprintf(peak, sizeof peak, "%.1f / %.1f", s->peak[TUREEN], s->peak[FLOOR]);
    printf("%-28s | %-14s | %-14s | %5.2f | %-24s | %s\n", workload, tv, fv,
           s->rate[FLOOR] > 0 ? s->rate[TUREEN] / s->rate[FLOOR] : 0, "- (reference)", peak);
}

int main(void)
{
    g_mib = env_long("BENCH_BLOB_MIB", 256, 1);
    g_reps = env_long("BENCH_REPS", 3, 1);

    char cipher[64];
    bench_start("tureen-blobs-bench", cipher, sizeof cipher);
    path_in_dir(g_src, sizeof g_src, "source.bin");
    path_in_dir(g_store[TUREEN], sizeof g_store[TUREEN], "blobs.tureen");
    path_in_dir(g_store[FLOOR], sizeof g_store[FLOOR], "blob-floor.sealed");
    path_in_dir(g_out, sizeof g_out, "exported.bin");

    fprintf(stderr, "writing the %ld MiB source file\n", g_mib);
    make_source();
    double base = 0;
    warg idle = {TUREEN, NULL};
    result ir;
    run_in_child(wl_idle, &idle, &ir, sizeof ir, "an idle child", &base);

    printf("Tureen blobs benchmark: tureen_blob_import / tureen_blob_export against the floor (AES-256-GCM and fdatasync by hand)\n");
    print_versions(cipher);
    printf("  file                 %ld MiB of pseudo-random bytes (fixed seed), in the page cache (written just before)\n", g_mib);
    printf("  tureen               tureen_blob_import (reads the file 1 MiB at a time, SHA-256, seals 64 KiB chunks with\n");
    printf("                       AES-256-GCM into <store>.blobs/<id>.part, fdatasync, rename, directory fsync, names the\n");
    printf("                       blob); tureen_blob_export (opens the chunks in order, hashes them on a second thread,\n");
    printf("                       writes a file beside the target, checks the SHA-256, fdatasync, rename)\n");
    printf("  floor                libcrypto's EVP AES-256-GCM by hand, the key set once, 64 KiB chunks, the same header as\n");
    printf("                       associated data; import: 1 MiB read, sealed, written to a temporary file, fdatasync, rename,\n");
    printf("                       directory fsync; export: 1 MiB of sealed chunks read, opened, written, fdatasync, rename;\n");
    printf("                       SHA-256 of the plaintext inline, as a content-addressed store must (the reference\n");
    printf("                       rows: without it)\n");
    printf("  timed                the import or export call only (opening and closing the store are not); the exported file\n");
    printf("                       is compared with the source, untimed\n");
    printf("  repetitions          %ld per workload and side, sides alternating, median reported; peak MB is the max\n", g_reps);
    printf("  files                %s (removed afterwards)\n", g_dir);
    print_peak_and_machine(base);
    printf("\n");
    fflush(stdout);

    double t_all = now_s();
    fprintf(stderr, "import\n");
    summary si = measure("import", wl_import, NULL);
    if (!si.digest[0]) die("the import returned no digest");
    char blob_file[4300];
    snprintf(blob_file, sizeof blob_file, "%s.blobs/1", g_store[TUREEN]);
    double sizes[2] = {file_mb(g_store[TUREEN]), file_mb(g_store[FLOOR])}, blob_mb = file_mb(blob_file);
    fprintf(stderr, "export\n");
    summary se = measure("export", wl_export, si.digest);
    g_floor_hash = 0;
    fprintf(stderr, "import and export, the floor without SHA-256 (reference)\n");
    summary si0 = measure("import0", wl_import, NULL);
    summary se0 = measure("export0", wl_export, si.digest);

    char label[64];
    printf("%-28s | %-14s | %-14s | %5s | %-24s | %s\n", "workload", "tureen", "floor", "ratio", "bar", "peak MB (tureen / floor)");
    printf("%.28s-+-%.14s-+-%.14s-+-%.5s-+-%.24s-+-%.24s\n", "--------------------------------", "----------------",
           "----------------", "-----", "--------------------------------", "--------------------------------");
    snprintf(label, sizeof label, "import %ld MiB file", g_mib);
    row(label, &si);
    snprintf(label, sizeof label, "export %ld MiB file", g_mib);
    row(label, &se);
    snprintf(label, sizeof label, "import, floor w/o SHA-256");
    reference_row(label, &si0);
    snprintf(label, sizeof label, "export, floor w/o SHA-256");
    reference_row(label, &se0);
    printf("\n");
    printf("MB/s = 10^6 bytes per second of the timed call (median of the repetitions); ratio = tureen / floor (higher is\n");
    printf("better for tureen).\n");
    printf("Each repetition, MB/s:\n");
    const double *ei[2] = {si.each[TUREEN], si.each[FLOOR]}, *ee[2] = {se.each[TUREEN], se.each[FLOOR]};
    print_reps("import", 8, SIDE_NAME, ei, g_reps, 1);
    print_reps("export", 8, SIDE_NAME, ee, g_reps, 1);
    printf("After the import: tureen's store %.1f MB and blob file %.1f MB, the floor's sealed file %.1f MB. Blob %s.\n",
           sizes[TUREEN], blob_mb, sizes[FLOOR], si.digest);
    printf("Total run %.1f s.\n", now_s() - t_all);
    fflush(stdout);
    tureen_store_remove(g_store[TUREEN]);
    remove_dir();
    return 0;
}
