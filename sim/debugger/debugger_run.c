/*
 * debugger_run.c — running the program: run, continue, stepi and
 * next-superstep, each a resume of the engine that goes on until a stop
 * the user asked for.  The engine's pauses (a pc, a cycle, a watched
 * change or access, a superstep end, an issue of the stepped tile, an
 * interrupt) are matched to the breakpoints here, one function per kind of
 * pause; a breakpoint whose condition does not hold lets the run go on,
 * and the superstep ends are where checkpoints are taken
 * (debugger_reverse.c).  next, step, until and finish are in
 * debugger_step.c.
 */
#include "debugger_internal.h"

#include <string.h>

/* The latest cycle any tile stands at (engine_tile_cycle). */
uint64_t dbg_latest_cycle(const debugger *d)
{
    uint64_t c = 0;
    for (size_t i = 0; i < engine_tile_count(d->g); i++) {
        uint64_t at = engine_tile_cycle(d->g, engine_tile_at(d->g, i)->tile_id);
        if (at > c)
            c = at;
    }
    return c;
}

/* "Breakpoint N, " (or "Temporary breakpoint N, ") before a stop's place;
 * nothing for one the debugger set for itself. */
static void print_bp_title(const breakpoint *b, FILE *out)
{
    if (!b->internal)
        fprintf(out, "%s %d, ", b->temporary ? "Temporary breakpoint" : "Breakpoint", b->id);
}

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

/* A pc breakpoint's pause: the lowest-numbered breakpoint there whose
 * condition holds (false: none does, or only one since deleted was there;
 * go on).  A breakpoint the debugger set for itself stops without a
 * number. */
static bool stop_at_breakpoint(debugger *d, const engine_pause *p, FILE *out)
{
    const breakpoint *hit = NULL;
    for (size_t i = 0; i < d->n_bps; i++)
        for (size_t k = 0; k < d->bps[i].n_locs; k++)
            if (d->bps[i].locs[k].tile == p->tile && d->bps[i].locs[k].pc == p->pc) {
                if (dbg_condition_holds(d, &d->bps[i], p->tile, p->context, out)) {
                    d->bps[i].hits++;
                    if (!hit || (hit->internal && !d->bps[i].internal))
                        hit = &d->bps[i];
                }
                break;
            }
    if (!hit)
        return false;
    d->tile = p->tile;
    d->context = p->context;
    print_bp_title(hit, out);
    dbg_print_location(d, out, p->tile, p->context, p->pc);
    return true;
}

/* A tile reached the earliest cycle breakpoint: every cycle breakpoint it
 * passed fires (once per run) where its condition holds. */
static bool stop_at_cycle(debugger *d, const engine_pause *p, FILE *out)
{
    const breakpoint *hit = NULL;
    for (size_t i = 0; i < d->n_bps; i++) {
        breakpoint *b = &d->bps[i];
        if (b->kind == BP_CYCLE && !b->passed && b->n <= p->cycle) {
            b->passed = true;
            if (!dbg_condition_holds(d, b, p->tile, ISA_SUPERVISOR, out))
                continue;
            b->hits++;
            if (!hit)
                hit = b;
        }
    }
    if (!hit)
        return false;
    d->tile = p->tile;
    d->context = ISA_SUPERVISOR;
    print_bp_title(hit, out);
    fprintf(out, "tile %u reached cycle %llu\n", p->tile, (unsigned long long)p->cycle);
    const ipu_tile *t = dbg_cur_tile(d);
    dbg_print_location(d, out, d->tile, d->context, t->s.ctx[ISA_SUPERVISOR].pc);
    return true;
}

/* At a superstep end: a cycle breakpoint whose cycle a tile passed while
 * it waited at the barrier (its clock jumps to the release, so it never
 * runs at that cycle) fires there, on the lowest-numbered such tile. */
