/* A host that links the system libsqlite3 before libtureen (so its sqlite3_*
 * symbols come first in the global scope) and uses it. Tureen must still
 * encrypt, or refuse with TUREEN_E_INTERNAL: never a plaintext store. */
#include "files.h"
#include "check.h"
#include <sqlite3.h>
#include <unistd.h>

int main(void)
{
    char *dir = make_temp_dir();
    char plain[256], store_path[256];
    snprintf(plain, sizeof plain, "%s/host.db", dir);
    snprintf(store_path, sizeof store_path, "%s/tureen.db", dir);

    /* the host's own SQLite, used before and after Tureen loads SQLCipher */
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(plain, &db) == SQLITE_OK, "host opens its own database");
    CHECK(sqlite3_exec(db, "create table t(x); insert into t values('host data')", 0, 0, 0) == SQLITE_OK,
          "host writes with the system SQLite");
    printf("host SQLite %s\n", sqlite3_libversion());

    tureen_store *s = NULL;
    int rc = tureen_store_open(store_path, "{\"key\":\"k\",\"kdf_iter\":4000}", &s);
    if (rc == TUREEN_OK) {
        CHECK_RC(tureen_store_close(s), TUREEN_OK);
        CHECK(file_contains(store_path, "SQLite format 3") == 0, "store encrypted despite the host's SQLite");
        CHECK(file_contains(store_path, "tureen_meta") == 0, "no plaintext schema");
        CHECK_RC(tureen_store_open(store_path, "{\"key\":\"wrong\",\"kdf_iter\":4000}", &s), TUREEN_E_KEY);
    } else {
        CHECK(rc == TUREEN_E_INTERNAL, "the only acceptable failure is a clear refusal");
        printf("refused: %s\n", tureen_errmsg());
        CHECK(access(store_path, F_OK) != 0, "a refusal leaves no file");
    }

    /* the host's SQLite still works and still writes plaintext, as it should */
    CHECK(sqlite3_exec(db, "insert into t values('more host data')", 0, 0, 0) == SQLITE_OK,
          "host SQLite still works after Tureen");
    sqlite3_close(db);
    CHECK(file_contains(plain, "host data") == 1, "host database is the system SQLite's plaintext");

    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
