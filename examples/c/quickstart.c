/* Tureen quickstart in C: open an encrypted store, see a wrong key refused,
 * change the key, and clean up. Build: see the Makefile's `demo` target.
 * Usage: quickstart [directory]   (default: /tmp) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tureen.h"

/* Prints the failing call and the library's message, then exits. */
static void check(int rc, const char *what)
{
    if (rc != TUREEN_OK) {
        fprintf(stderr, "%s failed: status %d: %s\n", what, rc, tureen_errmsg());
        exit(1);
    }
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/quickstart-c.tureen", dir);
    tureen_store_remove(path); /* a leftover from an earlier run, if any */

    printf("libtureen %s (header %d, library %d)\n", tureen_version(),
           TUREEN_VERSION_NUMBER, tureen_version_number());
    if (tureen_version_number() != TUREEN_VERSION_NUMBER) {
        fprintf(stderr, "header and library versions differ\n");
        return 1;
    }

    tureen_store *store = NULL;
    check(tureen_store_open(path, "{\"key\": \"correct horse battery staple\"}", &store), "open");
    int64_t bytes = 0;
    check(tureen_store_size(store, &bytes), "size");
    printf("opened encrypted store %s (%lld bytes on disk)\n", path, (long long)bytes);
    check(tureen_store_close(store), "close");

    tureen_store *other = NULL;
    int rc = tureen_store_open(path, "{\"key\": \"wrong guess\"}", &other);
    printf("a wrong key is refused: status %d (TUREEN_E_KEY is %d): %s\n", rc, TUREEN_E_KEY, tureen_errmsg());
    if (rc != TUREEN_E_KEY || other != NULL) return 1;

    check(tureen_store_open(path, "{\"key\": \"correct horse battery staple\"}", &store), "reopen");

    /* A soup of contacts, indexed by name, city and email. */
    check(tureen_soup_register(store, "contacts",
          "[{\"path\": \"name\", \"type\": \"string\"},"
          " {\"path\": \"address.city\", \"type\": \"string\"},"
          " {\"path\": \"email\", \"type\": \"string\"}]"), "register soup");
    char *json = NULL;
    check(tureen_upsert(store, "contacts",
          "[{\"name\": \"Ada\", \"email\": \"ada@example.org\", \"address\": {\"city\": \"London\"}},"
          " {\"name\": \"Grace\", \"email\": \"grace@example.org\", \"address\": {\"city\": \"New York\"}},"
          " {\"name\": \"Alan\", \"email\": \"alan@example.org\", \"address\": {\"city\": \"London\"}}]",
          NULL, &json), "upsert");
    printf("upserted: %s\n", json);
    tureen_free(json);

    /* Upsert by external id: the entry with this email is updated, not duplicated. */
    check(tureen_upsert(store, "contacts",
          "{\"name\": \"Ada Lovelace\", \"email\": \"ada@example.org\", \"address\": {\"city\": \"London\"}}",
          "email", &json), "upsert by external id");
    printf("updated by email: %s\n", json);
    tureen_free(json);

    const char *in_london = "{\"queryType\": \"exact\", \"soupName\": \"contacts\", \"indexPath\": \"address.city\","
                            " \"matchKey\": \"London\", \"orderPath\": \"name\"}";
    int64_t n = 0;
    check(tureen_count(store, in_london, &n), "count");
    check(tureen_query(store, in_london, 0, &json), "query");
    printf("%lld contacts in London: %s\n", (long long)n, json);
    tureen_free(json);

    /* Add an index later: alter with reindex computes it for existing entries. */
    check(tureen_soup_alter(store, "contacts",
          "[{\"path\": \"name\", \"type\": \"string\"}, {\"path\": \"email\", \"type\": \"string\"},"
          " {\"path\": \"address.city\", \"type\": \"full_text\"}]", 1), "alter");
    check(tureen_soup_index_specs(store, "contacts", &json), "index specs");
    printf("index specs after alter: %s\n", json);
    tureen_free(json);
    check(tureen_store_rekey(store, "{\"raw_key\": \"2dd29ca851e7b56e4697b0e1f08507293d761a05ce4d1b628663f411a8086d99\"}"), "rekey");
    printf("rekeyed to a raw 256-bit key\n");
    check(tureen_store_close(store), "close");

    rc = tureen_store_open(path, "{\"key\": \"correct horse battery staple\"}", &other);
    printf("the old passphrase no longer opens it: status %d\n", rc);
    if (rc != TUREEN_E_KEY) return 1;

    check(tureen_store_remove(path), "remove");
    printf("store removed\n");
    return 0;
}
