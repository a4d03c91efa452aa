/*
 * test_exchange.c — the exchange on small programs whose cycle counts are
 * worked out by hand (exchange/exchange.h has the model).
 *
 * GC200 parameters used below (sim/program/machine.def): 4 bytes per cycle (so n =
 * bytes / 4 cycles on the bus and at the receiver), set-up 100 cycles, base
 * latency 59, +2 per island of 4 tiles, +62 across columns of 92 tiles,
 * internal sync 90.
 *
 * Every tile of these programs sets three registers per transfer (one
 * setzi each, cycles 0 .. 3k-1 for k transfers), issues its exchange
 * instructions back to back, then `sync 3` (or the zone asked) and exitz.
 * With one transfer the exchange instruction issues at c3 and, paying the
 * set-up, starts at c3 + 1 + 100 = c104.  A sender of n cycles issues the
 * sync at c104 + n, stops at 105 + n, resumes at once and ends at 106 + n.
 * A receiver issues the sync at c104, stops at 105 and resumes when its
 * last byte is in (done): it ends at max(105, done) + 1.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"
#include "exchange/exchange.h"
#include "sim/base/simtime.h"
#include "test_util.h"

typedef struct xfer {
    uint32_t tile;
    char kind;          /* 's' xsend, 'r' xrecv */
    uint32_t bytes;
    uint32_t peer;      /* endpoint */
} xfer;

/* The program: every tile named in xs, its transfers in the order given,
 * then `sync zone` and exitz.  Send j of tile S carries the words
 * (S << 16) | (j << 8) | w; receive j lands at label rbufj. */
static char *program(const xfer *xs, size_t n, unsigned zone)
{
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    uint32_t done[64];
    size_t n_done = 0;
#define OUT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__))
    for (size_t i = 0; i < n; i++) {
        uint32_t t = xs[i].tile;
        bool seen = false;
        for (size_t k = 0; k < n_done; k++)
            seen |= done[k] == t;
        if (seen)
            continue;
        done[n_done++] = t;
        OUT("    .tile %u\n    .text\n__supervisor:\n", t);
        unsigned j = 0;
        for (size_t k = 0; k < n; k++) {
            if (xs[k].tile != t)
                continue;
            OUT("    setzi $m%u, %s%u\n    setzi $m%u, %u\n", 3 * j, xs[k].kind == 's' ? "sbuf" : "rbuf", j,
                3 * j + 1, xs[k].bytes);
            if (xs[k].peer < (1u << 20))
                OUT("    setzi $m%u, %u\n", 3 * j + 2, xs[k].peer);
            else if ((xs[k].peer & ~XCH_ENDPOINT_INDEX) == XCH_MULTICAST)
                OUT("    setzi $m%u, %u\n    shl $m%u, $m%u, 12\n    or $m%u, $m%u, %u\n", 3 * j + 2,
                    xs[k].peer >> 12, 3 * j + 2, 3 * j + 2, 3 * j + 2, 3 * j + 2, xs[k].peer & 0xfffu);
            else
                OUT("    ld32 $m%u, $mzero, $mzero, 0\n", 3 * j + 2);  /* replaced below */
            j++;
        }
        j = 0;
        for (size_t k = 0; k < n; k++)
            if (xs[k].tile == t) {
                OUT("    %s $m%u, $m%u, $m%u\n", xs[k].kind == 's' ? "xsend" : "xrecv", 3 * j, 3 * j + 1, 3 * j + 2);
                j++;
            }
        OUT("    sync %u\n    exitz $mzero\n    .data\n", zone);
        j = 0;
        for (size_t k = 0; k < n; k++) {
            if (xs[k].tile != t)
                continue;
            if (xs[k].kind == 's') {
                OUT("sbuf%u:\n", j);
                for (uint32_t w = 0; w < xs[k].bytes / 4; w++)
                    OUT("    .word 0x%x\n", (t << 16) | (j << 8) | w);
            } else {
                OUT("rbuf%u:\n    .space %u\n", j, xs[k].bytes ? xs[k].bytes : 4);
            }
            j++;
        }
    }
#undef OUT
    return s;
}

static sys_result run_xfers(const char *preset, const xfer *xs, size_t n, unsigned zone)
{
    char *src = program(xs, n, zone);
    sys_result r = sys_run(preset, NULL, src, 1);
    free(src);
    return r;
}

