/* What every per-area example in this directory shares: stop on a failed
 * call with the library's message, open a fresh store in a directory, and
 * read the library's JSON with cJSON (Debian's libcjson-dev), as a C program
 * would rather than searching the text.
 * Build an example: cc -std=c99 example.c $(pkg-config --cflags --libs tureen libcjson) */
#ifndef TUREEN_EXAMPLE_H
#define TUREEN_EXAMPLE_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cJSON.h>
#include "tureen.h"

/* Prints the failing call and the library's message, then exits. */
static inline void check(int rc, const char *what)
{
    if (rc != TUREEN_OK) {
        fprintf(stderr, "%s failed: status %d: %s\n", what, rc, tureen_errmsg());
        exit(1);
    }
}

/* Exits with a message when an expectation of the example does not hold:
 * `make test` runs the examples, so a wrong answer fails the build. */
static inline void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "unexpected: %s\n", what);
        exit(1);
    }
}

/* A new, empty store `name` in `dir`, keyed by a passphrase. */
static inline tureen_store *open_fresh_store(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.tureen", dir, name);
    tureen_store_remove(path); /* a leftover from an earlier run, if any */
    tureen_store *store = NULL;
    check(tureen_store_open(path, "{\"key\": \"correct horse battery staple\"}", &store), "open");
    return store;
}

/* The examples that sync take KINTO_URL [directory]: exits with the usage
 * when the URL is missing. Each run syncs a collection of its own,
 * `name`-<seconds>, in the bucket "examples", created on first use; the
 * target goes to `out`. */
static inline void kinto_target_from_args(int argc, char **argv, const char *name, char *out, size_t size)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s KINTO_URL [directory]\n", argv[0]);
        exit(2);
    }
    snprintf(out, size,
             "{\"type\": \"kinto\", \"url\": \"%s\", \"bucket\": \"examples\", \"collection\": \"%s-%ld\","
             " \"auth\": {\"user\": \"demo\", \"password\": \"demo-password\"}, \"create\": true}",
             argv[1], name, (long)time(NULL));
}

/* Parses JSON the library returned and frees the library's copy: the caller
 * owns the tree (cJSON_Delete). */
static inline cJSON *take_json(char *json)
{
    cJSON *tree = cJSON_Parse(json);
    tureen_free(json);
    expect(tree != NULL, "the library returned JSON that cJSON cannot parse");
    return tree;
}

/* Serialises a tree built with cJSON for a call, and deletes the tree: the
 * caller frees the text with free(). */
static inline char *give_json(cJSON *tree)
{
    char *text = cJSON_PrintUnformatted(tree);
    cJSON_Delete(tree);
    expect(text != NULL, "out of memory");
    return text;
}

/* A member of an object as a number (0 when absent). */
static inline double number_of(const cJSON *object, const char *name)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
    return cJSON_IsNumber(item) ? item->valuedouble : 0;
}

/* A member of an object as a string ("" when absent). */
static inline const char *string_of(const cJSON *object, const char *name)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
    return cJSON_IsString(item) ? item->valuestring : "";
}

#endif