static bool stop_at_cycle_passed(debugger *d, FILE *out)
{
    const breakpoint *hit = NULL;
    uint32_t tile = 0;
    uint64_t at = 0;
    for (size_t i = 0; i < d->n_bps; i++) {
        breakpoint *b = &d->bps[i];
        if (b->kind != BP_CYCLE || b->passed)
            continue;
        for (size_t k = 0; k < engine_tile_count(d->g); k++) {
            uint32_t id = engine_tile_at(d->g, k)->tile_id;
            uint64_t c = engine_tile_cycle(d->g, id);
            if (c < b->n)
                continue;
            b->passed = true;
            if (dbg_condition_holds(d, b, id, ISA_SUPERVISOR, out)) {
                b->hits++;
                if (!hit) {
                    hit = b;
                    tile = id;
                    at = c;
                }
            }
            break;
        }
    }
    if (!hit)
        return false;
    d->tile = tile;
    d->context = ISA_SUPERVISOR;
    print_bp_title(hit, out);
    fprintf(out, "tile %u passed cycle %llu waiting at a barrier; it goes on at cycle %llu\n", tile,
            (unsigned long long)hit->n, (unsigned long long)at);
    dbg_print_location(d, out, tile, ISA_SUPERVISOR, dbg_cur_tile(d)->s.ctx[ISA_SUPERVISOR].pc);
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

/* A read or access watchpoint's access: the watchpoint it matches, the
 * access and the issue that made it. */
static bool stop_at_access(debugger *d, const engine_pause *p, FILE *out)
{
    breakpoint *hit = NULL;
    for (size_t i = 0; i < d->n_bps; i++) {
        breakpoint *b = &d->bps[i];
        if (b->kind == BP_WATCH && b->watch != WATCH_CHANGE && b->tile == p->tile &&
            p->access_addr < b->addr + b->bytes && b->addr < p->access_addr + p->access_bytes &&
            (!p->access_write || b->watch == WATCH_ACCESS)) {
            b->hits++;
            if (!hit)
                hit = b;
        }
    }
    if (!hit)
        return false;
    fprintf(out, "%s %d, tile %u 0x%x (%u bytes): %s of %u bytes at 0x%x\n",
            hit->watch == WATCH_READ ? "Read watchpoint" : "Access watchpoint", hit->id, hit->tile, hit->addr,
            hit->bytes, p->access_write ? "write" : "read", p->access_bytes, p->access_addr);
    d->tile = p->tile;
    d->context = p->context;
    fprintf(out, p->access_received ? "by the exchange: data received for the xrecv at " : "by the issue at ");
    dbg_print_location(d, out, p->tile, p->context, p->pc);
    return true;
}

/* What until EXPR or finish waited for happened (or a watched change). */
static bool stop_at_check(debugger *d, const engine_pause *p, FILE *out)
{
    switch (d->check_hit) {
    case CHECK_WATCH: return stop_at_watch(d, p, out);
    case CHECK_UNTIL:
        fprintf(out, "The condition of until holds on tile %u", d->tile);
        break;
    case CHECK_FINISH: {
        char name[24];
        fprintf(out, "Run till exit: %s of tile %u exited (its vertex returned)",
                dbg_context_name(d->finish_context, name, sizeof name), d->tile);
        d->context = ISA_SUPERVISOR;
        break;
    }
    default: return false;
    }
    const ipu_tile *t = dbg_cur_tile(d);
    if (p->tile == UINT32_MAX) {
        fprintf(out, " after an exchange, at cycle %llu\n", (unsigned long long)engine_tile_cycle(d->g, d->tile));
        return true;
    }
    fprintf(out, " after the issue at pc 0x%x\n", p->pc);
    dbg_print_location(d, out, d->tile, d->context, t->s.ctx[d->context].pc);
    return true;
}

/* Supersteps ended since the last look: a stop when one has a superstep
 * breakpoint (whose condition holds on the selected tile) or, for
 * next-superstep, at the first of them. */
static bool stop_at_superstep(debugger *d, bool next_superstep, FILE *out)
{
    const engine_stats *s = engine_get_stats(d->g);
    const engine_superstep *hit = NULL;
    const breakpoint *by = NULL;
    for (size_t i = d->ss_seen; i < s->n_supersteps; i++) {
        const engine_superstep *ss = &s->supersteps[i];
        for (size_t k = 0; k < d->n_bps; k++) {
            breakpoint *b = &d->bps[k];
            if (b->kind != BP_SUPERSTEP || b->n != ss->index || !dbg_condition_holds(d, b, d->tile, d->context, out))
                continue;
            b->hits++;
            if (!by)
                by = b;
            if (!hit)
                hit = ss;
        }
        if (next_superstep && !hit)
            hit = ss;
    }
    d->ss_seen = s->n_supersteps;
    if (!hit)
        return false;
    if (by)
        print_bp_title(by, out);
    fprintf(out, "superstep %u of chip %u ended (%s) at cycle %llu\n", hit->index, hit->chip,
            hit->zone == 1 ? "sync 1" : hit->zone == 2 ? "sync 2" : "end of program",
            (unsigned long long)hit->end_cycle);
    return true;
}

/* While a replay runs forward to a point (debugger_reverse.c), what a
 * pause does: 1 the replay goes on past it (breakpoints and watchpoints
 * neither stop it nor count; cycle breakpoints are marked passed), 0 it
 * stops there without a word (the step or superstep end it runs by), -1
 * as in any run (an interrupt).  Superstep ends take their checkpoints. */
static int replay_pause(debugger *d, const engine_pause *p, bool step, bool next_superstep)
{
    switch (p->reason) {
    case ENGINE_PAUSE_CYCLE:
        for (size_t i = 0; i < d->n_bps; i++)
            if (d->bps[i].kind == BP_CYCLE && d->bps[i].n <= p->cycle)
                d->bps[i].passed = true;
        return 1;
    case ENGINE_PAUSE_BREAKPOINT: return 1;
    case ENGINE_PAUSE_CHECK:
    case ENGINE_PAUSE_ACCESS:
        /* After an issue of the stepped tile, these pause instead of its
         * step: it is the step. */
        return step && p->tile == d->tile ? 0 : 1;
    case ENGINE_PAUSE_SUPERSTEP:
        dbg_checkpoint_at_superstep(d);
        d->ss_seen = engine_get_stats(d->g)->n_supersteps;
        return next_superstep ? 0 : 1;
    case ENGINE_PAUSE_STEP: return step ? 0 : 1;
    default: return -1;
    }
}

/* Continue the engine to the next stop the user asked for. */
enum dbg_stop dbg_resume(debugger *d, bool step, bool next_superstep, FILE *out)
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
        d->check_hit = CHECK_NONE;
        enum engine_status st = engine_continue(d->g);
        if (st != ENGINE_PAUSED) {
            report_end(d, st, out);
            dbg_checkpoint_at_end(d);
            return STOP_END;
        }
        const engine_pause *p = engine_get_pause(d->g);
        if (d->replaying) {
            int r = replay_pause(d, p, step, next_superstep);
            if (r > 0)
                continue;
            if (r == 0)
                return p->reason == ENGINE_PAUSE_SUPERSTEP ? STOP_SHOWN : STOP_STEP;
        }
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
        case ENGINE_PAUSE_CHECK: stopped = stop_at_check(d, p, out); break;
        case ENGINE_PAUSE_ACCESS: stopped = stop_at_access(d, p, out); break;
        case ENGINE_PAUSE_SUPERSTEP:
            dbg_checkpoint_at_superstep(d);
            stopped = stop_at_superstep(d, next_superstep, out);
            stopped = stop_at_cycle_passed(d, out) || stopped;
            break;
        case ENGINE_PAUSE_INTERRUPT:
            if (d->interrupt)
                *d->interrupt = 0;
            fprintf(out, "Interrupted at cycle %llu.\n", (unsigned long long)dbg_latest_cycle(d));
            break;
        case ENGINE_PAUSE_NONE:
            break;
        }
        if (stopped)
            return STOP_SHOWN;
    }
}

