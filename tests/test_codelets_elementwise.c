/*
 * test_codelets_elementwise.c — the element-wise codelets
 * (workloads/codelets/elementwise.S) run on one simulated GC200 tile: the
 * library text plus a small supervisor (runall on six vertex records,
 * sync 0, exitz) assembled together, inputs written to tile memory, six
 * workers run with uneven shares (zero-count records included), outputs
 * compared
 *   (a) bit for bit with the models (workloads/codelets/elementwise_model.c)
 *       on random inputs with denormals, infinities, NaNs and signed zeros;
 *   (b) with a double-precision reference (libm) within the tolerances
 *       derived below, on finite normal inputs;
 *   (c) cycle counts against hand calculations (below);
 *   (d) in place (out = in);
 *   (e) placements that defeat the one-bundle-per-pair loops (streams in
 *       one memory element, region 0, in1 in region 0, misaligned rows,
 *       odd column steps) still give the model's bits and no fault;
 * and the tile cycles per element of every op at 24,000 elements are
 * printed (the table in elementwise.S).
 *
 * Cycle counts.  Conventions of tests/test_axpy_kernel.c: the supervisor
 * issues setzi x3 at cycles 0-2 and runall at T = 3; worker k (1..6) first
 * issues at cycle T+1 + ((k-1 - (T+1)) mod 6), i.e. workers 5, 6, 1, 2, 3,
 * 4 at cycles 4..9, and then issues every 6 L tile cycles after an issue
 * of latency L worker cycles; it exits at first_k + 6 W_k where W_k is the
 * sum of the latencies of its issues before exitz; the supervisor's sync
 * issues at E + 1 (E the last exit) and its exitz at E + 2: cycles = E + 3.
 * Every issue of the codelets is a bundle (8 bytes), so no branch pays the
 * misalignment penalty.  W for each path, from elementwise.S:
 *
 *   vtx_copy, both 8-aligned, apart, P = bytes / 8 pairs, no tail word:
 *     3 ld32 + brz + xor, and, brnz + and, brz (to 1)        9
 *     mov, add, call + ew_apart (11), shr, brz                16
 *     ld64, add, tapack, shr                                  4
 *     rpt block: min, sub, rpt, brnz + 2 floor(P/2) bundles   4 + 2 floor(P/2)
 *     and, brz (+ ldst64pace, bri when P is odd)              2 (+2)
 *     ew_copy_tail: and, brz (to ew_exit)                     2
 *   W = 37 + P + (P odd); a zero-byte record: 3 ld32 + brz = 4.
 *
 *   vtx_unary_f32 exp, n elements, P = n / 2 (f32exp: 3 worker cycles):
 *     dispatch: 2 ld32, brz, cmpult, brz, 2 ld32, setzi, shl, ld32,
 *       2 setzi, br                                          13
 *     ld64step, shr, brz                                      3
 *     P >= 1: first body (2 bundles of 3) 6, add 1, rpt block 4
 *       + 6 (P - 1), st64step 1                               6 P + 6
 *     and, brz                                                2
 *     n odd: body 6, st32 1 (then exitz)                      7
 *   W = 18 + (P ? 6 P + 6 : 0) + 7 (n odd); a zero-count record: 3.
 *
 *   vtx_binary_f32 add, one row, in1 contiguous, fast loop (apart):
 *     entry: 2 ld32, brz, cmpult, brz, 3 ld32                 8
 *     row: 2 ld32, setzi, or, and, brnz, brz, cmpeq, brz, and, brnz,
 *       setzi, cmpult, brz, shr, brz                          16
 *     3 x (mov, mov/add, call, ew_apart 11, brz)              45
 *     setzi, bri; ew_bin_go: shl, ld32, ld32, br              6
 *     tapack, shr, 3 fill bundles, shr                        6
 *     rpt block 4 + 2 floor(P/2); and, shl, brz 3;
 *       P odd: extra bundle, mov 2                            7 + P + (P odd)
 *     and, brz (cols odd: st32, bri) 2 (+2)
 *     next row: 2 ld32, 3 add, add, brnz                      7
 *   W = 97 + P + (P odd) + 2 (cols odd) for P = cols / 2; zero rows: 3.
 *
 * Worked example (test_hand_cycles, copy): shares of 40, 24, 0, 56, 8, 16
 * bytes: P = 5, 3, 0, 7, 1, 2; W = 43, 41, 4, 45, 39, 39; workers 1..6 first
 * issue at 6, 7, 8, 9, 4, 5 and exit at 6 + 258 = 264, 7 + 246 = 253,
 * 8 + 24 = 32, 9 + 270 = 279, 4 + 234 = 238, 5 + 234 = 239: E = 279, 282
 * cycles.
 *
 * Tolerances against double precision (u = 2^-24, t = 2^-126, r = the
 * reference rounded to the nearest double):
 *   add, sub, mul, div: the tile rounds the exact result once to f32 (and
 *     flushes a denormal result to ±0): |got - r| <= u |r| + t;
 *   max, min, relu, neg, abs, floor, ceil: exact (0);
 *   exp, log, sqrt, rsqrt, reciprocal, tanh, sigmoid: ipusim evaluates them
 *     in double and rounds once (isa/fparith.h; the hardware promises 1.5 to
 *     16.5 ulps, ISA2 Table 4.1): u |r| + t, and twice that to cover the
 *     C library's own error in the reference;
 *   scale-shift: the axpy bound (tests/test_axpy_kernel.c) with a = scale;
 *   erf: ELEMENTWISE_ERF_ABS_ERROR = 1.5e-6 absolute (elementwise.h):
 *     A&S 7.1.26's 1.5e-7 plus the f32 evaluation (measured: 0.3 of it);
 *   gelu_erf: (x/2)(1 + erf): |x|/2 * 1.5e-6 for erf's error plus 3 u |r|
 *     for the roundings of x/sqrt 2, 1 + erf and the last product, + t;
 *   gelu_tanh: the argument s x (1 + k x^2) is formed with 5 roundings
 *     (relative error <= 5u), tanh is rounded once and tanh' <= 1, so
 *     1 + tanh is off by at most (5u |arg| + u) + u(1 + |tanh|); times |x|/2
 *     plus 2 u |r| for the last two roundings, + t.
 */
#include <CUnit/CUnit.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "isa/fparith.h"
#include "isa/fp16.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"
#include "codelet_fixture.h"
#include "test_util.h"
#include "workloads/codelets/abi.h"
#include "workloads/codelets/elementwise.h"

#define W CODELET_WORKERS
#define REC_ADDR 0x81000u          /* six records, after the library's data */
#define REC_STEP 64u               /* bytes between records */
#define A_ADDR 0x88000u            /* tensors 96 KiB apart in region 1 */
#define B_ADDR 0xa0000u
#define C_ADDR 0xb8000u
#define R0_ADDR 0x58000u           /* region 0, past the library's code element */
#define RUNALL_CYCLE 3u

/* ---- host values ---------------------------------------------------------------- */

static uint32_t lcg_state;
static uint32_t lcg(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state;
}

static float f32_of_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static uint32_t bits_of(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

/* A random normal value of magnitude 2^lo .. 2^hi, either sign. */
static float rnd_normal(int lo, int hi)
{
    float m = 1.0f + (float)(lcg() >> 9) / (float)(1u << 23);
    int e = lo + (int)(lcg() % (uint32_t)(hi - lo + 1));
    float v = ldexpf(m, e);
    return (lcg() & 1) ? -v : v;
}

/* Special values mixed into the bit-exact tests. */
static const uint32_t specials[] = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00400000u, /* zeros, denormals */
    0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u, /* inf, qNaN, sNaN */
    0x7f7fffffu, 0xff7fffffu, 0x00800000u, 0x3f800000u, 0xbf800000u, /* extremes, ±1 */
    0x42c80000u, 0xc2c80000u, 0x3f000000u,                            /* ±100, 0.5 */
};
#define N_SPECIALS (sizeof specials / sizeof specials[0])

static float rnd_any(void)
{
    uint32_t r = lcg() % 8;
    if (r == 0)
        return f32_of_bits(specials[lcg() % N_SPECIALS]);
    return rnd_normal(-8, 8);
}

/* ---- the tile --------------------------------------------------------------------- */

typedef struct ew_run {
    ipu_exe *e;
    ipu_tile *t;
    bool ran;
    uint64_t cycles;
    char fault[1024];
} ew_run;

/* The tile with the library and a supervisor starting `entry` on the
 * records at REC_ADDR, `rec_step` bytes apart (0: one record for all six,
 * the split codelets). */
static void ew_setup_step(ew_run *r, const char *entry, unsigned rec_step)
{
    memset(r, 0, sizeof *r);
    codelet_tile_load(&r->e, &r->t, "elementwise.S", entry, REC_ADDR, rec_step);
}

static void ew_setup(ew_run *r, const char *entry)
{
    ew_setup_step(r, entry, REC_STEP);
}

static void ew_write(ew_run *r, uint32_t addr, const void *data, size_t bytes)
{
    CU_ASSERT_EQUAL_FATAL(tmem_write_bytes(&r->t->s.mem, addr, data, bytes), TMEM_OK);
}

static void ew_read(ew_run *r, uint32_t addr, void *data, size_t bytes)
{
    CU_ASSERT_EQUAL_FATAL(tmem_read_bytes(&r->t->s.mem, addr, data, bytes), TMEM_OK);
}

/* Records: words[w][i] for the six workers. */
static void ew_records(ew_run *r, const uint32_t words[W][16], unsigned n_words)
{
    for (unsigned w = 0; w < W; w++)
        ew_write(r, REC_ADDR + w * REC_STEP, words[w], n_words * 4);
}

static bool ew_go(ew_run *r)
{
    enum tile_stop stop = tile_run_alone(r->t, 200000000);
    r->ran = stop == TILE_STOP_END;
    r->cycles = r->t->s.cycle;
    if (!r->ran) {
        if (stop == TILE_STOP_FAULT)
            tile_describe_fault(r->t, r->e, r->fault, sizeof r->fault);
        fprintf(stderr, "\nthe codelet did not end: stop %d %s\n", (int)stop, r->fault);
    }
    return r->ran;
}

static void ew_done(ew_run *r)
{
    codelet_tile_free(&r->e, &r->t);
    memset(r, 0, sizeof *r);
}

/* Split n units over six workers unevenly: weights 3, 1, 0, 4, 1, 2 (the
 * third worker gets nothing), or evenly when even_split is set (the cost
 * measurements); first[w], count[w]. */
