/*
 * test_checkpoint.c — machine checkpoints (sim/engine/engine.h,
 * "Checkpoints"): a two-chip program with workers, exchange on a chip and
 * between chips, host streams and streaming memory, checkpointed at every
 * superstep's end; a restored checkpoint is the state of a fresh run paused
 * there (every register, memory byte, issue count, the engine's and the
 * exchange's bookkeeping, statistics so far), and goes on to the same end
 * (statistics, host outputs, memory, trace).  Restores in any order, frees
 * in any order, copy on write of shared pages, what shares with the base,
 * the refusals, and a compiled matmul.
 */
#include <CUnit/CUnit.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontends/lower.h"
#include "isa/asm/asm.h"
#include "sim/base/fileio.h"
#include "sim/engine/engine.h"
#include "sim/engine/engine_internal.h"
#include "sim/engine/program_io.h"
#include "sim/program/machine.h"
#include "workloads/models/models.h"
#include "test_util.h"

/* ---- the program -------------------------------------------------------------------- */

#define ROUNDS 3

/* On an M2000, three tiles on each of chips 0 and 1.  Each tile reads 16
 * bytes from its host stream and its streaming-memory buffer (sync 3),
 * then ROUNDS times: six workers count and store, the supervisor sends 16
 * bytes round its chip's ring (sync 1: the chips go at their own pace);
 * then (sync 2) sends what it received to the same tile of the other chip,
 * and (sync 2) the worker counts to its host stream and the other chip's
 * data to its buffer. */
static char *two_chip_src(void)
{
    static const uint32_t tiles[6] = { 0, 1, 2, 1472, 1473, 1474 };
    static const uint32_t work[6] = { 4, 9, 5, 30, 3, 11 };
    size_t cap = 16384, len = 0;
    char *s = malloc(cap);
#define OUT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__))
    OUT(".macro TILE t, k, next, prev, peer, work\n"
        " .tile \\t\n"
        " .text\n"
        "__supervisor:\n"
        " setzi $m8, %u\n"
        " setzi $m1, worker\n"
        " setzi $m2, counts\n"
        " setzi $m4, 16\n"
        " setzi $m0, hbuf\n"
        " setzi $m5, 0x80000\n"
        " shl $m5, $m5, 12\n"
        " or $m5, $m5, \\k\n"
        " xrecv $m0, $m4, $m5\n"
        " setzi $m0, bbuf\n"
        " setzi $m5, 0x40000\n"
        " shl $m5, $m5, 12\n"
        " or $m5, $m5, \\k\n"
        " xrecv $m0, $m4, $m5\n"
        " sync 3\n"
        "loop:\n"
        " runall $m1, $m2, $m4\n"
        " sync 0\n"
        " setzi $m3, sbuf\n"
        " setzi $m5, \\next\n"
        " setzi $m6, rbuf\n"
        " setzi $m7, \\prev\n"
        " xsend $m3, $m4, $m5\n"
        " xrecv $m6, $m4, $m7\n"
        " sync 1\n"
        " add $m8, $m8, -1\n"
        " brnz $m8, loop\n"
        " sync 2\n"
        " setzi $m3, rbuf\n"
        " setzi $m5, \\peer\n"
        " setzi $m6, xbuf\n"
        " xrecv $m6, $m4, $m5\n"
        " xsend $m3, $m4, $m5\n"
        " sync 2\n"
        " setzi $m3, counts\n"
        " setzi $m0, 96\n"
        " setzi $m5, 0x80000\n"
        " shl $m5, $m5, 12\n"
        " or $m5, $m5, \\k\n"
        " xsend $m3, $m0, $m5\n"
        " setzi $m3, xbuf\n"
        " setzi $m5, 0x40000\n"
        " shl $m5, $m5, 12\n"
        " or $m5, $m5, \\k\n"
        " xsend $m3, $m4, $m5\n"
        " sync 3\n"
        " exitz $mzero\n"
        "worker:\n"
        " setzi $m0, \\work\n"
        "1: add $m2, $m2, 1\n"
        " brnzdec $m0, 1b\n"
        " st32 $m2, $m13, $mzero, 0\n"
        " exitz $mzero\n"
        " .data\n"
        "sbuf: .word \\t + 1, \\t, \\k, \\work\n"
        "rbuf: .space 16\n"
        "hbuf: .space 16\n"
        "bbuf: .space 16\n"
        "xbuf: .space 16\n"
        "counts: .space 96\n"
        ".endm\n", ROUNDS);
    for (unsigned k = 0; k < 6; k++) {
        unsigned chip = k / 3, j = k % 3;
        OUT("TILE %u, %u, %u, %u, %u, %u\n", tiles[k], k, tiles[chip * 3 + (j + 1) % 3],
            tiles[chip * 3 + (j + 2) % 3], tiles[(k + 3) % 6], work[k]);
    }
#undef OUT
    return s;
}

typedef struct run {
    ipu_exe *e;
    machine m;
    engine *g;
} run;

/* Host stream k and buffer k: 16 bytes each. */
static void feed(engine *g)
{
    char err[256];
    for (uint32_t k = 0; k < 6; k++) {
        uint32_t in[4] = { 100 + k, 200 + k, 300 + k, 400 + k }, buf[4] = { 0xb0 + k, 0xb1, 0xb2, 0xb3 };
        CU_ASSERT_TRUE(engine_set_host_input(g, k, in, sizeof in));
        CU_ASSERT_TRUE(engine_set_stream_buffer(g, k, buf, sizeof buf, err, sizeof err));
    }
}

/* The program started, pausing at every superstep's end, with a trace. */
static run start_two_chips(void)
{
    run r;
    memset(&r, 0, sizeof r);
    char err[4096];
    char *src = two_chip_src();
    r.e = asm_assemble_string(src, "test.S", NULL, err, sizeof err);
    free(src);
    if (!r.e)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.e);
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &r.m, err, sizeof err));
    r.g = engine_new(&r.m, r.e, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.g);
    feed(r.g);
    engine_options o = { .threads = 1, .record_trace = true, .trace_tile_first = 0, .trace_tile_last = 1473 };
    CU_ASSERT_EQUAL_FATAL(engine_start(r.g, &o), ENGINE_DONE);
    engine_debug d = { .superstep_end = true };
    engine_set_debug(r.g, &d);
    return r;
}

