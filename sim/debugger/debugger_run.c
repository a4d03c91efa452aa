/*
 * debugger_run.c — running the program: run, continue, stepi and
 * next-superstep, each a resume of the engine that goes on until a stop
 * the user asked for.  The engine's pauses (a pc, a cycle, a watched
 * change, a superstep end, an issue of the stepped tile, an interrupt) are
 * matched to the breakpoints here, one function per kind of pause.
 */
#include "debugger_internal.h"

#include <string.h>

/* The latest cycle any tile has reached. */
static uint64_t max_tile_cycle(const debugger *d)
{
    uint64_t c = 0;
    for (size_t i = 0; i < engine_tile_count(d->g); i++)
        if (engine_tile_at(d->g, i)->s.cycle > c)
            c = engine_tile_at(d->g, i)->s.cycle;
    return c;
}

/* How a resume ended: a stepi's step, a stop shown to the user, the end of
 * the run, or a refusal. */
enum stop { STOP_STEP, STOP_SHOWN, STOP_END, STOP_ERROR };

/* The end of a run: its totals, the simulated exception (whose tile and
 * context become the selection) or why the engine stopped. */
static void report_end(debugger *d, enum engine_status st, FILE *out)
{
    if (st == ENGINE_DONE) {
        const engine_stats *s = engine_get_stats(d->g);
        uint64_t cycles = 0;
        for (uint32_t c = 0; c < s->n_chips; c++)
            if (s->chips[c].c.cycles > cycles)
                cycles = s->chips[c].c.cycles;
        fprintf(out, "The program ended: %llu cycles, %llu instructions, %zu supersteps.\n",
                (unsigned long long)cycles, (unsigned long long)s->instructions, s->n_supersteps);
        return;
    }
    if (st == ENGINE_FAULT) {
        for (size_t i = 0; i < engine_tile_count(d->g); i++) {
            const ipu_tile *t = engine_tile_at(d->g, i);
            if (t->s.fault.exception != ISA_EXC_NONE) {
                d->tile = t->tile_id;
                d->context = t->s.fault.context;
                break;
            }
        }
        fprintf(out, "Simulated exception: %s\n", engine_message(d->g));
        return;
    }
    fprintf(out, "The program stopped: %s\n", engine_message(d->g));
}

/* A pc breakpoint's pause: the lowest-numbered breakpoint there, if any
 * (false: only a breakpoint since deleted was there; go on). */
static bool stop_at_breakpoint(debugger *d, const engine_pause *p, FILE *out)
{
    int id = 0;
    for (size_t i = 0; i < d->n_bps; i++)
        for (size_t k = 0; k < d->bps[i].n_locs; k++)
            if (d->bps[i].locs[k].tile == p->tile && d->bps[i].locs[k].pc == p->pc) {
                if (!id)
                    id = d->bps[i].id;
                d->bps[i].hits++;
                break;
            }
    if (!id)
        return false;
    d->tile = p->tile;
    d->context = p->context;
    fprintf(out, "Breakpoint %d, ", id);
    dbg_print_location(d, out, p->tile, p->context, p->pc);
    return true;
}

/* A tile reached the earliest cycle breakpoint: every cycle breakpoint it
 * passed fires (once per run). */
static bool stop_at_cycle(debugger *d, const engine_pause *p, FILE *out)
{
    int id = 0;
    for (size_t i = 0; i < d->n_bps; i++) {
        breakpoint *b = &d->bps[i];
        if (b->kind == BP_CYCLE && !b->passed && b->n <= p->cycle) {
            b->passed = true;
            b->hits++;
            if (!id)
                id = b->id;
        }
    }
    d->tile = p->tile;
    d->context = ISA_SUPERVISOR;
    fprintf(out, "Breakpoint %d, tile %u reached cycle %llu\n", id, p->tile, (unsigned long long)p->cycle);
    const ipu_tile *t = dbg_cur_tile(d);
    dbg_print_location(d, out, d->tile, d->context, t->s.ctx[ISA_SUPERVISOR].pc);
    return true;
}

/* A watchpoint's bytes changed (by an issue or by the exchange): the old
 * and new bytes, and where it happened. */
static bool stop_at_watch(debugger *d, const engine_pause *p, FILE *out)
{
    breakpoint *b = NULL;
    for (size_t i = 0; i < d->n_bps; i++)
        if (d->bps[i].id == d->watch_hit)
            b = &d->bps[i];
    if (!b)
        return false;
    b->hits++;
    fprintf(out, "Watchpoint %d, tile %u 0x%x (%u bytes) changed", b->id, b->tile, b->addr, b->bytes);
    if (p->tile == UINT32_MAX)
        fprintf(out, " by the exchange\n");
    else
        fprintf(out, "\n");
    fprintf(out, "  old:");
    for (uint32_t i = 0; i < b->bytes; i++)
        fprintf(out, " %02x", b->old[i]);
    fprintf(out, "\n  new:");
    for (uint32_t i = 0; i < b->bytes; i++)
        fprintf(out, " %02x", b->value[i]);
    fprintf(out, "\n");
    if (p->tile != UINT32_MAX) {
        d->tile = p->tile;
        d->context = p->context;
        fprintf(out, "after the issue at ");
        dbg_print_location(d, out, p->tile, p->context, p->pc);
    }
    return true;
}

/* Supersteps ended since the last look: a stop when one has a superstep
 * breakpoint or, for next-superstep, at the first of them. */
