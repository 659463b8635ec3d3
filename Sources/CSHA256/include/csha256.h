#ifndef CSHA256_H
#define CSHA256_H
/* SHA-256's compression function on the x86 SHA extensions, for the blob
 * store's hashing (TureenCore/SHA256.swift): Swift cannot reach these
 * instructions itself. Not part of Tureen's API; the version script keeps
 * these symbols out of the shared object's exports. */
#include <stddef.h>
#include <stdint.h>

/* SHA-256's 64 round constants (FIPS 180-4, 4.2.2), for both ways of
 * running the rounds. */
extern const uint32_t csha256_k[64];

/* 1 when this CPU has the SHA extensions and SSE4.1, else 0. */
int csha256_hardware(void);

/* Runs `blocks` 64-byte blocks of `data` through `state` (H0..H7).
 * Call only when csha256_hardware() returned 1. */
void csha256_compress(uint32_t state[8], const uint8_t *data, size_t blocks);

#endif
