/*
 * debugger_step.c — running by the program's own structure: next and step
 * (to the selected context's next source line, over or into calls), until
 * (past a loop's end, to a location, or until an expression holds) and
 * finish (until a worker's vertex returns).
 *
 * A source line is the assembler's line record for the pc (exe_line_at);
 * code without line records steps one issue at a time.  `next` over a call
 * sets a breakpoint of its own at the return address and runs to it;
 * another breakpoint met on the way stops there, as in gdb.  until EXPR and
 * finish make the selected tile run one cycle at a time with the engine's
 * check after each of its issues (debugger_breakpoints.c: dbg_check).
 */
#include "debugger_internal.h"

#include <stdlib.h>
#include <string.h>

#include "debugger_expr.h"

/* The source line of pc on the selected tile; false where there is none. */
static bool line_of(const debugger *d, uint32_t pc, const char **file, uint32_t *line)
{
    return exe_line_at(d->e, d->tile, pc, file, line);
}

/* Refuse to step a context that is not running. */
static bool check_running(debugger *d, const char *cmd, FILE *out)
{
    if (!d->started || engine_finished(d->g)) {
        dbg_fail(out, "%s: the program is not running ('run' starts it)", cmd);
        return false;
    }
    const isa_context *c = &dbg_cur_tile(d)->s.ctx[d->context];
    if (c->run_mode != ISA_RUN_RUNNING && !(d->context == ISA_SUPERVISOR && c->run_mode == ISA_RUN_SYNC)) {
        char name[24];
        dbg_fail(out, "%s: %s of tile %u is %s", cmd, dbg_context_name(d->context, name, sizeof name), d->tile,
                 dbg_run_mode_name(c->run_mode));
        return false;
    }
    return true;
}

/* The hits of the user's breakpoints so far (the debugger's own not counted). */
static uint64_t user_hits(const debugger *d)
{
    uint64_t n = 0;
    for (size_t i = 0; i < d->n_bps; i++)
        if (!d->bps[i].internal)
            n += d->bps[i].hits;
    return n;
}

/* Run a call the context k just issued to its return address ret: a
 * breakpoint of the debugger's own there.  Arriving there is a step of
 * next (STOP_STEP, nothing shown: the caller shows where the step ended);
 * any other stop on the way (a breakpoint of the user's, at ret too, a
 * watchpoint, the end) is shown and returned. */
static enum dbg_stop over_call(debugger *d, unsigned k, uint32_t ret, FILE *out)
{
    if (!dbg_internal_break(d, d->tile, ret))
        return STOP_STEP;
    enum dbg_stop s;
    for (;;) {
        char *text = NULL;
        size_t len = 0;
        FILE *buf = open_memstream(&text, &len);
        uint64_t hits = user_hits(d);
        s = dbg_resume(d, false, false, buf ? buf : out);
        if (buf)
            fclose(buf);
        const engine_pause *p = engine_get_pause(d->g);
        bool at_ret = s == STOP_SHOWN && p->reason == ENGINE_PAUSE_BREAKPOINT && p->tile == d->tile &&
                      p->pc == ret && user_hits(d) == hits;
        if (!at_ret && text)
            fwrite(text, 1, len, out);
        free(text);
        if (!at_ret)
            break;
        if (p->context == k) {
            s = STOP_STEP;
            break;
        }
    }
    dbg_remove_spent(d, true);
    d->context = k;
    return s;
}

/* One next/step/until: run context k of the selected tile until it issues
 * from another source line (until: a later one, past the loop it is in). */
static enum dbg_stop step_line(debugger *d, bool over_calls, bool forward_only, FILE *out)
{
    unsigned k = d->context;
    const ipu_tile *t = dbg_cur_tile(d);
    uint32_t start_pc = t->s.ctx[k].pc, line = 0;
    const char *file = NULL;
    bool has_line = line_of(d, start_pc, &file, &line);
    for (;;) {
        enum dbg_stop s = dbg_resume(d, true, false, out);
        if (s != STOP_STEP)
            return s;
        const engine_pause *p = engine_get_pause(d->g);
        d->context = k;
        if (p->context != k)
            continue;
        const isa_context *c = &t->s.ctx[k];
        if (c->run_mode != ISA_RUN_RUNNING && c->run_mode != ISA_RUN_SYNC)
            return STOP_STEP;
        const tile_decoded *issued = tile_decoded_at(t, p->pc);
        if (over_calls && issued && issued->main.op == ISA_OP_CALL) {
            s = over_call(d, k, p->pc + issued->bytes, out);
            if (s != STOP_STEP)
                return s;
        }
        /* A sync leaves the pc on it until the barrier releases and the
         * next instruction issues: run to just before that one. */
        if (issued && issued->main.op == ISA_OP_SYNC && c->pc == p->pc) {
            s = over_call(d, k, p->pc + issued->bytes, out);
            if (s != STOP_STEP)
                return s;
        }
        const char *f;
        uint32_t l;
        bool moved = !has_line || !line_of(d, c->pc, &f, &l) || l != line || strcmp(f, file);
        if (moved && (!forward_only || c->pc > start_pc))
            return STOP_STEP;
    }
}

