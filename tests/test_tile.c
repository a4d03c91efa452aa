/*
 * test_tile.c — the tile's timing model on small programs whose cycle
 * counts are worked out by hand in the comments.
 *
 * Conventions of the model (sim/engine/tile.h): tile cycle c serves barrel slot
 * c mod 6; worker k owns slot k-1 while it runs, the supervisor owns every
 * other slot and issues in each; an instruction of latency L worker cycles
 * keeps its worker from issuing for 6 L tile cycles; the instruction that
 * ends the program takes its cycle, so a program whose last issue is at
 * cycle c runs c + 1 cycles.
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

typedef struct run_result {
    enum tile_stop stop;
    uint64_t cycles;
    tile_stats stats;
    char fault[1024];
    uint32_t m[ISA_CONTEXTS][16];
    uint32_t a[ISA_CONTEXTS][16];
} run_result;

/* Assemble src, run it alone on tile 0 of machine `preset`, keep what the
 * tests look at.  mem_out/mem_addr/mem_bytes copy tile memory out. */
static run_result run_src_on(const char *preset, const char *src, uint32_t mem_addr, void *mem_out, size_t mem_bytes)
{
    run_result r;
    memset(&r, 0, sizeof r);
    char err[4096];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset(preset, &m, err, sizeof err));
    asm_options opt = { .memory_base = machine_memory_base(&m) };
    ipu_exe *e = asm_assemble_string(src, "test.S", &opt, err, sizeof err);
    if (!e) {
        fprintf(stderr, "\nassembly failed:\n%s\n", err);
        CU_FAIL_FATAL("assembly failed");
    }
    ipu_tile *t = calloc(1, sizeof *t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tile_init(t, &m, 0);
    if (!tile_load(t, e, err, sizeof err)) {
        fprintf(stderr, "\nload failed: %s\n", err);
        CU_FAIL_FATAL("load failed");
    }
    r.stop = tile_run_alone(t, 10000000);
    r.cycles = t->s.cycle;
    r.stats = t->stats;
    if (r.stop == TILE_STOP_FAULT)
        tile_describe_fault(t, e, r.fault, sizeof r.fault);
    for (unsigned k = 0; k < ISA_CONTEXTS; k++) {
        memcpy(r.m[k], t->s.ctx[k].m, sizeof r.m[k]);
        memcpy(r.a[k], t->s.ctx[k].a, sizeof r.a[k]);
    }
    if (mem_out)
        CU_ASSERT_EQUAL(tmem_read_bytes(&t->s.mem, mem_addr, mem_out, mem_bytes), TMEM_OK);
    tile_free(t);
    free(t);
    exe_free(e);
    return r;
}

static run_result run_src(const char *src)
{
    return run_src_on("gc200", src, 0, NULL, 0);
}

static void test_supervisor_alone(void)
{
    /* The supervisor owns all six slots: it issues every cycle.
     * c0 setzi, c1 add, c2 exitz -> 3 cycles. */
    run_result r = run_src("__supervisor:\n setzi $m0, 5\n add $m0, $m0, 1\n exitz $mzero\n");
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_END);
    CU_ASSERT_EQUAL(r.cycles, 3);
    CU_ASSERT_EQUAL(r.stats.issues, 3);
    CU_ASSERT_EQUAL(r.m[0][0], 6);
}

static void test_one_worker(void)
{
    /* c0 setzi, c1 setzi, c2 run: worker 1 takes slot 0 and may issue from
     * c3.  c3 (slot 3, supervisor) sync 0 stalls: a worker runs.  Worker 1
     * issues at c6 (add) and c12 (exitz); slot 0 goes back to the
     * supervisor, which retries at c13: sync 0 passes; c14 exitz -> 15. */
    run_result r = run_src("__supervisor:\n"
                           " setzi $m1, worker\n setzi $m2, 0\n run $m1, $m2, $m3\n sync 0\n exitz $mzero\n"
                           "worker:\n add $m0, $m0, 7\n exitz $mzero\n");
    if (r.stop == TILE_STOP_FAULT)
        fprintf(stderr, "\n%s\n", r.fault);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_END);
    CU_ASSERT_EQUAL(r.cycles, 15);
    CU_ASSERT_EQUAL(r.stats.worker_issues, 2);
    CU_ASSERT_EQUAL(r.stats.supervisor_issues, 5);
    CU_ASSERT_EQUAL(r.m[1][0], 7);
    CU_ASSERT_EQUAL(r.m[0][3], 1); /* run wrote the worker's number */
}