static bool even_split;
static void uneven_shares(uint32_t n, uint32_t first[W], uint32_t count[W])
{
    static const uint32_t uneven[W] = {3, 1, 0, 4, 1, 2}, even[W] = {1, 1, 1, 1, 1, 1};
    const uint32_t *weight = even_split ? even : uneven;
    const uint64_t total = even_split ? 6 : 11;
    uint32_t at = 0;
    for (unsigned w = 0; w < W; w++) {
        uint32_t c = w == W - 1 ? n - at : (uint32_t)((uint64_t)n * weight[w] / total);
        first[w] = at;
        count[w] = c;
        at += c;
    }
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

/* ---- binary ------------------------------------------------------------------------- */

static const char *const binary_name[] = {"add", "sub", "mul", "max", "min", "div"};

typedef struct bin_case {
    enum elementwise_binary_op op;
    uint32_t rows, cols;
    uint32_t row_step;             /* bytes */
    uint32_t in1_row_step, in1_col_step;
    uint32_t in0, in1, out;        /* tile addresses (out may be in0) */
    bool finite;                   /* finite normal inputs only (reference check) */
    uint32_t seed;
} bin_case;

typedef struct bin_result {
    bool ran;
    uint64_t cycles;
    size_t mismatches;
    size_t over_bound;
    double max_err_ulps;
} bin_result;

static size_t in1_elems(const bin_case *c)
{
    size_t last = c->rows ? ((size_t)(c->rows - 1) * c->in1_row_step + (size_t)(c->cols ? c->cols - 1 : 0) * c->in1_col_step) / 4 : 0;
    return last + 1;
}

static double binary_ref(enum elementwise_binary_op op, double a, double b)
{
    switch (op) {
    case ELEMENTWISE_ADD: return a + b;
    case ELEMENTWISE_SUB: return a - b;
    case ELEMENTWISE_MUL: return a * b;
    case ELEMENTWISE_DIV: return a / b;
    case ELEMENTWISE_MAX: return a > b ? a : b;
    default:              return a < b ? a : b;
    }
}

/* Run one binary case, rows shared unevenly over the six workers. */
static bin_result run_binary(const bin_case *c)
{
    bin_result res;
    memset(&res, 0, sizeof res);
    size_t n0 = (size_t)c->rows * (c->row_step / 4) + 16, n1 = in1_elems(c) + 16;
    float *in0 = calloc(n0, 4), *in1 = calloc(n1, 4), *got = calloc(n0, 4), *model = calloc(n0, 4);
    CU_ASSERT_FATAL(in0 && in1 && got && model);
    lcg_state = c->seed;
    for (size_t i = 0; i < n0; i++)
        in0[i] = c->finite ? rnd_normal(-20, 20) : rnd_any();
    for (size_t i = 0; i < n1; i++)
        in1[i] = c->finite ? rnd_normal(-20, 20) : rnd_any();
    /* The output tensor starts with a pattern the codelet must overwrite
     * exactly where it writes (padding between rows must survive). */
    for (size_t i = 0; i < n0; i++)
        got[i] = f32_of_bits(0x7fbadbadu);
    ew_run r;
    ew_setup(&r, "vtx_binary_f32");
    ew_write(&r, c->in1, in1, n1 * 4);
    if (c->out != c->in0)
        ew_write(&r, c->out, got, n0 * 4);
    ew_write(&r, c->in0, in0, n0 * 4);
    uint32_t first[W], count[W], words[W][16];
    uneven_shares(c->rows, first, count);
    for (unsigned w = 0; w < W; w++) {
        uint32_t *v = words[w];
        v[BINARY_F32_V_IN0] = c->in0 + first[w] * c->row_step;
        v[BINARY_F32_V_IN1] = c->in1 + first[w] * c->in1_row_step;
        v[BINARY_F32_V_OUT] = c->out + first[w] * c->row_step;
        v[BINARY_F32_V_ROWS] = count[w];
        v[BINARY_F32_V_COLS] = c->cols;
        v[BINARY_F32_V_ROW_STEP] = c->row_step;
        v[BINARY_F32_V_IN1_ROW_STEP] = c->in1_row_step;
        v[BINARY_F32_V_IN1_COL_STEP] = c->in1_col_step;
        v[BINARY_F32_V_OP] = c->op;
    }
    ew_records(&r, words, BINARY_F32_V_WORDS);
    res.ran = ew_go(&r);
    res.cycles = r.cycles;
    if (res.ran) {
        ew_read(&r, c->out, got, n0 * 4);
        /* The model: in place or not, on the same layout; elements outside
         * the rows keep what was there. */
        for (size_t i = 0; i < n0; i++)
            model[i] = c->out == c->in0 ? in0[i] : f32_of_bits(0x7fbadbadu);
        elementwise_model_binary_f32(c->op, in0, in1, model, c->rows, c->cols, c->row_step, c->in1_row_step,
                                     c->in1_col_step);
        for (size_t i = 0; i < n0 - 16; i++)
            if (bits_of(got[i]) != bits_of(model[i]) && res.mismatches++ < 4)
                fprintf(stderr, "\n  %s out[%zu]: codelet 0x%08x, model 0x%08x", binary_name[c->op], i,
                        bits_of(got[i]), bits_of(model[i]));
        if (c->finite)
            for (uint32_t row = 0; row < c->rows; row++)
                for (uint32_t col = 0; col < c->cols; col++) {
                    size_t i = (size_t)row * (c->row_step / 4) + col;
                    size_t j = ((size_t)row * c->in1_row_step + (size_t)col * c->in1_col_step) / 4;
                    double want = binary_ref(c->op, in0[i], in1[j]);
                    bool exact = c->op == ELEMENTWISE_MAX || c->op == ELEMENTWISE_MIN;
                    double bound = exact ? 0 : ldexp(fabs(want), -24) + ldexp(1.0, -126);
                    double err = fabs((double)got[i] - want);
                    if (err > bound)
                        res.over_bound++;
                    double ulps = want != 0 ? err / ldexp(fabs(want), -23) : 0;
                    if (ulps > res.max_err_ulps)
                        res.max_err_ulps = ulps;
                }
    }
    ew_done(&r);
    free(in0); free(in1); free(got); free(model);
    return res;
}

static void check_binary(const bin_case *c, const char *what)
{
    bin_result res = run_binary(c);
    if (res.mismatches || res.over_bound || !res.ran)
        fprintf(stderr, "\n  binary %s (%s): ran %d, %zu mismatches, %zu over bound\n", binary_name[c->op], what,
                res.ran, res.mismatches, res.over_bound);
    CU_ASSERT_TRUE(res.ran);
    CU_ASSERT_EQUAL(res.mismatches, 0);
    CU_ASSERT_EQUAL(res.over_bound, 0);
}

/* Every op on every loop: fast contiguous and broadcast (tensors apart in
 * region 1), single-access (streams in one element: out 8 mod 16 bytes
 * after in0 + 24, close), element by element (column step 8, misaligned
 * rows), special values and finite values against the reference. */
static void test_binary_paths(void)
{
    for (unsigned op = 0; op < ELEMENTWISE_BINARY_OPS; op++) {
        for (int finite = 0; finite < 2; finite++) {
            uint32_t seed = 100u * op + (uint32_t)finite;
            /* 22 rows of 37 (odd) in a 40-element row pitch. */
            bin_case fast = {op, 22, 37, 160, 160, 4, A_ADDR, B_ADDR, C_ADDR, finite, seed};
            check_binary(&fast, "contiguous, apart");
            bin_case bc = {op, 22, 37, 160, 4, 0, A_ADDR, B_ADDR, C_ADDR, finite, seed + 7};
            check_binary(&bc, "row broadcast, apart");
            bin_case scalar = {op, 9, 50, 200, 0, 0, A_ADDR, B_ADDR, C_ADDR, finite, seed + 9};
            check_binary(&scalar, "scalar broadcast, apart");
            /* out close behind in0, same address bit 3 three pairs back. */
            bin_case close = {op, 10, 64, 256, 256, 4, A_ADDR, B_ADDR, A_ADDR + 2560 + 64 + 8, finite, seed + 1};
            check_binary(&close, "contiguous, out near in0");
            bin_case closeb = {op, 10, 64, 256, 4, 0, A_ADDR, B_ADDR, A_ADDR + 2560 + 64 + 8, finite, seed + 2};
            check_binary(&closeb, "broadcast, out near in0");
            bin_case r0 = {op, 7, 33, 136, 136, 4, R0_ADDR, R0_ADDR + 0x2000, R0_ADDR + 0x4000, finite, seed + 3};
            check_binary(&r0, "region 0, in1 in region 0");
            bin_case strided = {op, 6, 21, 84, 4, 8, A_ADDR, B_ADDR, C_ADDR, finite, seed + 4};
            check_binary(&strided, "in1 column step 8, rows 4 mod 8");
            bin_case odd_rows = {op, 8, 15, 60, 64, 4, A_ADDR, B_ADDR, C_ADDR, finite, seed + 5};
            check_binary(&odd_rows, "row pitch 60: every other row misaligned");
        }
    }
}

/* In place (out = in0): region 1 stays on the fast loop, region 0 does not. */
static void test_binary_in_place(void)
{
    for (unsigned op = 0; op < ELEMENTWISE_BINARY_OPS; op++) {
        bin_case c = {op, 12, 301, 1208, 1208, 4, A_ADDR, B_ADDR, A_ADDR, false, 900u + op};
        check_binary(&c, "in place, contiguous");
        bin_case b = {op, 12, 301, 1208, 4, 0, A_ADDR, B_ADDR, A_ADDR, false, 950u + op};
        check_binary(&b, "in place, broadcast");
        bin_case z = {op, 5, 40, 160, 160, 4, R0_ADDR, B_ADDR, R0_ADDR, false, 980u + op};
        check_binary(&z, "in place in region 0");
    }
    /* The in-place fast loop is taken: one row of 2000, far fewer cycles
     * than the single-access loop on the same data in region 0. */
    bin_case fast = {ELEMENTWISE_ADD, 6, 2000, 8000, 8000, 4, A_ADDR, B_ADDR, A_ADDR, true, 5};
    bin_case slow = {ELEMENTWISE_ADD, 6, 2000, 8000, 8000, 4, R0_ADDR, B_ADDR, R0_ADDR, true, 5};
    bin_result f = run_binary(&fast), s = run_binary(&slow);
    CU_ASSERT_EQUAL(f.mismatches + s.mismatches, 0);
    printf("\n    in place add, 12000 elements: region 1 %llu cycles, region 0 (single access) %llu\n",
           (unsigned long long)f.cycles, (unsigned long long)s.cycles);
    CU_ASSERT_TRUE(f.cycles * 2 < s.cycles);
}

/* ---- unary ---------------------------------------------------------------------------- */

static const char *const unary_name[] = {
    "relu", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid",
    "erf", "gelu_erf", "gelu_tanh", "scale_shift", "floor", "ceil",
};

typedef struct un_case {
    enum elementwise_unary_fn fn;
    uint32_t n;
    uint32_t in, out;
    bool finite;
    uint32_t seed;
    float a, b;
} un_case;

typedef struct un_result {
    bool ran;
    uint64_t cycles;
    size_t mismatches, over_bound;
    double max_ratio;
} un_result;

static double unary_ref(enum elementwise_unary_fn fn, double x, double a, double b)
{
    switch (fn) {
    case ELEMENTWISE_RELU:       return x > 0 ? x : 0;
    case ELEMENTWISE_NEG:        return -x;
    case ELEMENTWISE_ABS:        return fabs(x);
    case ELEMENTWISE_EXP:        return exp(x);
    case ELEMENTWISE_LOG:        return log(x);
    case ELEMENTWISE_SQRT:       return sqrt(x);
    case ELEMENTWISE_RSQRT:      return 1 / sqrt(x);
    case ELEMENTWISE_RECIPROCAL: return 1 / x;
    case ELEMENTWISE_TANH:       return tanh(x);
    case ELEMENTWISE_SIGMOID:    return 1 / (1 + exp(-x));
    case ELEMENTWISE_ERF:        return erf(x);
    case ELEMENTWISE_GELU_ERF:   return x / 2 * (1 + erf(x / sqrt(2.0)));
    case ELEMENTWISE_GELU_TANH:  return x / 2 * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case ELEMENTWISE_FLOOR:      return floor(x);
    case ELEMENTWISE_CEIL:       return ceil(x);
    default:                     return a * x + b;
    }
}

/* The tolerance of one element (the derivation at the top). */
static double unary_bound(enum elementwise_unary_fn fn, double x, double want, double a, double b)
{
    const double u = ldexp(1.0, -24), t = ldexp(1.0, -126);
    switch (fn) {
    case ELEMENTWISE_RELU: case ELEMENTWISE_NEG: case ELEMENTWISE_ABS:
    case ELEMENTWISE_FLOOR: case ELEMENTWISE_CEIL:
        return 0;
    case ELEMENTWISE_ERF:
        return ELEMENTWISE_ERF_ABS_ERROR;
    case ELEMENTWISE_GELU_ERF:
        return fabs(x) / 2 * ELEMENTWISE_ERF_ABS_ERROR + 3 * u * fabs(want) + t;
    case ELEMENTWISE_GELU_TANH: {
        double arg = sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
        return fabs(x) / 2 * (5 * u * fabs(arg) + u + u * (1 + fabs(tanh(arg)))) + 2 * u * fabs(want) + t;
    }
    case ELEMENTWISE_SCALE_SHIFT: {
        double ax = fabs(a * x);
        (void)b;
        return 2 * ((u * ax + t) * (1 + u) + u * fabs(want) + t);
    }
    default:
        return 2 * (u * fabs(want) + t);
    }
}

/* Inputs in each function's useful range (finite case). */
static float unary_input(enum elementwise_unary_fn fn, bool finite)
{
    if (!finite)
        return rnd_any();
    switch (fn) {
    case ELEMENTWISE_EXP:        return rnd_normal(-12, 5);
    case ELEMENTWISE_LOG: case ELEMENTWISE_SQRT: case ELEMENTWISE_RSQRT:
        return fabsf(rnd_normal(-30, 30));
    case ELEMENTWISE_TANH: case ELEMENTWISE_SIGMOID: case ELEMENTWISE_ERF:
    case ELEMENTWISE_GELU_ERF: case ELEMENTWISE_GELU_TANH:
        return rnd_normal(-12, 3);
    case ELEMENTWISE_FLOOR: case ELEMENTWISE_CEIL:
        return rnd_normal(-3, 25);                   /* fractions, and integers from 2^23 */
    default:                     return rnd_normal(-20, 20);
    }
}

static un_result run_unary(const un_case *c)
{
    un_result res;
    memset(&res, 0, sizeof res);
    size_t n = c->n + 16;
    float *in = calloc(n, 4), *got = calloc(n, 4), *model = calloc(n, 4);
    CU_ASSERT_FATAL(in && got && model);
    lcg_state = c->seed;
    for (size_t i = 0; i < n; i++) {
        in[i] = unary_input(c->fn, c->finite);
        got[i] = f32_of_bits(0x7fbadbadu);
    }
    ew_run r;
    ew_setup(&r, "vtx_unary_f32");
    if (c->out != c->in)
        ew_write(&r, c->out, got, n * 4);
    ew_write(&r, c->in, in, n * 4);
    uint32_t first[W], count[W], words[W][16];
    uneven_shares(c->n / 2, first, count);
    for (unsigned w = 0; w < W; w++) {
        /* Whole pairs, and the odd last element to the last worker. */
        uint32_t *v = words[w];
        uint32_t elems = count[w] * 2 + (w == W - 1 ? c->n % 2 : 0);
        v[UNARY_F32_V_IN] = c->in + first[w] * 8;
        v[UNARY_F32_V_OUT] = c->out + first[w] * 8;
        v[UNARY_F32_V_N] = elems;
        v[UNARY_F32_V_FN] = c->fn;
        v[UNARY_F32_V_A] = bits_of(c->a);
        v[UNARY_F32_V_B] = bits_of(c->b);
    }
    ew_records(&r, words, UNARY_F32_V_WORDS);
    res.ran = ew_go(&r);
    res.cycles = r.cycles;
    if (res.ran) {
        ew_read(&r, c->out, got, n * 4);
        for (size_t i = 0; i < n; i++)
            model[i] = c->out == c->in ? in[i] : f32_of_bits(0x7fbadbadu);
        elementwise_model_unary_f32(c->fn, c->a, c->b, in, model, c->n);
        for (size_t i = 0; i < n; i++)
            if (bits_of(got[i]) != bits_of(model[i]) && res.mismatches++ < 4)
                fprintf(stderr, "\n  %s out[%zu] (x = 0x%08x): codelet 0x%08x, model 0x%08x", unary_name[c->fn], i,
                        bits_of(in[i]), bits_of(got[i]), bits_of(model[i]));
        if (c->finite)
            for (size_t i = 0; i < c->n; i++) {
                double want = unary_ref(c->fn, in[i], c->a, c->b);
                double bound = unary_bound(c->fn, in[i], want, c->a, c->b);
                double err = fabs((double)got[i] - want);
                if (err > bound && res.over_bound++ < 4)
                    fprintf(stderr, "\n  %s(%.9g): %.9g, reference %.9g, bound %.3g", unary_name[c->fn],
                            (double)in[i], (double)got[i], want, bound);
                double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0);
                if (ratio > res.max_ratio)
                    res.max_ratio = ratio;
            }
    }
    ew_done(&r);
    free(in); free(got); free(model);
    return res;
}

