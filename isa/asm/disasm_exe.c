/*
 * disasm_exe.c — a whole executable back to assembly text (disasm.h says
 * what the text promises).
 *
 * A compiled program puts the same kernel code on every tile, so the text
 * is written by section image, not by tile: tiles whose section (name,
 * address, flags, bytes, the labels it holds, the symbols that split it,
 * and the names its branches print) is the same share one copy of it,
 * printed once under a `.tile` list of those tiles (asm.h: what a list puts
 * on several tiles is assembled as if written once per tile).  Sections are
 * grouped by a hash of all of that, checked byte for byte; names of branch
 * targets, which may lie in other sections of the tile, are compared after,
 * on the addresses the first tile's text looked up.  Per-tile data (weights
 * differ per tile) stays under its own tile.
 */
#include "disasm.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Room in *p (capacity *cap elements of elem bytes) for `need`: half as
 * much again as asked; false (nothing changed) when out of host memory. */
static bool room_for(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t more = need + need / 2 + 8;
    void *q = realloc(*p, more * elem);
    if (!q)
        return false;
    *p = q;
    *cap = more;
    return true;
}

/* ---- names ---------------------------------------------------------------------- */

/* A name the assembler reads back as the same symbol without quotes. */
static bool plain_name(const char *s)
{
    if (!s[0] || (s[0] == '.' && !s[1]))
        return false;
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_' || s[0] == '.'))
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '.' || *p == '$'))
            return false;
    return true;
}

/* A name that can be written at all: plain, or in double quotes. */
static bool quotable_name(const char *s)
{
    if (!s[0])
        return false;
    for (const char *p = s; *p; p++)
        if (*p == '"' || *p == '\\' || *p == '\n' || *p == '\r')
            return false;
    return true;
}

/* A symbol's name as the assembler reads it back. */
static void print_name(FILE *out, const char *s)
{
    if (plain_name(s))
        fputs(s, out);
    else
        fprintf(out, "\"%s\"", s);
}

/* ---- the symbols of a tile -------------------------------------------------------- */

/* One tile's symbols: slices of the executable-wide arrays. */
typedef struct tile_syms {
    const exe_symbol **by_addr;   /* by address, then table order */
    size_t n;
    bool *dup;                    /* by_addr[i] has the name of a symbol at a lower address */
    const exe_section **owner;    /* the section by_addr[i] is printed in, or NULL */
} tile_syms;

