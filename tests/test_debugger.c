/*
 * test_debugger.c — the debugger (sim/debugger/debugger.h) driven through
 * debugger_execute on assembled programs, and the engine's stepping
 * interface under it (sim/engine/engine.h): breakpoints on a pc, a symbol, a
 * superstep and a cycle, stepi, watchpoints on stores and on exchanged
 * data, faults, exact error messages, and that a run with many stops ends
 * with the cycles, statistics and memory of one without, on one and on
 * several host threads.  Also replays the debugger fuzzer's corpus and
 * saved crashers (tests/fuzz/fuzz_debugger.c).
 */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "sim/debugger/debugger.h"
#include "sim/engine/engine.h"
#include "sim/base/fileio.h"
#include "sim/program/machine.h"
#include "sim/program/tensor_map.h"
#include "debugger_fixture.h"
#include "engine_fixture.h"
#include "test_util.h"

#define FUZZ_DEBUGGER_NO_MAIN
#include "tests/fuzz/fuzz_debugger.c"

/* A ring of `tiles` tiles, `rounds` times: six workers count and store,
 * the supervisor sends 16 bytes to the next tile, receives from the
 * previous one, sync 1.  Line numbers below are those of this text. */
static char *ring_src(unsigned tiles, unsigned rounds)
{
    size_t cap = 4096 + 64 * (size_t)tiles, len = 0;
    char *s = malloc(cap);
#define OUT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__))
    OUT(".macro TILE t, next, prev\n"     /* 1 */
        " .tile \\t\n"                    /* 2 */
        " .text\n"                        /* 3 */
        "__supervisor:\n"                 /* 4 */
        " setzi $m8, %u\n"                /* 5: 0x4c000 */
        " setzi $m1, worker\n"            /* 6 */
        " setzi $m2, counts\n"            /* 7 */
        " setzi $m3, sbuf\n"              /* 8 */
        " setzi $m4, 16\n"                /* 9 */
        " setzi $m5, \\next\n"            /* 10 */
        " setzi $m6, rbuf\n"              /* 11 */
        " setzi $m7, \\prev\n"            /* 12 */
        "loop:\n"                         /* 13 */
        " runall $m1, $m2, $m4\n"         /* 14: 0x4c020 */
        " sync 0\n"                       /* 15 */
        " xsend $m3, $m4, $m5\n"          /* 16 */
        " xrecv $m6, $m4, $m7\n"          /* 17 */
        " sync 1\n"                       /* 18: 0x4c030 */
        " add $m8, $m8, -1\n"             /* 19 */
        " brnz $m8, loop\n"               /* 20 */
        " exitz $mzero\n"                 /* 21 */
        "worker:\n"                       /* 22 */
        " setzi $m0, 4\n"                 /* 23: 0x4c040 */
        "1: add $m2, $m2, 1\n"            /* 24 */
        " brnzdec $m0, 1b\n"              /* 25 */
        " st32 $m2, $m13, $mzero, 0\n"    /* 26: 0x4c04c */
        " exitz $mzero\n"                 /* 27 */
        " .data\n"
        "sbuf: .word \\t + 1, \\t, \\t, \\t\n"  /* 0x80000 */
        "rbuf: .space 16\n"               /* 0x80010 */
        "counts: .space 96\n"             /* 0x80020 */
        ".endm\n", rounds);
    for (unsigned t = 0; t < tiles; t++)
        OUT("TILE %u, %u, %u\n", t, (t + 1) % tiles, (t + tiles - 1) % tiles);
#undef OUT
    return s;
}

static session open_src(const char *src, int threads)
{
    session s;
    memset(&s, 0, sizeof s);
    char err[4096];
    s.e = asm_assemble_string(src, "test.S", NULL, err, sizeof err);
    if (!s.e)
        fprintf(stderr, "\n%s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s.e);
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &s.m, err, sizeof err));
    debugger_options o = { .threads = threads };
    s.d = debugger_new(&s.m, s.e, "test.elf", &o, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s.d);
    return s;
}

static session open_ring(unsigned tiles, unsigned rounds, int threads)
{
    char *src = ring_src(tiles, rounds);
    session s = open_src(src, threads);
    free(src);
    return s;
}

/* The n-th completion of the last word of line (after its last blank or colon). */
static const char *complete(debugger *d, const char *line, size_t n)
{
    size_t start = strlen(line);
    while (start && line[start - 1] != ' ' && line[start - 1] != ':')
        start--;
    bool files;
    return debugger_complete(d, line, start, n, &files);
}

static uint32_t word_at(const session *s, uint32_t tile, uint32_t addr)
{
    uint32_t v = 0;
    const ipu_tile *t = engine_tile(debugger_engine(s->d), tile);
    tmem_read_bytes(&t->s.mem, addr, &v, 4);
    return v;
}

/* ---- breakpoints, registers, stepi ----------------------------------------------- */

