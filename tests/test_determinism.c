/*
 * test_determinism.c — the same program gives the same result, bit for
 * bit, every time: tile memory, every context's registers and AMP state,
 * the cycle count and every statistic.  Programs: the AMP matmul codelet
 * with random f16 data (both partial-sum types), the axpy codelet, and the
 * two `ipusim bench` programs (run to a cycle limit: they are long).
 *
 * Also: stopping a tile at a cycle limit and resuming it changes nothing
 * (the chip engine runs tiles between syncs in slices), and a tile's
 * results do not depend on its tile number or on running another tile in
 * between (no hidden shared state).  Host-thread-count determinism of a
 * whole chip belongs with the chip engine's tests.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "isa/fp16.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"
#include "test_util.h"

typedef struct program {
    const char *name;
    const char *text;        /* assembled with the source tree on the include path */
    uint64_t cycle_limit;    /* UINT64_MAX: to the end */
    bool random_data;        /* fill region 1 and the codelet inputs with random values */
} program;

/* Everything observable after a run. */
typedef struct snapshot {
    enum tile_stop stop;
    uint64_t cycle;
    uint8_t slot;
    uint64_t ready_cycle[ISA_CONTEXTS];
    uint8_t slot_owner[ISA_WORKERS];
    isa_context ctx[ISA_CONTEXTS];
    isa_amp_shared amp;
    isa_fault fault;
    tile_stats stats;
    uint8_t *memory;         /* the whole tile memory */
    uint32_t memory_bytes;
} snapshot;

static uint32_t rng_state;
static uint32_t rng_next(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state;
}

