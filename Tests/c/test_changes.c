/* The change feed, through the header: every committed write of every kind
 * is one row per entry in seq order with its record id, kind and origin; a
 * rolled-back write leaves none; "soup", "limit" and "lastSeq" page through
 * it; a position older than what the feed keeps (by count, by age) is
 * TUREEN_E_NOT_FOUND and one past its newest TUREEN_E_INVALID; and a soup
 * listener hears another process's writes with their ids. */
#define _GNU_SOURCE
#include "files.h"
#include "check.h"
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#define KEY "{\"raw_key\":\"5a5b5c5d5e5f60615a5b5c5d5e5f60615a5b5c5d5e5f60615a5b5c5d5e5f6061\"}"
#define SPECS "[{\"path\":\"k\",\"type\":\"string\"}]"

/* The feed's answer for `options` (NULL: defaults), or "" after an error;
 * kept until the next call. */
static char answer[65536];
static const char *changes(tureen_store *s, const char *options)
{
    char *json = NULL;
    answer[0] = '\0';
    if (tureen_changes(s, options, &json) == TUREEN_OK && json) {
        snprintf(answer, sizeof answer, "%s", json);
        tureen_free(json);
    }
    return answer;
}

#define CHECK_CHANGES(store, options, expected) do { \
    const char *got_ = changes((store), (options)); \
    if (strcmp(got_, (expected)) == 0) checks_passed++; \
    else { checks_failed++; fprintf(stderr, "FAIL %s:%d: changes(%s)\n  got      %s\n  expected %s\n", \
                                    __FILE__, __LINE__, (options) ? (options) : "NULL", got_, (expected)); } \
} while (0)

#define ROW(seq, soup, entry, record, kind) \
    "{\"seq\":" #seq ",\"soup\":\"" soup "\",\"entryId\":" #entry ",\"recordId\":" record ",\"kind\":\"" kind "\",\"origin\":\"app\"}"

/* What one soup listener received, shared with the library's thread. */
static pthread_mutex_t heard_lock = PTHREAD_MUTEX_INITIALIZER;
static char heard[8][512];
static int heard_count;

static void on_event(void *ctx, const char *json)
{
    (void)ctx;
    pthread_mutex_lock(&heard_lock);
    if (heard_count < 8) snprintf(heard[heard_count++], sizeof heard[0], "%s", json);
    pthread_mutex_unlock(&heard_lock);
}

/* Waits (at most 5 s) until n events were heard. */
static int wait_heard(int n)
{
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&heard_lock);
        int got = heard_count;
        pthread_mutex_unlock(&heard_lock);
        if (got >= n) return 1;
        usleep(10000);
    }
    return 0;
}

static int child_creates(tureen_store *s)
{
    return tureen_upsert(s, "c", "[{\"k\":\"x\",\"id\":\"c-1\"},{\"k\":\"y\",\"id\":\"c-2\"}]", NULL, NULL);
}

static int child_removes(tureen_store *s) { return tureen_remove(s, "c", "[1]"); }

/* The child process: its own handle of the store, one write ("creates" or
 * "removes"). */
static int child_main(const char *path, const char *what)
{
    tureen_store *s = NULL;
    if (tureen_store_open(path, KEY, &s) != TUREEN_OK) return 2;
    int rc = strcmp(what, "creates") == 0 ? child_creates(s) : child_removes(s);
    tureen_store_close(s);
    return rc == TUREEN_OK ? 0 : 3;
}

/* Runs the child as this program again (fork, then exec): a bare fork of a
 * process whose store has threads of its own copies a lock one of them
 * may hold (SQLite's), and the child's open then waits on it for ever. */