static void free_run(run *r)
{
    engine_free(r->g);
    exe_free(r->e);
}

/* ---- the whole state, as bytes ------------------------------------------------------- */

/* The state laid out field by field (no padding), with labels saying
 * where each part starts, to name the first difference. */
typedef struct dump {
    uint8_t *b;
    size_t n, cap;
    size_t *mark_at;
    char (*mark)[64];
    size_t n_marks, cap_marks;
} dump;

static void put(dump *d, const void *p, size_t len)
{
    if (!len)
        return;
    if (d->n + len > d->cap) {
        d->cap = (d->n + len) * 2;
        d->b = realloc(d->b, d->cap);
    }
    memcpy(d->b + d->n, p, len);
    d->n += len;
}

#define PUT(d, v) put((d), &(v), sizeof(v))

static __attribute__((format(printf, 2, 3))) void mark(dump *d, const char *fmt, ...)
{
    if (d->n_marks == d->cap_marks) {
        d->cap_marks = d->cap_marks ? 2 * d->cap_marks : 64;
        d->mark_at = realloc(d->mark_at, d->cap_marks * sizeof *d->mark_at);
        d->mark = realloc(d->mark, d->cap_marks * sizeof *d->mark);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->mark[d->n_marks], sizeof d->mark[0], fmt, ap);
    va_end(ap);
    d->mark_at[d->n_marks++] = d->n;
}

static void free_dump(dump *d)
{
    free(d->b);
    free(d->mark_at);
    free(d->mark);
    memset(d, 0, sizeof *d);
}

/* FNV-1a over 64-bit words (n a multiple of 8). */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    return h;
}

/* A tile's architectural state: every context's registers, the AMP, the
 * clock, the fault, and its memory (a hash of every page's bytes). */
static void dump_tile_arch(dump *d, const ipu_tile *t)
{
    for (unsigned k = 0; k < ISA_CONTEXTS; k++) {
        const isa_context *c = &t->s.ctx[k];
        mark(d, "tile %u context %u", t->tile_id, k);
        PUT(d, c->m);
        PUT(d, c->a);
        PUT(d, c->pc);
        PUT(d, c->csr);
        PUT(d, c->id);
        PUT(d, c->run_mode);
        PUT(d, c->rpt_first);
        PUT(d, c->rpt_end);
        PUT(d, c->rpt_remaining);
        PUT(d, c->pending_a);
        PUT(d, c->pending_a_mask);
        PUT(d, c->exit_status);
        PUT(d, c->prng);
        PUT(d, c->amp.aacc);
    }
    const isa_tile_state *s = &t->s;
    mark(d, "tile %u amp, clock, fault", t->tile_id);
    PUT(d, s->amp.cwei);
    PUT(d, s->amp.f16_stale);
    PUT(d, s->amp.f16_phase);
    PUT(d, s->tile_id);
    PUT(d, s->cycle);
    PUT(d, s->issue_bytes);
    PUT(d, s->started_workers);
    PUT(d, s->sync_zone);
    PUT(d, s->trap_code);
    PUT(d, s->fault.exception);
    PUT(d, s->fault.context);
    PUT(d, s->fault.pc);
    PUT(d, s->fault.word);
    PUT(d, s->fault.address);
    put(d, s->fault.message, strlen(s->fault.message));
    mark(d, "tile %u memory", t->tile_id);
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t p = 0; p < s->mem.size_bytes / TMEM_PAGE_BYTES; p++)
        if (tmem_page(&s->mem, (uint32_t)p)) {
            h = hash_bytes(h, &p, sizeof p);
            h = hash_bytes(h, tmem_page(&s->mem, (uint32_t)p), TMEM_PAGE_BYTES);
        }
    PUT(d, h);
    PUT(d, s->mem.pages_allocated);
}

/* Its issue state: counts, totals, the barrel, breakpoints, statistics. */
static void dump_tile_issue(dump *d, const ipu_tile *t)
{
    mark(d, "tile %u issue counts", t->tile_id);
    uint64_t h = hash_bytes(0xcbf29ce484222325ull, t->counts, (t->code_end - t->code_base) / 4 * sizeof *t->counts);
    PUT(d, h);
    mark(d, "tile %u issue state", t->tile_id);
    PUT(d, t->issued_instructions);
    PUT(d, t->issued_amp_macs);
    PUT(d, t->slot_owner);
    PUT(d, t->slot);
    PUT(d, t->ready_cycle);
    PUT(d, t->loaded);
    PUT(d, t->break_pc);
    PUT(d, t->break_context);
    PUT(d, t->break_skip);
    mark(d, "tile %u stats", t->tile_id);
    PUT(d, t->stats);
}