/* First symbol at addr in ts (index), or ts->n. */
static size_t first_at(const tile_syms *ts, uint32_t addr)
{
    size_t lo = 0, hi = ts->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ts->by_addr[mid]->addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The name a branch to addr prints as (a label that names addr alone),
 * or NULL for hex. */
static const char *name_at(const tile_syms *ts, uint32_t addr)
{
    for (size_t i = first_at(ts, addr); i < ts->n && ts->by_addr[i]->addr == addr; i++)
        if (plain_name(ts->by_addr[i]->name) && !ts->dup[i])
            return ts->by_addr[i]->name;
    return NULL;
}

/* The symbolizer's context: a tile, and where the addresses it was asked
 * about are recorded (when record is set). */
typedef struct lookup {
    const tile_syms *ts;
    bool record;
    uint32_t *addrs;
    size_t n, cap;
} lookup;

/* The symbolizer of disasm_bundle_sym: name_at, recording the address. */
static const char *symbolize(void *ctx, uint32_t addr)
{
    lookup *lk = ctx;
    if (lk->record) {
        if (lk->n == lk->cap) {
            size_t cap = lk->cap ? 2 * lk->cap : 64;
            uint32_t *p = realloc(lk->addrs, cap * sizeof *p);
            if (!p)
                lk->record = false;   /* the caller sees it and keeps the tiles apart */
            else {
                lk->addrs = p;
                lk->cap = cap;
            }
        }
        if (lk->record)
            lk->addrs[lk->n++] = addr;
    }
    return name_at(lk->ts, addr);
}

/* Which section each symbol is printed in.  Symbols carry a tile and an
 * address, not a section, so any section whose range holds the address
 * gives the same symbol back; but an empty section exactly at the address
 * takes it first, since labels are all an empty section can hold, then a
 * section holding the address, then one ending there. */
static void assign_owners(tile_syms *ts, const exe_section *const *secs, size_t n_secs)
{
    for (size_t i = 0; i < ts->n; i++) {
        uint32_t addr = ts->by_addr[i]->addr;
        const exe_section *own = NULL;
        for (int pass = 0; pass < 3 && !own; pass++)
            for (size_t k = 0; k < n_secs && !own; k++) {
                const exe_section *s = secs[k];
                uint64_t end = (uint64_t)s->addr + s->size;
                if ((pass == 0 && !s->size && s->addr == addr) ||
                    (pass == 1 && addr >= s->addr && addr < end) ||
                    (pass == 2 && addr == end))
                    own = s;
            }
        ts->owner[i] = own;
    }
}

/* ---- printing a section ----------------------------------------------------------- */

/* Labels for the symbols at addr that belong to section sec. */
static void print_labels(FILE *out, const tile_syms *ts, const exe_section *sec, uint32_t addr)
{
    enum exe_symbol_kind def = (sec->flags & EXE_SEC_EXEC) ? EXE_SYM_CODE : EXE_SYM_DATA;
    for (size_t i = first_at(ts, addr); i < ts->n && ts->by_addr[i]->addr == addr; i++) {
        const exe_symbol *s = ts->by_addr[i];
        if (ts->owner[i] != sec)
            continue;
        if (!quotable_name(s->name)) {
            fprintf(out, "// symbol at 0x%x not shown: its name cannot be written\n", addr);
            continue;
        }
        if (ts->dup[i]) {
            /* A second symbol of the name on the tile: not a label. */
            fputs(".symbol ", out);
            print_name(out, s->name);
            fprintf(out, ", %s, %u%s\n", s->kind == EXE_SYM_CODE ? "@function" : s->kind == EXE_SYM_DATA ? "@object"
                                                                                                          : "@notype",
                    s->size, s->global ? ", global" : "");
            continue;
        }
        if (s->global) {
            fputs(".globl ", out);
            print_name(out, s->name);
            fputc('\n', out);
        }
        if (s->kind != def) {
            fputs(".type ", out);
            print_name(out, s->name);
            fprintf(out, ", %s\n", s->kind == EXE_SYM_CODE ? "@function" : s->kind == EXE_SYM_DATA ? "@object"
                                                                                                   : "@notype");
        }
        if (s->size) {
            fputs(".size ", out);
            print_name(out, s->name);
            fprintf(out, ", %u\n", s->size);
        }
        print_name(out, s->name);
        fputs(":\n", out);
    }
}

/* The little-endian word at p. */
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The next symbol address after addr (within the tile), or limit. */
static uint32_t next_label(const tile_syms *ts, uint32_t addr, uint32_t limit)
{
    if (addr == UINT32_MAX)
        return limit;
    size_t i = first_at(ts, addr + 1);
    if (i < ts->n && ts->by_addr[i]->addr < limit)
        return ts->by_addr[i]->addr;
    return limit;
}

/* n bytes as .byte lines of 16. */
static void print_bytes(FILE *out, const uint8_t *p, uint32_t n)
{
    while (n) {
        uint32_t k = n < 16 ? n : 16;
        fputs("    .byte ", out);
        for (uint32_t i = 0; i < k; i++)
            fprintf(out, "%s0x%02x", i ? ", " : "", p[i]);
        fputc('\n', out);
        p += k;
        n -= k;
    }
}

/* Data from addr to end (no label in between): words where aligned,
 * .space for runs of 16 or more zero bytes. */
static void print_data(FILE *out, const exe_section *sec, uint32_t addr, uint32_t end)
{
    const uint8_t *b = sec->bytes + (addr - sec->addr);
    while (addr < end) {
        uint32_t zeros = 0;
        while (addr + zeros < end && b[zeros] == 0)
            zeros++;
        if (zeros >= 16) {
            fprintf(out, "    .space %u\n", zeros);
            addr += zeros;
            b += zeros;
            continue;
        }
        if ((addr & 3) || end - addr < 4) {
            uint32_t k = (addr & 3) ? 4 - (addr & 3) : end - addr;
            if (k > end - addr)
                k = end - addr;
            print_bytes(out, b, k);
            addr += k;
            b += k;
            continue;
        }
        uint32_t words = 0;
        fputs("    .word ", out);
        while (words < 8 && end - addr >= 4) {
            /* stop before a zero run worth a .space */
            uint32_t z = 0;
            while (addr + z < end && b[z] == 0 && z < 16)
                z++;
            if (z >= 16 && words)
                break;
            fprintf(out, "%s0x%08x", words ? ", " : "", le32(b));
            addr += 4;
            b += 4;
            words++;
        }
        fputc('\n', out);
    }
}

/* Code from addr to end (no label in between), an instruction or bundle a
 * line with its address in a comment.  With out NULL nothing is written:
 * only the branch targets are looked up (and recorded, if lk records). */
static void print_code(FILE *out, const exe_section *sec, lookup *lk, uint32_t addr, uint32_t end)
{
    const uint8_t *base = sec->bytes;
    while (addr < end) {
        const uint8_t *b = base + (addr - sec->addr);
        if ((addr & 3) || end - addr < 4) {
            uint32_t k = (addr & 3) ? 4 - (addr & 3) : end - addr;
            if (k > end - addr)
                k = end - addr;
            if (out)
                print_bytes(out, b, k);
            addr += k;
            continue;
        }
        char text[400];
        bool have_w1 = end - addr >= 8;
        size_t used = disasm_bundle_sym(le32(b), have_w1 ? le32(b + 4) : 0, have_w1, addr, symbolize, lk, text,
                                        sizeof text);
        if (out) {
            int w = fprintf(out, "    %s", text);
            fprintf(out, "%*s// 0x%x\n", w < 52 ? 52 - w : 1, "", addr);
        }
        addr += (uint32_t)used;
    }
}

/* The one past the last address of sec (clamped to the address space). */
static uint32_t sec_end(const exe_section *sec)
{
    return sec->size <= UINT32_MAX - sec->addr ? sec->addr + sec->size : UINT32_MAX;
}

/* The section's contents between its labels: with out NULL, only its code
 * is walked for the branch targets it names. */
static void print_contents(FILE *out, const exe_section *sec, lookup *lk)
{
    const tile_syms *ts = lk->ts;
    uint32_t addr = sec->addr, end = sec_end(sec);
    for (;;) {
        if (out)
            print_labels(out, ts, sec, addr);
        if (addr >= end)
            break;
        uint32_t stop = next_label(ts, addr, end);
        if (stop <= addr)
            break;
        if (sec->flags & EXE_SEC_NOBITS || !sec->bytes) {
            if (out)
                fprintf(out, "    .space %u\n", stop - addr);
        } else if (sec->flags & EXE_SEC_EXEC)
            print_code(out, sec, lk, addr, stop);
        else if (out)
            print_data(out, sec, addr, stop);
        addr = stop;
    }
}

/* `.section NAME, "flags", ADDR` and the contents, labels from ts. */
static void print_section(FILE *out, const exe_section *sec, const tile_syms *ts)
{
    char flags[8];
    char *f = flags;
    *f++ = 'a';
    if (sec->flags & EXE_SEC_WRITE) *f++ = 'w';
    if (sec->flags & EXE_SEC_EXEC) *f++ = 'x';
    *f = 0;
    if (!quotable_name(sec->name)) {
        /* The assembler could not read the name back: say so, and go on
         * with the other sections. */
        fprintf(out, "\n// section of %u bytes at 0x%x not shown: its name cannot be written\n", sec->size, sec->addr);
        return;
    }
    fputs("\n.section ", out);
    bool plain = true;
    for (const char *p = sec->name; *p && plain; p++)
        if (strchr(",\" \t\r\v\f;#/{}", *p))
            plain = false;
    if (plain && sec->name[0])
        fputs(sec->name, out);
    else
        fprintf(out, "\"%s\"", sec->name);
    fprintf(out, ", \"%s\"%s, 0x%x\n", flags, (sec->flags & EXE_SEC_NOBITS) ? ", @nobits" : "", sec->addr);
    lookup lk = { ts, false, NULL, 0, 0 };
    print_contents(out, sec, &lk);
}

/* ---- the executable's tiles --------------------------------------------------------- */

/* A tile that has sections or a supervisor entry. */
typedef struct dis_tile {
    uint32_t tile;
    tile_syms ts;
    const exe_section **secs;     /* its sections, by address */
    size_t n_secs;
    const exe_tile_record *rec;
} dis_tile;

/* One section of one tile, in a group. */
typedef struct member { size_t tile; const exe_section *sec; } member;

/* Tiles whose section prints the same text: the first member's prints it. */
typedef struct group {
    uint64_t hash;
    size_t key_off, key_len;      /* into dis.keys */
    member *m;
    size_t n, cap;
    size_t set;                   /* into dis.sets, once grouped */
} group;

/* A set of tiles (indexes into dis.tiles, ascending) under one `.tile` list. */
typedef struct tile_set {
    const size_t *t;
    size_t n;
    uint64_t hash;
    size_t rank;                  /* position in the text */
} tile_set;

typedef struct dis {
    const ipu_exe *e;
    dis_tile *tiles; size_t n_tiles;
    const exe_symbol **syms; bool *dup; const exe_section **owner;   /* by tile, then address */
    exe_symbol *every;            /* the symbols of every tile, a copy on each tile with code */
    size_t n_syms;
    const exe_section **secs;                                        /* by tile, then address */
    uint8_t *keys; size_t keys_n, keys_cap;
    group *groups; size_t n_groups, cap_groups;
    size_t *slots; size_t cap_slots;                                 /* hash -> group + 1 */
    tile_set *sets; size_t n_sets, cap_sets;
    size_t *set_slots; size_t cap_set_slots;                         /* hash -> set + 1 */
    bool oom;
} dis;

/* qsort orders: tiles; symbols and sections by tile, then address. */
static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static int cmp_sym(const void *x, const void *y)
{
    const exe_symbol *a = *(const exe_symbol *const *)x, *b = *(const exe_symbol *const *)y;
    if (a->tile != b->tile)
        return a->tile < b->tile ? -1 : 1;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return a < b ? -1 : a > b;   /* stable: table order */
}

static int cmp_sec(const void *x, const void *y)
{
    const exe_section *a = *(const exe_section *const *)x, *b = *(const exe_section *const *)y;
    if (a->tile != b->tile)
        return a->tile < b->tile ? -1 : 1;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return a < b ? -1 : a > b;
}

typedef struct named { const exe_symbol *s; size_t i; } named;

/* Symbols by tile, name, then address. */
static int cmp_name(const void *x, const void *y)
{
    const named *a = x, *b = y;
    if (a->s->tile != b->s->tile)
        return a->s->tile < b->s->tile ? -1 : 1;
    int c = strcmp(a->s->name, b->s->name);
    if (c)
        return c;
    if (a->s->addr != b->s->addr)
        return a->s->addr < b->s->addr ? -1 : 1;
    return a->s < b->s ? -1 : a->s > b->s;
}

/* Mark the symbols whose name a symbol of the tile at a lower address (or
 * earlier at the same) has: the assembler defines a label once, so these
 * are written with .symbol, which no expression names. */
static bool mark_duplicates(dis *d, size_t n)
{
    named *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return false;
    for (size_t i = 0; i < n; i++)
        v[i] = (named){ d->syms[i], i };
    qsort(v, n, sizeof *v, cmp_name);
    for (size_t i = 1; i < n; i++)
        if (v[i].s->tile == v[i - 1].s->tile && !strcmp(v[i].s->name, v[i - 1].s->name))
            d->dup[v[i].i] = true;
    free(v);
    return true;
}

/* The tiles (those with sections or an entry), their sections and
 * symbols, and which section prints each symbol. */
static bool find_tiles(dis *d)
{
    const ipu_exe *e = d->e;
    size_t nt = e->n_sections + e->n_tiles;
    size_t n_every = 0;
    for (size_t i = 0; i < e->n_symbols; i++)
        n_every += e->symbols[i].tile == EXE_EVERY_TILE;
    size_t ns = e->n_symbols - n_every + n_every * e->n_tiles;
    uint32_t *ids = malloc((nt ? nt : 1) * sizeof *ids);
    d->tiles = calloc(nt ? nt : 1, sizeof *d->tiles);
    d->secs = malloc((e->n_sections ? e->n_sections : 1) * sizeof *d->secs);
    d->syms = malloc((ns ? ns : 1) * sizeof *d->syms);
    d->dup = calloc(ns ? ns : 1, sizeof *d->dup);
    d->owner = calloc(ns ? ns : 1, sizeof *d->owner);
    d->every = malloc((n_every * e->n_tiles > 0 ? n_every * e->n_tiles : 1) * sizeof *d->every);
    if (!ids || !d->tiles || !d->secs || !d->syms || !d->dup || !d->owner || !d->every) {
        free(ids);
        return false;
    }
    for (size_t i = 0; i < e->n_sections; i++) {
        ids[i] = e->sections[i].tile;
        d->secs[i] = &e->sections[i];
    }
    for (size_t i = 0; i < e->n_tiles; i++)
        ids[e->n_sections + i] = e->tiles[i].tile;
    size_t n = 0, k = 0;
    for (size_t i = 0; i < e->n_symbols; i++) {
        if (e->symbols[i].tile != EXE_EVERY_TILE) {
            d->syms[n++] = &e->symbols[i];
            continue;
        }
        for (size_t t = 0; t < e->n_tiles; t++) {
            d->every[k] = e->symbols[i];
            d->every[k].tile = e->tiles[t].tile;
            d->syms[n++] = &d->every[k++];
        }
    }
    d->n_syms = n;
    qsort(ids, nt, sizeof *ids, cmp_u32);
    qsort(d->secs, e->n_sections, sizeof *d->secs, cmp_sec);
    qsort(d->syms, n, sizeof *d->syms, cmp_sym);
    if (!mark_duplicates(d, n)) {
        free(ids);
        return false;
    }
    size_t si = 0, yi = 0;
    for (size_t t = 0; t < nt; t++) {
        if (t && ids[t] == ids[t - 1])
            continue;
        dis_tile *dt = &d->tiles[d->n_tiles++];
        dt->tile = ids[t];
        while (yi < n && d->syms[yi]->tile < dt->tile)
            yi++;   /* symbols of a tile with no section nor entry are not shown */
        size_t y0 = yi;
        while (yi < n && d->syms[yi]->tile == dt->tile)
            yi++;
        dt->ts = (tile_syms){ d->syms + y0, yi - y0, d->dup + y0, d->owner + y0 };
        size_t s0 = si;
        while (si < e->n_sections && d->secs[si]->tile == dt->tile)
            si++;
        dt->secs = d->secs + s0;
        dt->n_secs = si - s0;
        assign_owners(&dt->ts, dt->secs, dt->n_secs);
    }
    for (size_t i = 0; i < e->n_tiles; i++)
        for (size_t lo = 0, hi = d->n_tiles; lo < hi;) {
            size_t mid = (lo + hi) / 2;
            if (d->tiles[mid].tile == e->tiles[i].tile) {
                d->tiles[mid].rec = &e->tiles[i];
                break;
            }
            if (d->tiles[mid].tile < e->tiles[i].tile)
                lo = mid + 1;
            else
                hi = mid;
        }
    free(ids);
    return true;
}

/* ---- grouping sections ----------------------------------------------------------------- */

/* h with n bytes at p mixed in, eight at a time. */
static uint64_t hash_bytes(uint64_t h, const uint8_t *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Append to the key being built (at the end of d->keys, from `from`). */
static void key_add(dis *d, const void *p, size_t n)
{
    if (!room_for((void **)&d->keys, &d->keys_cap, d->keys_n + n, 1)) {
        d->oom = true;
        return;
    }
    memcpy(d->keys + d->keys_n, p, n);
    d->keys_n += n;
}

/* A number to the key being built. */
static void key_u32(dis *d, uint32_t v) { key_add(d, &v, sizeof v); }

/* What the text of sec on tile dt depends on, besides its bytes and the
 * names of its branch targets: its name, address, size and flags; the
 * addresses of the tile's symbols inside it (they split the text); the
 * labels it prints. */
static void section_key(dis *d, const dis_tile *dt, const exe_section *sec)
{
    key_add(d, sec->name, strlen(sec->name) + 1);
    key_u32(d, sec->addr);
    key_u32(d, sec->size);
    key_u32(d, sec->flags);
    const tile_syms *ts = &dt->ts;
    uint64_t end = (uint64_t)sec->addr + sec->size;
    for (size_t i = first_at(ts, sec->addr); i < ts->n && ts->by_addr[i]->addr <= end; i++) {
        const exe_symbol *s = ts->by_addr[i];
        key_u32(d, s->addr);
        if (ts->owner[i] != sec) {
            key_add(d, "", 1);
            continue;
        }
        bool shown = quotable_name(s->name);
        uint8_t flags = (uint8_t)(1 | (shown ? 2 : 0) | (s->global ? 4 : 0) | (ts->dup[i] ? 8 : 0));
        key_add(d, &flags, 1);
        if (shown) {
            key_u32(d, s->size);
            key_add(d, &s->kind, 1);
            key_add(d, s->name, strlen(s->name) + 1);
        }
    }
}

/* Tile's section into group g. */
static bool add_member(dis *d, group *g, size_t tile, const exe_section *sec)
{
    if (!room_for((void **)&g->m, &g->cap, g->n + 1, sizeof *g->m)) {
        d->oom = true;
        return false;
    }
    g->m[g->n++] = (member){ tile, sec };
    return true;
}

/* The key at key_off and section sec's bytes are those of group g. */
static bool same_group(const dis *d, const group *g, size_t key_off, size_t key_len, const exe_section *sec)
{
    const exe_section *r = g->m[0].sec;
    if (g->key_len != key_len || memcmp(d->keys + g->key_off, d->keys + key_off, key_len))
        return false;
    return r->bytes == sec->bytes || !r->bytes || !sec->bytes || !memcmp(r->bytes, sec->bytes, sec->size);
}

/* The group table twice as large. */
static bool rehash_groups(dis *d)
{
    size_t cap = d->cap_slots ? 2 * d->cap_slots : 1024;
    size_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < d->n_groups; i++) {
        size_t j = d->groups[i].hash & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = i + 1;
    }
    free(d->slots);
    d->slots = slots;
    d->cap_slots = cap;
    return true;
}

/* Put section sec of tile t into the group of its text, a new one if it
 * is the first. */
static void group_section(dis *d, size_t t, const exe_section *sec)
{
    size_t key_off = d->keys_n;
    section_key(d, &d->tiles[t], sec);
    if (d->oom)
        return;
    size_t key_len = d->keys_n - key_off;
    uint64_t h = hash_bytes(1469598103934665603ull, d->keys + key_off, key_len);
    if (sec->bytes && !(sec->flags & EXE_SEC_NOBITS))
        h = hash_bytes(h, sec->bytes, sec->size);
    if (2 * (d->n_groups + 1) > d->cap_slots && !rehash_groups(d)) {
        d->oom = true;
        return;
    }
    size_t j = h & (d->cap_slots - 1);
    for (; d->slots[j]; j = (j + 1) & (d->cap_slots - 1)) {
        group *g = &d->groups[d->slots[j] - 1];
        /* a group holds one section a tile: a second one alike on the same
         * tile (two empty sections at one address) starts its own */
        if (g->hash == h && g->m[g->n - 1].tile != t && same_group(d, g, key_off, key_len, sec)) {
            d->keys_n = key_off;   /* the group has the key already */
            add_member(d, g, t, sec);
            return;
        }
    }
    if (!room_for((void **)&d->groups, &d->cap_groups, d->n_groups + 1, sizeof *d->groups)) {
        d->oom = true;
        return;
    }
    group *g = &d->groups[d->n_groups];
    *g = (group){ h, key_off, key_len, NULL, 0, 0, 0 };
    if (add_member(d, g, t, sec))
        d->slots[j] = ++d->n_groups;
}

/* The names the first member's code prints for its branch targets, looked
 * up on another member's tile: the same for each address. */
static bool same_targets(const dis *d, const lookup *first, size_t tile)
{
    const tile_syms *ts = &d->tiles[tile].ts;
    for (size_t i = 0; i < first->n; i++) {
        const char *a = name_at(first->ts, first->addrs[i]), *b = name_at(ts, first->addrs[i]);
        if (a != b && (!a || !b || strcmp(a, b)))
            return false;
    }
    return true;
}

/* A group of code sections whose branches print other names on some of
 * its tiles is split: those tiles go to a new group, looked at in turn. */
static void split_by_targets(dis *d, size_t gi)
{
    group *g = &d->groups[gi];
    const exe_section *sec = g->m[0].sec;
    if (g->n < 2 || !(sec->flags & EXE_SEC_EXEC) || (sec->flags & EXE_SEC_NOBITS) || !sec->bytes)
        return;
    lookup lk = { &d->tiles[g->m[0].tile].ts, true, NULL, 0, 0 };
    print_contents(NULL, sec, &lk);
    bool known = lk.record;   /* false: out of memory while recording */
    size_t keep = 1, rest = 0, n = g->n;
    member *others = malloc(n * sizeof *others);
    if (!others) {
        free(lk.addrs);
        d->oom = true;
        return;
    }
    for (size_t i = 1; i < g->n; i++) {
        if (known && same_targets(d, &lk, g->m[i].tile))
            g->m[keep++] = g->m[i];
        else
            others[rest++] = g->m[i];
    }
    free(lk.addrs);
    g->n = keep;
    if (rest && room_for((void **)&d->groups, &d->cap_groups, d->n_groups + 1, sizeof *d->groups)) {
        g = &d->groups[gi];
        d->groups[d->n_groups++] = (group){ g->hash, g->key_off, g->key_len, others, rest, n, 0 };
        return;
    }
    if (rest)
        d->oom = true;
    free(others);
}

/* Every section of every tile into the group of its text. */
static bool group_sections(dis *d)
{
    for (size_t t = 0; t < d->n_tiles && !d->oom; t++)
        for (size_t k = 0; k < d->tiles[t].n_secs && !d->oom; k++)
            group_section(d, t, d->tiles[t].secs[k]);
    for (size_t gi = 0; gi < d->n_groups && !d->oom; gi++)
        split_by_targets(d, gi);
    return !d->oom;
}

/* ---- tile lists ------------------------------------------------------------------------- */

/* The hash of a set of tiles. */
static uint64_t set_hash(const size_t *t, size_t n)
{
    return hash_bytes(1469598103934665603ull ^ n, (const uint8_t *)t, n * sizeof *t);
}

/* The set table twice as large. */
static bool rehash_sets(dis *d)
{
    size_t cap = d->cap_set_slots ? 2 * d->cap_set_slots : 1024;
    size_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < d->n_sets; i++) {
        size_t j = d->sets[i].hash & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = i + 1;
    }
    free(d->set_slots);
    d->set_slots = slots;
    d->cap_set_slots = cap;
    return true;
}