static void test_break_pc_registers_stepi(void)
{
    session s = open_ring(2, 3, 1);
    EXPECT_OUT(s, "break 1:worker", "Breakpoint 1: tile 1, pc 0x4c040 <worker> (test.S:23)\n");
    EXPECT_OUT(s, "run", "Starting test.elf on gc200 (2 tiles with code).\n"
                         "Breakpoint 1, tile 1, worker 4, pc 0x4c040 <worker> (test.S:23), cycle 9\n"
                         "   0x4c040:  setzi $m0, 4\n");
    CU_ASSERT_EQUAL(s.r, DEBUGGER_OK);
    CU_ASSERT_EQUAL(debugger_tile(s.d), 1);
    CU_ASSERT_EQUAL(debugger_context(s.d), 4);
    /* Worker 4's vertex base: counts + 3 x 16. */
    EXPECT_OUT(s, "print $m13", "$m13 = 0x00080050 (524368, 524368)\n");
    EXPECT_OUT(s, "p $m0", "$m0 = 0x00000000 (0, 0)\n");
    EXPECT_OUT(s, "print $VERTEX_BASE", "$VERTEX_BASE = 0x00080050 (524368, 524368)\n");
    const ipu_tile *t1 = engine_tile(debugger_engine(s.d), 1);
    CU_ASSERT_EQUAL(t1->s.cycle, 9);
    CU_ASSERT_EQUAL(t1->s.ctx[4].pc, 0x4c040);
    /* The breakpoint stops before the issue; stepi issues it. */
    EXPECT_OUT(s, "stepi", "tile 1, worker 4, pc 0x4c040 <worker> (test.S:23), cycle 10\n"
                           "   0x4c040:  setzi $m0, 4\n"
                           "next: pc 0x4c044 <worker+0x4> (test.S:24)\n");
    CU_ASSERT_EQUAL(t1->s.ctx[4].m[0], 4);
    CU_ASSERT_EQUAL(t1->s.ctx[4].pc, 0x4c044);
    EXPECT_OUT(s, "where", "#0 tile 1, worker 4 (running), pc 0x4c044 <worker+0x4> (test.S:24)\n"
               "#1 started by the supervisor for the vertex state at 0x80050 <counts>\n"
                           "  cycle 10, superstep 0 of chip 0, paused (step)\n");
    /* Worker 5 reaches the breakpoint in the next cycle. */
    EXPECT_OUT(s, "c", "Breakpoint 1, tile 1, worker 5, pc 0x4c040 <worker> (test.S:23), cycle 10\n"
                       "   0x4c040:  setzi $m0, 4\n");
    EXPECT_OUT(s, "delete 1", "Deleted breakpoint 1.\n");
    /* Six issues of tile 1: whichever context owns each slot. */
    EXPECT_HAS(s, "stepi 6", "cycle 16\n");
    CU_ASSERT_EQUAL(engine_tile(debugger_engine(s.d), 1)->s.cycle, 16);
    EXPECT_HAS(s, "info breakpoints", "No breakpoints or watchpoints.\n");
    EXPECT_HAS(s, "continue", "The program ended: 1089 cycles, 528 instructions, 4 supersteps.\n");
    close_session(&s);
}

static void test_break_symbol_all_tiles(void)
{
    session s = open_ring(3, 1, 1);
    EXPECT_OUT(s, "break loop", "Breakpoint 1: loop on 3 tiles\n");
    EXPECT_HAS(s, "run", "Breakpoint 1, tile 0, supervisor, pc 0x4c020 <loop> (test.S:14), cycle 8\n");
    /* The other tiles stopped in the same batch are reported in tile order. */
    EXPECT_HAS(s, "continue", "Breakpoint 1, tile 1, supervisor, pc 0x4c020 <loop> (test.S:14), cycle 8\n");
    EXPECT_HAS(s, "continue", "Breakpoint 1, tile 2, supervisor");
    EXPECT_HAS(s, "info breakpoints", "1    breakpoint  keep loop on 3 tiles                          3\n");
    EXPECT_OUT(s, "disassemble",
               "    0x4c014 <__supervisor+0x14> (test.S:10):  setzi $m5, 0\n"
               "    0x4c018 <__supervisor+0x18> (test.S:11):  setzi $m6, 0x80010\n"
               "    0x4c01c <__supervisor+0x1c> (test.S:12):  setzi $m7, 1\n"
               "=>b 0x4c020 <loop> (test.S:14):  runall $m1, $m2, $m4\n"
               "    0x4c024 <loop+0x4> (test.S:15):  sync 0\n"
               "    0x4c028 <loop+0x8> (test.S:16):  xsend $m3, $m4, $m5\n"
               "    0x4c02c <loop+0xc> (test.S:17):  xrecv $m6, $m4, $m7\n"
               "    0x4c030 <loop+0x10> (test.S:18):  sync 1\n");
    EXPECT_OUT(s, "x/2x sbuf", "0x80000 <sbuf>: 0x00000003 0x00000002\n");
    EXPECT_OUT(s, "x/4b 0x80000", "0x80000 <sbuf>: 03 00 00 00\n");
    close_session(&s);
}

/* The tile alone: a breakpoint stops before the issue, stepping over it
 * goes on, and the run ends as one without stops. */