/* The engine's bookkeeping of a tile, and its open exchange phase. */
static void dump_etile(dump *d, const engine *g, const etile *et)
{
    mark(d, "tile %u bookkeeping", et->tile_id);
    PUT(d, et->tile_id);
    PUT(d, et->chip);
    PUT(d, et->group);
    PUT(d, et->state);
    PUT(d, et->zone);
    PUT(d, et->stop);
    PUT(d, et->phase_open);
    PUT(d, et->ran);
    PUT(d, et->stall_mark);
    PUT(d, et->resume_cycle);
    PUT(d, et->run_start);
    PUT(d, et->stop_cycle);
    PUT(d, et->run_stall);
    PUT(d, et->eff_cycle);
    PUT(d, et->sent_cycle);
    PUT(d, et->instructions);
    PUT(d, et->amp_f16_macs);
    PUT(d, et->amp_f32_macs);
    PUT(d, et->ss_compute);
    PUT(d, et->ss_exchange);
    PUT(d, et->instr_mark);
    PUT(d, et->f16_mark);
    PUT(d, et->f32_mark);
    PUT(d, et->compute_total);
    PUT(d, et->run_cycles);
    const char *status = engine_tile_status(g, et->tile_id);
    put(d, status, strlen(status) + 1);
    mark(d, "tile %u exchange log", et->tile_id);
    const xch_log *l = &et->log;
    PUT(d, l->n_sends);
    PUT(d, l->n_recvs);
    PUT(d, l->data_bytes);
    PUT(d, l->phase_started);
    PUT(d, l->system_tiles);
    for (size_t i = 0; i < l->n_sends + l->n_recvs; i++) {
        const xch_transfer *x = i < l->n_sends ? &l->sends[i] : &l->recvs[i - l->n_sends];
        PUT(d, x->pc);
        PUT(d, x->addr);
        PUT(d, x->bytes);
        PUT(d, x->endpoint);
        PUT(d, x->issue_cycle);
        PUT(d, x->start_cycle);
        PUT(d, x->data_offset);
    }
    put(d, l->data, l->data_bytes);
}

static void dump_superstep(dump *d, const engine_superstep *s)
{
    PUT(d, s->chip);
    PUT(d, s->index);
    PUT(d, s->zone);
    PUT(d, s->busiest_tile);
    PUT(d, s->start_cycle);
    PUT(d, s->end_cycle);
    PUT(d, s->start_ps);
    PUT(d, s->end_ps);
    PUT(d, s->amp_utilisation);
    PUT(d, s->c);
}

/* The statistics so far (all but host time). */
static void dump_stats(dump *d, const engine *g)
{
    const engine_stats *st = engine_get_stats(g);
    mark(d, "stats");
    PUT(d, st->n_chips);
    PUT(d, st->n_supersteps);
    PUT(d, st->end_ps);
    PUT(d, st->tile_cycles);
    PUT(d, st->instructions);
    PUT(d, st->host_threads);
    PUT(d, st->batches);
    PUT(d, st->parallel_batches);
    for (size_t k = 0; k < st->n_supersteps; k++) {
        mark(d, "superstep %zu", k);
        dump_superstep(d, &st->supersteps[k]);
    }
    for (uint32_t c = 0; st->chips && c < st->n_chips; c++) {
        const engine_chip_stats *cs = &st->chips[c];
        mark(d, "chip %u totals", c);
        PUT(d, cs->chip);
        PUT(d, cs->tiles);
        PUT(d, cs->clock_hz);
        PUT(d, cs->supersteps);
        PUT(d, cs->busiest_tile);
        PUT(d, cs->end_ps);
        PUT(d, cs->seconds);
        PUT(d, cs->amp_utilisation);
        PUT(d, cs->c);
    }
}

/* The engine's own state: chips, sync groups, events, releases, runnable
 * tiles, stepping state, trace. */
static void dump_loop(dump *d, const engine *g)
{
    for (uint32_t c = 0; c < g->chips; c++) {
        const chip_state *cs = &g->chip[c];
        mark(d, "chip %u", c);
        PUT(d, cs->first);
        PUT(d, cs->end);
        PUT(d, cs->hz);
        PUT(d, cs->barrier_ready);
        PUT(d, cs->done);
        PUT(d, cs->finished);
        PUT(d, cs->ss_start_cycle);
        PUT(d, cs->ss_start_ps);
        PUT(d, cs->n_supersteps);
        PUT(d, cs->xch_mark);
        uint32_t done = engine_supersteps_done(g, c);
        PUT(d, done);
    }
    mark(d, "groups");
    put(d, g->group_members, (g->chips + 1) * sizeof *g->group_members);
    put(d, g->group_active, (g->chips + 1) * sizeof *g->group_active);
    put(d, g->group_open, (g->chips + 1) * sizeof *g->group_open);
    PUT(d, g->barrier2_ready);
    mark(d, "events");
    PUT(d, g->n_heap);
    for (size_t i = 0; i < g->n_heap; i++) {
        PUT(d, g->heap[i].time_ps);
        PUT(d, g->heap[i].seq);
        PUT(d, g->heap[i].kind);
        PUT(d, g->heap[i].arg);
    }
    PUT(d, g->next_seq);
    mark(d, "releases");
    PUT(d, g->n_releases);
    for (size_t i = 0; i < g->n_releases; i++) {
        PUT(d, g->releases[i].group);
        PUT(d, g->releases[i].zone);
        PUT(d, g->releases[i].release_ps);
        PUT(d, g->releases[i].group_max_ps);
    }
    mark(d, "runnable");
    PUT(d, g->n_runnable);
    put(d, g->runnable, g->n_runnable * sizeof *g->runnable);
    PUT(d, g->min_resume_ps);
    mark(d, "status");
    PUT(d, g->status);
    put(d, g->message, strlen(g->message) + 1);
    PUT(d, g->ran);
    PUT(d, g->started);
    PUT(d, g->finished);
    PUT(d, g->batch_open);
    PUT(d, g->in_events);
    PUT(d, g->step_done);
    PUT(d, g->supersteps_seen);
    const engine_pause *p = engine_get_pause(g);
    PUT(d, p->reason);
    PUT(d, p->tile);
    PUT(d, p->context);
    PUT(d, p->pc);
    PUT(d, p->cycle);
    PUT(d, p->chip);
    PUT(d, p->superstep);
    mark(d, "trace segments");
    PUT(d, g->n_segs);
    for (size_t i = 0; i < g->n_segs; i++) {
        PUT(d, g->segs[i].tile);
        PUT(d, g->segs[i].kind);
        PUT(d, g->segs[i].start_cycle);
        PUT(d, g->segs[i].end_cycle);
    }
}

static void dump_streams(dump *d, const char *what, const xch_stream *s, size_t n)
{
    mark(d, "%s", what);
    PUT(d, n);
    for (size_t i = 0; i < n; i++) {
        PUT(d, s[i].index);
        PUT(d, s[i].size);
        PUT(d, s[i].cursor);
        put(d, s[i].data, s[i].size);
    }
}

