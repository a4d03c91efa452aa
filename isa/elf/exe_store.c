/*
 * exe_store.c — the distinct contents of an executable's sections (see
 * exe_store.h): blocks found by their bytes (a hash picks where to look,
 * the bytes themselves decide) or by the reader's key.
 */
#include "exe_store.h"

#include <stdlib.h>
#include <string.h>

typedef struct block {
    uint8_t *bytes;
    size_t size;
    uint64_t hash;
} block;

struct exe_store {
    block *b;
    size_t n, cap;
    uint64_t bytes;
    size_t *slot;                 /* content index: block + 1, 0 empty */
    size_t n_slots;               /* 0 or a power of two above 2 n */
    exe_u64map by_key;            /* reader's key -> block + 1 */
};

/* Eight bytes at a time (the sections are mostly whole words), then the
 * tail; only where to look in the index depends on it. */
static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h ^ (h >> 32);
}

exe_store *exe_store_new(void)
{
    return calloc(1, sizeof(exe_store));
}

void exe_store_free(exe_store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->b[i].bytes);
    free(s->b);
    free(s->slot);
    exe_u64map_free(&s->by_key);
    free(s);
}

uint64_t exe_store_bytes(const exe_store *s)
{
    return s ? s->bytes : 0;
}

/* A new block holding a copy of p (zeros when NULL); its index, or
 * SIZE_MAX when the host is out of memory. */
static size_t add_block(exe_store *s, const void *p, size_t size, uint64_t hash)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        block *b = realloc(s->b, cap * sizeof *b);
        if (!b)
            return SIZE_MAX;
        s->b = b;
        s->cap = cap;
    }
    uint8_t *bytes = p ? malloc(size ? size : 1) : calloc(1, size ? size : 1);
    if (!bytes)
        return SIZE_MAX;
    if (p && size)
        memcpy(bytes, p, size);
    s->b[s->n] = (block){.bytes = bytes, .size = size, .hash = hash};
    s->bytes += size;
    return s->n++;
}

static bool grow_index(exe_store *s)
{
    size_t n_slots = s->n_slots ? 2 * s->n_slots : 256;
    size_t *slot = calloc(n_slots, sizeof *slot);
    if (!slot)
        return false;
    for (size_t i = 0; i < s->n_slots; i++) {
        size_t k = s->slot[i];
        if (!k)
            continue;
        size_t j = s->b[k - 1].hash & (n_slots - 1);
        while (slot[j])
            j = (j + 1) & (n_slots - 1);
        slot[j] = k;
    }
    free(s->slot);
    s->slot = slot;
    s->n_slots = n_slots;
    return true;
}

uint8_t *exe_store_intern(exe_store *s, const void *p, size_t size)
{
    static const uint8_t zeros[4096];
    const uint8_t *want = p;
    uint8_t *tmp = NULL;
    if (!p && size > sizeof zeros) {
        if (!(tmp = calloc(1, size)))
            return NULL;
        want = tmp;
    } else if (!p) {
        want = zeros;
    }
    uint64_t h = hash_bytes(want, size);
    size_t j = s->n_slots ? h & (s->n_slots - 1) : 0;
    for (; s->n_slots && s->slot[j]; j = (j + 1) & (s->n_slots - 1)) {
        const block *b = &s->b[s->slot[j] - 1];
        if (b->hash == h && b->size == size && !memcmp(b->bytes, want, size)) {
            free(tmp);
            return b->bytes;
        }
    }
    uint8_t *out = NULL;
    if ((s->n + 1) * 2 < s->n_slots || grow_index(s)) {
        size_t k = add_block(s, want, size, h);
        if (k != SIZE_MAX) {
            j = h & (s->n_slots - 1);
            while (s->slot[j])
                j = (j + 1) & (s->n_slots - 1);
            s->slot[j] = k + 1;
            out = s->b[k].bytes;
        }
    }
    free(tmp);
    return out;
}

uint8_t *exe_store_keyed(exe_store *s, uint64_t key, const void *p, size_t size)
{
    uint64_t k = exe_u64map_get(&s->by_key, key);
    if (k && s->b[k - 1].size == size)
        return s->b[k - 1].bytes;
    size_t i = add_block(s, p, size, 0);
    if (i == SIZE_MAX)
        return NULL;
    if (!k && !exe_u64map_put(&s->by_key, key, i + 1))
        return NULL;      /* the block stays in the store, freed with it */
    return s->b[i].bytes;
}

/* ---------------------------------------------------------------- u64 map */

static size_t map_slot(const exe_u64map *m, uint64_t key)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    size_t j = (size_t)(h ^ (h >> 31)) & (m->n_slots - 1);
    while (m->value[j] && m->key[j] != key)
        j = (j + 1) & (m->n_slots - 1);
    return j;
}

uint64_t exe_u64map_get(const exe_u64map *m, uint64_t key)
{
    return m->n_slots ? m->value[map_slot(m, key)] : 0;
}

bool exe_u64map_put(exe_u64map *m, uint64_t key, uint64_t value)
{
    if ((m->n + 1) * 2 >= m->n_slots) {
        exe_u64map g = {.n_slots = m->n_slots ? 2 * m->n_slots : 256};
        g.key = calloc(g.n_slots, sizeof *g.key);
        g.value = calloc(g.n_slots, sizeof *g.value);
        if (!g.key || !g.value) {
            exe_u64map_free(&g);
            return false;
        }
        for (size_t i = 0; i < m->n_slots; i++)
            if (m->value[i]) {
                size_t j = map_slot(&g, m->key[i]);
                g.key[j] = m->key[i];
                g.value[j] = m->value[i];
                g.n++;
            }
        exe_u64map_free(m);
        *m = g;
    }
    size_t j = map_slot(m, key);
    if (!m->value[j])
        m->n++;
    m->key[j] = key;
    m->value[j] = value;
    return true;
}

void exe_u64map_free(exe_u64map *m)
{
    free(m->key);
    free(m->value);
    *m = (exe_u64map){0};
}
