/* The Entries area of tureen.h: upsert a batch built with cJSON, update by
 * an external id, retrieve by _soupEntryId, see a bad batch refused whole,
 * and remove.
 * Usage: entries [directory]   (default: /tmp) */
#include <string.h>
#include "example.h"

/* A contact as a JSON object. */
static cJSON *contact(const char *name, const char *email, int age)
{
    cJSON *entry = cJSON_CreateObject();
    cJSON_AddStringToObject(entry, "name", name);
    cJSON_AddStringToObject(entry, "email", email);
    cJSON_AddNumberToObject(entry, "age", age);
    return entry;
}

int main(int argc, char **argv)
{
    tureen_store *store = open_fresh_store(argc > 1 ? argv[1] : "/tmp", "entries-c");
    check(tureen_soup_register(store, "contacts", "[{\"path\": \"email\", \"type\": \"string\"},"
                                                  " {\"path\": \"age\", \"type\": \"integer\"}]"), "register");

    /* One call, one transaction: the stored entries come back with their
     * _soupEntryId, _soupCreated and _soupLastModified. */
    cJSON *batch = cJSON_CreateArray();
    cJSON_AddItemToArray(batch, contact("Ada", "ada@example.org", 36));
    cJSON_AddItemToArray(batch, contact("Grace", "grace@example.org", 85));
    cJSON_AddItemToArray(batch, contact("Alan", "alan@example.org", 41));
    char *text = give_json(batch), *json = NULL;
    check(tureen_upsert(store, "contacts", text, NULL, &json), "upsert");
    free(text);
    cJSON *stored = take_json(json);
    int64_t ada_id = (int64_t)number_of(cJSON_GetArrayItem(stored, 0), "_soupEntryId");
    int64_t alan_id = (int64_t)number_of(cJSON_GetArrayItem(stored, 2), "_soupEntryId");
    printf("stored %d contacts; Ada is entry %lld\n", cJSON_GetArraySize(stored), (long long)ada_id);
    cJSON_Delete(stored);

    /* By external id: the entry with this email is updated in place. One
     * object in, one object out (an array gives an array). */
    text = give_json(contact("Ada Lovelace", "ada@example.org", 37));
    check(tureen_upsert(store, "contacts", text, "email", &json), "upsert by email");
    free(text);
    cJSON *updated = take_json(json);
    int64_t same_id = (int64_t)number_of(updated, "_soupEntryId");
    printf("updated by email: entry %lld is now %s\n", (long long)same_id, string_of(updated, "name"));
    expect(same_id == ada_id, "the upsert by external id made a new entry");
    cJSON_Delete(updated);

    /* A batch with one bad entry (not an object) is refused whole. */
    int rc = tureen_upsert(store, "contacts", "[{\"name\": \"Linus\", \"email\": \"linus@example.org\"}, 42]", NULL, NULL);
    char why[256]; /* the message lasts until this thread's next call */
    snprintf(why, sizeof why, "%s", tureen_errmsg());
    int64_t n = 0;
    check(tureen_count(store, "{\"queryType\": \"all\", \"soupName\": \"contacts\"}", &n), "count");
    printf("a batch with a bad entry: status %d (%s); still %lld contacts\n", rc, why, (long long)n);
    expect(rc == TUREEN_E_INVALID && n == 3, "part of a refused batch was stored");

    /* Retrieve by ids, in the order asked; an unknown id is left out. */
    char ids[128];
    snprintf(ids, sizeof ids, "[%lld, 999999, %lld]", (long long)alan_id, (long long)ada_id);
    check(tureen_retrieve(store, "contacts", ids, &json), "retrieve");
    cJSON *found = take_json(json);
    const cJSON *entry;
    printf("retrieved:");
    cJSON_ArrayForEach(entry, found) printf(" %s (%d)", string_of(entry, "name"), (int)number_of(entry, "age"));
    printf("\n");
    expect(cJSON_GetArraySize(found) == 2, "retrieve returned a missing id");
    cJSON_Delete(found);

    snprintf(ids, sizeof ids, "[%lld]", (long long)alan_id);
    check(tureen_remove(store, "contacts", ids), "remove");
    check(tureen_count(store, "{\"queryType\": \"all\", \"soupName\": \"contacts\"}", &n), "count");
    printf("after removing Alan: %lld contacts\n", (long long)n);
    expect(n == 2, "remove did not remove");
    check(tureen_store_close(store), "close");
    return 0;
}
