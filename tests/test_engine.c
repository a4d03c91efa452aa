/*
 * test_engine.c — the system engine: time in picoseconds, BSP syncs with
 * uneven tiles, deadlocks, several chips at their own clocks, IPU-Links,
 * host streams, streaming memory, determinism across host threads, and a
 * full 1472-tile chip for 100 supersteps.  Cycle counts are worked out by
 * hand in the comments (conventions of tests/test_tile.c: the instruction
 * that stops a tile takes its cycle; a program whose last issue is at
 * cycle c ends at c + 1).
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "exchange/exchange.h"
#include "sim/base/simtime.h"
#include "test_util.h"

/* ---- time ------------------------------------------------------------------ */

static void test_simtime(void)
{
    /* 1.325 GHz: cycle 104 starts at ceil(104e12 / 1.325e9) = 78491 ps. */
    CU_ASSERT_EQUAL(simtime_cycles_to_ps(104, 1325000000), 78491);
    CU_ASSERT_EQUAL(simtime_ps_to_cycle_ceil(78491, 1325000000), 104);
    CU_ASSERT_EQUAL(simtime_ps_to_cycle_ceil(78490, 1325000000), 104);   /* inside cycle 103 -> next start */
    CU_ASSERT_EQUAL(simtime_ps_to_cycle_ceil(78490 - 754, 1325000000), 103);
    CU_ASSERT_EQUAL(simtime_ps_to_cycle_ceil(0, 1325000000), 0);
    CU_ASSERT_EQUAL(simtime_ps_to_cycle_ceil(1, 1325000000), 1);
    /* 1 GHz: exact nanoseconds. */
    CU_ASSERT_EQUAL(simtime_cycles_to_ps(7, 1000000000), 7000);
    CU_ASSERT_EQUAL(simtime_ps_to_cycle_ceil(7000, 1000000000), 7);
    CU_ASSERT_EQUAL(simtime_ps_to_cycle_ceil(7001, 1000000000), 8);
    /* Round trips at odd clocks, far beyond 64 bits in the products. */
    static const uint64_t clocks[] = { 1325000000, 1850000000, 1600000000, 999999937, 3999999999ull, 100000001 };
    static const uint64_t cycles[] = { 0, 1, 2, 3, 1000, 123456789, 10000000000ull, 400000000000000ull }; /* 4e18 ps at 100 MHz: below 2^64 */
    for (size_t i = 0; i < sizeof clocks / sizeof *clocks; i++)
        for (size_t k = 0; k < sizeof cycles / sizeof *cycles; k++)
            CU_ASSERT_EQUAL(simtime_ps_to_cycle_ceil(simtime_cycles_to_ps(cycles[k], clocks[i]), clocks[i]),
                            cycles[k]);
    /* 4096 bytes over 2 links of 13.6 GB/s: ceil(4096e12 / 2.72e10). */
    CU_ASSERT_EQUAL(simtime_transfer_ps(4096, 27200000000ull), 150589);
    CU_ASSERT_EQUAL(simtime_transfer_ps(32, 16000000000ull), 2000);
    CU_ASSERT_EQUAL(simtime_hz(1.325e9), 1325000000);
}

/* ---- BSP on one chip --------------------------------------------------------- */

static void test_sync_uneven_tiles(void)
{
    /* Tile 0: 10 nops, sync 1 at c10 (arrives 11); tile 1: 100 nops,
     * arrives 101; tile 2: arrives 1.  The slowest sets the pace: release
     * at 101 + 90 = 191, everyone's exitz at c191, end 192. */
    const char *src = ".tile 0\n__supervisor:\n .rept 10\n nop\n .endr\n sync 1\n exitz $mzero\n"
                      ".tile 1\n__supervisor:\n .rept 100\n nop\n .endr\n sync 1\n exitz $mzero\n"
                      ".tile 2\n__supervisor:\n sync 1\n exitz $mzero\n";
    sys_result r = sys_run("gc200", NULL, src, 1);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    for (uint32_t t = 0; t < 3; t++)
        CU_ASSERT_EQUAL(sys_cycles(&r, t), 192);
    CU_ASSERT_EQUAL(r.st->n_supersteps, 2);
    const engine_superstep *s = sys_step(&r, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->zone, 1);
    CU_ASSERT_EQUAL(s->c.cycles, 191);
    CU_ASSERT_EQUAL(s->busiest_tile, 1);
    CU_ASSERT_EQUAL(s->c.compute_cycles, 101);
    CU_ASSERT_EQUAL(s->c.exchange_cycles, 0);
    CU_ASSERT_EQUAL(s->c.sync_cycles, 90);
    /* Tile-cycles: compute 11 + 101 + 1, idle (101-11) + 0 + (101-1),
     * sync 3 x 90: 113 + 190 + 270 = 3 x 191. */
    CU_ASSERT_EQUAL(s->c.tile_compute_cycles, 113);
    CU_ASSERT_EQUAL(s->c.tile_idle_cycles, 190);
    CU_ASSERT_EQUAL(s->c.tile_sync_cycles, 270);
    CU_ASSERT_EQUAL(s->c.instructions, 113);
    const engine_superstep *e = sys_step(&r, 0, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(e->zone, 0);
    CU_ASSERT_EQUAL(e->start_cycle, 191);
    CU_ASSERT_EQUAL(e->c.cycles, 1);
    CU_ASSERT_EQUAL(e->c.instructions, 3);
    const engine_chip_stats *c = &r.st->chips[0];
    CU_ASSERT_EQUAL(c->tiles, 3);
    CU_ASSERT_EQUAL(c->supersteps, 2);
    CU_ASSERT_EQUAL(c->c.cycles, 192);
    CU_ASSERT_EQUAL(c->busiest_tile, 1);
    CU_ASSERT_EQUAL(engine_tile(r.g, 1)->stats.syncs, 1);
    sys_free(&r);
}

static void test_sync_latency_is_a_parameter(void)
{
    const char *src = ".tile 0\n__supervisor:\n sync 1\n exitz $mzero\n.tile 5\n__supervisor:\n nop\n sync 1\n exitz $mzero\n";
    sys_result r = sys_run("gc200", "sync_internal_cycles=7", src, 1);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    /* arrivals 1 and 2; release 2 + 7 = 9; end 10. */
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 10);
    CU_ASSERT_EQUAL(sys_cycles(&r, 5), 10);
    sys_free(&r);
}