/* After a command that ran the program: temporary breakpoints that fired
 * go, and the displays are shown. */
enum debugger_result dbg_after_stop(debugger *d, enum dbg_stop s, FILE *out)
{
    dbg_remove_spent(d, false);
    if (s != STOP_ERROR && d->started)
        dbg_show_displays(d, out);
    return s == STOP_ERROR ? DEBUGGER_ERROR : DEBUGGER_OK;
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
    return dbg_after_stop(d, dbg_resume(d, false, false, out), out);
}

/* continue [N] */
enum debugger_result dbg_cmd_continue(debugger *d, const char *args, FILE *out)
{
    uint64_t n;
    if (!dbg_parse_count(args, &n, out))
        return DEBUGGER_ERROR;
    enum dbg_stop s = STOP_SHOWN;
    for (uint64_t i = 0; i < n && s == STOP_SHOWN; i++) {
        s = dbg_resume(d, false, false, out);
        dbg_remove_spent(d, false);
    }
    return dbg_after_stop(d, s, out);
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
        enum dbg_stop s = dbg_resume(d, true, false, out);
        if (s != STOP_STEP)
            return dbg_after_stop(d, s, out);
    }
    dbg_show_step(d, out);
    return dbg_after_stop(d, STOP_STEP, out);
}

/* A step that ends where context k of the selected tile is about to issue
 * at a breakpoint: the breakpoint is reported now ("Breakpoint N, " before
 * the location the caller prints, its hit counted) and that issue goes
 * ahead at the next resume instead of stopping again. */
