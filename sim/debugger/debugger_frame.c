/*
 * debugger_frame.c — `info memory` (the selected tile's SRAM: its regions and
 * elements, the executable's sections on the tile, the tensors placed there,
 * the host memory it takes) and `info frame` (a context's frame: the
 * function it runs, its caller or vertex, its stack pointer, a repeat loop
 * in progress, when it may issue next) and `info amp` (the AMP's state: a
 * context's accumulators $aaccN, the tile's weights $cweiN).
 */
#include "debugger_internal.h"

#include <string.h>

#define MAX_MEMORY_ROWS 64

/* The sections the executable puts on the selected tile. */
static void memory_sections(const debugger *d, FILE *out)
{
    size_t shown = 0, total = 0;
    for (size_t i = 0; i < d->e->n_sections; i++) {
        const exe_section *s = &d->e->sections[i];
        if (s->tile != d->tile)
            continue;
        if (total++ >= MAX_MEMORY_ROWS)
            continue;
        if (!shown++)
            fprintf(out, "sections:\n");
        fprintf(out, "  %-24s 0x%05x-0x%05x %8u bytes  %s%s%s\n", s->name, s->addr, s->addr + s->size - (s->size > 0),
                s->size, s->flags & EXE_SEC_EXEC ? "code" : "data", s->flags & EXE_SEC_WRITE ? ", writable" : "",
                s->flags & EXE_SEC_NOBITS ? ", zero-filled" : "");
    }
    if (total > shown)
        fprintf(out, "  ... and %zu more sections\n", total - shown);
}

/* The pieces of compiled tensors that lie on the selected tile. */
static void memory_tensors(const debugger *d, FILE *out)
{
    if (!d->tmap)
        return;
    size_t shown = 0, total = 0;
    for (size_t i = 0; i < d->tmap->n_tensors; i++) {
        const tmap_tensor *t = &d->tmap->tensors[i];
        for (size_t k = 0; k < t->n_pieces; k++) {
            const tmap_piece *p = &t->pieces[k];
            if (p->tile != d->tile)
                continue;
            if (total++ >= MAX_MEMORY_ROWS)
                continue;
            if (!shown++)
                fprintf(out, "tensors:\n");
            uint64_t bytes = p->count * t->element_bytes;
            fprintf(out, "  %-40s 0x%05x-0x%05llx elements %llu..%llu (%s)\n", t->name, p->addr,
                    (unsigned long long)(p->addr + bytes - (bytes > 0)), (unsigned long long)p->first,
                    (unsigned long long)(p->first + p->count - 1), tmap_dtype_name(t->dtype));
        }
    }
    if (total > shown)
        fprintf(out, "  ... and %zu more tensor pieces\n", total - shown);
}

/* info memory */
void dbg_info_memory(debugger *d, FILE *out)
{
    const ipu_tile *t = dbg_cur_tile(d);
    const tile_memory *m = &t->s.mem;
    uint32_t end = m->base + m->size_bytes, r1 = m->region1_base < end ? m->region1_base : end;
    fprintf(out, "tile %u: 0x%05x-0x%05x (%u KiB), %u elements of %u KiB\n", d->tile, m->base, end - 1,
            m->size_bytes / 1024, m->size_bytes / TMEM_PAGE_BYTES, TMEM_PAGE_BYTES / 1024);
    fprintf(out, "  region 0 0x%05x-0x%05x (%u KiB): code and data, not interleaved\n", m->base, r1 - 1,
            (r1 - m->base) / 1024);
    if (r1 < end)
        fprintf(out, "  region 1 0x%05x-0x%05x (%u KiB): data, 2-way interleaved on 64-bit words\n", r1, end - 1,
                (end - r1) / 1024);
    fprintf(out, "  code 0x%05x-0x%05x; %u KiB of host memory hold what has been written\n", t->code_base,
            t->code_end - (t->code_end > t->code_base), (unsigned)(tmem_host_bytes(m) / 1024));
    memory_sections(d, out);
    memory_tensors(d, out);
}

