/*
 * asm_output.c — what follows the first pass: sections without an address
 * placed in tile memory, pass 2 (every expression evaluated with all
 * addresses known, section bytes filled, line records), the checks that
 * need addresses (rpt bodies), symbol attributes, entry points, and the
 * executable built from it all.
 */
#include "asm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- layout ------------------------------------------------------------------------- */

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* A section on one tile: the tile's own, or one of a `.tile` list's. */
typedef struct tile_sec { uint32_t tile, sec; } tile_sec;

/* By tile, then section (the order they were opened). */
static int cmp_tile_sec(const void *x, const void *y)
{
    const tile_sec *a = x, *b = y;
    if (a->tile != b->tile)
        return a->tile < b->tile ? -1 : 1;
    return a->sec < b->sec ? -1 : a->sec > b->sec;
}

/* The sections of one tile being placed: list[k] sits at base[k]; used
 * holds the k placed so far. */
typedef struct tile_layout {
    uint32_t tile;
    const tile_sec *list;
    size_t n;
    uint32_t *base;
    uint32_t *used;
    size_t n_used;
} tile_layout;

/* The first address in [lo, hi) aligned to `align` where `size` bytes do
 * not overlap any of the sections placed on the tile. */
static bool first_fit(const asm_ctx *a, const tile_layout *t, uint32_t lo, uint32_t hi, uint32_t size,
                      uint32_t align, uint32_t *out)
{
    uint64_t cand = ((uint64_t)lo + align - 1) & ~(uint64_t)(align - 1);
    for (;;) {
        bool moved = false;
        for (size_t i = 0; i < t->n_used; i++) {
            const asm_section *s = &a->sections[t->list[t->used[i]].sec];
            uint64_t b = t->base[t->used[i]], e = b + s->size;
            if (s->size && size && cand < e && b < cand + size) {
                cand = (e + align - 1) & ~(uint64_t)(align - 1);
                moved = true;
            }
        }
        if (!moved)
            break;
    }
    if (cand + size > hi)
        return false;
    *out = (uint32_t)cand;
    return true;
}

/* Sections with an address: in memory, code in region 0, no overlap.  A
 * section of a list is reported once, not once per tile. */
static void layout_explicit(asm_ctx *a, tile_layout *t)
{
    for (size_t k = 0; k < t->n; k++) {
        asm_section *s = &a->sections[t->list[k].sec];
        if (!s->placed_explicitly)
            continue;
        t->base[k] = s->base;
        uint64_t end = (uint64_t)s->base + s->size;
        uint32_t limit = (s->flags & EXE_SEC_EXEC) ? ISA_REGION1_BASE : ISA_MEMORY_END;
        if (end > limit) {
            if (!s->layout_reported)
                asm_error(a, s->place_loc, "section %s (0x%x..0x%llx, %u bytes) on tile %u runs past 0x%x, the end "
                          "of %s", s->name, s->base, (unsigned long long)end - 1, s->size, t->tile, limit,
                          (s->flags & EXE_SEC_EXEC) ? "region 0 (code must be in region 0)" : "tile memory");
            s->layout_reported = true;
            continue;
        }
        for (size_t j = 0; j < t->n_used; j++) {
            asm_section *o = &a->sections[t->list[t->used[j]].sec];
            if (s->size && o->size && s->base < (uint64_t)o->base + o->size && o->base < end) {
                if (!s->layout_reported)
                    asm_error(a, s->place_loc, "section %s (0x%x..0x%llx) overlaps section %s (0x%x..0x%x) on tile "
                              "%u", s->name, s->base, (unsigned long long)end - 1, o->name, o->base,
                              o->base + o->size - 1, t->tile);
                s->layout_reported = true;
                break;
            }
        }
        t->used[t->n_used++] = (uint32_t)k;
    }
}

/* The others: code, then initialised data, then NOBITS.  A section of a
 * list is placed where the first of its tiles puts it; every other tile of
 * the list must put it at the same address. */