static void test_deadlock_ended_tile(void)
{
    const char *src = ".tile 0\n__supervisor:\n sync 1\n exitz $mzero\n"
                      ".tile 1\n__supervisor:\n nop\n sync 1\n exitz $mzero\n"
                      ".tile 2\n__supervisor:\n nop\n exitz $mzero\n";
    sys_result r = sys_run("gc200", NULL, src, 1);
    SYS_ASSERT_STATUS(r, ENGINE_DEADLOCK);
    CU_ASSERT_STRING_EQUAL(r.message, "deadlock: sync 1 (chip 0) waits for 1 of 3 tiles, which cannot arrive:\n"
                                      "    tile 2 ended its program at pc 0x4c004 (test.S:13)");
    sys_free(&r);
}

static void test_deadlock_mixed_zones(void)
{
    /* On an M2000: tile 0 waits at sync 2 for tile 1472 (chip 1), which
     * passes its own chip's sync 1 and ends; tile 1 waits at sync 1 for
     * tile 0, which waits at sync 2. */
    const char *src = ".tile 0\n__supervisor:\n sync 2\n exitz $mzero\n"
                      ".tile 1\n__supervisor:\n sync 1\n exitz $mzero\n"
                      ".tile 1472\n__supervisor:\n sync 1\n exitz $mzero\n";
    sys_result r = sys_run("m2000", NULL, src, 1);
    SYS_ASSERT_STATUS(r, ENGINE_DEADLOCK);
    CU_ASSERT_STRING_EQUAL(r.message,
                           "deadlock: sync 1 (chip 0) waits for 1 of 2 tiles, which cannot arrive:\n"
                           "    tile 0 waits at sync 2 at pc 0x4c000 (test.S:3)\n"
                           "deadlock: sync 2 (all chips) waits for 2 of 3 tiles, which cannot arrive:\n"
                           "    tile 1 waits at sync 1 at pc 0x4c000 (test.S:7)\n"
                           "    tile 1472 ended its program at pc 0x4c004 (test.S:12)");
    sys_free(&r);
}

static void test_cycle_limit(void)
{
    sys_result r;
    memset(&r, 0, sizeof r);
    char err[512];
    r.e = asm_assemble_string("__supervisor:\n1: bri 1b\n", "t.S", NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.e);
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &r.m, err, sizeof err));
    r.g = engine_new(&r.m, r.e, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.g);
    engine_options o = { .max_cycles = 5000, .threads = 1, .trace_tile_first = 1 };
    CU_ASSERT_EQUAL(engine_run(r.g, &o), ENGINE_LIMIT);
    CU_ASSERT_STRING_EQUAL(engine_message(r.g), "tile 0 did not finish within 5000 cycles (--max-cycles)");
    sys_free(&r);
}

static void test_tile_beyond_machine(void)
{
    char err[512];
    ipu_exe *e = asm_assemble_string(".tile 1500\n__supervisor:\n exitz $mzero\n", "t.S", NULL, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    machine m;
    CU_ASSERT_TRUE_FATAL(machine_preset("gc200", &m, err, sizeof err));
    CU_ASSERT_PTR_NULL(engine_new(&m, e, err, sizeof err));
    CU_ASSERT_STRING_EQUAL(err, "tile 1500 is beyond the 1472 tiles of machine gc200 (1 chip x 1472 tiles)");
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &m, err, sizeof err));
    engine *g = engine_new(&m, e, err, sizeof err);
    CU_ASSERT_PTR_NOT_NULL(g);
    engine_free(g);
    exe_free(e);
}

/* ---- several chips ---------------------------------------------------------------- */

