/* Soup listeners, live queries and transactions across calls, through the
 * header: every write kind yields the right ids, a rollback yields nothing,
 * another handle's and another process's writes are seen, a live query
 * fires when its page changes and not for an unrelated soup, a listener
 * removes itself from its own callback, and closing the store releases
 * every listener once. Waits poll with a bound; nothing sleeps blindly. */
#define _GNU_SOURCE
#include "files.h"
#include "check.h"
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define KEY "{\"raw_key\":\"5a5b5c5d5e5f60615a5b5c5d5e5f60615a5b5c5d5e5f60615a5b5c5d5e5f6061\"}"
#define SPECS "[{\"path\":\"k\",\"type\":\"string\"},{\"path\":\"n\",\"type\":\"integer\"}]"
#define MAX_EVENTS 256

/* What one listener received, shared with the library's thread. */
typedef struct {
    pthread_mutex_t lock;
    char *events[MAX_EVENTS];
    int count;
    int freed;
    pthread_t thread;
    int remove_self;            /* remove the listener from inside the callback */
    tureen_listener *self;
    int self_rc;
} sink;

static void sink_init(sink *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
}

static void on_event(void *ctx, const char *json)
{
    sink *s = ctx;
    pthread_mutex_lock(&s->lock);
    if (s->count < MAX_EVENTS) s->events[s->count++] = strdup(json);
    s->thread = pthread_self();
    int remove = s->remove_self;
    s->remove_self = 0;
    pthread_mutex_unlock(&s->lock);
    if (remove) s->self_rc = tureen_listener_remove(s->self);
}

static void on_free(void *ctx)
{
    sink *s = ctx;
    pthread_mutex_lock(&s->lock);
    s->freed++;
    pthread_mutex_unlock(&s->lock);
}

