/* Sync up survives a real kill: a child process sends creates, updates and
 * deletes to Kinto and is killed with SIGKILL at spread-out moments (inside
 * HTTP requests, between batches, right after a commit). Each time the next
 * run must bring the server level with the soup: same records, same values,
 * no duplicate, nothing left pending. */
#include "files.h"
#include "check.h"
#include "sync_util.h"
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define KEY "{\"raw_key\":\"9a8b7c6d5e4f30219a8b7c6d5e4f30219a8b7c6d5e4f30219a8b7c6d5e4f3021\"}"
#define SPECS "[{\"path\":\"id\",\"type\":\"string\"},{\"path\":\"n\",\"type\":\"integer\"}]"
#define ROUNDS 12
#define PER_ROUND 80

static int kill_at_batch;
static int batches;

static void on_progress(void *ctx, const char *state)
{
    (void)ctx;
    /* The first report announces the start (nothing done yet): it is no batch. */
    if (strstr(state, "\"done\":0,")) return;
    if (++batches == kill_at_batch) raise(SIGKILL);  /* just after a batch committed */
}

/* Runs (or resumes) the sync up named "up". */
static int sync_up(tureen_store *s, const char *target, tureen_progress_fn progress)
{
    char *state = NULL;
    int rc = tureen_resync(s, "up", progress, NULL, &state);
    if (rc == TUREEN_E_NOT_FOUND) rc = tureen_sync_up(s, target, "items", "{\"name\":\"up\"}", progress, NULL, &state);
    tureen_free(state);
    return rc;
}

static int child(const char *path, const char *target, int at)
{
    tureen_store *s = NULL;
    if (tureen_store_open(path, KEY, &s) != TUREEN_OK) return 2;
    kill_at_batch = at;
    int rc = sync_up(s, target, on_progress);
    tureen_store_close(s);
    return rc == TUREEN_OK ? 0 : 3;
}

/* Starts the child; kills it after `delay_ms` unless negative. 1 when it
 * died by a signal, 0 when it finished, -1 when it failed otherwise. */
static int run_child(const char *self, const char *path, const char *target, int at, int delay_ms)
{
    char at_text[16];
    snprintf(at_text, sizeof at_text, "%d", at);
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, "child", path, target, at_text, (char *)NULL);
        _exit(127);
    }
    if (delay_ms >= 0) {
        usleep((useconds_t)delay_ms * 1000);
        kill(pid, SIGKILL);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) return 1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* (id, v) of every record, sorted by id, as Smart SQL rows. */
static char *pairs(tureen_store *s, const char *soup)
{
    char spec[512];
    char *json = NULL;
    snprintf(spec, sizeof spec,
             "{\"queryType\":\"smart\",\"smartSql\":\"select {%s:id}, {%s:v} from {%s} order by {%s:id}\",\"pageSize\":100000}",
             soup, soup, soup, soup);
    if (tureen_query(s, spec, 0, &json) != TUREEN_OK) fprintf(stderr, "pairs: %s\n", tureen_errmsg());
    return json;
}