static void test_chips_do_not_wait_for_each_other(void)
{
    /* Chip 0 runs 3 short supersteps (sync 1), chip 1 one long one: chip
     * 0's releases are at 1 + 90 = 91, 92 + 90 = 182, 273; it ends at 274
     * whatever chip 1 does. */
    const char *src = ".tile 0\n__supervisor:\n sync 1\n sync 1\n sync 1\n exitz $mzero\n"
                      ".tile 1472\n__supervisor:\n .rept 2000\n nop\n .endr\n sync 1\n exitz $mzero\n";
    sys_result r = sys_run("m2000", NULL, src, 2);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 274);
    CU_ASSERT_EQUAL(sys_cycles(&r, 1472), 2001 + 90 + 1);
    CU_ASSERT_EQUAL(r.st->chips[0].supersteps, 4);
    CU_ASSERT_EQUAL(r.st->chips[1].supersteps, 2);
    sys_free(&r);
}

static void test_external_sync(void)
{
    /* M2000, one tile on chips 0 and 3 (same board: 1 hop).  Arrivals at
     * cycle 1 and 101: 101 cycles at 1.325 GHz = 76227 ps (rounded up).
     * Release at 76227 + 30000 = 106227 ps = cycle 141 (140.75 rounded
     * up).  Chip 0's superstep: 1 cycle of compute, 100 waiting for chip
     * 3, 40 of sync. */
    const char *src = ".tile 0\n__supervisor:\n sync 2\n exitz $mzero\n"
                      ".tile 4416\n__supervisor:\n .rept 100\n nop\n .endr\n sync 2\n exitz $mzero\n";
    sys_result r = sys_run("m2000", NULL, src, 1);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(simtime_cycles_to_ps(101, 1325000000), 76227);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 142);
    CU_ASSERT_EQUAL(sys_cycles(&r, 4416), 142);
    const engine_superstep *s = sys_step(&r, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->zone, 2);
    CU_ASSERT_EQUAL(s->c.compute_cycles, 1);
    CU_ASSERT_EQUAL(s->c.wait_cycles, 100);
    CU_ASSERT_EQUAL(s->c.sync_cycles, 40);
    CU_ASSERT_EQUAL(s->c.tile_idle_cycles, 100);
    sys_free(&r);
    /* On a bow-pod16 chips 0 and 4 are on different boards: board_hops = 2,
     * 60000 ps: release at 136227 ps = cycle 181 (180.5 up). */
    const char *src2 = ".tile 0\n__supervisor:\n sync 2\n exitz $mzero\n"
                       ".tile 5888\n__supervisor:\n .rept 100\n nop\n .endr\n sync 2\n exitz $mzero\n";
    r = sys_run("bow-pod16", "tile_clock_hz=1.325e9", src2, 1);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 182);
    sys_free(&r);
}

static void set_chip1_clock(engine *g)
{
    char err[256];
    CU_ASSERT_TRUE(engine_set_chip_clock(g, 1, 1e9, err, sizeof err));
}

static void test_chips_at_different_clocks(void)
{
    /* Chip 0 at 1.325 GHz arrives at cycle 101 (76227 ps); chip 1 at
     * 1 GHz at cycle 1 (1000 ps).  Release 76227 + 30000 = 106227 ps:
     * chip 0 resumes at cycle 141, chip 1 at cycle 107 (106.226 up). */
    const char *src = ".tile 0\n__supervisor:\n .rept 100\n nop\n .endr\n sync 2\n exitz $mzero\n"
                      ".tile 1472\n__supervisor:\n sync 2\n exitz $mzero\n";
    sys_result r = sys_run_with("m2000", NULL, src, 1, set_chip1_clock, false);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 142);
    CU_ASSERT_EQUAL(sys_cycles(&r, 1472), 108);
    CU_ASSERT_EQUAL(r.st->chips[1].clock_hz, 1000000000);
    sys_free(&r);
}

static void test_cross_chip_needs_sync2(void)
{
    /* After a sync 1 the phase belongs to one chip: a send to another chip
     * is a bad exchange. */
    const char *src = ".tile 0\n__supervisor:\n sync 1\n setzi $m0, 0x80000\n setzi $m1, 4\n setzi $m2, 1472\n"
                      " xsend $m0, $m1, $m2\n sync 1\n exitz $mzero\n"
                      ".tile 1472\n__supervisor:\n sync 1\n setzi $m0, 0x80000\n setzi $m1, 4\n setzi $m2, 0\n"
                      " xrecv $m0, $m1, $m2\n sync 1\n exitz $mzero\n";
    sys_result r = sys_run("m2000", NULL, src, 1);
    SYS_ASSERT_STATUS(r, ENGINE_FAULT);
    /* Tile 1472 stops a cycle earlier (its xrecv holds it 100 cycles, the
     * xsend 101): chip 1's phase is resolved first and finds the fault. */
    CU_ASSERT_STRING_EQUAL(r.message, "tile 1472, supervisor, pc 0x4c010 (test.S:16, in __supervisor+0x10): bad "
                                      "exchange: xrecv of 4 bytes from tile 0: tile 0 is on chip 0, outside this "
                                      "phase's sync group (chip 1 after sync 1; exchange between chips needs sync 2)"
                                      "\n    xrecv $m0, $m1, $m2");
    sys_free(&r);
}

