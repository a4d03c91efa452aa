/*
 * debugger_info.c — the state of the run: selecting a tile and a context,
 * backtrace (the selected context's place, its caller, cycle, superstep
 * and state), info's topics (their table; breakpoints, display and
 * checkpoints are shown by the files that keep them, memory and frame by
 * debugger_frame.c) and stats (the engine's statistics so far).  Cycles are
 * the engine's view of each tile (engine_tile_cycle): a tile released from
 * a barrier stands at the release, as the superstep table and the run
 * report count it.
 */
#include "debugger_internal.h"

#include <string.h>

#include "exchange/exchange.h"

/* ---- selection ------------------------------------------------------------ */

/* tile [T]: show or select a tile (and its supervisor). */
enum debugger_result dbg_cmd_tile(debugger *d, const char *args, FILE *out)
{
    char w[64];
    const char *rest = args;
    if (!dbg_next_word(&rest, w, sizeof w)) {
        fprintf(out, "Tile %u is selected.\n", d->tile);
        return DEBUGGER_OK;
    }
    uint32_t tile;
    if (!dbg_parse_u32(w, &tile) || !dbg_at_end(rest))
        return dbg_fail(out, "tile needs a tile number, got '%s'", w);
    if (!engine_tile(d->g, tile))
        return dbg_fail(out, "tile %u has no code in %s", tile, d->name);
    d->tile = tile;
    d->context = ISA_SUPERVISOR;
    const ipu_tile *t = dbg_cur_tile(d);
    dbg_print_location(d, out, tile, ISA_SUPERVISOR, t->s.ctx[ISA_SUPERVISOR].pc);
    return DEBUGGER_OK;
}

/* context [sup | w1..w6]: show or select a context of the selected tile. */
enum debugger_result dbg_cmd_context(debugger *d, const char *args, FILE *out)
{
    char w[64], name[24];
    const char *rest = args;
    if (!dbg_next_word(&rest, w, sizeof w)) {
        fprintf(out, "Context: %s of tile %u.\n", dbg_context_name(d->context, name, sizeof name), d->tile);
        return DEBUGGER_OK;
    }
    unsigned k;
    if (!dbg_parse_context(w, &k) || !dbg_at_end(rest))
        return dbg_fail(out, "context needs sup or w1..w6, got '%s'", w);
    d->context = k;
    const ipu_tile *t = dbg_cur_tile(d);
    dbg_print_location(d, out, d->tile, k, t->s.ctx[k].pc);
    return DEBUGGER_OK;
}


/* ---- where, info, stats ---------------------------------------------------- */

/* backtrace (where): the selected context's place, who it works for (the
 * supervisor's return address in $lr, or the vertex a worker runs), its
 * cycle, superstep and state. */
enum debugger_result dbg_cmd_where(debugger *d, const char *args, FILE *out)
{
    if (!dbg_at_end(args))
        return dbg_fail(out, "backtrace takes no arguments");
    const ipu_tile *t = dbg_cur_tile(d);
    const isa_context *c = &t->s.ctx[d->context];
    char ctx[24], where[320];
    dbg_symbolize(d, d->tile, c->pc, where, sizeof where);
    uint32_t chip = d->tile / machine_u32(&d->m, MP_tiles_per_chip);
    fprintf(out, "#0 tile %u, %s (%s), pc 0x%x%s\n", d->tile, dbg_context_name(d->context, ctx, sizeof ctx),
            dbg_run_mode_name(c->run_mode), c->pc, where);
    if (d->context != ISA_SUPERVISOR) {
        const exe_symbol *v = exe_symbol_at(d->e, d->tile, c->csr[ISA_CSR_VERTEX_BASE]);
        fprintf(out, "#1 started by the supervisor for the vertex state at 0x%x%s%s%s\n",
                c->csr[ISA_CSR_VERTEX_BASE], v ? " <" : "", v ? v->name : "", v ? ">" : "");
    } else if (c->m[ISA_MRF_LR] && tile_decoded_at(t, c->m[ISA_MRF_LR]) && c->m[ISA_MRF_LR] != c->pc) {
        dbg_symbolize(d, d->tile, c->m[ISA_MRF_LR], where, sizeof where);
        fprintf(out, "#1 return address $lr 0x%x%s (if the code was called)\n", c->m[ISA_MRF_LR], where);
    }
    fprintf(out, "  cycle %llu, superstep %u of chip %u, %s%s\n",
            (unsigned long long)engine_tile_cycle(d->g, d->tile), engine_supersteps_done(d->g, chip), chip,
            d->started ? "" : "not started: ", d->started ? engine_tile_status(d->g, d->tile) : "'run' starts it");
    return DEBUGGER_OK;
}