bool dbg_arrive_at_breakpoint(debugger *d, unsigned k, FILE *out)
{
    ipu_tile *t = engine_tile_mut(d->g, d->tile);
    const isa_context *c = &t->s.ctx[k];
    if (c->run_mode != ISA_RUN_RUNNING || !tile_breakpoint_at(t, c->pc))
        return false;
    breakpoint *hit = NULL;
    for (size_t i = 0; i < d->n_bps; i++)
        for (size_t j = 0; j < d->bps[i].n_locs; j++)
            if (!d->bps[i].internal && d->bps[i].locs[j].tile == d->tile && d->bps[i].locs[j].pc == c->pc &&
                dbg_condition_holds(d, &d->bps[i], d->tile, k, out)) {
                d->bps[i].hits++;
                if (!hit)
                    hit = &d->bps[i];
            }
    if (!hit)
        return false;
    t->break_pc = c->pc;
    t->break_context = (uint8_t)k;
    t->break_skip = true;
    print_bp_title(hit, out);
    return true;
}

/* Where a step stopped: the issue it made and what comes next (a
 * breakpoint there is reported). */
void dbg_show_step(debugger *d, FILE *out)
{
    const engine_pause *p = engine_get_pause(d->g);
    if (dbg_arrive_at_breakpoint(d, p->context, out)) {
        const isa_context *c = &dbg_cur_tile(d)->s.ctx[p->context];
        d->context = p->context;
        dbg_print_location(d, out, d->tile, p->context, c->pc);
        return;
    }
    dbg_print_location(d, out, d->tile, p->context, p->pc);
    const ipu_tile *t = dbg_cur_tile(d);
    const isa_context *c = &t->s.ctx[p->context];
    if (c->run_mode == ISA_RUN_RUNNING || c->run_mode == ISA_RUN_SYNC) {
        char where[320];
        dbg_symbolize(d, d->tile, c->pc, where, sizeof where);
        fprintf(out, "next: pc 0x%x%s\n", c->pc, where);
    }
}

/* next-superstep: to the end of the next superstep. */
enum debugger_result dbg_cmd_next_superstep(debugger *d, const char *args, FILE *out)
{
    if (!dbg_at_end(args))
        return dbg_fail(out, "next-superstep takes no arguments");
    return dbg_after_stop(d, dbg_resume(d, false, true, out), out);
}
