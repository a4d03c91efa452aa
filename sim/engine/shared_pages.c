/*
 * shared_pages.c — identical loaded pages of tile memory held once
 * (engine_internal.h, page_table).
 */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

static uint64_t page_hash(const uint8_t *p)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t w = 0; w < TMEM_PAGE_BYTES; w += 8) {
        uint64_t v;
        memcpy(&v, p + w, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    return h;
}

/* Room for one more page (false: out of host memory, the table unchanged). */
static bool page_table_room(page_table *t)
{
    if (2 * (t->used + 1) <= t->n_slots)
        return true;
    size_t n2 = t->n_slots ? 2 * t->n_slots : 1 << 12;
    const uint8_t **s2 = calloc(n2, sizeof *s2);
    uint64_t *h2 = calloc(n2, sizeof *h2);
    if (!s2 || !h2) {
        free(s2);
        free(h2);
        return false;
    }
    for (size_t q = 0; q < t->n_slots; q++)
        if (t->slot[q]) {
            size_t j = (size_t)t->hash[q] & (n2 - 1);
            while (s2[j])
                j = (j + 1) & (n2 - 1);
            s2[j] = t->slot[q];
            h2[j] = t->hash[q];
        }
    free(t->slot);
    free(t->hash);
    t->slot = s2;
    t->hash = h2;
    t->n_slots = n2;
    return true;
}

void page_table_share(page_table *t, tile_memory *m)
{
    for (uint32_t pg = 0; pg < m->size_bytes / TMEM_PAGE_BYTES; pg++) {
        const uint8_t *p = tmem_page(m, pg);
        if (!p || !page_table_room(t))
            continue;
        uint64_t h = page_hash(p);
        size_t j = (size_t)h & (t->n_slots - 1);
        while (t->slot[j] && (t->hash[j] != h || memcmp(t->slot[j], p, TMEM_PAGE_BYTES)))
            j = (j + 1) & (t->n_slots - 1);
        if (t->slot[j]) {
            if (t->slot[j] != p)
                tmem_page_adopt(m, pg, t->slot[j]);
            continue;
        }
        /* kept: from now on shared, so no memory writes it in place */
        t->slot[j] = tmem_page_share(m, pg);
        tmem_page_release(t->slot[j]);
        t->hash[j] = h;
        t->used++;
    }
}

void page_table_free(page_table *t)
{
    free(t->slot);
    free(t->hash);
    *t = (page_table){ 0 };
}