/* info tiles [FIRST [COUNT]]: each tile's cycle, supervisor pc and state,
 * COUNT (default 64) from the FIRST-th tile with code. */
static enum debugger_result info_tiles(debugger *d, const char *args, FILE *out)
{
    size_t n = engine_tile_count(d->g);
    uint64_t first = 0, count = 64;
    char w[64];
    const char *rest = args;
    if (dbg_next_word(&rest, w, sizeof w) && (!dbg_parse_u64(w, &first) || first >= n))
        return dbg_fail(out, "info tiles: FIRST must be 0 to %zu (the tiles with code, counted), got '%s'", n - 1, w);
    if (dbg_next_word(&rest, w, sizeof w) && (!dbg_parse_u64(w, &count) || count == 0 || !dbg_at_end(rest)))
        return dbg_fail(out, "info tiles: COUNT must be 1 or more, got '%s'", w);
    size_t end = count > n - first ? n : (size_t)(first + count);
    fprintf(out, "  %6s %12s %9s  %-24s %s\n", "tile", "cycle", "pc", "symbol", "status");
    for (size_t i = (size_t)first; i < end; i++) {
        const ipu_tile *t = engine_tile_at(d->g, i);
        uint32_t pc = t->s.ctx[ISA_SUPERVISOR].pc;
        const exe_symbol *sym = exe_symbol_at(d->e, t->tile_id, pc);
        char where[160] = "";
        if (sym && pc == sym->addr)
            snprintf(where, sizeof where, "%s", sym->name);
        else if (sym)
            snprintf(where, sizeof where, "%s+0x%x", sym->name, pc - sym->addr);
        fprintf(out, "%s %6u %12llu %#9x  %-24s %s\n", t->tile_id == d->tile ? "*" : " ", t->tile_id,
                (unsigned long long)engine_tile_cycle(d->g, t->tile_id), pc, where,
                d->started ? engine_tile_status(d->g, t->tile_id) : "not started");
    }
    if (end < n)
        fprintf(out, "  ... %zu more tile%s: info tiles %zu [COUNT]\n", n - end, n - end == 1 ? "" : "s", end);
    return DEBUGGER_OK;
}

/* info registers [CONTEXT]: the registers and non-zero CSRs of a context. */
static enum debugger_result info_registers(debugger *d, const char *args, FILE *out)
{
    char w[64], name[24];
    unsigned k = d->context;
    const char *rest = args;
    if (dbg_next_word(&rest, w, sizeof w) && (!dbg_parse_context(w, &k) || !dbg_at_end(rest)))
        return dbg_fail(out, "info registers takes a context: sup or w1..w6, got '%s'", w);
    const ipu_tile *t = dbg_cur_tile(d);
    const isa_context *c = &t->s.ctx[k];
    char where[320];
    dbg_symbolize(d, d->tile, c->pc, where, sizeof where);
    fprintf(out, "tile %u, %s (%s), pc 0x%x%s\n", d->tile, dbg_context_name(k, name, sizeof name),
            dbg_run_mode_name(c->run_mode), c->pc, where);
    for (int r = 0; r < 16; r++)
        fprintf(out, "%s$m%-2d 0x%08x", r % 4 ? "   " : "", r, c->m[r]), r % 4 == 3 ? fputc('\n', out) : 0;
    for (int r = 0; r < 16; r++)
        fprintf(out, "%s$a%-2d 0x%08x %-12.6g", r % 4 ? "  " : "", r, c->a[r], dbg_bits_f32(c->a[r])),
            r % 4 == 3 ? fputc('\n', out) : 0;
    unsigned shown = 0;
    for (unsigned n = 0; n < ISA_CSR_SPACE; n++) {
        const char *csr = isa_csr_name(n);
        uint32_t v;
        char kind;
        if (!csr || n == ISA_CSR_PC || !dbg_register_value(t, k, csr, &v, &kind) || !v)
            continue;
        fprintf(out, "%s$%s 0x%08x", shown % 4 ? "   " : "", csr, v);
        if (++shown % 4 == 0)
            fputc('\n', out);
    }
    if (shown % 4)
        fputc('\n', out);
    if (c->rpt_remaining)
        fprintf(out, "rpt: %u more, body 0x%x-0x%x\n", c->rpt_remaining, c->rpt_first, c->rpt_end - 1);
    return DEBUGGER_OK;
}

