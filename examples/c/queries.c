/* The Queries area of tureen.h: query specs (exact, range, like, match) read
 * page by page, selectPaths rows, and Smart SQL with a join, an aggregate and
 * bound arguments, all read with cJSON.
 * Usage: queries [directory]   (default: /tmp) */
#include <string.h>
#include "example.h"

/* Runs a query spec on one page and returns the parsed page. */
static cJSON *page(tureen_store *store, const char *spec, int index)
{
    char *json = NULL;
    check(tureen_query(store, spec, index, &json), spec);
    return take_json(json);
}

int main(int argc, char **argv)
{
    tureen_store *store = open_fresh_store(argc > 1 ? argv[1] : "/tmp", "queries-c");
    check(tureen_soup_register(store, "employees", "[{\"path\": \"name\", \"type\": \"string\"},"
                                                   " {\"path\": \"dept\", \"type\": \"string\"},"
                                                   " {\"path\": \"salary\", \"type\": \"integer\"},"
                                                   " {\"path\": \"bio\", \"type\": \"full_text\"}]"), "register");
    check(tureen_soup_register(store, "depts", "[{\"path\": \"code\", \"type\": \"string\"}]"), "register");
    check(tureen_upsert(store, "depts", "[{\"code\": \"eng\", \"title\": \"Engineering\"},"
                                        " {\"code\": \"ops\", \"title\": \"Operations\"}]", NULL, NULL), "upsert");
    static const struct { const char *name, *dept; int salary; const char *bio; } people[] = {
        {"Ada", "eng", 120, "mathematician, wrote the first program"},
        {"Grace", "eng", 140, "compiler pioneer, navy admiral"},
        {"Alan", "eng", 110, "computing machinery and intelligence"},
        {"Joan", "ops", 90, "codebreaker at Bletchley"},
        {"Katherine", "ops", 100, "orbital mechanics by hand"},
    };
    cJSON *batch = cJSON_CreateArray();
    for (size_t i = 0; i < sizeof people / sizeof people[0]; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", people[i].name);
        cJSON_AddStringToObject(e, "dept", people[i].dept);
        cJSON_AddNumberToObject(e, "salary", people[i].salary);
        cJSON_AddStringToObject(e, "bio", people[i].bio);
        cJSON_AddItemToArray(batch, e);
    }
    char *text = give_json(batch);
    check(tureen_upsert(store, "employees", text, NULL, NULL), "upsert");
    free(text);

    /* A range, highest salary first, two per page, read to the end. */
    const char *range = "{\"queryType\": \"range\", \"soupName\": \"employees\", \"indexPath\": \"salary\","
                        " \"beginKey\": 100, \"order\": \"descending\", \"pageSize\": 2}";
    int64_t total = 0;
    check(tureen_count(store, range, &total), "count");
    printf("%lld earn 100 or more:", (long long)total);
    int seen = 0;
    for (int p = 0;; p++) {
        cJSON *rows = page(store, range, p);
        int n = cJSON_GetArraySize(rows);
        const cJSON *e;
        cJSON_ArrayForEach(e, rows) printf(" %s (%d)", string_of(e, "name"), (int)number_of(e, "salary"));
        cJSON_Delete(rows);
        seen += n;
        if (n < 2) break;
    }
    printf("\n");
    expect(seen == total && total == 4, "the pages do not add up to the count");

    /* like, and a full-text match with SmartStore's syntax. */
    cJSON *rows = page(store, "{\"queryType\": \"like\", \"soupName\": \"employees\", \"indexPath\": \"name\","
                              " \"likeKey\": \"A%\"}", 0);
    printf("names starting with A: %d\n", cJSON_GetArraySize(rows));
    cJSON_Delete(rows);
    rows = page(store, "{\"queryType\": \"match\", \"soupName\": \"employees\", \"indexPath\": null,"
                       " \"matchKey\": \"comp* NOT navy\", \"orderPath\": \"name\"}", 0);
    printf("bios with a word starting with comp, without navy: %s\n",
           string_of(cJSON_GetArrayItem(rows, 0), "name"));
    expect(cJSON_GetArraySize(rows) == 1, "the full-text match is wrong");
    cJSON_Delete(rows);

    /* selectPaths: rows of values instead of whole entries. */
    rows = page(store, "{\"queryType\": \"exact\", \"soupName\": \"employees\", \"indexPath\": \"dept\","
                       " \"matchKey\": \"ops\", \"orderPath\": \"name\", \"selectPaths\": [\"name\", \"salary\"]}", 0);
    const cJSON *row;
    printf("ops:");
    cJSON_ArrayForEach(row, rows) printf(" %s=%d", cJSON_GetArrayItem(row, 0)->valuestring,
                                         cJSON_GetArrayItem(row, 1)->valueint);
    printf("\n");
    cJSON_Delete(rows);

    /* Smart SQL: a join and an aggregate per department, with a bound argument. */
    const char *smart =
        "{\"queryType\": \"smart\", \"pageSize\": 10, \"args\": [95], \"smartSql\":"
        " \"SELECT d.{depts:title}, count(*), sum(e.{employees:salary}) FROM {employees} e"
        " JOIN {depts} d ON d.{depts:code} = e.{employees:dept}"
        " WHERE e.{employees:salary} > ? GROUP BY d.{depts:title} ORDER BY 3 DESC\"}";
    rows = page(store, smart, 0);
    cJSON_ArrayForEach(row, rows)
        printf("%-12s %d people, payroll %d\n", cJSON_GetArrayItem(row, 0)->valuestring,
               cJSON_GetArrayItem(row, 1)->valueint, cJSON_GetArrayItem(row, 2)->valueint);
    expect(cJSON_GetArraySize(rows) == 2 && cJSON_GetArrayItem(cJSON_GetArrayItem(rows, 0), 2)->valueint == 370,
           "the Smart SQL totals are wrong");
    cJSON_Delete(rows);

    /* Only reads: a write in Smart SQL is refused with TUREEN_E_QUERY. */
    char *json = NULL;
    int rc = tureen_query(store, "{\"queryType\": \"smart\", \"smartSql\": \"DELETE FROM {employees}\"}", 0, &json);
    printf("a DELETE in Smart SQL: status %d (TUREEN_E_QUERY is %d): %s\n", rc, TUREEN_E_QUERY, tureen_errmsg());
    expect(rc == TUREEN_E_QUERY, "Smart SQL ran a write");
    check(tureen_store_close(store), "close");
    return 0;
}