static void test_tile_breakpoints(void)
{
    static const char src[] = "__supervisor:\n setzi $m0, 3\nloop:\n add $m1, $m1, 2\n brnzdec $m0, loop\n"
                              " exitz $mzero\n";
    char err[1024];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &m, err, sizeof err));
    ipu_exe *e = asm_assemble_string(src, "t.S", NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    ipu_tile a, b;
    CU_ASSERT_TRUE_FATAL(tile_init(&a, &m, 0) && tile_load(&a, e, err, sizeof err));
    CU_ASSERT_TRUE_FATAL(tile_init(&b, &m, 0) && tile_load(&b, e, err, sizeof err));
    CU_ASSERT_EQUAL(tile_run_alone(&a, 1000), TILE_STOP_END);
    CU_ASSERT_FALSE(tile_set_breakpoint(&b, 0x4c006, true));
    CU_ASSERT_FALSE(tile_set_breakpoint(&b, 0x4c010, true));
    CU_ASSERT_TRUE(tile_set_breakpoint(&b, 0x4c004, true));
    CU_ASSERT_TRUE(tile_breakpoint_at(&b, 0x4c004));
    for (unsigned visit = 0; visit < 4; visit++) {
        CU_ASSERT_EQUAL(tile_run(&b, 1000), TILE_STOP_BREAK);
        CU_ASSERT_EQUAL(b.break_pc, 0x4c004);
        CU_ASSERT_EQUAL(b.break_context, 0);
        CU_ASSERT_EQUAL(b.s.ctx[0].pc, 0x4c004);
        CU_ASSERT_EQUAL(b.s.ctx[0].m[1], 2 * visit);
        /* setzi at cycle 0; then add, brnzdec and the branch back to a
         * 4-mod-8 address (branch_misaligned_penalty_cycles). */
        CU_ASSERT_EQUAL(b.s.cycle, 1 + visit * (2 + machine_u32(&m, MP_branch_misaligned_penalty_cycles)));
        tile_step_over_break(&b);
    }
    CU_ASSERT_TRUE(tile_set_breakpoint(&b, 0x4c004, false));
    CU_ASSERT_EQUAL(tile_run_alone(&b, 1000), TILE_STOP_END);
    CU_ASSERT_EQUAL(b.s.cycle, a.s.cycle);
    CU_ASSERT_EQUAL(b.s.ctx[0].m[1], 8);
    CU_ASSERT_EQUAL(memcmp(&a.stats, &b.stats, sizeof a.stats), 0);
    tile_free(&a);
    tile_free(&b);
    exe_free(e);
}

/* ---- supersteps, cycles, watchpoints ------------------------------------------------ */

static void test_superstep_and_cycle_breaks(void)
{
    session s = open_ring(2, 3, 1);
    EXPECT_OUT(s, "break superstep 1", "Breakpoint 1: end of superstep 1\n");
    EXPECT_OUT(s, "run", "Starting test.elf on gc200 (2 tiles with code).\n"
                         "Breakpoint 1, superstep 1 of chip 0 ended (sync 1) at cycle 726\n");
    EXPECT_OUT(s, "next-superstep", "superstep 2 of chip 0 ended (sync 1) at cycle 1086\n");
    EXPECT_OUT(s, "info supersteps",
               "chip  step ended_by  start_cycle    end_cycle     cycles  busiest instructions\n"
               "   0     0 sync 1              0          366        366        0          182\n"
               "   0     1 sync 1            366          726        360        0          170\n"
               "   0     2 sync 1            726         1086        360        0          170\n");
    EXPECT_OUT(s, "ns", "superstep 3 of chip 0 ended (end of program) at cycle 1089\n");
    EXPECT_OUT(s, "c", "The program ended: 1089 cycles, 528 instructions, 4 supersteps.\n");
    EXPECT_OUT(s, "break cycle 500", "Breakpoint 2: cycle 500\n");
    EXPECT_HAS(s, "run", "Breakpoint 2, tile 0 reached cycle 500\n");
    CU_ASSERT_EQUAL(engine_tile(debugger_engine(s.d), 0)->s.cycle, 500);
    /* Cycle breakpoints fire once per run: tile 1 does not stop there. */
    EXPECT_OUT(s, "delete 1", "Deleted breakpoint 1.\n");
    EXPECT_OUT(s, "c", "The program ended: 1089 cycles, 528 instructions, 4 supersteps.\n");
    close_session(&s);
}

static void test_watch_store_and_exchange(void)
{
    session s = open_ring(2, 3, 1);
    EXPECT_OUT(s, "watch 0:counts", "Watchpoint 1: tile 0 0x80020 (4 bytes)\n");
    EXPECT_OUT(s, "run", "Starting test.elf on gc200 (2 tiles with code).\n"
                         "Watchpoint 1, tile 0 0x80020 (4 bytes) changed\n"
                         "  old: 00 00 00 00\n"
                         "  new: 05 00 00 00\n"
                         "after the issue at tile 0, worker 1, pc 0x4c04c <worker+0xc> (test.S:26), cycle 103\n"
                         "   0x4c04c:  st32 $m2, $m13, $mzero, 0\n");
    CU_ASSERT_EQUAL(debugger_context(s.d), 1);
    CU_ASSERT_EQUAL(word_at(&s, 0, 0x80020), 5);
    /* The next store to it is in the next round: 5 + 5. */
    EXPECT_HAS(s, "c", "  old: 05 00 00 00\n  new: 0a 00 00 00\n");
    EXPECT_OUT(s, "delete all", "Deleted all breakpoints.\n");
    /* Exchanged data: tile 1 sends its sbuf (2, 1, 1, 1) in the first round. */
    EXPECT_OUT(s, "watch 0:rbuf:8", "Watchpoint 2: tile 0 0x80010 (8 bytes)\n");
    EXPECT_OUT(s, "run", "Starting test.elf on gc200 (2 tiles with code).\n"
                         "Watchpoint 2, tile 0 0x80010 (8 bytes) changed by the exchange\n"
                       "  old: 00 00 00 00 00 00 00 00\n"
                       "  new: 02 00 00 00 01 00 00 00\n");
    CU_ASSERT_EQUAL(word_at(&s, 0, 0x80010), 2);
    close_session(&s);
}