/* The set of tiles t[0..n) (indexes into d->tiles, ascending), once;
 * SIZE_MAX when out of memory. */
static size_t intern_set(dis *d, const size_t *t, size_t n)
{
    uint64_t h = set_hash(t, n);
    if (2 * (d->n_sets + 1) > d->cap_set_slots && !rehash_sets(d))
        return SIZE_MAX;
    size_t j = h & (d->cap_set_slots - 1);
    for (; d->set_slots[j]; j = (j + 1) & (d->cap_set_slots - 1)) {
        const tile_set *s = &d->sets[d->set_slots[j] - 1];
        if (s->hash == h && s->n == n && !memcmp(s->t, t, n * sizeof *t))
            return d->set_slots[j] - 1;
    }
    size_t *copy = malloc((n ? n : 1) * sizeof *copy);
    if (!copy || !room_for((void **)&d->sets, &d->cap_sets, d->n_sets + 1, sizeof *d->sets)) {
        free(copy);
        return SIZE_MAX;
    }
    memcpy(copy, t, n * sizeof *t);
    d->sets[d->n_sets] = (tile_set){ copy, n, h, 0 };
    d->set_slots[j] = d->n_sets + 1;
    return d->n_sets++;
}

/* Sets in the order the text shows them: by their first tile; of sets
 * with one first tile the largest first (the code every tile shares
 * before one tile's own data); then by their tiles. */