static void test_cross_chip_after_other_chip_moved_on(void)
{
    /* Both tiles start in the system's phase; chip 1 passes a sync 1 and
     * so leaves it, while tile 0 (after a sync 3) still is in it and sends
     * to chip 1. */
    const char *src = ".tile 0\n__supervisor:\n sync 3\n setzi $m0, 0x80000\n setzi $m1, 4\n setzi $m2, 1472\n"
                      " xsend $m0, $m1, $m2\n sync 3\n exitz $mzero\n"
                      ".tile 1472\n__supervisor:\n sync 1\n sync 1\n exitz $mzero\n";
    sys_result r = sys_run("m2000", NULL, src, 1);
    SYS_ASSERT_STATUS(r, ENGINE_FAULT);
    CU_ASSERT_STRING_EQUAL(r.message, "tile 0, supervisor, pc 0x4c010 (test.S:7, in __supervisor+0x10): bad exchange: "
                                      "xsend of 4 bytes to tile 1472: tile 1472 is not in this exchange phase: chip "
                                      "1 has passed a sync 1 since the last sync 2 (exchange between chips needs "
                                      "sync 2)\n    xsend $m0, $m1, $m2");
    sys_free(&r);
}

/* The 4-chip program: on each chip 8 tiles (0, 2, .., 14 of the chip).
 * Superstep 0 computes (a loop), superstep 1 sends 4 KiB from each tile to
 * the same tile of the next chip over the IPU-Links, superstep 2 sends the
 * received 4 KiB to the host (stream = chip) and to streaming memory. */
static char *four_chip_program(void)
{
    size_t cap = 1 << 20, len = 0;
    char *s = malloc(cap);
#define OUT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__))
    for (uint32_t c = 0; c < 4; c++)
        for (uint32_t k = 0; k < 8; k++) {
            uint32_t t = c * 1472 + 2 * k, next = ((c + 1) % 4) * 1472 + 2 * k, prev = ((c + 3) % 4) * 1472 + 2 * k;
            OUT(".tile %u\n__supervisor:\n setzi $m0, 3000\n1: brnzdec $m0, 1b\n sync 2\n", t);
            OUT(" setzi $m3, sbuf\n setzi $m4, 4096\n setzi $m5, %u\n setzi $m6, rbuf\n setzi $m7, %u\n", next, prev);
            /* The receive is posted first: the stream enters the tile's
             * exchange port (exchange.h), and a receive posted after the
             * tile's own 1024-cycle send would be late and make the step
             * port-bound instead of link-bound. */
            OUT(" xrecv $m6, $m4, $m7\n xsend $m3, $m4, $m5\n sync 2\n");
            OUT(" setzi $m5, 0x80000\n shl $m5, $m5, 12\n or $m5, $m5, %u\n xsend $m6, $m4, $m5\n", c);
            OUT(" setzi $m5, 0x40000\n shl $m5, $m5, 12\n or $m5, $m5, %u\n xsend $m6, $m4, $m5\n", c * 8 + k);
            OUT(" sync 2\n exitz $mzero\n .data\nsbuf:\n .rept 1024\n .word %u\n .endr\nrbuf:\n .space 4096\n", t);
        }
#undef OUT
    return s;
}

static void test_four_chips_m2000_bow2000(void)
{
    char *src = four_chip_program();
    sys_result a = sys_run("m2000", NULL, src, 2);
    sys_result b = sys_run("bow2000", NULL, src, 2);
    free(src);
    SYS_ASSERT_STATUS(a, ENGINE_DONE);
    SYS_ASSERT_STATUS(b, ENGINE_DONE);
    for (uint32_t c = 0; c < 4; c++) {
        const engine_superstep *ca = sys_step(&a, c, 0), *cb = sys_step(&b, c, 0);
        const engine_superstep *la = sys_step(&a, c, 1), *lb = sys_step(&b, c, 1);
        const engine_superstep *ha = sys_step(&a, c, 2), *hb = sys_step(&b, c, 2);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ca);
        CU_ASSERT_PTR_NOT_NULL_FATAL(cb);
        CU_ASSERT_PTR_NOT_NULL_FATAL(la);
        CU_ASSERT_PTR_NOT_NULL_FATAL(lb);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ha);
        CU_ASSERT_PTR_NOT_NULL_FATAL(hb);
        /* Compute: the same cycles; time scales with the clock. */
        CU_ASSERT_EQUAL(ca->c.compute_cycles, cb->c.compute_cycles);
        CU_ASSERT_TRUE(ca->c.compute_cycles > 3000);
        double ta = (double)(ca->c.compute_cycles) / 1.325e9, tb = (double)(cb->c.compute_cycles) / 1.85e9;
        CU_ASSERT_DOUBLE_EQUAL(ta / tb, 1.85 / 1.325, 1e-9);
        /* Links: 8 x 4 KiB from this chip, the same busy time on both. */
        CU_ASSERT_EQUAL(la->c.link_bytes, 8 * 4096);
        CU_ASSERT_EQUAL(la->c.link_ps, 8 * 150589ull);
        CU_ASSERT_EQUAL(la->c.link_ps, lb->c.link_ps);
        /* The link superstep is link bound: its length in time hardly
         * changes with the clock (within 10 %), while its cycles grow. */
        double la_s = (double)(la->end_ps - la->start_ps), lb_s = (double)(lb->end_ps - lb->start_ps);
        CU_ASSERT_TRUE(lb_s / la_s > 0.9 && lb_s / la_s < 1.1);
        CU_ASSERT_TRUE(lb->c.cycles > la->c.cycles);
        /* Host and streaming memory: 8 x 4 KiB each way, equal busy time. */
        CU_ASSERT_EQUAL(ha->c.host_bytes, 8 * 4096);
        CU_ASSERT_EQUAL(ha->c.host_ps, 8 * simtime_transfer_ps(4096, 16000000000ull));
        CU_ASSERT_EQUAL(ha->c.host_ps, hb->c.host_ps);
        CU_ASSERT_EQUAL(ha->c.stream_bytes, 8 * 4096);
        CU_ASSERT_EQUAL(ha->c.stream_ps, hb->c.stream_ps);
        /* Host output stream c holds what chip c received from chip c-1. */
        size_t size;
        const uint8_t *out = engine_host_output(a.g, c, &size);
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        CU_ASSERT_EQUAL(size, 8 * 4096);
        uint32_t w;
        memcpy(&w, out + 4096 * 3 + 8, 4);
        CU_ASSERT_EQUAL(w, ((c + 3) % 4) * 1472 + 6);
        const uint8_t *buf = engine_stream_buffer(b.g, c * 8 + 7, &size);
        CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
        CU_ASSERT_EQUAL(size, 4096);
        memcpy(&w, buf + 4092, 4);
        CU_ASSERT_EQUAL(w, ((c + 3) % 4) * 1472 + 14);
    }
    CU_ASSERT_EQUAL(a.st->chips[0].c.link_ps, b.st->chips[0].c.link_ps);
    CU_ASSERT_EQUAL(a.st->chips[0].c.host_ps, b.st->chips[0].c.host_ps);
    CU_ASSERT_EQUAL(a.st->chips[0].c.stream_ps, b.st->chips[0].c.stream_ps);
    sys_free(&a);
    sys_free(&b);
}

