/* Strings are most of the bytes of an entry, and every upsert checks them:
 * sixteen bytes a step, where a word-wise test in Swift took eight and some
 * twenty instructions for each. */
#include "cjsonscan.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static int needs_attention(uint8_t c) { return c == '"' || c == '\\' || c < 0x20; }

static const uint64_t ONES = 0x0101010101010101ull, HIGHS = 0x8080808080808080ull;

/* Nonzero exactly when a byte of v is zero, or is below `limit` (at most
 * 0x80): such a byte borrows into its own high bit, and ~v leaves out the
 * bytes whose high bit was set already. Bits above the first such byte may
 * be wrong (a borrow runs on), so this says whether, not where. */
static uint64_t zero_byte(uint64_t v) { return (v - ONES) & ~v & HIGHS; }
static uint64_t byte_below(uint64_t v, uint64_t limit) { return (v - ONES * limit) & ~v & HIGHS; }

size_t cjsonscan_plain_words(const uint8_t *p, size_t n, uint8_t *high) {
    size_t i = 0;
    uint64_t all = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, sizeof v);
        /* The byte loop below finds which byte of the word it was. */
        if (zero_byte(v ^ (ONES * '"')) | zero_byte(v ^ (ONES * '\\')) | byte_below(v, 0x20)) break;
        all |= v;
    }
    uint8_t seen = (all & HIGHS) ? 0x80 : 0;
    for (; i < n && !needs_attention(p[i]); i++) seen |= p[i] & 0x80;
    *high |= seen;
    return i;
}

size_t cjsonscan_plain(const uint8_t *p, size_t n, uint8_t *high) {
#if defined(__SSE2__)
    size_t i = 0;
    uint8_t seen = 0;
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i below_space = _mm_set1_epi8(0x1F);
    __m128i all = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        /* max(v, 0x1F) == 0x1F exactly when v <= 0x1F (unsigned) */
        __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(v, below_space), below_space);
        __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)), control);
        unsigned mask = (unsigned)_mm_movemask_epi8(stop);
        if (mask != 0) {
            unsigned at = (unsigned)__builtin_ctz(mask);
            if ((unsigned)_mm_movemask_epi8(v) & ((1u << at) - 1)) seen = 0x80;
            i += at;
            if (_mm_movemask_epi8(all) != 0) seen = 0x80;
            *high |= seen;
            return i;
        }
        all = _mm_or_si128(all, v);
    }
    if (_mm_movemask_epi8(all) != 0) seen = 0x80;
    *high |= seen;
    return i + cjsonscan_plain_words(p + i, n - i, high);
#else
    return cjsonscan_plain_words(p, n, high);
#endif
}