static int in_child(const char *path, const char *what)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "test_changes", "child", path, what, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "child") == 0) return child_main(argv[2], argv[3]);
    const char *dir = make_temp_dir();
    char path[600];
    snprintf(path, sizeof path, "%s/feed.tureen", dir);
    tureen_store *s = NULL;
    CHECK_RC(tureen_store_open(path, KEY, &s), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "a", SPECS), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "b", SPECS), TUREEN_OK);
    CHECK_CHANGES(s, NULL, "{\"changes\":[],\"lastSeq\":0}");

    /* --- every write kind, one row per entry, in commit order --------------- */
    CHECK_RC(tureen_upsert(s, "a", "[{\"k\":\"1\",\"id\":\"r-1\"},{\"k\":\"2\",\"id\":42},{\"k\":\"3\",\"id\":true}]", NULL, NULL),
             TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "b", "{\"k\":\"b1\",\"id\":\"rb\"}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "a", "{\"k\":\"1\",\"id\":\"r-1\",\"more\":1}", "k", NULL), TUREEN_OK);
    CHECK_RC(tureen_remove(s, "a", "[2,99]"), TUREEN_OK);
    CHECK_CHANGES(s, NULL, "{\"changes\":["
                  ROW(1, "a", 1, "\"r-1\"", "create") "," ROW(2, "a", 2, "42", "create") ","
                  ROW(3, "a", 3, "null", "create") "," ROW(4, "b", 1, "\"rb\"", "create") ","
                  ROW(5, "a", 1, "\"r-1\"", "update") "," ROW(6, "a", 2, "42", "delete") "],\"lastSeq\":6}");

    /* --- "soup", "limit", "since" and "lastSeq" ------------------------------ */
    CHECK_CHANGES(s, "{\"soup\":\"b\"}", "{\"changes\":[" ROW(4, "b", 1, "\"rb\"", "create") "],\"lastSeq\":6}");
    CHECK_CHANGES(s, "{\"limit\":2}", "{\"changes\":[" ROW(1, "a", 1, "\"r-1\"", "create") ","
                  ROW(2, "a", 2, "42", "create") "],\"lastSeq\":2}");
    CHECK_CHANGES(s, "{\"since\":2,\"limit\":2,\"soup\":\"a\"}", "{\"changes\":[" ROW(3, "a", 3, "null", "create") ","
                  ROW(5, "a", 1, "\"r-1\"", "update") "],\"lastSeq\":5}");
    CHECK_CHANGES(s, "{\"since\":6}", "{\"changes\":[],\"lastSeq\":6}");
    CHECK_CHANGES(s, "{\"since\":\"now\",\"soup\":\"a\"}", "{\"changes\":[],\"lastSeq\":6}");
    CHECK_CHANGES(s, "{\"soup\":\"nobody\"}", "{\"changes\":[],\"lastSeq\":6}");

    /* --- a rollback leaves nothing; a host transaction is its calls' rows ---- */
    CHECK_RC(tureen_transaction_begin(s), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "a", "{\"k\":\"gone\"}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_transaction_rollback(s), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "a", "{\"k\":\"bad\",\"_soupEntryId\":\"x\"}", NULL, NULL), TUREEN_E_INVALID);
    CHECK_CHANGES(s, "{\"since\":6}", "{\"changes\":[],\"lastSeq\":6}");
    CHECK_RC(tureen_transaction_begin(s), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "b", "{\"k\":\"b2\"}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_remove(s, "b", "[1]"), TUREEN_OK);
    CHECK_RC(tureen_transaction_commit(s), TUREEN_OK);
    /* The rolled-back transaction took no seq: the next one is 7. */
    CHECK_CHANGES(s, "{\"since\":6}", "{\"changes\":[" ROW(7, "b", 2, "null", "create") ","
                  ROW(8, "b", 1, "\"rb\"", "delete") "],\"lastSeq\":8}");

    /* --- a clear and a drop are a delete per entry, record ids read first ---- */
    CHECK_RC(tureen_soup_clear(s, "a"), TUREEN_OK);
    CHECK_RC(tureen_soup_drop(s, "b"), TUREEN_OK);
    CHECK_CHANGES(s, "{\"since\":8}", "{\"changes\":[" ROW(9, "a", 1, "\"r-1\"", "delete") ","
                  ROW(10, "a", 3, "null", "delete") "," ROW(11, "b", 2, "null", "delete") "],\"lastSeq\":11}");
    /* Index changes and reindexing change no entry. */
    CHECK_RC(tureen_upsert(s, "a", "{\"k\":\"new\",\"n\":1,\"id\":7}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_soup_alter(s, "a", "[{\"path\":\"k\",\"type\":\"string\"},{\"path\":\"n\",\"type\":\"integer\"}]", 0),
             TUREEN_OK);
    CHECK_RC(tureen_soup_reindex(s, "a", "[\"n\"]"), TUREEN_OK);
    CHECK_CHANGES(s, "{\"since\":11}", "{\"changes\":[" ROW(12, "a", 4, "7", "create") "],\"lastSeq\":12}");

    /* --- bad options, a position never given -------------------------------- */
    CHECK_RC(tureen_changes(s, "{\"since\":13}", &(char *){NULL}), TUREEN_E_INVALID);
    CHECK_MSG_HAS("past the newest change");
    CHECK_RC(tureen_changes(s, "{\"since\":-1}", &(char *){NULL}), TUREEN_E_INVALID);
    CHECK_RC(tureen_changes(s, "{\"limit\":0}", &(char *){NULL}), TUREEN_E_INVALID);
    CHECK_RC(tureen_changes(s, "{\"from\":1}", &(char *){NULL}), TUREEN_E_INVALID);
    CHECK_RC(tureen_changes(s, "[1]", &(char *){NULL}), TUREEN_E_INVALID);
    CHECK_RC(tureen_changes(s, NULL, NULL), TUREEN_E_MISUSE);
    CHECK_RC(tureen_changes(NULL, NULL, &(char *){NULL}), TUREEN_E_MISUSE);

    /* --- another process's writes: heard with their ids, and in the feed ----- */
    CHECK_RC(tureen_soup_register(s, "c", SPECS), TUREEN_OK);
    tureen_listener *l = NULL;
    CHECK_RC(tureen_soup_listen(s, "c", on_event, NULL, NULL, &l), TUREEN_OK);
    usleep(200000);
    CHECK(in_child(path, "creates"), "a child process writes");
    CHECK(wait_heard(1), "another process's write is heard");
    CHECK(strcmp(heard[0], "{\"soup\":\"c\",\"created\":[1,2],\"updated\":[],\"deleted\":[],\"origin\":\"external\","
                           "\"cleared\":false}") == 0, "with the ids it created");
    CHECK(in_child(path, "removes"), "a child process removes");
    CHECK(wait_heard(2), "another process's remove is heard");
    CHECK(strcmp(heard[1], "{\"soup\":\"c\",\"created\":[],\"updated\":[],\"deleted\":[1],\"origin\":\"external\","
                           "\"cleared\":false}") == 0, "with the id it deleted");
    CHECK_CHANGES(s, "{\"since\":12}", "{\"changes\":[" ROW(13, "c", 1, "\"c-1\"", "create") ","
                  ROW(14, "c", 2, "\"c-2\"", "create") "," ROW(15, "c", 1, "\"c-1\"", "delete") "],\"lastSeq\":15}");
    CHECK_RC(tureen_listener_remove(l), TUREEN_OK);
    CHECK_RC(tureen_store_close(s), TUREEN_OK);

    /* --- retention: by count, then by age, at a handle's first write --------- */
    CHECK_RC(tureen_store_open(path, "{\"raw_key\":\"5a5b5c5d5e5f60615a5b5c5d5e5f60615a5b5c5d5e5f60615a5b5c5d5e5f6061\","
                                     "\"changes_keep_count\":4}", &s), TUREEN_OK);
    CHECK_CHANGES(s, "{\"since\":0,\"limit\":1}", "{\"changes\":[" ROW(1, "a", 1, "\"r-1\"", "create") "],\"lastSeq\":1}");
    CHECK_RC(tureen_upsert(s, "a", "[{\"k\":\"p1\"},{\"k\":\"p2\"}]", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_changes(s, "{\"since\":0}", &(char *){NULL}), TUREEN_E_NOT_FOUND);
    CHECK_MSG_HAS("no longer kept");
    CHECK_RC(tureen_changes(s, "{\"since\":12}", &(char *){NULL}), TUREEN_E_NOT_FOUND);
    CHECK_CHANGES(s, "{\"since\":13}", "{\"changes\":[" ROW(14, "c", 2, "\"c-2\"", "create") ","
                  ROW(15, "c", 1, "\"c-1\"", "delete") "," ROW(16, "a", 5, "null", "create") ","
                  ROW(17, "a", 6, "null", "create") "],\"lastSeq\":17}");
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    usleep(20000);
    CHECK_RC(tureen_store_open(path, "{\"raw_key\":\"5a5b5c5d5e5f60615a5b5c5d5e5f60615a5b5c5d5e5f60615a5b5c5d5e5f6061\","
                                     "\"changes_keep_ms\":10,\"changes_keep_count\":0}", &s), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "a", "{\"k\":\"p3\",\"id\":\"p-3\"}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_changes(s, "{\"since\":16}", &(char *){NULL}), TUREEN_E_NOT_FOUND);
    CHECK_CHANGES(s, "{\"since\":17}", "{\"changes\":[" ROW(18, "a", 7, "\"p-3\"", "create") "],\"lastSeq\":18}");
    CHECK_CHANGES(s, "{\"since\":\"now\"}", "{\"changes\":[],\"lastSeq\":18}");
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK_RC(tureen_store_open(path, "{\"raw_key\":\"5a5b5c5d5e5f60615a5b5c5d5e5f60615a5b5c5d5e5f60615a5b5c5d5e5f6061\","
                                     "\"changes_keep_ms\":-1}", &s), TUREEN_E_INVALID);

    remove_temp_dir(dir);
    return DONE();
}
