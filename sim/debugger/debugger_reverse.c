/*
 * debugger_reverse.c — going back in time: checkpoints of the machine taken
 * at superstep ends, and goto superstep N, reverse-next-superstep,
 * reverse-stepi and reverse-continue, each by restoring the nearest
 * checkpoint before the point wanted and running forward again.
 *
 * The engine is deterministic (the same pauses, values and cycles however
 * a run is paused and on any number of host threads), so re-running from a
 * checkpoint reaches exactly the state the first run had.  BSP makes the
 * superstep ends natural checkpoints: every tile is at a barrier or ended,
 * no exchange is in flight.  A checkpoint shares the tile memory pages and
 * other large arrays that did not change since the previous one
 * (engine_checkpoint_take), so it costs what the superstep changed.
 *
 * Which checkpoints are taken: one at the start of the run, then at
 * superstep ends — every `checkpoint_every` supersteps when the user says
 * so (debugger_options), else once the host time spent running since the
 * last checkpoint is DEBUGGER_CHECKPOINT_RUN_PER_TAKE times what taking
 * that one took, which keeps taking them (and the pages the run then copies) to a few per cent of the run (a
 * program that changes little between supersteps gets one at every
 * superstep).  Which checkpoints exist then depends on the host's speed;
 * what going back reaches does not (the run is deterministic), and
 * --checkpoint-every N fixes them.  Their host bytes stay within `checkpoint_budget_bytes`:
 * past it every other one (never the first) is dropped and the interval
 * doubles, so a long run keeps checkpoints spread over all of it.
 *
 * Positions.  A point of the run is ordered by (supersteps ended in the
 * whole system, instructions issued by every tile so far): both only grow
 * as the run goes on.  reverse-continue replays the interval between the
 * latest checkpoint before now and now with the breakpoints on, counting
 * the stops (not shown), then replays again to the last of them; with none
 * it looks in the interval before, and so on back to the start.  While a
 * replay runs, breakpoints neither stop nor count hits.
 */
#include "debugger_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef dbg_position position;

static int cmp_position(position a, position b)
{
    if (a.supersteps != b.supersteps)
        return a.supersteps < b.supersteps ? -1 : 1;
    return a.issues < b.issues ? -1 : a.issues > b.issues;
}

/* Issues a tile has made so far (from its per-address counts). */
static uint64_t tile_issues(const ipu_tile *t)
{
    uint64_t n = 0;
    size_t words = (t->code_end - t->code_base) / 4;
    for (size_t i = 0; t->counts && i < words; i++)
        n += t->counts[i];
    return n;
}

static position position_now(const debugger *d)
{
    position p = { d->started ? engine_get_stats(d->g)->n_supersteps : 0, 0 };
    for (size_t i = 0; i < engine_tile_count(d->g); i++)
        p.issues += tile_issues(engine_tile_at(d->g, i));
    return p;
}

bool dbg_checkpointing(const debugger *d)
{
    return !d->opt.no_checkpoints && d->started;
}

/* Host seconds, for the cost of checkpoints. */
static double host_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- taking and dropping ---------------------------------------------------- */

/* Drop checkpoint i. */
static void drop_checkpoint(debugger *d, size_t i)
{
    d->ckpt_bytes -= d->ckpts[i].bytes;
    engine_checkpoint_free(d->ckpts[i].c);
    memmove(&d->ckpts[i], &d->ckpts[i + 1], (d->n_ckpts - i - 1) * sizeof *d->ckpts);
    d->n_ckpts--;
}

void dbg_drop_checkpoints(debugger *d)
{
    while (d->n_ckpts)
        drop_checkpoint(d, d->n_ckpts - 1);
    free(d->ckpts);
    d->ckpts = NULL;
    d->cap_ckpts = 0;
    d->ckpt_interval = d->opt.checkpoint_every ? d->opt.checkpoint_every : 1;
}

/* Keep the checkpoints' bytes within the budget: drop every other one
 * (the first stays) and take them half as often. */
