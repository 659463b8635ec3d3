/* Shared by the C sync tests: the Kinto target the test runner started
 * (TUREEN_KINTO_URL) and small JSON helpers over the library's results. */
#ifndef TUREEN_TEST_SYNC_UTIL_H
#define TUREEN_TEST_SYNC_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tureen.h"

/* A Kinto target JSON for `collection` in bucket "ctests" (created on use). */
static inline void kinto_target(char *out, size_t n, const char *collection)
{
    const char *url = getenv("TUREEN_KINTO_URL");
    if (!url || !*url) {
        fprintf(stderr, "TUREEN_KINTO_URL is not set: Tests/c/run.sh starts Kinto and sets it\n");
        exit(1);
    }
    snprintf(out, n,
             "{\"type\":\"kinto\",\"url\":\"%s\",\"bucket\":\"ctests\",\"collection\":\"%s\","
             "\"auth\":{\"user\":\"ctest\",\"password\":\"pw\"},\"create\":true}",
             url, collection);
}

/* The integer after "\"key\":" in json, or -1. */
static inline long long json_int(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = json ? strstr(json, pat) : NULL;
    return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/* True when json has "\"key\":\"value\"". */
static inline int json_has(const char *json, const char *key, const char *value)
{
    char pat[256];
    snprintf(pat, sizeof pat, "\"%s\":\"%s\"", key, value);
    return json && strstr(json, pat) != NULL;
}

static inline long long count_all(tureen_store *s, const char *soup)
{
    char spec[256];
    long long n = -1;
    int64_t c = 0;
    snprintf(spec, sizeof spec, "{\"queryType\":\"all\",\"soupName\":\"%s\",\"pageSize\":10}", soup);
    if (tureen_count(s, spec, &c) == TUREEN_OK) n = (long long)c;
    return n;
}
#endif