/* ---- host streams and streaming memory ------------------------------------------- */

static void feed_host(engine *g)
{
    uint32_t in[8] = { 1, 2, 3, 4, 5, 6, 7, 0xcafe };
    CU_ASSERT_TRUE(engine_set_host_input(g, 0, in, sizeof in));
}

static void test_host_round_trip(void)
{
    /* Tile 0 reads 32 bytes from host stream 0 and sends them back on
     * host stream 1. */
    const char *src = "__supervisor:\n setzi $m0, buf\n setzi $m1, 32\n setzi $m2, 0x80000\n shl $m2, $m2, 12\n"
                      " xrecv $m0, $m1, $m2\n sync 3\n or $m2, $m2, 1\n xsend $m0, $m1, $m2\n sync 3\n exitz $mzero\n"
                      " .data\nbuf: .space 32\n";
    sys_result r = sys_run_with("gc200", NULL, src, 1, feed_host, false);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    /* xrecv at c4 (after 4 instructions), paying the set-up: starts at
     * c105 = 79246 ps; the host link takes 2000 ps (32 bytes at 16 GB/s)
     * after 2,000,000 ps of latency: done at 2,081,246 ps = cycle 2758
     * (2757.65 rounded up).  The tile stopped at sync 3 at 106 and
     * resumes at 2758.
     * Resume at 2758: or c2758, xsend c2759 (set-up again: a new phase)
     * holds the supervisor 1 + 100 + 8: sync 3 at c2868, stop 2869; the
     * sender does not wait for its data: exitz at 2869, end 2870. */
    CU_ASSERT_EQUAL(simtime_cycles_to_ps(105, 1325000000), 79246);
    CU_ASSERT_EQUAL(simtime_ps_to_cycle_ceil(2081246, 1325000000), 2758);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 2870);
    size_t size;
    const uint8_t *out = engine_host_output(r.g, 1, &size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_EQUAL(size, 32);
    uint32_t w[8];
    memcpy(w, out, 32);
    CU_ASSERT_EQUAL(w[0], 1);
    CU_ASSERT_EQUAL(w[7], 0xcafe);
    CU_ASSERT_EQUAL(r.st->chips[0].c.host_bytes, 64);
    CU_ASSERT_EQUAL(r.st->chips[0].c.host_ps, 4000);
    sys_free(&r);
}

static void test_host_input_exhausted(void)
{
    const char *src = "__supervisor:\n setzi $m0, buf\n setzi $m1, 64\n setzi $m2, 0x80000\n shl $m2, $m2, 12\n"
                      " xrecv $m0, $m1, $m2\n sync 3\n exitz $mzero\n .data\nbuf: .space 64\n";
    sys_result r = sys_run_with("gc200", NULL, src, 1, feed_host, false);
    SYS_ASSERT_STATUS(r, ENGINE_FAULT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "pc 0x4c010"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "bad exchange: xrecv of 64 bytes from host stream 0: only 32 bytes "
                                             "are left"));
    sys_free(&r);
    r = sys_run("gc200", NULL, src, 1);
    SYS_ASSERT_STATUS(r, ENGINE_FAULT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "xrecv of 64 bytes from host stream 0: no data was given for input "
                                             "stream 0"));
    sys_free(&r);
}