static uint32_t sym(const sys_result *r, uint32_t tile, const char *name)
{
    for (size_t i = 0; i < r->e->n_symbols; i++)
        if (r->e->symbols[i].tile == tile && !strcmp(r->e->symbols[i].name, name))
            return r->e->symbols[i].addr;
    CU_FAIL("no such symbol");
    return 0;
}

static void test_latency_by_distance(void)
{
    xch_params p = { .tiles_per_column = 92, .island_tiles = 4, .base_latency_cycles = 59, .cycles_per_island = 2,
                     .cross_column_cycles = 62, .chips_per_board = 4, .board_hops = 2 };
    CU_ASSERT_EQUAL(xch_latency_cycles(&p, 0, 1), 59);     /* same island */
    CU_ASSERT_EQUAL(xch_latency_cycles(&p, 0, 9), 63);     /* islands 0 and 2 */
    CU_ASSERT_EQUAL(xch_latency_cycles(&p, 9, 0), 63);
    CU_ASSERT_EQUAL(xch_latency_cycles(&p, 0, 91), 59 + 2 * 22);
    CU_ASSERT_EQUAL(xch_latency_cycles(&p, 0, 92), 59 + 62); /* column 1, island 0 */
    CU_ASSERT_EQUAL(xch_latency_cycles(&p, 0, 100), 59 + 4 + 62);
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 0, 0), 0);
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 0, 3), 1);
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 3, 4), 2);
    /* A POD64: 16 boards of 4 chips in a torus of 4 rows of 4 boards;
     * board_hops for each step, rows and columns wrapping around. */
    p.chips = 64;
    p.board_ring = 4;
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 0, 4), 2);           /* boards 0 and 1 */
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 0, 8), 4);           /* boards 0 and 2: two steps either way */
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 0, 12), 2);          /* boards 0 and 3: one step, wrapping */
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 1, 16), 2);          /* boards 0 and 4: the next row */
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 0, 40), 8);          /* boards 0 and 10: row 2, column 2 */
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 40, 0), 8);
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 63, 0), 4);          /* board 15: row 3, column 3 */
    /* A POD16: one row of 4 boards. */
    p.chips = 16;
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 0, 8), 4);
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 5, 15), 4);          /* boards 1 and 3 */
    CU_ASSERT_EQUAL(xch_chip_hops(&p, 5, 8), 2);           /* boards 1 and 2 */
}

static void test_neighbour(void)
{
    /* 16 bytes, tile 0 -> 1: n = 4; depart c104, latency 59, arrive 163,
     * done 167: tile 1 ends at 168, tile 0 at 106 + 4 = 110. */
    xfer xs[] = { { 0, 's', 16, 1 }, { 1, 'r', 16, 0 } };
    sys_result r = run_xfers("gc200", xs, 2, 3);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 110);
    CU_ASSERT_EQUAL(sys_cycles(&r, 1), 168);
    uint32_t rb = sym(&r, 1, "rbuf0");
    CU_ASSERT_EQUAL(sys_word(&r, 1, rb), 0x00000000);
    CU_ASSERT_EQUAL(sys_word(&r, 1, rb + 12), 0x00000003);
    const engine_superstep *s = sys_step(&r, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->c.exchange_bytes, 16);
    CU_ASSERT_EQUAL(s->c.exchange_transfers, 1);
    CU_ASSERT_EQUAL(s->c.receive_conflict_cycles, 0);
    /* Tile 1 is the critical path: 6 cycles issued (105 - 100 stall, and
     * its exitz), 100 of set-up and 62 waiting for the data. */
    CU_ASSERT_EQUAL(s->busiest_tile, 1);
    CU_ASSERT_EQUAL(s->c.cycles, 168);
    CU_ASSERT_EQUAL(s->c.compute_cycles, 6);
    CU_ASSERT_EQUAL(s->c.exchange_cycles, 162);
    /* Tile 0 ends at 110, but counts as done when its data have landed
     * (167): one idle cycle until tile 1's end. */
    CU_ASSERT_EQUAL(r.st->chips[0].c.tile_idle_cycles, 1);
    CU_ASSERT_EQUAL(r.st->chips[0].c.tile_exchange_cycles, 162 + 104 + (167 - 110));
    sys_free(&r);
}