static ipu_exe *assemble(const program *p)
{
    const char *dirs[] = { IPUSIM_SOURCE_DIR, IPUSIM_SOURCE_DIR "/workloads/kernels" };
    asm_options opt = { .include_dirs = dirs, .n_include_dirs = 2 };
    char err[4096];
    ipu_exe *e = asm_assemble_string(p->text, "determinism.S", &opt, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n%s: %s\n", p->name, err);
    return e;
}

/* Random finite f16 values in [-2, 2) over every data symbol of the
 * codelets, so the arithmetic has something to round. */
static void fill_inputs(ipu_tile *t, const ipu_exe *e, uint32_t seed)
{
    rng_state = seed;
    static const char *const inputs[] = { "mm_a", "mm_b", "mm_c", "axpy_x", "axpy_y", "axpy_a" };
    for (size_t k = 0; k < sizeof inputs / sizeof inputs[0]; k++) {
        const exe_symbol *s = exe_find_symbol(e, inputs[k]);
        if (!s)
            continue;
        uint32_t bytes = s->size ? s->size : 4;
        for (uint32_t off = 0; off + 2 <= bytes; off += 2) {
            f16_t h = fp16_from_f32((float)((int32_t)(rng_next() >> 16) - 32768) / 16384.0f);
            CU_ASSERT_EQUAL(tmem_write_bytes(&t->s.mem, s->addr + off, &h, 2), TMEM_OK);
        }
    }
}

static snapshot take(const ipu_tile *t, enum tile_stop stop)
{
    snapshot s;
    memset(&s, 0, sizeof s);
    s.stop = stop;
    s.cycle = t->s.cycle;
    s.slot = t->slot;
    memcpy(s.ready_cycle, t->ready_cycle, sizeof s.ready_cycle);
    memcpy(s.slot_owner, t->slot_owner, sizeof s.slot_owner);
    /* Field by field, so that struct padding never counts. */
    for (unsigned k = 0; k < ISA_CONTEXTS; k++) {
        const isa_context *c = &t->s.ctx[k];
        isa_context *d = &s.ctx[k];
        memcpy(d->m, c->m, sizeof d->m);
        memcpy(d->a, c->a, sizeof d->a);
        memcpy(d->csr, c->csr, sizeof d->csr);
        memcpy(d->pending_a, c->pending_a, sizeof d->pending_a);
        memcpy(d->prng, c->prng, sizeof d->prng);
        d->amp = c->amp;
        d->pc = c->pc;
        d->id = c->id;
        d->run_mode = c->run_mode;
        d->rpt_first = c->rpt_first;
        d->rpt_end = c->rpt_end;
        d->rpt_remaining = c->rpt_remaining;
        d->pending_a_mask = c->pending_a_mask;
        d->exit_status = c->exit_status;
    }
    s.amp = t->s.amp;
    s.fault.exception = t->s.fault.exception;
    s.fault.context = t->s.fault.context;
    s.fault.pc = t->s.fault.pc;
    s.fault.word = t->s.fault.word;
    s.fault.address = t->s.fault.address;
    memcpy(s.fault.message, t->s.fault.message, sizeof s.fault.message);
    s.stats = t->stats;
    s.memory_bytes = t->s.mem.size_bytes;
    s.memory = malloc(s.memory_bytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s.memory);
    CU_ASSERT_EQUAL(tmem_read_bytes(&t->s.mem, t->s.mem.base, s.memory, s.memory_bytes), TMEM_OK);
    return s;
}

/* Run p on a fresh tile tile_id, in slices of slice_cycles (UINT64_MAX:
 * one go); other, if given, runs on another tile between the slices. */
static snapshot run(const program *p, const ipu_exe *e, uint32_t tile_id, uint64_t slice_cycles,
                    const program *other, const ipu_exe *other_e)
{
    char err[512];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &m, err, sizeof err));
    ipu_tile *t = calloc(1, sizeof *t), *o = calloc(1, sizeof *o);
    CU_ASSERT_FATAL(t && o);
    CU_ASSERT_TRUE_FATAL(tile_init(t, &m, tile_id));
    /* The program's sections are on tile 0: load a copy placed on tile_id. */
    ipu_exe *placed = exe_new();
    for (size_t i = 0; i < e->n_sections; i++) {
        const exe_section *s = &e->sections[i];
        CU_ASSERT_TRUE_FATAL(exe_add_section(placed, tile_id, s->name, s->addr, s->bytes, s->size, s->flags, err,
                                             sizeof err));
    }
    CU_ASSERT_TRUE_FATAL(exe_set_entry(placed, tile_id, exe_tile(e, 0)->supervisor_entry));
    CU_ASSERT_TRUE_FATAL(tile_load(t, placed, err, sizeof err));
    if (p->random_data)
        fill_inputs(t, e, 2024);
    if (other) {
        CU_ASSERT_TRUE_FATAL(tile_init(o, &m, 0));
        CU_ASSERT_TRUE_FATAL(tile_load(o, other_e, err, sizeof err));
        if (other->random_data)
            fill_inputs(o, other_e, 7);
    }
    enum tile_stop stop;
    uint64_t limit = slice_cycles;
    for (;;) {
        uint64_t until = limit < p->cycle_limit ? limit : p->cycle_limit;
        stop = tile_run_alone(t, until);
        if (other)
            tile_run_alone(o, o->s.cycle + 997);
        if (stop != TILE_STOP_LIMIT || until == p->cycle_limit)
            break;
        limit = limit > UINT64_MAX - slice_cycles ? UINT64_MAX : limit + slice_cycles;
    }
    snapshot s = take(t, stop);
    tile_free(t);
    tile_free(o);
    free(t);
    free(o);
    exe_free(placed);
    return s;
}

static void free_snapshot(snapshot *s)
{
    free(s->memory);
    s->memory = NULL;
}

/* Compare two snapshots, saying what differs. */
static void assert_same(const char *what, const snapshot *a, const snapshot *b)
{
    bool same = true;
#define SAME(cond, label)                                                                 \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "\n  %s: %s differs", what, label);                           \
            same = false;                                                                 \
        }                                                                                 \
    } while (0)
    SAME(a->stop == b->stop, "how the run stopped");
    SAME(a->cycle == b->cycle, "cycle count");
    SAME(a->slot == b->slot, "barrel slot");
    SAME(!memcmp(a->ready_cycle, b->ready_cycle, sizeof a->ready_cycle), "ready cycles");
    SAME(!memcmp(a->slot_owner, b->slot_owner, sizeof a->slot_owner), "slot owners");
    for (unsigned k = 0; k < ISA_CONTEXTS; k++) {
        char label[64];
        snprintf(label, sizeof label, "context %u registers and state", k);
        SAME(!memcmp(&a->ctx[k], &b->ctx[k], sizeof a->ctx[k]), label);
    }
    SAME(!memcmp(&a->amp, &b->amp, sizeof a->amp), "$CWEI");
    SAME(!memcmp(&a->fault, &b->fault, sizeof a->fault), "fault");
    SAME(!memcmp(&a->stats, &b->stats, sizeof a->stats), "statistics");
    SAME(a->memory_bytes == b->memory_bytes && !memcmp(a->memory, b->memory, a->memory_bytes), "tile memory");