static void test_latency_f32div(void)
{
    /* Worker 1 issues at c6 setzi, c12 f32div (3 worker cycles: next issue
     * no earlier than c12 + 18 = c30), c30 exitz; supervisor: c31 sync,
     * c32 exitz -> 33.  With f32div of latency 1 it would be 21. */
    const char *src = "__supervisor:\n"
                      " setzi $m1, worker\n setzi $m2, 0\n run $m1, $m2, $mzero\n sync 0\n exitz $mzero\n"
                      "worker:\n setzi $a1, 0x3f800000 >> 12\n f32div $a0, $a1, $a1\n exitz $mzero\n";
    run_result r = run_src(src);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_END);
    CU_ASSERT_EQUAL(r.cycles, 33);
    CU_ASSERT_EQUAL(r.stats.op_count[ISA_OP_F32DIV], 1);
}

static void test_latency_is_a_machine_parameter(void)
{
    const char *src = "__supervisor:\n"
                      " setzi $m1, worker\n setzi $m2, 0\n run $m1, $m2, $mzero\n sync 0\n exitz $mzero\n"
                      "worker:\n f32div $a0, $a1, $a1\n exitz $mzero\n";
    char err[256];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &m, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(machine_set(&m, "f32div_latency_worker_cycles=7", err, sizeof err));
    ipu_exe *e = asm_assemble_string(src, "t.S", NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    ipu_tile *t = calloc(1, sizeof *t);
    tile_init(t, &m, 0);
    CU_ASSERT_TRUE_FATAL(tile_load(t, e, err, sizeof err));
    CU_ASSERT_EQUAL(tile_run_alone(t, 100000), TILE_STOP_END);
    /* c6 f32div, exitz at c6 + 42 = c48, c49 sync, c50 exitz -> 51. */
    CU_ASSERT_EQUAL(t->s.cycle, 51);
    tile_free(t);
    free(t);
    exe_free(e);
}

/* The AMP's rate is the machine's: a form doing more MACs than the AMP
 * does in a tile cycle holds its worker for as many turns as that takes.
 * GC200: 64 f16 / 16 f32 MACs a cycle, every form one turn (worker 1: c6
 * the AMP instruction, c12 exitz; supervisor c13 sync, c14 exitz -> 15).
 * GC2 (one engine set: 32 / 8): f16v4hihov4amp (64) and f32sisov2amp (16)
 * take two turns (exitz at c18 -> 21), f16v4sisoamp (32) and f32sisoamp
 * (8) one. */
static void test_amp_rate_is_the_machines(void)
{
    static const struct { const char *insn; uint64_t gc200, gc2; } cases[] = {
        { "f16v4hihov4amp $a0:1, $a2:3, $a4:5, 0", 15, 21 },
        { "f32sisov2amp $a0:1, $a2, $a4:5, 0", 15, 21 },
        { "f16v4sisoamp $a0:1, $a2:3, $a4:5, 0", 15, 15 },
        { "f32sisoamp $a0:1, $a2, $a4:5, 0", 15, 15 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[512];
        snprintf(src, sizeof src, "__supervisor:\n setzi $m1, worker\n setzi $m2, 0\n run $m1, $m2, $mzero\n"
                 " sync 0\n exitz $mzero\nworker:\n %s\n exitz $mzero\n", cases[i].insn);
        run_result a = run_src_on("gc200", src, 0, NULL, 0), b = run_src_on("gc2", src, 0, NULL, 0);
        if (a.stop == TILE_STOP_FAULT || b.stop == TILE_STOP_FAULT)
            fprintf(stderr, "\n%s: %s%s\n", cases[i].insn, a.fault, b.fault);
        CU_ASSERT_EQUAL(a.stop, TILE_STOP_END);
        CU_ASSERT_EQUAL(b.stop, TILE_STOP_END);
        CU_ASSERT_EQUAL(a.cycles, cases[i].gc200);
        CU_ASSERT_EQUAL(b.cycles, cases[i].gc2);
    }
}

static void test_six_workers_fill_the_barrel(void)
{
    /* runall at c2 starts all six workers; worker k owns slot k-1 and
     * issues at the first cycle >= c3 in its slot: w4 c3, w5 c4, w6 c5,
     * w1 c6, w2 c7, w3 c8.  Each runs 10 add + exitz = 11 issues, one per
     * turn: the last issues are w4 c63, w5 c64, w6 c65, w1 c66, w2 c67,
     * w3 c68.  The supervisor owns no slot from c3 until w4 gives slot 3
     * back at c63; its next turn there is c69: sync 0 passes (no worker
     * runs), c70 (slot 4) exitz -> 71 cycles. */
    const char *src = "__supervisor:\n"
                      " setzi $m1, worker\n setzi $m2, 0\n runall $m1, $m2, $mzero\n sync 0\n exitz $mzero\n"
                      "worker:\n .rept 10\n add $m0, $m0, 1\n .endr\n exitz $mzero\n";
    run_result r = run_src(src);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_END);
    CU_ASSERT_EQUAL(r.cycles, 71);
    CU_ASSERT_EQUAL(r.stats.worker_issues, 66);
    for (unsigned k = 1; k <= 6; k++)
        CU_ASSERT_EQUAL(r.m[k][0], 10);
}

static void test_rpt_zero_overhead(void)
{
    /* Worker 1 (slot 0): c6 setzi, c12 rpt (body: the next bundle, run 4
     * times), body at c18, c24, c30, c36 with no issue spent on looping,
     * exitz at c42; the supervisor, stalled in sync 0, retries at c43 and
     * ends at c44 -> 45 cycles. */
    const char *aligned = "__supervisor:\n"
                          " setzi $m1, worker\n setzi $m2, 0\n run $m1, $m2, $mzero\n sync 0\n exitz $mzero\n"
                          " .align 8\n"
                          "worker:\n"
                          " setzi $m0, 0\n"
                          " rpt 4, (2f - 1f) / 8 - 1\n"
                          "1:\n { add $m0, $m0, 1 ; fnop }\n"
                          "2:\n exitz $mzero\n";
    run_result r = run_src(aligned);
    if (r.stop == TILE_STOP_FAULT)
        fprintf(stderr, "\n%s\n", r.fault);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_END);
    CU_ASSERT_EQUAL(r.m[1][0], 4);
    CU_ASSERT_EQUAL(r.stats.worker_issues, 7);
    CU_ASSERT_EQUAL(r.cycles, 45);
}