static bool stop_at_superstep(debugger *d, bool next_superstep, FILE *out)
{
    const engine_stats *s = engine_get_stats(d->g);
    const engine_superstep *hit = NULL;
    int id = 0;
    for (size_t i = d->ss_seen; i < s->n_supersteps; i++) {
        const engine_superstep *ss = &s->supersteps[i];
        for (size_t k = 0; k < d->n_bps; k++)
            if (d->bps[k].kind == BP_SUPERSTEP && d->bps[k].n == ss->index) {
                d->bps[k].hits++;
                if (!id)
                    id = d->bps[k].id;
                if (!hit)
                    hit = ss;
            }
        if (next_superstep && !hit)
            hit = ss;
    }
    d->ss_seen = s->n_supersteps;
    if (!hit)
        return false;
    if (id)
        fprintf(out, "Breakpoint %d, ", id);
    fprintf(out, "superstep %u of chip %u ended (%s) at cycle %llu\n", hit->index, hit->chip,
            hit->zone == 1 ? "sync 1" : hit->zone == 2 ? "sync 2" : "end of program",
            (unsigned long long)hit->end_cycle);
    return true;
}

/* Continue the engine to the next stop the user asked for. */
static enum stop resume(debugger *d, bool step, bool next_superstep, FILE *out)
{
    if (!d->started && !dbg_start(d, out))
        return STOP_ERROR;
    if (engine_finished(d->g)) {
        dbg_fail(out, "the program is not running (it has ended; 'run' starts it again)");
        return STOP_ERROR;
    }
    /* Superstep breakpoints look at the supersteps that end from now on. */
    d->ss_seen = engine_get_stats(d->g)->n_supersteps;
    for (;;) {
        dbg_configure(d, step, next_superstep);
        d->watch_hit = 0;
        enum engine_status st = engine_continue(d->g);
        if (st != ENGINE_PAUSED) {
            report_end(d, st, out);
            return STOP_END;
        }
        const engine_pause *p = engine_get_pause(d->g);
        bool stopped = true;
        switch (p->reason) {
        case ENGINE_PAUSE_BREAKPOINT: stopped = stop_at_breakpoint(d, p, out); break;
        case ENGINE_PAUSE_CYCLE: stopped = stop_at_cycle(d, p, out); break;
        case ENGINE_PAUSE_STEP:
            if (!step) {
                stopped = false;
                break;
            }
            d->context = p->context;
            return STOP_STEP;
        case ENGINE_PAUSE_CHECK: stopped = stop_at_watch(d, p, out); break;
        case ENGINE_PAUSE_SUPERSTEP: stopped = stop_at_superstep(d, next_superstep, out); break;
        case ENGINE_PAUSE_INTERRUPT:
            if (d->interrupt)
                *d->interrupt = 0;
            fprintf(out, "Interrupted at cycle %llu.\n", (unsigned long long)max_tile_cycle(d));
            break;
        case ENGINE_PAUSE_ACCESS:
        case ENGINE_PAUSE_NONE:
            break;
        }
        if (stopped)
            return STOP_SHOWN;
    }
}

/* run: a fresh engine, to the first stop. */
enum debugger_result dbg_cmd_run(debugger *d, const char *args, FILE *out)
{
    if (!dbg_at_end(args))
        return dbg_fail(out, "run takes no arguments (inputs are given to 'ipusim debug')");
    if (d->started) {
        char err[512];
        if (!dbg_new_engine(d, err, sizeof err))
            return dbg_fail(out, "%s", err);
    }
    fprintf(out, "Starting %s on %s (%zu tile%s with code).\n", d->name, d->m.name, engine_tile_count(d->g),
            engine_tile_count(d->g) == 1 ? "" : "s");
    return resume(d, false, false, out) == STOP_ERROR ? DEBUGGER_ERROR : DEBUGGER_OK;
}

/* continue [N] */
enum debugger_result dbg_cmd_continue(debugger *d, const char *args, FILE *out)
{
    uint64_t n;
    if (!dbg_parse_count(args, &n, out))
        return DEBUGGER_ERROR;
    for (uint64_t i = 0; i < n; i++) {
        enum stop s = resume(d, false, false, out);
        if (s == STOP_ERROR)
            return DEBUGGER_ERROR;
        if (s == STOP_END)
            break;
    }
    return DEBUGGER_OK;
}

/* stepi [N]: N issues of the selected tile, then where it is and what is next. */
enum debugger_result dbg_cmd_stepi(debugger *d, const char *args, FILE *out)
{
    uint64_t n;
    if (!dbg_parse_count(args, &n, out))
        return DEBUGGER_ERROR;
    const char *status = engine_tile_status(d->g, d->tile);
    if (d->started && status && (!strcmp(status, "ended") || !strcmp(status, "faulted")))
        return dbg_fail(out, "tile %u has %s", d->tile, !strcmp(status, "ended") ? "ended its program" : "faulted");
    for (uint64_t i = 0; i < n; i++) {
        enum stop s = resume(d, true, false, out);
        if (s == STOP_ERROR)
            return DEBUGGER_ERROR;
        if (s != STOP_STEP)
            return DEBUGGER_OK;
    }
    const engine_pause *p = engine_get_pause(d->g);
    dbg_print_location(d, out, d->tile, p->context, p->pc);
    const ipu_tile *t = dbg_cur_tile(d);
    const isa_context *c = &t->s.ctx[p->context];
    if (c->run_mode == ISA_RUN_RUNNING || c->run_mode == ISA_RUN_SYNC) {
        char where[320];
        dbg_symbolize(d, d->tile, c->pc, where, sizeof where);
        fprintf(out, "next: pc 0x%x%s\n", c->pc, where);
    }
    return DEBUGGER_OK;
}

/* next-superstep: to the end of the next superstep. */
enum debugger_result dbg_cmd_next_superstep(debugger *d, const char *args, FILE *out)
{
    if (!dbg_at_end(args))
        return dbg_fail(out, "next-superstep takes no arguments");
    return resume(d, false, true, out) == STOP_ERROR ? DEBUGGER_ERROR : DEBUGGER_OK;
}
