/*
 * test_exchange_steps.c — how the lowering writes an exchange phase's
 * transfers into the control program (frontends/lower_exchange.c): rows
 * that one tile sends another, a constant stride apart, become one
 * ctl_send_rows / ctl_recv_rows step instead of a step each.  A transpose
 * is the extreme case: every element of a tile's output block comes from
 * another tile, a row of the source a column of the block.
 *
 * Each case compiles a chain of transposes for a few tiles of a GC200,
 * reads every tile's control program back from the executable, and
 * checks that rows steps are taken (where they save words over runs of
 * consecutive blocks), that the exchange takes under half the words the
 * pieces would as single steps (4 words each), and that the simulated values equal the evaluator's bit
 * for bit (a transpose only moves values: a piece received out of order,
 * into the wrong place or not at all shows as a wrong element, and a
 * send and receive that the exchange cannot pair stop the run with a
 * simulated exception).
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontends/graph_eval.h"
#include "frontends/lower.h"
#include "frontends/simulate.h"
#include "isa/elf/executable.h"
#include "isa/exchange_port.h"
#include "control_fixture.h"
#include "graph_fixture.h"
#include "matmul_check.h"
#include "test_util.h"

/* The pieces a program's tiles receive from other tiles, by the step that
 * describes them, and the words of those steps. */
typedef struct receive_count {
    uint64_t singles, in_runs, in_rows, rows_steps, words;
    uint64_t in_lists;                  /* singles two words each in lists */
    uint64_t in_narrow_runs;            /* of in_runs: in runs with endpoints two to a word */
    uint64_t narrow_saved;              /* words those runs save over a word an endpoint */
    uint32_t most_endpoint;             /* the largest endpoint of a receive from a tile */
} receive_count;

/* Walk tile `tile`'s control program and add up its receives from other
 * tiles. */
static void count_receives(const ipu_exe *e, uint32_t tile, receive_count *c)
{
    control_walk cw;
    control_walk_begin(&cw, e, tile);
    control_step st;
    while (control_walk_next(&cw, &st)) {
        if (st.kind == CONTROL_RECV && !(st.endpoint[0] & XCH_HOST)) {
            c->singles++;
            c->words += st.words;
        } else if (st.kind == CONTROL_RECV_RUN) {
            c->in_runs += st.transfers;
            c->in_narrow_runs += st.narrow ? st.transfers : 0;
            c->narrow_saved += st.narrow ? st.transfers - (st.transfers + 1) / 2 : 0;
            c->words += st.words;
            for (uint32_t k = 0; k < st.transfers; k++)
                if (control_endpoint(&st, k) > c->most_endpoint)
                    c->most_endpoint = control_endpoint(&st, k);
        } else if (st.kind == CONTROL_RECV_LIST) {
            c->in_lists += st.transfers;
            c->words += st.words;
        } else if (st.kind == CONTROL_RECV_ROWS) {
            CU_ASSERT(!(st.endpoint[0] & XCH_HOST));
            c->in_rows += st.transfers;
            c->rows_steps++;
            c->words += st.words;
        }
    }
    control_walk_end(&cw);
}

/* `count` transposes of a rows x cols input in a chain (back to the
 * input's shape when count is even), on `tiles` tiles: compiled, its
 * receives counted (with most_in_rows, most pieces must come in rows
 * steps), simulated, and held against the evaluator. */