static void layout_free(asm_ctx *a, tile_layout *t)
{
    for (int cls = 0; cls < 3; cls++) {
        for (size_t k = 0; k < t->n; k++) {
            asm_section *s = &a->sections[t->list[k].sec];
            int c = (s->flags & EXE_SEC_EXEC) ? 0 : (s->flags & EXE_SEC_NOBITS) ? 2 : 1;
            if (s->placed_explicitly || c != cls)
                continue;
            uint32_t align = s->align > 8 ? s->align : 8;
            uint32_t base, r0 = a->opt.memory_base ? a->opt.memory_base : ISA_REGION0_BASE;
            bool ok = cls == 0 ? first_fit(a, t, r0, ISA_REGION1_BASE, s->size, align, &base)
                               : (first_fit(a, t, ISA_REGION1_BASE, ISA_MEMORY_END, s->size, align, &base) ||
                                  first_fit(a, t, r0, ISA_REGION1_BASE, s->size, align, &base));
            if (!ok) {
                if (!s->layout_reported)
                    asm_error(a, s->loc, "section %s (%u bytes) does not fit in the free %s of tile %u", s->name,
                              s->size, cls == 0 ? "region 0" : "memory", t->tile);
                s->layout_reported = true;
                continue;
            }
            if (s->placed && s->base != base && !s->layout_reported) {
                asm_error(a, s->loc, "section %s is placed at 0x%x on tile %u but would be at 0x%x on tile %u of "
                          "its '.tile' list: give it an address (.section NAME, \"flags\", ADDR), the same on "
                          "every tile of the list", s->name, s->base, s->tile, base, t->tile);
                s->layout_reported = true;
            }
            if (!s->placed) {
                s->base = base;
                s->placed = true;
            }
            t->base[k] = base;
            t->used[t->n_used++] = (uint32_t)k;
        }
    }
}

/* Place every section, tile by tile (a section of a list on each of its
 * tiles). */
static void layout(asm_ctx *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n_sections; i++)
        n += asm_set(a, a->sections[i].set)->n;
    tile_sec *list = asm_xrealloc(NULL, (n ? n : 1) * sizeof *list);
    uint32_t *base = asm_xrealloc(NULL, (n ? n : 1) * sizeof *base);
    uint32_t *used = asm_xrealloc(NULL, (n ? n : 1) * sizeof *used);
    size_t k = 0;
    for (size_t i = 0; i < a->n_sections; i++) {
        const asm_tileset *set = asm_set(a, a->sections[i].set);
        for (uint32_t j = 0; j < set->n; j++)
            list[k++] = (tile_sec){ set->tiles[j], (uint32_t)i };
    }
    qsort(list, n, sizeof *list, cmp_tile_sec);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && list[j].tile == list[i].tile)
            j++;
        tile_layout t = { list[i].tile, list + i, j - i, base, used, 0 };
        layout_explicit(a, &t);
        layout_free(a, &t);
        i = j;
    }
    free(list);
    free(base);
    free(used);
}

/* ---- pass 2 ------------------------------------------------------------------------- */

/* A line record of one instruction word, for every tile of set. */
typedef struct line_rec { uint32_t block, set, addr, file, line; } line_rec;

typedef struct line_list { line_rec *v; size_t n, cap; } line_list;

/* A line record of statement st, for every tile of set. */
static void add_line(line_list *l, const asm_stmt *st, uint32_t set, uint32_t addr, asm_loc loc)
{
    ASM_GROW(l->v, l->n, l->cap);
    l->v[l->n++] = (line_rec){ st->block, set, addr, loc.file, loc.line };
}

/* The instruction or bundle of st as it is on tile, into out; false after
 * an error. */
static bool encode_code(asm_ctx *a, const asm_stmt *st, uint32_t tile, uint8_t *out)
{
    uint32_t w0, w1;
    if (!asm_encode_insn(a, st->insn[0], tile, &w0))
        return false;
    if (st->kind == ST_INSN) {
        asm_put_le(out, w0, 4);
        return true;
    }
    if (!asm_encode_insn(a, st->insn[1], tile, &w1))
        return false;
    asm_put_le(out, w0 | ISA_COISSUE_BIT, 4);
    asm_put_le(out + 4, w1, 4);
    return true;
}