static void check_unary(const un_case *c, const char *what)
{
    un_result res = run_unary(c);
    if (res.mismatches || res.over_bound || !res.ran)
        fprintf(stderr, "\n  unary %s (%s): ran %d, %zu mismatches, %zu over bound\n", unary_name[c->fn], what,
                res.ran, res.mismatches, res.over_bound);
    if (c->finite && c->fn >= ELEMENTWISE_ERF && c->fn <= ELEMENTWISE_GELU_TANH && c->n > 1000)
        printf("\n    %s: largest error %.2f of its bound", unary_name[c->fn], res.max_ratio);
    CU_ASSERT_TRUE(res.ran);
    CU_ASSERT_EQUAL(res.mismatches, 0);
    CU_ASSERT_EQUAL(res.over_bound, 0);
}

static void test_unary_functions(void)
{
    for (unsigned fn = 0; fn < ELEMENTWISE_UNARY_FNS; fn++) {
        for (int finite = 0; finite < 2; finite++) {
            uint32_t seed = 300u + 10u * fn + (uint32_t)finite;
            un_case apart = {fn, 1001, A_ADDR, C_ADDR, finite, seed, -1.7320508f, 0.3125f};
            check_unary(&apart, "apart");
            un_case inplace = {fn, 777, A_ADDR, A_ADDR, finite, seed + 1, 2.5f, -1.0f};
            check_unary(&inplace, "in place");
            un_case close = {fn, 300, A_ADDR, A_ADDR + 1200 + 64 + 8, finite, seed + 2, 0.5f, 0.0f};
            check_unary(&close, "out near in");
            un_case r0 = {fn, 255, R0_ADDR, R0_ADDR, finite, seed + 3, 3.0f, 1e-3f};
            check_unary(&r0, "in place in region 0");
            un_case tiny = {fn, 7, A_ADDR, C_ADDR, finite, seed + 4, 1.0f, 1.0f};
            check_unary(&tiny, "7 elements: mostly empty records");
        }
    }
}

/* Values worked out by hand (model and codelet agree on them above). */
static void test_model_values(void)
{
    const float nan = fp32_qnan();
    CU_ASSERT_EQUAL(bits_of(elementwise_model_binary(ELEMENTWISE_SUB, 1.0f, 1.0f)), 0x00000000u);
    CU_ASSERT_EQUAL(bits_of(elementwise_model_binary(ELEMENTWISE_DIV, 1.0f, 0.0f)), 0x7f800000u);
    CU_ASSERT_EQUAL(bits_of(elementwise_model_binary(ELEMENTWISE_DIV, 0.0f, 0.0f)), FP32_TILE_QNAN_BITS);
    /* maxNum: a quiet NaN loses; -0 < +0. */
    CU_ASSERT_EQUAL(bits_of(elementwise_model_binary(ELEMENTWISE_MAX, nan, -3.0f)), bits_of(-3.0f));
    CU_ASSERT_EQUAL(bits_of(elementwise_model_binary(ELEMENTWISE_MIN, 0.0f, -0.0f)), 0x80000000u);
    /* Denormal operands are zeros: 2^-149 + 2^-149 = +0. */
    CU_ASSERT_EQUAL(bits_of(elementwise_model_binary(ELEMENTWISE_ADD, f32_of_bits(1), f32_of_bits(1))), 0u);
    /* relu(-0) = +0, relu(NaN) = +0 (maxNum), neg keeps a denormal. */
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_RELU, -0.0f, 0, 0)), 0u);
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_RELU, nan, 0, 0)), 0u);
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_NEG, f32_of_bits(5), 0, 0)), 0x80000005u);
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_ABS, -2.0f, 0, 0)), bits_of(2.0f));
    /* erf(±0) = ±0 exactly, erf(±inf) = ±1, erf(NaN) = NaN. */
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_ERF, 0.0f, 0, 0)), 0u);
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_ERF, -0.0f, 0, 0)), 0x80000000u);
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_ERF, INFINITY, 0, 0)), bits_of(1.0f));
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_ERF, -INFINITY, 0, 0)), bits_of(-1.0f));
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_ERF, nan, 0, 0)), FP32_TILE_QNAN_BITS);
    /* scale-shift: 3 * 2 + 0.5, product then sum. */
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_SCALE_SHIFT, 2.0f, 3.0f, 0.5f)), bits_of(6.5f));
    /* gelu(0) = 0, gelu(large) = x. */
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_GELU_TANH, 0.0f, 0, 0)), 0u);
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_GELU_ERF, 20.0f, 0, 0)), bits_of(20.0f));
    CU_ASSERT_EQUAL(bits_of(elementwise_model_unary(ELEMENTWISE_GELU_TANH, 20.0f, 0, 0)), bits_of(20.0f));
    /* Casts: 65520 rounds to 65536 > 65504: saturates; inf is invalid -> NaN;
     * 2^-25 is a tie between 0 and the smallest f16 subnormal: to even, 0. */
    CU_ASSERT_EQUAL(elementwise_model_f32_to_f16(65520.0f), FP16_MAX_BITS);
    CU_ASSERT_EQUAL(elementwise_model_f32_to_f16(INFINITY), FP16_TILE_QNAN);
    CU_ASSERT_EQUAL(elementwise_model_f32_to_f16(0x1p-25f), 0);
    CU_ASSERT_EQUAL(elementwise_model_f32_to_f16(0x1.8p-24f), 2);
    CU_ASSERT_EQUAL(bits_of(elementwise_model_f16_to_f32(0x3c00)), bits_of(1.0f));
    CU_ASSERT_EQUAL(bits_of(elementwise_model_f16_to_f32(0x7c01)), FP32_TILE_QNAN_BITS);
    CU_ASSERT_EQUAL(bits_of(elementwise_model_f16_to_f32(0xfc00)), 0xff800000u);
}