static void transposes(int64_t rows, int64_t cols, int count, uint32_t tiles, bool most_in_rows)
{
    const int64_t d[2] = { rows, cols };
    graph *g = graph_new("transposes", 13);
    input(g, "x", 2, d);
    int64_t perm[2] = { 1, 0 };
    char in[16], out[16] = "x";
    for (int k = 1; k <= count; k++) {
        snprintf(in, sizeof in, "%s", out);
        snprintf(out, sizeof out, "t%d", k);
        graph_set_attr_ints(node(g, GRAPH_OP_TRANSPOSE, in, out), "perm", perm, 2);
    }
    finish(g, out);
    lower_options lo = { .machine = gc200(), .tiles = tiles };
    lower_report rep;
    char err[1024];
    ipu_exe *e = lower_graph(g, &lo, &rep, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_FATAL(e != NULL);
    receive_count c = { 0 };
    for (size_t t = 0; t < e->n_tiles; t++)
        count_receives(e, e->tiles[t].tile, &c);
    uint64_t pieces = c.singles + c.in_lists + c.in_runs + c.in_rows;
    CU_ASSERT(c.rows_steps > 0);
    if (most_in_rows)
        CU_ASSERT(c.in_rows * 2 > pieces);
    CU_ASSERT(c.words * 2 < pieces * 4);             /* under half the words of single steps */
    /* one chip: every run's endpoints are tiles below 65536, two to a
     * word, and read back they are tiles of the program */
    CU_ASSERT(c.in_runs > 0);
    CU_ASSERT_EQUAL(c.in_narrow_runs, c.in_runs);
    CU_ASSERT(c.most_endpoint < tiles);
    CU_ASSERT(c.narrow_saved * 4 > c.in_runs);         /* over a quarter of a word a piece in runs */
    /* the compile's figures: every tile's program counted */
    CU_ASSERT(rep.program_tiles >= tiles);
    CU_ASSERT(rep.max_control_bytes * rep.program_tiles >= rep.control_bytes);
    CU_ASSERT(rep.control_bytes >= c.words * 4);
    exe_free(e);

    size_t n = (size_t)(rows * cols);
    float *x = malloc(n * sizeof *x);
    CU_ASSERT_FATAL(x != NULL);
    for (size_t i = 0; i < n; i++)
        x[i] = rnd();
    graph_value in_v = { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = x };
    graph_value got = { 0 }, want = { 0 };
    simulate_result r;
    bool ok = simulate_graph(g, &lo, &in_v, &got, &r, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    CU_ASSERT_TRUE_FATAL(graph_eval(g, &in_v, &want, err, sizeof err));
    CU_ASSERT_FATAL(graph_shape_numel(&got.shape) == (int64_t)n && graph_shape_numel(&want.shape) == (int64_t)n);
    CU_ASSERT_EQUAL(memcmp(got.data, want.data, n * sizeof *x), 0);
    graph_value_free(&got);
    graph_value_free(&want);
    free(x);
    graph_free(g);
}

/* A square block on 16 tiles: every piece one element, the four a
 * sender holds of an output row consecutive there, so most go in runs
 * (a word a piece: cheaper than a rows step of four). */
static void test_square_transposes(void)
{
    transposes(64, 64, 4, 16, false);
}

/* Uneven shapes on 24 tiles: pieces of several sizes, tiles holding
 * unequal parts, an odd count (the output is the input transposed). */
static void test_uneven_transposes(void)
{
    transposes(130, 70, 3, 24, true);
}

/* g compiled for the first `tiles` tiles of each chip of an M2000, a
 * replica a chip; *chip the tiles of a chip. */
static ipu_exe *lower_four_replicas(const graph *g, uint32_t tiles, uint32_t *chip)
{
    machine m;
    char err[1024];
    CU_ASSERT_TRUE_FATAL(machine_preset("m2000", &m, err, sizeof err));
    *chip = (uint32_t)m.value[MP_tiles_per_chip];
    lower_options lo = { .machine = &m, .tiles = tiles, .replicas = 4 };
    lower_report rep;
    ipu_exe *e = lower_graph(g, &lo, &rep, err, sizeof err);
    if (!e)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_FATAL(e != NULL);
    return e;
}

/* Four replicas on an M2000: replica 3's runs name chip 3's tiles, in the
 * low and the high halves of their words alike (each half renumbered). */
static void test_replica_endpoints(void)
{
    const int64_t d[2] = { 64, 64 };
    graph *g = graph_new("transposes", 13);
    input(g, "x", 2, d);
    int64_t perm[2] = { 1, 0 };
    graph_set_attr_ints(node(g, GRAPH_OP_TRANSPOSE, "x", "t1"), "perm", perm, 2);
    graph_set_attr_ints(node(g, GRAPH_OP_TRANSPOSE, "t1", "t2"), "perm", perm, 2);
    finish(g, "t2");
    uint32_t chip;
    const uint32_t tiles = 16;
    ipu_exe *e = lower_four_replicas(g, tiles, &chip);
    uint64_t checked[2] = { 0, 0 };   /* endpoints read in low and high halves */
    for (uint32_t r = 0; r < 4; r++)
        for (uint32_t t = 0; t < tiles; t++) {
            control_walk cw;
            control_walk_begin(&cw, e, r * chip + t);
            control_step st;
            while (control_walk_next(&cw, &st)) {
                if (st.kind != CONTROL_RECV_RUN && st.kind != CONTROL_SEND_RUN)
                    continue;
                CU_ASSERT(st.narrow);
                for (uint32_t k = 0; k < st.transfers; k++) {
                    uint32_t ep = control_endpoint(&st, k);
                    CU_ASSERT(ep >= r * chip && ep < r * chip + tiles);
                    checked[k % 2]++;
                }
            }
            control_walk_end(&cw);
        }
    CU_ASSERT(checked[0] > 0 && checked[1] > 0);
    exe_free(e);
    graph_free(g);
}

/* A matmul of uneven sides (its blocks' pieces of several sizes), its
 * operands gathered by multicast (a row's K pieces to the grid rows' K
 * shares), in four replicas on an M2000: the receives of a group run in
 * ctl_recvs16_group steps, half a word an endpoint above the group's bits,
 * and single transfers one after another go in lists, two words each;
 * read back, each endpoint names a tile of its own replica (the sender's
 * tile of a multicast receive, renumbered in either half; a multicast
 * send names its group alone).  The product is held to the f32 codelet's
 * error bound (simulated on one chip, so the values come back as the
 * graph's output). */
static void test_multicast_receive_runs(void)
{
    enum { M = 100, K = 300, N = 200 };
    const int64_t da[2] = { M, K }, db[2] = { K, N };
    float *a = malloc((size_t)M * K * sizeof *a), *b = malloc((size_t)K * N * sizeof *b);
    CU_ASSERT_FATAL(a && b);
    for (size_t i = 0; i < (size_t)M * K; i++)
        a[i] = rnd();
    for (size_t i = 0; i < (size_t)K * N; i++)
        b[i] = rnd();
    graph *g = graph_new("multicast", 13);
    input(g, "a", 2, da);
    input(g, "b", 2, db);
    node(g, GRAPH_OP_MATMUL, "a,b", "c");
    finish(g, "c");
    uint32_t chip;
    const uint32_t tiles = 64;
    ipu_exe *e = lower_four_replicas(g, tiles, &chip);
    uint64_t group_runs = 0, checked[2] = { 0, 0 }, saved = 0, listed[2] = { 0, 0 };
    for (uint32_t r = 0; r < 4; r++)
        for (uint32_t t = 0; t < tiles; t++) {
            control_walk cw;
            control_walk_begin(&cw, e, r * chip + t);
            control_step st;
            while (control_walk_next(&cw, &st)) {
                if (st.list) {
                    /* singles in a list: each to or from a tile of the replica (a
                     * send's multicast group names none) */
                    for (uint32_t k = 0; k < st.transfers; k++) {
                        uint32_t ep = control_endpoint(&st, k), peer = ep & XCH_MULTICAST_TILE;
                        if (st.kind == CONTROL_SEND_LIST && (ep & XCH_MULTICAST)) {
                            CU_ASSERT_EQUAL(peer, 0);
                        } else {
                            CU_ASSERT(peer >= r * chip && peer < r * chip + tiles);
                        }
                        listed[st.kind == CONTROL_RECV_LIST]++;
                    }
                    continue;
                }
                if (st.kind != CONTROL_RECV_RUN || !st.base)
                    continue;
                group_runs++;
                saved += st.transfers - (st.transfers + 1) / 2 - 1;
                CU_ASSERT(st.narrow && (st.base & XCH_MULTICAST) && !(st.base & 0xffffu));
                for (uint32_t k = 0; k < st.transfers; k++) {
                    uint32_t ep = control_endpoint(&st, k), sender = ep & XCH_MULTICAST_TILE;
                    CU_ASSERT((ep & ~XCH_MULTICAST_TILE) == st.base);
                    CU_ASSERT(sender >= r * chip && sender < r * chip + tiles);
                    checked[k % 2]++;
                }
            }
            control_walk_end(&cw);
        }
    printf(" (%llu runs of multicast receives, %llu words saved; %llu sends and %llu receives in lists)",
           (unsigned long long)group_runs, (unsigned long long)saved, (unsigned long long)listed[0],
           (unsigned long long)listed[1]);
    CU_ASSERT(group_runs > 0);
    CU_ASSERT(listed[0] > 0 && listed[1] > 0);
    CU_ASSERT(checked[0] > 0 && checked[1] > 0);
    exe_free(e);

    lower_options lo = { .machine = gc200(), .tiles = tiles };
    char err[1024];
    graph_value ins[2] = { { .dtype = GDT_F32, .shape = g->tensors[g->inputs[0]].shape, .data = a },
                           { .dtype = GDT_F32, .shape = g->tensors[g->inputs[1]].shape, .data = b } },
                y = { 0 };
    simulate_result sr;
    bool ok = simulate_graph(g, &lo, ins, &y, &sr, err, sizeof err);
    if (!ok)
        fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_TRUE_FATAL(ok);
    CU_ASSERT_EQUAL(matmul_f32_out_of_bound(a, b, y.data, (size_t)M, (size_t)K, (size_t)N), 0);
    graph_value_free(&y);
    free(a);
    free(b);
    graph_free(g);
}

void test_register(void)
{
    ADD_SUITE("lowering: exchange steps",
              { "transposes of a square block take rows steps", test_square_transposes },
              { "replicas renumber both endpoints of a word", test_replica_endpoints },
              { "multicast receives and single transfers take fewer words", test_multicast_receive_runs },
              { "transposes of uneven shapes take rows steps", test_uneven_transposes });
}