static void thin_checkpoints(debugger *d)
{
    while (d->ckpt_bytes > d->opt.checkpoint_budget_bytes && d->n_ckpts > 2) {
        for (size_t i = d->n_ckpts - 2; i >= 1; i -= (i >= 2 ? 2 : 1)) {
            drop_checkpoint(d, i);
            if (i < 2)
                break;
        }
        d->ckpt_interval *= 2;
    }
}

/* A checkpoint of the engine now. */
static void take_checkpoint(debugger *d)
{
    position now = position_now(d);
    if (d->n_ckpts && !cmp_position(d->ckpts[d->n_ckpts - 1].at, now))
        return;
    if (d->n_ckpts == d->cap_ckpts) {
        size_t cap = d->cap_ckpts ? 2 * d->cap_ckpts : 64;
        dbg_checkpoint *grown = realloc(d->ckpts, cap * sizeof *grown);
        if (!grown)
            return;
        d->ckpts = grown;
        d->cap_ckpts = cap;
    }
    char err[256];
    const engine_checkpoint *base = d->n_ckpts ? d->ckpts[d->n_ckpts - 1].c : NULL;
    double t0 = host_now_s();
    engine_checkpoint *c = engine_checkpoint_take(d->g, base, err, sizeof err);
    d->ckpt_done_s = host_now_s();
    d->ckpt_take_s = d->ckpt_done_s - t0;
    if (!c)
        return;
    dbg_checkpoint *k = &d->ckpts[d->n_ckpts++];
    k->c = c;
    k->at = now;
    k->bytes = engine_checkpoint_bytes(c);
    k->cycle = dbg_latest_cycle(d);
    d->ckpt_bytes += k->bytes;
    thin_checkpoints(d);
}

void dbg_checkpoint_at_start(debugger *d)
{
    d->ckpt_interval = d->opt.checkpoint_every ? d->opt.checkpoint_every : 1;
    if (!d->opt.no_checkpoints)
        take_checkpoint(d);
}

void dbg_checkpoint_at_superstep(debugger *d)
{
    if (d->opt.no_checkpoints || d->replay_no_checkpoints)
        return;
    size_t n = engine_get_stats(d->g)->n_supersteps;
    const dbg_checkpoint *last = d->n_ckpts ? &d->ckpts[d->n_ckpts - 1] : NULL;
    if (last && n < last->at.supersteps + d->ckpt_interval)
        return;
    if (last && !d->opt.checkpoint_every && host_now_s() - d->ckpt_done_s < DEBUGGER_CHECKPOINT_RUN_PER_TAKE * d->ckpt_take_s)
        return;
    take_checkpoint(d);
}

void dbg_checkpoint_at_end(debugger *d)
{
    if (!d->opt.no_checkpoints && !d->replay_no_checkpoints && engine_finished(d->g))
        take_checkpoint(d);
}

/* info checkpoints */
void dbg_info_checkpoints(debugger *d, FILE *out)
{
    if (d->opt.no_checkpoints) {
        fprintf(out, "Checkpoints are off (--checkpoint-every 0).\n");
        return;
    }
    if (!d->n_ckpts) {
        fprintf(out, "No checkpoints yet (the first is taken when the run starts).\n");
        return;
    }
    char every[96];
    if (d->opt.checkpoint_every)
        snprintf(every, sizeof every, "one every %u supersteps", d->ckpt_interval);
    else
        snprintf(every, sizeof every, "at least %u supersteps and %d times the time taking one takes apart",
                 d->ckpt_interval, DEBUGGER_CHECKPOINT_RUN_PER_TAKE);
    fprintf(out, "%zu checkpoints, %.1f MiB of host memory (budget %.0f MiB), %s\n", d->n_ckpts,
            d->ckpt_bytes / 1048576.0, d->opt.checkpoint_budget_bytes / 1048576.0, every);
    fprintf(out, "%4s %12s %14s %18s %12s\n", "Num", "supersteps", "latest cycle", "issues", "own KiB");
    for (size_t i = 0; i < d->n_ckpts; i++) {
        const dbg_checkpoint *k = &d->ckpts[i];
        fprintf(out, "%4zu %12zu %14llu %18llu %12.1f\n", i, k->at.supersteps, (unsigned long long)k->cycle,
                (unsigned long long)k->at.issues, k->bytes / 1024.0);
    }
}