/* ---- same results with and without stops --------------------------------------------- */

typedef struct reference {
    ipu_exe *e;
    engine *g;
} reference;

static reference run_reference(const char *src, int threads)
{
    reference r;
    char err[4096];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &m, err, sizeof err));
    r.e = asm_assemble_string(src, "test.S", NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.e);
    r.g = engine_new(&m, r.e, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.g);
    engine_options o = { .threads = threads, .force_threads = threads > 1, .trace_tile_first = 1 };
    CU_ASSERT_EQUAL(engine_run(r.g, &o), ENGINE_DONE);
    return r;
}

static void check_stops_change_nothing(int threads)
{
    /* 40 tiles: batches big enough to run on two host threads. */
    char *src = ring_src(40, 4);
    reference ref = run_reference(src, threads);
    session s = open_src(src, threads);
    free(src);
    static const char *const script[] = {
        "watch 3:rbuf:16", "run", "delete all", "break worker", "c", "c", "c 5", "delete all", "stepi 7",
        "break cycle 500", "c", "tile 17", "stepi 20", "break superstep 2", "c", "delete all",
        "break cycle 1150", "break cycle 1151", "c", "c", "delete all", "break 21:loop+16", "watch 17:counts",
        "c", "c", "si 3", "delete all", "ns",
    };
    for (size_t i = 0; i < sizeof script / sizeof script[0]; i++) {
        run_cmd(&s, script[i]);
        if (s.r != DEBUGGER_OK || strstr(s.out, "The program ended"))
            fprintf(stderr, "\n'%s' gave:\n%s", script[i], s.out);
        CU_ASSERT_EQUAL(s.r, DEBUGGER_OK);
        CU_ASSERT_PTR_NULL(strstr(s.out, "The program ended"));
    }
    EXPECT_HAS(s, "c", "The program ended:");
    sys_same_run(ref.g, debugger_engine(s.d));
    close_session(&s);
    engine_free(ref.g);
    exe_free(ref.e);
}

static void test_stops_change_nothing_one_thread(void) { check_stops_change_nothing(1); }
static void test_stops_change_nothing_two_threads(void) { check_stops_change_nothing(2); }

/* The engine alone: a pause at every 97th cycle and every superstep end. */
static void test_engine_pauses(void)
{
    char *src = ring_src(40, 3);
    reference ref = run_reference(src, 2);
    reference r;
    char err[4096];
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &m, err, sizeof err));
    r.e = asm_assemble_string(src, "test.S", NULL, err, sizeof err);
    free(src);
    r.g = engine_new(&m, r.e, err, sizeof err);
    engine_options o = { .threads = 2, .force_threads = true, .trace_tile_first = 1 };
    CU_ASSERT_EQUAL_FATAL(engine_start(r.g, &o), ENGINE_DONE);
    engine_debug dbg = { .superstep_end = true };
    unsigned cycle_pauses = 0, superstep_pauses = 0;
    enum engine_status st;
    for (uint64_t next = 97;; ) {
        dbg.break_cycle = next;
        engine_set_debug(r.g, &dbg);
        st = engine_continue(r.g);
        if (st != ENGINE_PAUSED)
            break;
        const engine_pause *p = engine_get_pause(r.g);
        if (p->reason == ENGINE_PAUSE_CYCLE) {
            CU_ASSERT_EQUAL(p->cycle, next);
            cycle_pauses++;
            next += 97;
        } else {
            CU_ASSERT_EQUAL(p->reason, ENGINE_PAUSE_SUPERSTEP);
            CU_ASSERT_EQUAL(p->superstep, superstep_pauses);
            superstep_pauses++;
            /* Tiles jump from a barrier to its release: break after it. */
            next = (p->cycle / 97 + 1) * 97;
        }
    }
    CU_ASSERT_EQUAL(st, ENGINE_DONE);
    CU_ASSERT_EQUAL(superstep_pauses, 4);
    CU_ASSERT_TRUE(cycle_pauses >= 4);
    CU_ASSERT_TRUE(engine_finished(r.g));
    CU_ASSERT_EQUAL(engine_continue(r.g), ENGINE_DONE);
    sys_same_run(ref.g, r.g);
    engine_free(r.g);
    exe_free(r.e);
    engine_free(ref.g);
    exe_free(ref.e);
}

/* A tensor map added by hand to the ring program: x, i32 [2,3], its first
 * row at tile 0's sbuf (1, 0, 0), its second at tile 1's (2, 1, 1). */
