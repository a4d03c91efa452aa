/*
 * exe_replicas.c — a replicated program's replicas (executable.h,
 * exe_replicas): the relocations, the .ipusim.replicas record, and the
 * replicas made from replica 0.
 *
 * .ipusim.replicas, little-endian:
 *   u32 EXE_REPLICAS_FORMAT, u32 count, u32 tile_stride, u32
 *   input_streams, u32 output_streams, u32 tiles (with relocations), then
 *   for each such tile in increasing order: u32 tile, u32 relocations, and
 *   each relocation in increasing (address, kind) order as one unsigned
 *   LEB128 number, (address - the previous one's, or 0) / 4 << 3 | kind,
 *   followed for RING and SLICE by the shift and for SLICE by slice_bytes
 *   (LEB128 each).
 * A control program's endpoints are a few words apart, so a relocation
 * takes a byte or two.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exe_internal.h"
#include "exe_store.h"
#include "isa/exchange_port.h"

bool exe_add_reloc(ipu_exe *e, uint32_t tile, uint32_t addr, enum exe_reloc_kind kind)
{
    exe_replicas *x = &e->replicas;
    if (!exe_reserve_one((void **)&x->relocs, x->n_relocs, sizeof *x->relocs))
        return false;
    x->relocs[x->n_relocs++] = (exe_reloc){.tile = tile, .addr = addr, .kind = (uint8_t)kind};
    return true;
}

bool exe_add_reloc_rotated(ipu_exe *e, uint32_t tile, uint32_t addr, enum exe_reloc_kind kind, uint32_t shift,
                           uint32_t slice_bytes)
{
    if (!exe_add_reloc(e, tile, addr, kind))
        return false;
    exe_reloc *q = &e->replicas.relocs[e->replicas.n_relocs - 1];
    q->shift = (uint16_t)(shift > 0xffff ? 0xffff : shift);
    q->slice_bytes = slice_bytes;
    return true;
}

static int cmp_reloc(const void *a, const void *b)
{
    const exe_reloc *x = a, *y = b;
    if (x->tile != y->tile)
        return x->tile < y->tile ? -1 : 1;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

/* The word w of replica r. */
static uint32_t relocate(const exe_replicas *x, uint32_t w, const exe_reloc *q, uint32_t r)
{
    uint8_t kind = q->kind;
    switch (kind) {
    case EXE_RELOC_TILE: return w + r * x->tile_stride;
    case EXE_RELOC_TILE_HIGH: return w + ((r * x->tile_stride) << 16);
    case EXE_RELOC_HOST_IN: return XCH_HOST | ((w & XCH_ENDPOINT_INDEX) + r * x->input_streams);
    case EXE_RELOC_HOST_OUT: return XCH_HOST | ((w & XCH_ENDPOINT_INDEX) + r * x->output_streams);
    default: break;
    }
    /* RING and SLICE: from replica 0's neighbour (slice) shift to r's */
    uint32_t to = (r + q->shift) % x->count, step = kind == EXE_RELOC_RING ? x->tile_stride : q->slice_bytes;
    return w - q->shift * step + to * step;
}

/* Every relocation in a non-empty section with bytes of a tile of replica
 * 0, each once (a word may have two: the endpoints in its two halves), and the tiles of the last replica numbered below
 * EXE_EVERY_TILE; the relocations sorted. */
static bool check(const ipu_exe *e, exe_reloc *relocs, char *err, size_t err_size)
{
    const exe_replicas *x = &e->replicas;
    if (x->count > EXE_REPLICAS_MAX || x->tile_stride == 0 ||
        (uint64_t)x->count * x->tile_stride >= EXE_EVERY_TILE) {
        snprintf(err, err_size, "%u replicas of %u tiles are more tiles than an executable numbers", x->count,
                 x->tile_stride);
        return false;
    }
    if (x->n_relocs > 1)
        qsort(relocs, x->n_relocs, sizeof *relocs, cmp_reloc);
    for (size_t i = 0; i < x->n_relocs; i++) {
        const exe_reloc *q = &relocs[i];
        long s = exe_find_section(e, q->tile, q->addr, false);
        const exe_section *sec = s >= 0 ? &e->sections[s] : NULL;
        const char *why = q->tile >= x->tile_stride ? "is not on a tile of replica 0"
                        : q->kind >= EXE_RELOC_KINDS ? "has an unknown kind"
                        : q->kind >= EXE_RELOC_RING && q->shift >= x->count ? "shifts by more replicas than there are"
                        : q->kind == EXE_RELOC_RING && q->tile + (uint64_t)q->shift * x->tile_stride > UINT32_MAX
                            ? "names a tile beyond the replicas"
                        : q->addr & 3 ? "is not at a word"
                        : !sec || !sec->bytes || (uint64_t)q->addr + 4 > (uint64_t)sec->addr + sec->size
                            ? "is not in a section with bytes"
                        : i && !cmp_reloc(q, &relocs[i - 1]) ? "is given twice" : NULL;
        if (why) {
            snprintf(err, err_size, "replica relocation of tile %u, address 0x%x, %s", q->tile, q->addr, why);
            return false;
        }
    }
    return true;
}