static void test_neighbour_with_barrier(void)
{
    /* The same with sync 1: tile 1 arrives at 105 and its data land at
     * 167; tile 0 arrives at 109 and its send is delivered at 167.  The
     * barrier releases at 167 + 90 = 257; both end at 258. */
    xfer xs[] = { { 0, 's', 16, 1 }, { 1, 'r', 16, 0 } };
    sys_result r = run_xfers("gc200", xs, 2, 1);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 258);
    CU_ASSERT_EQUAL(sys_cycles(&r, 1), 258);
    const engine_superstep *s = sys_step(&r, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->zone, 1);
    CU_ASSERT_EQUAL(s->end_cycle, 257);
    /* Both arrive at 167: the busiest is the lower tile, 0: 5 cycles of
     * its own, 104 stalled, 58 waiting for delivery, 90 of sync. */
    CU_ASSERT_EQUAL(s->busiest_tile, 0);
    CU_ASSERT_EQUAL(s->c.compute_cycles, 5);
    CU_ASSERT_EQUAL(s->c.exchange_cycles, 104 + 58);
    CU_ASSERT_EQUAL(s->c.sync_cycles, 90);
    CU_ASSERT_EQUAL(s->c.tile_sync_cycles, 180);
    CU_ASSERT_EQUAL(s->c.tile_idle_cycles, 0);
    const engine_superstep *last = sys_step(&r, 0, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(last);
    CU_ASSERT_EQUAL(last->zone, 0);
    CU_ASSERT_EQUAL(last->c.cycles, 1);
    sys_free(&r);
}

static void test_across_island_and_columns(void)
{
    /* Tile 0 sends 16 bytes to 9 (2 islands: 63), 92 (next column: 121)
     * and 100 (next column, 2 islands: 125), one xsend each.  The first
     * issues at c9 (9 setzi), starts at c110 and the bus is busy to c114;
     * the second issues at c110 + 4 = c114 and starts at c115, the third
     * at c119 and starts at c120.  Receivers issue at c3, start at c104:
     *   tile 9:   110 + 63 + 4 = 177 -> ends 178
     *   tile 92:  115 + 121 + 4 = 240 -> ends 241
     *   tile 100: 120 + 125 + 4 = 249 -> ends 250
     * Tile 0: sync at c124, ends 126. */
    xfer xs[] = { { 0, 's', 16, 9 }, { 0, 's', 16, 92 }, { 0, 's', 16, 100 },
                  { 9, 'r', 16, 0 }, { 92, 'r', 16, 0 }, { 100, 'r', 16, 0 } };
    sys_result r = run_xfers("gc200", xs, 6, 3);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 126);
    CU_ASSERT_EQUAL(sys_cycles(&r, 9), 178);
    CU_ASSERT_EQUAL(sys_cycles(&r, 92), 241);
    CU_ASSERT_EQUAL(sys_cycles(&r, 100), 250);
    CU_ASSERT_EQUAL(sys_word(&r, 100, sym(&r, 100, "rbuf0") + 4), 0x0201);
    sys_free(&r);
}

static void test_broadcast(void)
{
    /* One broadcast of 16 bytes from tile 0, received by 1, 9 and 92: the
     * bus is busy once (4 cycles), each receiver gets it after its own
     * latency: done 167, 171, 229 -> ends 168, 172, 230.  Bytes counted
     * once, three transfers. */
    xfer xs[] = { { 0, 's', 16, XCH_BROADCAST }, { 1, 'r', 16, 0 }, { 9, 'r', 16, 0 }, { 92, 'r', 16, 0 } };
    char *src = program(xs, 4, 3);
    /* setzi cannot hold 0xffffffff: make $m2 of tile 0 all ones. */
    char *p = strstr(src, "ld32 $m2, $mzero, $mzero, 0");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    memcpy(p, "add $m2, $mzero, -1        ", 27);
    sys_result r = sys_run("gc200", NULL, src, 1);
    free(src);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 110);
    CU_ASSERT_EQUAL(sys_cycles(&r, 1), 168);
    CU_ASSERT_EQUAL(sys_cycles(&r, 9), 172);
    CU_ASSERT_EQUAL(sys_cycles(&r, 92), 230);
    CU_ASSERT_EQUAL(sys_word(&r, 92, sym(&r, 92, "rbuf0") + 8), 2);
    const engine_superstep *s = sys_step(&r, 0, 0);
    CU_ASSERT_EQUAL(s->c.exchange_bytes, 16);
    CU_ASSERT_EQUAL(s->c.exchange_transfers, 3);
    sys_free(&r);
}