/* info supersteps: the supersteps ended so far (the last 200). */
static void info_supersteps(debugger *d, FILE *out)
{
    const engine_stats *s = engine_get_stats(d->g);
    if (!d->started || !s->n_supersteps) {
        fprintf(out, "No superstep has ended yet.\n");
        return;
    }
    fprintf(out, "%4s %5s %-8s %12s %12s %10s %8s %12s\n", "chip", "step", "ended_by", "start_cycle", "end_cycle",
            "cycles", "busiest", "instructions");
    size_t first = s->n_supersteps > 200 ? s->n_supersteps - 200 : 0;
    if (first)
        fprintf(out, "(the last 200 of %zu)\n", s->n_supersteps);
    for (size_t i = first; i < s->n_supersteps; i++) {
        const engine_superstep *ss = &s->supersteps[i];
        fprintf(out, "%4u %5u %-8s %12llu %12llu %10llu %8u %12llu\n", ss->chip, ss->index,
                ss->zone == 1 ? "sync 1" : ss->zone == 2 ? "sync 2" : "end", (unsigned long long)ss->start_cycle,
                (unsigned long long)ss->end_cycle, (unsigned long long)ss->c.cycles, ss->busiest_tile,
                (unsigned long long)ss->c.instructions);
    }
}

/* An exchange endpoint in words. */
static void endpoint_name(uint32_t ep, uint32_t system_tiles, char *buf, size_t n)
{
    switch (xch_endpoint_kind(ep, system_tiles)) {
    case XCH_EP_TILE: snprintf(buf, n, "tile %u", ep); break;
    case XCH_EP_BROADCAST: snprintf(buf, n, "every tile"); break;
    case XCH_EP_MULTICAST:
        if (ep & XCH_MULTICAST_TILE)
            snprintf(buf, n, "tile %u's multicast group %u", ep & XCH_MULTICAST_TILE, xch_multicast_group(ep));
        else
            snprintf(buf, n, "multicast group %u", xch_multicast_group(ep));
        break;
    case XCH_EP_HOST: snprintf(buf, n, "host stream %u", ep & XCH_ENDPOINT_INDEX); break;
    default:
        if (ep & XCH_STREAM_MEMORY)
            snprintf(buf, n, "streaming-memory buffer %u", ep & XCH_ENDPOINT_INDEX);
        else
            snprintf(buf, n, "endpoint 0x%x", ep);
        break;
    }
}

/* info exchange: the selected tile's sends and receives in this phase. */
static void info_exchange(debugger *d, FILE *out)
{
    const ipu_tile *t = dbg_cur_tile(d);
    const xch_log *log = t->s.xlog;
    if (!log || (!log->n_sends && !log->n_recvs)) {
        fprintf(out, "tile %u: no exchange in the current phase.\n", d->tile);
        return;
    }
    fprintf(out, "tile %u: %zu send%s, %zu receive%s in the current phase\n", d->tile, log->n_sends,
            log->n_sends == 1 ? "" : "s", log->n_recvs, log->n_recvs == 1 ? "" : "s");
    for (size_t i = 0; i < log->n_sends && i < 64; i++) {
        const xch_transfer *x = &log->sends[i];
        char ep[64];
        endpoint_name(x->endpoint, log->system_tiles, ep, sizeof ep);
        fprintf(out, "  send %u bytes from 0x%x to %s (pc 0x%x, cycle %llu)\n", x->bytes, x->addr, ep, x->pc,
                (unsigned long long)x->issue_cycle);
    }
    for (size_t i = 0; i < log->n_recvs && i < 64; i++) {
        const xch_transfer *x = &log->recvs[i];
        char ep[64];
        endpoint_name(x->endpoint, log->system_tiles, ep, sizeof ep);
        fprintf(out, "  receive %u bytes at 0x%x from %s (pc 0x%x, cycle %llu)\n", x->bytes, x->addr, ep, x->pc,
                (unsigned long long)x->issue_cycle);
    }
}