bool exe_expand_replicas(ipu_exe *e, char *err, size_t err_size)
{
    exe_replicas *x = &e->replicas;
    if (x->count < 2 || x->expanded)
        return true;
    if (!check(e, x->relocs, err, err_size))
        return false;
    size_t n_sec = e->n_sections, n_sym = e->n_symbols, n_lines = e->n_lines, n_tiles = e->n_tiles;
    uint8_t *patched = NULL;
    bool ok = true;
    for (uint32_t r = 1; r < x->count && ok; r++) {
        uint32_t shift = r * x->tile_stride;
        size_t q = 0;             /* the next relocation */
        for (size_t i = 0; i < n_sec && ok; i++) {
            const exe_section s = e->sections[i];
            if (s.tile >= x->tile_stride)
                continue;
            while (q < x->n_relocs && cmp_reloc(&x->relocs[q], &(exe_reloc){.tile = s.tile, .addr = s.addr}) < 0)
                q++;
            const uint8_t *bytes = s.bytes;
            size_t q_end = q;
            while (q_end < x->n_relocs && x->relocs[q_end].tile == s.tile &&
                   x->relocs[q_end].addr < (uint64_t)s.addr + s.size)
                q_end++;
            if (q_end > q) {
                /* this replica's words, in a copy */
                free(patched);
                if (!(patched = malloc(s.size))) {
                    ok = false;
                    snprintf(err, err_size, "out of host memory");
                    break;
                }
                memcpy(patched, s.bytes, s.size);
                for (size_t k = q; k < q_end; k++) {
                    uint32_t w;
                    memcpy(&w, patched + (x->relocs[k].addr - s.addr), 4);
                    w = relocate(x, w, &x->relocs[k], r);
                    memcpy(patched + (x->relocs[k].addr - s.addr), &w, 4);
                }
                bytes = exe_store_intern(e->store, patched, s.size);
                ok = bytes != NULL;
            }
            ok = ok && exe_add_section_stored(e, s.tile + shift, s.name, s.addr, bytes, s.size, s.flags);
            if (!ok)
                snprintf(err, err_size, "out of host memory");
        }
        for (size_t i = 0; i < n_tiles && ok; i++)
            if (e->tiles[i].tile < x->tile_stride &&
                !(ok = exe_append_entry(e, e->tiles[i].tile + shift, e->tiles[i].supervisor_entry)))
                snprintf(err, err_size, "out of host memory");
        for (size_t i = 0; i < n_sym && ok; i++) {
            const exe_symbol y = e->symbols[i];
            if (y.tile < x->tile_stride &&
                !(ok = exe_add_symbol(e, y.tile + shift, y.name, y.addr, y.size, (enum exe_symbol_kind)y.kind, y.global)))
                snprintf(err, err_size, "out of host memory");
        }
        for (size_t i = 0; i < n_lines && ok; i++) {
            const exe_line l = e->lines[i];
            if (l.tile < x->tile_stride && !(ok = exe_add_line(e, l.tile + shift, l.addr, l.file, l.line)))
                snprintf(err, err_size, "out of host memory");
        }
    }
    free(patched);
    x->expanded = ok;
    return ok;
}

/* ---------------------------------------------------------------- the record */