static void test_print_tensor(void)
{
    char *src = ring_src(2, 1);
    char err[4096];
    ipu_exe *e = asm_assemble_string(src, "test.S", NULL, err, sizeof err);
    free(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    tensor_map *tm = tmap_new();
    uint64_t dims[2] = { 2, 3 };
    tmap_tensor *x = tmap_add_tensor(tm, "x", 6, 4, 2, dims, TMAP_ACTIVATION);
    CU_ASSERT_TRUE_FATAL(x && tmap_add_piece(x, 0, 0x80000, 0, 3, TMAP_NO_STREAM) &&
                         tmap_add_piece(x, 1, 0x80000, 3, 3, TMAP_NO_STREAM));
    uint8_t *blob;
    size_t size;
    CU_ASSERT_TRUE_FATAL(tmap_encode(tm, &blob, &size));
    CU_ASSERT_TRUE_FATAL(exe_set_blob(&e->tensors, blob, size));
    free(blob);
    tmap_free(tm);
    session s;
    memset(&s, 0, sizeof s);
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &s.m, err, sizeof err));
    s.e = e;
    s.d = debugger_new(&s.m, s.e, "test.elf", NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s.d);
    EXPECT_OUT(s, "info tensors", "x: i32 [2,3] activation, 2 pieces, first on tile 0 at 0x80000\n");
    EXPECT_OUT(s, "print x", "x: i32 [2,3] activation, 6 elements shown\n  [0,0] 1 0 0\n  [1,0] 2 1 1\n");
    EXPECT_OUT(s, "print x[1, 1:]", "x: i32 [2,3] activation, 2 elements shown\n  [1,1] 1 1\n");
    EXPECT_OUT(s, "print x [:, 0]", "x: i32 [2,3] activation, 2 elements shown\n  [0,0] 1\n  [1,0] 2\n");
    EXPECT_OUT(s, "print x[2]", "error: index 2 is out of range for dimension 0 (size 2)\n");
    EXPECT_OUT(s, "print x[0, 2:1]", "error: slice 2:1 is out of range for dimension 1 (size 3)\n");
    EXPECT_OUT(s, "print x[0,0,0]", "error: tensor 'x' has 2 dimensions\n");
    EXPECT_OUT(s, "print x[0", "error: bad slice at ''\n");
    EXPECT_OUT(s, "print y", "error: no tensor 'y' in test.elf and no symbol of that name on tile 0\n");
    CU_ASSERT_STRING_EQUAL(complete(s.d, "print x", 0), "x");
    close_session(&s);
}

/* ---- faults and mistakes ---------------------------------------------------------------- */

static void test_fault_stops_at_the_faulting_context(void)
{
    session s = open_src(".tile 0\n .text\n__supervisor:\n exitz $mzero\n"
                         ".tile 1\n .text\n__supervisor:\n setzi $m1, worker\n"
                         " run $m1, $mzero, $m2\n sync 0\n exitz $mzero\n"
                         "worker:\n setzi $m0, 0x80001\n ld32 $m1, $m0, $mzero, 0\n exitz $mzero\n"
                         " .data\n .word 0\n", 1);
    EXPECT_HAS(s, "run", "Simulated exception: tile 1, worker 1, pc 0x4c014 (test.S:14, in worker+0x4): misaligned access: ld32 at 0x80001: ");
    CU_ASSERT_EQUAL(debugger_tile(s.d), 1);
    CU_ASSERT_EQUAL(debugger_context(s.d), 1);
    EXPECT_OUT(s, "where", "#0 tile 1, worker 1 (faulted), pc 0x4c014 <worker+0x4> (test.S:14)\n"
               "#1 started by the supervisor for the vertex state at 0x0\n"
                           "  cycle 13, superstep 0 of chip 0, faulted\n");
    EXPECT_OUT(s, "c", "error: the program is not running (it has ended; 'run' starts it again)\n");
    CU_ASSERT_EQUAL(s.r, DEBUGGER_ERROR);
    close_session(&s);
}