/* The values of a data statement as they are on tile, into out; false if
 * any could not be given (each reported). */
static bool encode_data(asm_ctx *a, const asm_stmt *st, uint32_t tile, uint8_t *out)
{
    bool ok = true;
    for (uint32_t k = 0; k < st->n_items; k++) {
        int64_t v;
        asm_loc l = asm_loc_col(st->loc, st->items[k]->col);
        if (!asm_eval_final(a, st->items[k], tile, l, &v)) {
            ok = false;
            continue;
        }
        if (st->width < 8) {
            int64_t lo = -((int64_t)1 << (8 * st->width - 1)), hi = ((int64_t)1 << (8 * st->width)) - 1;
            if (v < lo || v > hi) {
                asm_error(a, l, "value %lld does not fit in %u bits (%lld..%lld)", (long long)v, 8u * st->width,
                          (long long)lo, (long long)hi);
                ok = false;
                continue;
            }
        }
        asm_put_le(out + k * st->width, (uint64_t)v, st->width);
    }
    return ok;
}

/* e has one value on every tile of set: the labels it names are those of
 * sections the whole set shares (consts are evaluated where they were
 * defined). */
static bool expr_tile_free(asm_ctx *a, const asm_expr *e, uint32_t set)
{
    if (!e)
        return true;
    if (e->kind == EX_SYM) {
        const asm_tileset *ts = asm_set(a, set);
        const asm_symbol *s = asm_find_label(a, e->name, ts->tiles[0]);
        if (s)
            return asm_tileset_subset(a, set, a->sections[s->section].set);
        for (uint32_t i = 1; i < ts->n; i++)
            if (asm_find_label(a, e->name, ts->tiles[i]))
                return false;
        return true;
    }
    return expr_tile_free(a, e->a, set) && expr_tile_free(a, e->b, set);
}

/* Every immediate of in has one value on every tile of set. */
static bool insn_tile_free(asm_ctx *a, const asm_insn *in, uint32_t set)
{
    for (unsigned i = 0; i < in->n; i++)
        if (in->opnd[i].cls == OPC_IMM && !expr_tile_free(a, in->opnd[i].expr, set))
            return false;
    return true;
}

/* Every expression of st has one value on every tile of set. */
static bool stmt_tile_free(asm_ctx *a, const asm_stmt *st, uint32_t set)
{
    if (st->kind == ST_INSN || st->kind == ST_BUNDLE)
        return insn_tile_free(a, st->insn[0], set) && (st->kind == ST_INSN || insn_tile_free(a, st->insn[1], set));
    for (uint32_t k = 0; k < st->n_items; k++)
        if (!expr_tile_free(a, st->items[k], set))
            return false;
    return true;
}

/* A statement in a section of a `.tile` list, which gave `out` on the first
 * tile of the list: the same bytes on every other tile, or an error.  Only
 * a statement naming a label that is not the whole list's is evaluated
 * again. */
static void same_on_every_tile(asm_ctx *a, const asm_stmt *st, const asm_section *s, const uint8_t *out)
{
    const asm_tileset *set = asm_set(a, s->set);
    if (set->n < 2 || stmt_tile_free(a, st, s->set))
        return;
    uint8_t *other = asm_xrealloc(NULL, st->size);
    memcpy(other, out, st->size);
    for (uint32_t i = 1; i < set->n; i++) {
        bool code = st->kind == ST_INSN || st->kind == ST_BUNDLE;
        if (!(code ? encode_code(a, st, set->tiles[i], other) : encode_data(a, st, set->tiles[i], other)))
            break;
        if (memcmp(other, out, st->size)) {
            char list[120];
            asm_tileset_text(a, s->set, list, sizeof list);
            asm_error(a, st->loc, "this assembles to other bytes on tile %u than on tile %u (a symbol it names is "
                      "elsewhere there), but section %s has one content on all of tiles %s", set->tiles[i],
                      set->tiles[0], s->name, list);
            break;
        }
    }
    free(other);
}