/* next [N] / step [N] / until: N source lines of the selected context. */
static enum debugger_result step_lines(debugger *d, const char *args, const char *cmd, bool over_calls,
                                       bool forward_only, FILE *out)
{
    uint64_t n;
    if (!dbg_parse_count(args, &n, out) || !check_running(d, cmd, out))
        return DEBUGGER_ERROR;
    unsigned k = d->context;
    enum dbg_stop s = STOP_STEP;
    for (uint64_t i = 0; i < n && s == STOP_STEP; i++)
        s = step_line(d, over_calls, forward_only, out);
    if (s == STOP_STEP) {
        char name[24];
        const isa_context *c = &dbg_cur_tile(d)->s.ctx[k];
        if (c->run_mode != ISA_RUN_RUNNING && c->run_mode != ISA_RUN_SYNC)
            fprintf(out, "%s of tile %u exited.\n", dbg_context_name(k, name, sizeof name), d->tile);
        else
            dbg_arrive_at_breakpoint(d, k, out);
        dbg_print_location(d, out, d->tile, k, c->pc);
    }
    return dbg_after_stop(d, s, out);
}

enum debugger_result dbg_cmd_next(debugger *d, const char *args, FILE *out)
{
    return step_lines(d, args, "next", true, false, out);
}

enum debugger_result dbg_cmd_step(debugger *d, const char *args, FILE *out)
{
    return step_lines(d, args, "step", false, false, out);
}

/* Whether until's argument is a location (else it is an expression):
 * superstep N, cycle N, TILE:ADDR, TILE:SYMBOL, an address, or a symbol. */
static bool is_location(const debugger *d, const char *args)
{
    char w[128];
    const char *rest = args;
    if (!dbg_next_word(&rest, w, sizeof w))
        return false;
    if (!strcmp(w, "superstep") || !strcmp(w, "cycle"))
        return true;
    if (!dbg_at_end(rest))
        return false;
    uint32_t v;
    char *colon = strchr(w, ':');
    if (colon) {
        *colon = 0;
        return dbg_parse_u32(w, &v);
    }
    if (dbg_parse_u32(w, &v))
        return true;
    for (size_t i = 0; i < d->e->n_symbols; i++)
        if (!strcmp(d->e->symbols[i].name, w))
            return true;
    return false;
}

/* until [LOCATION | EXPR] */
enum debugger_result dbg_cmd_until(debugger *d, const char *args, FILE *out)
{
    if (dbg_at_end(args))
        return step_lines(d, args, "until", true, true, out);
    enum dbg_stop s;
    if (is_location(d, args)) {
        if (!dbg_until_location(d, args, out))
            return DEBUGGER_ERROR;
        s = dbg_resume(d, false, false, out);
        dbg_remove_spent(d, true);
    } else {
        char err[256];
        dbg_expr *e = dbg_expr_parse(d, dbg_skip_blanks(args), err, sizeof err);
        if (!e)
            return dbg_fail(out, "until: %s", err);
        if (!d->started && !dbg_start(d, out)) {
            dbg_expr_free(e);
            return DEBUGGER_ERROR;
        }
        d->until_expr = e;
        s = dbg_resume(d, false, false, out);
        d->until_expr = NULL;
        dbg_expr_free(e);
    }
    return dbg_after_stop(d, s, out);
}

/* finish: a worker to its exit; the supervisor to the superstep's end. */
enum debugger_result dbg_cmd_finish(debugger *d, const char *args, FILE *out)
{
    if (!dbg_at_end(args))
        return dbg_fail(out, "finish takes no arguments");
    if (!check_running(d, "finish", out))
        return DEBUGGER_ERROR;
    enum dbg_stop s;
    if (d->context == ISA_SUPERVISOR) {
        fprintf(out, "Run till the end of the superstep (the supervisor runs the tile's program).\n");
        s = dbg_resume(d, false, true, out);
    } else {
        char name[24];
        fprintf(out, "Run till exit from %s of tile %u.\n", dbg_context_name(d->context, name, sizeof name), d->tile);
        d->finishing = true;
        d->finish_context = d->context;
        s = dbg_resume(d, false, false, out);
        d->finishing = false;
    }
    return dbg_after_stop(d, s, out);
}
