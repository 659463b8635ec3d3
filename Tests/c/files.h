/* File helpers for the C tests: temporary directories and byte searches. */
#ifndef TUREEN_TEST_FILES_H
#define TUREEN_TEST_FILES_H
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a whole file into a malloc'd buffer; *len gets its size. */
static inline unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

/* 1 when the file's bytes contain `needle`, 0 when not, -1 when unreadable. */
static inline int file_contains(const char *path, const char *needle)
{
    size_t len = 0;
    unsigned char *buf = read_file(path, &len);
    if (!buf) return -1;
    int found = memmem(buf, len, needle, strlen(needle)) != NULL;
    free(buf);
    return found;
}

static inline char *make_temp_dir(void)
{
    static char tmpl[64];
    strcpy(tmpl, "/tmp/tureen-c-XXXXXX");
    return mkdtemp(tmpl);
}

/* Removes a directory of make_temp_dir's with all it holds; 0 when done. */
static inline int remove_temp_dir(const char *dir)
{
    char cmd[300];
    if ((size_t)snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir) >= sizeof cmd) return -1;
    return system(cmd);
}
#endif
