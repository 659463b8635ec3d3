/* Tureen sync quickstart in C: two devices share notes through a Kinto
 * server. The laptop writes offline and syncs up; the phone syncs down; both
 * edit the same note, the phone's sync up stops on the conflict, the phone
 * resolves it with a merged note, and the laptop's resync brings it home.
 * Build: see the Makefile's `demo` target.
 * Usage: sync_quickstart KINTO_URL [directory]
 *   KINTO_URL  e.g. http://127.0.0.1:8888/v1 (`make demo` starts one)
 *   directory  where the two stores go (default: /tmp) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tureen.h"

static void check(int rc, const char *what)
{
    if (rc != TUREEN_OK) {
        fprintf(stderr, "%s failed: status %d: %s\n", what, rc, tureen_errmsg());
        exit(1);
    }
}

/* Opens a fresh store for one device, with a soup of notes keyed by "id". */
static tureen_store *open_device(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/sync-quickstart-%s.tureen", dir, name);
    tureen_store_remove(path);
    tureen_store *store = NULL;
    check(tureen_store_open(path, "{\"key\": \"correct horse battery staple\"}", &store), "open");
    check(tureen_soup_register(store, "notes", "[{\"path\": \"id\", \"type\": \"string\"}]"), "register soup");
    return store;
}

/* Prints one member of a state or record (a scalar), found by name. */
static void print_member(const char *json, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *p = strstr(json, key);
    if (!p) return;
    p += strlen(key);
    printf(" %s=%.*s", name, (int)strcspn(p, ",}"), p);
}

static void print_state(const char *who, const char *what, int rc, const char *state)
{
    printf("%-7s %-26s -> status %d:", who, what, rc);
    print_member(state, "status");
    print_member(state, "synced");
    print_member(state, "conflicts");
    print_member(state, "requests");
    printf("\n");
}

/* The one note whose "id" is `id`, as the soup holds it. */
static char *note(tureen_store *store, const char *id)
{
    char spec[256], *out = NULL;
    snprintf(spec, sizeof spec, "{\"queryType\": \"exact\", \"soupName\": \"notes\", \"indexPath\": \"id\", \"matchKey\": \"%s\"}", id);
    check(tureen_query(store, spec, 0, &out), "query");
    return out;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s KINTO_URL [directory]\n", argv[0]);
        return 2;
    }
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    /* A collection of its own per run, created on first use. */
    char target[1024];
    snprintf(target, sizeof target,
             "{\"type\": \"kinto\", \"url\": \"%s\", \"bucket\": \"quickstart\", \"collection\": \"notes-c-%ld\","
             " \"auth\": {\"user\": \"demo\", \"password\": \"demo-password\"}, \"create\": true}",
             argv[1], (long)time(NULL));

    tureen_store *laptop = open_device(dir, "laptop");
    tureen_store *phone = open_device(dir, "phone");
    char *state = NULL, *json = NULL;
    int rc;

    /* Offline on the laptop: local_upsert marks each note as a local change
     * and gives it a client id, so a retried push cannot duplicate it. */
    check(tureen_local_upsert(laptop, "notes",
                              "[{\"id\": \"groceries\", \"title\": \"Groceries\", \"body\": \"milk\"},"
                              " {\"id\": \"trip\", \"title\": \"Trip\", \"body\": \"book a train\"},"
                              " {\"title\": \"Ideas\", \"body\": \"an id is made up for me\"}]",
                              NULL, &json), "local upsert");
    printf("laptop  wrote 3 notes offline: %s\n", json);
    tureen_free(json);

    rc = tureen_sync_up(laptop, target, "notes", "{\"name\": \"up\"}", NULL, NULL, &state);
    print_state("laptop", "sync up", rc, state);
    tureen_free(state);
    check(rc, "laptop sync up");

    rc = tureen_sync_down(phone, target, "notes", "{\"name\": \"down\", \"mergeMode\": \"LEAVE_IF_CHANGED\"}",
                          NULL, NULL, &state);
    print_state("phone", "sync down", rc, state);
    tureen_free(state);
    check(rc, "phone sync down");

    /* Both edit the groceries note: different fields, and one in common. */
    check(tureen_local_upsert(laptop, "notes", "{\"id\": \"groceries\", \"title\": \"Groceries\", \"body\": \"milk, eggs\"}",
                              NULL, NULL), "laptop edit");
    rc = tureen_resync(laptop, "up", NULL, NULL, &state);
    print_state("laptop", "resync up (edit)", rc, state);
    tureen_free(state);
    check(rc, "laptop resync up");

    check(tureen_local_upsert(phone, "notes",
                              "{\"id\": \"groceries\", \"title\": \"Shopping\", \"body\": \"milk, bread\"}",
                              NULL, NULL), "phone edit");
    rc = tureen_sync_up(phone, target, "notes", "{\"name\": \"up\", \"mergeMode\": \"MERGE_FAIL_IF_CONFLICT\"}",
                        NULL, NULL, &state);
    print_state("phone", "sync up (edit)", rc, state);
    tureen_free(state);
    if (rc != TUREEN_E_CONFLICT) {
        fprintf(stderr, "expected a conflict on the groceries note, got status %d\n", rc);
        return 1;
    }

    /* The conflict lists the base, both copies and which fields each side changed. */
    check(tureen_conflicts(phone, "notes", &json), "conflicts");
    printf("phone   conflict: %s\n", json);
    const char *at = strstr(json, "\"entryId\":");
    long long entry_id = at ? atoll(at + strlen("\"entryId\":")) : 0;
    tureen_free(json);
    if (entry_id <= 0) {
        fprintf(stderr, "the conflict has no entryId\n");
        return 1;
    }

    /* Merged by hand: the phone's title, both bodies. */
    check(tureen_conflict_resolve(phone, "notes", entry_id, "merged",
                                  "{\"id\": \"groceries\", \"title\": \"Shopping\", \"body\": \"milk, eggs, bread\"}"),
          "resolve");
    rc = tureen_resync(phone, "up", NULL, NULL, &state);
    print_state("phone", "resync up (merged)", rc, state);
    tureen_free(state);
    check(rc, "phone resync up");

    rc = tureen_resync(laptop, "up", NULL, NULL, &state); /* nothing left to send */
    tureen_free(state);
    check(rc, "laptop resync up");
    rc = tureen_sync_down(laptop, target, "notes", "{\"name\": \"down\"}", NULL, NULL, &state);
    print_state("laptop", "sync down", rc, state);
    tureen_free(state);
    check(rc, "laptop sync down");

    char *mine = note(laptop, "groceries"), *theirs = note(phone, "groceries");
    printf("laptop  groceries: %s\nphone   groceries: %s\n", mine, theirs);
    int same = strstr(mine, "milk, eggs, bread") && strstr(theirs, "milk, eggs, bread");
    tureen_free(mine);
    tureen_free(theirs);
    check(tureen_store_close(laptop), "close");
    check(tureen_store_close(phone), "close");
    if (!same) {
        fprintf(stderr, "the two devices do not hold the merged note\n");
        return 1;
    }
    printf("both devices hold the merged note\n");
    return 0;
}
