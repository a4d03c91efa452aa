/*
 * test_codelets_logic.c — the logic codelets (workloads/codelets/logic.S)
 * run on one simulated GC200 tile: the library text plus a small
 * supervisor (runall on six records, sync 0, exitz), a window of tile
 * memory filled with random inputs and a guard pattern, six workers with
 * uneven shares (one empty), and the whole window read back and compared
 * byte for byte with the model (workloads/codelets/logic_model.c) run on
 * a host copy of the same window: so every byte the codelet must not
 * write (past a bool output's end, between inputs) is checked as well.
 *
 * Cases: every op of every codelet on every broadcast form of each input
 * (contiguous, a row broadcast down the rows, a column broadcast along the
 * row, a scalar), rows of 7 columns (records start mid-row), element
 * counts that leave a partial last bool word; hand values of the element
 * models (NaN, signed zeros, denormals, wrap-around); exact cycle counts
 * from the issue counts in logic.S; an op out of range traps.
 *
 * Cycle counts follow tests/test_codelets_elementwise.c: runall at cycle
 * 3, worker k first issues at 4 + ((k - 1 - 4) mod 6), exits 6 W_k later
 * (W_k its issues before exitz, all of latency 1 here), cycles = last
 * exit + 3.  From logic.S, a record of n elements over `rows` rows (row
 * changes rows - 1):
 *   vtx_binary_i32: entry 17, segment set-up 3 a row, 7 an element
 *     (6 + brnzdec), brz at the end 1, row change 7 (brz, 2 x (ld32, add),
 *     ld32, bri):  W = 21 + 7 n + 10 (rows - 1); n = 0: 3.
 *   vtx_compare_f32: entry 19, the mask constant 2, 3 a row, 11 an element
 *     and 2 more every fourth (st32step, setzi), brz 1, the finish: 2
 *     with no partial word, 10 with one:
 *     W = 25 + 11 n + 2 floor(n / 4) + (n % 4 ? 10 : 2) + 10 (rows - 1).
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"
#include "codelet_fixture.h"
#include "test_util.h"
#include "workloads/codelets/abi.h"
#include "workloads/codelets/logic.h"

#define W CODELET_WORKERS
#define REC_ADDR 0x81000u          /* six records, after the library's data */
#define REC_STEP 64u
#define WIN_ADDR 0x88000u          /* the window of inputs and outputs */
#define WIN_BYTES 0x40000u
#define IN0_OFF 0x00000u           /* offsets in the window */
#define IN1_OFF 0x10000u
#define IN2_OFF 0x20000u
#define OUT_OFF 0x30000u
#define RUNALL_CYCLE 3u

static uint32_t lcg_state;
static uint32_t lcg(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state >> 1 ^ lcg_state << 7;
}

static float f32_of_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

/* ---- the tile --------------------------------------------------------------------- */

typedef struct lg_run {
    ipu_exe *e;
    ipu_tile *t;
    uint64_t cycles;
    char fault[1024];
} lg_run;

static void lg_setup(lg_run *r, const char *entry)
{
    memset(r, 0, sizeof *r);
    codelet_tile_load(&r->e, &r->t, "logic.S", entry, REC_ADDR, REC_STEP);
}

static bool lg_go(lg_run *r)
{
    enum tile_stop stop = tile_run_alone(r->t, 200000000);
    r->cycles = r->t->s.cycle;
    if (stop != TILE_STOP_END) {
        if (stop == TILE_STOP_FAULT)
            tile_describe_fault(r->t, r->e, r->fault, sizeof r->fault);
        return false;
    }
    return true;
}

static void lg_done(lg_run *r)
{
    codelet_tile_free(&r->e, &r->t);
    memset(r, 0, sizeof *r);
}

static uint64_t hand_cycles(const uint64_t worker_cycles[W])
{
    uint64_t last = 0;
    for (unsigned k = 1; k <= W; k++) {
        uint64_t first = RUNALL_CYCLE + 1 + (k - 1 + W - (RUNALL_CYCLE + 1) % W) % W;
        uint64_t exit_cycle = first + W * worker_cycles[k - 1];
        if (exit_cycle > last)
            last = exit_cycle;
    }
    return last + 3;
}

/* ---- cases ------------------------------------------------------------------------- */

/* How an input is broadcast against the rows x cols output. */
enum bcast { B_FULL, B_ROW, B_COL, B_SCALAR };
static const char *const bcast_name[] = {"full", "row", "col", "scalar"};

