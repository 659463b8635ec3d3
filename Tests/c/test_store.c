/* The encrypted store's lifecycle through the C ABI: the bytes on disk are
 * encrypted (and an unencrypted store, the control, is not), wrong keys and
 * foreign files are told apart, rekey switches keys, bad places are IO errors. */
#include "files.h"
#include "check.h"
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

static char dir[128];

/* A path inside the test directory (leaked on purpose: it lives until exit). */
static const char *at(const char *name)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return strdup(buf);
}

/* Opens then closes; returns the open status. */
static int try_open(const char *path, const char *options)
{
    tureen_store *s = NULL;
    int rc = tureen_store_open(path, options, &s);
    if (rc == TUREEN_OK) tureen_store_close(s);
    return rc;
}

/* 0 when the sqlite3 command line tool can read the file's schema. */
static int plain_sqlite_reads(const char *path)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "sqlite3 '%s' 'select count(*) from sqlite_master' >/dev/null 2>&1", path);
    return system(cmd);
}

static void write_bytes(const char *path, const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
}

int main(void)
{
    strcpy(dir, make_temp_dir());
    const char *fast = "{\"key\":\"s3cret 'quoted\\\" pass\",\"kdf_iter\":4000}";

    /* encrypted on disk: plain sqlite3 cannot read it; nothing recognisable in it */
    const char *enc = at("enc.db");
    CHECK_RC(try_open(enc, fast), TUREEN_OK);
    CHECK(file_contains(enc, "SQLite format 3") == 0, "no SQLite magic in an encrypted store");
    CHECK(file_contains(enc, "tureen_meta") == 0, "table name not readable on disk");
    CHECK(file_contains(enc, "format_version") == 0, "row text not readable on disk");
    CHECK(plain_sqlite_reads(enc) != 0, "plain sqlite3 cannot read the store");

    /* the control: the same checks see through an unencrypted store */
    const char *plain = at("plain.db");
    CHECK_RC(try_open(plain, "{\"unencrypted\":true}"), TUREEN_OK);
    CHECK(file_contains(plain, "SQLite format 3") == 1, "unencrypted store has the magic");
    CHECK(file_contains(plain, "tureen_meta") == 1, "unencrypted store shows its table");
    CHECK(plain_sqlite_reads(plain) == 0, "plain sqlite3 reads an unencrypted store");

    /* keys */
    CHECK_RC(try_open(enc, fast), TUREEN_OK);
    CHECK_RC(try_open(enc, "{\"key\":\"wrong\",\"kdf_iter\":4000}"), TUREEN_E_KEY);
    CHECK_MSG_HAS("wrong key");
    CHECK_RC(try_open(enc, "{\"key\":\"s3cret 'quoted\\\" pass\"}"), TUREEN_E_KEY); /* other kdf_iter */
    CHECK_RC(try_open(enc, "{\"unencrypted\":true}"), TUREEN_E_KEY);
    CHECK_MSG_HAS("encrypted");
    CHECK_RC(try_open(plain, "{\"key\":\"k\",\"kdf_iter\":4000}"), TUREEN_E_KEY);
    CHECK_MSG_HAS("unencrypted SQLite database");

    const char *rawkey = "{\"raw_key\":\"00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF\"}";
    const char *raw = at("raw.db");
    CHECK_RC(try_open(raw, rawkey), TUREEN_OK);
    CHECK(file_contains(raw, "tureen_meta") == 0, "raw-key store encrypted");
    CHECK_RC(try_open(raw, "{\"raw_key\":\"10112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}"), TUREEN_E_KEY);

    /* files that are not Tureen stores */
    const char *text = at("notes.txt");
    write_bytes(text, "hello, this is not a database\n", 30);
    CHECK_RC(try_open(text, fast), TUREEN_E_KEY);
    CHECK_MSG_HAS("not a whole number of pages");
    CHECK(file_contains(text, "hello, this is not a database") == 1, "foreign file left untouched");
    const char *other_app = at("other.db");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "sqlite3 '%s' 'create table notes(x); insert into notes values(1)'", other_app);
    CHECK(system(cmd) == 0, "made another application's database");
    CHECK_RC(try_open(other_app, "{\"unencrypted\":true}"), TUREEN_E_KEY);
    CHECK_MSG_HAS("another application");

    /* places that cannot hold a store are IO errors naming the path */
    CHECK_RC(try_open(at("missing-dir/x.db"), fast), TUREEN_E_IO);
    CHECK_MSG_HAS("missing-dir");
    CHECK_RC(try_open("/proc/tureen-test.db", fast), TUREEN_E_IO);
    CHECK_MSG_HAS("/proc/tureen-test.db");
    CHECK_RC(try_open(at("absent.db"), "{\"key\":\"k\",\"create\":false}"), TUREEN_E_NOT_FOUND);

    /* rekey: new key opens, old key does not, data kept */
    tureen_store *s = NULL;
    CHECK_RC(tureen_store_open(enc, fast, &s), TUREEN_OK);
    tureen_store *second = NULL;
    CHECK_RC(tureen_store_open(enc, fast, &second), TUREEN_OK); /* the same file twice */
    CHECK_RC(tureen_store_rekey(s, "{\"key\":\"next\",\"kdf_iter\":4000}"), TUREEN_E_MISUSE);
    CHECK_MSG_HAS("more than once");
    CHECK_RC(tureen_store_close(second), TUREEN_OK);
    CHECK_RC(tureen_store_rekey(s, "{\"key\":\"next\",\"kdf_iter\":4000}"), TUREEN_OK);
    int64_t size = 0;
    CHECK_RC(tureen_store_size(s, &size), TUREEN_OK); /* handle still usable */
    CHECK(size > 0, "size after rekey");
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK_RC(try_open(enc, fast), TUREEN_E_KEY);
    CHECK_RC(try_open(enc, "{\"key\":\"next\",\"kdf_iter\":4000}"), TUREEN_OK);
    CHECK(file_contains(enc, "tureen_meta") == 0, "still encrypted after rekey");
    CHECK(access(at("enc.db-tureen-rekey"), F_OK) != 0, "no rekey copy left behind");

    /* rekey can decrypt and encrypt */
    CHECK_RC(tureen_store_open(enc, "{\"key\":\"next\",\"kdf_iter\":4000}", &s), TUREEN_OK);
    CHECK_RC(tureen_store_rekey(s, "{\"unencrypted\":true}"), TUREEN_OK);
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK(plain_sqlite_reads(enc) == 0, "decrypted store readable by sqlite3");
    CHECK_RC(tureen_store_open(enc, "{\"unencrypted\":true}", &s), TUREEN_OK);
    CHECK_RC(tureen_store_rekey(s, rawkey), TUREEN_OK);
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    CHECK(plain_sqlite_reads(enc) != 0, "re-encrypted store unreadable by sqlite3");
    CHECK_RC(try_open(enc, rawkey), TUREEN_OK);

    /* remove takes the companions too */
    CHECK_RC(tureen_store_open(enc, rawkey, &s), TUREEN_OK);
    CHECK(access(at("enc.db-wal"), F_OK) == 0, "WAL file exists while open");
    CHECK_RC(tureen_store_close(s), TUREEN_OK);
    write_bytes(at("enc.db-shm"), "x", 1);
    CHECK_RC(tureen_store_remove(enc), TUREEN_OK);
    CHECK(access(enc, F_OK) != 0 && access(at("enc.db-wal"), F_OK) != 0 && access(at("enc.db-shm"), F_OK) != 0,
          "store and companions removed");

    CHECK(remove_temp_dir(dir) == 0, "cleanup");
    return DONE();
}