/* ---- replaying --------------------------------------------------------------- */

/* Put the engine back to checkpoint i, and the debugger's view of the run
 * with it (supersteps looked at, cycle breakpoints passed, the bytes
 * change watchpoints compare with). */
static bool restore(debugger *d, size_t i, FILE *out)
{
    char err[256];
    if (!engine_checkpoint_restore(d->g, d->ckpts[i].c, err, sizeof err)) {
        dbg_fail(out, "cannot restore checkpoint %zu: %s", i, err);
        return false;
    }
    d->ss_seen = engine_get_stats(d->g)->n_supersteps;
    uint64_t latest = dbg_latest_cycle(d);
    for (size_t b = 0; b < d->n_bps; b++) {
        if (d->bps[b].kind == BP_CYCLE)
            d->bps[b].passed = d->bps[b].n <= latest;
        if (d->bps[b].kind == BP_WATCH)
            dbg_snapshot_watch(d, &d->bps[b]);
    }
    return true;
}

/* The latest checkpoint at or before p (the first is at the start). */
static size_t checkpoint_before(const debugger *d, position p)
{
    size_t best = 0;
    for (size_t i = 0; i < d->n_ckpts; i++)
        if (cmp_position(d->ckpts[i].at, p) <= 0)
            best = i;
    return best;
}

/* Whether the run can be gone back in. */
static bool check_reversible(debugger *d, const char *cmd, FILE *out)
{
    if (!d->started) {
        dbg_fail(out, "%s: the program has not run yet ('run' starts it)", cmd);
        return false;
    }
    if (!d->n_ckpts) {
        dbg_fail(out, "%s: no checkpoints (they are off: --checkpoint-every 0)", cmd);
        return false;
    }
    return true;
}

/* Run forward, no breakpoint stopping, until the position is at least
 * `until` (supersteps) — at a superstep end. */
static enum dbg_stop replay_supersteps(debugger *d, size_t until, FILE *out)
{
    enum dbg_stop s = STOP_SHOWN;
    d->replaying = true;
    while (engine_get_stats(d->g)->n_supersteps < until && !engine_finished(d->g)) {
        s = dbg_resume(d, false, true, out);
        if (s != STOP_SHOWN || engine_get_pause(d->g)->reason != ENGINE_PAUSE_SUPERSTEP)
            break;
    }
    d->replaying = false;
    return s;
}

/* The index in the superstep table of superstep `index` of chip, or -1. */
static long find_superstep(const debugger *d, uint32_t chip, uint64_t index)
{
    const engine_stats *s = engine_get_stats(d->g);
    for (size_t i = 0; i < s->n_supersteps; i++)
        if (s->supersteps[i].chip == chip && s->supersteps[i].index == index)
            return (long)i;
    return -1;
}

/* Go to the end of superstep `index` of the selected tile's chip. */
static enum debugger_result goto_superstep(debugger *d, uint64_t index, FILE *out)
{
    uint32_t chip = d->tile / machine_u32(&d->m, MP_tiles_per_chip);
    long at = find_superstep(d, chip, index);
    if (at < 0) {
        /* Not reached yet: run forward to it. */
        if (engine_finished(d->g))
            return dbg_fail(out, "chip %u has no superstep %llu (it ran %u)", chip, (unsigned long long)index,
                            engine_supersteps_done(d->g, chip));
        d->replaying = true;
        enum dbg_stop s;
        do {
            s = dbg_resume(d, false, true, out);
        } while (s == STOP_SHOWN && find_superstep(d, chip, index) < 0 && !engine_finished(d->g));
        d->replaying = false;
        at = find_superstep(d, chip, index);
        if (at < 0)
            return s == STOP_ERROR ? DEBUGGER_ERROR
                                   : dbg_fail(out, "chip %u has no superstep %llu (it ran %u)", chip,
                                              (unsigned long long)index, engine_supersteps_done(d->g, chip));
    } else {
        size_t target = (size_t)at + 1;
        size_t k = checkpoint_before(d, (position){ target, UINT64_MAX });
        if (!restore(d, k, out))
            return DEBUGGER_ERROR;
        if (replay_supersteps(d, target, out) == STOP_ERROR)
            return DEBUGGER_ERROR;
    }
    const engine_superstep *ss = &engine_get_stats(d->g)->supersteps[at];
    fprintf(out, "At the end of superstep %u of chip %u (%s) at cycle %llu.\n", ss->index, ss->chip,
            ss->zone == 1 ? "sync 1" : ss->zone == 2 ? "sync 2" : "end of program", (unsigned long long)ss->end_cycle);
    dbg_show_displays(d, out);
    return DEBUGGER_OK;
}

