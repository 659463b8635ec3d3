/* alter survives a real kill: a child process alters a soup of N entries
 * and is killed with SIGKILL at spread-out moments; each time the next open
 * must end with the new specs, every entry, and working queries. */
#include "files.h"
#include "check.h"
#include <stdlib.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define N 20000
#define RAW_HEX "4f1c2b3a4f1c2b3a4f1c2b3a4f1c2b3a4f1c2b3a4f1c2b3a4f1c2b3a4f1c2b3a"
#define KEY "{\"raw_key\":\"" RAW_HEX "\"}"
#define OLD_SPECS "[{\"path\":\"name\",\"type\":\"string\"},{\"path\":\"n\",\"type\":\"integer\"}]"
#define NEW_SPECS "[{\"path\":\"name\",\"type\":\"string\"},{\"path\":\"group\",\"type\":\"string\"},{\"path\":\"n\",\"type\":\"floating\"}]"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int child(const char *path)
{
    tureen_store *s = NULL;
    if (tureen_store_open(path, KEY, &s) != TUREEN_OK) return 2;
    if (tureen_soup_alter(s, "big", NEW_SPECS, 1) != TUREEN_OK) return 3;
    return tureen_store_close(s) == TUREEN_OK ? 0 : 4;
}

/* Runs the child; kills it after `delay` seconds unless negative. Returns
 * 1 when it was killed, 0 when it finished first, -1 on failure. */
static int run_child(const char *self, const char *path, double delay)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, "child", path, (char *)NULL);
        _exit(127);
    }
    if (delay >= 0) {
        usleep((useconds_t)(delay * 1e6));
        kill(pid, SIGKILL);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) return 1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void copy_store(const char *from, const char *to)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -f '%s' '%s-wal' '%s-shm' && cp '%s' '%s'", to, to, to, from, to);
    if (system(cmd) != 0) fprintf(stderr, "copy failed\n");
}

/* Alters still pending in the file, read with the sqlcipher shell (the
 * intent the next open must redo); -1 when it cannot be read. */
static int pending_alters(const char *path)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "sqlcipher '%s' \"PRAGMA key = \\\"x'%s'\\\"; PRAGMA cipher_page_size = 4096; "
             "SELECT 'pending=' || count(*) FROM tureen_long_ops;\" 2>/dev/null | grep pending=", path, RAW_HEX);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    int n = -1;
    if (fscanf(p, "pending=%d", &n) != 1) n = -1;
    pclose(p);
    return n;
}

/* After a crash the soup is either untouched (killed before the alter
 * recorded its intent) or fully altered: new specs, every entry, queries on
 * the new indexes. Returns 1 for altered, 0 for untouched. */
static int verify(const char *path, int round)
{
    tureen_store *s = NULL;
    char what[160];
    CHECK_RC(tureen_store_open(path, KEY, &s), TUREEN_OK);
    if (!s) return 0;
    char *specs = NULL;
    CHECK_RC(tureen_soup_index_specs(s, "big", &specs), TUREEN_OK);
    int altered = specs && strcmp(specs, "[{\"path\":\"name\",\"type\":\"string\"},{\"path\":\"group\",\"type\":\"string\"},{\"path\":\"n\",\"type\":\"floating\"}]") == 0;
    int untouched = specs && strcmp(specs, "[{\"path\":\"name\",\"type\":\"string\"},{\"path\":\"n\",\"type\":\"integer\"}]") == 0;
    snprintf(what, sizeof what, "round %d: specs are the old or the new ones, nothing between: %s", round, specs ? specs : "(none)");
    CHECK(altered || untouched, what);
    tureen_free(specs);
    int64_t all = -1, g3 = -1, n = -1;
    CHECK_RC(tureen_count(s, "{\"queryType\":\"all\",\"soupName\":\"big\"}", &all), TUREEN_OK);
    CHECK_RC(tureen_count(s, "{\"queryType\":\"range\",\"soupName\":\"big\",\"indexPath\":\"n\",\"beginKey\":100.5,\"endKey\":200}", &n), TUREEN_OK);
    if (altered) {
        CHECK_RC(tureen_count(s, "{\"queryType\":\"exact\",\"soupName\":\"big\",\"indexPath\":\"group\",\"matchKey\":\"g3\"}", &g3), TUREEN_OK);
        snprintf(what, sizeof what, "round %d: %lld entries, %lld in g3, %lld in range", round, (long long)all, (long long)g3, (long long)n);
        CHECK(all == N && g3 == N / 7 && n == 100, what);
    } else {
        /* the integer index truncates 100.5 to 100: 100..200 */
        snprintf(what, sizeof what, "round %d: untouched soup has %lld entries, %lld in range", round, (long long)all, (long long)n);
        CHECK(all == N && n == 101, what);
    }
    CHECK_RC(tureen_store_check(s), TUREEN_OK);
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    return altered;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0) return child(argv[2]);
    char *dir = make_temp_dir();
    char tmpl[256], work[256];
    snprintf(tmpl, sizeof tmpl, "%s/template.db", dir);
    snprintf(work, sizeof work, "%s/work.db", dir);

    tureen_store *s = NULL;
    CHECK_RC(tureen_store_open(tmpl, KEY, &s), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "big", OLD_SPECS), TUREEN_OK);
    static char batch[1 << 20];
    for (int start = 0; start < N; start += 1000) {
        size_t len = 0;
        batch[len++] = '[';
        for (int i = start; i < start + 1000; i++)
            len += (size_t)snprintf(batch + len, sizeof batch - len, "%s{\"name\":\"entry-%d\",\"n\":%d,\"group\":\"g%d\",\"pad\":\"%0200d\"}",
                                    i > start ? "," : "", i, i, i % 7 + (i >= N - N % 7 ? 7 : 0), i);
        batch[len++] = ']';
        batch[len] = '\0';
        CHECK_RC(tureen_upsert(s, "big", batch, NULL, NULL), TUREEN_OK);
    }
    CHECK_RC(tureen_store_close(s), TUREEN_OK);

    copy_store(tmpl, work);
    double t0 = now_s();
    CHECK(run_child(argv[0], work, -1) == 0, "an uninterrupted alter succeeds");
    double full = now_s() - t0;
    CHECK(pending_alters(work) == 0, "no intent left after a completed alter");
    CHECK(verify(work, -1) == 1, "an uninterrupted alter alters");
    CHECK(pending_alters(tmpl) == 0, "the sqlcipher shell reads the store's intents");
    printf("an uninterrupted alter run takes %.3f s; killing at 16 points across it\n", full);

    int killed = 0, resumed = 0;
    for (int round = 0; round < 16; round++) {
        copy_store(tmpl, work);
        int r = run_child(argv[0], work, full * (round + 0.5) / 16.0);
        CHECK(r >= 0, "child ran");
        killed += r == 1;
        int pending = pending_alters(work);
        int altered = verify(work, round);
        if (pending == 1) {
            resumed++;
            CHECK(altered, "an alter pending at the kill is finished by the next open");
        }
        CHECK(pending_alters(work) == 0, "no intent left after reopening");
    }
    printf("%d of 16 children were killed before they finished; %d left an alter half-done that the next open finished\n", killed, resumed);
    CHECK(killed >= 8, "most rounds really interrupted the child");
    CHECK(resumed >= 4, "several rounds killed the alter in the middle");

    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
