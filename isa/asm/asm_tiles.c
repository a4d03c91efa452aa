/*
 * asm_tiles.c — tile lists: `.tile 0-1471` or `.tile 0, 4-7, 9` puts what
 * follows on every tile of the list, as if it were written once per tile
 * (asm.h says what is shared and what is per tile).  Here: parsing a list,
 * the sets of tiles (interned, so a set is known by its index), their text
 * for messages, and the count of statements a list multiplies.
 */
#include "asm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- interned sets ------------------------------------------------------------- */

/* The hash of a set of tiles. */
static uint64_t set_hash(const uint32_t *tiles, uint32_t n)
{
    uint64_t h = 1469598103934665603ull ^ n;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ tiles[i]) * 1099511628211ull;
    return h;
}

/* s holds exactly tiles[0..n). */
static bool same_tiles(const asm_tileset *s, const uint32_t *tiles, uint32_t n)
{
    return s->n == n && !memcmp(s->tiles, tiles, (size_t)n * sizeof *tiles);
}

/* The set table twice as large. */
static void rehash_sets(asm_ctx *a)
{
    size_t cap = a->cap_set_slots ? 2 * a->cap_set_slots : 64;
    uint32_t *slots = asm_xrealloc(NULL, cap * sizeof *slots);
    memset(slots, 0, cap * sizeof *slots);
    for (size_t i = 0; i < a->n_sets; i++) {
        size_t j = a->sets[i].hash & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = (uint32_t)i + 1;
    }
    free(a->set_slots);
    a->set_slots = slots;
    a->cap_set_slots = cap;
}

uint32_t asm_tileset_intern(asm_ctx *a, const uint32_t *tiles, uint32_t n)
{
    uint64_t h = set_hash(tiles, n);
    if (2 * (a->n_sets + 1) > a->cap_set_slots)
        rehash_sets(a);
    size_t j = h & (a->cap_set_slots - 1);
    for (; a->set_slots[j]; j = (j + 1) & (a->cap_set_slots - 1)) {
        const asm_tileset *s = &a->sets[a->set_slots[j] - 1];
        if (s->hash == h && same_tiles(s, tiles, n))
            return a->set_slots[j] - 1;
    }
    ASM_GROW(a->sets, a->n_sets, a->cap_sets);
    uint32_t *copy = asm_alloc(&a->arena, (size_t)n * sizeof *copy);
    memcpy(copy, tiles, (size_t)n * sizeof *copy);
    a->sets[a->n_sets] = (asm_tileset){ copy, n, h };
    a->set_slots[j] = (uint32_t)a->n_sets + 1;
    a->set_tiles += n;
    return (uint32_t)a->n_sets++;
}

bool asm_tileset_has(const asm_ctx *a, uint32_t set, uint32_t tile)
{
    const asm_tileset *s = asm_set(a, set);
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->tiles[mid] < tile)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->tiles[lo] == tile;
}

bool asm_tileset_subset(asm_ctx *a, uint32_t sub, uint32_t super)
{
    if (sub == super)
        return true;
    if (a->subset_known && a->subset_sub == sub && a->subset_super == super)
        return a->subset_answer;
    const asm_tileset *x = asm_set(a, sub), *y = asm_set(a, super);
    uint32_t j = 0;
    bool ok = x->n <= y->n;
    for (uint32_t i = 0; i < x->n && ok; i++) {
        while (j < y->n && y->tiles[j] < x->tiles[i])
            j++;
        ok = j < y->n && y->tiles[j] == x->tiles[i];
    }
    a->subset_known = true;
    a->subset_sub = sub;
    a->subset_super = super;
    a->subset_answer = ok;
    return ok;
}

