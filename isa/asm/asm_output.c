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

/* The first address in [lo, hi) aligned to `align` where `size` bytes do
 * not overlap any of the sections in `used`. */
static bool first_fit(const asm_ctx *a, const uint32_t *used, size_t n_used, uint32_t lo, uint32_t hi,
                      uint32_t size, uint32_t align, uint32_t *out)
{
    uint64_t cand = ((uint64_t)lo + align - 1) & ~(uint64_t)(align - 1);
    for (;;) {
        bool moved = false;
        for (size_t i = 0; i < n_used; i++) {
            const asm_section *s = &a->sections[used[i]];
            uint64_t b = s->base, e = (uint64_t)s->base + s->size;
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

static void layout_tile(asm_ctx *a, uint32_t tile)
{
    uint32_t *idx = asm_xrealloc(NULL, a->n_sections * sizeof *idx);
    uint32_t *used = asm_xrealloc(NULL, a->n_sections * sizeof *used);
    size_t n = 0, n_used = 0;
    for (size_t i = 0; i < a->n_sections; i++)
        if (a->sections[i].tile == tile)
            idx[n++] = (uint32_t)i;

    /* Sections with an address: in memory, code in region 0, no overlap. */
    for (size_t k = 0; k < n; k++) {
        asm_section *s = &a->sections[idx[k]];
        if (!s->placed)
            continue;
        uint64_t end = (uint64_t)s->base + s->size;
        uint32_t limit = (s->flags & EXE_SEC_EXEC) ? ISA_REGION1_BASE : ISA_MEMORY_END;
        if (end > limit) {
            asm_error(a, s->place_loc, "section %s (0x%x..0x%llx, %u bytes) on tile %u runs past 0x%x, the end of %s",
                      s->name, s->base, (unsigned long long)end - 1, s->size, tile, limit,
                      (s->flags & EXE_SEC_EXEC) ? "region 0 (code must be in region 0)" : "tile memory");
            continue;
        }
        for (size_t j = 0; j < n_used; j++) {
            asm_section *o = &a->sections[used[j]];
            if (s->size && o->size && s->base < (uint64_t)o->base + o->size && o->base < end) {
                asm_error(a, s->place_loc, "section %s (0x%x..0x%llx) overlaps section %s (0x%x..0x%x) on tile %u",
                          s->name, s->base, (unsigned long long)end - 1, o->name, o->base, o->base + o->size - 1, tile);
                break;
            }
        }
        used[n_used++] = idx[k];
    }
    /* The others: code, then initialised data, then NOBITS. */
    for (int cls = 0; cls < 3; cls++) {
        for (size_t k = 0; k < n; k++) {
            asm_section *s = &a->sections[idx[k]];
            int c = (s->flags & EXE_SEC_EXEC) ? 0 : (s->flags & EXE_SEC_NOBITS) ? 2 : 1;
            if (s->placed || c != cls)
                continue;
            uint32_t align = s->align > 8 ? s->align : 8;
            uint32_t base;
            bool ok = cls == 0 ? first_fit(a, used, n_used, ISA_REGION0_BASE, ISA_REGION1_BASE, s->size, align, &base)
                               : (first_fit(a, used, n_used, ISA_REGION1_BASE, ISA_MEMORY_END, s->size, align, &base) ||
                                  first_fit(a, used, n_used, ISA_REGION0_BASE, ISA_REGION1_BASE, s->size, align, &base));
            if (!ok) {
                asm_error(a, s->loc, "section %s (%u bytes) does not fit in the free %s of tile %u", s->name, s->size,
                          cls == 0 ? "region 0" : "memory", tile);
                continue;
            }
            s->base = base;
            s->placed = true;
            used[n_used++] = idx[k];
        }
    }
    free(idx);
    free(used);
}

static void layout(asm_ctx *a)
{
    uint32_t *tiles = asm_xrealloc(NULL, (a->n_sections ? a->n_sections : 1) * sizeof *tiles);
    for (size_t i = 0; i < a->n_sections; i++)
        tiles[i] = a->sections[i].tile;
    qsort(tiles, a->n_sections, sizeof *tiles, cmp_u32);
    for (size_t i = 0; i < a->n_sections; i++)
        if (i == 0 || tiles[i] != tiles[i - 1])
            layout_tile(a, tiles[i]);
    free(tiles);
}

/* ---- pass 2 ------------------------------------------------------------------------- */

typedef struct line_rec { uint32_t tile, addr, file, line; } line_rec;

static void add_line(line_rec **lines, size_t *n, size_t *cap, uint32_t tile, uint32_t addr, asm_loc loc)
{
    ASM_GROW(*lines, *n, *cap);
    (*lines)[(*n)++] = (line_rec){ tile, addr, loc.file, loc.line };
}

static void pass2(asm_ctx *a, line_rec **lines, size_t *n_lines)
{
    size_t cap_lines = 0;
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
        case ST_INSN: {
            if (addr & 3) {
                asm_error(a, st->loc, "instruction at 0x%x is not 4-byte aligned", addr);
                break;
            }
            uint32_t w;
            if (asm_encode_insn(a, st->insn[0], st->tile, &w)) {
                asm_put_le(out, w, 4);
                add_line(lines, n_lines, &cap_lines, st->tile, addr, st->insn[0]->loc);
            }
            break;
        }
        case ST_BUNDLE: {
            if (addr & 7) {
                asm_error(a, st->loc, "bundle at 0x%x is not 8-byte aligned", addr);
                break;
            }
            uint32_t w0, w1;
            if (asm_encode_insn(a, st->insn[0], st->tile, &w0) && asm_encode_insn(a, st->insn[1], st->tile, &w1)) {
                asm_put_le(out, w0 | ISA_COISSUE_BIT, 4);
                asm_put_le(out + 4, w1, 4);
                add_line(lines, n_lines, &cap_lines, st->tile, addr, st->insn[0]->loc);
                add_line(lines, n_lines, &cap_lines, st->tile, addr + 4, st->insn[1]->loc);
            }
            break;
        }
        case ST_DATA:
            for (uint32_t k = 0; k < st->n_items; k++) {
                int64_t v;
                asm_loc l = asm_loc_col(st->loc, st->items[k]->col);
                if (!asm_eval_final(a, st->items[k], st->tile, l, &v))
                    continue;
                if (st->width < 8) {
                    int64_t lo = -((int64_t)1 << (8 * st->width - 1)), hi = ((int64_t)1 << (8 * st->width)) - 1;
                    if (v < lo || v > hi) {
                        asm_error(a, l, "value %lld does not fit in %u bits (%lld..%lld)", (long long)v,
                                  8u * st->width, (long long)lo, (long long)hi);
                        continue;
                    }
                }
                asm_put_le(out + k * st->width, (uint64_t)v, st->width);
            }
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

static void apply_attrs(asm_ctx *a)
{
    for (size_t i = 0; i < a->n_attrs; i++) {
        asm_symattr *t = &a->attrs[i];
        asm_symbol *s = asm_find_label(a, t->name, t->tile);
        if (!s) {
            if (asm_find_const(a, t->name) && t->what != 2)
                continue;   /* an absolute symbol: nothing to export */
            static const char *const dirs[] = {".globl", ".type", ".size"};
            asm_error(a, t->loc, "'%s' names '%s', which is not a label on tile %u", dirs[t->what], t->name, t->tile);
            continue;
        }
        if (t->what == 0)
            s->global = true;
        else if (t->what == 1)
            s->type = t->type;
        else {
            int64_t v;
            if (!asm_eval_final(a, t->expr, t->tile, t->loc, &v))
                continue;
            if (v < 0 || v > UINT32_MAX) {
                asm_error(a, t->loc, "size %lld of '%s' out of range", (long long)v, t->name);
                continue;
            }
            s->size = (uint32_t)v;
            s->has_size = true;
        }
    }
}

/* ---- output ------------------------------------------------------------------------- */

static bool tile_entry(asm_ctx *a, uint32_t tile, uint32_t *entry)
{
    for (size_t i = 0; i < a->n_entries; i++) {
        if (a->entries[i].tile != tile)
            continue;
        int64_t v;
        if (!asm_eval_final(a, a->entries[i].expr, tile, a->entries[i].loc, &v))
            return false;
        if (v < ISA_REGION0_BASE || v >= ISA_REGION1_BASE || (v & 3)) {
            asm_error(a, a->entries[i].loc, "entry 0x%llx is not a 4-byte aligned address in region 0 (0x%x..0x%x)",
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
        if (a->sections[i].tile == tile && (a->sections[i].flags & EXE_SEC_EXEC) && a->sections[i].size) {
            *entry = a->sections[i].base;
            return true;
        }
    return false;
}

static ipu_exe *build_exe(asm_ctx *a, const line_rec *lines, size_t n_lines)
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
        if (!exe_add_section(e, s->tile, s->name, s->base, s->bytes, s->size, s->flags, err, sizeof err))
            asm_error(a, s->loc, "%s", err);
    }
    for (size_t i = 0; i < a->n_syms; i++) {
        asm_symbol *s = &a->syms[i];
        if (s->kind != SYM_LABEL || s->internal)
            continue;
        const asm_section *sec = &a->sections[s->section];
        enum exe_symbol_kind kind = (sec->flags & EXE_SEC_EXEC) ? EXE_SYM_CODE : EXE_SYM_DATA;
        if (s->type == SYMT_FUNC) kind = EXE_SYM_CODE;
        else if (s->type == SYMT_OBJECT) kind = EXE_SYM_DATA;
        else if (s->type == SYMT_NOTYPE) kind = EXE_SYM_OTHER;
        if (!exe_add_symbol(e, s->tile, s->name, sec->base + s->offset, s->size, kind, s->global))
            asm_error(a, s->loc, "cannot add symbol '%s'", s->name);
    }
    for (size_t i = 0; i < n_lines; i++)
        exe_add_line(e, lines[i].tile, lines[i].addr, file_index[lines[i].file], lines[i].line);
    /* Entries: every tile with code or an .entry, in tile order. */
    uint32_t *tiles = asm_xrealloc(NULL, (a->n_sections + a->n_entries + 1) * sizeof *tiles);
    size_t n_tiles = 0;
    for (size_t i = 0; i < a->n_sections; i++)
        if (a->sections[i].size || a->sections[i].n_labels)
            tiles[n_tiles++] = a->sections[i].tile;
    for (size_t i = 0; i < a->n_entries; i++)
        tiles[n_tiles++] = a->entries[i].tile;
    qsort(tiles, n_tiles, sizeof *tiles, cmp_u32);
    for (size_t i = 0; i < n_tiles; i++) {
        uint32_t entry;
        if ((i == 0 || tiles[i] != tiles[i - 1]) && tile_entry(a, tiles[i], &entry))
            exe_set_entry(e, tiles[i], entry);
    }
    free(tiles);
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
    line_rec *lines = NULL;
    size_t n_lines = 0;
    if (!a->n_errors)
        layout(a);
    if (!a->n_errors) {
        pass2(a, &lines, &n_lines);
        apply_attrs(a);
        check_rpt(a);
    }
    if (!a->n_errors)
        e = build_exe(a, lines, n_lines);
    free(lines);
    return e;
}