static void test_multicast_groups(void)
{
    /* Tile 0 multicasts two 16-byte pieces: group 0 to tiles 1 and 9,
     * group 1 to tiles 9 and 92.  Tile 9 posts its receives in the other
     * order (group 1 first): each (sender, group) is matched on its own.
     * Every receiver gets its piece's words; the bytes cross the bus once a
     * piece (32), in four transfers. */
    xfer xs[] = { { 0, 's', 16, xch_multicast_send(0) }, { 0, 's', 16, xch_multicast_send(1) },
                  { 1, 'r', 16, xch_multicast_recv(0, 0) }, { 9, 'r', 16, xch_multicast_recv(1, 0) },
                  { 9, 'r', 16, xch_multicast_recv(0, 0) }, { 92, 'r', 16, xch_multicast_recv(1, 0) } };
    sys_result r = run_xfers("gc200", xs, 6, 3);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_word(&r, 1, sym(&r, 1, "rbuf0") + 4), 0x0001);        /* piece 0, word 1 */
    CU_ASSERT_EQUAL(sys_word(&r, 9, sym(&r, 9, "rbuf0") + 4), 0x0101);        /* piece 1 */
    CU_ASSERT_EQUAL(sys_word(&r, 9, sym(&r, 9, "rbuf1") + 8), 0x0002);        /* piece 0 */
    CU_ASSERT_EQUAL(sys_word(&r, 92, sym(&r, 92, "rbuf0") + 12), 0x0103);     /* piece 1 */
    const engine_superstep *st = sys_step(&r, 0, 0);
    CU_ASSERT_EQUAL(st->c.exchange_bytes, 32);
    CU_ASSERT_EQUAL(st->c.exchange_transfers, 4);
    sys_free(&r);

    /* A multicast nobody takes, and a receive from a group that has
     * nothing more: both are bad exchanges naming the group. */
    xfer lone[] = { { 0, 's', 16, xch_multicast_send(2) }, { 1, 'r', 16, 0 }, { 0, 's', 16, 1 } };
    r = run_xfers("gc200", lone, 3, 3);
    CU_ASSERT_EQUAL(r.status, ENGINE_FAULT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "multicast of 16 bytes from tile 0 to its group 2: no tile has an xrecv "
                                             "from it for it"));
    sys_free(&r);
    xfer late[] = { { 0, 's', 16, xch_multicast_send(0) }, { 1, 'r', 16, xch_multicast_recv(0, 0) },
                    { 1, 'r', 16, xch_multicast_recv(0, 0) } };
    r = run_xfers("gc200", late, 3, 3);
    CU_ASSERT_EQUAL(r.status, ENGINE_FAULT);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "xrecv of 16 bytes from tile 0 (multicast group 0) is not matched: tile 0 "
                                             "multicasts nothing more to group 0 in this phase"));
    sys_free(&r);
}

static void test_two_senders_serialised(void)
{
    /* Tiles 2 and 4 (different supertiles) each send 64 bytes (n = 16) to
     * tile 8.  Both depart at c104.  Latencies: 2 -> 8 is 2 islands (63),
     * 4 -> 8 one island (61): arrivals 167 and 165.  Tile 8 posts its
     * receives at c107 and c108 (two transfers: six setzi, xrecv at c6
     * and c107).  Its port takes 4's stream first: 165..181, then 2's:
     * 181..197 (14 cycles of conflict).  Tile 8 stops at 109 and ends at
     * 198; the senders end at 106 + 16 = 122. */
    xfer xs[] = { { 2, 's', 64, 8 }, { 4, 's', 64, 8 }, { 8, 'r', 64, 2 }, { 8, 'r', 64, 4 } };
    sys_result r = run_xfers("gc200", xs, 4, 3);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 2), 122);
    CU_ASSERT_EQUAL(sys_cycles(&r, 4), 122);
    CU_ASSERT_EQUAL(sys_cycles(&r, 8), 198);
    CU_ASSERT_EQUAL(sys_word(&r, 8, sym(&r, 8, "rbuf0") + 60), 0x2000f);
    CU_ASSERT_EQUAL(sys_word(&r, 8, sym(&r, 8, "rbuf1") + 60), 0x4000f);
    CU_ASSERT_EQUAL(sys_step(&r, 0, 0)->c.receive_conflict_cycles, 14);
    sys_free(&r);
}