/* Write 32 bytes to streaming-memory buffer 5, then read them back twice
 * (the second read starts from the beginning again). */
static const char *stream_src =
    "__supervisor:\n setzi $m0, src\n setzi $m1, 32\n setzi $m2, 0x40000\n shl $m2, $m2, 12\n or $m2, $m2, 5\n"
    " xsend $m0, $m1, $m2\n sync 3\n setzi $m0, dst\n xrecv $m0, $m1, $m2\n sync 3\n"
    " setzi $m0, dst2\n xrecv $m0, $m1, $m2\n sync 3\n exitz $mzero\n"
    " .data\nsrc: .word 10, 11, 12, 13, 14, 15, 16, 17\ndst: .space 32\ndst2: .space 32\n";

static void test_streaming_memory_round_trip(void)
{
    sys_result r = sys_run("m2000", NULL, stream_src, 1);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    const exe_symbol *dst = exe_find_symbol(r.e, "dst"), *dst2 = exe_find_symbol(r.e, "dst2");
    CU_ASSERT_EQUAL(sys_word(&r, 0, dst->addr), 10);
    CU_ASSERT_EQUAL(sys_word(&r, 0, dst->addr + 28), 17);
    CU_ASSERT_EQUAL(sys_word(&r, 0, dst2->addr + 28), 17);
    CU_ASSERT_EQUAL(r.st->chips[0].c.stream_bytes, 96);
    /* 32 bytes at 20 GB/s: 1600 ps each. */
    CU_ASSERT_EQUAL(r.st->chips[0].c.stream_ps, 3 * 1600);
    size_t size;
    CU_ASSERT_PTR_NOT_NULL(engine_stream_buffer(r.g, 5, &size));
    CU_ASSERT_EQUAL(size, 32);
    sys_free(&r);
}

/* A buffer read to its end and written again holds only the new bytes: a
 * step loads two pieces (8 bytes each) and stores each back changed, in
 * the order it loaded them, twice; the buffer stays 16 bytes and the
 * second step reads what the first stored. */
static const char *queue_src =
    "__supervisor:\n setzi $m2, 0x40000\n shl $m2, $m2, 12\n or $m2, $m2, 3\n setzi $m1, 8\n setzi $m4, 2\n"
    "step:\n setzi $m0, a\n xrecv $m0, $m1, $m2\n sync 3\n ld32 $m5, $m0, $mzero, 0\n add $m5, $m5, 100\n"
    " st32 $m5, $m0, $mzero, 0\n xsend $m0, $m1, $m2\n sync 3\n"
    " setzi $m0, b\n xrecv $m0, $m1, $m2\n sync 3\n ld32 $m5, $m0, $mzero, 0\n add $m5, $m5, 1000\n"
    " st32 $m5, $m0, $mzero, 0\n xsend $m0, $m1, $m2\n sync 3\n"
    " add $m4, $m4, -1\n brnz $m4, step\n exitz $mzero\n"
    " .data\na: .word 0, 0\nb: .word 0, 0\n";

static void preload_queue(engine *g)
{
    uint32_t init[4] = { 1, 2, 3, 4 };
    char err[256];
    CU_ASSERT_TRUE(engine_set_stream_buffer(g, 3, init, sizeof init, err, sizeof err));
}

static void test_streaming_memory_rewritten(void)
{
    sys_result r = sys_run_with("m2000", NULL, queue_src, 1, preload_queue, false);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    size_t size;
    const uint8_t *buf = engine_stream_buffer(r.g, 3, &size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    CU_ASSERT_EQUAL_FATAL(size, 16);
    uint32_t w[4];
    memcpy(w, buf, sizeof w);
    CU_ASSERT_EQUAL(w[0], 201);          /* piece a: 1 + 100 + 100 */
    CU_ASSERT_EQUAL(w[1], 2);
    CU_ASSERT_EQUAL(w[2], 2003);         /* piece b: 3 + 1000 + 1000 */
    CU_ASSERT_EQUAL(w[3], 4);
    CU_ASSERT_EQUAL(r.st->chips[0].c.stream_bytes, 4 * 2 * 8);
    sys_free(&r);
}

static void test_streaming_memory_capacity(void)
{
    sys_result r = sys_run("m2000", "streaming_memory_bytes=16", stream_src, 1);
    SYS_ASSERT_STATUS(r, ENGINE_FAULT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "tile 0, supervisor, pc 0x4c014"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "bad exchange: xsend of 32 bytes to streaming-memory buffer 5: "
                                             "streaming memory is full (0 of 16 bytes used, streaming_memory_bytes)"));
    sys_free(&r);
    r = sys_run("gc200", NULL, stream_src, 1);
    SYS_ASSERT_STATUS(r, ENGINE_FAULT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "xsend of 32 bytes to streaming-memory buffer 5: this machine has no "
                                             "streaming memory (streaming_memory_bytes = 0)"));
    sys_free(&r);
}

/* ---- determinism ------------------------------------------------------------------ */

/* 2 chips x 24 tiles: workers compute amounts that differ per tile, then a
 * ring exchange inside each chip and one across the chips, 6 rounds. */