static void test_bad_commands(void)
{
    session s = open_ring(2, 1, 1);
    static const struct { const char *cmd, *err; } cases[] = {
        { "bogus", "error: unknown command 'bogus' (try 'help')\n" },
        { "st", "error: ambiguous command 'st' (step, stepi, ...)\n" },
        { "x/0x 1", "error: x: the count must be 1 to 4096\n" },
        { "x/4q 0x80000", "error: x: unknown format 'q 0x80000' (x hex, d decimal, u unsigned, f f32, h f16, b bytes, i instructions)\n" },
        { "x/4x 0x1", "error: tile 0: 0x1-0x10 is not in tile memory (0x4c000-0xe7fff)\n" },
        { "c/x", "error: continue takes no /FMT ('c/...')\n" },
        { "break", "error: break needs a location: TILE:ADDR, TILE:SYMBOL, SYMBOL, ADDR, superstep N or cycle N\n" },
        { "break 9:0x4c000", "error: tile 9 has no code in test.elf\n" },
        { "break 0:0x4c002", "error: tile 0: 0x4c002 is not 4-byte aligned\n" },
        { "break 0:0x80000", "error: tile 0: 0x80000 is not in the tile's code (0x4c000-0x4c053)\n" },
        { "break 0:nosuch", "error: no symbol 'nosuch' on tile 0\n" },
        { "break nosuch", "error: no symbol 'nosuch' in test.elf\n" },
        { "break cycle 0", "error: break cycle needs a number (1, 2, ...)\n" },
        { "break superstep x", "error: break superstep needs a number (0, 1, ...)\n" },
        { "break 0:loop 1:loop", "error: break takes one location (and 'if EXPR'), got '0:loop 1:loop'\n" },
        { "delete 7", "error: no breakpoint number 7\n" },
        { "d", "error: delete needs breakpoint numbers or 'all'\n" },
        { "watch 0:0x80000:65", "error: watch: bytes must be 1 to 64\n" },
        { "watch 0:0x1", "error: tile 0: 0x1 (4 bytes) is not in tile memory (0x4c000-0xe7fff)\n" },
        { "watch 5", "error: tile 0: 0x5 (4 bytes) is not in tile memory (0x4c000-0xe7fff)\n" },
        { "watch nosuch", "error: no symbol 'nosuch' on tile 0\n" },
        { "print $m16", "error: unknown register '$m16' ($m0-$m15, $a0-$a15, $pc or a CSR such as $FP_CTL)\n" },
        { "print", "error: print needs $REGISTER, a tensor or a symbol\n" },
        { "print nothing", "error: no symbol 'nothing' on tile 0 (test.elf has no tensor map)\n" },
        { "tile 5", "error: tile 5 has no code in test.elf\n" },
        { "tile x", "error: tile needs a tile number, got 'x'\n" },
        { "context w7", "error: context needs sup or w1..w6, got 'w7'\n" },
        { "info foo", "error: info foo: expected one of breakpoints, registers, tiles, supersteps, exchange, tensors, memory, amp, frame, display, checkpoints\n" },
        { "info registers w9", "error: info registers takes a context: sup or w1..w6, got 'w9'\n" },
        { "stepi 0", "error: expected a count from 1 to 1000000000, got '0'\n" },
        { "continue -1", "error: expected a count from 1 to 1000000000, got '-1'\n" },
        { "run x", "error: run takes no arguments (inputs are given to 'ipusim debug')\n" },
        { "help nothing", "error: unknown command 'nothing' (try 'help')\n" },
        { "disassemble 0x80000", "error: tile 0: 0x80000 is outside the code (0x4c000-0x4c053)\n" },
        { "quit now", "error: quit takes no arguments\n" },
        { "where\x01", "error: control character 0x01 in the command\n" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        EXPECT_OUT(s, cases[i].cmd, cases[i].err);
        CU_ASSERT_EQUAL(s.r, DEBUGGER_ERROR);
    }
    /* Nothing was changed by them. */
    EXPECT_OUT(s, "info breakpoints", "No breakpoints or watchpoints.\n");
    EXPECT_OUT(s, "# a comment", "");
    CU_ASSERT_EQUAL(s.r, DEBUGGER_OK);
    EXPECT_OUT(s, "   ", "");
    EXPECT_HAS(s, "help", "  stepi (si)                     stepi [N]\n");
    EXPECT_OUT(s, "help c", "continue [N]  (alias: c)\n  Go on to the next stop (N times).\n  N           a repeat count, 1 or more\n");
    run_cmd(&s, "quit");
    CU_ASSERT_EQUAL(s.r, DEBUGGER_QUIT);
    /* Completion. */
    CU_ASSERT_STRING_EQUAL(complete(s.d, "disa", 0), "disassemble");
    CU_ASSERT_PTR_NULL(complete(s.d, "disa", 1));
    CU_ASSERT_STRING_EQUAL(complete(s.d, "print $FP_CT", 0), "$FP_CTL");
    CU_ASSERT_STRING_EQUAL(complete(s.d, "break wor", 0), "worker");
    CU_ASSERT_PTR_NULL(complete(s.d, "break wor", 1));
    /* What may come where: info's topics, contexts after info registers,
     * "if" after a location, nothing after a count, files for source. */
    CU_ASSERT_STRING_EQUAL(complete(s.d, "info ", 0), "breakpoints");
    CU_ASSERT_STRING_EQUAL(complete(s.d, "i reg", 0), "registers");
    CU_ASSERT_STRING_EQUAL(complete(s.d, "info registers w", 0), "w1");
    CU_ASSERT_STRING_EQUAL(complete(s.d, "break loop ", 0), "if");
    CU_ASSERT_STRING_EQUAL(complete(s.d, "break superstep ", 0) ? "x" : "none", "none");
    CU_ASSERT_STRING_EQUAL(complete(s.d, "break superstep 3 ", 0), "if");
    CU_ASSERT_STRING_EQUAL(complete(s.d, "break 0:wor", 0), "worker");
    CU_ASSERT_PTR_NULL(complete(s.d, "break reg", 0));
    CU_ASSERT_PTR_NULL(complete(s.d, "continue ", 0));
    CU_ASSERT_STRING_EQUAL(complete(s.d, "help inf", 0), "info");
    CU_ASSERT_STRING_EQUAL(complete(s.d, "help info t", 0), "tiles");
    CU_ASSERT_STRING_EQUAL(complete(s.d, "print $m1", 0), "$m1");
    CU_ASSERT_STRING_EQUAL(complete(s.d, "print $m1", 1), "$m10");
    CU_ASSERT_STRING_EQUAL(complete(s.d, "goto ", 0), "superstep");
    bool files = false;
    debugger_complete(s.d, "source ", 7, 0, &files);
    CU_ASSERT_TRUE(files);
    close_session(&s);
}

/* ---- going back ------------------------------------------------------------------------- */

/* Everything of every tile a user can look at: registers of every context,
 * AMP state, cycle, issue state, statistics and all of its memory. */
typedef struct machine_state {
    size_t tiles;
    ipu_tile *t;                  /* shallow copies: pointers not compared */
    uint8_t **mem;
    uint64_t cycles[4096];
    size_t supersteps;
} machine_state;

static machine_state grab(debugger *d)
{
    engine *g = debugger_engine(d);
    machine_state m = { .tiles = engine_tile_count(g) };
    m.t = calloc(m.tiles, sizeof *m.t);
    m.mem = calloc(m.tiles, sizeof *m.mem);
    for (size_t i = 0; i < m.tiles; i++) {
        const ipu_tile *t = engine_tile_at(g, i);
        m.t[i] = *t;
        m.mem[i] = malloc(t->s.mem.size_bytes);
        CU_ASSERT_EQUAL(tmem_read_bytes(&t->s.mem, t->s.mem.base, m.mem[i], t->s.mem.size_bytes), TMEM_OK);
        m.cycles[i] = engine_tile_cycle(g, t->tile_id);
    }
    m.supersteps = engine_get_stats(g)->n_supersteps;
    return m;
}

static void same_state(const machine_state *a, const machine_state *b)
{
    CU_ASSERT_EQUAL_FATAL(a->tiles, b->tiles);
    CU_ASSERT_EQUAL(a->supersteps, b->supersteps);
    for (size_t i = 0; i < a->tiles; i++) {
        const ipu_tile *x = &a->t[i], *y = &b->t[i];
        CU_ASSERT_EQUAL(memcmp(x->s.ctx, y->s.ctx, sizeof x->s.ctx), 0);
        CU_ASSERT_EQUAL(memcmp(&x->s.amp, &y->s.amp, sizeof x->s.amp), 0);
        CU_ASSERT_EQUAL(x->s.cycle, y->s.cycle);
        CU_ASSERT_EQUAL(a->cycles[i], b->cycles[i]);
        CU_ASSERT_EQUAL(memcmp(x->ready_cycle, y->ready_cycle, sizeof x->ready_cycle), 0);
        CU_ASSERT_EQUAL(x->slot, y->slot);
        CU_ASSERT_EQUAL(x->issued_instructions, y->issued_instructions);
        CU_ASSERT_EQUAL(memcmp(a->mem[i], b->mem[i], x->s.mem.size_bytes), 0);
    }
}

static void drop_state(machine_state *m)
{
    for (size_t i = 0; i < m->tiles; i++)
        free(m->mem[i]);
    free(m->mem);
    free(m->t);
}

static session open_ring_checkpoints(unsigned tiles, unsigned rounds, uint32_t every)
{
    char *src = ring_src(tiles, rounds);
    session s;
    memset(&s, 0, sizeof s);
    char err[4096];
    s.e = asm_assemble_string(src, "test.S", NULL, err, sizeof err);
    free(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s.e);
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &s.m, err, sizeof err));
    debugger_options o = { .threads = 2, .checkpoint_every = every };
    s.d = debugger_new(&s.m, s.e, "test.elf", &o, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s.d);
    return s;
}

