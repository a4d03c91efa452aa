/*
 * hash.h — FNV-1a over bytes, for the hash tables that find equal blocks
 * (equal records, equal constants); the tables compare the bytes
 * themselves, the hash only picks where to look.
 */
#ifndef IPUSIM_SIM_BASE_HASH_H
#define IPUSIM_SIM_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t hash_fnv1a(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

#endif