void asm_tileset_text(const asm_ctx *a, uint32_t set, char *buf, size_t n)
{
    const asm_tileset *s = asm_set(a, set);
    size_t used = 0;
    if (n)
        buf[0] = 0;
    for (uint32_t i = 0; i < s->n;) {
        uint32_t j = i;
        while (j + 1 < s->n && s->tiles[j + 1] == s->tiles[j] + 1)
            j++;
        char item[32];
        if (j > i)
            snprintf(item, sizeof item, "%s%u-%u", i ? ", " : "", s->tiles[i], s->tiles[j]);
        else
            snprintf(item, sizeof item, "%s%u", i ? ", " : "", s->tiles[i]);
        if (used + strlen(item) + 6 > n) {
            if (used + 6 <= n)
                snprintf(buf + used, n - used, ", ...");
            return;
        }
        used += (size_t)snprintf(buf + used, n - used, "%s", item);
        i = j + 1;
    }
}

bool asm_count_copies(asm_ctx *a, uint64_t n, asm_loc loc)
{
    a->tile_copies += n;
    if (a->tile_copies <= ASM_MAX_TILE_COPIES)
        return true;
    asm_error(a, loc, "more than %u statements and labels on tiles, counting what a '.tile' list puts on several "
              "tiles once per tile", ASM_MAX_TILE_COPIES);
    a->stop = true;
    return false;
}

/* ---- `.tile LIST` ------------------------------------------------------------------ */

typedef struct tile_range { uint32_t lo, hi; const char *at; } tile_range;