/* info tensors: a compiled program's tensors and where they start. */
static void info_tensors(debugger *d, FILE *out)
{
    if (!d->tmap || !d->tmap->n_tensors) {
        fprintf(out, "%s has no tensor map.\n", d->name);
        return;
    }
    for (size_t i = 0; i < d->tmap->n_tensors; i++) {
        const tmap_tensor *t = &d->tmap->tensors[i];
        fprintf(out, "%s: %s [", t->name, tmap_dtype_name(t->dtype));
        for (uint32_t k = 0; k < t->rank; k++)
            fprintf(out, "%s%llu", k ? "," : "", (unsigned long long)t->dims[k]);
        fprintf(out, "]%s%s%s%s%s, %zu piece%s", t->role & TMAP_INPUT ? " input" : "",
                t->role & TMAP_OUTPUT ? " output" : "", t->role & TMAP_WEIGHT ? " weight" : "",
                t->role & TMAP_ACTIVATION ? " activation" : "", t->role & TMAP_TRANSIENT ? " (transient)" : "",
                t->n_pieces, t->n_pieces == 1 ? "" : "s");
        if (t->n_pieces)
            fprintf(out, ", first on tile %u at 0x%x", t->pieces[0].tile, t->pieces[0].addr);
        fprintf(out, "\n");
    }
}

/* What info shows, in the order a prefix is matched ("info r" is registers). */
const dbg_info_topic dbg_info_topics[] = {
    { "breakpoints", DA_NONE, "info breakpoints", "Breakpoints and watchpoints, their conditions and hits." },
    { "registers", DA_CONTEXT, "info registers [CONTEXT]", "A context's registers and non-zero CSRs." },
    { "tiles", DA_NONE, "info tiles [FIRST [COUNT]]",
      "Tiles with code: cycle, supervisor pc and state (COUNT, default 64, from the FIRST-th)." },
    { "supersteps", DA_NONE, "info supersteps", "The supersteps ended so far (the last 200)." },
    { "exchange", DA_NONE, "info exchange", "The selected tile's sends and receives in this exchange phase." },
    { "tensors", DA_NONE, "info tensors", "A compiled program's tensors, their roles and where they start." },
    { "memory", DA_NONE, "info memory", "The selected tile's memory: regions, sections, tensors placed there." },
    { "amp", DA_CONTEXT, "info amp [CONTEXT]",
      "The AMP: a context's accumulators ($aacc0-31, f32) and the tile's weights ($cwei0-127)." },
    { "frame", DA_CONTEXT, "info frame [CONTEXT]",
      "The selected context's frame: function, return address or vertex, rpt, when it issues next." },
    { "display", DA_NONE, "info display", "The expressions shown at every stop." },
    { "checkpoints", DA_NONE, "info checkpoints",
      "The machine states kept for going back: superstep, cycle, host memory each costs." },
};
const size_t dbg_n_info_topics = sizeof dbg_info_topics / sizeof dbg_info_topics[0];

/* help info */
void dbg_info_help(FILE *out)
{
    for (size_t i = 0; i < dbg_n_info_topics; i++)
        fprintf(out, "  %-28s %s\n", dbg_info_topics[i].usage, dbg_info_topics[i].help);
}