static int cmp_set(const void *x, const void *y)
{
    const tile_set *a = *(const tile_set *const *)x, *b = *(const tile_set *const *)y;
    if (a->t[0] != b->t[0])
        return a->t[0] < b->t[0] ? -1 : 1;
    if (a->n != b->n)
        return a->n > b->n ? -1 : 1;
    for (size_t i = 0; i < a->n; i++)
        if (a->t[i] != b->t[i])
            return a->t[i] < b->t[i] ? -1 : 1;
    return 0;
}

/* Each set's rank in that order. */
static bool rank_sets(dis *d)
{
    tile_set **order = malloc((d->n_sets ? d->n_sets : 1) * sizeof *order);
    if (!order)
        return false;
    for (size_t i = 0; i < d->n_sets; i++)
        order[i] = &d->sets[i];
    qsort(order, d->n_sets, sizeof *order, cmp_set);
    for (size_t i = 0; i < d->n_sets; i++)
        order[i]->rank = i;
    free(order);
    return true;
}

/* `.tile 0-1471` or `.tile 0, 4-7, 9`. */
static void print_tile_list(FILE *out, const dis *d, const tile_set *s)
{
    fputs("\n.tile ", out);
    for (size_t i = 0; i < s->n;) {
        size_t j = i;
        while (j + 1 < s->n && d->tiles[s->t[j + 1]].tile == d->tiles[s->t[j]].tile + 1)
            j++;
        if (j > i)
            fprintf(out, "%s%u-%u", i ? ", " : "", d->tiles[s->t[i]].tile, d->tiles[s->t[j]].tile);
        else
            fprintf(out, "%s%u", i ? ", " : "", d->tiles[s->t[i]].tile);
        i = j + 1;
    }
    fputc('\n', out);
}