/* goto superstep N */
enum debugger_result dbg_cmd_goto(debugger *d, const char *args, FILE *out)
{
    char w[64], num[64];
    const char *rest = args;
    uint64_t n;
    if (!dbg_next_word(&rest, w, sizeof w) || strcmp(w, "superstep") || !dbg_next_word(&rest, num, sizeof num) ||
        !dbg_parse_u64(num, &n) || !dbg_at_end(rest))
        return dbg_fail(out, "goto needs 'superstep N'");
    if (!check_reversible(d, "goto", out))
        return DEBUGGER_ERROR;
    return goto_superstep(d, n, out);
}

/* reverse-next-superstep: to the end of the superstep before the last one
 * that ended on the selected tile's chip (or the run's start). */
enum debugger_result dbg_cmd_reverse_next_superstep(debugger *d, const char *args, FILE *out)
{
    if (!dbg_at_end(args))
        return dbg_fail(out, "reverse-next-superstep takes no arguments");
    if (!check_reversible(d, "reverse-next-superstep", out))
        return DEBUGGER_ERROR;
    uint32_t chip = d->tile / machine_u32(&d->m, MP_tiles_per_chip);
    uint32_t done = engine_supersteps_done(d->g, chip);
    const engine_stats *s = engine_get_stats(d->g);
    const engine_pause *p = engine_get_pause(d->g);
    /* At the very end of the last superstep (a superstep stop, or the end
     * of the run): go to the one before it. */
    bool at_end = engine_finished(d->g) ||
                  (p->reason == ENGINE_PAUSE_SUPERSTEP && s->n_supersteps && s->supersteps[s->n_supersteps - 1].chip == chip);
    if (done < (at_end ? 2u : 1u)) {
        if (!restore(d, 0, out))
            return DEBUGGER_ERROR;
        fprintf(out, "At the start of the run.\n");
        dbg_show_displays(d, out);
        return DEBUGGER_OK;
    }
    return goto_superstep(d, done - (at_end ? 2u : 1u), out);
}

/* Step the selected tile forward from a restored checkpoint until it has
 * made `issues` issues. */
static enum dbg_stop replay_issues(debugger *d, uint64_t issues, FILE *out)
{
    enum dbg_stop s = STOP_STEP;
    d->replaying = true;
    while (tile_issues(dbg_cur_tile(d)) < issues) {
        s = dbg_resume(d, true, false, out);
        if (s != STOP_STEP)
            break;
    }
    d->replaying = false;
    return s;
}

