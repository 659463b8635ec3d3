/* The Library area of tureen.h: versions, error messages, freeing what the
 * library returns, and logging through a callback of the host's.
 * Usage: library [directory]   (default: /tmp) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>
#include "example.h"

/* Log lines arrive on whichever thread did the work, so the counts are kept
 * under a lock. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int lines_by_level[TUREEN_LOG_DEBUG + 1];

static void on_log(void *ctx, int level, const char *category, const char *message)
{
    static const char *names[] = {"off", "error", "warning", "info", "debug"};
    FILE *out = ctx;
    pthread_mutex_lock(&log_lock);
    lines_by_level[level]++;
    fprintf(out, "  [%s %s] %s\n", names[level], category, message);
    pthread_mutex_unlock(&log_lock);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";

    /* A program built against one header must not run with an older library. */
    printf("libtureen %s: header %d, library %d\n", tureen_version(), TUREEN_VERSION_NUMBER,
           tureen_version_number());
    expect(tureen_version_number() >= TUREEN_VERSION_NUMBER, "the library is older than the header");

    /* Every failing call leaves a message for the calling thread. */
    tureen_store *store = NULL;
    int rc = tureen_store_open(dir, "{\"key\": \"k\", \"kdf_itr\": 1000}", &store);
    printf("a misspelt option is refused: status %d (TUREEN_E_INVALID is %d): %s\n", rc, TUREEN_E_INVALID,
           tureen_errmsg());
    expect(rc == TUREEN_E_INVALID && store == NULL, "a misspelt option was accepted");
    expect(tureen_log_set(7, NULL, NULL, NULL) == TUREEN_E_INVALID, "log level 7 was accepted");

    /* Log at info and above to this program's callback (stdout as context). */
    check(tureen_log_set(TUREEN_LOG_INFO, on_log, stdout, NULL), "log_set");
    store = open_fresh_store(dir, "library-c");
    check(tureen_soup_register(store, "notes", "[{\"path\": \"title\", \"type\": \"string\"}]"), "register");

    /* What a char ** out-parameter returns is the caller's, freed with tureen_free. */
    char *json = NULL;
    check(tureen_soup_names(store, &json), "soup names");
    printf("soups: %s\n", json);
    tureen_free(json);
    check(tureen_store_close(store), "close");

    /* Logging off again before the program's stdout goes away. */
    check(tureen_log_set(TUREEN_LOG_OFF, NULL, NULL, NULL), "log_set off");
    pthread_mutex_lock(&log_lock);
    printf("log lines received: %d error, %d warning, %d info, %d debug\n", lines_by_level[1],
           lines_by_level[2], lines_by_level[3], lines_by_level[4]);
    expect(lines_by_level[TUREEN_LOG_DEBUG] == 0, "a debug line arrived at level info");
    pthread_mutex_unlock(&log_lock);
    return 0;
}