/* Every statement's bytes, with all addresses known, and its line records. */
static void pass2(asm_ctx *a, line_list *lines)
{
    for (size_t i = 0; i < a->n_sections; i++) {
        asm_section *s = &a->sections[i];
        if (!(s->flags & EXE_SEC_NOBITS) && s->size)
            s->bytes = asm_xrealloc(NULL, s->size), memset(s->bytes, 0, s->size);
    }
    for (size_t i = 0; i < a->n_stmts && !a->stop; i++) {
        asm_stmt *st = &a->stmts[i];
        asm_section *s = &a->sections[st->section];
        uint32_t addr = s->base + st->offset;
        uint8_t *out = s->bytes ? s->bytes + st->offset : NULL;
        if (!out && st->kind != ST_FILL)
            continue;   /* NOBITS: rejected in pass 1 */
        switch (st->kind) {
        case ST_INSN:
        case ST_BUNDLE:
            if (addr & (st->kind == ST_INSN ? 3 : 7)) {
                asm_error(a, st->loc, st->kind == ST_INSN ? "instruction at 0x%x is not 4-byte aligned"
                                                          : "bundle at 0x%x is not 8-byte aligned", addr);
                break;
            }
            if (encode_code(a, st, st->tile, out)) {
                add_line(lines, st, s->set, addr, st->insn[0]->loc);
                if (st->kind == ST_BUNDLE)
                    add_line(lines, st, s->set, addr + 4, st->insn[1]->loc);
                same_on_every_tile(a, st, s, out);
            }
            break;
        case ST_DATA:
            if (encode_data(a, st, st->tile, out))
                same_on_every_tile(a, st, s, out);
            break;
        case ST_RAW:
            memcpy(out, st->raw, st->size);
            break;
        case ST_FILL:
            if (out)
                memset(out, st->fill, st->size);
            break;
        case ST_CODEPAD: {
            uint32_t k = 0;
            for (; k < st->size && ((addr + k) & 3); k++)
                out[k] = 0;
            for (; k + 4 <= st->size; k += 4)
                asm_put_le(out + k, a->nop_word, 4);
            for (; k < st->size; k++)
                out[k] = 0;
            break;
        }
        }
    }
}

/* The statement holding the instruction word at addr of section s. */
static const asm_insn *insn_at(const asm_ctx *a, const asm_section *s, uint32_t addr)
{
    size_t lo = 0, hi = s->n_stmts;
    uint32_t off = addr - s->base;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const asm_stmt *st = &a->stmts[s->stmts[mid]];
        if (off < st->offset)
            hi = mid;
        else if (off >= st->offset + st->size)
            lo = mid + 1;
        else
            return st->kind == ST_BUNDLE && off >= st->offset + 4 ? st->insn[1] : st->insn[0];
    }
    return NULL;
}

/* rpt bodies (exec.h): the (size+1) bundles after the rpt, 8-byte aligned,
 * with no control instructions; found here rather than as a fault at run
 * time. */