/* Room for k more bytes at *n. */
static bool room(uint8_t **p, size_t n, size_t *cap, size_t k)
{
    if (n + k <= *cap)
        return true;
    size_t c = *cap ? 2 * *cap : 4096;
    uint8_t *q = realloc(*p, c);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static bool put_u32(uint8_t **p, size_t *n, size_t *cap, uint32_t v)
{
    if (!room(p, *n, cap, 4))
        return false;
    exe_put32(*p + *n, v);
    *n += 4;
    return true;
}

static bool put_leb(uint8_t **p, size_t *n, size_t *cap, uint64_t v)
{
    if (!room(p, *n, cap, 10))
        return false;
    do {
        uint8_t b = (uint8_t)(v & 0x7f);
        v >>= 7;
        (*p)[(*n)++] = (uint8_t)(b | (v ? 0x80 : 0));
    } while (v);
    return true;
}

bool exe_replicas_encode(const ipu_exe *e, uint8_t **out, size_t *size, char *err, size_t err_size)
{
    exe_replicas sorted = e->replicas, *x = &sorted;
    *out = NULL;
    *size = 0;
    if (x->count < 2)
        return true;
    if (!(x->relocs = malloc((x->n_relocs ? x->n_relocs : 1) * sizeof *x->relocs))) {
        snprintf(err, err_size, "out of host memory");
        return false;
    }
    if (x->n_relocs)
        memcpy(x->relocs, e->replicas.relocs, x->n_relocs * sizeof *x->relocs);
    if (!check(e, x->relocs, err, err_size)) {
        free(x->relocs);
        return false;
    }
    uint8_t *p = NULL;
    size_t n = 0, cap = 0;
    uint32_t tiles = 0;
    for (size_t i = 0; i < x->n_relocs; i++)
        tiles += !i || x->relocs[i].tile != x->relocs[i - 1].tile;
    bool ok = put_u32(&p, &n, &cap, EXE_REPLICAS_FORMAT) && put_u32(&p, &n, &cap, x->count) &&
              put_u32(&p, &n, &cap, x->tile_stride) &&
              put_u32(&p, &n, &cap, x->input_streams) && put_u32(&p, &n, &cap, x->output_streams) &&
              put_u32(&p, &n, &cap, tiles);
    for (size_t i = 0; i < x->n_relocs && ok;) {
        size_t j = i;
        while (j < x->n_relocs && x->relocs[j].tile == x->relocs[i].tile)
            j++;
        ok = put_u32(&p, &n, &cap, x->relocs[i].tile) && put_u32(&p, &n, &cap, (uint32_t)(j - i));
        for (uint32_t prev = 0; i < j && ok; prev = x->relocs[i++].addr) {
            const exe_reloc *q = &x->relocs[i];
            ok = put_leb(&p, &n, &cap, (uint64_t)(q->addr - prev) / 4 << 3 | q->kind);
            if (ok && q->kind >= EXE_RELOC_RING)
                ok = put_leb(&p, &n, &cap, q->shift);
            if (ok && q->kind == EXE_RELOC_SLICE)
                ok = put_leb(&p, &n, &cap, q->slice_bytes);
        }
    }
    free(x->relocs);
    if (!ok) {
        free(p);
        snprintf(err, err_size, "out of host memory");
        return false;
    }
    *out = p;
    *size = n;
    return true;
}

static bool get_u32(const uint8_t *p, size_t n, size_t *at, uint32_t *v)
{
    if (n - *at < 4)
        return false;
    *v = exe_get32(p + *at);
    *at += 4;
    return true;
}

static bool get_leb(const uint8_t *p, size_t n, size_t *at, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; *at < n && shift < 64; shift += 7) {
        uint8_t b = p[(*at)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

bool exe_replicas_decode(ipu_exe *e, const uint8_t *p, size_t n, char *err, size_t err_size)
{
    exe_replicas *x = &e->replicas;
    size_t at = 0;
    uint32_t tiles, format;
    if (!get_u32(p, n, &at, &format) || format != EXE_REPLICAS_FORMAT) {
        snprintf(err, err_size, "%s: not of this version's layout (compile the program again)", SEC_REPLICAS);
        return false;
    }
    if (!get_u32(p, n, &at, &x->count) || !get_u32(p, n, &at, &x->tile_stride) ||
        !get_u32(p, n, &at, &x->input_streams) || !get_u32(p, n, &at, &x->output_streams) ||
        !get_u32(p, n, &at, &tiles)) {
        snprintf(err, err_size, "%s: truncated header", SEC_REPLICAS);
        return false;
    }
    if (x->count < 2) {
        snprintf(err, err_size, "%s: %u replicas (a replicated program has 2 or more)", SEC_REPLICAS, x->count);
        return false;
    }
    for (uint32_t t = 0; t < tiles; t++) {
        uint32_t tile, count;
        if (!get_u32(p, n, &at, &tile) || !get_u32(p, n, &at, &count) || count > n - at) {
            snprintf(err, err_size, "%s: truncated at byte %zu", SEC_REPLICAS, at);
            return false;
        }
        uint64_t addr = 0;
        for (uint32_t k = 0; k < count; k++) {
            uint64_t v;
            uint64_t shift = 0, slice = 0;
            uint8_t kind = 0;
            if (!get_leb(p, n, &at, &v) || (addr += (v >> 3) * 4) > UINT32_MAX ||
                (kind = (uint8_t)(v & 7)) >= EXE_RELOC_KINDS ||
                (kind >= EXE_RELOC_RING && (!get_leb(p, n, &at, &shift) || shift >= x->count)) ||
                (kind == EXE_RELOC_SLICE && (!get_leb(p, n, &at, &slice) || slice > UINT32_MAX))) {
                snprintf(err, err_size, "%s: bad relocation %u of tile %u", SEC_REPLICAS, k, tile);
                return false;
            }
            if (!exe_add_reloc_rotated(e, tile, (uint32_t)addr, (enum exe_reloc_kind)kind, (uint32_t)shift,
                                       (uint32_t)slice)) {
                snprintf(err, err_size, "out of host memory");
                return false;
            }
        }
    }
    if (at != n) {
        snprintf(err, err_size, "%s: %zu bytes after the last relocation", SEC_REPLICAS, n - at);
        return false;
    }
    return true;
}