/* ---- casts and copy ---------------------------------------------------------------------- */

/* Returns the cycles (0 when the run failed). */
static uint64_t run_cast(bool to_f16, uint32_t n, uint32_t in_addr, uint32_t out_addr, uint32_t seed)
{
    size_t slack = 32;
    uint32_t *in = calloc(n + slack, 4), *got = calloc(n + slack, 4), *want = calloc(n + slack, 4);
    CU_ASSERT_FATAL(in && got && want);
    lcg_state = seed;
    size_t in_bytes = to_f16 ? (size_t)n * 4 : ((size_t)n * 2 + 7) / 8 * 8;
    size_t out_bytes = to_f16 ? ((size_t)n * 2 + 7) / 8 * 8 : (size_t)n * 4;
    for (size_t i = 0; i < n + slack; i++)
        got[i] = 0x5a5a5a5au;
    if (to_f16) {
        for (size_t i = 0; i < n; i++) {
            float v = (lcg() % 4 == 0) ? rnd_any() : rnd_normal(-26, 17);
            in[i] = bits_of(v);
        }
    } else {
        uint16_t *h = (uint16_t *)in;
        for (size_t i = 0; i < n; i++)
            h[i] = (uint16_t)lcg();
    }
    ew_run r;
    ew_setup(&r, to_f16 ? "vtx_cast_f32_to_f16" : "vtx_cast_f16_to_f32");
    ew_write(&r, out_addr, got, out_bytes + 64);
    ew_write(&r, in_addr, in, in_bytes);
    uint32_t first[W], count[W], words[W][16];
    uneven_shares(n / 4, first, count);    /* shares of 4 elements keep f16 8-aligned */
    for (unsigned w = 0; w < W; w++) {
        uint32_t elems = count[w] * 4 + (w == W - 1 ? n % 4 : 0);
        words[w][CAST_V_IN] = in_addr + first[w] * 4 * (to_f16 ? 4 : 2);
        words[w][CAST_V_OUT] = out_addr + first[w] * 4 * (to_f16 ? 2 : 4);
        words[w][CAST_V_N] = elems;
    }
    ew_records(&r, words, CAST_V_WORDS);
    uint64_t cycles = ew_go(&r) ? r.cycles : 0;
    CU_ASSERT_NOT_EQUAL(cycles, 0);
    ew_read(&r, out_addr, got, out_bytes + 64);
    memcpy(want, got, (n + slack) * 4);
    size_t bad = 0;
    if (to_f16) {
        uint16_t *h = (uint16_t *)want;
        for (size_t i = 0; i < n; i++)
            h[i] = elementwise_model_f32_to_f16(f32_of_bits(in[i]));
        if (n % 2)
            h[n] = h[n - 1];       /* the pad element: a copy of the last */
        for (size_t i = n + n % 2; i < out_bytes / 2 + 32; i++)
            h[i] = 0x5a5a;         /* nothing else written */
        /* Reference: an IEEE conversion of finite values in range. */
        for (size_t i = 0; i < n; i++) {
            float v = fp32_flush(f32_of_bits(in[i]));
            if (isfinite(v) && fabsf(v) <= 65504.0f && fp16_from_f32(v) != h[i] && bad++ < 4)
                fprintf(stderr, "\n  f32 -> f16 of %g: 0x%04x, IEEE 0x%04x", (double)v, h[i], fp16_from_f32(v));
        }
    } else {
        const uint16_t *h = (const uint16_t *)in;
        for (size_t i = 0; i < n; i++) {
            float v = elementwise_model_f16_to_f32(h[i]);
            want[i] = bits_of(v);
            if (!fp16_is_nan(h[i]) && bits_of(v) != bits_of(fp16_to_f32(h[i])) && bad++ < 4)
                fprintf(stderr, "\n  f16 -> f32 of 0x%04x differs from the exact value", h[i]);
        }
        for (size_t i = n; i < out_bytes / 4 + 16; i++)
            want[i] = 0x5a5a5a5au;
    }
    CU_ASSERT_EQUAL(bad, 0);
    size_t mism = 0;
    for (size_t i = 0; i < out_bytes / 4 + 16; i++)
        if (got[i] != want[i] && mism++ < 4)
            fprintf(stderr, "\n  cast word %zu: codelet 0x%08x, model 0x%08x", i, got[i], want[i]);
    CU_ASSERT_EQUAL(mism, 0);
    ew_done(&r);
    free(in); free(got); free(want);
    return cycles;
}

static void test_casts(void)
{
    static const uint32_t sizes[] = {1, 2, 3, 5, 22, 23, 1001, 4097};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        run_cast(true, sizes[i], A_ADDR, C_ADDR, 40u + i);
        run_cast(false, sizes[i], A_ADDR, C_ADDR, 60u + i);
        run_cast(true, sizes[i], R0_ADDR, R0_ADDR + 0x8000, 80u + i);
        run_cast(false, sizes[i], R0_ADDR, R0_ADDR + 0x8000, 90u + i);
    }
}

/* vtx_cast_f32_to_f16_sr on n values seeded with `seed`: every element as
 * the model rounds it with its worker's PRNG sequence (pair p the p-th
 * step), each one of the two f16 values around its input, and the
 * roundings' mean error near zero; the cycles (0 when it failed). */