static void test_rpt_rejects_control_in_body(void)
{
    /* The assembler refuses a control instruction in a rpt body, so put one
     * there behind its back, in the executable: the scheduler must stop it. */
    const char *src = "__supervisor:\n"
                      " setzi $m1, worker\n setzi $m2, 0\n run $m1, $m2, $mzero\n sync 0\n exitz $mzero\n"
                      " .align 8\n"
                      "worker:\n"
                      " setzi $m0, 1\n"
                      " rpt 2, 0\n"
                      "hole:\n nop\n nop\n"
                      " exitz $mzero\n";
    char err[1024];
    ipu_exe *e = asm_assemble_string(src, "t.S", NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    const exe_symbol *hole = exe_find_symbol(e, "hole");
    CU_ASSERT_PTR_NOT_NULL_FATAL(hole);
    int32_t ops[ISA_MAX_OPERANDS] = {0, (int32_t)hole->addr};
    uint32_t brz;
    CU_ASSERT_TRUE_FATAL(isa_encode(ISA_OP_BRZ, ops, &brz, err, sizeof err));
    for (size_t i = 0; i < e->n_sections; i++) {
        exe_section *sec = &e->sections[i];
        if (sec->tile == 0 && hole->addr >= sec->addr && hole->addr < sec->addr + sec->size)
            memcpy(sec->bytes + (hole->addr - sec->addr), &brz, 4);
    }
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &m, err, sizeof err));
    ipu_tile *t = calloc(1, sizeof *t);
    tile_init(t, &m, 0);
    CU_ASSERT_TRUE_FATAL(tile_load(t, e, err, sizeof err));
    CU_ASSERT_EQUAL(tile_run_alone(t, 100000), TILE_STOP_FAULT);
    char fault[1024];
    tile_describe_fault(t, e, fault, sizeof fault);
    CU_ASSERT_PTR_NOT_NULL(strstr(fault, "control instruction brz inside a rpt body"));
    CU_ASSERT_PTR_NOT_NULL(strstr(fault, "worker 1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(fault, "in hole"));
    tile_free(t);
    free(t);
    exe_free(e);
}

static void test_faults_name_tile_context_pc(void)
{
    /* A worker loads from an address beyond tile memory. */
    const char *src = "__supervisor:\n"
                      " setzi $m1, worker\n setzi $m2, 0\n run $m1, $m2, $mzero\n sync 0\n exitz $mzero\n"
                      "worker:\n setzi $m0, 0xf0000\n ld32 $m1, $m0, $mzero, 0\n exitz $mzero\n";
    run_result r = run_src(src);
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_FAULT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.fault, "tile 0, worker 1, pc 0x4c018"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.fault, "test.S:9"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.fault, "ld32"));
}