static const char *const codelet_entry[] = {"vtx_compare_f32", "vtx_compare_i32", "vtx_where_f32", "vtx_logic_u8",
                                            "vtx_binary_i32"};

typedef struct lg_case {
    enum logic_codelet codelet;
    uint32_t op;
    uint32_t rows, cols;
    enum bcast b[3];
    bool even;                     /* equal shares (else uneven, one worker empty) */
    uint32_t seed;
} lg_case;

static uint32_t in_bytes(enum logic_codelet c, int k)
{
    if (c == LOGIC_CODELET_BOOL || (c == LOGIC_CODELET_WHERE && k == 0))
        return 1;
    return 4;
}

static uint32_t out_bytes(enum logic_codelet c)
{
    return c == LOGIC_CODELET_WHERE || c == LOGIC_CODELET_BINARY_I32 ? 4 : 1;
}

static uint32_t rand_f32(void)
{
    static const uint32_t pool[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x80000001u, 0x7fc00000u,
                                    0x7f800001u, 0x7f800000u, 0xff800000u, 0x3f800000u, 0xbf800000u,
                                    0x40000000u, 0x3f800001u};
    if (lcg() % 2)
        return pool[lcg() % (sizeof pool / sizeof pool[0])];
    return lcg();
}

static uint32_t rand_i32(void)
{
    static const uint32_t pool[] = {0u, 1u, 0xffffffffu, 0x7fffffffu, 0x80000000u, 2u, 0xfffffffeu};
    if (lcg() % 2)
        return pool[lcg() % (sizeof pool / sizeof pool[0])];
    return lcg();
}

static void fill_input(uint8_t *p, enum logic_codelet c, int k, size_t n)
{
    uint32_t eb = in_bytes(c, k);
    for (size_t i = 0; i < n; i++) {
        if (eb == 1) {
            p[i] = (uint8_t)(lcg() % 2);
            if (c == LOGIC_CODELET_WHERE && lcg() % 4 == 0)
                p[i] = (uint8_t)(lcg() | 1);      /* where: any nonzero byte is true */
        } else {
            uint32_t v = c == LOGIC_CODELET_COMPARE_F32 ? rand_f32() : rand_i32();
            memcpy(p + 4 * i, &v, 4);
        }
    }
}

/* Input k's element offset for output (r, c), and its steps in elements. */
static void input_geometry(enum bcast b, uint32_t cols, uint32_t *col_step, uint32_t *row_step)
{
    switch (b) {
    case B_FULL: *col_step = 1; *row_step = cols; break;
    case B_ROW: *col_step = 1; *row_step = 0; break;
    case B_COL: *col_step = 0; *row_step = 1; break;
    default: *col_step = 0; *row_step = 0; break;
    }
}

typedef struct lg_result {
    bool ran;
    uint64_t cycles;
    size_t mismatches;
    uint32_t count[W];
    uint32_t rows_spanned[W];
} lg_result;

