/* Queries through the C ABI: the full-text (match) table of the reference,
 * malformed match keys, Smart SQL joins, aggregates, {soup:_soup} objects and
 * args, and injection attempts in every string that reaches SQL: each is a
 * clean error or a harmless result, and the store is unchanged afterwards. */
#include "files.h"
#include "check.h"
#include <stdlib.h>

static tureen_store *s;

/* Runs page 0 of `spec` and compares the result text with `expected`. */
static int query_is(const char *spec, const char *expected)
{
    char *json = NULL;
    int rc = tureen_query(s, spec, 0, &json);
    int same = rc == TUREEN_OK && json && strcmp(json, expected) == 0;
    if (!same)
        fprintf(stderr, "  spec %s\n  gave rc %d '%s' (%s)\n  expected '%s'\n", spec, rc,
                json ? json : "(null)", tureen_errmsg(), expected);
    tureen_free(json);
    return same;
}

/* Count of a query spec, or -1 on error. */
static int64_t count_of(const char *spec)
{
    int64_t n = -1;
    if (tureen_count(s, spec, &n) != TUREEN_OK) {
        fprintf(stderr, "  count of %s failed: %s\n", spec, tureen_errmsg());
        return -1;
    }
    return n;
}

/* A full-text query over animals, as the ids of the matches in id order. */
static int match_is(const char *path_json, const char *key_json, const char *expected)
{
    char spec[1024];
    snprintf(spec, sizeof spec,
             "{\"queryType\":\"match\",\"soupName\":\"animals\",\"indexPath\":%s,\"matchKey\":%s,"
             "\"orderPath\":\"_soupEntryId\",\"pageSize\":2,\"selectPaths\":[\"id\"]}", path_json, key_json);
    /* pageSize 2: read every page */
    char all[256] = "[";
    for (int page = 0; page < 10; page++) {
        char *json = NULL;
        if (tureen_query(s, spec, page, &json) != TUREEN_OK) {
            fprintf(stderr, "  match %s %s failed: %s\n", path_json, key_json, tureen_errmsg());
            return 0;
        }
        size_t n = strlen(json);
        if (n > 2) {
            if (strlen(all) > 1) strcat(all, ",");
            json[n - 1] = '\0';
            strncat(all, json + 1, sizeof all - strlen(all) - 2);
        }
        tureen_free(json);
        if (n <= 2) break;
    }
    strcat(all, "]");
    int same = strcmp(all, expected) == 0;
    if (!same) fprintf(stderr, "  match %s %s gave %s, expected %s\n", path_json, key_json, all, expected);
    snprintf(spec, sizeof spec,
             "{\"queryType\":\"match\",\"soupName\":\"animals\",\"indexPath\":%s,\"matchKey\":%s}", path_json, key_json);
    int64_t n = count_of(spec);
    int64_t want = 0;
    for (const char *p = expected; *p; p++) want += *p == '[' && p != expected;
    if (n != want) { fprintf(stderr, "  count of match %s gave %lld\n", key_json, (long long)n); same = 0; }
    return same;
}

/* Appends `text` to a growing buffer. */
static void append(char **buf, size_t *len, const char *text)
{
    size_t n = strlen(text);
    *buf = realloc(*buf, *len + n + 1);
    memcpy(*buf + *len, text, n + 1);
    *len += n;
}

/* Everything the API shows of the store: soup names, and each soup's index
 * specs and entries in id order. Free with free(). */
static char *fingerprint(void)
{
    static const char *const soups[] = {"employees", "departments", "animals"};
    char *out = NULL;
    size_t len = 0;
    char *json = NULL;
    append(&out, &len, "");
    if (tureen_soup_names(s, &json) == TUREEN_OK) append(&out, &len, json);
    tureen_free(json);
    for (size_t i = 0; i < sizeof soups / sizeof soups[0]; i++) {
        char spec[256];
        json = NULL;
        if (tureen_soup_index_specs(s, soups[i], &json) == TUREEN_OK) append(&out, &len, json);
        else append(&out, &len, "(no specs)");
        tureen_free(json);
        json = NULL;
        snprintf(spec, sizeof spec, "{\"queryType\":\"all\",\"soupName\":\"%s\",\"orderPath\":\"_soupEntryId\",\"pageSize\":1000}", soups[i]);
        if (tureen_query(s, spec, 0, &json) == TUREEN_OK) append(&out, &len, json);
        else append(&out, &len, "(no entries)");
        tureen_free(json);
    }
    append(&out, &len, tureen_store_check(s) == TUREEN_OK ? "(sound)" : "(check failed)");
    return out;
}