static char *ring_program(uint32_t per_chip, uint32_t rounds)
{
    size_t cap = 1 << 22, len = 0;
    char *s = malloc(cap);
#define OUT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__))
    for (uint32_t c = 0; c < 2; c++)
        for (uint32_t k = 0; k < per_chip; k++) {
            uint32_t t = c * 1472 + k;
            uint32_t next = c * 1472 + (k + 1) % per_chip, prev = c * 1472 + (k + per_chip - 1) % per_chip;
            uint32_t other = (1 - c) * 1472 + k;
            OUT(".tile %u\n__supervisor:\n setzi $m8, %u\n setzi $m1, worker\n setzi $m2, vb\n", t, rounds);
            OUT(" setzi $m3, acc\n setzi $m4, 24\n setzi $m6, rbuf\n setzi $m9, rbuf2\n");
            OUT("loop:\n runall $m1, $m2, $mzero\n sync 0\n");
            /* The ring inside the chip ends with sync 2, so the next phase
             * spans both chips; the exchange across them ends with sync 1. */
            OUT(" setzi $m5, %u\n setzi $m7, %u\n xsend $m3, $m4, $m5\n xrecv $m6, $m4, $m7\n sync 2\n", next, prev);
            OUT(" setzi $m5, %u\n xsend $m6, $m4, $m5\n xrecv $m9, $m4, $m5\n sync 1\n", other);
            OUT(" add $m8, $m8, -1\n brnz $m8, loop\n exitz $mzero\n");
            OUT("worker:\n get $m0, $WSR\n and $m0, $m0, 7\n add $m0, $m0, %u\n setzi $m5, acc\n", 3 + (t * 7) % 23);
            OUT(" get $m4, $WSR\n and $m4, $m4, 7\n shl $m4, $m4, 2\n ld32 $m3, $m5, $m4, 0\n");
            OUT("1: add $m3, $m3, %u\n brnzdec $m0, 1b\n st32 $m3, $m5, $m4, 0\n exitz $mzero\n", t + 1);
            OUT(" .data\nvb: .word 0\nacc: .space 24\nrbuf: .space 24\nrbuf2: .space 24\n");
        }
#undef OUT
    return s;
}

