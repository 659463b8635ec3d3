/* Soups and entries through the C ABI: registration rules, the index value
 * rules of the header, upsert by id and external id, all-or-nothing batches,
 * retrieve order, removal, alter and reindex, clear, drop and compaction. */
#include "files.h"
#include "check.h"
#include <stdlib.h>

static tureen_store *s;

/* Count of entries a query spec matches, or -1 on error. */
static int64_t count_of(const char *spec)
{
    int64_t n = -1;
    if (tureen_count(s, spec, &n) != TUREEN_OK) {
        fprintf(stderr, "count failed: %s\n", tureen_errmsg());
        return -1;
    }
    return n;
}

static int64_t exact(const char *soup, const char *path, const char *key_json)
{
    char spec[512];
    snprintf(spec, sizeof spec, "{\"queryType\":\"exact\",\"soupName\":\"%s\",\"indexPath\":\"%s\",\"matchKey\":%s}",
             soup, path, key_json);
    return count_of(spec);
}

/* 1 when the result JSON contains `needle`. */
static int result_has(char *json, const char *needle)
{
    int found = json && strstr(json, needle) != NULL;
    tureen_free(json);
    return found;
}

int main(void)
{
    char *dir = make_temp_dir();
    char path[256];
    snprintf(path, sizeof path, "%s/soups.db", dir);
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &s), TUREEN_OK);
    char *json = NULL;

    /* registration rules */
    const char *specs = "[{\"path\":\"name\",\"type\":\"string\"},{\"path\":\"age\",\"type\":\"integer\"},"
                        "{\"path\":\"score\",\"type\":\"floating\"},{\"path\":\"Owner.Name\",\"type\":\"string\"},"
                        "{\"path\":\"tags.n\",\"type\":\"string\"},{\"path\":\"bio\",\"type\":\"full_text\"},"
                        "{\"path\":\"ext\",\"type\":\"string\"},{\"path\":\"dup\",\"type\":\"string\"}]";
    CHECK_RC(tureen_soup_register(s, "people", "[]"), TUREEN_E_INVALID);
    CHECK_RC(tureen_soup_register(s, "people", "[{\"path\":\"a\",\"type\":\"text\"}]"), TUREEN_E_INVALID);
    CHECK_MSG_HAS("unknown type");
    CHECK_RC(tureen_soup_register(s, "", specs), TUREEN_E_INVALID);
    CHECK_RC(tureen_soup_register(s, "bad name", specs), TUREEN_E_INVALID);
    CHECK_RC(tureen_soup_register(s, "x{y}", specs), TUREEN_E_INVALID);
    CHECK_RC(tureen_soup_register(s, "people", "[{\"path\":\"a..b\",\"type\":\"string\"}]"), TUREEN_E_INVALID);
    CHECK_RC(tureen_soup_register(s, "people", "[{\"path\":\"a\",\"type\":\"string\"},{\"path\":\"a\",\"type\":\"string\"}]"), TUREEN_E_INVALID);
    CHECK_RC(tureen_soup_register(s, "people", "{\"path\":\"a\"}"), TUREEN_E_INVALID);
    int exists = -1;
    CHECK_RC(tureen_soup_exists(s, "people", &exists), TUREEN_OK);
    CHECK(exists == 0, "failed registrations created nothing");
    CHECK_RC(tureen_soup_register(s, "people", specs), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "people", specs), TUREEN_OK); /* same specs: no-op */
    CHECK_RC(tureen_soup_register(s, "people", "[{\"path\":\"name\",\"type\":\"string\"}]"), TUREEN_E_INVALID);
    CHECK_MSG_HAS("tureen_soup_alter");
    CHECK_RC(tureen_soup_exists(s, "people", &exists), TUREEN_OK);
    CHECK(exists == 1, "soup exists");
    CHECK_RC(tureen_soup_register(s, "other", "[{\"path\":\"k\",\"type\":\"integer\"}]"), TUREEN_OK);
    CHECK_RC(tureen_soup_names(s, &json), TUREEN_OK);
    CHECK(json && strcmp(json, "[\"other\",\"people\"]") == 0, "names sorted");
    tureen_free(json);
    CHECK_RC(tureen_soup_index_specs(s, "people", &json), TUREEN_OK);
    CHECK(result_has(json, "{\"path\":\"Owner.Name\",\"type\":\"string\"}"), "index specs listed");
    CHECK_RC(tureen_soup_index_specs(s, "nobody", &json), TUREEN_E_NOT_FOUND);

    /* index value rules */
    CHECK_RC(tureen_upsert(s, "people",
        "[{\"name\":\"ann\",\"age\":41.9,\"score\":\"2.5\",\"Owner\":{\"Name\":\"Zed\"},\"tags\":[{\"n\":\"a\"},{\"n\":\"b\"}],\"bio\":\"likes \\\"quotes\\\"\",\"ext\":\"e1\",\"dup\":\"d\"},"
        " {\"name\":42,\"age\":\"17\",\"score\":true,\"Owner\":\"not an object\",\"ext\":\"e2\",\"dup\":\"d\"},"
        " {\"name\":true,\"age\":\"old\",\"score\":{\"x\":1},\"Owner\":{\"Name\":null},\"ext\":\"e3\"},"
        " {\"name\":{\"first\":\"bo\"},\"age\":[1,2],\"ext\":\"e4\"}]", NULL, &json), TUREEN_OK);
    CHECK(result_has(json, "\"_soupEntryId\":4"), "four entries got ids");
    CHECK(exact("people", "age", "41") == 1, "floating number truncated into an integer index");
    CHECK(exact("people", "age", "17") == 1, "numeric string converted into an integer index");
    CHECK(count_of("{\"queryType\":\"range\",\"soupName\":\"people\",\"indexPath\":\"age\",\"beginKey\":null,\"endKey\":null}") == 2,
          "non-numeric string and array index NULL in an integer index");
    CHECK(exact("people", "score", "2.5") == 1, "numeric string in a floating index");
    CHECK(exact("people", "score", "1") == 1, "boolean true is 1.0 in a floating index");
    CHECK(exact("people", "name", "\"42\"") == 1, "number indexed as its text in a string index");
    CHECK(exact("people", "name", "42") == 1, "number key converted to text for a string index");
    CHECK(exact("people", "name", "\"true\"") == 1, "boolean as true in a string index");
    CHECK(exact("people", "name", "\"{\\\"first\\\":\\\"bo\\\"}\"") == 1, "object as JSON text in a string index");
    CHECK(exact("people", "Owner.Name", "\"Zed\"") == 1, "dotted path");
    CHECK(count_of("{\"queryType\":\"range\",\"soupName\":\"people\",\"indexPath\":\"Owner.Name\"}") == 1,
          "missing and null nested values index NULL");
    CHECK(exact("people", "tags.n", "\"[\\\"a\\\",\\\"b\\\"]\"") == 1, "a path through an array indexes every element");
    CHECK(count_of("{\"queryType\":\"like\",\"soupName\":\"people\",\"indexPath\":\"tags.n\",\"likeKey\":\"%\\\"b\\\"%\"}") == 1,
          "like finds an element of a projected array");

    /* upsert by id, external id, all or nothing */
    CHECK_RC(tureen_upsert(s, "people", "{\"_soupEntryId\":1,\"name\":\"ann2\",\"ext\":\"e1\"}", NULL, &json), TUREEN_OK);
    CHECK(result_has(json, "\"_soupEntryId\":1,"), "update by _soupEntryId keeps the id");
    CHECK(exact("people", "name", "\"ann\"") == 0 && exact("people", "name", "\"ann2\"") == 1, "entry 1 updated");
    /* The store writes the generated members itself: the entry's own are not kept. */
    CHECK_RC(tureen_upsert(s, "people", "{\"_soupLastModifiedDate\":5,\"name\":\"ann2\",\"_soupEntryId\":1,\"ext\":\"e1\"}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_retrieve(s, "people", "[1]", &json), TUREEN_OK);
    CHECK(json && occurrences(json, "\"_soupEntryId\"") == 1 && occurrences(json, "\"_soupLastModifiedDate\"") == 1
          && !strstr(json, "\"_soupLastModifiedDate\":5") && strstr(json, "\"name\":\"ann2\",\"ext\":\"e1\","),
          "an entry's own _soupEntryId and _soupLastModifiedDate are not stored");
    tureen_free(json);
    CHECK_RC(tureen_upsert(s, "people", "{\"name\":\"ext-upd\",\"ext\":\"e2\"}", "ext", &json), TUREEN_OK);
    CHECK(result_has(json, "\"_soupEntryId\":2,"), "external id matched entry 2");
    CHECK_RC(tureen_upsert(s, "people", "{\"name\":\"ext-new\",\"ext\":\"e9\"}", "ext", &json), TUREEN_OK);
    CHECK(result_has(json, "\"_soupEntryId\":5,"), "unknown external id creates entry 5");
    CHECK_RC(tureen_upsert(s, "people", "[{\"name\":\"z\",\"ext\":\"e10\"},{\"name\":\"nope\"}]", "ext", &json), TUREEN_E_INVALID);
    CHECK_MSG_HAS("entry 1");
    CHECK(json == NULL, "no result on error");
    CHECK_RC(tureen_upsert(s, "people", "{\"name\":\"nope\",\"ext\":null}", "ext", &json), TUREEN_E_INVALID);
    CHECK_RC(tureen_upsert(s, "people", "{\"name\":\"nope\",\"ext\":\"q\"}", "unindexed", &json), TUREEN_E_INVALID);
    CHECK_RC(tureen_upsert(s, "people", "{\"name\":\"nope\",\"bio\":\"q\"}", "bio", &json), TUREEN_E_INVALID);
    CHECK_RC(tureen_upsert(s, "people", "[{\"name\":\"t1\",\"dup\":\"twin\"},{\"name\":\"t2\",\"dup\":\"twin\"}]", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "people", "[{\"name\":\"first\",\"dup\":\"new-one\"},{\"name\":\"many\",\"dup\":\"twin\"}]", "dup", &json), TUREEN_E_CONSTRAINT);
    CHECK_MSG_HAS("several");
    CHECK(exact("people", "name", "\"first\"") == 0, "the entry before the conflict was rolled back");
    CHECK_RC(tureen_upsert(s, "people", "[{\"name\":\"ok\"}, 7]", NULL, &json), TUREEN_E_INVALID);
    CHECK_RC(tureen_upsert(s, "people", "[{\"name\":\"ok\"}, {\"name\":", NULL, &json), TUREEN_E_INVALID);
    CHECK(count_of("{\"queryType\":\"all\",\"soupName\":\"people\"}") == 7, "failed batches wrote nothing");
    CHECK_RC(tureen_upsert(s, "people", "[{\"ext\":\"same\",\"v\":1},{\"ext\":\"same\",\"v\":2}]", "ext", &json), TUREEN_OK);
    CHECK(result_has(json, "\"v\":2,\"_soupEntryId\":8,"), "second entry of a batch updates the first");
    CHECK_RC(tureen_upsert(s, "people", "{\"name\":\"x\"}", NULL, NULL), TUREEN_OK); /* no result wanted */
    CHECK_RC(tureen_upsert(s, "nobody", "{\"name\":\"x\"}", NULL, NULL), TUREEN_E_NOT_FOUND);

    /* retrieve: order asked for, missing skipped */
    CHECK_RC(tureen_retrieve(s, "people", "[5, 999, 1]", &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"_soupEntryId\":5") && strstr(json, "\"_soupEntryId\":1")
          && strstr(json, "\"_soupEntryId\":5") < strstr(json, "\"_soupEntryId\":1")
          && !strstr(json, "\"_soupEntryId\":999"), "retrieve order and skipping");
    tureen_free(json);
    CHECK_RC(tureen_retrieve(s, "people", "[1, \"2\"]", &json), TUREEN_E_INVALID);
    CHECK_RC(tureen_retrieve(s, "people", "[]", &json), TUREEN_OK);
    CHECK(json && strcmp(json, "[]") == 0, "empty retrieve");
    tureen_free(json);

    /* paging and order */
    CHECK_RC(tureen_query(s, "{\"queryType\":\"all\",\"soupName\":\"people\",\"orderPath\":\"_soupEntryId\",\"order\":\"descending\",\"pageSize\":2}", 0, &json), TUREEN_OK);
    CHECK(json && strstr(json, "\"_soupEntryId\":9") && strstr(json, "\"_soupEntryId\":8") && !strstr(json, "\"_soupEntryId\":7"), "first page, descending");
    tureen_free(json);
    CHECK_RC(tureen_query(s, "{\"queryType\":\"all\",\"soupName\":\"people\",\"orderPath\":\"nope\"}", 0, &json), TUREEN_E_QUERY);
    CHECK_RC(tureen_query(s, "{\"queryType\":\"exact\",\"soupName\":\"people\",\"indexPath\":\"name\",\"matchKey\":\"x' OR '1'='1\"}", 0, &json), TUREEN_OK);
    CHECK(json && strcmp(json, "[]") == 0, "quotes in a key do not change the statement");
    tureen_free(json);

    /* remove and remove_by_query (every match, not a page) */
    CHECK_RC(tureen_remove(s, "people", "[1, 12345]"), TUREEN_OK);
    CHECK(count_of("{\"queryType\":\"all\",\"soupName\":\"people\"}") == 8, "entry removed by id");
    char big[64 * 1024];
    strcpy(big, "[");
    for (int i = 0; i < 300; i++) {
        char one[64];
        snprintf(one, sizeof one, "%s{\"k\":%d}", i ? "," : "", i % 3);
        strcat(big, one);
    }
    strcat(big, "]");
    CHECK_RC(tureen_upsert(s, "other", big, NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_remove_by_query(s, "{\"queryType\":\"exact\",\"soupName\":\"other\",\"indexPath\":\"k\",\"matchKey\":1,\"pageSize\":5}"), TUREEN_OK);
    CHECK(count_of("{\"queryType\":\"all\",\"soupName\":\"other\"}") == 200, "remove_by_query removed all 100 matches");

    /* alter: kept index keeps values, new index NULL without reindex, computed with it */
    CHECK_RC(tureen_soup_alter(s, "other", "[{\"path\":\"k\",\"type\":\"integer\"},{\"path\":\"k\",\"type\":\"string\"}]", 0), TUREEN_OK);
    CHECK(exact("other", "k", "2") == 100, "kept index kept its values");
    CHECK(count_of("{\"queryType\":\"like\",\"soupName\":\"other\",\"indexPath\":\"k\",\"likeKey\":\"2\"}") == 100,
          "integer index answers (string index added without reindex)");
    CHECK_RC(tureen_soup_reindex(s, "other", "[\"k\"]"), TUREEN_OK);
    CHECK_RC(tureen_soup_reindex(s, "other", "[\"nope\"]"), TUREEN_E_INVALID);
    CHECK_RC(tureen_soup_alter(s, "other", "[{\"path\":\"v\",\"type\":\"floating\"}]", 1), TUREEN_OK);
    CHECK_RC(tureen_soup_index_specs(s, "other", &json), TUREEN_OK);
    CHECK(json && strcmp(json, "[{\"path\":\"v\",\"type\":\"floating\"}]") == 0, "new specs after alter");
    tureen_free(json);
    CHECK(count_of("{\"queryType\":\"all\",\"soupName\":\"other\"}") == 200, "every entry kept by alter");
    CHECK_RC(tureen_soup_alter(s, "other", "[{\"path\":\"v\",\"type\":\"bogus\"}]", 1), TUREEN_E_INVALID);
    CHECK_RC(tureen_soup_alter(s, "nobody", "[{\"path\":\"v\",\"type\":\"string\"}]", 1), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_upsert(s, "people", "{\"name\":\"aged\",\"age\":\"3.75\"}", NULL, NULL), TUREEN_OK);
    CHECK(exact("people", "age", "3") == 1, "integer index before the alter");
    CHECK_RC(tureen_soup_alter(s, "people", "[{\"path\":\"name\",\"type\":\"string\"},{\"path\":\"ext\",\"type\":\"string\"},{\"path\":\"age\",\"type\":\"floating\"}]", 1), TUREEN_OK);
    CHECK(exact("people", "age", "3.75") == 1 && exact("people", "age", "3") == 0, "reindexed as floating");
    CHECK_RC(tureen_upsert(s, "people", "{\"name\":\"after-alter\"}", NULL, &json), TUREEN_OK);
    CHECK(result_has(json, "\"_soupEntryId\":11,"), "ids are not reused after an alter");

    /* indexes added by an alter with reindex are computed from the entry by
     * SQLite: they follow later inserts and updates, serve external ids, and
     * survive a reopen and a rekey; a quote in their path stays data */
    CHECK_RC(tureen_soup_register(s, "comp", "[{\"path\":\"a\",\"type\":\"integer\"}]"), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "comp", "[{\"a\":1,\"it's\":\"x\",\"code\":\"c1\",\"words\":\"red fox\"},"
                                      "{\"a\":2,\"it's\":\"y\",\"code\":\"c2\"}]", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_soup_alter(s, "comp", "[{\"path\":\"a\",\"type\":\"integer\"},{\"path\":\"it's\",\"type\":\"string\"},"
                                          "{\"path\":\"code\",\"type\":\"string\"},{\"path\":\"words\",\"type\":\"full_text\"}]", 1), TUREEN_OK);
    CHECK(exact("comp", "it's", "\"x\"") == 1, "computed index over a path with a quote");
    CHECK(exact("comp", "code", "\"c2\"") == 1, "computed index answers for existing entries");
    CHECK_RC(tureen_upsert(s, "comp", "{\"a\":3,\"code\":\"c3\",\"it's\":\"x\"}", NULL, NULL), TUREEN_OK);
    CHECK(exact("comp", "it's", "\"x\"") == 2, "computed index follows an insert");
    CHECK_RC(tureen_upsert(s, "comp", "{\"a\":33,\"code\":\"c3\",\"it's\":\"z\"}", "code", &json), TUREEN_OK);
    CHECK(result_has(json, "\"_soupEntryId\":3,"), "external id through a computed index");
    CHECK(exact("comp", "it's", "\"x\"") == 1 && exact("comp", "it's", "\"z\"") == 1, "computed index follows an update");
    CHECK_RC(tureen_soup_reindex(s, "comp", "[\"code\",\"a\"]"), TUREEN_OK);
    CHECK(exact("comp", "a", "33") == 1, "reindex of stored and computed together");
    CHECK_RC(tureen_remove_by_query(s, "{\"queryType\":\"exact\",\"soupName\":\"comp\",\"indexPath\":\"code\",\"matchKey\":\"c2\"}"), TUREEN_OK);
    CHECK(count_of("{\"queryType\":\"all\",\"soupName\":\"comp\"}") == 2, "remove_by_query through a computed index");
    CHECK_RC(tureen_store_rekey(s, "{\"key\":\"k\",\"kdf_iter\":1000}"), TUREEN_OK); /* export rebuilds the expression index */
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &s), TUREEN_OK);
    CHECK(exact("comp", "code", "\"c3\"") == 1, "computed index after reopen and rekey");
    CHECK_RC(tureen_soup_alter(s, "comp", "[{\"path\":\"code\",\"type\":\"string\"},{\"path\":\"b\",\"type\":\"string\"}]", 1), TUREEN_OK);
    CHECK(exact("comp", "code", "\"c1\"") == 1, "a computed index kept by a second alter");
    CHECK_RC(tureen_store_check(s), TUREEN_OK);

    /* clear, drop, compaction */
    int64_t before = 0, after = 0;
    for (int round = 0; round < 20; round++) CHECK_RC(tureen_upsert(s, "other", big, NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_store_compact(s), TUREEN_OK);
    CHECK_RC(tureen_store_size(s, &before), TUREEN_OK);
    CHECK_RC(tureen_soup_clear(s, "other"), TUREEN_OK);
    CHECK(count_of("{\"queryType\":\"all\",\"soupName\":\"other\"}") == 0, "cleared");
    CHECK_RC(tureen_store_compact(s), TUREEN_OK);
    CHECK_RC(tureen_store_size(s, &after), TUREEN_OK);
    CHECK(after < before, "compaction gave space back");
    CHECK_RC(tureen_soup_drop(s, "other"), TUREEN_OK);
    CHECK_RC(tureen_soup_drop(s, "other"), TUREEN_E_NOT_FOUND);
    CHECK_RC(tureen_soup_exists(s, "other", &exists), TUREEN_OK);
    CHECK(exists == 0, "dropped");
    CHECK_RC(tureen_store_check(s), TUREEN_OK);

    /* two stores at once, and one file opened twice */
    tureen_store *second = NULL, *twin = NULL;
    char path2[300];
    snprintf(path2, sizeof path2, "%s/second.db", dir);
    CHECK_RC(tureen_store_open(path2, "{\"unencrypted\":true}", &second), TUREEN_OK);
    CHECK_RC(tureen_soup_register(second, "people", "[{\"path\":\"n\",\"type\":\"string\"}]"), TUREEN_OK);
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &twin), TUREEN_OK);
    CHECK_RC(tureen_upsert(twin, "people", "{\"name\":\"from-twin\"}", NULL, NULL), TUREEN_OK);
    CHECK(exact("people", "name", "\"from-twin\"") == 1, "a write through one handle is seen by the other");
    CHECK_RC(tureen_soup_index_specs(second, "people", &json), TUREEN_OK);
    CHECK(result_has(json, "\"n\""), "stores are separate");
    CHECK_RC(tureen_store_close(twin), TUREEN_OK);
    CHECK_RC(tureen_store_close(second), TUREEN_OK);

    /* after queries on reader connections, rekey needs the file to itself:
     * every idle connection must really be closed (a regression: cached
     * statements once kept their connections open) */
    CHECK(exact("people", "name", "\"from-twin\"") == 1, "a read before rekey");
    CHECK_RC(tureen_store_rekey(s, "{\"key\":\"k2\",\"kdf_iter\":1000}"), TUREEN_OK);
    CHECK(exact("people", "name", "\"from-twin\"") == 1, "reads work after rekey");
    CHECK_RC(tureen_store_close(s), TUREEN_OK);

    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