static uint64_t run_cast_sr(uint32_t n, uint32_t prng_seed, uint16_t *out, const float *values)
{
    ew_run r;
    ew_setup(&r, "vtx_cast_f32_to_f16_sr");
    isa_seed_prngs(&r.t->s, prng_seed);
    uint64_t state[W][2];
    for (unsigned w = 0; w < W; w++)
        memcpy(state[w], r.t->s.ctx[w + 1].prng, sizeof state[w]);
    uint32_t *in = calloc(n + 8, 4);
    CU_ASSERT_FATAL(in != NULL);
    for (uint32_t i = 0; i < n; i++)
        in[i] = bits_of(values[i]);
    size_t out_bytes = ((size_t)n * 2 + 7) / 8 * 8;
    ew_write(&r, A_ADDR, in, (size_t)n * 4);
    uint32_t first[W], count[W], words[W][16];
    uneven_shares(n / 4, first, count);
    for (unsigned w = 0; w < W; w++) {
        words[w][CAST_V_IN] = A_ADDR + first[w] * 16;
        words[w][CAST_V_OUT] = C_ADDR + first[w] * 8;
        words[w][CAST_V_N] = count[w] * 4 + (w == W - 1 ? n % 4 : 0);
    }
    ew_records(&r, words, CAST_V_WORDS);
    uint64_t cycles = ew_go(&r) ? r.cycles : 0;
    CU_ASSERT_NOT_EQUAL(cycles, 0);
    uint16_t *got = calloc(out_bytes / 2 + 4, 2);
    CU_ASSERT_FATAL(got != NULL);
    ew_read(&r, C_ADDR, got, out_bytes);
    size_t bad = 0;
    for (unsigned w = 0; w < W; w++) {
        uint32_t n_w = words[w][CAST_V_N], at = first[w] * 4;
        for (uint32_t p = 0; p < (n_w + 1) / 2; p++) {
            uint64_t rnd[2];
            fp_prng_advance(state[w], rnd);
            for (uint32_t lane = 0; lane < 2 && 2 * p + lane < n_w; lane++) {
                uint32_t i = at + 2 * p + lane;
                f16_t want = elementwise_model_f32_to_f16_sr(values[i], fp16_sr_bits(rnd, lane));
                if (got[i] != want && bad++ < 4)
                    fprintf(stderr, "\n  SR cast of %a (element %u): codelet 0x%04x, model 0x%04x", (double)values[i],
                            i, got[i], want);
            }
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    memcpy(out, got, (size_t)n * 2);
    ew_done(&r);
    free(in);
    free(got);
    return cycles;
}

static void test_cast_stochastic(void)
{
    enum { N = 6007 };
    float *v = malloc(N * sizeof *v);
    uint16_t *a = malloc(N * 2), *b = malloc(N * 2);
    CU_ASSERT_FATAL(v && a && b);
    /* 1 + (k + 1/4) ulp of f16 (2^-10): SR rounds up with probability 1/4;
     * every 7th value exact, which it keeps. */
    double err_sum = 0;
    size_t ups = 0, inexact = 0;
    for (uint32_t i = 0; i < N; i++)
        v[i] = i % 7 == 0 ? 1.0f + (float)(i % 512) * 0x1p-10f : 1.0f + ((float)(i % 512) + 0.25f) * 0x1p-10f;
    uint64_t cycles = run_cast_sr(N, 7, a, v);
    for (uint32_t i = 0; i < N; i++) {
        float lo = 1.0f + (float)(i % 512) * 0x1p-10f, got = fp16_to_f32(a[i]);
        if (i % 7 == 0) {
            CU_ASSERT_EQUAL(got, lo);
            continue;
        }
        CU_ASSERT(got == lo || got == lo + 0x1p-10f);
        ups += got != lo;
        inexact++;
        err_sum += (double)got - (double)v[i];
    }
    /* Binomial(inexact, 1/4): the count of roundings up within 5 sigma. */
    double mean = inexact / 4.0, sigma = sqrt(inexact * 0.25 * 0.75);
    CU_ASSERT(fabs((double)ups - mean) < 5 * sigma);
    /* the mean error is (ups/inexact - 1/4) ulp: near 0, where RNE's is -1/4 ulp */
    CU_ASSERT(fabs(err_sum / (double)inexact) < 5 * sigma / (double)inexact * 0x1p-10);
    /* the same seed, the same roundings; another seed, others */
    run_cast_sr(N, 7, b, v);
    CU_ASSERT_EQUAL(memcmp(a, b, N * 2), 0);
    run_cast_sr(N, 8, b, v);
    CU_ASSERT_NOT_EQUAL(memcmp(a, b, N * 2), 0);
    /* two cycles more than round-to-nearest (the worker's $FP_CTL set) per worker */
    CU_ASSERT_EQUAL(cycles, run_cast(true, N, A_ADDR, C_ADDR, 41) + 2 * 6);
    /* odd counts and values of every kind: bit-exact with the model */
    lcg_state = 99;
    for (uint32_t i = 0; i < N; i++)
        v[i] = lcg() % 4 == 0 ? rnd_any() : rnd_normal(-26, 17);
    run_cast_sr(N, 3, a, v);
    run_cast_sr(23, 4, a, v);
    run_cast_sr(1, 5, a, v);
    free(v);
    free(a);
    free(b);
}

/* Copy bytes from src to dst with shares of shares_bytes[w]; returns the
 * cycles (0 when it failed). */
static uint64_t run_copy(const uint32_t share_bytes[W], uint32_t src, uint32_t dst, uint32_t seed)
{
    uint32_t total = 0;
    for (unsigned w = 0; w < W; w++)
        total += share_bytes[w];
    size_t words = total / 4 + 32;
    uint32_t *in = calloc(words, 4), *got = calloc(words, 4);
    CU_ASSERT_FATAL(in && got);
    lcg_state = seed;
    for (size_t i = 0; i < words; i++) {
        in[i] = lcg();
        got[i] = 0xdeadbeefu;
    }
    ew_run r;
    ew_setup(&r, "vtx_copy");
    ew_write(&r, dst, got, words * 4);
    ew_write(&r, src, in, words * 4);
    uint32_t words_rec[W][16], at = 0;
    for (unsigned w = 0; w < W; w++) {
        words_rec[w][COPY_V_SRC] = src + at;
        words_rec[w][COPY_V_DST] = dst + at;
        words_rec[w][COPY_V_BYTES] = share_bytes[w];
        at += share_bytes[w];
    }
    ew_records(&r, words_rec, COPY_V_WORDS);
    uint64_t cycles = ew_go(&r) ? r.cycles : 0;
    ew_read(&r, dst, got, words * 4);
    size_t bad = 0;
    for (size_t i = 0; i < words; i++) {
        uint32_t want = i < total / 4 ? in[i] : 0xdeadbeefu;
        if (got[i] != want && bad++ < 4)
            fprintf(stderr, "\n  copy word %zu: 0x%08x, want 0x%08x", i, got[i], want);
    }
    CU_ASSERT_EQUAL(bad, 0);
    ew_done(&r);
    free(in); free(got);
    return cycles;
}

static uint64_t copy_fast_worker_cycles(uint32_t bytes)
{
    uint32_t p = bytes / 8;
    return bytes ? 37 + p + (p % 2) : 4;
}

static void test_copy(void)
{
    /* Both 8-aligned and apart (the fast loop), with odd words. */
    static const uint32_t s1[W] = {40, 24, 0, 56, 8, 16};
    uint64_t c = run_copy(s1, A_ADDR, C_ADDR, 1);
    uint64_t wc[W];
    for (unsigned w = 0; w < W; w++)
        wc[w] = copy_fast_worker_cycles(s1[w]);
    CU_ASSERT_EQUAL(hand_cycles(wc), 282);
    CU_ASSERT_EQUAL(c, 282);
    /* Shares with a last word, both 4 mod 8 (a head word), different
     * phases (word by word), close (single access), region 0. */
    static const uint32_t s2[W] = {44, 4, 0, 1004, 12, 4000};
    CU_ASSERT_NOT_EQUAL(run_copy(s2, A_ADDR, C_ADDR, 2), 0);
    static const uint32_t s3[W] = {36, 4, 0, 1000, 12, 4004};
    CU_ASSERT_NOT_EQUAL(run_copy(s3, A_ADDR + 4, C_ADDR + 4, 3), 0);
    CU_ASSERT_NOT_EQUAL(run_copy(s3, A_ADDR + 4, C_ADDR, 4), 0);
    CU_ASSERT_NOT_EQUAL(run_copy(s2, A_ADDR, A_ADDR + 5120 + 8, 5), 0);
    CU_ASSERT_NOT_EQUAL(run_copy(s2, R0_ADDR, R0_ADDR + 0x2000, 6), 0);
    static const uint32_t big[W] = {32768, 32768, 32768, 32768, 32768, 32768};
    CU_ASSERT_NOT_EQUAL(run_copy(big, 0x82000, 0xb4000, 7), 0);   /* more than one rpt block */
}

/* Zeros over shares of share_bytes[w] from dst; the words around keep
 * their values.  Returns the cycles. */
static uint64_t run_fill(const uint32_t share_bytes[W], uint32_t dst)
{
    uint32_t total = 0;
    for (unsigned w = 0; w < W; w++)
        total += share_bytes[w];
    size_t words = total / 4 + 8;
    uint32_t *got = calloc(words, 4);
    CU_ASSERT_FATAL(got != NULL);
    for (size_t i = 0; i < words; i++)
        got[i] = 0xdeadbeefu;
    ew_run r;
    ew_setup(&r, "vtx_fill");
    ew_write(&r, dst, got, words * 4);
    uint32_t words_rec[W][16], at = 0;
    for (unsigned w = 0; w < W; w++) {
        words_rec[w][FILL_V_DST] = dst + at;
        words_rec[w][FILL_V_BYTES] = share_bytes[w];
        at += share_bytes[w];
    }
    ew_records(&r, words_rec, FILL_V_WORDS);
    uint64_t cycles = ew_go(&r) ? r.cycles : 0;
    ew_read(&r, dst, got, words * 4);
    size_t bad = 0;
    for (size_t i = 0; i < words; i++)
        bad += got[i] != (i < total / 4 ? 0u : 0xdeadbeefu);
    CU_ASSERT_EQUAL(bad, 0);
    ew_done(&r);
    free(got);
    return cycles;
}

static uint64_t fill_worker_cycles(uint32_t bytes)
{
    uint32_t p = bytes / 8;
    return bytes ? 9 + (p ? 4 + p : 0) + 2 + (bytes % 8 ? 3 : 0) : 3;
}

static void test_fill(void)
{
    /* Shares of whole pairs, none, and a last word (every share starts
     * 8-byte aligned). */
    static const uint32_t s1[W] = {40, 24, 0, 8, 16, 12};
    uint64_t wc[W];
    for (unsigned w = 0; w < W; w++)
        wc[w] = fill_worker_cycles(s1[w]);
    /* W = 20, 18, 3, 16, 17, 19: workers 1..6 first issue at 6, 7, 8, 9,
     * 4, 5 and exit at 126, 115, 26, 105, 106, 119: E = 126, 129 cycles. */
    CU_ASSERT_EQUAL(hand_cycles(wc), 129);
    CU_ASSERT_EQUAL(run_fill(s1, C_ADDR), 129);
    static const uint32_t big[W] = {40000, 32768, 8, 32760, 8, 20};
    CU_ASSERT_NOT_EQUAL(run_fill(big, 0x82000), 0);   /* more than one rpt block */
}

/* ---- hand-counted cycles ----------------------------------------------------------------- */

static uint64_t exp_worker_cycles(uint32_t n)
{
    uint32_t p = n / 2;
    if (n == 0)
        return 3;
    return 18 + (p ? 6 * (uint64_t)p + 6 : 0) + (n % 2 ? 7 : 0);
}

static uint64_t add_fast_worker_cycles(uint32_t rows, uint32_t cols)
{
    uint32_t p = cols / 2;
    return rows ? 98 + p + (p % 2) + (cols % 2 ? 2 : 0) : 3;
}

static void test_hand_cycles(void)
{
    /* exp: shares of 2 * {3, 1, 0, 4, 1, 2} pairs + 1 odd element (n = 23). */
    un_case e = {ELEMENTWISE_EXP, 23, A_ADDR, C_ADDR, true, 11, 0, 0};
    un_result ur = run_unary(&e);
    uint32_t first[W], count[W];
    uneven_shares(23 / 2, first, count);
    uint64_t wc[W];
    for (unsigned w = 0; w < W; w++)
        wc[w] = exp_worker_cycles(count[w] * 2 + (w == W - 1));
    /* 11 pairs: shares 3, 1, 0, 4, 1, 2 pairs, n = 6, 2, 0, 8, 2, 5:
     * W = 42, 30, 3, 48, 30, 43; workers 1..6 first issue at 6, 7, 8, 9,
     * 4, 5 and exit at 6 + 252 = 258, 7 + 180 = 187, 8 + 18 = 26,
     * 9 + 288 = 297, 4 + 180 = 184, 5 + 258 = 263: E = 297, 300 cycles. */
    CU_ASSERT_EQUAL(hand_cycles(wc), 300);
    CU_ASSERT_EQUAL(ur.cycles, 300);
    CU_ASSERT_EQUAL(ur.mismatches, 0);

    /* add, one row per worker (rows 22: 6, 2, 0, 8, 2, 4), 37 columns. */
    bin_case b = {ELEMENTWISE_ADD, 22, 37, 160, 160, 4, A_ADDR, B_ADDR, C_ADDR, true, 12};
    bin_result br = run_binary(&b);
    uneven_shares(22, first, count);
    uint64_t bw[W];
    for (unsigned w = 0; w < W; w++) {
        /* Every row: dispatch 70 + loop; the entry 8 once. */
        uint64_t per_row = add_fast_worker_cycles(1, 37) - 8;
        bw[w] = count[w] ? 8 + count[w] * per_row : 3;
    }
    printf("\n    add 22 x 37: %llu cycles (hand %llu)\n", (unsigned long long)br.cycles,
           (unsigned long long)hand_cycles(bw));
    CU_ASSERT_EQUAL(br.cycles, hand_cycles(bw));
    CU_ASSERT_EQUAL(br.mismatches, 0);
}

/* ---- floor and ceil -------------------------------------------------------------------- */

/* ONNX Floor and Ceil on the edge values (elementwise.h): x, floor, ceil. */
static const uint32_t floor_ceil_edges[][3] = {
    {0x00000000u, 0x00000000u, 0x00000000u},   /* +0 */
    {0x80000000u, 0x80000000u, 0x80000000u},   /* -0 stays -0 */
    {0x3f000000u, 0x00000000u, 0x3f800000u},   /* 0.5: +0, 1 */
    {0xbf000000u, 0xbf800000u, 0x80000000u},   /* -0.5: -1, -0 */
    {0x3fc00000u, 0x3f800000u, 0x40000000u},   /* 1.5: 1, 2 (a tie f32int rounds up) */
    {0xbfc00000u, 0xc0000000u, 0xbf800000u},   /* -1.5: -2, -1 */
    {0x40200000u, 0x40000000u, 0x40400000u},   /* 2.5: 2, 3 (a tie f32int rounds down) */
    {0xc0200000u, 0xc0400000u, 0xc0000000u},   /* -2.5: -3, -2 */
    {0x3f7fffffu, 0x00000000u, 0x3f800000u},   /* 1 - 2^-24 */
    {0xbf7fffffu, 0xbf800000u, 0x80000000u},
    {0x00800000u, 0x00000000u, 0x3f800000u},   /* 2^-126 */
    {0x80800000u, 0xbf800000u, 0x80000000u},
    {0x4affffffu, 0x4afffffeu, 0x4b000000u},   /* 2^23 - 0.5 */
    {0xcaffffffu, 0xcb000000u, 0xcafffffeu},
    {0x4b000000u, 0x4b000000u, 0x4b000000u},   /* 2^23 and above: integers */
    {0xcb000001u, 0xcb000001u, 0xcb000001u},
    {0x4b800001u, 0x4b800001u, 0x4b800001u},   /* 2^24 + 2 */
    {0x7f7fffffu, 0x7f7fffffu, 0x7f7fffffu},   /* largest finite */
    {0xff7fffffu, 0xff7fffffu, 0xff7fffffu},
    {0x7f800000u, 0x7f800000u, 0x7f800000u},   /* ±inf */
    {0xff800000u, 0xff800000u, 0xff800000u},
    {0xc0400000u, 0xc0400000u, 0xc0400000u},   /* -3 */
    {0x3f800000u, 0x3f800000u, 0x3f800000u},   /* 1 */
    {0x7fc00000u, FP32_TILE_QNAN_BITS, FP32_TILE_QNAN_BITS},   /* NaNs: the tile's quiet NaN */
    {0xffc00001u, FP32_TILE_QNAN_BITS, FP32_TILE_QNAN_BITS},
    {0x7f800001u, FP32_TILE_QNAN_BITS, FP32_TILE_QNAN_BITS},   /* signalling */
    {0x00000001u, 0x00000000u, 0x00000000u},   /* denormals read as ±0 */
    {0x80000001u, 0x80000000u, 0x80000000u},
    {0x807fffffu, 0x80000000u, 0x80000000u},
};
#define N_EDGES (sizeof floor_ceil_edges / sizeof floor_ceil_edges[0])

/* The edge values through the model and through the codelet (worker 1
 * gets them all: an odd count, so the odd-element path runs too). */
static void test_floor_ceil_edges(void)
{
    for (int ceil_fn = 0; ceil_fn <= 1; ceil_fn++) {
        enum elementwise_unary_fn fn = ceil_fn ? ELEMENTWISE_CEIL : ELEMENTWISE_FLOOR;
        float in[N_EDGES], got[N_EDGES];
        CU_ASSERT_EQUAL(N_EDGES % 2, 1);
        for (size_t i = 0; i < N_EDGES; i++) {
            in[i] = f32_of_bits(floor_ceil_edges[i][0]);
            uint32_t want = floor_ceil_edges[i][1 + ceil_fn];
            uint32_t model = bits_of(elementwise_model_unary(fn, in[i], 0, 0));
            if (model != want)
                fprintf(stderr, "\n  model %s(0x%08x) = 0x%08x, want 0x%08x", unary_name[fn],
                        floor_ceil_edges[i][0], model, want);
            CU_ASSERT_EQUAL(model, want);
        }
        ew_run r;
        ew_setup(&r, "vtx_unary_f32");
        ew_write(&r, A_ADDR, in, sizeof in);
        uint32_t words[W][16];
        memset(words, 0, sizeof words);
        words[0][UNARY_F32_V_IN] = A_ADDR;
        words[0][UNARY_F32_V_OUT] = C_ADDR;
        words[0][UNARY_F32_V_N] = (uint32_t)N_EDGES;
        for (unsigned w = 0; w < W; w++)
            words[w][UNARY_F32_V_FN] = fn;
        ew_records(&r, words, UNARY_F32_V_WORDS);
        CU_ASSERT_TRUE(ew_go(&r));
        ew_read(&r, C_ADDR, got, N_EDGES * 4);
        for (size_t i = 0; i < N_EDGES; i++) {
            if (bits_of(got[i]) != floor_ceil_edges[i][1 + ceil_fn])
                fprintf(stderr, "\n  codelet %s(0x%08x) = 0x%08x, want 0x%08x", unary_name[fn],
                        floor_ceil_edges[i][0], bits_of(got[i]), floor_ceil_edges[i][1 + ceil_fn]);
            CU_ASSERT_EQUAL(bits_of(got[i]), floor_ceil_edges[i][1 + ceil_fn]);
        }
        /* NaN inputs set the invalid flag; worker 2 (no elements) has none. */
        CU_ASSERT_NOT_EQUAL(r.t->s.ctx[1].csr[ISA_CSR_FP_STS] & FP_EXC_INV, 0);
        CU_ASSERT_EQUAL(r.t->s.ctx[2].csr[ISA_CSR_FP_STS], 0);
        ew_done(&r);
    }
}

/* W of floor (8 bundles a pair) and ceil (10, and 2 to load -1): the exp
 * count at the top with the body's length. */
static uint64_t floor_ceil_worker_cycles(bool ceil_fn, uint32_t n)
{
    uint64_t body = ceil_fn ? 10 : 8, p = n / 2;
    if (n == 0)
        return 3;
    return 18 + (ceil_fn ? 2 : 0) + (p ? body * p + 6 : 0) + (n % 2 ? body + 1 : 0);
}

static void test_floor_ceil_cycles(void)
{
    for (int ceil_fn = 0; ceil_fn <= 1; ceil_fn++) {
        un_case c = {ceil_fn ? ELEMENTWISE_CEIL : ELEMENTWISE_FLOOR, 23, A_ADDR, C_ADDR, true, 13, 0, 0};
        un_result ur = run_unary(&c);
        uint32_t first[W], count[W];
        uneven_shares(23 / 2, first, count);
        uint64_t wc[W];
        for (unsigned w = 0; w < W; w++)
            wc[w] = floor_ceil_worker_cycles(ceil_fn, count[w] * 2 + (w == W - 1));
        /* floor: n = 6, 2, 0, 8, 2, 5: W = 48, 32, 3, 56, 32, 49; workers
         * 1..6 first issue at 6, 7, 8, 9, 4, 5: the last exit 9 + 336 =
         * 345, 348 cycles.  ceil: W = 56, 36, 3, 66, 36, 57: 9 + 396 = 405,
         * 408 cycles. */
        CU_ASSERT_EQUAL(hand_cycles(wc), ceil_fn ? 408 : 348);
        CU_ASSERT_EQUAL(ur.cycles, hand_cycles(wc));
        CU_ASSERT_EQUAL(ur.mismatches, 0);
        CU_ASSERT_EQUAL(ur.over_bound, 0);
    }
}

/* ---- per-element cost --------------------------------------------------------------------- */

static void test_per_element_cost(void)
{
    const uint32_t n = 24000;
    even_split = true;
    printf("\n    tile cycles per element, %u elements over six workers (GC200):\n", n);
    for (unsigned op = 0; op < ELEMENTWISE_BINARY_OPS; op++) {
        bin_case c = {op, 6, n / 6, n / 6 * 4, n / 6 * 4, 4, A_ADDR, B_ADDR, C_ADDR, true, 77};
        bin_result r = run_binary(&c);
        bin_case b = {op, 6, n / 6, n / 6 * 4, 0, 0, A_ADDR, B_ADDR, C_ADDR, true, 78};
        bin_result rb = run_binary(&b);
        printf("      binary %-4s  contiguous %.3f  scalar %.3f\n", binary_name[op], (double)r.cycles / n,
               (double)rb.cycles / n);
        CU_ASSERT_EQUAL(r.mismatches + rb.mismatches, 0);
        if (op < ELEMENTWISE_BINARY_V2_OPS) {
            /* One row of 4000 a worker: 2000 loop bundles and 98 more
             * (row set-up with its three apart tests, fill, exit), W =
             * 2098: 0.5 + 6 * 98 / 24000 plus the start and end. */
            uint64_t wc[W];
            for (unsigned w = 0; w < W; w++)
                wc[w] = add_fast_worker_cycles(1, n / 6);
            CU_ASSERT_EQUAL(r.cycles, hand_cycles(wc));
            CU_ASSERT_TRUE((double)rb.cycles / n < 0.52);
        }
    }
    for (unsigned fn = 0; fn < ELEMENTWISE_UNARY_FNS; fn++) {
        un_case c = {fn, n, A_ADDR, C_ADDR, true, 79, 1.5f, 0.25f};
        un_result r = run_unary(&c);
        printf("      unary %-11s %.3f\n", unary_name[fn], (double)r.cycles / n);
        CU_ASSERT_EQUAL(r.mismatches, 0);
    }
    uint64_t to16 = run_cast(true, n, A_ADDR, C_ADDR, 81), to32 = run_cast(false, n, A_ADDR, C_ADDR, 82);
    printf("      cast f32->f16 %.3f  f16->f32 %.3f\n", (double)to16 / n, (double)to32 / n);
    uint32_t shares[W];
    for (unsigned w = 0; w < W; w++)
        shares[w] = n * 4 / W;
    uint64_t copy = run_copy(shares, A_ADDR, C_ADDR, 83);
    printf("      copy          %.3f per 4 bytes\n", (double)copy / n);
    CU_ASSERT_TRUE(copy > 0 && (double)copy / n < 0.52);   /* one bundle per 8 bytes: 0.5 */
    even_split = false;
}

/* ---- bad records -------------------------------------------------------------------------- */

static void test_bad_op(void)
{
    ew_run r;
    ew_setup(&r, "vtx_unary_f32");
    uint32_t words[W][16];
    memset(words, 0, sizeof words);
    words[1][UNARY_F32_V_IN] = A_ADDR;
    words[1][UNARY_F32_V_OUT] = C_ADDR;
    words[1][UNARY_F32_V_N] = 4;
    words[1][UNARY_F32_V_FN] = ELEMENTWISE_UNARY_FNS;
    ew_records(&r, words, UNARY_F32_V_WORDS);
    CU_ASSERT_FALSE(ew_go(&r));
    CU_ASSERT_EQUAL(r.t->s.trap_code, ELEMENTWISE_TRAP_BAD_OP);
    ew_done(&r);
}

/* ---- one record for the six workers ----------------------------------------------------- */

/* Words of got that differ from model in their bits. */
static size_t bit_mismatches(const float *got, const float *model, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += bits_of(got[i]) != bits_of(model[i]);
    return bad;
}

/* The inputs of a binary split case: in0 and in1 random, the output's
 * words a pattern the codelet must overwrite exactly where it writes. */
static void binary_split_inputs(float *in0, float *got, size_t n, float *in1, size_t n1)
{
    for (size_t i = 0; i < n; i++) {
        in0[i] = rnd_normal(-20, 20);
        got[i] = f32_of_bits(0x7fbadbadu);
    }
    for (size_t i = 0; i < n1; i++)
        in1[i] = rnd_normal(-20, 20);
}

/* The split codelets on one record (vertex step 0): values bit for bit the
 * model's, every worker's share [w chunk, (w + 1) chunk) cut at the count,
 * and cycles the plain codelet's for that share plus the split's own
 * issues (elementwise.h): 15 for binary, 12 for unary (10 for a worker
 * left without elements). */
static void split_binary_case(enum elementwise_binary_op op, uint32_t cols, uint32_t col_step, bool in_place)
{
    uint32_t in0_addr = A_ADDR, out_addr = in_place ? A_ADDR : C_ADDR;
    size_t n = cols + 16, n1 = (size_t)(cols ? cols - 1 : 0) * (col_step / 4) + 16;
    float *in0 = calloc(n, 4), *in1 = calloc(n1, 4), *got = calloc(n, 4), *model = calloc(n, 4);
    CU_ASSERT_FATAL(in0 && in1 && got && model);
    lcg_state = 300 + cols;
    binary_split_inputs(in0, got, n, in1, n1);
    ew_run r;
    ew_setup_step(&r, "vtx_binary_f32_split", 0);
    ew_write(&r, B_ADDR, in1, n1 * 4);
    if (!in_place)
        ew_write(&r, out_addr, got, n * 4);
    ew_write(&r, in0_addr, in0, n * 4);
    uint32_t chunk = ((cols + 1) / 2 + W - 1) / W * 2, words[W][16] = { { 0 } };
    uint32_t *v = words[0];
    v[BINARY_F32_V_IN0] = in0_addr;
    v[BINARY_F32_V_IN1] = B_ADDR;
    v[BINARY_F32_V_OUT] = out_addr;
    v[BINARY_F32_V_ROWS] = 1;
    v[BINARY_F32_V_COLS] = cols;
    v[BINARY_F32_V_ROW_STEP] = cols * 4;
    v[BINARY_F32_V_IN1_COL_STEP] = col_step;
    v[BINARY_F32_V_OP] = op;
    v[BINARY_F32_SPLIT_V_CHUNK] = chunk;
    ew_write(&r, REC_ADDR, v, BINARY_F32_SPLIT_V_WORDS * 4);
    CU_ASSERT_TRUE_FATAL(ew_go(&r));
    ew_read(&r, out_addr, got, n * 4);
    for (size_t i = 0; i < n; i++)
        model[i] = in_place ? in0[i] : f32_of_bits(0x7fbadbadu);
    elementwise_model_binary_f32(op, in0, in1, model, 1, cols, cols * 4, 0, col_step);
    CU_ASSERT_EQUAL(bit_mismatches(got, model, n), 0);
    if (op == ELEMENTWISE_ADD && col_step == 4 && !in_place) {
        uint64_t wc[W];
        for (unsigned w = 0; w < W; w++) {
            uint32_t lo = w * chunk < cols ? w * chunk : cols, hi = lo + chunk < cols ? lo + chunk : cols;
            wc[w] = hi > lo ? add_fast_worker_cycles(1, hi - lo) + 15 : 3 + 10;
        }
        CU_ASSERT_EQUAL(r.cycles, hand_cycles(wc));
    }
    ew_done(&r);
    free(in0); free(in1); free(got); free(model);
}

static void split_unary_case(enum elementwise_unary_fn fn, uint32_t count)
{
    size_t n = count + 16;
    float *in = calloc(n, 4), *got = calloc(n, 4), *model = calloc(n, 4);
    CU_ASSERT_FATAL(in && got && model);
    lcg_state = 500 + count;
    for (size_t i = 0; i < n; i++) {
        in[i] = unary_input(fn, true);
        got[i] = f32_of_bits(0x7fbadbadu);
    }
    ew_run r;
    ew_setup_step(&r, "vtx_unary_f32_split", 0);
    ew_write(&r, C_ADDR, got, n * 4);
    ew_write(&r, A_ADDR, in, n * 4);
    uint32_t chunk = ((count + 1) / 2 + W - 1) / W * 2, v[16] = { 0 };
    v[UNARY_F32_V_IN] = A_ADDR;
    v[UNARY_F32_V_OUT] = C_ADDR;
    v[UNARY_F32_V_N] = count;
    v[UNARY_F32_V_FN] = fn;
    v[UNARY_F32_V_A] = bits_of(1.5f);
    v[UNARY_F32_V_B] = bits_of(0.25f);
    v[UNARY_F32_SPLIT_V_CHUNK] = chunk;
    ew_write(&r, REC_ADDR, v, UNARY_F32_SPLIT_V_WORDS * 4);
    CU_ASSERT_TRUE_FATAL(ew_go(&r));
    ew_read(&r, C_ADDR, got, n * 4);
    for (size_t i = 0; i < n; i++)
        model[i] = f32_of_bits(0x7fbadbadu);
    elementwise_model_unary_f32(fn, 1.5f, 0.25f, in, model, count);
    CU_ASSERT_EQUAL(bit_mismatches(got, model, n), 0);
    if (fn == ELEMENTWISE_EXP) {
        uint64_t wc[W];
        for (unsigned w = 0; w < W; w++) {
            uint32_t lo = w * chunk < count ? w * chunk : count, hi = lo + chunk < count ? lo + chunk : count;
            wc[w] = hi > lo ? exp_worker_cycles(hi - lo) + 12 : 3 + 10;
        }
        CU_ASSERT_EQUAL(r.cycles, hand_cycles(wc));
    }
    ew_done(&r);
    free(in); free(got); free(model);
}

/* vtx_binary_f32_split_rows: rows x cols, in1 per row or broadcast down
 * the rows; rows split by the compiler's chunk.  Cycles: the plain
 * codelet's for the worker's rows plus 16 issues (10 for an idle worker). */
static void split_rows_case(enum elementwise_binary_op op, uint32_t rows, uint32_t cols, uint32_t in1_row_step,
                            uint32_t col_step)
{
    uint32_t row_step = (cols + 3) / 2 * 8;          /* a gap after each row, rows 8-byte aligned */
    size_t n = (size_t)rows * (row_step / 4) + 16;
    size_t n1 = (size_t)(rows ? rows - 1 : 0) * (in1_row_step / 4) + (size_t)cols * (col_step / 4) + 16;
    float *in0 = calloc(n, 4), *in1 = calloc(n1, 4), *got = calloc(n, 4), *model = calloc(n, 4);
    CU_ASSERT_FATAL(in0 && in1 && got && model);
    lcg_state = 700 + rows * 31 + cols;
    binary_split_inputs(in0, got, n, in1, n1);
    ew_run r;
    ew_setup_step(&r, "vtx_binary_f32_split_rows", 0);
    ew_write(&r, B_ADDR, in1, n1 * 4);
    ew_write(&r, C_ADDR, got, n * 4);
    ew_write(&r, A_ADDR, in0, n * 4);
    uint32_t chunk = (rows + W - 1) / W, v[16] = { 0 };
    v[BINARY_F32_V_IN0] = A_ADDR;
    v[BINARY_F32_V_IN1] = B_ADDR;
    v[BINARY_F32_V_OUT] = C_ADDR;
    v[BINARY_F32_V_ROWS] = rows;
    v[BINARY_F32_V_COLS] = cols;
    v[BINARY_F32_V_ROW_STEP] = row_step;
    v[BINARY_F32_V_IN1_ROW_STEP] = in1_row_step;
    v[BINARY_F32_V_IN1_COL_STEP] = col_step;
    v[BINARY_F32_V_OP] = op;
    v[BINARY_F32_SPLIT_V_CHUNK] = chunk;
    ew_write(&r, REC_ADDR, v, BINARY_F32_SPLIT_V_WORDS * 4);
    CU_ASSERT_TRUE_FATAL(ew_go(&r));
    ew_read(&r, C_ADDR, got, n * 4);
    for (size_t i = 0; i < n; i++)
        model[i] = f32_of_bits(0x7fbadbadu);
    elementwise_model_binary_f32(op, in0, in1, model, rows, cols, row_step, in1_row_step, col_step);
    CU_ASSERT_EQUAL(bit_mismatches(got, model, n), 0);
    if (op == ELEMENTWISE_ADD && col_step == 4 && cols % 2 == 0) {
        uint64_t wc[W];
        uint64_t per_row = add_fast_worker_cycles(1, cols) - 8;
        for (unsigned w = 0; w < W; w++) {
            uint32_t lo = w * chunk < rows ? w * chunk : rows, hi = lo + chunk < rows ? lo + chunk : rows;
            wc[w] = hi > lo ? 8 + (hi - lo) * per_row + 16 : 3 + 10;
        }
        CU_ASSERT_EQUAL(r.cycles, hand_cycles(wc));
    }
    ew_done(&r);
    free(in0); free(in1); free(got); free(model);
}

static void test_split_records(void)
{
    static const uint32_t sizes[] = { 1, 2, 7, 12, 23, 37, 4001 };
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        for (unsigned op = 0; op < ELEMENTWISE_BINARY_OPS; op++) {
            split_binary_case((enum elementwise_binary_op)op, sizes[k], 4, false);
            split_binary_case((enum elementwise_binary_op)op, sizes[k], 0, false);
        }
        split_binary_case(ELEMENTWISE_MUL, sizes[k], 4, true);
        split_binary_case(ELEMENTWISE_SUB, sizes[k], 8, false);
        for (unsigned fn = 0; fn < ELEMENTWISE_UNARY_FNS; fn++)
            split_unary_case((enum elementwise_unary_fn)fn, sizes[k]);
    }
    /* a worker with nothing to do, the rest with whole chunks */
    split_unary_case(ELEMENTWISE_EXP, 20);
    split_binary_case(ELEMENTWISE_ADD, 20, 4, false);
    /* by rows: per-row in1, a channel vector broadcast down the rows, a scalar */
    static const uint32_t shapes[][2] = { { 1, 8 }, { 5, 16 }, { 6, 64 }, { 13, 7 }, { 40, 64 } };
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
        for (unsigned op = 0; op < ELEMENTWISE_BINARY_OPS; op++) {
            uint32_t rows = shapes[k][0], cols = shapes[k][1];
            split_rows_case((enum elementwise_binary_op)op, rows, cols, (cols + 3) / 2 * 8, 4);
            split_rows_case((enum elementwise_binary_op)op, rows, cols, 0, 4);
            split_rows_case((enum elementwise_binary_op)op, rows, cols, 0, 0);
        }
}

/* ---- scaled add ------------------------------------------------------------------------ */

/* Worker issues of the scaled-add codelets for n elements (elementwise.h),
 * less one: hand_cycles counts a worker's exit at its first issue plus six
 * cycles for each issue after it. */
static uint64_t sa_f32_pace_issues(uint32_t n)
{
    uint32_t p = n / 2;
    return (n ? 68 + p + (p & 1) + (n & 1 ? 2 : 0) : 7) - 1;
}
static uint64_t sa_f32_single_issues(uint32_t n) { return (n ? 23 + 3 * (uint64_t)((n + 1) / 2) : 7) - 1; }
static uint64_t sa_f16_issues(uint32_t n, bool sr)
{
    return (n ? (n & 1 ? 32 : 24) + 3 * (uint64_t)((n + 1) / 2) : 7) + (sr ? 2 : 0) - 1;
}

typedef struct sa_case {
    bool f16, sr;
    uint32_t n, x, y, out;          /* tile addresses; out may be x */
    float scale;
    uint32_t seed, prng_seed;
    bool even;                      /* even shares (else uneven, zero-count records included) */
} sa_case;

/* Run one scaled add over the six workers (each an even share, the last
 * the odd element), check every element against the model bit for bit
 * (SR: each worker's PRNG steps in order); the cycles, 0 when it failed.
 * shares[] receives each worker's count. */
static uint64_t run_scaled_add(const sa_case *c, uint32_t shares[W], void *result)
{
    ew_run r;
    ew_setup(&r, c->f16 ? (c->sr ? "vtx_scaled_add_f16_sr" : "vtx_scaled_add_f16") : "vtx_scaled_add_f32");
    isa_seed_prngs(&r.t->s, c->prng_seed);
    uint64_t state[W][2];
    for (unsigned w = 0; w < W; w++)
        memcpy(state[w], r.t->s.ctx[w + 1].prng, sizeof state[w]);
    uint32_t n = c->n, xb = c->f16 ? 2 : 4;
    uint32_t *x = calloc(n + 8, 4), *y = calloc(n + 8, 4), *got = calloc(n + 8, 4);
    CU_ASSERT_FATAL(x && y && got);
    lcg_state = c->seed;
    for (uint32_t i = 0; i < n; i++) {
        y[i] = bits_of(lcg() % 3 == 0 ? rnd_any() : rnd_normal(-12, 0));
        if (c->f16)
            ((uint16_t *)x)[i] = lcg() % 16 == 0 ? (uint16_t)lcg() : elementwise_model_f32_to_f16(rnd_normal(-6, 4));
        else
            x[i] = bits_of(rnd_any());
    }
    ew_write(&r, c->x, x, (size_t)(n + 8) * xb);
    ew_write(&r, c->y, y, (size_t)n * 4 + 32);
    uint32_t first[W], count[W], words[W][16];
    even_split = c->even;
    uneven_shares(n / 2, first, count);
    even_split = false;
    for (unsigned w = 0; w < W; w++) {
        uint32_t e0 = first[w] * 2, cnt = count[w] * 2 + (w == W - 1 ? n % 2 : 0);
        words[w][SCALED_ADD_V_X] = c->x + e0 * xb;
        words[w][SCALED_ADD_V_Y] = c->y + e0 * 4;
        words[w][SCALED_ADD_V_OUT] = c->out + e0 * xb;
        words[w][SCALED_ADD_V_N] = cnt;
        words[w][SCALED_ADD_V_SCALE] = bits_of(c->scale);
        shares[w] = cnt;
    }
    ew_records(&r, words, SCALED_ADD_V_WORDS);
    uint64_t cycles = ew_go(&r) ? r.cycles : 0;
    CU_ASSERT_NOT_EQUAL(cycles, 0);
    ew_read(&r, c->out, got, (size_t)n * xb);
    size_t bad = 0;
    for (unsigned w = 0; w < W; w++) {
        uint32_t e0 = first[w] * 2, cnt = shares[w];
        uint64_t rnd[2] = { 0, 0 };
        for (uint32_t i = 0; i < cnt; i++) {
            uint32_t k = e0 + i;
            float yv = f32_of_bits(y[k]);
            bool mismatch;
            if (c->f16) {
                if (i % 2 == 0 && c->sr)
                    fp_prng_advance(state[w], rnd);
                uint32_t bits = fp16_sr_bits(rnd, i % 2);
                if (c->sr && i == cnt - 1 && cnt % 2) {      /* the odd last element, rounded again */
                    fp_prng_advance(state[w], rnd);
                    bits = fp16_sr_bits(rnd, 0);
                }
                f16_t want = elementwise_model_scaled_add_f16(((uint16_t *)x)[k], yv, c->scale, c->sr, bits);
                mismatch = ((uint16_t *)got)[k] != want;
                if (mismatch && bad < 4)
                    fprintf(stderr, "\n  f16 scaled add (n %u, sr %d) element %u of worker %u's %u: x 0x%04x y %a, codelet 0x%04x, model 0x%04x", n, c->sr, k, w, cnt,
                            ((uint16_t *)x)[k], (double)yv, ((uint16_t *)got)[k], want);
            } else {
                float want = elementwise_model_scaled_add_f32(f32_of_bits(x[k]), yv, c->scale);
                mismatch = got[k] != bits_of(want);
                if (mismatch && bad < 4)
                    fprintf(stderr, "\n  f32 scaled add element %u: codelet 0x%08x, model 0x%08x", k, got[k],
                            bits_of(want));
            }
            bad += mismatch;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    if (result)
        memcpy(result, got, (size_t)n * xb);
    ew_done(&r);
    free(x);
    free(y);
    free(got);
    return cycles;
}

static void test_scaled_add(void)
{
    static const uint32_t sizes[] = { 1, 2, 3, 7, 12, 23, 37, 101, 4001 };
    uint32_t shares[W];
    uint64_t wc[W];
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        uint32_t n = sizes[k];
        /* f32: apart in region 1 (the pace loop), in place, and y in region 0 */
        sa_case a = { false, false, n, A_ADDR, B_ADDR, C_ADDR, -0.01f, 7 + (uint32_t)k, 1, false };
        uint64_t cyc = run_scaled_add(&a, shares, NULL);
        for (unsigned w = 0; w < W; w++)
            wc[w] = sa_f32_pace_issues(shares[w]);
        CU_ASSERT_EQUAL(cyc, hand_cycles(wc));
        a.out = a.x;
        a.scale = 0.9f;
        CU_ASSERT_EQUAL(run_scaled_add(&a, shares, NULL), hand_cycles(wc));
        a.out = a.y;                /* over y: momentum's m v + g written over v */
        CU_ASSERT_EQUAL(run_scaled_add(&a, shares, NULL), hand_cycles(wc));
        a.y = R0_ADDR;
        a.scale = 1.0f;
        cyc = run_scaled_add(&a, shares, NULL);
        for (unsigned w = 0; w < W; w++)
            wc[w] = sa_f32_single_issues(shares[w]);
        CU_ASSERT_EQUAL(cyc, hand_cycles(wc));
        /* f16 data, f32 deltas: to nearest, then stochastically, in place too */
        for (int sr = 0; sr < 2; sr++) {
            sa_case h = { true, sr, n, A_ADDR, B_ADDR, sr ? A_ADDR : C_ADDR, -3e-3f, 40 + (uint32_t)k, 5, false };
            cyc = run_scaled_add(&h, shares, NULL);
            for (unsigned w = 0; w < W; w++)
                wc[w] = sa_f16_issues(shares[w], sr);
            CU_ASSERT_EQUAL(cyc, hand_cycles(wc));
        }
    }
    /* per element at 24,000 elements (even shares): 0.5, 1.5, 1.5 tile cycles */
    sa_case big = { false, false, 24000, A_ADDR, B_ADDR, C_ADDR, 0.5f, 3, 1, true };
    double pace = (double)run_scaled_add(&big, shares, NULL) / 24000;
    big.y = R0_ADDR;
    double single = (double)run_scaled_add(&big, shares, NULL) / 24000;
    sa_case bh = { true, true, 24000, A_ADDR, B_ADDR, A_ADDR, 0.5f, 3, 1, true };
    double half = (double)run_scaled_add(&bh, shares, NULL) / 24000;
    printf("\n    scaled add per element: f32 %.3f (pace), %.3f (single), f16 SR %.3f tile cycles\n", pace, single,
           half);
    CU_ASSERT(pace > 0.5 && pace < 0.52);
    CU_ASSERT(single > 1.5 && single < 1.52);
    CU_ASSERT(half > 1.5 && half < 1.52);
    /* stochastic rounding: 1 + 1/4 gap rounds up about a quarter of the time */
    enum { N = 6000 };
    sa_case q = { true, true, N, A_ADDR, B_ADDR, C_ADDR, 0x1p-12f, 1, 9, true };
    uint16_t *res = malloc(N * 2);
    CU_ASSERT_FATAL(res != NULL);
    /* x = 1.0, y = 1: each element 1 + 2^-12, a quarter of an f16 gap */
    {
        ew_run t;
        ew_setup(&t, "vtx_scaled_add_f16_sr");
        isa_seed_prngs(&t.t->s, 9);
        uint16_t *ones = malloc(N * 2 + 64);
        float *yv = malloc(N * 4 + 64);
        CU_ASSERT_FATAL(ones && yv);
        for (int i = 0; i < N + 32; i++)
            ones[i] = 0x3c00;
        for (int i = 0; i < N + 16; i++)
            yv[i] = 1.0f;
        ew_write(&t, q.x, ones, N * 2 + 64);
        ew_write(&t, q.y, yv, N * 4 + 64);
        uint32_t words[W][16];
        for (unsigned w = 0; w < W; w++) {
            words[w][SCALED_ADD_V_X] = q.x + w * (N / W) * 2;
            words[w][SCALED_ADD_V_Y] = q.y + w * (N / W) * 4;
            words[w][SCALED_ADD_V_OUT] = q.out + w * (N / W) * 2;
            words[w][SCALED_ADD_V_N] = N / W;
            words[w][SCALED_ADD_V_SCALE] = bits_of(q.scale);
        }
        ew_records(&t, words, SCALED_ADD_V_WORDS);
        CU_ASSERT_TRUE(ew_go(&t));
        ew_read(&t, q.out, res, N * 2);
        int ups = 0, other = 0;
        for (int i = 0; i < N; i++) {
            ups += res[i] == 0x3c01;
            other += res[i] != 0x3c00 && res[i] != 0x3c01;
        }
        CU_ASSERT_EQUAL(other, 0);
        double sigma = sqrt(N * 0.25 * 0.75);
        CU_ASSERT(fabs(ups - N / 4.0) < 5 * sigma);
        ew_done(&t);
        free(ones);
        free(yv);
    }
    free(res);
}

void test_register(void)
{
    ADD_SUITE("codelets_elementwise",
              {"model on hand-worked values", test_model_values},
              {"binary: every op on every loop", test_binary_paths},
              {"binary: in place", test_binary_in_place},
              {"unary: every function, placements", test_unary_functions},
              {"casts f32 <-> f16", test_casts},
              {"cast f32 -> f16 rounded stochastically", test_cast_stochastic},
              {"scaled add: f32, f16 data with f32 deltas, stochastic rounding", test_scaled_add},
              {"copy", test_copy},
              {"fill", test_fill},
              {"hand-counted cycles", test_hand_cycles},
              {"per-element cost at 24,000 elements", test_per_element_cost},
              {"floor and ceil: edge values", test_floor_ceil_edges},
              {"floor and ceil: hand-counted cycles", test_floor_ceil_cycles},
              {"op out of range traps", test_bad_op},
              {"one record for the six workers (split codelets)", test_split_records});
}