static void test_supervisor_cannot_issue_worker_instructions(void)
{
    run_result r = run_src("__supervisor:\n f32add $a0, $a1, $a2\n exitz $mzero\n");
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_FAULT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.fault, "cannot run on the supervisor"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.fault, "supervisor, pc 0x4c000"));
}

static void test_running_off_the_code(void)
{
    run_result r = run_src("__supervisor:\n setzi $m0, 1\n");
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_FAULT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.fault, "outside the tile's code"));
}

static void test_cycle_counter_csr(void)
{
    /* get $COUNT_L at c1 reads 1: the counter is the tile cycle of issue. */
    run_result r = run_src("__supervisor:\n nop\n get $m0, $COUNT_L\n nop\n nop\n get $m1, $COUNT_L\n exitz $mzero\n");
    CU_ASSERT_EQUAL(r.stop, TILE_STOP_END);
    CU_ASSERT_EQUAL(r.m[0][0], 1);
    CU_ASSERT_EQUAL(r.m[0][1], 4);
}

static void test_clock_does_not_change_cycles(void)
{
    /* The same program takes the same tile cycles on GC200 and Bow: only
     * the time differs (by the clock ratio 1.85 / 1.325). */
    const char *src = "__supervisor:\n"
                      " setzi $m1, worker\n setzi $m2, 0\n runall $m1, $m2, $mzero\n sync 0\n exitz $mzero\n"
                      "worker:\n setzi $m0, 99\n1:\n add $m1, $m1, 2\n brnzdec $m0, 1b\n exitz $mzero\n";
    run_result a = run_src_on("gc200", src, 0, NULL, 0);
    run_result b = run_src_on("bow", src, 0, NULL, 0);
    CU_ASSERT_EQUAL(a.stop, TILE_STOP_END);
    CU_ASSERT_EQUAL(a.cycles, b.cycles);
    CU_ASSERT_EQUAL(a.m[1][1], 200);
}

void test_register(void)
{
    ADD_SUITE("tile_timing",
              {"supervisor alone issues every cycle", test_supervisor_alone},
              {"one worker: slot ownership and sync 0", test_one_worker},
              {"f32div latency holds the worker", test_latency_f32div},
              {"the AMP's rate is the machine's", test_amp_rate_is_the_machines},
              {"latency is a machine parameter", test_latency_is_a_machine_parameter},
              {"six workers fill the barrel", test_six_workers_fill_the_barrel},
              {"rpt loops with no overhead", test_rpt_zero_overhead},
              {"$COUNT_L is the issue cycle", test_cycle_counter_csr},
              {"same cycles on gc200 and bow", test_clock_does_not_change_cycles});
    ADD_SUITE("tile_faults",
              {"control instruction in rpt body", test_rpt_rejects_control_in_body},
              {"fault names tile, context, pc, line", test_faults_name_tile_context_pc},
              {"supervisor cannot issue worker-only", test_supervisor_cannot_issue_worker_instructions},
              {"running off the end of the code", test_running_off_the_code});
}