/* After the run ends, goto superstep N gives what a fresh run stopped at
 * superstep N has, register for register and byte for byte; and going on
 * from there ends as the first run did.  With a checkpoint every superstep
 * and every third (the goto then re-executes from an earlier one). */
static void check_goto_superstep(uint32_t every)
{
    for (uint64_t n = 0; n < 5; n++) {
        session fresh = open_ring_checkpoints(40, 5, every);
        char cmd[64];
        snprintf(cmd, sizeof cmd, "break superstep %llu", (unsigned long long)n);
        run_cmd(&fresh, cmd);
        run_cmd(&fresh, "run");
        CU_ASSERT_PTR_NOT_NULL(strstr(fresh.out, "ended (sync 1)"));
        machine_state want = grab(fresh.d);

        session back = open_ring_checkpoints(40, 5, every);
        run_cmd(&back, "run");
        CU_ASSERT_PTR_NOT_NULL(strstr(back.out, "The program ended"));
        snprintf(cmd, sizeof cmd, "goto superstep %llu", (unsigned long long)n);
        run_cmd(&back, cmd);
        CU_ASSERT_EQUAL(back.r, DEBUGGER_OK);
        CU_ASSERT_PTR_NOT_NULL(strstr(back.out, "At the end of superstep"));
        machine_state got = grab(back.d);
        same_state(&want, &got);
        drop_state(&want);
        drop_state(&got);
        /* Both go on to the same end. */
        run_cmd(&fresh, "delete all");
        run_cmd(&fresh, "continue");
        run_cmd(&back, "continue");
        CU_ASSERT_STRING_EQUAL(fresh.out, back.out);
        sys_same_run(debugger_engine(fresh.d), debugger_engine(back.d));
        close_session(&fresh);
        close_session(&back);
    }
}

static void test_goto_superstep_every(void) { check_goto_superstep(1); }
static void test_goto_superstep_every_third(void) { check_goto_superstep(3); }

/* reverse-stepi N lands where stepi had been N issues before;
 * reverse-continue at the breakpoint stop before; reverse-next-superstep at
 * the end of the superstep before. */