/* info frame [CONTEXT] */
enum debugger_result dbg_info_frame(debugger *d, const char *args, FILE *out)
{
    char w[64], name[24], where[320];
    unsigned k = d->context;
    const char *rest = args;
    if (dbg_next_word(&rest, w, sizeof w) && (!dbg_parse_context(w, &k) || !dbg_at_end(rest)))
        return dbg_fail(out, "info frame takes a context: sup or w1..w6, got '%s'", w);
    const ipu_tile *t = dbg_cur_tile(d);
    const isa_context *c = &t->s.ctx[k];
    dbg_symbolize(d, d->tile, c->pc, where, sizeof where);
    fprintf(out, "tile %u, %s (%s), pc 0x%x%s\n", d->tile, dbg_context_name(k, name, sizeof name),
            dbg_run_mode_name(c->run_mode), c->pc, where);
    const exe_symbol *f = exe_symbol_at(d->e, d->tile, c->pc);
    if (f && f->size)
        fprintf(out, "  in %s: 0x%x, %u bytes\n", f->name, f->addr, f->size);
    else if (f)
        fprintf(out, "  in %s at 0x%x\n", f->name, f->addr);
    if (k == ISA_SUPERVISOR) {
        dbg_symbolize(d, d->tile, c->m[ISA_MRF_LR], where, sizeof where);
        fprintf(out, "  $lr ($m%d) 0x%x%s%s\n", ISA_MRF_LR, c->m[ISA_MRF_LR], where,
                tile_decoded_at(t, c->m[ISA_MRF_LR]) ? "" : " (not a code address)");
    } else {
        uint32_t vb = c->csr[ISA_CSR_VERTEX_BASE];
        const exe_symbol *v = exe_symbol_at(d->e, d->tile, vb);
        fprintf(out, "  vertex state $VERTEX_BASE 0x%x%s%s%s\n", vb, v ? " <" : "", v ? v->name : "", v ? ">" : "");
    }
    fprintf(out, "  $sp ($m%d) 0x%x\n", ISA_MRF_SP, c->m[ISA_MRF_SP]);
    if (c->rpt_remaining)
        fprintf(out, "  rpt: %u more, body 0x%x-0x%x\n", c->rpt_remaining, c->rpt_first, c->rpt_end - 1);
    if (c->run_mode == ISA_RUN_RUNNING || c->run_mode == ISA_RUN_SYNC)
        fprintf(out, "  may issue from cycle %llu (the tile is at cycle %llu)\n",
                (unsigned long long)t->ready_cycle[k], (unsigned long long)engine_tile_cycle(d->g, d->tile));
    return DEBUGGER_OK;
}

/* info amp [CONTEXT]: a context's accumulators as f32, eight a line, and
 * the tile's weights as words (runs of zero lines left out). */
enum debugger_result dbg_info_amp(debugger *d, const char *args, FILE *out)
{
    char w[64], name[24];
    unsigned k = d->context;
    const char *rest = args;
    if (dbg_next_word(&rest, w, sizeof w) && (!dbg_parse_context(w, &k) || !dbg_at_end(rest)))
        return dbg_fail(out, "info amp takes a context: sup or w1..w6, got '%s'", w);
    const ipu_tile *t = dbg_cur_tile(d);
    const uint32_t *aacc = t->s.ctx[k].amp.aacc, *cwei = t->s.amp.cwei;
    fprintf(out, "tile %u, %s: accumulators $aacc0-$aacc%d (f32)\n", d->tile, dbg_context_name(k, name, sizeof name),
            ISA_AACC_WORDS - 1);
    for (unsigned i = 0; i < ISA_AACC_WORDS; i += 8) {
        fprintf(out, "  [%2u]", i);
        for (unsigned j = i; j < i + 8; j++)
            fprintf(out, " %12.6g", dbg_bits_f32(aacc[j]));
        fprintf(out, "\n");
    }
    fprintf(out, "tile %u: weights $cwei0-$cwei%d (words, shared by its contexts)\n", d->tile, ISA_CWEI_WORDS - 1);
    unsigned zero_lines = 0;
    for (unsigned i = 0; i < ISA_CWEI_WORDS; i += 8) {
        bool zero = true;
        for (unsigned j = i; j < i + 8; j++)
            zero = zero && !cwei[j];
        if (zero) {
            zero_lines++;
            continue;
        }
        fprintf(out, "  [%3u]", i);
        for (unsigned j = i; j < i + 8; j++)
            fprintf(out, " %08x", cwei[j]);
        fprintf(out, "\n");
    }
    if (zero_lines)
        fprintf(out, "  (%u lines of zeros not shown)\n", zero_lines);
    return DEBUGGER_OK;
}
