/* Callback targets and credential refreshers registered while another
 * thread closes the store: each registration either ends before close
 * returns, its free_ctx called by then, or is refused without taking its
 * ctx. A registration that had looked the handle up just before close
 * used to add its target after close had released the others, and its
 * free_ctx ran after close had returned (some tens of rounds in 300). */
#include "files.h"
#include "check.h"
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define REGISTRARS 4
#define ROUNDS 300

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static long registered, freed, freed_after_close, refused_otherwise;
static int close_returned;
static tureen_store *store;

static int fetch(void *ctx, const char *request, char **response)
{
    (void)ctx; (void)request; (void)response;
    return TUREEN_OK;
}
static void release_response(void *ctx, char *response) { (void)ctx; free(response); }
static void free_ctx(void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&mu);
    freed++;
    if (close_returned) freed_after_close++;
    pthread_mutex_unlock(&mu);
}

/* Registers under one name again and again (each replacing the last)
 * until the store refuses: half the threads targets, half refreshers. */
static void *registrar(void *arg)
{
    int n = (int)(size_t)arg;
    tureen_callbacks cb = TUREEN_CALLBACKS_INIT;
    cb.fetch = fetch;
    cb.release = release_response;
    cb.free_ctx = free_ctx;
    tureen_auth_callbacks auth = TUREEN_AUTH_CALLBACKS_INIT;
    auth.refresh = fetch;
    auth.release = release_response;
    auth.free_ctx = free_ctx;
    char name[16];
    snprintf(name, sizeof name, "r%d", n);
    while (1) {
        int rc = n % 2 ? tureen_auth_register(store, name, &auth) : tureen_target_register(store, name, &cb);
        pthread_mutex_lock(&mu);
        if (rc == TUREEN_OK) registered++;
        else if (rc != TUREEN_E_MISUSE) refused_otherwise++;
        pthread_mutex_unlock(&mu);
        if (rc != TUREEN_OK) return NULL;
    }
}

int main(void)
{
    char *dir = make_temp_dir();
    char path[256];
    snprintf(path, sizeof path, "%s/register.db", dir);
    for (int round = 0; round < ROUNDS; round++) {
        CHECK_RC(tureen_store_open(path, "{\"unencrypted\":true}", &store), TUREEN_OK);
        pthread_mutex_lock(&mu);
        close_returned = 0;
        pthread_mutex_unlock(&mu);
        pthread_t threads[REGISTRARS];
        for (int i = 0; i < REGISTRARS; i++) pthread_create(&threads[i], NULL, registrar, (void *)(size_t)i);
        usleep(1000);  /* the threads register at full speed: close meets some mid-call */
        CHECK_RC(tureen_store_close(store), TUREEN_OK);
        pthread_mutex_lock(&mu);
        close_returned = 1;
        pthread_mutex_unlock(&mu);
        for (int i = 0; i < REGISTRARS; i++) pthread_join(threads[i], NULL);
        CHECK_RC(tureen_store_remove(path), TUREEN_OK);
    }
    printf("%ld registered, %ld freed, %ld of them after close returned\n", registered, freed, freed_after_close);
    CHECK(refused_otherwise == 0, "a registration beside close is refused with TUREEN_E_MISUSE only");
    CHECK(freed == registered, "every registration is released once");
    CHECK(freed_after_close == 0, "no free_ctx runs after tureen_store_close has returned");
    return DONE();
}