/* ---- what is printed, in order ------------------------------------------------------- */

enum { ITEM_SECTION, ITEM_COMMENTS, ITEM_ENTRY };

/* A section group, the comments on one tile's stray symbols, or the entry
 * that a set of tiles share; printed after the `.tile` list of its set. */
typedef struct item {
    size_t set;
    size_t rank;                  /* of the set, once the sets are ranked */
    int kind;
    uint32_t addr;                /* section address; entry address */
    const exe_section *sec;       /* ITEM_SECTION: the one printed */
    size_t tile;                  /* the tile whose symbols print it */
    const char *name;             /* ITEM_ENTRY: the entry's name, or NULL for its address */
} item;

/* Items by the rank of their set; in a set sections by address, then
 * stray symbols, then the entry. */
static int cmp_item(const void *x, const void *y)
{
    const item *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind - b->kind;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return a->sec < b->sec ? -1 : a->sec > b->sec;
}

typedef struct item_list { item *v; size_t n, cap; } item_list;

/* Append it to l; false when out of memory. */
static bool add_item(item_list *l, item it)
{
    if (!room_for((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
        return false;
    l->v[l->n++] = it;
    return true;
}

/* A tile's entry as `.entry` prints it: a name, or else the address. */
typedef struct entry_text { size_t tile; const char *name; uint32_t addr; } entry_text;

/* Entries by what `.entry` prints: names first, by name; then addresses. */
static int cmp_entry_text(const entry_text *a, const entry_text *b)
{
    if (!a->name != !b->name)
        return a->name ? -1 : 1;
    if (a->name)
        return strcmp(a->name, b->name);
    return (a->addr > b->addr) - (a->addr < b->addr);
}

/* Entries by their text, then tile. */
static int cmp_entry(const void *x, const void *y)
{
    const entry_text *a = x, *b = y;
    int c = cmp_entry_text(a, b);
    if (c)
        return c;
    return a->tile < b->tile ? -1 : a->tile > b->tile;
}

/* One item per entry text, for the set of tiles it is the entry of. */
static bool entry_items(dis *d, item_list *items)
{
    entry_text *v = malloc((d->n_tiles ? d->n_tiles : 1) * sizeof *v);
    size_t *t = malloc((d->n_tiles ? d->n_tiles : 1) * sizeof *t), n = 0;
    bool ok = v && t;
    for (size_t i = 0; i < d->n_tiles && ok; i++)
        if (d->tiles[i].rec) {
            uint32_t addr = d->tiles[i].rec->supervisor_entry;
            v[n++] = (entry_text){ i, name_at(&d->tiles[i].ts, addr), addr };
        }
    if (ok)
        qsort(v, n, sizeof *v, cmp_entry);
    for (size_t i = 0; i < n && ok;) {
        size_t j = i;
        for (; j < n && !cmp_entry_text(&v[i], &v[j]); j++)
            t[j - i] = v[j].tile;
        size_t set = intern_set(d, t, j - i);
        ok = set != SIZE_MAX && add_item(items, (item){ set, 0, ITEM_ENTRY, v[i].addr, NULL, v[i].tile, v[i].name });
        i = j;
    }
    free(v);
    free(t);
    return ok;
}

/* Everything printed after the header: section groups, stray symbols,
 * entries, each with the set of tiles it is for. */
static bool collect_items(dis *d, item_list *items)
{
    size_t *t = malloc((d->n_tiles ? d->n_tiles : 1) * sizeof *t);
    if (!t)
        return false;
    bool ok = true;
    for (size_t gi = 0; gi < d->n_groups && ok; gi++) {
        const group *g = &d->groups[gi];
        for (size_t i = 0; i < g->n; i++)
            t[i] = g->m[i].tile;
        size_t set = intern_set(d, t, g->n);
        ok = set != SIZE_MAX &&
             add_item(items, (item){ set, 0, ITEM_SECTION, g->m[0].sec->addr, g->m[0].sec, g->m[0].tile, NULL });
    }
    for (size_t i = 0; i < d->n_tiles && ok; i++) {
        const tile_syms *ts = &d->tiles[i].ts;
        bool stray = false;
        for (size_t k = 0; k < ts->n; k++)
            stray |= !ts->owner[k];
        if (!stray)
            continue;
        size_t set = intern_set(d, &i, 1);
        ok = set != SIZE_MAX && add_item(items, (item){ set, 0, ITEM_COMMENTS, 0, NULL, i, NULL });
    }
    free(t);
    if (!ok || !entry_items(d, items) || !rank_sets(d))
        return false;
    for (size_t i = 0; i < items->n; i++)
        items->v[i].rank = d->sets[items->v[i].set].rank;
    return true;
}

/* A section, the comments on stray symbols, or `.entry`. */
static void print_item(FILE *out, const dis *d, const item *it)
{
    const dis_tile *dt = &d->tiles[it->tile];
    if (it->kind == ITEM_SECTION)
        print_section(out, it->sec, &dt->ts);
    else if (it->kind == ITEM_COMMENTS) {
        for (size_t i = 0; i < dt->ts.n; i++)
            if (!dt->ts.owner[i])
                fprintf(out, "// symbol %s at 0x%x lies outside every section of tile %u\n",
                        quotable_name(dt->ts.by_addr[i]->name) ? dt->ts.by_addr[i]->name : "?",
                        dt->ts.by_addr[i]->addr, dt->tile);
    } else if (it->name)
        fprintf(out, "\n.entry %s\n", it->name);
    else
        fprintf(out, "\n.entry 0x%x\n", it->addr);
}

/* A text section of the executable, a comment line each, unprintable
 * bytes shown as '?'. */
static void text_lines(FILE *out, const char *section, const exe_blob *b)
{
    for (size_t at = 0; at < b->size;) {
        const uint8_t *line = b->bytes + at;
        const uint8_t *nl = memchr(line, '\n', b->size - at);
        size_t len = nl ? (size_t)(nl - line) : b->size - at;
        fprintf(out, "// %s: ", section);
        for (size_t q = 0; q < len; q++)
            fputc(isprint(line[q]) ? line[q] : '?', out);
        fputc('\n', out);
        at += len + 1;
    }
}

/* The comments that open the text: counts, what is not assembly, the
 * machine. */
static void print_header(FILE *out, const dis *d)
{
    const ipu_exe *e = d->e;
    fprintf(out, "// ipusim disassembly: %zu section%s, %zu symbol%s\n", e->n_sections,
            e->n_sections == 1 ? "" : "s", d->n_syms, d->n_syms == 1 ? "" : "s");
    if (d->n_groups < e->n_sections)
        fprintf(out, "// each section is shown once, under the '.tile' list of the tiles it is the same on: "
                "%zu shown for %zu tiles\n", d->n_groups, d->n_tiles);
    if (e->bsp.size)
        fprintf(out, "// .ipusim.bsp: %zu bytes of BSP control program, not shown\n", e->bsp.size);
    if (e->tensors.size)
        fprintf(out, "// .ipusim.tensors: %zu bytes of tensor map, not shown\n", e->tensors.size);
    /* The machine it was compiled for (preset=NAME, param=value) and the
     * model (model=NAME, model_macs=N): lines of text. */
    text_lines(out, ".ipusim.machine", &e->machine);
    text_lines(out, ".ipusim.model", &e->model);
}

/* Everything disasm_exe allocated. */
static void dis_free(dis *d)
{
    for (size_t i = 0; i < d->n_groups; i++)
        free(d->groups[i].m);
    for (size_t i = 0; i < d->n_sets; i++)
        free((void *)d->sets[i].t);
    free(d->tiles);
    free(d->syms);
    free(d->every);
    free(d->dup);
    free(d->owner);
    free(d->secs);
    free(d->keys);
    free(d->groups);
    free(d->slots);
    free(d->sets);
    free(d->set_slots);
}

bool disasm_exe(const ipu_exe *e, FILE *out, char *err, size_t n)
{
    isa_init();
    dis d = { .e = e };
    item_list items = { NULL, 0, 0 };
    bool ok = find_tiles(&d) && group_sections(&d) && collect_items(&d, &items);
    if (!ok) {
        free(items.v);
        dis_free(&d);
        if (err && n) snprintf(err, n, "out of memory");
        return false;
    }
    if (items.n)
        qsort(items.v, items.n, sizeof *items.v, cmp_item);
    print_header(out, &d);
    for (size_t i = 0; i < items.n; i++) {
        if (i == 0 || items.v[i].set != items.v[i - 1].set)
            print_tile_list(out, &d, &d.sets[items.v[i].set]);
        print_item(out, &d, &items.v[i]);
    }
    free(items.v);
    dis_free(&d);
    if (fflush(out) != 0 || ferror(out)) {
        if (err && n) snprintf(err, n, "error writing the disassembly");
        return false;
    }
    return true;
}