/* The exchange: busy times, counters, spans, streams. */
static void dump_exchange(dump *d, const engine *g)
{
    const xch_system *x = &g->xch;
    size_t chips = g->chips, tiles = g->system_tiles;
    mark(d, "exchange channels");
    put(d, x->chip_hz, chips * sizeof *x->chip_hz);
    put(d, x->bus_free, tiles * sizeof *x->bus_free);
    put(d, x->port_free, tiles * sizeof *x->port_free);
    put(d, x->link_free_ps, chips * chips * sizeof *x->link_free_ps);
    put(d, x->host_free_ps, 2 * chips * sizeof *x->host_free_ps);
    put(d, x->stream_free_ps, 2 * chips * sizeof *x->stream_free_ps);
    mark(d, "exchange counters");
    put(d, x->chip_stats, chips * sizeof *x->chip_stats);
    PUT(d, x->stream_used_bytes);
    PUT(d, x->record_spans);
    mark(d, "exchange spans");
    PUT(d, x->n_spans);
    for (size_t i = 0; i < x->n_spans; i++) {
        const xch_span *s = &x->spans[i];
        PUT(d, s->chip);
        PUT(d, s->tile);
        PUT(d, s->peer);
        PUT(d, s->kind);
        PUT(d, s->bytes);
        PUT(d, s->start_ps);
        PUT(d, s->busy_ps);
        PUT(d, s->end_ps);
    }
    dump_streams(d, "host input", x->host_in.s, x->host_in.n);
    dump_streams(d, "host output", x->host_out.s, x->host_out.n);
    dump_streams(d, "streaming memory", x->buffers.s, x->buffers.n);
}

static dump dump_engine(const engine *g)
{
    dump d;
    memset(&d, 0, sizeof d);
    dump_loop(&d, g);
    dump_stats(&d, g);
    dump_exchange(&d, g);
    for (size_t i = 0; i < g->n_tiles; i++) {
        dump_tile_arch(&d, &g->tiles[i].x->t);
        dump_tile_issue(&d, &g->tiles[i].x->t);
        dump_etile(&d, g, &g->tiles[i]);
    }
    return d;
}

/* a and b hold the same bytes; else say where they first differ. */
static void expect_same(const dump *a, const dump *b, const char *what)
{
    size_t n = a->n < b->n ? a->n : b->n, i = 0;
    while (i < n && a->b[i] == b->b[i])
        i++;
    if (i == n && a->n == b->n) {
        CU_PASS("same state");
        return;
    }
    const char *where = "the start";
    for (size_t m = 0; m < a->n_marks && a->mark_at[m] <= i; m++)
        where = a->mark[m];
    fprintf(stderr, "\n%s: the states differ in %s (byte %zu of %zu / %zu)\n", what, where, i, a->n, b->n);
    CU_FAIL("different state");
}

static uint64_t dump_hash(const dump *d)
{
    return hash_bytes(0xcbf29ce484222325ull, d->b, d->n);
}

/* ---- 1. restored = a fresh run paused there ----------------------------------------- */

#define MAX_CKPT 64

/* Run r to its end, taking a checkpoint at the start, at each superstep's
 * end (the previous one its base) and at the end; the state hash at each. */
static size_t checkpoint_all(run *r, engine_checkpoint **ck, uint64_t *hash)
{
    char err[512];
    size_t n = 0;
    for (;;) {
        ck[n] = engine_checkpoint_take(r->g, n ? ck[n - 1] : NULL, err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ck[n]);
        dump d = dump_engine(r->g);
        hash[n++] = dump_hash(&d);
        free_dump(&d);
        if (engine_finished(r->g) || n == MAX_CKPT)
            break;
        enum engine_status st = engine_continue(r->g);
        if (st != ENGINE_PAUSED && st != ENGINE_DONE)
            fprintf(stderr, "\nengine status %d: %s\n", (int)st, engine_message(r->g));
        CU_ASSERT_TRUE_FATAL(st == ENGINE_PAUSED || st == ENGINE_DONE);
    }
    return n;
}

/* A fresh run paused at its k-th stop (0: just started). */
static run fresh_at(size_t k)
{
    run r = start_two_chips();
    for (size_t i = 0; i < k; i++)
        CU_ASSERT_EQUAL(engine_continue(r.g), i < 9 ? ENGINE_PAUSED : ENGINE_DONE);
    return r;
}

static char *trace_of(const engine *g, const char *name)
{
    char path[256], err[512];
    snprintf(path, sizeof path, "/tmp/ipusim_test_checkpoint_%d_%s.json", (int)getpid(), name);
    CU_ASSERT_TRUE(engine_write_trace(g, path, err, sizeof err));
    size_t size;
    char *text = NULL;
    CU_ASSERT_TRUE(read_file_limited(path, READ_LIMIT_SOURCE, NULL, 0, &text, &size, err, sizeof err));
    remove(path);
    CU_ASSERT_PTR_NOT_NULL(text);
    return text;
}