static void test_supertile_tiles_send_at_once(void)
{
    /* Tiles 0 and 1 (one supertile) each send 64 bytes, to 4 and 5, both
     * starting at c104.  Each tile has its own outgoing bus (exchange.h, the
     * supertile: PopLibs' cost models give every sender the full 4 B/cycle,
     * and 1472 x 4 B x 1.325 GHz is Graphcore's 7.8 TB/s), so both depart
     * at c104 and stream for 16 cycles side by side.  Latency 61 (one
     * island) each: done 104 + 61 + 16 = 181 for both; receivers end at
     * 182.  The senders end at 106 + 16 = 122.  A bus shared by the pair
     * would have made tile 5's data land 16 cycles later (198). */
    xfer xs[] = { { 0, 's', 64, 4 }, { 1, 's', 64, 5 }, { 4, 'r', 64, 0 }, { 5, 'r', 64, 1 } };
    sys_result r = run_xfers("gc200", xs, 4, 3);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 122);
    CU_ASSERT_EQUAL(sys_cycles(&r, 1), 122);
    CU_ASSERT_EQUAL(sys_cycles(&r, 4), 182);
    CU_ASSERT_EQUAL(sys_cycles(&r, 5), 182);
    CU_ASSERT_EQUAL(sys_word(&r, 5, sym(&r, 5, "rbuf0") + 60), 0x1000f);
    sys_free(&r);
    /* One tile's two sends still share its bus: tile 0 sends 64 bytes to
     * 4, then 64 to 5 (six setzi; xsend at c6 starts at c107, the second
     * issues when the first has left, c107 + 16 = c123, and starts at
     * c124).  Done 107 + 61 + 16 = 184 and 124 + 61 + 16 = 201: receivers
     * end at 185 and 202. */
    xfer ys[] = { { 0, 's', 64, 4 }, { 0, 's', 64, 5 }, { 4, 'r', 64, 0 }, { 5, 'r', 64, 0 } };
    r = run_xfers("gc200", ys, 4, 3);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 4), 185);
    CU_ASSERT_EQUAL(sys_cycles(&r, 5), 202);
    sys_free(&r);
}

static void test_supertile_pair_receives_together(void)
{
    /* Tiles 2 and 4 each multicast 64 bytes (n = 16) to their group {8, 9}
     * (one supertile), both departing at c106 (a multicast endpoint takes
     * three instructions to make): arrivals 169 (from 2, two islands) and
     * 167 (from 4, one), at both tiles.  With the supertile's receive
     * (GC200): the pair takes 4's stream through 8's port, 167..183, and
     * 2's through 9's, 169..185, each landing in both tiles: both end at
     * 186, no conflict.  Without it each tile takes them one after the
     * other, 167..183..199, as two senders to one tile
     * (test_two_senders_serialised): both end at 200, 14 cycles of
     * conflict each.  The senders end at 108 + 16 = 124 either way. */
    xfer xs[] = { { 2, 's', 64, xch_multicast_send(0) }, { 4, 's', 64, xch_multicast_send(0) },
                  { 8, 'r', 64, xch_multicast_recv(0, 2) }, { 8, 'r', 64, xch_multicast_recv(0, 4) },
                  { 9, 'r', 64, xch_multicast_recv(0, 2) }, { 9, 'r', 64, xch_multicast_recv(0, 4) } };
    for (int shared = 1; shared >= 0; shared--) {
        char *src = program(xs, 6, 3);
        sys_result r = sys_run("gc200", shared ? NULL : "exchange_supertile_receive=0", src, 1);
        free(src);
        SYS_ASSERT_STATUS(r, ENGINE_DONE);
        CU_ASSERT_EQUAL(sys_cycles(&r, 8), shared ? 186 : 200);
        CU_ASSERT_EQUAL(sys_cycles(&r, 2), 124);
        CU_ASSERT_EQUAL(sys_cycles(&r, 9), shared ? 186 : 200);
        for (uint32_t t = 8; t <= 9; t++) {
            CU_ASSERT_EQUAL(sys_word(&r, t, sym(&r, t, "rbuf0") + 60), 0x2000f);
            CU_ASSERT_EQUAL(sys_word(&r, t, sym(&r, t, "rbuf1") + 60), 0x4000f);
        }
        const engine_superstep *st = sys_step(&r, 0, 0);
        CU_ASSERT_EQUAL(st->c.exchange_bytes, 128);
        CU_ASSERT_EQUAL(st->c.exchange_transfers, 4);
        CU_ASSERT_EQUAL(st->c.receive_conflict_cycles, shared ? 0 : 28);
        sys_free(&r);
    }
    /* Two tiles of different supertiles (9 and 10) taking the same two
     * streams gain nothing: each its own port, 200 as before. */
    xfer ys[] = { { 2, 's', 64, xch_multicast_send(0) }, { 4, 's', 64, xch_multicast_send(0) },
                  { 9, 'r', 64, xch_multicast_recv(0, 2) }, { 9, 'r', 64, xch_multicast_recv(0, 4) },
                  { 10, 'r', 64, xch_multicast_recv(0, 2) }, { 10, 'r', 64, xch_multicast_recv(0, 4) } };
    sys_result r = run_xfers("gc200", ys, 6, 3);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 9), 200);
    CU_ASSERT_EQUAL(sys_cycles(&r, 10), 200);
    sys_free(&r);
}