static long long pending(tureen_store *s)
{
    char *json = NULL;
    long long v = -1;
    if (tureen_query(s, "{\"queryType\":\"smart\",\"smartSql\":\"select count(*) from {items} where {items:__local__} = 1\",\"pageSize\":1}", 0, &json) == TUREEN_OK)
        v = strtoll(json + 2, NULL, 10);
    tureen_free(json);
    return v;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "child") == 0) return child(argv[2], argv[3], atoi(argv[4]));

    const char *dir = make_temp_dir();
    char path[600], mirror_path[600], target[1024], collection[64];
    snprintf(path, sizeof path, "%s/local.tureen", dir);
    snprintf(mirror_path, sizeof mirror_path, "%s/mirror.tureen", dir);
    snprintf(collection, sizeof collection, "kill%ld", (long)getpid());
    kinto_target(target, sizeof target, collection);

    tureen_store *s = NULL, *m = NULL;
    CHECK_RC(tureen_store_open(path, KEY, &s), TUREEN_OK);
    CHECK_RC(tureen_soup_register(s, "items", SPECS), TUREEN_OK);
    CHECK_RC(tureen_store_open(mirror_path, KEY, &m), TUREEN_OK);
    CHECK_RC(tureen_soup_register(m, "items", SPECS), TUREEN_OK);

    /* Kill moments: timed (inside requests and commits) and after batch k. */
    const int delays[ROUNDS] = {5, 40, 80, 120, -1, -1, -1, 20, 60, 150, 250, -1};
    const int at_batch[ROUNDS] = {0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 4};
    int killed = 0, midway = 0, next_n = 0;
    char *state = NULL;
    for (int round = 0; round < ROUNDS; round++) {
        /* New records, then updates and deletions of older synced ones. */
        char *batch = malloc(PER_ROUND * 48 + 8);
        size_t off = 0;
        batch[off++] = '[';
        for (int i = 0; i < PER_ROUND; i++, next_n++)
            off += (size_t)sprintf(batch + off, "%s{\"n\":%d,\"v\":0}", i ? "," : "", next_n);
        batch[off++] = ']';
        batch[off] = '\0';
        CHECK_RC(tureen_local_upsert(s, "items", batch, NULL, NULL), TUREEN_OK);
        free(batch);
        if (round > 0) {
            char spec[256];
            char *json = NULL;
            /* Bump v on 20 records of the previous round, delete 5 others. */
            int changed = 0;
            for (int k = 0; k < 25; k++) {
                int n = (round - 1) * PER_ROUND + k * 3;
                snprintf(spec, sizeof spec, "{\"queryType\":\"exact\",\"soupName\":\"items\",\"indexPath\":\"n\",\"matchKey\":%d,\"pageSize\":1}", n);
                if (tureen_query(s, spec, 0, &json) != TUREEN_OK || strcmp(json, "[]") == 0) { tureen_free(json); continue; }
                changed++;
                long long id = json_int(json, "_soupEntryId");
                char *rid = strstr(json, "\"id\":\"");
                char idtext[64] = "";
                if (rid) sscanf(rid + 6, "%63[^\"]", idtext);
                tureen_free(json);
                char change[256];
                if (k < 20) {
                    snprintf(change, sizeof change, "{\"_soupEntryId\":%lld,\"id\":\"%s\",\"n\":%d,\"v\":%d}", id, idtext, n, round);
                    CHECK_RC(tureen_local_upsert(s, "items", change, NULL, NULL), TUREEN_OK);
                } else {
                    snprintf(change, sizeof change, "[%lld]", id);
                    CHECK_RC(tureen_local_delete(s, "items", change), TUREEN_OK);
                }
            }
            CHECK(changed == 25, "every round updates 20 and deletes 5 synced records");
        }
        long long before = pending(s);
        /* The child syncs and dies. This process keeps the store open
         * meanwhile, as another app on the device could. */
        int r = run_child(argv[0], path, target, at_batch[round], delays[round]);
        CHECK(r >= 0, "the child either finished or was killed");
        if (r == 1) killed++;
        /* Killed with part of the changes sent and marked clean: mid-sync. */
        long long after = pending(s);
        if (r == 1 && after > 0 && after < before) midway++;
        /* A child that finished saw every change this process had made: its
         * open and close must not cost this process its locks on the file. */
        if (r == 0) CHECK(after == 0, "a child that finished synced every change made before it started");
        /* The next run finishes the job. */
        int rc = -1;
        for (int attempt = 0; attempt < 3 && rc != TUREEN_OK; attempt++) rc = sync_up(s, target, NULL);
        CHECK(rc == TUREEN_OK, "the sync up after the kill ends DONE");
        if (rc != TUREEN_OK) fprintf(stderr, "round %d: %s\n", round, tureen_errmsg());
        CHECK(pending(s) == 0, "nothing is left pending");

        /* The server, read back into the mirror, equals the soup. */
        rc = tureen_resync(m, "mirror", NULL, NULL, &state);
        if (rc == TUREEN_E_NOT_FOUND) rc = tureen_sync_down(m, target, "items", "{\"name\":\"mirror\"}", NULL, NULL, &state);
        CHECK(rc == TUREEN_OK, "the mirror syncs down");
        tureen_free(state);
        state = NULL;
        long long local_n = count_all(s, "items"), mirror_n = count_all(m, "items");
        CHECK(local_n == (long long)PER_ROUND * (round + 1) - 5LL * round, "the soup holds every create less every delete");
        CHECK(local_n == mirror_n, "the server holds as many records as the soup (no duplicate, none lost)");
        char *a = pairs(s, "items"), *b = pairs(m, "items");
        CHECK(a && b && strcmp(a, b) == 0, "every record has the same value on the server");
        if (local_n != mirror_n || !a || !b || strcmp(a, b) != 0)
            fprintf(stderr, "round %d: local %lld, server %lld\n", round, local_n, mirror_n);
        tureen_free(a);
        tureen_free(b);
    }
    printf("children killed: %d of %d, %d with part of their changes sent\n", killed, ROUNDS, midway);
    CHECK(killed >= ROUNDS / 2, "most rounds really killed the child");
    /* The four rounds killed right after batch k (of 5) always are. */
    CHECK(midway >= 4, "children were killed in the middle of a sync up");
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK_RC(tureen_store_close(m), TUREEN_OK);
    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
