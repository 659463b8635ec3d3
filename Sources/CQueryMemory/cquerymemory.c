#include "cquerymemory.h"
#include <stddef.h>

/* sqlite3_mem_methods, as sqlite3.h declares it (stable since 3.6). */
struct mem_methods {
    void *(*xMalloc)(int);
    void (*xFree)(void *);
    void *(*xRealloc)(void *, int);
    int (*xSize)(void *);
    int (*xRoundup)(int);
    int (*xInit)(void *);
    void (*xShutdown)(void *);
    void *pAppData;
};

enum { CONFIG_MALLOC = 4, CONFIG_GETMALLOC = 5 };

static struct mem_methods base;

/* Bytes this thread's budget has taken, net of what it gave back. Memory
 * allocated before the budget began and freed under it (cached pages) is
 * credited, so `used` can go below zero: a query then gets that much more,
 * at most the connection's page cache. */
static _Thread_local struct {
    int64_t used;
    int64_t limit;
    int active;
    int refused;
} budget;

static void *counted_malloc(int n) {
    if (budget.active && budget.used + n > budget.limit) {
        budget.refused = 1;
        return NULL;
    }
    void *p = base.xMalloc(n);
    if (p != NULL && budget.active) budget.used += base.xSize(p);
    return p;
}

static void counted_free(void *p) {
    if (p != NULL && budget.active) budget.used -= base.xSize(p);
    base.xFree(p);
}

static void *counted_realloc(void *p, int n) {
    if (!budget.active) return base.xRealloc(p, n);
    int64_t old = p != NULL ? base.xSize(p) : 0;
    if (budget.used - old + n > budget.limit) {
        budget.refused = 1;
        return NULL;
    }
    void *q = base.xRealloc(p, n);
    if (q != NULL) budget.used += base.xSize(q) - old;
    return q;
}

int cquerymemory_install(void *config) {
    int (*sqlite3_config)(int, ...) = (int (*)(int, ...))config;
    struct mem_methods current;
    int rc = sqlite3_config(CONFIG_GETMALLOC, &current);
    if (rc != 0) return rc;
    base = current;
    struct mem_methods counted = current;
    counted.xMalloc = counted_malloc;
    counted.xFree = counted_free;
    counted.xRealloc = counted_realloc;
    return sqlite3_config(CONFIG_MALLOC, &counted);
}

void cquerymemory_begin(int64_t limit) {
    budget.used = 0;
    budget.limit = limit;
    budget.refused = 0;
    budget.active = 1;
}

int cquerymemory_end(void) {
    budget.active = 0;
    return budget.refused;
}