static void check_rpt(asm_ctx *a)
{
    for (size_t i = 0; i < a->n_sections; i++) {
        asm_section *s = &a->sections[i];
        if (!s->bytes)
            continue;
        for (size_t k = 0; k < s->n_stmts; k++) {
            const asm_stmt *st = &a->stmts[s->stmts[k]];
            const asm_insn *in = st->insn[0];
            if (in->op != ISA_OP_RPT && in->op != ISA_OP_RPT_M)
                continue;
            isa_insn dec;
            uint32_t w = (uint32_t)s->bytes[st->offset] | (uint32_t)s->bytes[st->offset + 1] << 8 |
                         (uint32_t)s->bytes[st->offset + 2] << 16 | (uint32_t)s->bytes[st->offset + 3] << 24;
            if (!isa_decode(w, &dec) || (dec.op != ISA_OP_RPT && dec.op != ISA_OP_RPT_M))
                continue;   /* not encoded: already reported */
            uint32_t body = s->base + st->offset + st->size;
            uint64_t end = (uint64_t)body + ((uint64_t)dec.operand[1] + 1) * ISA_BUNDLE_BYTES;
            if (body & 7) {
                asm_error(a, in->loc, "'rpt' body at 0x%x is not 8-byte aligned (the rpt must be at an address "
                          "4 past a multiple of 8)", body);
                continue;
            }
            if (end > (uint64_t)s->base + s->size) {
                asm_error(a, in->loc, "'rpt' body (%u bundles from 0x%x) runs past the end of section %s at 0x%x",
                          (unsigned)dec.operand[1] + 1, body, s->name, s->base + s->size);
                continue;
            }
            for (uint32_t addr = body; addr < end; addr += 4) {
                const uint8_t *b = s->bytes + (addr - s->base);
                uint32_t bw = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
                isa_insn bi;
                if (!isa_decode(bw, &bi) || !(isa_get(bi.op)->flags & ISA_F_CTRL))
                    continue;
                const asm_insn *bad = insn_at(a, s, addr);
                asm_error(a, bad ? bad->loc : in->loc, "'rpt' body may not contain control instruction '%s' "
                          "(the rpt is at line %u)", isa_get(bi.op)->mnemonic, in->loc.line);
                break;
            }
        }
    }
}

/* One attribute on one tile; false after an error. */
static bool apply_attr(asm_ctx *a, const asm_symattr *t, uint32_t tile)
{
    asm_symbol *s = asm_find_label(a, t->name, tile);
    if (!s) {
        if (asm_find_const(a, t->name) && t->what != 2)
            return true;   /* an absolute symbol: nothing to export */
        static const char *const dirs[] = {".globl", ".type", ".size"};
        asm_error(a, t->loc, "'%s' names '%s', which is not a label on tile %u", dirs[t->what], t->name, tile);
        return false;
    }
    if (t->what == 0)
        s->global = true;
    else if (t->what == 1)
        s->type = t->type;
    else {
        int64_t v;
        if (!asm_eval_final(a, t->expr, tile, t->loc, &v))
            return false;
        if (v < 0 || v > UINT32_MAX) {
            asm_error(a, t->loc, "size %lld of '%s' out of range", (long long)v, t->name);
            return false;
        }
        s->size = (uint32_t)v;
        s->has_size = true;
    }
    return true;
}

/* .globl, .type and .size, on every tile of the list they were given
 * under (an error once, not once per tile); the sizes .symbol gives. */
static void apply_attrs(asm_ctx *a)
{
    for (size_t i = 0; i < a->n_attrs; i++) {
        const asm_tileset *set = asm_set(a, a->attrs[i].set);
        for (uint32_t k = 0; k < set->n && apply_attr(a, &a->attrs[i], set->tiles[k]); k++)
            ;
    }
    for (size_t i = 0; i < a->n_syms && a->n_errors < ASM_MAX_ERRORS; i++) {
        asm_symbol *s = &a->syms[i];
        int64_t v;
        if (!s->unnamed || !asm_eval_final(a, s->expr, s->tile, s->loc, &v))
            continue;
        if (v < 0 || v > UINT32_MAX)
            asm_error(a, s->loc, "size %lld of '%s' out of range", (long long)v, s->name);
        else
            s->size = (uint32_t)v;
    }
}

/* ---- output ------------------------------------------------------------------------- */

/* The supervisor entry of tile (asm.h: .entry, __supervisor, .text, the
 * first code section); false if it has none or after an error. */