/* Ranges by their first tile. */
static int cmp_range(const void *x, const void *y)
{
    const tile_range *a = x, *b = y;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Where an item of the list ends (a ',' or the end, outside parentheses),
 * and its first and second '-' that subtract nothing (a range's dash: one
 * that follows an operand).  Character constants are skipped. */
static const char *item_end(const char *p, const char **dash, const char **dash2)
{
    int depth = 0;
    char prev = 0;   /* the last character that was not a space */
    *dash = *dash2 = NULL;
    for (; *p && !(*p == ',' && depth == 0); p++) {
        if (*p == '\'') {
            const char *q = p + 1;
            if (*q == '\\' && q[1])
                q++;
            if (*q && q[1] == '\'') {
                p = q + 1;
                prev = '\'';
                continue;
            }
        }
        if (*p == '(')
            depth++;
        else if (*p == ')' && depth > 0)
            depth--;
        else if (*p == '-' && depth == 0 &&
                 (asm_is_ident_char((unsigned char)prev) || prev == ')' || prev == '\'')) {
            if (!*dash)
                *dash = p;
            else if (!*dash2)
                *dash2 = p;
        }
        if (!asm_is_space((unsigned char)*p))
            prev = *p;
    }
    return p;
}

/* One bound of an item at *p (the text ends where the item or its range
 * dash does): a tile number. */
static bool tile_bound(asm_ctx *a, const char *text, const char **p, asm_loc base, uint32_t *out)
{
    int64_t t;
    asm_loc l = asm_at(base, text, asm_skip_space(*p));
    if (!asm_parse_const(a, text, p, base, "'.tile'", &t))
        return false;
    if (t < 0 || t > ASM_MAX_TILE) {
        asm_error(a, l, "tile number %lld out of range (0..%u)", (long long)t, ASM_MAX_TILE);
        return false;
    }
    *out = (uint32_t)t;
    return true;
}

/* One item: a tile, or FIRST-LAST; *p is left after it. */
static bool tile_item(asm_ctx *a, char *text, const char **p, asm_loc base, const char *after, tile_range *r)
{
    const char *start = asm_skip_space(*p), *dash, *dash2;
    if (!*start || *start == ',') {
        char found[64];
        asm_found_text(start, found, sizeof found);
        asm_error(a, asm_at(base, text, start), "expected a tile or a range of tiles after %s, found %s", after,
                  found);
        return false;
    }
    const char *end = item_end(start, &dash, &dash2);
    r->at = start;
    if (dash2) {
        asm_error(a, asm_at(base, text, dash2), "a range of tiles is FIRST-LAST with one '-'; write (A - B) "
                  "for a difference");
        return false;
    }
    const char *q = start;
    if (!dash) {
        if (!tile_bound(a, text, &q, base, &r->lo))
            return false;
        r->hi = r->lo;
    } else {
        /* The bounds are parsed apart: the first ends at the dash. */
        char *d = text + (dash - text);
        *d = 0;
        bool ok = tile_bound(a, text, &q, base, &r->lo);
        *d = '-';
        if (!ok)
            return false;
        q = asm_skip_space(q);
        if (q != dash) {
            char found[64];
            asm_found_text(q, found, sizeof found);
            asm_error(a, asm_at(base, text, q), "expected '-' or ',' after a tile in '.tile', found %s", found);
            return false;
        }
        const char *hi = asm_skip_space(dash + 1);
        if (hi == end) {
            char found[64];
            asm_found_text(hi, found, sizeof found);
            asm_error(a, asm_at(base, text, hi), "expected the last tile of the range after '-', found %s", found);
            return false;
        }
        q = hi;
        if (!tile_bound(a, text, &q, base, &r->hi))
            return false;
        if (r->hi < r->lo) {
            asm_error(a, asm_at(base, text, start), "tile range %u-%u is reversed: the first tile must not be "
                      "above the last", r->lo, r->hi);
            return false;
        }
    }
    *p = q;
    return true;
}

/* The items of the list at args, into *ranges (malloc'd). */
static bool tile_items(asm_ctx *a, char *text, const char *args, asm_loc base, tile_range **ranges, size_t *n)
{
    size_t cap = 0;
    const char *p = args, *after = "'.tile'";
    *ranges = NULL;
    *n = 0;
    for (;;) {
        ASM_GROW(*ranges, *n, cap);
        if (!tile_item(a, text, &p, base, after, &(*ranges)[*n]))
            return false;
        (*n)++;
        p = asm_skip_space(p);
        if (*p != ',')
            break;
        p++;
        after = "','";
    }
    if (*p) {
        char found[64];
        asm_found_text(p, found, sizeof found);
        asm_error(a, asm_at(base, text, p), "expected ',' or end of statement after a tile in '.tile', found %s",
                  found);
        return false;
    }
    return true;
}

bool asm_parse_tile_list(asm_ctx *a, const char *text, const char *args, asm_loc base, uint32_t *set)
{
    /* A copy, so a range's dash can end its first bound; columns stay. */
    char *copy = asm_strndup(&a->arena, text, strlen(text));
    tile_range *r;
    size_t n;
    if (!tile_items(a, copy, copy + (args - text), base, &r, &n)) {
        free(r);
        return false;
    }
    qsort(r, n, sizeof *r, cmp_range);
    uint64_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && r[i].lo <= r[i - 1].hi) {
            asm_error(a, asm_at(base, copy, r[i].at), "tile %u is named twice in the '.tile' list", r[i].lo);
            free(r);
            return false;
        }
        count += (uint64_t)r[i].hi - r[i].lo + 1;
    }
    if (count > ASM_MAX_LIST_TILES) {
        asm_error(a, asm_at(base, copy, asm_skip_space(copy + (args - text))), "the '.tile' list names %llu tiles, "
                  "more than the %u a list may name", (unsigned long long)count, ASM_MAX_LIST_TILES);
        free(r);
        return false;
    }
    uint32_t *tiles = asm_xrealloc(NULL, (size_t)count * sizeof *tiles);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (uint64_t t = r[i].lo; t <= r[i].hi; t++)
            tiles[k++] = (uint32_t)t;
    size_t before = a->n_sets;
    *set = asm_tileset_intern(a, tiles, (uint32_t)count);
    free(tiles);
    free(r);
    /* A new list costs work once per tile it names. */
    if (a->n_sets > before && count > 1 && !asm_count_copies(a, count, base))
        return false;
    return true;
}
