/* The Blobs area of tureen.h: attach a file to an entry (import it as a
 * blob, put the reference in the entry), read it back by ranges and export
 * it, see an entry that refers to a missing blob refused, and collect
 * blobs no entry refers to.
 * Usage: blobs [directory]   (default: /tmp) */
#include <string.h>
#include "example.h"

/* A small file to attach: a stand-in for a photo. */
static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    expect(f != NULL && fputs(text, f) >= 0 && fclose(f) == 0, "the sample file is written");
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    char photo[4096], copy[4096];
    snprintf(photo, sizeof photo, "%s/blobs-c-photo.txt", dir);
    snprintf(copy, sizeof copy, "%s/blobs-c-copy.txt", dir);
    const char *text = "pretend these are the bytes of a JPEG\n";
    write_file(photo, text);

    tureen_store *store = open_fresh_store(dir, "blobs-c");
    check(tureen_soup_register(store, "notes", "[{\"path\": \"title\", \"type\": \"string\"}]"), "register");

    /* The file goes into the encrypted store, streamed; what comes back is
     * the reference to put in entries. */
    char *ref = NULL;
    check(tureen_blob_import(store, photo, "image/jpeg", &ref), "import");
    printf("imported: %s\n", ref);
    cJSON *blob = take_json(ref);
    char digest[80];
    snprintf(digest, sizeof digest, "%s", string_of(blob, "digest"));
    expect((size_t)number_of(blob, "length") == strlen(text), "the reference gives the file's length");

    /* The entry refers to the blob anywhere in its JSON. */
    cJSON *note = cJSON_CreateObject();
    cJSON_AddStringToObject(note, "title", "beach");
    cJSON_AddItemToObject(note, "photo", blob);
    char *entry = give_json(note), *json = NULL;
    check(tureen_upsert(store, "notes", entry, NULL, &json), "upsert the note");
    free(entry);
    tureen_free(json);

    /* The same bytes put again are the same blob, stored once. */
    check(tureen_blob_put(store, text, strlen(text), "image/jpeg", &json), "put");
    cJSON *again = take_json(json);
    expect(strcmp(string_of(again, "digest"), digest) == 0, "the same bytes have the same digest");
    cJSON_Delete(again);

    /* Read a range, then export the whole blob to a file (checked against
     * its digest on the way). */
    tureen_blob_reader *reader = NULL;
    int64_t length = 0;
    check(tureen_blob_reader_open(store, digest, &reader, &length), "open a reader");
    char word[9] = {0};
    size_t got = 0;
    check(tureen_blob_reader_read(reader, 4, word, 8, &got), "read a range");
    check(tureen_blob_reader_close(reader), "close the reader");
    printf("%lld bytes; bytes 4 to 12: \"%s\"\n", (long long)length, word);
    expect(got == 8 && strcmp(word, "end thes") == 0, "the range holds the file's bytes");
    check(tureen_blob_export(store, digest, copy), "export");
    FILE *f = fopen(copy, "rb");
    char back[128] = {0};
    expect(f != NULL && fread(back, 1, sizeof back - 1, f) == strlen(text) && fclose(f) == 0, "the copy is read");
    expect(strcmp(back, text) == 0, "the exported file holds the same bytes");
    printf("exported to %s\n", copy);

    /* An entry may not point at bytes that are nowhere. */
    int rc = tureen_upsert(store, "notes",
                           "{\"title\": \"lost\", \"photo\": {\"@type\": \"blob\", \"digest\": \"sha256-"
                           "0000000000000000000000000000000000000000000000000000000000000000\", \"length\": 1}}",
                           NULL, NULL);
    printf("an entry referring to a missing blob: status %d (TUREEN_E_NOT_FOUND is %d)\n", rc, TUREEN_E_NOT_FOUND);
    expect(rc == TUREEN_E_NOT_FOUND, "the entry is refused");

    /* Collection keeps the blob the note refers to and removes an orphan. */
    check(tureen_blob_put(store, "scratch", 7, NULL, &json), "put an orphan");
    tureen_free(json);
    int64_t removed = -1;
    check(tureen_blob_collect(store, "{\"min_age_ms\": 0}", &removed), "collect");
    printf("collected %lld unreferenced blob(s)\n", (long long)removed);
    expect(removed == 1, "only the orphan goes");
    check(tureen_blob_info(store, digest, &json), "the attached blob is still there");
    tureen_free(json);

    check(tureen_store_close(store), "close");
    remove(photo);
    remove(copy);
    return 0;
}
