/* The Soups area of tureen.h: register a soup with index specs, list soups
 * and specs, add an index later (alter, then reindex), clear and drop.
 * Usage: soups [directory]   (default: /tmp) */
#include "example.h"

/* How many entries of "books" have `value` at the indexed `path`. */
static int64_t count_exact(tureen_store *store, const char *path, const char *value)
{
    cJSON *spec = cJSON_CreateObject();
    cJSON_AddStringToObject(spec, "queryType", "exact");
    cJSON_AddStringToObject(spec, "soupName", "books");
    cJSON_AddStringToObject(spec, "indexPath", path);
    cJSON_AddStringToObject(spec, "matchKey", value);
    char *text = give_json(spec);
    int64_t n = 0;
    check(tureen_count(store, text, &n), "count");
    free(text);
    return n;
}

int main(int argc, char **argv)
{
    tureen_store *store = open_fresh_store(argc > 1 ? argv[1] : "/tmp", "soups-c");

    check(tureen_soup_register(store, "books", "[{\"path\": \"title\", \"type\": \"string\"},"
                                               " {\"path\": \"year\", \"type\": \"integer\"}]"), "register");
    /* Registering again with the same specs is harmless; other specs are refused. */
    check(tureen_soup_register(store, "books", "[{\"path\": \"year\", \"type\": \"integer\"},"
                                               " {\"path\": \"title\", \"type\": \"string\"}]"), "register again");
    int rc = tureen_soup_register(store, "books", "[{\"path\": \"title\", \"type\": \"full_text\"}]");
    printf("register with other specs: status %d: %s\n", rc, tureen_errmsg());
    expect(rc == TUREEN_E_INVALID, "a soup was registered twice with different specs");
    check(tureen_soup_register(store, "authors", "[{\"path\": \"name\", \"type\": \"string\"}]"), "register");

    int exists = 0;
    check(tureen_soup_exists(store, "books", &exists), "exists");
    char *json = NULL;
    check(tureen_soup_names(store, &json), "names");
    cJSON *names = take_json(json);
    printf("%d soups, books %s\n", cJSON_GetArraySize(names), exists ? "exists" : "is missing");
    expect(exists && cJSON_GetArraySize(names) == 2, "wrong soups");
    cJSON_Delete(names);

    check(tureen_upsert(store, "books",
                        "[{\"title\": \"Dune\", \"year\": 1965, \"author\": {\"name\": \"Herbert\"}},"
                        " {\"title\": \"Solaris\", \"year\": 1961, \"author\": {\"name\": \"Lem\"}}]",
                        NULL, NULL), "upsert");

    /* A new index without reindex is empty for the entries already there,
     * as in SmartStore; reindexing the path fills it. */
    check(tureen_soup_alter(store, "books", "[{\"path\": \"title\", \"type\": \"string\"},"
                                            " {\"path\": \"year\", \"type\": \"integer\"},"
                                            " {\"path\": \"author.name\", \"type\": \"string\"}]", 0), "alter");
    int64_t before = count_exact(store, "author.name", "Lem");
    check(tureen_soup_reindex(store, "books", "[\"author.name\"]"), "reindex");
    int64_t after = count_exact(store, "author.name", "Lem");
    printf("books by Lem through the new index: %lld before reindex, %lld after\n", (long long)before,
           (long long)after);
    expect(before == 0 && after == 1, "the new index was not filled by the reindex");

    check(tureen_soup_index_specs(store, "books", &json), "index specs");
    cJSON *specs = take_json(json);
    const cJSON *spec;
    printf("books' index specs:");
    cJSON_ArrayForEach(spec, specs) printf(" %s (%s)", string_of(spec, "path"), string_of(spec, "type"));
    printf("\n");
    cJSON_Delete(specs);

    /* Clearing keeps the soup and its specs; dropping removes it. */
    check(tureen_soup_clear(store, "books"), "clear");
    printf("after clear: %lld books by Lem\n", (long long)count_exact(store, "author.name", "Lem"));
    check(tureen_soup_drop(store, "books"), "drop");
    check(tureen_soup_exists(store, "books", &exists), "exists");
    rc = tureen_soup_index_specs(store, "books", &json);
    printf("after drop: books %s, its specs: status %d (TUREEN_E_NOT_FOUND is %d)\n",
           exists ? "exists" : "is gone", rc, TUREEN_E_NOT_FOUND);
    expect(!exists && rc == TUREEN_E_NOT_FOUND, "the dropped soup is still there");
    check(tureen_store_close(store), "close");
    return 0;
}