/* reverse-stepi [N] */
enum debugger_result dbg_cmd_reverse_stepi(debugger *d, const char *args, FILE *out)
{
    uint64_t n;
    if (!dbg_parse_count(args, &n, out) || !check_reversible(d, "reverse-stepi", out))
        return DEBUGGER_ERROR;
    uint64_t now = tile_issues(dbg_cur_tile(d));
    if (now == 0)
        return dbg_fail(out, "tile %u has not issued anything yet", d->tile);
    uint64_t want = now > n ? now - n : 0;
    unsigned context = d->context;
    /* The latest checkpoint where the tile had not gone past `want`. */
    size_t k = checkpoint_before(d, position_now(d));
    for (;;) {
        if (!restore(d, k, out))
            return DEBUGGER_ERROR;
        if (tile_issues(dbg_cur_tile(d)) <= want || k == 0)
            break;
        k--;
    }
    enum dbg_stop s = replay_issues(d, want, out);
    if (s == STOP_ERROR)
        return DEBUGGER_ERROR;
    if (tile_issues(dbg_cur_tile(d)) != want) {
        fprintf(out, "Went back to the checkpoint before: tile %u has made %llu issues there.\n", d->tile,
                (unsigned long long)tile_issues(dbg_cur_tile(d)));
        return DEBUGGER_OK;
    }
    if (want == 0) {
        d->context = ISA_SUPERVISOR;
        fprintf(out, "At the start of the run: tile %u has issued nothing yet.\n", d->tile);
    } else if (s != STOP_STEP) {
        d->context = context;
        dbg_print_location(d, out, d->tile, d->context, dbg_cur_tile(d)->s.ctx[d->context].pc);
    } else {
        d->context = engine_get_pause(d->g)->context;
        dbg_show_step(d, out);
    }
    dbg_show_displays(d, out);
    return DEBUGGER_OK;
}

/* Replay from checkpoint k with the breakpoints on, counting the stops
 * before `before` (not shown); the count. */
static size_t count_stops(debugger *d, size_t k, position before, FILE *out)
{
    if (!restore(d, k, out))
        return 0;
    size_t n = 0;
    FILE *sink = fopen("/dev/null", "w");
    d->replay_no_checkpoints = true;
    for (;;) {
        enum dbg_stop s = dbg_resume(d, false, false, sink ? sink : out);
        if (s != STOP_SHOWN || engine_get_pause(d->g)->reason == ENGINE_PAUSE_INTERRUPT ||
            cmp_position(position_now(d), before) >= 0)
            break;
        n++;
    }
    d->replay_no_checkpoints = false;
    if (sink)
        fclose(sink);
    return n;
}

static enum debugger_result reverse_continue(debugger *d, FILE *out);

/* reverse-continue: back to the last breakpoint or watchpoint stop before now. */
enum debugger_result dbg_cmd_reverse_continue(debugger *d, const char *args, FILE *out)
{
    if (!dbg_at_end(args))
        return dbg_fail(out, "reverse-continue takes no arguments");
    if (!check_reversible(d, "reverse-continue", out))
        return DEBUGGER_ERROR;
    /* Going back to a stop does not count it again. */
    uint64_t hits[MAX_BREAKPOINTS];
    for (size_t i = 0; i < d->n_bps; i++)
        hits[i] = d->bps[i].hits;
    enum debugger_result r = reverse_continue(d, out);
    for (size_t i = 0; i < d->n_bps; i++)
        d->bps[i].hits = hits[i];
    return r;
}

/* reverse-continue's search, interval by interval back from now. */
static enum debugger_result reverse_continue(debugger *d, FILE *out)
{
    position before = position_now(d);
    size_t k = checkpoint_before(d, before);
    if (!cmp_position(d->ckpts[k].at, before) && k > 0)
        k--;
    for (;;) {
        size_t n = count_stops(d, k, before, out);
        if (n) {
            if (!restore(d, k, out))
                return DEBUGGER_ERROR;
            FILE *sink = fopen("/dev/null", "w");
            d->replay_no_checkpoints = true;
            for (size_t i = 0; i + 1 < n; i++)
                dbg_resume(d, false, false, sink ? sink : out);
            if (sink)
                fclose(sink);
            dbg_resume(d, false, false, out);
            d->replay_no_checkpoints = false;
            dbg_show_displays(d, out);
            return DEBUGGER_OK;
        }
        if (k == 0)
            break;
        before = d->ckpts[k].at;
        k--;
    }
    if (!restore(d, 0, out))
        return DEBUGGER_ERROR;
    fprintf(out, "No breakpoint stopped the run before; at the start of the run.\n");
    dbg_show_displays(d, out);
    return DEBUGGER_OK;
}
