/* A minimal assertion kit for the C tests: each CHECK counts a pass or a
 * failure, and DONE prints the tally and returns the exit status. */
#ifndef TUREEN_TEST_CHECK_H
#define TUREEN_TEST_CHECK_H
#include <stdio.h>
#include <string.h>
#include "tureen.h"

static int checks_passed, checks_failed;

#define CHECK(cond, what) do { \
    if (cond) checks_passed++; \
    else { checks_failed++; fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what); } \
} while (0)

/* Checks a call's status and that the message agrees with it. */
#define CHECK_RC(call, expected) do { \
    int rc_ = (call); \
    const char *m_ = tureen_errmsg(); \
    if (rc_ == (expected) && ((rc_ == TUREEN_OK) == (m_[0] == '\0'))) checks_passed++; \
    else { checks_failed++; fprintf(stderr, "FAIL %s:%d: %s returned %d (expected %d): '%s'\n", \
                                    __FILE__, __LINE__, #call, rc_, (expected), m_); } \
} while (0)

#define CHECK_MSG_HAS(needle) do { \
    const char *m_ = tureen_errmsg(); \
    if (strstr(m_, (needle))) checks_passed++; \
    else { checks_failed++; fprintf(stderr, "FAIL %s:%d: message '%s' lacks '%s'\n", __FILE__, __LINE__, m_, (needle)); } \
} while (0)

/* How many times `needle` occurs in `hay`. */
static inline int occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

#define DONE() (printf("%s: %d checks passed, %d failed\n", __FILE__, checks_passed, checks_failed), checks_failed != 0)

#endif