static void test_threads_deterministic(void)
{
    char *src = ring_program(24, 6);
    sys_result a = sys_run_with("m2000", NULL, src, 1, NULL, true);
    sys_result b = sys_run_with("m2000", NULL, src, 2, NULL, true);
    sys_result c = sys_run_with("m2000", NULL, src, 3, NULL, true);
    free(src);
    SYS_ASSERT_STATUS(a, ENGINE_DONE);
    SYS_ASSERT_STATUS(b, ENGINE_DONE);
    SYS_ASSERT_STATUS(c, ENGINE_DONE);
    CU_ASSERT_EQUAL(a.st->host_threads, 1);
    CU_ASSERT_EQUAL(b.st->host_threads, 2);
    CU_ASSERT_EQUAL(a.st->parallel_batches, 0);
    CU_ASSERT_EQUAL(b.st->parallel_batches, b.st->batches);
    CU_ASSERT_EQUAL(b.st->batches, a.st->batches);
    const sys_result *other[2] = { &b, &c };
    for (int o = 0; o < 2; o++) {
        const sys_result *x = other[o];
        CU_ASSERT_EQUAL_FATAL(x->st->n_supersteps, a.st->n_supersteps);
        CU_ASSERT_EQUAL(memcmp(x->st->supersteps, a.st->supersteps, a.st->n_supersteps * sizeof *a.st->supersteps), 0);
        CU_ASSERT_EQUAL(memcmp(x->st->chips, a.st->chips, a.st->n_chips * sizeof *a.st->chips), 0);
        CU_ASSERT_EQUAL(x->st->end_ps, a.st->end_ps);
        CU_ASSERT_EQUAL(x->st->tile_cycles, a.st->tile_cycles);
        CU_ASSERT_EQUAL(x->st->instructions, a.st->instructions);
        CU_ASSERT_EQUAL_FATAL(engine_tile_count(x->g), engine_tile_count(a.g));
        for (size_t i = 0; i < engine_tile_count(a.g); i++) {
            const ipu_tile *ta = engine_tile_at(a.g, i), *tx = engine_tile_at(x->g, i);
            CU_ASSERT_EQUAL(ta->s.cycle, tx->s.cycle);
            CU_ASSERT_EQUAL(memcmp(&ta->stats, &tx->stats, sizeof ta->stats), 0);
            uint8_t ma[0x100], mx[0x100];
            tmem_read_bytes(&ta->s.mem, 0x80000, ma, sizeof ma);
            tmem_read_bytes(&tx->s.mem, 0x80000, mx, sizeof mx);
            CU_ASSERT_EQUAL(memcmp(ma, mx, sizeof ma), 0);
        }
    }
    /* The ring moved data: tile 5's rbuf holds tile 4's accumulators. */
    const exe_symbol *acc = NULL, *rbuf = NULL;
    for (size_t i = 0; i < a.e->n_symbols; i++) {
        if (a.e->symbols[i].tile == 4 && !strcmp(a.e->symbols[i].name, "acc"))
            acc = &a.e->symbols[i];
        if (a.e->symbols[i].tile == 5 && !strcmp(a.e->symbols[i].name, "rbuf"))
            rbuf = &a.e->symbols[i];
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(acc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rbuf);
    CU_ASSERT_EQUAL(sys_word(&a, 5, rbuf->addr + 8), sys_word(&a, 4, acc->addr + 8));
    CU_ASSERT_NOT_EQUAL(sys_word(&a, 4, acc->addr + 8), 0);
    /* 6 rounds x 2 barriers + the end, per chip. */
    CU_ASSERT_EQUAL(a.st->chips[0].supersteps, 13);
    CU_ASSERT_EQUAL(a.st->chips[1].c.link_bytes, 6 * 24 * 24);
    sys_free(&a);
    sys_free(&b);
    sys_free(&c);
}

/* ---- a full chip ------------------------------------------------------------------- */

static void test_full_chip_100_supersteps(void)
{
    size_t cap = 1 << 23, len = 0;
    char *s = malloc(cap);
#define OUT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__))
    OUT(".macro TILE t, next, prev\n .tile \\t\n .text\n__supervisor:\n setzi $m8, 100\n setzi $m1, worker\n"
        " setzi $m3, sbuf\n setzi $m4, 16\n setzi $m5, \\next\n setzi $m6, rbuf\n setzi $m7, \\prev\n"
        "loop:\n runall $m1, $mzero, $mzero\n sync 0\n xsend $m3, $m4, $m5\n xrecv $m6, $m4, $m7\n sync 1\n"
        " add $m8, $m8, -1\n brnz $m8, loop\n exitz $mzero\n"
        "worker:\n setzi $m0, 4\n1: add $m2, $m2, 1\n brnzdec $m0, 1b\n exitz $mzero\n"
        " .data\nsbuf: .word \\t, \\t, \\t, \\t\nrbuf: .space 16\n.endm\n");
    for (uint32_t t = 0; t < 1472; t++)
        OUT("TILE %u, %u, %u\n", t, (t + 1) % 1472, (t + 1471) % 1472);
#undef OUT
    sys_result r = sys_run("gc200", NULL, s, 2);
    free(s);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(engine_tile_count(r.g), 1472);
    CU_ASSERT_EQUAL(r.st->chips[0].supersteps, 101);
    CU_ASSERT_EQUAL(r.st->chips[0].c.exchange_bytes, 100 * 1472 * 16);
    /* Every tile ends at the same cycle; tile 0 got tile 1471's words. */
    uint64_t end = (uint64_t)sys_cycles(&r, 0);
    for (uint32_t t = 0; t < 1472; t += 97)
        CU_ASSERT_EQUAL(sys_cycles(&r, t), end);
    const exe_symbol *rbuf = NULL;
    for (size_t i = 0; i < r.e->n_symbols; i++)
        if (r.e->symbols[i].tile == 0 && !strcmp(r.e->symbols[i].name, "rbuf"))
            rbuf = &r.e->symbols[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(rbuf);
    CU_ASSERT_EQUAL(sys_word(&r, 0, rbuf->addr + 12), 1471);
    /* The superstep that crosses the column boundary (tile 91 -> 92 ...)
     * is as long as the others: all supersteps but the last are equal. */
    const engine_superstep *s1 = sys_step(&r, 0, 1), *s50 = sys_step(&r, 0, 50);
    CU_ASSERT_EQUAL(s1->c.cycles, s50->c.cycles);
    fprintf(stderr, "[1472 tiles x 100 supersteps: %.2f host s, %.3g tile-cycles/s] ", r.st->host_seconds,
            (double)r.st->tile_cycles / r.st->host_seconds);
    sys_free(&r);
}

void test_register(void)
{
    ADD_SUITE("engine_time", {"picoseconds and cycles", test_simtime});
    ADD_SUITE("engine_bsp",
              {"uneven tiles: the slowest sets the pace", test_sync_uneven_tiles},
              {"sync latency is a parameter", test_sync_latency_is_a_parameter},
              {"deadlock: a tile ended", test_deadlock_ended_tile},
              {"deadlock: mixed zones", test_deadlock_mixed_zones},
              {"cycle limit", test_cycle_limit},
              {"tile beyond the machine", test_tile_beyond_machine});
    ADD_SUITE("engine_system",
              {"chips at sync 1 do not wait for each other", test_chips_do_not_wait_for_each_other},
              {"external sync across chips and boards", test_external_sync},
              {"chips at different clocks", test_chips_at_different_clocks},
              {"cross-chip exchange needs sync 2", test_cross_chip_needs_sync2},
              {"cross-chip exchange after the other chip moved on", test_cross_chip_after_other_chip_moved_on},
              {"4 chips on m2000 and bow2000", test_four_chips_m2000_bow2000},
              {"host streams round trip", test_host_round_trip},
              {"host input exhausted", test_host_input_exhausted},
              {"streaming memory round trip", test_streaming_memory_round_trip},
              {"streaming memory rewritten", test_streaming_memory_rewritten},
              {"streaming memory capacity", test_streaming_memory_capacity});
    ADD_SUITE("engine_parallel",
              {"1, 2 and 3 threads give the same run", test_threads_deterministic},
              {"1472 tiles, 100 supersteps", test_full_chip_100_supersteps});
}
