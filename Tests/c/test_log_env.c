/* TUREEN_LOG in the environment, C8o's level names included: run.sh runs
 * this program with TUREEN_LOG set and says whether the library's debug
 * lines ("http": one per request) must reach standard error:
 *   test_log_env shown    (TUREEN_LOG=trace: C8o's trace is debug)
 *   test_log_env hidden   (TUREEN_LOG=fatal: C8o's fatal is error)
 * Standard error goes to a file first, so the lines can be read back. */
#include "files.h"
#include "check.h"
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "shown") != 0 && strcmp(argv[1], "hidden") != 0)) {
        fprintf(stderr, "usage: test_log_env shown|hidden\n");
        return 2;
    }
    int shown = strcmp(argv[1], "shown") == 0;
    char err_path[600], store_path[600];
    const char *dir = make_temp_dir();
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    snprintf(store_path, sizeof store_path, "%s/log.tureen", dir);
    int saved = dup(STDERR_FILENO);
    CHECK(saved >= 0 && freopen(err_path, "w", stderr) != NULL, "standard error goes to a file");

    tureen_store *s = NULL;
    CHECK_RC(tureen_store_open(store_path, "{\"key\":\"k\",\"kdf_iter\":1000}", &s), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "items", "[{\"path\":\"id\",\"type\":\"string\"}]"), TUREEN_OK);
    /* Port 9 (discard) refuses at once: one request, logged at debug. */
    CHECK_RC(tureen_sync_down(s, "{\"type\":\"rest\",\"url\":\"http://127.0.0.1:9/items\",\"max_retries\":0}",
                              "items", NULL, NULL, NULL, NULL), TUREEN_E_NETWORK);
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);

    int found = file_contains(err_path, "tureen debug [http] GET http://127.0.0.1:9/items");
    CHECK(found >= 0, "the captured standard error is readable");
    CHECK(found == shown, shown ? "TUREEN_LOG=trace shows the debug line of the request"
                                : "TUREEN_LOG=fatal shows no debug line");
    if (found != shown) {
        size_t n = 0;
        unsigned char *text = read_file(err_path, &n);
        fprintf(stderr, "captured: %.*s\n", (int)n, text ? (const char *)text : "");
        free(text);
    }
    return DONE();
}