static bool tile_entry(asm_ctx *a, uint32_t tile, uint32_t *entry)
{
    uint32_t k;
    if (asm_map_get(&a->entry_tiles, ".entry", tile, &k)) {
        const asm_entry *en = &a->entries[k];
        int64_t v;
        if (!asm_eval_final(a, en->expr, tile, en->loc, &v))
            return false;
        if (v < ISA_REGION0_BASE || v >= ISA_REGION1_BASE || (v & 3)) {
            asm_error(a, en->loc, "entry 0x%llx is not a 4-byte aligned address in region 0 (0x%x..0x%x)",
                      (unsigned long long)v, ISA_REGION0_BASE, ISA_REGION1_BASE - 1);
            return false;
        }
        *entry = (uint32_t)v;
        return true;
    }
    asm_symbol *s = asm_find_label(a, "__supervisor", tile);
    if (s) {
        const asm_section *sec = &a->sections[s->section];
        *entry = sec->base + s->offset;
        if (!(sec->flags & EXE_SEC_EXEC)) {
            asm_error(a, s->loc, "'__supervisor', the supervisor entry of tile %u, is in section %s, which is not "
                      "executable", tile, sec->name);
            return false;
        }
        if (*entry & 3) {
            asm_error(a, s->loc, "'__supervisor', the supervisor entry of tile %u, at 0x%x is not 4-byte aligned",
                      tile, *entry);
            return false;
        }
        return true;
    }
    uint32_t idx;
    if (asm_map_get(&a->section_names, ".text", tile, &idx) && (a->sections[idx].flags & EXE_SEC_EXEC) &&
        a->sections[idx].size) {
        *entry = a->sections[idx].base;
        return true;
    }
    for (size_t i = 0; i < a->n_sections; i++)
        if ((a->sections[i].flags & EXE_SEC_EXEC) && a->sections[i].size && asm_tileset_has(a, a->sections[i].set, tile)) {
            *entry = a->sections[i].base;
            return true;
        }
    return false;
}

/* A symbol to write, in the order the per-tile source would define it: a
 * `.tile` block after another, within one the tiles in order, within one
 * tile as written. */
typedef struct sym_order { uint32_t block, tile; size_t index; } sym_order;

/* By block, tile, then definition. */
static int cmp_sym_order(const void *x, const void *y)
{
    const sym_order *a = x, *b = y;
    if (a->block != b->block)
        return a->block < b->block ? -1 : 1;
    if (a->tile != b->tile)
        return a->tile < b->tile ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* The labels and .symbol symbols, per tile, into e. */
static void add_symbols(asm_ctx *a, ipu_exe *e)
{
    sym_order *order = asm_xrealloc(NULL, (a->n_syms ? a->n_syms : 1) * sizeof *order);
    size_t n = 0;
    for (size_t i = 0; i < a->n_syms; i++)
        if (a->syms[i].kind == SYM_LABEL && !a->syms[i].internal)
            order[n++] = (sym_order){ a->syms[i].block, a->syms[i].tile, i };
    qsort(order, n, sizeof *order, cmp_sym_order);
    for (size_t i = 0; i < n; i++) {
        asm_symbol *s = &a->syms[order[i].index];
        const asm_section *sec = &a->sections[s->section];
        enum exe_symbol_kind kind = (sec->flags & EXE_SEC_EXEC) ? EXE_SYM_CODE : EXE_SYM_DATA;
        if (s->type == SYMT_FUNC) kind = EXE_SYM_CODE;
        else if (s->type == SYMT_OBJECT) kind = EXE_SYM_DATA;
        else if (s->type == SYMT_NOTYPE) kind = EXE_SYM_OTHER;
        if (!exe_add_symbol(e, s->tile, s->name, sec->base + s->offset, s->size, kind, s->global))
            asm_error(a, s->loc, "cannot add symbol '%s'", s->name);
    }
    free(order);
}

/* Line records, in the order the per-tile source gives them: the records
 * of a `.tile` block once per tile of its list. */
static void add_lines(ipu_exe *e, const line_list *lines, const uint32_t *file_index, const asm_ctx *a)
{
    for (size_t i = 0; i < lines->n;) {
        size_t j = i;
        while (j < lines->n && lines->v[j].block == lines->v[i].block)
            j++;
        const asm_tileset *set = asm_set(a, lines->v[i].set);
        for (uint32_t t = 0; t < set->n; t++)
            for (size_t k = i; k < j; k++)
                exe_add_line(e, set->tiles[t], lines->v[k].addr, file_index[lines->v[k].file], lines->v[k].line);
        i = j;
    }
}

/* Entries: every tile with code or an .entry, in tile order. */
static void add_entries(asm_ctx *a, ipu_exe *e)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n_sections; i++)
        if (a->sections[i].size || a->sections[i].n_labels)
            n += asm_set(a, a->sections[i].set)->n;
    for (size_t i = 0; i < a->n_entries; i++)
        n += asm_set(a, a->entries[i].set)->n;
    uint32_t *tiles = asm_xrealloc(NULL, (n + 1) * sizeof *tiles);
    size_t n_tiles = 0;
    for (size_t i = 0; i < a->n_sections; i++)
        if (a->sections[i].size || a->sections[i].n_labels) {
            const asm_tileset *set = asm_set(a, a->sections[i].set);
            memcpy(tiles + n_tiles, set->tiles, set->n * sizeof *tiles);
            n_tiles += set->n;
        }
    for (size_t i = 0; i < a->n_entries; i++) {
        const asm_tileset *set = asm_set(a, a->entries[i].set);
        memcpy(tiles + n_tiles, set->tiles, set->n * sizeof *tiles);
        n_tiles += set->n;
    }
    qsort(tiles, n_tiles, sizeof *tiles, cmp_u32);
    for (size_t i = 0; i < n_tiles; i++) {
        uint32_t entry;
        if ((i == 0 || tiles[i] != tiles[i - 1]) && tile_entry(a, tiles[i], &entry))
            exe_set_entry(e, tiles[i], entry);
    }
    free(tiles);
}