/* info WHAT (a prefix names it). */
enum debugger_result dbg_cmd_info(debugger *d, const char *args, FILE *out)
{
    char w[64];
    const char *rest = args;
    if (!dbg_next_word(&rest, w, sizeof w))
        return dbg_fail(out, "info needs what to show (help info lists them)");
    size_t n = strlen(w), which = dbg_n_info_topics;
    for (size_t i = 0; i < dbg_n_info_topics && which == dbg_n_info_topics; i++)
        if (!strncmp(w, dbg_info_topics[i].name, n))
            which = i;
    if (!strcmp(w, "watchpoints"))
        which = 0;
    if (which == dbg_n_info_topics)
        return dbg_fail(out, "info %s: expected one of breakpoints, registers, tiles, supersteps, exchange, tensors, "
                        "memory, amp, frame, display, checkpoints", w);
    const char *name = dbg_info_topics[which].name;
    if (dbg_info_topics[which].arg == DA_NONE && strcmp(name, "tiles") && !dbg_at_end(rest))
        return dbg_fail(out, "info %s takes no more arguments", name);
    if (!strcmp(name, "breakpoints"))
        dbg_info_breakpoints(d, out);
    else if (!strcmp(name, "registers"))
        return info_registers(d, rest, out);
    else if (!strcmp(name, "tiles"))
        return info_tiles(d, rest, out);
    else if (!strcmp(name, "supersteps"))
        info_supersteps(d, out);
    else if (!strcmp(name, "exchange"))
        info_exchange(d, out);
    else if (!strcmp(name, "tensors"))
        info_tensors(d, out);
    else if (!strcmp(name, "memory"))
        dbg_info_memory(d, out);
    else if (!strcmp(name, "frame"))
        return dbg_info_frame(d, rest, out);
    else if (!strcmp(name, "amp"))
        return dbg_info_amp(d, rest, out);
    else if (!strcmp(name, "display"))
        dbg_info_display(d, out);
    else
        dbg_info_checkpoints(d, out);
    return DEBUGGER_OK;
}

/* stats: the engine's statistics so far. */
enum debugger_result dbg_cmd_stats(debugger *d, const char *args, FILE *out)
{
    if (!dbg_at_end(args))
        return dbg_fail(out, "stats takes no arguments");
    engine_refresh_tile_stats(d->g);
    uint64_t instructions = 0, issues = 0, cycles = 0, f16 = 0, f32 = 0;
    size_t n = engine_tile_count(d->g);
    for (size_t i = 0; i < n; i++) {
        const ipu_tile *t = engine_tile_at(d->g, i);
        instructions += t->stats.instructions;
        issues += t->stats.issues;
        f16 += t->stats.amp_f16_macs;
        f32 += t->stats.amp_f32_macs;
    }
    cycles = dbg_latest_cycle(d);
    const engine_stats *s = engine_get_stats(d->g);
    fprintf(out, "%s: %zu tiles, %s\n", d->name, n,
            !d->started ? "not started" : engine_finished(d->g) ? "finished" : "stopped");
    fprintf(out, "  so far: %llu instructions, %llu issues, latest tile cycle %llu, %zu supersteps ended, "
            "%llu f16 + %llu f32 AMP MACs\n",
            (unsigned long long)instructions, (unsigned long long)issues, (unsigned long long)cycles,
            d->started ? s->n_supersteps : (size_t)0, (unsigned long long)f16, (unsigned long long)f32);
    const ipu_tile *t = dbg_cur_tile(d);
    fprintf(out, "  tile %u: cycle %llu, %llu instructions (%llu supervisor, %llu worker issues), %llu idle "
            "slot cycles, %llu exchange stall cycles, %llu syncs\n",
            d->tile, (unsigned long long)engine_tile_cycle(d->g, d->tile), (unsigned long long)t->stats.instructions,
            (unsigned long long)t->stats.supervisor_issues, (unsigned long long)t->stats.worker_issues,
            (unsigned long long)t->stats.idle_slot_cycles, (unsigned long long)t->stats.exchange_stall_cycles,
            (unsigned long long)t->stats.syncs);
    if (d->started && engine_finished(d->g) && s->chips) {
        for (uint32_t c = 0; c < s->n_chips; c++) {
            const engine_chip_stats *cs = &s->chips[c];
            if (!cs->tiles)
                continue;
            fprintf(out, "  chip %u: %llu cycles (%.3f us), %u supersteps, compute %llu, exchange %llu, sync %llu, "
                    "wait %llu cycles, AMP %.2f%%\n", c, (unsigned long long)cs->c.cycles, cs->seconds * 1e6,
                    cs->supersteps, (unsigned long long)cs->c.compute_cycles,
                    (unsigned long long)cs->c.exchange_cycles, (unsigned long long)cs->c.sync_cycles,
                    (unsigned long long)cs->c.wait_cycles, 100.0 * cs->amp_utilisation);
        }
    }
    return DEBUGGER_OK;
}