static void test_off_chip_streams_share_the_port(void)
{
    /* m2000 (1.325 GHz, 27.2 GB/s per directed chip pair, 160 ns a hop):
     * tile 0 of chip 1 (1472) and of chip 2 (2944) each send 64 bytes to
     * tile 0 of chip 0, over two different links.  Each sender: xsend at
     * c3, start c104 = 78491 ps (ceil(104 / 1.325 GHz)); the link carries
     * 64 B in 2353 ps, but the sender's bus paces the stream to c120 =
     * 90567 ps; plus one hop: the last byte lands at 250567 ps = the start
     * of cycle 332 of chip 0.  Both streams enter tile 0 through its port
     * at 4 B/cycle, n = 16: each could start at 332 - 16 = 316.  Tile 0
     * posts its receives at c107 and c108 (six setzi, xrecv at c6 paying
     * the set-up).  The port takes chip 1's stream 316..332, then chip 2's
     * 332..348: 16 cycles of receive conflict.  Tile 0 stops at 109 and
     * ends at 349 (without the port: both at 332, ending at 333).  The
     * senders end at 106 + 16 = 122. */
    xfer xs[] = { { 1472, 's', 64, 0 }, { 2944, 's', 64, 0 }, { 0, 'r', 64, 1472 }, { 0, 'r', 64, 2944 } };
    sys_result r = run_xfers("m2000", xs, 4, 3);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 1472), 122);
    CU_ASSERT_EQUAL(sys_cycles(&r, 2944), 122);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 349);
    CU_ASSERT_EQUAL(sys_word(&r, 0, sym(&r, 0, "rbuf0") + 60), (1472u << 16) | 15);
    CU_ASSERT_EQUAL(sys_word(&r, 0, sym(&r, 0, "rbuf1") + 60), (2944u << 16) | 15);
    const engine_superstep *s = sys_step(&r, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->c.receive_conflict_cycles, 16);
    CU_ASSERT_EQUAL(s->c.late_receives, 0);
    sys_free(&r);
    /* One stream alone lands as before: done 332, tile 0 ends at 333. */
    xfer ys[] = { { 1472, 's', 64, 0 }, { 0, 'r', 64, 1472 } };
    r = run_xfers("m2000", ys, 2, 3);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 333);
    sys_free(&r);
}

static void test_bandwidth_is_a_parameter(void)
{
    /* 8 bytes per cycle: n = 2 for 16 bytes; done 104 + 59 + 2 = 165. */
    xfer xs[] = { { 0, 's', 16, 1 }, { 1, 'r', 16, 0 } };
    char *src = program(xs, 2, 3);
    sys_result r = sys_run("gc200", "exchange_send_bytes_per_cycle=8;exchange_setup_cycles=10", src, 1);
    free(src);
    SYS_ASSERT_STATUS(r, ENGINE_DONE);
    /* set-up 10: start c14, done 14 + 59 + 2 = 75 -> 76; sender 3+1+10+2 -> sync c16, ends 18. */
    CU_ASSERT_EQUAL(sys_cycles(&r, 1), 76);
    CU_ASSERT_EQUAL(sys_cycles(&r, 0), 18);
    sys_free(&r);
}

/* ---- errors ---------------------------------------------------------------- */

static void expect_fault(const xfer *xs, size_t n, const char *where, const char *what)
{
    sys_result r = run_xfers("gc200", xs, n, 3);
    SYS_ASSERT_STATUS(r, ENGINE_FAULT);
    if (!strstr(r.message, where) || !strstr(r.message, what))
        fprintf(stderr, "\nmessage: %s\nwanted: %s ... %s\n", r.message, where, what);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, where));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.message, what));
    sys_free(&r);
}