/* The executable: sections on each tile of their set, symbols, line
 * records, entries; NULL after errors. */
static ipu_exe *build_exe(asm_ctx *a, const line_list *lines)
{
    ipu_exe *e = exe_new();
    if (!e) {
        asm_error(a, (asm_loc){ 0, 0, 0, NULL }, "out of memory");
        return NULL;
    }
    uint32_t *file_index = asm_xrealloc(NULL, (a->n_files ? a->n_files : 1) * sizeof *file_index);
    for (size_t i = 0; i < a->n_files; i++)
        file_index[i] = exe_add_file(e, a->files[i]);
    char err[300];
    for (size_t i = 0; i < a->n_sections && !a->n_errors; i++) {
        asm_section *s = &a->sections[i];
        /* An empty section is kept if it holds labels or was placed: what
         * the disassembler prints comes back the same. */
        if (!s->size && !s->n_labels && !s->placed_explicitly)
            continue;
        const asm_tileset *set = asm_set(a, s->set);
        for (uint32_t t = 0; t < set->n; t++)
            if (!exe_add_section(e, set->tiles[t], s->name, s->base, s->bytes, s->size, s->flags, err, sizeof err)) {
                asm_error(a, s->loc, "%s", err);
                break;
            }
    }
    add_symbols(a, e);
    add_lines(e, lines, file_index, a);
    add_entries(a, e);
    free(file_index);
    e->relocatable = false;
    if (a->n_errors) {
        exe_free(e);
        return NULL;
    }
    return e;
}

/* Place the sections, run pass 2 and its checks, and build the executable;
 * NULL after errors. */
ipu_exe *asm_output(asm_ctx *a)
{
    ipu_exe *e = NULL;
    line_list lines = { NULL, 0, 0 };
    if (!a->n_errors)
        layout(a);
    if (!a->n_errors) {
        pass2(a, &lines);
        apply_attrs(a);
        check_rpt(a);
    }
    if (!a->n_errors)
        e = build_exe(a, &lines);
    free(lines.v);
    return e;
}