static lg_result run_case(const lg_case *c)
{
    lg_result res;
    memset(&res, 0, sizeof res);
    uint8_t *win = malloc(WIN_BYTES), *got = malloc(WIN_BYTES);
    CU_ASSERT_FATAL(win && got);
    lcg_state = c->seed;
    for (size_t i = 0; i < WIN_BYTES; i++)
        win[i] = (uint8_t)(0xa5 ^ i);
    const uint32_t off[3] = {IN0_OFF, IN1_OFF, IN2_OFF};
    uint32_t n = c->rows * c->cols;
    for (int k = 0; k < 3; k++)
        fill_input(win + off[k], c->codelet, k, (size_t)n);
    /* Shares: multiples of 4 elements for a bool output (logic.h). */
    const uint32_t uneven[W] = {3, 1, 0, 4, 1, 2}, even[W] = {1, 1, 1, 1, 1, 1};
    const uint32_t *wt = c->even ? even : uneven;
    uint32_t total_w = c->even ? 6 : 11, g = out_bytes(c->codelet) == 1 ? 4 : 1, at = 0;
    uint32_t recs[W][16];
    memset(recs, 0, sizeof recs);
    for (unsigned w = 0; w < W; w++) {
        uint32_t cnt = w == W - 1 ? n - at : (uint32_t)((uint64_t)n * wt[w] / total_w) / g * g;
        uint32_t *rec = recs[w];
        uint32_t r0 = at / c->cols, c0 = at % c->cols;
        rec[LOGIC_V_OUT] = WIN_ADDR + OUT_OFF + at * out_bytes(c->codelet);
        rec[LOGIC_V_N] = cnt;
        rec[LOGIC_V_COLS] = c->cols;
        rec[LOGIC_V_COL0] = c0;
        rec[LOGIC_V_OP] = c->op;
        for (int k = 0; k < 3; k++) {
            uint32_t cs, rs, eb = in_bytes(c->codelet, k);
            input_geometry(c->b[k], c->cols, &cs, &rs);
            rec[LOGIC_V_IN0 + 3 * k] = WIN_ADDR + off[k] + (r0 * rs + c0 * cs) * eb;
            rec[LOGIC_V_IN0_COL_STEP + 3 * k] = cs * eb;
            rec[LOGIC_V_IN0_ROW_JUMP + 3 * k] = (rs - c->cols * cs) * eb;
        }
        res.count[w] = cnt;
        res.rows_spanned[w] = cnt ? (at + cnt - 1) / c->cols - r0 + 1 : 0;
        at += cnt;
    }
    lg_run r;
    lg_setup(&r, codelet_entry[c->codelet]);
    CU_ASSERT_EQUAL_FATAL(tmem_write_bytes(&r.t->s.mem, WIN_ADDR, win, WIN_BYTES), TMEM_OK);
    for (unsigned w = 0; w < W; w++)
        CU_ASSERT_EQUAL_FATAL(tmem_write_bytes(&r.t->s.mem, REC_ADDR + w * REC_STEP, recs[w], LOGIC_V_WORDS * 4),
                              TMEM_OK);
    res.ran = lg_go(&r);
    res.cycles = r.cycles;
    if (!res.ran)
        fprintf(stderr, "\n%s op %u did not end: %s\n", codelet_entry[c->codelet], c->op, r.fault);
    CU_ASSERT_EQUAL_FATAL(tmem_read_bytes(&r.t->s.mem, WIN_ADDR, got, WIN_BYTES), TMEM_OK);
    for (unsigned w = 0; w < W; w++)
        CU_ASSERT_TRUE(logic_model_record(c->codelet, recs[w], win, WIN_ADDR, WIN_BYTES));
    for (size_t i = 0; i < WIN_BYTES; i++)
        if (win[i] != got[i]) {
            if (res.mismatches++ < 4)
                fprintf(stderr, "\n%s op %u (%s,%s,%s): byte +0x%zx got 0x%02x model 0x%02x\n",
                        codelet_entry[c->codelet], c->op, bcast_name[c->b[0]], bcast_name[c->b[1]],
                        bcast_name[c->b[2]], i, got[i], win[i]);
        }
    lg_done(&r);
    free(win);
    free(got);
    return res;
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_model_values(void)
{
    const float nan = f32_of_bits(0x7fc00000u), denorm = f32_of_bits(0x00000001u);
    CU_ASSERT_EQUAL(logic_model_compare_f32(LOGIC_EQ, nan, nan), 0);
    CU_ASSERT_EQUAL(logic_model_compare_f32(LOGIC_LE, nan, 1.0f), 0);
    CU_ASSERT_EQUAL(logic_model_compare_f32(LOGIC_GE, 1.0f, nan), 0);
    CU_ASSERT_EQUAL(logic_model_compare_f32(LOGIC_EQ, -0.0f, 0.0f), 1);
    CU_ASSERT_EQUAL(logic_model_compare_f32(LOGIC_LT, -0.0f, 0.0f), 0);
    CU_ASSERT_EQUAL(logic_model_compare_f32(LOGIC_EQ, denorm, 0.0f), 1);   /* read as zero */
    CU_ASSERT_EQUAL(logic_model_compare_f32(LOGIC_GT, denorm, 0.0f), 0);
    CU_ASSERT_EQUAL(logic_model_compare_f32(LOGIC_LT, -INFINITY, -3.0e38f), 1);
    CU_ASSERT_EQUAL(logic_model_compare_f32(LOGIC_GE, 2.0f, 2.0f), 1);
    CU_ASSERT_EQUAL(logic_model_compare_i32(LOGIC_LT, INT32_MIN, 0), 1);
    CU_ASSERT_EQUAL(logic_model_compare_i32(LOGIC_GT, -1, INT32_MAX), 0);
    CU_ASSERT_EQUAL(logic_model_compare_i32(LOGIC_LE, 5, 5), 1);
    CU_ASSERT_EQUAL(logic_model_int(LOGIC_ADD, INT32_MAX, 1), INT32_MIN);
    CU_ASSERT_EQUAL(logic_model_int(LOGIC_SUB, INT32_MIN, 1), INT32_MAX);
    CU_ASSERT_EQUAL(logic_model_int(LOGIC_MUL, 0x10000, 0x10001), 0x10000);
    CU_ASSERT_EQUAL(logic_model_int(LOGIC_MAX, -7, -9), -7);
    CU_ASSERT_EQUAL(logic_model_int(LOGIC_MIN, -7, 3), -7);
    CU_ASSERT_EQUAL(logic_model_bool(LOGIC_XOR, 1, 1), 0);
    CU_ASSERT_EQUAL(logic_model_bool(LOGIC_NOT, 0, 1), 1);
    CU_ASSERT_EQUAL(logic_model_where(2, 0x11u, 0x22u), 0x11u);
    CU_ASSERT_EQUAL(logic_model_where(0, 0x11u, 0x22u), 0x22u);
}

static const uint32_t n_ops[] = {LOGIC_COMPARE_OPS, LOGIC_COMPARE_OPS, 1, LOGIC_BOOL_OPS, LOGIC_INT_OPS};

/* Every op, every broadcast form of the second (and third) input, rows of
 * 7 columns: 9 rows = 63 elements (a partial last bool word). */
static void test_all_forms(void)
{
    size_t cases = 0, bad = 0;
    for (unsigned cd = 0; cd < 5; cd++)
        for (uint32_t op = 0; op < n_ops[cd]; op++)
            for (unsigned b1 = 0; b1 < 4; b1++) {
                lg_case c = {cd, op, 9, 7, {B_FULL, b1, (b1 + 1) % 4}, false, 100 + cd * 31 + op * 7 + b1};
                lg_result r = run_case(&c);
                cases++;
                if (!r.ran || r.mismatches)
                    bad++;
                /* in0 broadcast too (the codelets do not care which). */
                lg_case d = {cd, op, 5, 7, {b1, B_FULL, B_ROW}, true, 900 + cd * 31 + op * 7 + b1};
                r = run_case(&d);
                cases++;
                if (!r.ran || r.mismatches)
                    bad++;
            }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(cases, 2 * 4 * (5 + 5 + 1 + 4 + 5));
}

/* Sizes around the word boundary: n = 1 .. 9 in one worker's share (the
 * others get nothing but the last, which gets the rest). */
static void test_small_sizes(void)
{
    for (uint32_t n = 1; n <= 9; n++) {
        lg_case c = {LOGIC_CODELET_BOOL, LOGIC_NOT, 1, n, {B_FULL, B_FULL, B_FULL}, false, 7 + n};
        lg_result r = run_case(&c);
        CU_ASSERT_TRUE(r.ran);
        CU_ASSERT_EQUAL(r.mismatches, 0);
        lg_case d = {LOGIC_CODELET_COMPARE_F32, LOGIC_LT, n, 1, {B_FULL, B_SCALAR, B_FULL}, false, 70 + n};
        r = run_case(&d);
        CU_ASSERT_TRUE(r.ran);
        CU_ASSERT_EQUAL(r.mismatches, 0);
    }
}

static uint64_t w_binary_i32(uint32_t n, uint32_t rows)
{
    return n ? 21 + 7 * (uint64_t)n + 10 * (uint64_t)(rows - 1) : 3;
}

static uint64_t w_compare_f32(uint32_t n, uint32_t rows)
{
    if (!n)
        return 3;
    return 25 + 11 * (uint64_t)n + 2 * (n / 4) + (n % 4 ? 10 : 2) + 10 * (uint64_t)(rows - 1);
}

static void test_hand_cycles(void)
{
    /* 4 rows of 10: shares 8, 0, 0, 12, 0, 20 elements (weights 3, 1, 0,
     * 4, 1, 2 rounded down to multiples of 4, the rest to the last),
     * records spanning 1, 0, 0, 2, 0, 2 rows. */
    lg_case c = {LOGIC_CODELET_COMPARE_F32, LOGIC_GT, 4, 10, {B_FULL, B_ROW, B_FULL}, false, 5};
    lg_result r = run_case(&c);
    CU_ASSERT_TRUE(r.ran);
    CU_ASSERT_EQUAL(r.mismatches, 0);
    uint64_t wc[W];
    for (unsigned w = 0; w < W; w++)
        wc[w] = w_compare_f32(r.count[w], r.rows_spanned[w]);
    CU_ASSERT_EQUAL(r.count[0], 8);
    CU_ASSERT_EQUAL(r.rows_spanned[3], 2);
    CU_ASSERT_EQUAL(r.cycles, hand_cycles(wc));
    /* 3 rows of 7 = 21: shares 4, 0, 0, 4, 0, 13; a partial last word. */
    lg_case p = {LOGIC_CODELET_COMPARE_F32, LOGIC_EQ, 3, 7, {B_FULL, B_COL, B_FULL}, false, 6};
    r = run_case(&p);
    CU_ASSERT_TRUE(r.ran);
    CU_ASSERT_EQUAL(r.mismatches, 0);
    for (unsigned w = 0; w < W; w++)
        wc[w] = w_compare_f32(r.count[w], r.rows_spanned[w]);
    CU_ASSERT_EQUAL(r.count[5], 13);
    CU_ASSERT_EQUAL(r.cycles, hand_cycles(wc));
    lg_case b = {LOGIC_CODELET_BINARY_I32, LOGIC_MUL, 4, 10, {B_FULL, B_SCALAR, B_FULL}, false, 8};
    r = run_case(&b);
    CU_ASSERT_TRUE(r.ran);
    CU_ASSERT_EQUAL(r.mismatches, 0);
    for (unsigned w = 0; w < W; w++)
        wc[w] = w_binary_i32(r.count[w], r.rows_spanned[w]);
    CU_ASSERT_EQUAL(r.count[3], 14);
    CU_ASSERT_EQUAL(r.cycles, hand_cycles(wc));
}

static void test_per_element_cost(void)
{
    const uint32_t n = 12000;
    printf("\n    tile cycles per element, %u elements over six workers, one row each (GC200):\n", n);
    for (unsigned cd = 0; cd < 5; cd++) {
        lg_case c = {cd, 0, 6, n / 6, {B_FULL, B_FULL, B_FULL}, true, 55 + cd};
        lg_result r = run_case(&c);
        CU_ASSERT_TRUE(r.ran);
        CU_ASSERT_EQUAL(r.mismatches, 0);
        printf("      %-16s %.3f\n", codelet_entry[cd], (double)r.cycles / n);
        if (cd == LOGIC_CODELET_COMPARE_F32) {
            uint64_t wc[W];
            for (unsigned w = 0; w < W; w++)
                wc[w] = w_compare_f32(n / 6, 1);
            CU_ASSERT_EQUAL(r.cycles, hand_cycles(wc));
        }
    }
}

static void test_bad_op(void)
{
    lg_run r;
    lg_setup(&r, "vtx_logic_u8");
    uint32_t rec[16];
    memset(rec, 0, sizeof rec);
    rec[LOGIC_V_N] = 4;
    rec[LOGIC_V_COLS] = 4;
    rec[LOGIC_V_OP] = LOGIC_BOOL_OPS;
    rec[LOGIC_V_IN0] = rec[LOGIC_V_IN1] = WIN_ADDR;
    rec[LOGIC_V_OUT] = WIN_ADDR + OUT_OFF;
    uint32_t zero[16] = {0};
    for (unsigned w = 0; w < W; w++)
        CU_ASSERT_EQUAL_FATAL(tmem_write_bytes(&r.t->s.mem, REC_ADDR + w * REC_STEP, w == 2 ? rec : zero,
                                               LOGIC_V_WORDS * 4), TMEM_OK);
    CU_ASSERT_FALSE(lg_go(&r));
    CU_ASSERT_EQUAL(r.t->s.trap_code, LOGIC_TRAP_BAD_OP);
    lg_done(&r);
}

void test_register(void)
{
    ADD_SUITE("codelets_logic",
              {"models on hand-worked values", test_model_values},
              {"every op on every broadcast form", test_all_forms},
              {"sizes around the word boundary", test_small_sizes},
              {"hand-counted cycles", test_hand_cycles},
              {"per-element cost at 12,000 elements", test_per_element_cost},
              {"op out of range traps", test_bad_op});
}