static void test_reverse_step_and_continue(void)
{
    session s = open_ring_checkpoints(4, 3, 1);
    run_cmd(&s, "break 2:worker");
    run_cmd(&s, "run");
    run_cmd(&s, "delete all");
    run_cmd(&s, "stepi 5");
    machine_state at5 = grab(s.d);
    char *where5 = strdup(run_cmd(&s, "where"));
    run_cmd(&s, "stepi 40");
    run_cmd(&s, "reverse-stepi 40");
    CU_ASSERT_EQUAL(s.r, DEBUGGER_OK);
    machine_state back5 = grab(s.d);
    same_state(&at5, &back5);
    CU_ASSERT_STRING_EQUAL(run_cmd(&s, "where"), where5);
    drop_state(&back5);
    drop_state(&at5);
    free(where5);

    /* The stops of breakpoint 2 (a worker of tile 2 starting), in order. */
    run_cmd(&s, "break 2:worker");
    run_cmd(&s, "continue");
    char *hit2 = strdup(s.out);
    machine_state at_hit2 = grab(s.d);
    run_cmd(&s, "continue");
    run_cmd(&s, "continue");
    run_cmd(&s, "next-superstep");
    char *hits = strdup(run_cmd(&s, "info breakpoints"));
    run_cmd(&s, "reverse-continue");
    run_cmd(&s, "reverse-continue");
    run_cmd(&s, "reverse-continue");
    CU_ASSERT_STRING_EQUAL(s.out, hit2);
    machine_state back_hit2 = grab(s.d);
    same_state(&at_hit2, &back_hit2);
    drop_state(&at_hit2);
    drop_state(&back_hit2);
    free(hit2);
    /* Hits are not counted again by going back. */
    CU_ASSERT_STRING_EQUAL(run_cmd(&s, "info breakpoints"), hits);
    free(hits);
    /* No earlier stop: the start of the run. */
    run_cmd(&s, "delete all");
    EXPECT_OUT(s, "reverse-continue", "No breakpoint stopped the run before; at the start of the run.\n");
    EXPECT_OUT(s, "reverse-next-superstep", "At the start of the run.\n");

    run_cmd(&s, "tile 0");
    run_cmd(&s, "next-superstep");
    run_cmd(&s, "next-superstep");
    char *ss1 = strdup(run_cmd(&s, "info registers"));
    run_cmd(&s, "next-superstep");
    EXPECT_OUT(s, "reverse-next-superstep", "At the end of superstep 1 of chip 0 (sync 1) at cycle 726.\n");
    run_cmd(&s, "goto superstep 1");
    CU_ASSERT_STRING_EQUAL(run_cmd(&s, "info registers"), ss1);
    free(ss1);
    EXPECT_OUT(s, "goto superstep 9", "The program ended: 1089 cycles, 1056 instructions, 4 supersteps.\n"
                                      "error: chip 0 has no superstep 9 (it ran 4)\n");
    EXPECT_HAS(s, "info checkpoints", " Num   supersteps   latest cycle             issues      own KiB\n");
    close_session(&s);

    /* With checkpoints off, there is no going back. */
    s = open_ring_checkpoints(4, 3, 0);
    debugger_free(s.d);
    char err[512];
    debugger_options o = { .no_checkpoints = true };
    s.d = debugger_new(&s.m, s.e, "test.elf", &o, err, sizeof err);
    run_cmd(&s, "run");
    EXPECT_OUT(s, "goto superstep 1", "error: goto: no checkpoints (they are off: --checkpoint-every 0)\n");
    EXPECT_OUT(s, "info checkpoints", "Checkpoints are off (--checkpoint-every 0).\n");
    close_session(&s);
}

/* ---- the fuzzer's inputs -------------------------------------------------------------------- */

static unsigned replay(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return 0;
    unsigned n = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        if (de->d_name[0] == '.')
            continue;
        char path[4096], err[512], *data;
        size_t size;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (!read_whole_file(path, &data, &size, err, sizeof err))
            continue;
        fuzz_debugger_one((const uint8_t *)data, size);
        free(data);
        n++;
    }
    closedir(dp);
    return n;
}

static void test_fuzz_inputs(void)
{
    CU_ASSERT_TRUE(replay(IPUSIM_SOURCE_DIR "/tests/fuzz/corpus/debugger") >= 5);
    replay(IPUSIM_SOURCE_DIR "/tests/fuzz/regressions/debugger");
}

void test_register(void)
{
    ADD_SUITE("debugger",
              {"tile: breakpoints and stepping over", test_tile_breakpoints},
              {"break at a pc, registers, stepi", test_break_pc_registers_stepi},
              {"break at a symbol on every tile", test_break_symbol_all_tiles},
              {"superstep and cycle breakpoints", test_superstep_and_cycle_breaks},
              {"watchpoints: a store, exchanged data", test_watch_store_and_exchange},
              {"stops change nothing (1 thread)", test_stops_change_nothing_one_thread},
              {"stops change nothing (2 threads)", test_stops_change_nothing_two_threads},
              {"engine pauses at cycles and supersteps", test_engine_pauses},
              {"print a tensor by name", test_print_tensor},
              {"a fault stops at its tile and context", test_fault_stops_at_the_faulting_context},
              {"bad commands: exact messages", test_bad_commands},
              {"goto superstep = a fresh stop there (checkpoint each)", test_goto_superstep_every},
              {"goto superstep = a fresh stop there (every third)", test_goto_superstep_every_third},
              {"reverse-stepi, reverse-continue, reverse-next-superstep", test_reverse_step_and_continue},
              {"fuzzer corpus and regressions", test_fuzz_inputs});
}
