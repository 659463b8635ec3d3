/* Tureen quickstart in C: open an encrypted store, see a wrong key refused,
 * query a soup, watch a live query refresh while another thread writes,
 * change the key, and clean up. Build: see the Makefile's `demo` target.
 * Usage: quickstart [directory]   (default: /tmp) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tureen.h"

/* What the live query last showed; the library calls on_page on its own
 * thread, so the main thread reads it under the lock. */
static pthread_mutex_t page_lock = PTHREAD_MUTEX_INITIALIZER;
static int pages_seen;
static int last_page_has_linus;

static void on_page(void *ctx, const char *page)
{
    (void)ctx;
    printf("  live query: %s\n", page);
    pthread_mutex_lock(&page_lock);
    pages_seen++;
    last_page_has_linus = strstr(page, "Linus") != NULL;
    pthread_mutex_unlock(&page_lock);
}

/* Another thread adds Londoners while the main thread watches. */
static void *add_londoners(void *arg)
{
    tureen_store *store = arg;
    const char *names[] = {"Joan", "Karen", "Linus"};
    for (int i = 0; i < 3; i++) {
        char entry[128];
        snprintf(entry, sizeof entry, "{\"name\": \"%s\", \"address\": {\"city\": \"London\"}}", names[i]);
        if (tureen_upsert(store, "contacts", entry, NULL, NULL) != TUREEN_OK) return NULL;
    }
    return NULL;
}

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

    /* A live query: the London page now, and again whenever a commit changes it. */
    tureen_listener *live = NULL;
    check(tureen_live_query(store, in_london, on_page, NULL, NULL, &live), "live query");
    pthread_t writer;
    if (pthread_create(&writer, NULL, add_londoners, store) != 0) return 1;
    pthread_join(writer, NULL);
    int shown = 0;
    for (int i = 0; i < 500 && !shown; i++) {  /* at most 5 s */
        pthread_mutex_lock(&page_lock);
        shown = last_page_has_linus;
        pthread_mutex_unlock(&page_lock);
        if (!shown) nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    check(tureen_listener_remove(live), "remove the live query");
    printf("the live query refreshed %d time(s) and ends with the other thread's last write\n", pages_seen);
    if (!shown) return 1;

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
