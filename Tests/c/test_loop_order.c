/* The sync loop's "order" and "order_by_soup" through the C ABI, against
 * the Kinto the runner started: in a loop's first cycle each soup's syncs
 * run together, up then down ("up_down", the default) or down then up,
 * as the soup's own order or the loop's says. */
#include "files.h"
#include "check.h"
#include "sync_util.h"
#include <pthread.h>
#include <unistd.h>

#define SPECS "[{\"path\":\"id\",\"type\":\"string\"}]"

/* The sync_started events of a cycle, as "soup:type", in arrival order. */
struct started {
    pthread_mutex_t lock;
    int n;
    char seen[8][32];
};

static void on_event(void *ctx, const char *json)
{
    struct started *s = ctx;
    if (!json_has(json, "code", "sync_started")) return;
    const char *soup = json_has(json, "soup", "notes") ? "notes" : json_has(json, "soup", "extra") ? "extra" : "?";
    const char *type = json_has(json, "type", "syncUp") ? "up" : "down";
    pthread_mutex_lock(&s->lock);
    if (s->n < 8) snprintf(s->seen[s->n++], sizeof s->seen[0], "%s:%s", soup, type);
    pthread_mutex_unlock(&s->lock);
}

static int count(struct started *s)
{
    pthread_mutex_lock(&s->lock);
    int n = s->n;
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* Runs the first cycle of a loop with `config` on a fresh store; fills
 * `order` with the first four syncs started, joined by spaces. */
static void first_cycle(const char *dir, int round, const char *config, char *order, size_t n)
{
    char path[600], target[1024], collection[64], loop[300];
    snprintf(path, sizeof path, "%s/order%d.tureen", dir, round);
    snprintf(collection, sizeof collection, "order%ld_%d", (long)getpid(), round);
    kinto_target(target, sizeof target, collection);
    tureen_store *s = NULL;
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &s), TUREEN_OK);
    const char *soups[2] = {"notes", "extra"};
    for (int i = 0; i < 2; i++) {
        char name[32];
        CHECK_RC(tureen_soup_register(s, soups[i], SPECS), TUREEN_OK);
        /* Defined down first, then up: the order must come from the loop, not the definitions. */
        snprintf(name, sizeof name, "%s-down", soups[i]);
        snprintf(loop, sizeof loop, "{\"name\":\"%s\",\"start\":false}", name);
        CHECK_RC(tureen_sync_down(s, target, soups[i], loop, NULL, NULL, NULL), TUREEN_OK);
        snprintf(name, sizeof name, "%s-up", soups[i]);
        snprintf(loop, sizeof loop, "{\"name\":\"%s\",\"start\":false}", name);
        CHECK_RC(tureen_sync_up(s, target, soups[i], loop, NULL, NULL, NULL), TUREEN_OK);
    }
    struct started st = {.lock = PTHREAD_MUTEX_INITIALIZER};
    tureen_listener *listener = NULL;
    CHECK_RC(tureen_sync_listen(s, "{\"codes\":[\"sync_started\"]}", on_event, &st, NULL, &listener), TUREEN_OK);
    /* An hour between cycles: the first cycle alone runs the four syncs. */
    CHECK_RC(tureen_sync_loop_start(s, config), TUREEN_OK);
    for (int i = 0; i < 400 && count(&st) < 4; i++) usleep(50 * 1000);
    CHECK_RC(tureen_sync_loop_stop(s), TUREEN_OK);
    CHECK_RC(tureen_listener_remove(listener), TUREEN_OK);
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    order[0] = '\0';
    for (int i = 0; i < 4 && i < st.n; i++) {
        if (i) strncat(order, " ", n - strlen(order) - 1);
        strncat(order, st.seen[i], n - strlen(order) - 1);
    }
}

int main(void)
{
    const char *dir = make_temp_dir();
    char order[200];

    first_cycle(dir, 1, "{\"sync_frequency\":3600}", order, sizeof order);
    CHECK(strcmp(order, "notes:up notes:down extra:up extra:down") == 0 ||
          strcmp(order, "extra:up extra:down notes:up notes:down") == 0, "default: each soup up, then down");
    fprintf(stderr, "default: %s\n", order);

    first_cycle(dir, 2, "{\"sync_frequency\":3600,\"order\":\"down_up\"}", order, sizeof order);
    CHECK(strcmp(order, "notes:down notes:up extra:down extra:up") == 0 ||
          strcmp(order, "extra:down extra:up notes:down notes:up") == 0, "down_up: each soup down, then up");
    fprintf(stderr, "down_up: %s\n", order);

    first_cycle(dir, 3, "{\"sync_frequency\":3600,\"order\":\"down_up\",\"order_by_soup\":{\"extra\":\"up_down\"}}",
                order, sizeof order);
    CHECK(strcmp(order, "notes:down notes:up extra:up extra:down") == 0 ||
          strcmp(order, "extra:up extra:down notes:down notes:up") == 0, "order_by_soup overrides the loop's order");
    fprintf(stderr, "order_by_soup: %s\n", order);

    tureen_store *s = NULL;
    char path[600];
    snprintf(path, sizeof path, "%s/refused.tureen", dir);
    CHECK_RC(tureen_store_open(path, "{\"key\":\"k\",\"kdf_iter\":1000}", &s), TUREEN_OK);
    CHECK_RC(tureen_sync_loop_start(s, "{\"order\":\"sideways\"}"), TUREEN_E_INVALID);
    CHECK_RC(tureen_sync_loop_start(s, "{\"order_by_soup\":{\"notes\":\"sideways\"}}"), TUREEN_E_INVALID);
    CHECK_RC(tureen_sync_loop_start(s, "{\"order_by_soup\":[\"up_down\"]}"), TUREEN_E_INVALID);
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    return DONE();
}