static void test_size_mismatch(void)
{
    /* The exchange instructions sit after three setzi: pc 0x4c00c. */
    xfer xs[] = { { 0, 's', 16, 1 }, { 1, 'r', 8, 0 } };
    expect_fault(xs, 2, "tile 1, supervisor, pc 0x4c00c (test.S:",
                 "): bad exchange: xrecv of 8 bytes from tile 0: the matching xsend (tile 0, pc 0x4c00c) sends "
                 "16 bytes\n    xrecv $m0, $m1, $m2");
}

static void test_unmatched_send(void)
{
    xfer xs[] = { { 0, 's', 16, 1 }, { 1, 's', 16, 2 }, { 2, 'r', 16, 1 } };
    expect_fault(xs, 3, "tile 0, supervisor, pc 0x4c00c",
                 "bad exchange: xsend of 16 bytes to tile 1 has no matching xrecv on tile 1 in this phase");
}

static void test_unmatched_recv(void)
{
    xfer xs[] = { { 0, 's', 16, 2 }, { 1, 'r', 16, 0 }, { 2, 'r', 16, 0 } };
    expect_fault(xs, 3, "tile 1, supervisor, pc 0x4c00c",
                 "bad exchange: xrecv of 16 bytes from tile 0 is not matched: tile 0 sends nothing more to tile 1 "
                 "in this phase");
}

static void test_send_to_tile_without_code(void)
{
    xfer xs[] = { { 0, 's', 16, 7 } };
    expect_fault(xs, 1, "tile 0, supervisor, pc 0x4c00c", "bad exchange: xsend of 16 bytes to tile 7: tile 7 has no code");
}

static void test_out_of_range_address(void)
{
    /* Caught when xsend issues (pc 0x4c00c), with the instruction. */
    const char *src = "__supervisor:\n setzi $m0, 0xe7ff8\n setzi $m1, 16\n setzi $m2, 1\n xsend $m0, $m1, $m2\n"
                      " sync 3\n exitz $mzero\n"
                      " .tile 1\n__supervisor:\n sync 3\n exitz $mzero\n";
    sys_result r = sys_run("gc200", NULL, src, 1);
    SYS_ASSERT_STATUS(r, ENGINE_FAULT);
    CU_ASSERT_STRING_EQUAL(r.message, "tile 0, supervisor, pc 0x4c00c (test.S:5, in __supervisor+0xc): bad address: "
                                      "xsend at 0xe7ff8: 16 bytes outside tile memory (0x4c000-0xe7fff)\n"
                                      "    xsend $m0, $m1, $m2");
    sys_free(&r);
}

static void test_lowest_tile_reported(void)
{
    /* Tiles 3 and 5 both fail to match: tile 3's fault is the one told. */
    xfer xs[] = { { 5, 's', 16, 6 }, { 3, 's', 16, 4 }, { 4, 'r', 8, 3 }, { 6, 'r', 8, 5 } };
    expect_fault(xs, 4, "tile 4, supervisor", "xrecv of 8 bytes from tile 3");
}

void test_register(void)
{
    ADD_SUITE("exchange_timing",
              {"latency by tile distance", test_latency_by_distance},
              {"neighbour to neighbour", test_neighbour},
              {"neighbour, then a barrier", test_neighbour_with_barrier},
              {"across islands and columns", test_across_island_and_columns},
              {"broadcast", test_broadcast},
              {"multicast groups", test_multicast_groups},
              {"two senders to one receiver", test_two_senders_serialised},
              {"the tiles of a supertile send at once", test_supertile_tiles_send_at_once},
              {"a supertile takes the streams both its tiles receive two at a time", test_supertile_pair_receives_together},
              {"off-chip streams share the receiver's port", test_off_chip_streams_share_the_port},
              {"bandwidth and set-up are parameters", test_bandwidth_is_a_parameter});
    ADD_SUITE("exchange_errors",
              {"size mismatch", test_size_mismatch},
              {"unmatched send", test_unmatched_send},
              {"unmatched receive", test_unmatched_recv},
              {"send to a tile without code", test_send_to_tile_without_code},
              {"out-of-range address", test_out_of_range_address},
              {"lowest tile reported", test_lowest_tile_reported});
}