/* Strings that must never be more than values, as JSON string literals. */
static const char *const evil[] = {
    "\"x' OR '1'='1\"",
    "\"'); DROP TABLE TABLE_1; --\"",
    "\"\\\"); DELETE FROM TABLE_1; --\"",
    "\"\\\"\"",
    "\"'\"",
    "\"%\"",
    "\"\\\\\"",
    "\"{employees}\"",
    "\"1; DELETE FROM TABLE_1\"",
    "\"*/ DELETE FROM TABLE_1 /*\"",
};
#define N_EVIL (sizeof evil / sizeof evil[0])

/* Smart SQL that must be refused with TUREEN_E_QUERY (JSON-escaped). */
static const char *const refused[] = {
    "insert into {employees} (soup) values ('{}')",
    "insert into TABLE_1 (soup) values ('{}')",
    "replace into {employees} (id, soup) values (1, '{}')",
    "update {employees} set soup = '{}'",
    "delete from {employees}",
    "delete from TABLE_1",
    "drop table {employees}",
    "drop table TABLE_1",
    "drop table tureen_soups",
    "alter table {employees} rename to gone",
    "create table evil (x)",
    "create temp table evil (x)",
    "create trigger evil after insert on TABLE_1 begin delete from TABLE_1; end",
    "attach database ':memory:' as evil",
    "detach database main",
    "pragma user_version",
    "pragma user_version = 7",
    "pragma writable_schema = 1",
    "vacuum",
    "begin",
    "commit",
    "select 1; delete from {employees}",
    "select 1; select 2",
    "select * from {employees}; drop table TABLE_1",
    "with t as (select 1) delete from {employees}",
    "with t as (select 1) insert into {employees} (soup) select '{}' from t",
    "select * from (delete from {employees})",
    "select * from {employees} where {employees:_soupEntryId} in (delete from {employees})",
    "select load_extension('libevil.so')",
    "select fts3_tokenizer('evil', x'0000000000000000')",
    "select count(*) from {nosoup}",
    "select {employees:a..b} from {employees}",
};
#define N_REFUSED (sizeof refused / sizeof refused[0])

