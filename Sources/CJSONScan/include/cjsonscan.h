#ifndef CJSONSCAN_H
#define CJSONSCAN_H
/* The inner loop of Tureen's JSON parser (TureenCore/JSONParser.swift):
 * moving over the bytes of a string that need no attention, sixteen at a
 * time in SSE2 registers (which Swift's SIMD types did not compile to), or
 * eight at a time in a word elsewhere. Not part of Tureen's API; the version
 * script keeps it out of the shared object's exports. */
#include <stddef.h>
#include <stdint.h>

/* How many of the `n` bytes at `p` come before the first quote, backslash
 * or control character (below 0x20), or n when there is none. Sets the high
 * bit (0x80) of *high when one of those bytes has its high bit set (is not
 * ASCII); leaves it alone otherwise. */
size_t cjsonscan_plain(const uint8_t *p, size_t n, uint8_t *high);

/* The same, eight bytes a step in a 64-bit word: what cjsonscan_plain runs
 * on CPUs without SSE2, and on the last fifteen bytes or fewer with it.
 * Declared so tests reach it alone. */
size_t cjsonscan_plain_words(const uint8_t *p, size_t n, uint8_t *high);

#endif