#undef SAME
    CU_ASSERT_TRUE(same);
}

static const program programs[] = {
    { "amp_matmul f16 partials",
      ".equ MM_M, 30\n.equ MM_K, 48\n.equ MM_N, 32\n.equ MM_F16_PARTIALS, 1\n.include \"workloads/kernels/amp_matmul.S\"\n",
      UINT64_MAX, true },
    { "amp_matmul f32 partials",
      ".equ MM_M, 18\n.equ MM_K, 32\n.equ MM_N, 16\n.equ MM_F16_PARTIALS, 0\n.include \"workloads/kernels/amp_matmul.S\"\n",
      UINT64_MAX, true },
    { "axpy", ".equ AXPY_N, 999\n.include \"workloads/kernels/axpy.S\"\n", UINT64_MAX, true },
    { "bench_int_loop", ".include \"workloads/kernels/bench_int_loop.S\"\n", 300000, false },
    { "bench_amp_matmul", ".include \"workloads/kernels/bench_amp_matmul.S\"\n", 300000, false },
};
#define N_PROGRAMS (sizeof programs / sizeof programs[0])

/* Twice from scratch: identical. */
static void test_same_program_twice(void)
{
    for (size_t i = 0; i < N_PROGRAMS; i++) {
        ipu_exe *e = assemble(&programs[i]);
        CU_ASSERT_PTR_NOT_NULL(e);
        if (!e)
            continue;
        snapshot a = run(&programs[i], e, 0, UINT64_MAX, NULL, NULL);
        snapshot b = run(&programs[i], e, 0, UINT64_MAX, NULL, NULL);
        /* The run did something worth comparing. */
        CU_ASSERT(a.stats.instructions > 1000);
        if (programs[i].cycle_limit == UINT64_MAX)
            CU_ASSERT_EQUAL(a.stop, TILE_STOP_END)
        else
            CU_ASSERT_EQUAL(a.cycle, programs[i].cycle_limit)
        printf("\n    %-24s %9llu cycles %9llu instructions", programs[i].name, (unsigned long long)a.cycle,
               (unsigned long long)a.stats.instructions);
        assert_same(programs[i].name, &a, &b);
        free_snapshot(&a);
        free_snapshot(&b);
        exe_free(e);
    }
}

/* Stopped at cycle limits and resumed: identical to one run through. */
static void test_sliced_run(void)
{
    static const uint64_t slices[] = { 1, 7, 1000, 4099 };
    for (size_t i = 0; i < N_PROGRAMS; i++) {
        ipu_exe *e = assemble(&programs[i]);
        if (!e)
            continue;
        snapshot whole = run(&programs[i], e, 0, UINT64_MAX, NULL, NULL);
        for (size_t k = 0; k < sizeof slices / sizeof slices[0]; k++) {
            /* Single-cycle slices only on the short programs. */
            if (slices[k] < 1000 && whole.cycle > 100000)
                continue;
            char what[128];
            snprintf(what, sizeof what, "%s in slices of %llu cycles", programs[i].name,
                     (unsigned long long)slices[k]);
            snapshot sliced = run(&programs[i], e, 0, slices[k], NULL, NULL);
            assert_same(what, &whole, &sliced);
            free_snapshot(&sliced);
        }
        free_snapshot(&whole);
        exe_free(e);
    }
}

/* Another tile number, another tile running in between: identical, apart
 * from the tile number itself (which no program here reads). */
static void test_no_shared_state(void)
{
    ipu_exe *e = assemble(&programs[0]), *other = assemble(&programs[2]);
    CU_ASSERT_FATAL(e && other);
    snapshot a = run(&programs[0], e, 0, UINT64_MAX, NULL, NULL);
    snapshot b = run(&programs[0], e, 1471, 5000, &programs[2], other);
    assert_same("amp_matmul on tile 1471 beside axpy on tile 0", &a, &b);
    free_snapshot(&a);
    free_snapshot(&b);
    exe_free(e);
    exe_free(other);
}

void test_register(void)
{
    ADD_SUITE("determinism",
              { "the same program twice", test_same_program_twice },
              { "stopped and resumed at cycle limits", test_sliced_run },
              { "no state shared between tiles", test_no_shared_state });
}