int main(void)
{
    char *dir = make_temp_dir();
    char path[256];
    char spec[2048];
    char *json = NULL;
    snprintf(path, sizeof path, "%s/queries.db", dir);
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &s), TUREEN_OK);

    /* employees first: its table is TABLE_1, the target of the injections */
    CHECK_RC(tureen_soup_register(s, "employees",
        "[{\"path\":\"firstName\",\"type\":\"string\"},{\"path\":\"lastName\",\"type\":\"string\"},"
        "{\"path\":\"deptCode\",\"type\":\"string\"},{\"path\":\"employeeId\",\"type\":\"string\"},"
        "{\"path\":\"managerId\",\"type\":\"string\"},{\"path\":\"salary\",\"type\":\"integer\"}]"), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "departments",
        "[{\"path\":\"deptCode\",\"type\":\"string\"},{\"path\":\"name\",\"type\":\"string\"}]"), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "animals",
        "[{\"path\":\"name\",\"type\":\"full_text\"},{\"path\":\"color\",\"type\":\"full_text\"},"
        "{\"path\":\"id\",\"type\":\"integer\"}]"), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "employees",
        "[{\"firstName\":\"Christopher\",\"lastName\":\"Haas\",\"deptCode\":\"A00\",\"employeeId\":\"00010\",\"salary\":52750,\"address\":{\"zip\":\"94105\"}},"
        " {\"firstName\":\"Michael\",\"lastName\":\"Thompson\",\"deptCode\":\"B01\",\"employeeId\":\"00020\",\"managerId\":\"00010\",\"salary\":41250,\"address\":{\"zip\":\"94105\"}},"
        " {\"firstName\":\"Sally\",\"lastName\":\"Kwan\",\"deptCode\":\"C01\",\"employeeId\":\"00030\",\"managerId\":\"00010\",\"salary\":38250,\"address\":{\"zip\":\"10001\"}},"
        " {\"firstName\":\"John\",\"lastName\":\"Geyer\",\"deptCode\":\"B01\",\"employeeId\":\"00040\",\"managerId\":\"00020\",\"salary\":40175,\"address\":{\"zip\":\"10001\"}}]",
        NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "departments",
        "[{\"deptCode\":\"A00\",\"name\":\"Spiffy Computer Service\"},{\"deptCode\":\"B01\",\"name\":\"Planning\"},"
        " {\"deptCode\":\"C01\",\"name\":\"Information Center\"}]", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "animals",
        "[{\"id\":1,\"name\":\"cat\",\"color\":\"black\"},{\"id\":2,\"name\":\"cat\",\"color\":\"white\"},"
        " {\"id\":3,\"name\":\"dog\",\"color\":\"black\"},{\"id\":4,\"name\":\"dog\",\"color\":\"brown\"},"
        " {\"id\":5,\"name\":\"dog\",\"color\":\"white\"}]", NULL, NULL), TUREEN_OK);

    /* --- the reference's full-text table (d and j corrected: brown is a b*) */
    CHECK(match_is("null", "\"black\"", "[[1],[3]]"), "a) null path black");
    CHECK(match_is("null", "\"black cat\"", "[[1]]"), "b) null path black cat");
    CHECK(match_is("null", "\"black OR cat\"", "[[1],[2],[3]]"), "c) null path black OR cat");
    CHECK(match_is("null", "\"b*\"", "[[1],[3],[4]]"), "d) null path b*");
    CHECK(match_is("null", "\"black NOT cat\"", "[[3]]"), "e) null path black NOT cat");
    CHECK(match_is("null", "\"{animals:color}:black NOT cat\"", "[[3]]"), "f) {animals:color}:black NOT cat");
    CHECK(match_is("\"color\"", "\"black\"", "[[1],[3]]"), "g) color black");
    CHECK(match_is("\"color\"", "\"black cat\"", "[]"), "h) color black cat");
    CHECK(match_is("\"color\"", "\"black OR cat\"", "[[1],[3]]"), "i) color black OR cat");
    CHECK(match_is("\"color\"", "\"b*\"", "[[1],[3],[4]]"), "j) color b*");
    CHECK(match_is("\"color\"", "\"black NOT cat\"", "[[1],[3]]"), "k) color black NOT cat");
    CHECK(match_is("null", "\"BLACK\"", "[[1],[3]]"), "words ignore case");
    CHECK(match_is("null", "\"\\\"cat\\\" black\"", "[[1]]"), "a phrase beside a word");
    CHECK(match_is("null", "\"black,cat\"", "[[1]]"), "punctuation separates words");

    /* malformed match keys: TUREEN_E_QUERY with a message */
    static const struct { const char *key, *needle; } bad_keys[] = {
        {"\"\\\"black\"", "character 0"},      /* unbalanced quote */
        {"\"black \\\"cat\"", "character 6"},
        {"\"NOT cat\"", "character 0"},        /* dangling NOT */
        {"\"cat NOT\"", "NOT"},
        {"\"cat OR\"", "character 4"},         /* dangling OR */
        {"\"OR cat\"", "character 0"},
        {"\"cat NOT OR dog\"", "character 8"},
        {"\"{animals:nope}:cat\"", "character 0"},
        {"\"{animals\"", "character 0"},
        {"\"\"", "no terms"},
        {"\"%\"", "no terms"},
    };
    for (size_t i = 0; i < sizeof bad_keys / sizeof bad_keys[0]; i++) {
        snprintf(spec, sizeof spec, "{\"queryType\":\"match\",\"soupName\":\"animals\",\"indexPath\":null,\"matchKey\":%s}", bad_keys[i].key);
        json = NULL;
        CHECK_RC(tureen_query(s, spec, 0, &json), TUREEN_E_QUERY);
        CHECK_MSG_HAS(bad_keys[i].needle);
        CHECK(json == NULL, "no result on error");
        int64_t n = 7;
        CHECK_RC(tureen_count(s, spec, &n), TUREEN_E_QUERY);
        CHECK_RC(tureen_remove_by_query(s, spec), TUREEN_E_QUERY);
    }
    CHECK_RC(tureen_query(s, "{\"queryType\":\"match\",\"soupName\":\"departments\",\"matchKey\":\"x\"}", 0, &json), TUREEN_E_QUERY);
    CHECK_MSG_HAS("full_text");
    CHECK_RC(tureen_query(s, "{\"queryType\":\"match\",\"soupName\":\"animals\",\"indexPath\":\"id\",\"matchKey\":\"1\"}", 0, &json), TUREEN_E_QUERY);
    CHECK_RC(tureen_query(s, "{\"queryType\":\"match\",\"soupName\":\"animals\",\"matchKey\":5}", 0, &json), TUREEN_E_QUERY);
    CHECK_MSG_HAS("matchKey");

    /* The spec's text: a repeated member keeps its last value; text that
     * is no JSON is reported as such, even when a member before the fault
     * is unknown; a value that is no object is named. */
    CHECK(count_of("{\"queryType\":\"match\",\"queryType\":\"all\",\"soupName\":\"nope\",\"soupName\":\"animals\"}") == 5,
          "a repeated member keeps its last value");
    CHECK(count_of("{\"query\\u0054ype\":\"all\",\"soup\\u004eame\":\"animals\"}") == 5,
          "member names written with escapes are known by what they decode to");
    static const struct { const char *text, *needle; } bad_specs[] = {
        /* Names near a known one, by a letter or a case, are still unknown. */
        {"{\"queryType\":\"all\",\"soupName\":\"animals\",\"orde\":1}", "unknown member 'orde'"},
        {"{\"queryType\":\"all\",\"soupName\":\"animals\",\"orderPaths\":1}", "unknown member 'orderPaths'"},
        {"{\"queryType\":\"all\",\"soupName\":\"animals\",\"PageSize\":1}", "unknown member 'PageSize'"},
        {"{\"queryType\":\"all\",\"soupName\":\"animals\",\"\":1}", "unknown member ''"},
        {"{\"queryType\":\"all\",\"soupName\":\"animals\",\"gr\xc3\xb6\xc3\x9f" "e\":1}", "unknown member 'gr\xc3\xb6\xc3\x9f" "e'"},
        {"{\"bogus\":1,", "malformed JSON"},
        {"{\"bogus\":1,\"queryType\":\"all\",\"soupName\":\"animals\"} x", "malformed JSON"},
        {"{\"queryType\":\"all\",\"soupName\":\"animals\",\"bogus\":1}", "unknown member 'bogus'"},
        {"[{\"queryType\":\"all\",\"soupName\":\"animals\"}]", "must be a JSON object"},
        {"\"all\"", "must be a JSON object"},
        {"[1,", "malformed JSON"},
        {"", "malformed JSON"},
    };
    for (size_t i = 0; i < sizeof bad_specs / sizeof bad_specs[0]; i++) {
        json = NULL;
        CHECK_RC(tureen_query(s, bad_specs[i].text, 0, &json), TUREEN_E_QUERY);
        CHECK_MSG_HAS(bad_specs[i].needle);
        CHECK(json == NULL, "no result on error");
    }

    /* --- Smart SQL */
    CHECK(query_is("{\"queryType\":\"smart\",\"smartSql\":\"select {employees:firstName}, {employees:lastName} "
                   "from {employees} order by {employees:lastName}\"}",
                   "[[\"John\",\"Geyer\"],[\"Christopher\",\"Haas\"],[\"Sally\",\"Kwan\"],[\"Michael\",\"Thompson\"]]"),
          "basic select ordered by lastName");
    const char *join = "{\"queryType\":\"smart\",\"smartSql\":\"select {departments:name}, {employees:firstName} || ' ' || "
                       "{employees:lastName} from {employees}, {departments} where {departments:deptCode} = "
                       "{employees:deptCode} order by {departments:name}, {employees:lastName}\"";
    snprintf(spec, sizeof spec, "%s}", join);
    CHECK(query_is(spec, "[[\"Information Center\",\"Sally Kwan\"],[\"Planning\",\"John Geyer\"],"
                         "[\"Planning\",\"Michael Thompson\"],[\"Spiffy Computer Service\",\"Christopher Haas\"]]"), "join");
    CHECK(count_of(spec) == 4, "count of a join");
    snprintf(spec, sizeof spec, "%s,\"pageSize\":3}", join);
    CHECK(query_is(spec, "[[\"Information Center\",\"Sally Kwan\"],[\"Planning\",\"John Geyer\"],[\"Planning\",\"Michael Thompson\"]]"), "join, page 0 of 3");
    CHECK_RC(tureen_query(s, spec, 1, &json), TUREEN_OK);
    CHECK(json && strcmp(json, "[[\"Spiffy Computer Service\",\"Christopher Haas\"]]") == 0, "join, page 1 of 3");
    tureen_free(json);
    CHECK(query_is("{\"queryType\":\"smart\",\"smartSql\":\"select mgr.{employees:lastName}, e.{employees:lastName} "
                   "from {employees} as mgr, {employees} as e where mgr.{employees:employeeId} = e.{employees:managerId} "
                   "order by 1, 2\"}",
                   "[[\"Haas\",\"Kwan\"],[\"Haas\",\"Thompson\"],[\"Thompson\",\"Geyer\"]]"), "self-join with aliases");
    const char *aggregate = "{\"queryType\":\"smart\",\"smartSql\":\"select {employees:deptCode}, count(*), "
                            "sum({employees:salary}), avg({employees:salary}) from {employees} "
                            "group by {employees:deptCode} order by {employees:deptCode}\"}";
    CHECK(query_is(aggregate, "[[\"A00\",1,52750,52750.0],[\"B01\",2,81425,40712.5],[\"C01\",1,38250,38250.0]]"), "aggregate");
    CHECK(count_of(aggregate) == 3, "count of an aggregate");
    CHECK(query_is("{\"queryType\":\"smart\",\"smartSql\":\"select {employees:address.zip}, count(*) from {employees} "
                   "group by {employees:address.zip} order by {employees:address.zip} desc\"}",
                   "[[\"94105\",2],[\"10001\",2]]"), "group by a path with no index");
    CHECK(query_is("{\"queryType\":\"smart\",\"smartSql\":\"select {employees:lastName} from {employees} where "
                   "{employees:salary} > (select avg({employees:salary}) from {employees}) order by 1\"}",
                   "[[\"Haas\"]]"), "subquery");

    /* {soup:_soup}: the entry as a JSON object */
    CHECK_RC(tureen_query(s, "{\"queryType\":\"smart\",\"smartSql\":\"select {employees:_soup}, {employees:address} "
                             "from {employees} where {employees:lastName} = 'Haas'\"}", 0, &json), TUREEN_OK);
    const char *haas = "[[{\"firstName\":\"Christopher\",\"lastName\":\"Haas\",";
    CHECK(json && strncmp(json, haas, strlen(haas)) == 0
          && strstr(json, "\"_soupEntryId\":1,\"_soupLastModifiedDate\":")
          && strstr(json, "},{\"zip\":\"94105\"}]]"), "_soup and an object path come back as JSON objects");
    tureen_free(json);

    /* args: strings, numbers, booleans, null; values, never SQL */
    CHECK(query_is("{\"queryType\":\"smart\",\"smartSql\":\"select ?, ?, ?, ?, ?\","
                   "\"args\":[\"x' OR '1'='1\",7,2.5,true,null]}",
                   "[[\"x' OR '1'='1\",7,2.5,1,null]]"), "args bound");
    CHECK(query_is("{\"queryType\":\"smart\",\"smartSql\":\"select {employees:lastName} from {employees} "
                   "where {employees:deptCode} = ? and {employees:salary} > ? order by 1\",\"args\":[\"B01\",41000]}",
                   "[[\"Thompson\"]]"), "args in a where clause");
    CHECK(count_of("{\"queryType\":\"smart\",\"smartSql\":\"select * from {employees} where {employees:lastName} = ?\","
                   "\"args\":[\"x' OR '1'='1\"]}") == 0, "a quoted arg matches nothing");
    CHECK_RC(tureen_query(s, "{\"queryType\":\"smart\",\"smartSql\":\"select ?\"}", 0, &json), TUREEN_E_QUERY);
    CHECK_MSG_HAS("parameter");
    CHECK_RC(tureen_query(s, "{\"queryType\":\"smart\",\"smartSql\":\"select ?\",\"args\":[[1]]}", 0, &json), TUREEN_E_QUERY);
    CHECK_MSG_HAS("args");
    CHECK_RC(tureen_query(s, "{\"queryType\":\"smart\",\"smartSql\":\"select {nosoup:x} from {nosoup}\"}", 0, &json), TUREEN_E_QUERY);
    CHECK_MSG_HAS("character 7");
    CHECK_RC(tureen_remove_by_query(s, "{\"queryType\":\"smart\",\"smartSql\":\"select 1\"}"), TUREEN_E_QUERY);

    /* --- injection attempts: refused cleanly, or harmless; nothing changes */
    char *before = fingerprint();
    int64_t n = -1;
    for (size_t i = 0; i < N_REFUSED; i++) {
        snprintf(spec, sizeof spec, "{\"queryType\":\"smart\",\"smartSql\":\"%s\"}", refused[i]);
        json = NULL;
        int rc = tureen_query(s, spec, 0, &json);
        if (rc != TUREEN_E_QUERY) fprintf(stderr, "  refused[%zu] %s: %d %s\n", i, refused[i], rc, tureen_errmsg());
        CHECK(rc == TUREEN_E_QUERY && json == NULL && tureen_errmsg()[0], "a write, PRAGMA, ATTACH or second statement is refused");
        CHECK_RC(tureen_count(s, spec, &n), TUREEN_E_QUERY);
        CHECK_RC(tureen_remove_by_query(s, spec), TUREEN_E_QUERY);
    }
    for (size_t i = 0; i < N_EVIL; i++) {
        const char *e = evil[i];
        int pct = strcmp(e, "\"%\"") == 0;
        /* keys: values */
        snprintf(spec, sizeof spec, "{\"queryType\":\"exact\",\"soupName\":\"employees\",\"indexPath\":\"lastName\",\"matchKey\":%s}", e);
        CHECK(count_of(spec) == 0, "an exact key is a value");
        snprintf(spec, sizeof spec, "{\"queryType\":\"exact\",\"soupName\":\"employees\",\"indexPath\":\"salary\",\"matchKey\":%s}", e);
        CHECK(count_of(spec) == 0, "an exact key on an integer index is a value");
        snprintf(spec, sizeof spec, "{\"queryType\":\"like\",\"soupName\":\"employees\",\"indexPath\":\"lastName\",\"likeKey\":%s}", e);
        CHECK(count_of(spec) == (pct ? 4 : 0), "a like key is a pattern");
        snprintf(spec, sizeof spec, "{\"queryType\":\"range\",\"soupName\":\"employees\",\"indexPath\":\"lastName\",\"beginKey\":%s,\"endKey\":%s}", e, e);
        CHECK(count_of(spec) == 0, "range keys are values");
        snprintf(spec, sizeof spec, "{\"queryType\":\"match\",\"soupName\":\"animals\",\"indexPath\":null,\"matchKey\":%s}", e);
        json = NULL;
        int rc = tureen_query(s, spec, 0, &json);
        CHECK((rc == TUREEN_OK && json && strcmp(json, "[]") == 0) || (rc == TUREEN_E_QUERY && !json),
              "a match key finds nothing or is refused");
        tureen_free(json);
        /* paths: refused */
        snprintf(spec, sizeof spec, "{\"queryType\":\"exact\",\"soupName\":\"employees\",\"indexPath\":%s,\"matchKey\":\"x\"}", e);
        CHECK_RC(tureen_query(s, spec, 0, &json), TUREEN_E_QUERY);
        CHECK_RC(tureen_remove_by_query(s, spec), TUREEN_E_QUERY);
        snprintf(spec, sizeof spec, "{\"queryType\":\"all\",\"soupName\":\"employees\",\"orderPath\":%s}", e);
        CHECK_RC(tureen_query(s, spec, 0, &json), TUREEN_E_QUERY);
        snprintf(spec, sizeof spec, "{\"queryType\":\"match\",\"soupName\":\"animals\",\"indexPath\":%s,\"matchKey\":\"cat\"}", e);
        CHECK_RC(tureen_query(s, spec, 0, &json), TUREEN_E_QUERY);
        /* selectPaths: refused, or null for a path no entry has */
        snprintf(spec, sizeof spec, "{\"queryType\":\"all\",\"soupName\":\"employees\",\"selectPaths\":[%s]}", e);
        json = NULL;
        rc = tureen_query(s, spec, 0, &json);
        CHECK((rc == TUREEN_OK && json && strcmp(json, "[[null],[null],[null],[null]]") == 0) || (rc == TUREEN_E_QUERY && !json),
              "selectPaths: null or refused");
        tureen_free(json);
        /* soup names: not found */
        snprintf(spec, sizeof spec, "{\"queryType\":\"all\",\"soupName\":%s}", e);
        CHECK_RC(tureen_query(s, spec, 0, &json), TUREEN_E_NOT_FOUND);
        CHECK_RC(tureen_remove_by_query(s, spec), TUREEN_E_NOT_FOUND);
        /* Smart SQL: the text as the SQL, as an arg */
        snprintf(spec, sizeof spec, "{\"queryType\":\"smart\",\"smartSql\":%s}", e);
        CHECK_RC(tureen_query(s, spec, 0, &json), TUREEN_E_QUERY);
        snprintf(spec, sizeof spec, "{\"queryType\":\"smart\",\"smartSql\":\"select count(*) from {employees} "
                                    "where {employees:lastName} like ?\",\"args\":[%s]}", e);
        CHECK(query_is(spec, pct ? "[[4]]" : "[[0]]"), "an arg is a value");
        /* external id values: data */
        snprintf(spec, sizeof spec, "{\"employeeId\":%s,\"lastName\":\"Evil\"}", e);
        CHECK_RC(tureen_upsert(s, "employees", spec, "employeeId", NULL), TUREEN_OK);
        CHECK_RC(tureen_upsert(s, "employees", spec, "employeeId", &json), TUREEN_OK);
        CHECK(json && strstr(json, "\"_soupEntryId\":"), "upsert by an evil external id");
        const char *id = json ? strstr(json, "\"_soupEntryId\":") : NULL;
        char ids[64] = "[]";
        if (id) snprintf(ids, sizeof ids, "[%lld]", atoll(id + 15));
        tureen_free(json);
        CHECK(count_of("{\"queryType\":\"all\",\"soupName\":\"employees\"}") == 5, "the second upsert updated the first");
        CHECK_RC(tureen_remove(s, "employees", ids), TUREEN_OK);
        /* ids lists: integers only */
        snprintf(spec, sizeof spec, "[1, %s]", e);
        CHECK_RC(tureen_retrieve(s, "employees", spec, &json), TUREEN_E_INVALID);
        CHECK_RC(tureen_remove(s, "employees", spec), TUREEN_E_INVALID);
    }
    CHECK_RC(tureen_retrieve(s, "employees", "[1) OR (1=1]", &json), TUREEN_E_INVALID);
    CHECK_RC(tureen_remove(s, "employees", "[1); DELETE FROM TABLE_1; --]"), TUREEN_E_INVALID);
    CHECK_RC(tureen_soup_register(s, "x'); DROP TABLE TABLE_1; --", "[{\"path\":\"a\",\"type\":\"string\"}]"), TUREEN_E_INVALID);
    CHECK_RC(tureen_upsert(s, "employees'--", "{\"a\":1}", NULL, NULL), TUREEN_E_NOT_FOUND);
    char *after = fingerprint();
    CHECK(before && after && strcmp(before, after) == 0, "soups, index specs and entries unchanged by the attempts");
    CHECK(strstr(after, "(sound)") != NULL, "integrity check passes");
    free(before);
    free(after);
    CHECK(match_is("null", "\"black OR white\"", "[[1],[2],[3],[5]]"), "the full-text index is unchanged too");

    /* SmartStore's fidelity: an integer index clamps 1e30 to INT64_MAX, and
     * a projection through two levels of arrays keeps their nesting */
    CHECK_RC(tureen_soup_register(s, "fidelity", "[{\"path\":\"n\",\"type\":\"integer\"}]"), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "fidelity", "{\"n\":1e30,\"d\":[{\"dd\":[{\"x\":\"a\"},{\"x\":\"b\"}]},{\"dd\":[{\"x\":\"c\"}]}]}",
                           NULL, NULL), TUREEN_OK);
    CHECK(query_is("{\"queryType\":\"exact\",\"soupName\":\"fidelity\",\"indexPath\":\"n\","
                   "\"matchKey\":9223372036854775807,\"selectPaths\":[\"n\",\"d.dd.x\"]}",
                   "[[9223372036854775807,[[\"a\",\"b\"],[\"c\"]]]]"), "clamped integer, nested projection");

    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