static int count_of(sink *s)
{
    pthread_mutex_lock(&s->lock);
    int n = s->count;
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* Waits (at most 5 s) until the sink holds at least n events. */
static int wait_for(sink *s, int n)
{
    for (int i = 0; i < 500; i++) {
        if (count_of(s) >= n) return 1;
        usleep(10000);
    }
    return 0;
}

/* Event i, or "" when there is none. */
static const char *event(sink *s, int i)
{
    pthread_mutex_lock(&s->lock);
    const char *e = i < s->count ? s->events[i] : "";
    pthread_mutex_unlock(&s->lock);
    return e;
}

static void sink_free(sink *s)
{
    for (int i = 0; i < s->count; i++) free(s->events[i]);
    s->count = 0;
}

static int has(const char *json, const char *needle) { return strstr(json, needle) != NULL; }

typedef struct {
    tureen_store *store;
    int rc;
    int done;
} closer;

static void *close_on_a_thread(void *arg)
{
    closer *c = arg;
    c->rc = tureen_store_close(c->store);
    __atomic_store_n(&c->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* The child process: its own handle of the store, one entry written to soup "a". */
static int child_main(const char *path)
{
    tureen_store *s = NULL;
    if (tureen_store_open(path, KEY, &s) != TUREEN_OK) return 2;
    int rc = tureen_upsert(s, "a", "{\"k\":\"from-child\",\"n\":99}", NULL, NULL);
    tureen_store_close(s);
    return rc == TUREEN_OK ? 0 : 3;
}

/* Runs the child as this program again (fork, then exec): a bare fork of a
 * process whose store has threads of its own copies a lock one of them
 * may hold (SQLite's), and the child's open then waits on it for ever. */
static int write_from_child(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "test_listeners", "child", path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0) return child_main(argv[2]);
    const char *dir = make_temp_dir();
    char path[600];
    snprintf(path, sizeof path, "%s/listen.tureen", dir);
    tureen_store *s = NULL;
    CHECK_RC(tureen_store_open(path, KEY, &s), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "a", SPECS), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "b", SPECS), TUREEN_OK);

    /* --- soup listener: every write kind --------------------------------- */
    sink on_a;
    sink_init(&on_a);
    tureen_listener *la = NULL;
    CHECK_RC(tureen_soup_listen(s, "a", on_event, &on_a, on_free, &la), TUREEN_OK);
    CHECK(la != NULL, "a listener handle comes back");

    CHECK_RC(tureen_upsert(s, "a", "[{\"k\":\"x\",\"n\":1},{\"k\":\"y\",\"n\":2}]", NULL, NULL), TUREEN_OK);
    CHECK(wait_for(&on_a, 1), "an upsert is heard");
    CHECK(has(event(&on_a, 0), "\"soup\":\"a\"") && has(event(&on_a, 0), "\"created\":[1,2]")
          && has(event(&on_a, 0), "\"updated\":[]") && has(event(&on_a, 0), "\"origin\":\"app\""),
          "two created ids, one event for the commit");
    CHECK(!pthread_equal(on_a.thread, pthread_self()), "the callback runs on the library's thread");

    CHECK_RC(tureen_upsert(s, "b", "{\"k\":\"z\",\"n\":3}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "a", "{\"k\":\"x\",\"n\":10}", "k", NULL), TUREEN_OK);
    CHECK(wait_for(&on_a, 2), "an update is heard");
    CHECK(has(event(&on_a, 1), "\"updated\":[1]") && has(event(&on_a, 1), "\"created\":[]"),
          "an upsert by external id is an update (and soup b's write is not heard on a)");

    CHECK_RC(tureen_remove(s, "a", "[2]"), TUREEN_OK);
    CHECK(wait_for(&on_a, 3), "a remove is heard");
    CHECK(has(event(&on_a, 2), "\"deleted\":[2]"), "the removed id");

    /* A rolled-back transaction yields nothing; a committed one yields one event. */
    CHECK_RC(tureen_transaction_begin(s), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "a", "[{\"k\":\"r1\"},{\"k\":\"r2\"}]", NULL, NULL), TUREEN_OK);
    int64_t n = 0;
    CHECK_RC(tureen_count(s, "{\"queryType\":\"all\",\"soupName\":\"a\"}", &n), TUREEN_OK);
    CHECK(n == 3, "inside the transaction, its thread reads its own writes");
    CHECK_RC(tureen_transaction_rollback(s), TUREEN_OK);
    CHECK_RC(tureen_count(s, "{\"queryType\":\"all\",\"soupName\":\"a\"}", &n), TUREEN_OK);
    CHECK(n == 1, "a rollback undoes every write of the transaction");
    CHECK_RC(tureen_transaction_rollback(s), TUREEN_E_MISUSE);
    CHECK_RC(tureen_transaction_begin(s), TUREEN_OK);
    CHECK_RC(tureen_transaction_begin(s), TUREEN_E_MISUSE);
    CHECK_RC(tureen_upsert(s, "a", "{\"k\":\"c1\"}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "a", "{\"k\":\"c2\"}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_remove(s, "a", "[1]"), TUREEN_OK);
    CHECK_RC(tureen_transaction_commit(s), TUREEN_OK);
    CHECK(wait_for(&on_a, 4), "the commit is heard");
    usleep(200000);
    CHECK(count_of(&on_a) == 4, "the rollback was never heard, the commit once");
    CHECK(has(event(&on_a, 3), "\"created\":[3,4]") && has(event(&on_a, 3), "\"deleted\":[1]"),
          "one event holds every write of the transaction");

    /* Inside a transaction, rekey and compact are refused (they would wait
     * for the write lock the transaction holds), and another thread cannot
     * close the store under it (its commit could not be called any more). */
    CHECK_RC(tureen_transaction_begin(s), TUREEN_OK);
    CHECK_RC(tureen_store_rekey(s, "{\"key\":\"k\",\"kdf_iter\":1}"), TUREEN_E_MISUSE);
    CHECK_RC(tureen_store_compact(s), TUREEN_E_MISUSE);
    closer c = {s, -1, 0};
    pthread_t t;
    pthread_create(&t, NULL, close_on_a_thread, &c);
    for (int i = 0; i < 1000 && !__atomic_load_n(&c.done, __ATOMIC_SEQ_CST); i++) usleep(10000);
    int closed_in_time = __atomic_load_n(&c.done, __ATOMIC_SEQ_CST);
    CHECK(closed_in_time && c.rc == TUREEN_E_MISUSE, "close from another thread during a transaction is refused at once");
    CHECK_RC(tureen_transaction_rollback(s), TUREEN_OK);
    if (closed_in_time) pthread_join(t, NULL); else pthread_detach(t);

    CHECK_RC(tureen_soup_clear(s, "a"), TUREEN_OK);
    CHECK(wait_for(&on_a, 5), "a clear is heard");
    CHECK(has(event(&on_a, 4), "\"cleared\":true"), "a clear says so");

    /* --- another handle of the same file, another process ------------------ */
    tureen_store *s2 = NULL;
    CHECK_RC(tureen_store_open(path, KEY, &s2), TUREEN_OK);
    CHECK_RC(tureen_upsert(s2, "a", "{\"k\":\"other-handle\"}", NULL, NULL), TUREEN_OK);
    CHECK(wait_for(&on_a, 6), "a write through another handle is heard");
    CHECK(has(event(&on_a, 5), "\"created\":[5]"), "with its ids");
    CHECK_RC(tureen_store_close(s2), TUREEN_OK);
    usleep(300000);  /* the other handle's commit is behind us */
    int before = count_of(&on_a);
    CHECK(write_from_child(path), "a child process writes");
    CHECK(wait_for(&on_a, before + 1), "another process's write is noticed");
    CHECK(has(event(&on_a, before), "\"origin\":\"external\""), "as an external change");

    /* --- live query ----------------------------------------------------------- */
    sink live;
    sink_init(&live);
    tureen_listener *lq = NULL;
    CHECK_RC(tureen_live_query(s, "{\"queryType\":\"range\",\"soupName\":\"a\",\"indexPath\":\"n\",\"beginKey\":0,"
                                  "\"endKey\":100,\"orderPath\":\"n\",\"pageSize\":10,\"selectPaths\":[\"k\"]}",
                               on_event, &live, on_free, &lq), TUREEN_OK);
    CHECK(wait_for(&live, 1), "a live query delivers its first page at once");
    CHECK(strcmp(event(&live, 0), "[[\"from-child\"]]") == 0, "the first page, as tureen_query gives it");
    CHECK_RC(tureen_upsert(s, "b", "{\"k\":\"unrelated\",\"n\":5}", NULL, NULL), TUREEN_OK);
    CHECK_RC(tureen_upsert(s, "a", "{\"k\":\"no-n\"}", NULL, NULL), TUREEN_OK);  /* outside the range */
    CHECK_RC(tureen_upsert(s, "a", "{\"k\":\"low\",\"n\":1}", NULL, NULL), TUREEN_OK);
    CHECK(wait_for(&live, 2), "a change to the page is delivered");
    usleep(200000);
    CHECK(count_of(&live) == 2, "neither another soup's write nor one outside the page re-delivers");
    CHECK(strcmp(event(&live, 1), "[[\"low\"],[\"from-child\"]]") == 0, "the new page");
    CHECK_RC(tureen_live_query(s, "{\"queryType\":\"all\",\"soupName\":\"nope\"}", on_event, &live, on_free, &lq),
             TUREEN_E_NOT_FOUND);

    /* --- removal from inside the callback; stale handles --------------------- */
    sink self;
    sink_init(&self);
    tureen_listener *ls = NULL;
    CHECK_RC(tureen_soup_listen(s, NULL, on_event, &self, on_free, &ls), TUREEN_OK);
    self.self = ls;
    self.remove_self = 1;
    CHECK_RC(tureen_upsert(s, "b", "{\"k\":\"bye\"}", NULL, NULL), TUREEN_OK);
    CHECK(wait_for(&self, 1), "the self-removing listener is called");
    for (int i = 0; i < 500 && self.freed == 0; i++) usleep(10000);
    CHECK(self.self_rc == TUREEN_OK, "removing a listener from its own callback succeeds (no deadlock)");
    CHECK(self.freed == 1, "its free_ctx runs once, after the callback");
    CHECK_RC(tureen_upsert(s, "b", "{\"k\":\"after\"}", NULL, NULL), TUREEN_OK);
    usleep(200000);
    CHECK(count_of(&self) == 1, "a removed listener is never called again");
    CHECK_RC(tureen_listener_remove(ls), TUREEN_E_MISUSE);
    CHECK_RC(tureen_listener_remove(NULL), TUREEN_E_MISUSE);
    CHECK_RC(tureen_listener_remove((tureen_listener *)(uintptr_t)0x1234560), TUREEN_E_MISUSE);
    CHECK_RC(tureen_listener_remove((tureen_listener *)s), TUREEN_E_MISUSE);  /* a store is no listener */

    CHECK_RC(tureen_listener_remove(la), TUREEN_OK);
    CHECK(on_a.freed == 1, "remove calls free_ctx before it returns");

    /* --- close with a listener alive -------------------------------------------- */
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK(live.freed == 1, "closing the store releases its live query once");
    CHECK_RC(tureen_listener_remove(lq), TUREEN_E_MISUSE);
    CHECK(live.freed == 1, "and a late remove does not release it again");
    sink_free(&on_a);
    sink_free(&live);
    sink_free(&self);
    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
