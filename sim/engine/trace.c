/*
 * trace.c — the run as Chrome trace event JSON (opens in Perfetto and
 * chrome://tracing): engine_write_trace in engine.h.
 *
 * Layout: one process per chip with code ("chip N").  Its threads:
 *   1 supersteps          one span per superstep, its statistics in args;
 *   2 critical path       the busiest tile's compute / exchange / wait /
 *                         sync, back to back, filling each superstep;
 *   3 host out, 4 host in, 5 streaming memory write, 6 streaming memory
 *     read, 10 + c IPU-Link to chip c: the busy time of each off-chip
 *     transfer (channels are serialised, so spans never overlap);
 *   100 + t               tile t's run / exchange / idle / sync spans, for
 *                         the tiles asked for (engine_options.trace_tile_*).
 * A counter "running tiles" per chip counts the tiles issuing instructions
 * (not waiting at a sync): the aggregate view of all 1472 tiles.
 * Timestamps are microseconds with picosecond resolution.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "sim/base/fileio.h"
#include "sim/base/simtime.h"

static void ts(FILE *f, const char *key, uint64_t ps)
{
    fprintf(f, "\"%s\":%llu.%06llu", key, (unsigned long long)(ps / 1000000u), (unsigned long long)(ps % 1000000u));
}

static void span(FILE *f, bool *first, uint32_t pid, uint32_t tid, const char *name, uint64_t start_ps,
                 uint64_t end_ps, const char *args)
{
    fprintf(f, "%s\n{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,", *first ? "" : ",", name, pid, tid);
    ts(f, "ts", start_ps);
    fputc(',', f);
    ts(f, "dur", end_ps > start_ps ? end_ps - start_ps : 0);
    if (args && *args)
        fprintf(f, ",\"args\":{%s}", args);
    fputc('}', f);
    *first = false;
}

static void meta(FILE *f, bool *first, uint32_t pid, int tid, const char *what, const char *name)
{
    fprintf(f, "%s\n{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%u,", *first ? "" : ",", what, pid);
    if (tid >= 0)
        fprintf(f, "\"tid\":%d,", tid);
    fprintf(f, "\"args\":{\"name\":\"%s\"}}", name);
    *first = false;
}

typedef struct step { uint64_t ps; int32_t delta; } step;

static int cmp_step(const void *a, const void *b)
{
    const step *x = a, *y = b;
    if (x->ps != y->ps) return x->ps < y->ps ? -1 : 1;
    return x->delta < y->delta ? -1 : x->delta > y->delta;
}

static const char *const seg_names[] = { "run", "exchange", "idle", "sync" };

static void write_chip(const engine *g, FILE *f, bool *first, uint32_t c)
{
    const chip_state *cs = &g->chip[c];
    uint32_t pid = c + 1;
    char name[160], args[1024];
    snprintf(name, sizeof name, "chip %u (%.4g GHz, %zu tiles with code)", c, (double)cs->hz / 1e9, cs->end - cs->first);
    meta(f, first, pid, -1, "process_name", name);
    meta(f, first, pid, 1, "thread_name", "supersteps");
    meta(f, first, pid, 2, "thread_name", "critical path (busiest tile)");
    for (size_t k = 0; k < g->stats.n_supersteps; k++) {
        const engine_superstep *s = &g->stats.supersteps[k];
        if (s->chip != c)
            continue;
        snprintf(name, sizeof name, "superstep %u", s->index);
        snprintf(args, sizeof args,
                 "\"cycles\":%llu,\"ended_by\":\"%s\",\"busiest_tile\":%u,\"compute_cycles\":%llu,"
                 "\"exchange_cycles\":%llu,\"wait_cycles\":%llu,\"sync_cycles\":%llu,\"tile_idle_cycles\":%llu,"
                 "\"instructions\":%llu,\"amp_utilisation\":%.4f,\"exchange_bytes\":%llu,\"link_bytes\":%llu,"
                 "\"host_bytes\":%llu,\"stream_bytes\":%llu",
                 (unsigned long long)s->c.cycles, s->zone == 1 ? "sync 1" : s->zone == 2 ? "sync 2" : "end",
                 s->busiest_tile, (unsigned long long)s->c.compute_cycles, (unsigned long long)s->c.exchange_cycles,
                 (unsigned long long)s->c.wait_cycles, (unsigned long long)s->c.sync_cycles,
                 (unsigned long long)s->c.tile_idle_cycles, (unsigned long long)s->c.instructions,
                 s->amp_utilisation, (unsigned long long)s->c.exchange_bytes, (unsigned long long)s->c.link_bytes,
                 (unsigned long long)s->c.host_bytes, (unsigned long long)s->c.stream_bytes);
        span(f, first, pid, 1, name, s->start_ps, s->end_ps, args);
        static const char *const phase[] = { "compute", "exchange", "wait for other chips", "sync" };
        uint64_t len[4] = { s->c.compute_cycles, s->c.exchange_cycles, s->c.wait_cycles, s->c.sync_cycles };
        uint64_t at = s->start_cycle;
        for (int p = 0; p < 4; p++) {
            if (len[p])
                span(f, first, pid, 2, phase[p], simtime_cycles_to_ps(at, cs->hz),
                     simtime_cycles_to_ps(at + len[p], cs->hz), NULL);
            at += len[p];
        }
    }
    /* Off-chip transfers. */
    bool named[16 + 64] = { false };
    for (size_t k = 0; k < g->xch.n_spans; k++) {
        const xch_span *x = &g->xch.spans[k];
        if (x->chip != c)
            continue;
        int tid;
        switch (x->kind) {
        case XCH_SPAN_HOST_OUT: tid = 3; snprintf(name, sizeof name, "host out %u", x->peer); break;
        case XCH_SPAN_HOST_IN: tid = 4; snprintf(name, sizeof name, "host in %u", x->peer); break;
        case XCH_SPAN_STREAM_WRITE: tid = 5; snprintf(name, sizeof name, "write buffer %u", x->peer); break;
        case XCH_SPAN_STREAM_READ: tid = 6; snprintf(name, sizeof name, "read buffer %u", x->peer); break;
        default: tid = 10 + (int)x->peer; snprintf(name, sizeof name, "to chip %u", x->peer); break;
        }
        if (tid < (int)(sizeof named) && !named[tid]) {
            static const char *const threads[] = { [3] = "host out", [4] = "host in",
                                                   [5] = "streaming memory write", [6] = "streaming memory read" };
            char tname[64];
            if (tid >= 10)
                snprintf(tname, sizeof tname, "IPU-Link to chip %d", tid - 10);
            else
                snprintf(tname, sizeof tname, "%s", threads[tid]);
            meta(f, first, pid, tid, "thread_name", tname);
            named[tid] = true;
        }
        char a[256];
        snprintf(a, sizeof a, "\"bytes\":%llu,\"tile\":%u,\"delivered_us\":%.6f", (unsigned long long)x->bytes,
                 x->tile, (double)x->end_ps / 1e6);
        span(f, first, pid, (uint32_t)tid, name, x->start_ps, x->start_ps + x->busy_ps, a);
    }
    /* Running tiles, and the tiles asked for one by one. */
    size_t n_steps = 0;
    for (size_t k = 0; k < g->n_segs; k++)
        n_steps += g->segs[k].kind == SEG_RUN && g->tiles[g->segs[k].tile].chip == c;
    step *steps = malloc((2 * n_steps + 1) * sizeof *steps);
    if (!steps)
        return;
    size_t ns = 0;
    for (size_t k = 0; k < g->n_segs; k++) {
        const segment *sg = &g->segs[k];
        const etile *et = &g->tiles[sg->tile];
        if (et->chip != c)
            continue;
        uint64_t a = simtime_cycles_to_ps(sg->start_cycle, cs->hz), b = simtime_cycles_to_ps(sg->end_cycle, cs->hz);
        if (sg->kind == SEG_RUN) {
            steps[ns++] = (step){ a, +1 };
            steps[ns++] = (step){ b, -1 };
        }
        if (et->tile_id >= g->opt.trace_tile_first && et->tile_id <= g->opt.trace_tile_last) {
            span(f, first, pid, 100 + et->tile_id, seg_names[sg->kind], a, b, NULL);
        }
    }
    for (size_t i = cs->first; i < cs->end; i++) {
        const etile *et = &g->tiles[i];
        if (et->tile_id >= g->opt.trace_tile_first && et->tile_id <= g->opt.trace_tile_last) {
            snprintf(name, sizeof name, "tile %u", et->tile_id);
            meta(f, first, pid, (int)(100 + et->tile_id), "thread_name", name);
        }
    }
    qsort(steps, ns, sizeof *steps, cmp_step);
    long running = 0;
    for (size_t k = 0; k < ns;) {
        uint64_t at = steps[k].ps;
        while (k < ns && steps[k].ps == at)
            running += steps[k++].delta;
        fprintf(f, ",\n{\"name\":\"running tiles\",\"ph\":\"C\",\"pid\":%u,", pid);
        ts(f, "ts", at);
        fprintf(f, ",\"args\":{\"tiles\":%ld}}", running);
    }
    free(steps);
}

bool engine_write_trace(const engine *g, const char *path, char *err, size_t err_size)
{
    atomic_file af;
    if (!afile_open(&af, path, err, err_size))
        return false;
    FILE *f = af.fp;
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"machine\":\"%s\",\"time_unit\":\"us\"},"
               "\"traceEvents\":[", g->m.name);
    bool first = true;
    for (uint32_t c = 0; c < g->chips; c++)
        if (g->chip[c].end > g->chip[c].first)
            write_chip(g, f, &first, c);
    fprintf(f, "\n]}\n");
    return afile_commit(&af, err, err_size);
}