static void test_restore_is_fresh_run(void)
{
    run a = start_two_chips();
    engine_checkpoint *ck[MAX_CKPT];
    uint64_t hash[MAX_CKPT];
    size_t n = checkpoint_all(&a, ck, hash);
    /* 6 supersteps on each chip (3 rings, 2 system syncs, the end): 9
     * pauses (a system sync ends a superstep of both chips at once), and
     * the start and the end of the run. */
    CU_ASSERT_EQUAL_FATAL(n, 11);
    CU_ASSERT_EQUAL(engine_get_stats(a.g)->n_supersteps, 12);
    CU_ASSERT_EQUAL(engine_checkpoint_supersteps(ck[0], 0), 0);
    CU_ASSERT_EQUAL(engine_checkpoint_end_ps(ck[0]), 0);
    CU_ASSERT_FALSE(engine_checkpoint_finished(ck[9]));
    CU_ASSERT_TRUE(engine_checkpoint_finished(ck[10]));
    CU_ASSERT_EQUAL(engine_checkpoint_supersteps(ck[10], 0), 6);
    CU_ASSERT_EQUAL(engine_checkpoint_supersteps(ck[10], 1), 6);
    CU_ASSERT_EQUAL(engine_checkpoint_supersteps(ck[10], 2), 0);
    CU_ASSERT_EQUAL(engine_checkpoint_end_ps(ck[10]), engine_get_stats(a.g)->end_ps);
    /* Chip 1's first ring ends second, at cycle 3591. */
    CU_ASSERT_EQUAL(engine_checkpoint_supersteps(ck[2], 0), 1);
    CU_ASSERT_EQUAL(engine_checkpoint_supersteps(ck[2], 1), 1);
    CU_ASSERT_EQUAL(engine_checkpoint_cycle(ck[2], 1), 3591);
    dump end_a = dump_engine(a.g);
    char *trace_a = trace_of(a.g, "a");
    for (size_t k = 0; k < n; k++) {
        char err[512];
        CU_ASSERT_TRUE_FATAL(engine_checkpoint_restore(a.g, ck[k], err, sizeof err));
        const engine_pause *p = engine_checkpoint_pause(ck[k]);
        if (k > 0 && k < 10) {
            CU_ASSERT_EQUAL(p->reason, ENGINE_PAUSE_SUPERSTEP);
            CU_ASSERT_EQUAL(engine_checkpoint_supersteps(ck[k], p->chip), p->superstep + 1);
            CU_ASSERT_EQUAL(engine_checkpoint_cycle(ck[k], p->chip), p->cycle);
        }
        run b = fresh_at(k);
        dump da = dump_engine(a.g), db = dump_engine(b.g);
        char what[64];
        snprintf(what, sizeof what, "checkpoint %zu", k);
        expect_same(&da, &db, what);
        CU_ASSERT_EQUAL(dump_hash(&da), hash[k]);
        free_dump(&da);
        free_dump(&db);
        /* Both go on to the same end, pausing at the same supersteps. */
        for (;;) {
            enum engine_status sa = engine_continue(a.g), sb = engine_continue(b.g);
            CU_ASSERT_EQUAL_FATAL(sa, sb);
            if (sa != ENGINE_PAUSED)
                break;
            CU_ASSERT_EQUAL(engine_get_pause(a.g)->superstep, engine_get_pause(b.g)->superstep);
            CU_ASSERT_EQUAL(engine_get_pause(a.g)->chip, engine_get_pause(b.g)->chip);
        }
        CU_ASSERT_EQUAL(engine_get_stats(a.g)->n_supersteps, 12);
        da = dump_engine(a.g);
        db = dump_engine(b.g);
        snprintf(what, sizeof what, "the end from checkpoint %zu", k);
        expect_same(&da, &db, what);
        expect_same(&da, &end_a, what);
        char *trace_b = trace_of(a.g, "b");
        CU_ASSERT_STRING_EQUAL(trace_a, trace_b);
        free(trace_b);
        free_dump(&da);
        free_dump(&db);
        free_run(&b);
    }
    /* Host output 0: tile 0's six workers' counts. */
    size_t size;
    const uint8_t *out = engine_host_output(a.g, 0, &size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(size, 96);
    free(trace_a);
    free_dump(&end_a);
    for (size_t k = 0; k < n; k++)
        engine_checkpoint_free(ck[k]);
    free_run(&a);
}

/* ---- 2. restores in any order, frees in any order ---------------------------------- */

static void expect_hash(engine *g, const engine_checkpoint *c, uint64_t want)
{
    char err[512];
    CU_ASSERT_TRUE_FATAL(engine_checkpoint_restore(g, c, err, sizeof err));
    dump d = dump_engine(g);
    CU_ASSERT_EQUAL(dump_hash(&d), want);
    free_dump(&d);
}

static void test_any_order(void)
{
    run a = start_two_chips();
    engine_checkpoint *ck[MAX_CKPT];
    uint64_t hash[MAX_CKPT];
    size_t n = checkpoint_all(&a, ck, hash);
    CU_ASSERT_EQUAL_FATAL(n, 11);
    static const size_t order[] = { 7, 2, 10, 0, 9, 9, 3, 8, 1 };
    for (size_t i = 0; i < sizeof order / sizeof *order; i++)
        expect_hash(a.g, ck[order[i]], hash[order[i]]);
    /* Bases go first: what the later ones share stays. */
    engine_checkpoint_free(ck[3]);
    engine_checkpoint_free(ck[1]);
    engine_checkpoint_free(ck[8]);
    expect_hash(a.g, ck[4], hash[4]);
    expect_hash(a.g, ck[9], hash[9]);
    expect_hash(a.g, ck[2], hash[2]);
    /* Writing tile memory after a restore copies the shared page: the
     * checkpoint keeps its bytes. */
    ipu_tile *t = engine_tile_mut(a.g, 1473);
    uint32_t addr = 0x80010, was, v = 0x5eed;
    CU_ASSERT_EQUAL(tmem_read_bytes(&t->s.mem, addr, &was, 4), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, addr, &v, 4), TMEM_OK);
    CU_ASSERT_EQUAL(tmem_store32(&t->s.mem, addr + 4, v), TMEM_OK);
    t->s.ctx[ISA_SUPERVISOR].m[3] = 77;
    expect_hash(a.g, ck[2], hash[2]);
    CU_ASSERT_EQUAL(tmem_read_bytes(&engine_tile(a.g, 1473)->s.mem, addr, &v, 4), TMEM_OK);
    CU_ASSERT_EQUAL(v, was);
    /* A checkpoint whose base was freed is a base itself. */
    char err[512];
    engine_checkpoint *again = engine_checkpoint_take(a.g, ck[2], err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(again);
    engine_checkpoint *later = engine_checkpoint_take(a.g, again, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(later);
    engine_checkpoint_free(again);
    expect_hash(a.g, ck[10], hash[10]);
    expect_hash(a.g, later, hash[2]);
    /* The engine goes first; the checkpoints after it. */
    free_run(&a);
    engine_checkpoint_free(later);
    for (size_t k = n; k-- > 0;)
        if (k != 1 && k != 3 && k != 8)
            engine_checkpoint_free(ck[k]);
}

/* ---- debugger settings, refusals ---------------------------------------------------- */

static bool never(void *ctx, const engine *g, uint32_t tile)
{
    (void)ctx;
    (void)g;
    (void)tile;
    return false;
}

static void test_settings_stay_and_refusals(void)
{
    char err[512] = "";
    run a = start_two_chips();
    run other = start_two_chips();
    engine_checkpoint *c0 = engine_checkpoint_take(a.g, NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c0);
    CU_ASSERT_EQUAL(engine_continue(a.g), ENGINE_PAUSED);
    /* Settings made after the checkpoint stay through a restore. */
    CU_ASSERT_TRUE(engine_set_breakpoint(a.g, 1, 0x4c004, true));
    CU_ASSERT_TRUE(engine_set_tile_checked(a.g, 2, true));
    engine_debug d = { .superstep_end = true, .break_cycle = 12345, .check = never };
    engine_set_debug(a.g, &d);
    CU_ASSERT_TRUE(engine_checkpoint_restore(a.g, c0, err, sizeof err));
    CU_ASSERT_EQUAL(a.g->dbg.break_cycle, 12345);
    CU_ASSERT_TRUE(a.g->tiles[2].checked);
    CU_ASSERT_EQUAL(a.g->n_checked, 1);
    CU_ASSERT_TRUE(tile_breakpoint_at(engine_tile(a.g, 1), 0x4c004));
    CU_ASSERT_TRUE(a.g->debugging);
    /* Refusals. */
    engine *fresh;
    {
        char e2[256];
        fresh = engine_new(&a.m, a.e, e2, sizeof e2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fresh);
    }
    CU_ASSERT_PTR_NULL(engine_checkpoint_take(fresh, NULL, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "no checkpoint before the run has started");
    CU_ASSERT_PTR_NULL(engine_checkpoint_take(other.g, c0, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "the base checkpoint is one of another engine");
    CU_ASSERT_FALSE(engine_checkpoint_restore(other.g, c0, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "the checkpoint is one of another engine");
    /* A tile paused in the middle of its run: no checkpoint. */
    engine_debug cyc = { .break_cycle = 40 };
    engine_set_debug(other.g, &cyc);
    CU_ASSERT_EQUAL(engine_continue(other.g), ENGINE_PAUSED);
    CU_ASSERT_EQUAL(engine_get_pause(other.g)->reason, ENGINE_PAUSE_CYCLE);
    CU_ASSERT_PTR_NULL(engine_checkpoint_take(other.g, NULL, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "no checkpoint while tiles are paused in the middle of their runs: take one at "
                                "the end of a superstep, at the start or at the end of the run");
    engine_free(fresh);
    engine_checkpoint_free(c0);
    free_run(&other);
    free_run(&a);
}

/* A restore while a batch is open (tiles paused at a cycle) goes back and
 * runs to the end like a fresh run. */
static void test_restore_from_open_batch(void)
{
    char err[512];
    run a = start_two_chips();
    CU_ASSERT_EQUAL(engine_continue(a.g), ENGINE_PAUSED);
    CU_ASSERT_EQUAL(engine_continue(a.g), ENGINE_PAUSED);
    engine_checkpoint *c = engine_checkpoint_take(a.g, NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    dump at = dump_engine(a.g);
    engine_debug cyc = { .break_cycle = 3800 };
    engine_set_debug(a.g, &cyc);
    CU_ASSERT_EQUAL(engine_continue(a.g), ENGINE_PAUSED);
    CU_ASSERT_TRUE(a.g->batch_open);
    CU_ASSERT_TRUE(engine_checkpoint_restore(a.g, c, err, sizeof err));
    dump back = dump_engine(a.g);
    expect_same(&back, &at, "restored from an open batch");
    engine_debug none = { .superstep_end = false };
    engine_set_debug(a.g, &none);
    while (engine_continue(a.g) == ENGINE_PAUSED)
        ;
    run b = fresh_at(0);
    engine_set_debug(b.g, &none);
    while (engine_continue(b.g) == ENGINE_PAUSED)
        ;
    dump da = dump_engine(a.g), db = dump_engine(b.g);
    expect_same(&da, &db, "the end after a restore from an open batch");
    free_dump(&da);
    free_dump(&db);
    free_dump(&at);
    free_dump(&back);
    engine_checkpoint_free(c);
    free_run(&b);
    free_run(&a);
}

/* Access watches move the pages they watch out of page[]: a checkpoint
 * taken with a watch set restores without it, and the other way round;
 * the watches stay as they are. */
static void test_access_watches(void)
{
    char err[512];
    run a = start_two_chips();
    CU_ASSERT_EQUAL(engine_continue(a.g), ENGINE_PAUSED);
    CU_ASSERT_EQUAL(engine_continue(a.g), ENGINE_PAUSED);
    CU_ASSERT_TRUE(engine_set_access_watch(a.g, 1, 0x80010, 16, ENGINE_WATCH_WRITE, true));
    const tile_memory *m = &engine_tile(a.g, 1)->s.mem;
    uint32_t data_page = (0x80000 - m->base) / TMEM_PAGE_BYTES;
    CU_ASSERT_PTR_NULL(m->page[data_page]);
    engine_checkpoint *c = engine_checkpoint_take(a.g, NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    dump at = dump_engine(a.g);
    /* The data tile 1 receives lands in the watch. */
    engine_debug none = { .superstep_end = false };
    engine_set_debug(a.g, &none);
    CU_ASSERT_EQUAL(engine_continue(a.g), ENGINE_PAUSED);
    CU_ASSERT_EQUAL(engine_get_pause(a.g)->reason, ENGINE_PAUSE_ACCESS);
    CU_ASSERT_EQUAL(engine_get_pause(a.g)->tile, 1);
    CU_ASSERT_TRUE(engine_get_pause(a.g)->access_received);
    engine_pause first = *engine_get_pause(a.g);
    /* Without the watch: back, the page in page[]. */
    CU_ASSERT_TRUE(engine_set_access_watch(a.g, 1, 0x80010, 16, ENGINE_WATCH_WRITE, false));
    CU_ASSERT_TRUE(engine_checkpoint_restore(a.g, c, err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(m->page[data_page]);
    CU_ASSERT_EQUAL(tmem_watch_count(m), 0);
    dump back = dump_engine(a.g);
    expect_same(&back, &at, "restored without the watch");
    free_dump(&back);
    /* With it again: back, the page moved; the run pauses as before and
     * ends as a run without watches. */
    CU_ASSERT_TRUE(engine_set_access_watch(a.g, 1, 0x80010, 16, ENGINE_WATCH_WRITE, true));
    CU_ASSERT_TRUE(engine_checkpoint_restore(a.g, c, err, sizeof err));
    CU_ASSERT_PTR_NULL(m->page[data_page]);
    CU_ASSERT_EQUAL(tmem_watch_count(m), 1);
    back = dump_engine(a.g);
    expect_same(&back, &at, "restored with the watch");
    CU_ASSERT_EQUAL(engine_continue(a.g), ENGINE_PAUSED);
    CU_ASSERT_EQUAL(engine_get_pause(a.g)->reason, ENGINE_PAUSE_ACCESS);
    CU_ASSERT_EQUAL(engine_get_pause(a.g)->cycle, first.cycle);
    CU_ASSERT_EQUAL(engine_get_pause(a.g)->access_addr, first.access_addr);
    CU_ASSERT_EQUAL(engine_continue(a.g), ENGINE_DONE);
    run b = fresh_at(0);
    engine_set_debug(b.g, &none);
    CU_ASSERT_EQUAL(engine_continue(b.g), ENGINE_DONE);
    dump da = dump_engine(a.g), db = dump_engine(b.g);
    expect_same(&da, &db, "the end with a watch after a restore");
    free_dump(&da);
    free_dump(&db);
    free_dump(&back);
    free_dump(&at);
    engine_checkpoint_free(c);
    free_run(&b);
    free_run(&a);
}

/* ---- 4. what a checkpoint shares with its base ---------------------------------------- */

static void test_sharing(void)
{
    char err[512];
    run a = start_two_chips();
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(engine_continue(a.g), ENGINE_PAUSED);
    size_t pages = 0;
    for (size_t i = 0; i < engine_tile_count(a.g); i++)
        pages += engine_tile_at(a.g, i)->s.mem.pages_allocated;
    CU_ASSERT_EQUAL(pages, 12);            /* code and data on each of 6 tiles */
    engine_checkpoint *c1 = engine_checkpoint_take(a.g, NULL, err, sizeof err);
    engine_checkpoint *c2 = engine_checkpoint_take(a.g, c1, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c2);
    /* The first holds every page; the second, nothing having changed,
     * only its own tables (less than one page). */
    CU_ASSERT_TRUE(engine_checkpoint_bytes(c1) > pages * TMEM_PAGE_BYTES);
    CU_ASSERT_TRUE(engine_checkpoint_bytes(c2) < TMEM_PAGE_BYTES);
    /* The pages are shared with the engine: none was copied. */
    for (size_t i = 0; i < engine_tile_count(a.g); i++) {
        const tile_memory *m = &engine_tile_at(a.g, i)->s.mem;
        for (unsigned p = 0; p < TMEM_MAX_PAGES; p++)
            CU_ASSERT_PTR_NULL(m->wpage[p]);
    }
    /* One more superstep on chip 0: the data page of each of its 3 tiles
     * changed in its first 256 bytes (received data, the workers' counts):
     * the checkpoint holds those blocks, not the pages. */
    CU_ASSERT_EQUAL(engine_continue(a.g), ENGINE_PAUSED);
    engine_checkpoint *c3 = engine_checkpoint_take(a.g, c2, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c3);
    size_t b3 = engine_checkpoint_bytes(c3);
    CU_ASSERT_TRUE(b3 > engine_checkpoint_bytes(c2) + 3 * 256 && b3 < tmem_page_host_bytes());
    /* Taken again with c1 as its base (not the one before): the same. */
    engine_checkpoint *c4 = engine_checkpoint_take(a.g, c1, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c4);
    CU_ASSERT_EQUAL(engine_checkpoint_bytes(c4), b3);
    engine_checkpoint_free(c1);
    engine_checkpoint_free(c3);
    engine_checkpoint_free(c2);
    engine_checkpoint_free(c4);
    free_run(&a);
}

/* ---- 3. a compiled program --------------------------------------------------------- */

typedef struct compiled {
    ipu_exe *e;
    machine m;
    tensor_map *map;
} compiled;

static compiled compile_matmul(void)
{
    compiled c;
    memset(&c, 0, sizeof c);
    char err[1024];
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &c.m, err, sizeof err));
    graph *gr = models_build("matmul:64x256x128", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(gr);
    lower_options o = { .machine = &c.m };
    lower_report rep;
    c.e = lower_graph(gr, &o, &rep, err, sizeof err);
    if (!c.e)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c.e);
    c.map = program_tensor_map(c.e, "matmul", err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c.map);
    graph_free(gr);
    return c;
}

static engine *start_compiled(const compiled *c, bool pauses)
{
    char err[1024];
    engine *g = engine_new(&c->m, c->e, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_TRUE_FATAL(program_fill_inputs(g, c->map, NULL, 0, NULL, "", err, sizeof err));
    engine_options o = { .threads = 2 };
    CU_ASSERT_EQUAL_FATAL(engine_start(g, &o), ENGINE_DONE);
    engine_debug d = { .superstep_end = pauses };
    engine_set_debug(g, &d);
    return g;
}

static void read_c(const compiled *c, const engine *g, float *out)
{
    char err[512];
    const tmap_tensor *t = tmap_find(c->map, "c");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_TRUE(program_read_output(g, t, out, err, sizeof err));
}

static void test_compiled_matmul(void)
{
    compiled c = compile_matmul();
    engine *ref = start_compiled(&c, false);
    CU_ASSERT_EQUAL_FATAL(engine_continue(ref), ENGINE_DONE);
    dump dr = dump_engine(ref);
    static float want[64 * 128], got[64 * 128];
    read_c(&c, ref, want);

    engine *g = start_compiled(&c, true);
    engine_checkpoint *ck[16];
    uint64_t hash[16];
    size_t n = 0;
    char err[512];
    for (;;) {
        ck[n] = engine_checkpoint_take(g, n ? ck[n - 1] : NULL, err, sizeof err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ck[n]);
        dump d = dump_engine(g);
        hash[n++] = dump_hash(&d);
        free_dump(&d);
        if (engine_finished(g) || n == 16)
            break;
        enum engine_status st = engine_continue(g);
        CU_ASSERT_TRUE_FATAL(st == ENGINE_PAUSED || st == ENGINE_DONE);
    }
    CU_ASSERT_EQUAL_FATAL(n, 8);           /* the start, its 6 supersteps, the end */
    /* The second checkpoint shares the code pages and the loaded data. */
    CU_ASSERT_TRUE(engine_checkpoint_bytes(ck[1]) < engine_checkpoint_bytes(ck[0]) / 2);
    for (size_t k = 0; k < n; k++) {
        CU_ASSERT_TRUE_FATAL(engine_checkpoint_restore(g, ck[k], err, sizeof err));
        dump d = dump_engine(g);
        CU_ASSERT_EQUAL(dump_hash(&d), hash[k]);
        free_dump(&d);
        engine_debug none = { .superstep_end = false };
        engine_set_debug(g, &none);
        CU_ASSERT_EQUAL(engine_continue(g), ENGINE_DONE);
        dump de = dump_engine(g);
        char what[64];
        snprintf(what, sizeof what, "matmul from checkpoint %zu", k);
        expect_same(&de, &dr, what);
        free_dump(&de);
        memset(got, 0, sizeof got);
        read_c(&c, g, got);
        CU_ASSERT_EQUAL(memcmp(got, want, sizeof got), 0);
    }
    CU_ASSERT_EQUAL(engine_get_stats(g)->chips[0].c.cycles, engine_get_stats(ref)->chips[0].c.cycles);
    for (size_t k = 0; k < n; k++)
        engine_checkpoint_free(ck[(k * 5) % n]);
    free_dump(&dr);
    engine_free(g);
    engine_free(ref);
    tmap_free(c.map);
    exe_free(c.e);
}

/* ---- tile memory pages shared with snapshots -------------------------------------- */

static void test_pages_copy_on_write(void)
{
    tile_memory m;
    tmem_init(&m, ISA_MEMORY_BASE, 638976);
    uint32_t page = (0x80000 - m.base) / TMEM_PAGE_BYTES, v = 0;
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x80004, 1), TMEM_OK);
    CU_ASSERT_PTR_EQUAL(m.wpage[page], m.page[page]);
    const uint8_t *snap = tmem_page_share(&m, page);
    CU_ASSERT_PTR_EQUAL(snap, m.page[page]);
    CU_ASSERT_PTR_NULL(m.wpage[page]);
    CU_ASSERT_PTR_NULL(tmem_page_share(&m, page + 1));
    /* The next store writes a copy; the snapshot keeps its bytes. */
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x80004, 2), TMEM_OK);
    CU_ASSERT_TRUE(m.page[page] != snap);
    CU_ASSERT_PTR_EQUAL(m.wpage[page], m.page[page]);
    CU_ASSERT_EQUAL(snap[4], 1);
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), TMEM_PAGE_BYTES);
    /* Back to the snapshot's page, shared again. */
    tmem_page_adopt(&m, page, snap);
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x80004, &v), TMEM_OK);
    CU_ASSERT_EQUAL(v, 1);
    CU_ASSERT_PTR_NULL(m.wpage[page]);
    /* A copy, written before the memory adopts it. */
    uint8_t *copy = tmem_page_copy(snap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    copy[4] = 9;
    tmem_page_adopt(&m, page, copy);
    tmem_page_release(copy);
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x80004, &v), TMEM_OK);
    CU_ASSERT_EQUAL(v, 9);
    CU_ASSERT_EQUAL(snap[4], 1);
    /* The memory holds the copy alone: a store writes it in place. */
    CU_ASSERT_EQUAL(tmem_store32(&m, 0x80008, 3), TMEM_OK);
    CU_ASSERT_PTR_EQUAL(m.page[page], copy);
    /* Never written again. */
    tmem_page_adopt(&m, page, NULL);
    CU_ASSERT_EQUAL(tmem_load32(&m, 0x80004, &v), TMEM_OK);
    CU_ASSERT_EQUAL(v, 0);
    CU_ASSERT_EQUAL(tmem_host_bytes(&m), 0);
    tmem_page_release(snap);
    tmem_free(&m);
}

void test_register(void)
{
    ADD_SUITE("checkpoint",
              {"a restored checkpoint is a fresh run paused there", test_restore_is_fresh_run},
              {"restores and frees in any order, pages copied on write", test_any_order},
              {"debugger settings stay; refusals", test_settings_stay_and_refusals},
              {"restore while a batch is open", test_restore_from_open_batch},
              {"access watches stay; pages they moved", test_access_watches},
              {"a checkpoint shares what did not change with its base", test_sharing},
              {"a compiled matmul", test_compiled_matmul},
              {"tile memory pages shared copy on write", test_pages_copy_on_write});
}
