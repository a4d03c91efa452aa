/*
 * test_codelets_pool.c — the pooling codelets (workloads/codelets/pool.S)
 * assembled with a small supervisor (runall on six records, sync 0, exitz)
 * and run on one simulated GC200 tile:
 *   (a) outputs equal the bit-exact models (pool_model.c) bit for bit:
 *       random inputs of mixed magnitudes, windows clipped on every side,
 *       left-over channel pairs (chans % 8), one-column kernels, channels
 *       outside [0, chans) and the tensors' slack filled with signalling
 *       NaNs (never read: $FP_STS stays clear; never written: they keep
 *       their bits);
 *   (b) outputs are within a derived tolerance of a double-precision
 *       reference (max: exact; average: at reference_bound);
 *   (c) cycle counts equal the hand count (pool_w, from the cycle table in
 *       pool.S; the small worked example below by hand);
 *   (d) records with no rows or no channels do nothing;
 *   (e) windows with no position inside the input give -inf and +0;
 *   (f) odd channel counts: C = 1, 3, 5, 13 (every channel alone, records
 *       whose in and out are 4 mod 8), C even with chans odd (the last
 *       channel alone, then blocks and pairs), bit for bit, with exact
 *       cycles (pool_w's modes 1 and 2) and a worked example for C = 1;
 * and ResNet-50's two pools and two odd-channel images, whose cycles per
 * element pool.S quotes.
 *
 * Cycle counts (conventions of tests/test_codelets_rowwise.c): runall at
 * T = 3, worker k (1..6) first issues at cycles 4..9 for workers 5, 6, 1,
 * 2, 3, 4; a worker whose issues before its exitz cost W worker cycles
 * exits at first + 6 W; the run takes E + 3 cycles, E the last exit.
 *
 * Worked example (test_hand_cycles): max pool, H = W = 3, C = chans = 8,
 * 2x2 kernel, stride 1, no padding: OH = OW = 2; worker 1 gets output row
 * 0, the others nothing (W = 5 each: 3 loads, cmpult, brz).  Worker 1:
 * entry 18; the row 17; pixel 0: 24 of set-up (a 2x2 window: nkw = 2 != W,
 * not flattened), one block 8 + 2 (5 * 2 + 2) = 32, next 5; pixel 1: 24 +
 * 32 + 9 (the row's last).  W = 18 + 17 + 61 + 65 = 161; first issue at 6:
 * exits at 6 + 966 = 972: 975 cycles.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "isa/fparith.h"
#include "sim/program/machine.h"
#include "sim/engine/tile.h"
#include "test_util.h"
#include "workloads/codelets/pool.h"

#define WORKERS 6u
#define RUNALL_CYCLE 3u
#define REC_ADDR 0xE7000u        /* the six records, at the top of tile memory */
#define DATA_ADDR 0x50000u       /* tensors from here (past the code) */
#define SLACK_BYTES 64u
#define SNAN_BITS 0x7fa00001u

static const double U = 0x1p-24;

static uint32_t lcg_state;
static double rnd_unit(void)    /* [-1, 1) */
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return (double)((int32_t)(lcg_state >> 8) - (1 << 23)) / (double)(1 << 23);
}

static uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static float float_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* ---- the tile ------------------------------------------------------------------ */

typedef struct rig {
    ipu_exe *e;
    ipu_tile *t;
    uint32_t next;
} rig;

typedef struct run_result {
    bool ran;
    enum tile_stop stop;
    uint64_t cycles;
    char fault[1024];
    uint32_t fp_sts;
} run_result;

static bool rig_open_words(rig *r, const char *entry, uint32_t words);

static bool rig_open(rig *r, const char *entry)
{
    return rig_open_words(r, entry, POOL_V_WORDS);
}

/* The rig with records of `words` words. */
static bool rig_open_words(rig *r, const char *entry, uint32_t words)
{
    char text[512], err[4096];
    snprintf(text, sizeof text,
             ".include \"workloads/codelets/pool.S\"\n"
             "    .align 8\n    .globl __supervisor\n    .supervisor\n__supervisor:\n"
             "    setzi $m5, %u\n    setzi $m6, %u\n    setzi $m7, %s\n"
             "    runall $m7, $m5, $m6\n    sync 0\n    exitz $mzero\n",
             REC_ADDR, words * 4u, entry);
    const char *dirs[] = {IPUSIM_SOURCE_DIR};
    asm_options opt = {.include_dirs = dirs, .n_include_dirs = 1};
    memset(r, 0, sizeof *r);
    r->e = asm_assemble_string(text, "pool_test.S", &opt, err, sizeof err);
    if (!r->e) {
        fprintf(stderr, "\nassembly failed:\n%s\n", err);
        return false;
    }
    machine mach;
    r->t = calloc(1, sizeof *r->t);
    if (!r->t || !machine_preset("gc200", &mach, err, sizeof err) || !tile_init(r->t, &mach, 0)
        || !tile_load(r->t, r->e, err, sizeof err)) {
        fprintf(stderr, "\nset-up failed: %s\n", err);
        return false;
    }
    /* The code and its constants lie below the tensors. */
    for (size_t i = 0; i < r->e->n_sections; i++)
        CU_ASSERT_TRUE(r->e->sections[i].addr + r->e->sections[i].size <= DATA_ADDR);
    r->next = DATA_ADDR;
    return true;
}

static void rig_close(rig *r)
{
    if (r->t) {
        tile_free(r->t);
        free(r->t);
    }
    exe_free(r->e);
}

static uint32_t rig_alloc(rig *r, size_t bytes)
{
    uint32_t addr = r->next;
    size_t span = (bytes + SLACK_BYTES + 7u) & ~(size_t)7u;
    for (size_t i = 0; i < span; i += 4)
        tmem_store32(&r->t->s.mem, addr + (uint32_t)i, SNAN_BITS);
    r->next += (uint32_t)span;
    CU_ASSERT(r->next <= REC_ADDR);
    return addr;
}

static void rig_write(rig *r, uint32_t addr, const void *src, size_t bytes)
{
    CU_ASSERT_EQUAL(tmem_write_bytes(&r->t->s.mem, addr, src, bytes), TMEM_OK);
}

static void rig_read(rig *r, uint32_t addr, void *dst, size_t bytes)
{
    CU_ASSERT_EQUAL(tmem_read_bytes(&r->t->s.mem, addr, dst, bytes), TMEM_OK);
}

static run_result rig_run_words(rig *r, const uint32_t *records, uint32_t words);

static run_result rig_run(rig *r, const uint32_t *records)
{
    return rig_run_words(r, records, POOL_V_WORDS);
}

/* The six records of `words` words each, run. */
static run_result rig_run_words(rig *r, const uint32_t *records, uint32_t words)
{
    run_result res;
    memset(&res, 0, sizeof res);
    rig_write(r, REC_ADDR, records, (size_t)WORKERS * words * 4);
    res.stop = tile_run_alone(r->t, 200000000);
    res.ran = res.stop == TILE_STOP_END;
    res.cycles = r->t->s.cycle;
    if (res.stop == TILE_STOP_FAULT)
        tile_describe_fault(r->t, r->e, res.fault, sizeof res.fault);
    for (unsigned k = 1; k <= WORKERS; k++)
        res.fp_sts |= r->t->s.ctx[k].csr[ISA_CSR_FP_STS];
    return res;
}

static uint64_t hand_cycles(const uint64_t w[WORKERS])
{
    const uint64_t t = RUNALL_CYCLE;
    uint64_t last = 0;
    for (unsigned k = 0; k < WORKERS; k++) {
        uint64_t first = t + 1 + (k + WORKERS - (t + 1) % WORKERS) % WORKERS;
        uint64_t exit_cycle = first + WORKERS * w[k];
        if (exit_cycle > last)
            last = exit_cycle;
    }
    return last + 3;
}

/* ---- the hand count (the table in pool.S, read from its code) -------------- */

/* The channel work of the paired loops on k channels (k even), after the
 * and / brnz that choose between a block and a left-over pair. */
static uint64_t pairs_w(uint32_t k, uint64_t rows, uint64_t cols, uint64_t a)
{
    uint64_t w = 0, blocks = k / 8, tail = (k % 8) / 2;
    for (uint64_t i = 0; i < tail; i++)
        w += 3 + rows * (2 * cols + 2) + 3 + a + (i + 1 == tail) * (1 + (blocks == 0));
    return w + blocks * (8 + a + rows * (5 * cols + 2));
}

static uint64_t pool_w(const pool_shape *s, uint32_t oh0, uint32_t oh1, uint32_t chans, bool avg, bool cip)
{
    if (oh1 <= oh0)
        return 5;
    if (!chans)
        return 6;
    /* mode 0: C and chans even; 1: C even, chans odd; 2: C odd */
    unsigned mode = s->c % 2 ? 2 : chans % 2;
    uint64_t w = (avg ? 23 : 18) + (mode == 1 ? 3 : mode == 2 ? 2 : 0);
    uint64_t a = avg;
    for (uint32_t oh = oh0; oh < oh1; oh++) {
        w += 17;
        for (uint32_t ow = 0; ow < s->ow; ow++) {
            int64_t hs = (int64_t)oh * s->sh - s->pt, ws = (int64_t)ow * s->sw - s->pl;
            int64_t nkh = (hs + s->kh < s->h ? hs + s->kh : s->h) - (hs > 0 ? hs : 0);
            int64_t nkw = (ws + s->kw < s->w ? ws + s->kw : s->w) - (ws > 0 ? ws : 0);
            if (nkw <= 0 || nkh <= 0) {
                w += (nkw <= 0 ? 17 : 18) + 2 + 3 * (uint64_t)(mode ? chans : chans / 2) + 1;
            } else {
                w += 20;
                uint64_t rows = (uint64_t)nkh, cols = (uint64_t)nkw;
                if (nkw == (int64_t)s->w) {
                    w += 3;
                    if (s->ow == 1) {
                        w += 5;
                        if (rows * cols <= 4096) {
                            w += 2;
                            cols *= rows;
                            rows = 1;
                        }
                    }
                }
                /* to the channels' and / brnz (included) */
                w += avg ? (cip ? 6 : 14) : 4;
                uint64_t single = 3 + rows * (2 * cols + 2) + a + 1;
                if (mode == 0)
                    w += pairs_w(chans, rows, cols, a);
                else if (mode == 1)
                    w += -2 + single + 1 + (chans > 1 ? 2 + pairs_w(chans - 1, rows, cols, a) : 0);
                else
                    w += -2 + chans * (single + 1);
            }
            w += 5 + (ow + 1 == s->ow ? 4 : 0);
        }
    }
    return w;
}

/* ---- one case ------------------------------------------------------------------- */

typedef struct pool_case {
    pool_shape s;
    bool avg, cip;
    uint32_t oh0[WORKERS], oh1[WORKERS];   /* rows of each worker */
    uint32_t c0[WORKERS], chans[WORKERS];  /* channels of each worker */
    uint32_t placement;                    /* first tensor address (0: DATA_ADDR) */
    unsigned magnitudes;                   /* pixels scaled by 10^(0 .. magnitudes-1) */
} pool_case;

typedef struct case_result {
    run_result run;
    uint64_t hand;
    size_t bit_mismatches, over;
    double ratio;
} case_result;

/* Rows split between the workers, every worker all of [0, chans). */
static void split_rows(pool_case *pc, uint32_t chans)
{
    uint32_t row = 0;
    for (unsigned k = 0; k < WORKERS; k++) {
        uint32_t n = pc->s.oh / WORKERS + (k < pc->s.oh % WORKERS);
        pc->oh0[k] = row;
        pc->oh1[k] = row + n;
        pc->c0[k] = 0;
        pc->chans[k] = chans;
        row += n;
    }
}

/* Channels split between the workers in blocks of 8, every worker all rows. */
static void split_channels(pool_case *pc)
{
    uint32_t blocks = pc->s.c / 8, c = 0;
    for (unsigned k = 0; k < WORKERS; k++) {
        uint32_t n = (blocks / WORKERS + (k < blocks % WORKERS)) * 8;
        if (k == WORKERS - 1)
            n = pc->s.c - c;
        pc->oh0[k] = 0;
        pc->oh1[k] = pc->s.oh;
        pc->c0[k] = c;
        pc->chans[k] = n;
        c += n;
    }
}

/* Tolerance of the average against the exact mean in double: the sum of n
 * terms from +0, one at a time (the first addition exact): (n - 1) u
 * sum|x|; r = fl(1 / count): u; the product: u.  Doubled for second-order
 * terms: 2 (n + 1) u sum|x| / count.  The max is exact (bound 0). */
static double reference(const float *in, const pool_shape *s, uint32_t oh, uint32_t ow, uint32_t c, bool avg,
                        bool cip, double *bound)
{
    int64_t ih0, ih1, iw0, iw1;
    pool_window(s, oh, ow, &ih0, &ih1, &iw0, &iw1);
    *bound = 0;
    if (ih1 <= ih0 || iw1 <= iw0)
        return avg ? 0.0 : -INFINITY;
    double m = -INFINITY, sum = 0, abs_sum = 0;
    for (int64_t ih = ih0; ih < ih1; ih++)
        for (int64_t iw = iw0; iw < iw1; iw++) {
            double x = in[((size_t)ih * s->w + (size_t)iw) * s->c + c];
            m = x > m ? x : m;
            sum += x;
            abs_sum += fabs(x);
        }
    if (!avg)
        return m;
    double n = (double)((ih1 - ih0) * (iw1 - iw0));
    double count = cip ? (double)s->kh * s->kw : n;
    *bound = 2 * (n + 1) * U * abs_sum / count;
    return sum / count;
}

static case_result pool_run(const pool_case *pc, uint32_t seed)
{
    case_result cr;
    memset(&cr, 0, sizeof cr);
    const pool_shape *s = &pc->s;
    rig r;
    if (!rig_open(&r, pc->avg ? "vtx_avgpool_nhwc_f32" : "vtx_maxpool_nhwc_f32")) {
        CU_FAIL("rig");
        rig_close(&r);
        return cr;
    }
    if (pc->placement)
        r.next = pc->placement;
    lcg_state = seed;
    size_t ni = (size_t)s->h * s->w * s->c, no = (size_t)s->oh * s->ow * s->c;
    float *x = malloc(ni * 4 + 4), *got = malloc(no * 4 + 4), *model = malloc(no * 4 + 4);
    /* Channels no worker computes stay signalling NaNs. */
    bool *used = calloc(s->c + 1, 1);
    for (unsigned k = 0; k < WORKERS; k++)
        for (uint32_t c = pc->c0[k]; c < pc->c0[k] + pc->chans[k]; c++)
            used[c] = true;
    unsigned mags = pc->magnitudes ? pc->magnitudes : 1;
    for (size_t i = 0; i < ni; i++) {
        double mag = pow(10.0, (double)((i / s->c * 7 + i) % mags));
        x[i] = used[i % s->c] ? (float)(mag * rnd_unit()) : float_of(SNAN_BITS);
    }
    for (size_t i = 0; i < no; i++)
        got[i] = model[i] = float_of(SNAN_BITS);
    uint32_t in = rig_alloc(&r, ni * 4), out = rig_alloc(&r, no * 4);
    rig_write(&r, in, x, ni * 4);
    uint32_t rec[WORKERS * POOL_V_WORDS];
    uint64_t w[WORKERS];
    for (unsigned k = 0; k < WORKERS; k++) {
        uint32_t *v = rec + k * POOL_V_WORDS;
        v[POOL_V_IN] = in + pc->c0[k] * 4;
        v[POOL_V_OUT] = out + pc->c0[k] * 4;
        v[POOL_V_H] = s->h;
        v[POOL_V_W] = s->w;
        v[POOL_V_C] = s->c;
        v[POOL_V_KH] = s->kh;
        v[POOL_V_KW] = s->kw;
        v[POOL_V_SH] = s->sh;
        v[POOL_V_SW] = s->sw;
        v[POOL_V_PT] = s->pt;
        v[POOL_V_PL] = s->pl;
        v[POOL_V_OH] = s->oh;
        v[POOL_V_OW] = s->ow;
        v[POOL_V_OH0] = pc->oh0[k];
        v[POOL_V_OH1] = pc->oh1[k];
        v[POOL_V_COUNT_INCLUDE_PAD] = pc->cip;
        v[POOL_V_CHANS] = pc->chans[k];
        w[k] = pool_w(s, pc->oh0[k], pc->oh1[k], pc->chans[k], pc->avg, pc->cip);
    }
    cr.run = rig_run(&r, rec);
    cr.hand = hand_cycles(w);
    if (cr.run.ran) {
        rig_read(&r, out, got, no * 4);
        for (unsigned k = 0; k < WORKERS; k++) {
            if (pc->avg)
                pool_model_avgpool_nhwc(x + pc->c0[k], model + pc->c0[k], s, pc->oh0[k], pc->oh1[k], pc->chans[k],
                                        pc->cip);
            else
                pool_model_maxpool_nhwc(x + pc->c0[k], model + pc->c0[k], s, pc->oh0[k], pc->oh1[k], pc->chans[k]);
        }
        double worst = 0;
        for (size_t i = 0; i < no; i++) {
            if (bits_of(got[i]) != bits_of(model[i]) && cr.bit_mismatches++ < 4)
                fprintf(stderr, "\n  out[%zu]: codelet 0x%08x, model 0x%08x", i, bits_of(got[i]), bits_of(model[i]));
            uint32_t c = (uint32_t)(i % s->c), pix = (uint32_t)(i / s->c), oh = pix / s->ow;
            bool computed = false;
            for (unsigned k = 0; k < WORKERS; k++)
                computed |= oh >= pc->oh0[k] && oh < pc->oh1[k] && c >= pc->c0[k] && c < pc->c0[k] + pc->chans[k];
            if (!computed)
                continue;
            double bound, ref = reference(x, s, oh, pix % s->ow, c, pc->avg, pc->cip, &bound);
            double e = got[i] == ref ? 0 : fabs((double)got[i] - ref);
            double q = bound > 0 ? e / bound : (e > 0 ? INFINITY : 0);
            worst = q > worst ? q : worst;
            if (!(e <= bound) && cr.over++ < 4)
                fprintf(stderr, "\n  out[%zu]: got %.9g, reference %.9g, bound %.3g", i, (double)got[i], ref, bound);
        }
        cr.ratio = worst;
    } else {
        fprintf(stderr, "\npool did not end: %s\n", cr.run.fault);
    }
    free(x); free(got); free(model); free(used);
    rig_close(&r);
    return cr;
}

static void check_case(const case_result *cr)
{
    CU_ASSERT_TRUE(cr->run.ran);
    CU_ASSERT_EQUAL(cr->bit_mismatches, 0);
    CU_ASSERT_EQUAL(cr->over, 0);
    CU_ASSERT_EQUAL(cr->run.cycles, cr->hand);
    CU_ASSERT_EQUAL(cr->run.fp_sts, 0);
    if (cr->run.cycles != cr->hand)
        fprintf(stderr, "\n  cycles %llu, hand count %llu", (unsigned long long)cr->run.cycles,
                (unsigned long long)cr->hand);
}

static pool_shape shape(uint32_t h, uint32_t w, uint32_t c, uint32_t kh, uint32_t kw, uint32_t sh, uint32_t sw,
                        uint32_t pt, uint32_t pl, uint32_t pb, uint32_t pr)
{
    pool_shape s = {.h = h, .w = w, .c = c, .kh = kh, .kw = kw, .sh = sh, .sw = sw, .pt = pt, .pl = pl};
    s.oh = (h + pt + pb - kh) / sh + 1;
    s.ow = (w + pl + pr - kw) / sw + 1;
    return s;
}

/* ---- tests --------------------------------------------------------------------- */

/* Shapes: clipped windows on every side, strides over and under the
 * kernel, one-column kernels, left-over pairs, channels not computed. */
typedef struct shape_row {
    uint32_t h, w, c, kh, kw, sh, sw, pt, pl, pb, pr, chans;
} shape_row;

static const shape_row shapes[] = {
    {7, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, 8},
    {6, 5, 16, 2, 3, 1, 2, 0, 1, 1, 1, 16},
    {5, 7, 14, 3, 1, 2, 1, 1, 0, 1, 0, 10},   /* channels 10..13 never computed */
    {4, 4, 6, 4, 4, 1, 1, 2, 3, 1, 0, 6},     /* pairs only, windows hanging off */
    {9, 3, 2, 5, 2, 3, 1, 2, 1, 2, 1, 2},
    {8, 8, 24, 3, 3, 2, 2, 1, 1, 0, 0, 24},
    {3, 11, 12, 1, 4, 1, 3, 0, 2, 0, 2, 12},
};

/* Odd channel counts: C odd (every channel alone, pixels 4 mod 8), and C
 * even with chans odd (the last channel alone, then blocks and pairs). */
static const shape_row odd_shapes[] = {
    {7, 9, 1, 3, 3, 2, 2, 1, 1, 1, 1, 1},     /* C = 1: a grey image */
    {6, 5, 3, 2, 3, 1, 2, 0, 1, 1, 1, 3},     /* C = 3: RGB */
    {5, 7, 5, 3, 1, 2, 1, 1, 0, 1, 0, 5},
    {4, 4, 3, 4, 4, 1, 1, 2, 3, 1, 0, 2},     /* C odd, chans even: still one at a time */
    {9, 3, 6, 5, 2, 3, 1, 2, 1, 2, 1, 5},     /* C even, chans odd: 1 + two pairs */
    {8, 8, 10, 3, 3, 2, 2, 1, 1, 0, 0, 9},    /* 1 + a block */
    {3, 11, 20, 1, 4, 1, 3, 0, 2, 0, 2, 19},  /* 1 + two blocks + a pair */
    {5, 5, 8, 2, 2, 1, 1, 0, 0, 0, 0, 1},     /* the odd channel only */
    {5, 6, 3, 5, 6, 1, 1, 0, 0, 0, 0, 3},     /* a global pool of RGB: one flattened row */
    {3, 3, 5, 2, 2, 2, 2, 2, 2, 2, 2, 5},     /* empty windows, C odd */
    {3, 3, 6, 2, 2, 2, 2, 2, 2, 2, 2, 3},     /* empty windows, chans odd */
};

static void run_table(const shape_row *rows, size_t n, bool avg, bool cip, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        pool_case pc;
        memset(&pc, 0, sizeof pc);
        pc.s = shape(rows[i].h, rows[i].w, rows[i].c, rows[i].kh, rows[i].kw, rows[i].sh, rows[i].sw, rows[i].pt,
                     rows[i].pl, rows[i].pb, rows[i].pr);
        pc.avg = avg;
        pc.cip = cip;
        pc.magnitudes = 20;
        split_rows(&pc, rows[i].chans);
        case_result cr = pool_run(&pc, seed + (uint32_t)i);
        check_case(&cr);
    }
}

static void test_odd_channels(void)
{
    const size_t n = sizeof odd_shapes / sizeof odd_shapes[0];
    run_table(odd_shapes, n, false, false, 400);
    run_table(odd_shapes, n, true, false, 500);
    run_table(odd_shapes, n, true, true, 600);
}

/* C odd, channels split between workers at odd channels: in and out of a
 * record 4 mod 8. */
static void test_odd_channel_split(void)
{
    static const uint32_t c0[WORKERS] = {0, 3, 5, 8, 9, 12}, chans[WORKERS] = {3, 2, 3, 1, 3, 1};
    for (int avg = 0; avg <= 1; avg++) {
        pool_case pc;
        memset(&pc, 0, sizeof pc);
        pc.s = shape(6, 7, 13, 3, 3, 2, 2, 1, 1, 1, 1);
        pc.avg = avg;
        pc.magnitudes = 10;
        for (unsigned k = 0; k < WORKERS; k++) {
            pc.oh1[k] = pc.s.oh;
            pc.c0[k] = c0[k];
            pc.chans[k] = chans[k];
        }
        case_result cr = pool_run(&pc, 700u + (uint32_t)avg);
        check_case(&cr);
    }
}

/* Worked example: max pool, H = W = 3, C = chans = 1, 2x2 kernel, stride
 * 1: OH = OW = 2; worker 1 gets output row 0 (W = 5 for the others).
 * Worker 1: entry 18 + 2 (and, brnz to the one-at-a-time loops); the row
 * 17; pixel 0: 20 of set-up, 2 to the channels (ld32 chans, shl), the
 * channel 3 + 2 (2 * 2 + 2) + 1 = 16 and its brnz 1, next 5: 44; pixel 1:
 * the same with 9 for the row's last: 48.  W = 20 + 17 + 44 + 48 = 129;
 * first issue at 6: exits at 6 + 774 = 780: 783 cycles. */
static void test_hand_cycles_odd(void)
{
    pool_case pc;
    memset(&pc, 0, sizeof pc);
    pc.s = shape(3, 3, 1, 2, 2, 1, 1, 0, 0, 0, 0);
    pc.oh1[0] = 1;
    pc.chans[0] = 1;
    CU_ASSERT_EQUAL(pool_w(&pc.s, 0, 1, 1, false, false), 129);
    case_result cr = pool_run(&pc, 3u);
    check_case(&cr);
    CU_ASSERT_EQUAL(cr.run.cycles, 783);
}

static void run_shapes(bool avg, bool cip)
{
    for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        pool_case pc;
        memset(&pc, 0, sizeof pc);
        pc.s = shape(shapes[i].h, shapes[i].w, shapes[i].c, shapes[i].kh, shapes[i].kw, shapes[i].sh, shapes[i].sw,
                     shapes[i].pt, shapes[i].pl, shapes[i].pb, shapes[i].pr);
        pc.avg = avg;
        pc.cip = cip;
        pc.magnitudes = 20;
        split_rows(&pc, shapes[i].chans);
        case_result cr = pool_run(&pc, 100u + i);
        check_case(&cr);
    }
}

static void test_maxpool(void) { run_shapes(false, false); }
static void test_avgpool(void) { run_shapes(true, false); }
static void test_avgpool_count_include_pad(void) { run_shapes(true, true); }

/* Channels split between workers (the lowering of a global pool), and a
 * global pool too large to walk as one row (65 x 65 > 4096 positions). */
static void test_global(void)
{
    for (int avg = 0; avg <= 1; avg++) {
        pool_case pc;
        memset(&pc, 0, sizeof pc);
        pc.s = shape(5, 6, 104, 5, 6, 1, 1, 0, 0, 0, 0);
        pc.avg = avg;
        pc.magnitudes = 10;
        split_channels(&pc);
        case_result cr = pool_run(&pc, 7u + (uint32_t)avg);
        check_case(&cr);
        memset(&pc, 0, sizeof pc);
        pc.s = shape(65, 65, 2, 65, 65, 1, 1, 0, 0, 0, 0);
        pc.avg = avg;
        split_rows(&pc, 2);
        cr = pool_run(&pc, 9u);
        check_case(&cr);
    }
}

/* Worked example at the top. */
static void test_hand_cycles(void)
{
    pool_case pc;
    memset(&pc, 0, sizeof pc);
    pc.s = shape(3, 3, 8, 2, 2, 1, 1, 0, 0, 0, 0);
    pc.oh1[0] = 1;
    pc.chans[0] = 8;
    CU_ASSERT_EQUAL(pool_w(&pc.s, 0, 1, 8, false, false), 161);
    CU_ASSERT_EQUAL(pool_w(&pc.s, 0, 0, 8, false, false), 5);
    case_result cr = pool_run(&pc, 3u);
    check_case(&cr);
    CU_ASSERT_EQUAL(cr.run.cycles, 975);
}

/* No rows, or no channels: nothing written (the output keeps its NaNs,
 * checked against the model, which writes nothing either). */
static void test_zero_work(void)
{
    pool_case pc;
    memset(&pc, 0, sizeof pc);
    pc.s = shape(4, 4, 8, 2, 2, 2, 2, 0, 0, 0, 0);
    for (unsigned k = 0; k < WORKERS; k++) {
        pc.oh0[k] = pc.oh1[k] = k % 2;
        pc.chans[k] = 8;
    }
    pc.oh1[3] = 2;
    pc.chans[3] = 0;                 /* rows, but no channels: W = 6 */
    for (int avg = 0; avg <= 1; avg++) {
        pc.avg = avg;
        case_result cr = pool_run(&pc, 5u);
        check_case(&cr);
        uint64_t w[WORKERS] = {5, 5, 5, 6, 5, 5};
        CU_ASSERT_EQUAL(cr.run.cycles, hand_cycles(w));
    }
}

/* Padding as large as the kernel: windows with no position inside. */
static void test_empty_windows(void)
{
    for (int avg = 0; avg <= 1; avg++) {
        pool_case pc;
        memset(&pc, 0, sizeof pc);
        pc.s = shape(3, 3, 10, 2, 2, 2, 2, 2, 2, 2, 2);   /* 4 x 4 out, rows and columns 0, 3 empty */
        pc.avg = avg;
        split_rows(&pc, 10);
        case_result cr = pool_run(&pc, 11u);
        check_case(&cr);
        /* the model on pixel (0, 1) (window rows -2..-1): -inf or +0 */
        float in[90], out[160];
        for (unsigned i = 0; i < 90; i++)
            in[i] = 1.0f;
        memset(out, 0x55, sizeof out);
        if (avg)
            pool_model_avgpool_nhwc(in, out, &pc.s, 0, 1, 10, false);
        else
            pool_model_maxpool_nhwc(in, out, &pc.s, 0, 1, 10);
        CU_ASSERT_EQUAL(bits_of(out[10]), avg ? 0u : 0xff800000u);
    }
}

/* The models on values worked by hand. */
static void test_model(void)
{
    /* 3x3, 2 channels: channel 0 = 1..9, channel 1 = -(1..9). */
    float in[18], out[8];
    for (unsigned i = 0; i < 9; i++) {
        in[2 * i] = (float)(i + 1);
        in[2 * i + 1] = -(float)(i + 1);
    }
    pool_shape s = {.h = 3, .w = 3, .c = 2, .kh = 2, .kw = 2, .sh = 1, .sw = 1, .oh = 2, .ow = 2};
    pool_model_maxpool_nhwc(in, out, &s, 0, 2, 2);
    /* windows {1,2,4,5} {2,3,5,6} {4,5,7,8} {5,6,8,9} */
    CU_ASSERT_EQUAL(bits_of(out[0]), bits_of(5.0f));
    CU_ASSERT_EQUAL(bits_of(out[1]), bits_of(-1.0f));
    CU_ASSERT_EQUAL(bits_of(out[6]), bits_of(9.0f));
    CU_ASSERT_EQUAL(bits_of(out[7]), bits_of(-5.0f));
    pool_model_avgpool_nhwc(in, out, &s, 0, 2, 2, false);
    CU_ASSERT_EQUAL(bits_of(out[0]), bits_of(3.0f));   /* 12 * 0.25 */
    CU_ASSERT_EQUAL(bits_of(out[7]), bits_of(-7.0f));
    /* Padding 1 all round, 3x3 kernel, stride 2: pixel (0, 0) has the 4
     * positions {1, 2, 4, 5} inside: 12 / 4 = 3; with count_include_pad
     * 12 * fl(1/9): 12 * 0x3de38e39 = 1.33333337... rounded. */
    pool_shape p = {.h = 3, .w = 3, .c = 2, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .pt = 1, .pl = 1, .oh = 2, .ow = 2};
    pool_model_avgpool_nhwc(in, out, &p, 0, 2, 2, false);
    CU_ASSERT_EQUAL(bits_of(out[0]), bits_of(3.0f));
    pool_model_avgpool_nhwc(in, out, &p, 0, 2, 2, true);
    CU_ASSERT_EQUAL(bits_of(out[0]), bits_of((float)(12.0 * (double)(1.0f / 9.0f))));
    CU_ASSERT_EQUAL(bits_of(out[0]), 0x3faaaaabu);
    /* One channel (C = 1, the pixel stride 4 bytes): 1..9, 2x2 windows. */
    float g[9], go[4];
    for (unsigned i = 0; i < 9; i++)
        g[i] = (float)(i + 1);
    pool_shape s1 = {.h = 3, .w = 3, .c = 1, .kh = 2, .kw = 2, .sh = 1, .sw = 1, .oh = 2, .ow = 2};
    pool_model_maxpool_nhwc(g, go, &s1, 0, 2, 1);
    CU_ASSERT_EQUAL(bits_of(go[0]), bits_of(5.0f));
    CU_ASSERT_EQUAL(bits_of(go[3]), bits_of(9.0f));
    pool_model_avgpool_nhwc(g, go, &s1, 0, 2, 1, false);
    CU_ASSERT_EQUAL(bits_of(go[1]), bits_of(4.0f));     /* (2 + 3 + 5 + 6) / 4 */
    /* maxNum: a quiet NaN loses to a number. */
    in[0] = NAN;
    pool_model_maxpool_nhwc(in, out, &s, 0, 1, 2);
    CU_ASSERT_EQUAL(bits_of(out[0]), bits_of(5.0f));
}

/* ResNet-50's pools (tile cycles per element quoted in pool.S). */
static void test_large(void)
{
    /* 3x3 stride 2 pad 1 on 112 x 112 x 64: 6 of the 56 output rows, one a
     * worker (input rows -1 .. 11: 13 rows). */
    pool_case pc;
    memset(&pc, 0, sizeof pc);
    pc.s = shape(13, 112, 64, 3, 3, 2, 2, 1, 1, 0, 1);
    CU_ASSERT_EQUAL(pc.s.oh, 6);
    CU_ASSERT_EQUAL(pc.s.ow, 56);
    pc.magnitudes = 5;
    split_rows(&pc, 64);
    case_result m = pool_run(&pc, 21u);
    check_case(&m);
    double outs = 6.0 * 56 * 64;
    printf("\n    max 3x3 s2 13x112x64 -> 6x56x64: %llu cycles, %.3f per output, %.3f per input read\n",
           (unsigned long long)m.run.cycles, m.run.cycles / outs, m.run.cycles / (outs * 9));
    CU_ASSERT(m.run.cycles / outs > 5.6 && m.run.cycles / outs < 8.0);

    /* Global average pool 7 x 7 x 2048, channels split 6 ways. */
    memset(&pc, 0, sizeof pc);
    pc.s = shape(7, 7, 2048, 7, 7, 1, 1, 0, 0, 0, 0);
    pc.avg = true;
    pc.magnitudes = 5;
    split_channels(&pc);
    case_result a = pool_run(&pc, 22u);
    check_case(&a);
    printf("    avg global 7x7x2048: %llu cycles, %.3f per output, %.3f per input (worst error / tolerance %.3f)\n",
           (unsigned long long)a.run.cycles, a.run.cycles / 2048.0, a.run.cycles / (2048.0 * 49), a.ratio);
    CU_ASSERT(a.run.cycles / (2048.0 * 49) < 0.7);

    /* Odd channel counts: max 3x3 s2 p1 on 64 x 64 images of 3 channels
     * (every channel alone) and of 6 channels, 5 computed (one alone, then
     * two pairs). */
    static const uint32_t cs[2] = {3, 6}, ch[2] = {3, 5};
    for (unsigned i = 0; i < 2; i++) {
        memset(&pc, 0, sizeof pc);
        pc.s = shape(64, 64, cs[i], 3, 3, 2, 2, 1, 1, 0, 1);
        split_rows(&pc, ch[i]);
        case_result o = pool_run(&pc, 23u + i);
        check_case(&o);
        double n_out = (double)pc.s.oh * pc.s.ow * ch[i];
        printf("    max 3x3 s2 64x64x%u (%u computed): %llu cycles, %.3f per output\n", cs[i], ch[i],
               (unsigned long long)o.run.cycles, o.run.cycles / n_out);
    }
}


/* ---- vtx_maxpool_grad_nhwc_f32 ------------------------------------------------- */

/* A gradient case: X (values on a coarse grid, so windows have ties), dY,
 * the workers' records; dX is one H x W x C image whose channels past
 * `chans` and slack keep their signalling NaNs. */
typedef struct grad_case {
    pool_shape s;
    pool_grad_range r[WORKERS];
    bool dy_planes;             /* dY as C planes of OH x OW, else channels-last */
} grad_case;

typedef struct grad_result {
    run_result run;
    uint64_t hand;
    size_t mismatches;
} grad_result;

/* A record of vtx_maxpool_grad_nhwc_f32 (dY steps given in floats). */
static void grad_record(uint32_t *v, uint32_t in, uint32_t dy, uint32_t dx, const pool_shape *s,
                        const pool_grad_range *g)
{
    const uint32_t f[] = {
        [MPG_V_IN] = in, [MPG_V_DY] = dy, [MPG_V_DX] = dx, [MPG_V_H] = s->h, [MPG_V_W] = s->w,
        [MPG_V_C] = s->c, [MPG_V_KH] = s->kh, [MPG_V_KW] = s->kw, [MPG_V_SH] = s->sh, [MPG_V_SW] = s->sw,
        [MPG_V_PT] = s->pt, [MPG_V_PL] = s->pl, [MPG_V_OW] = s->ow, [MPG_V_OH0] = g->oh0, [MPG_V_OH1] = g->oh1,
        [MPG_V_IH0] = g->ih0, [MPG_V_IH1] = g->ih1, [MPG_V_CHANS] = g->chans,
        [MPG_V_DY_PIXEL_STEP] = g->dy_pixel_step * 4, [MPG_V_DY_CHAN_STEP] = g->dy_chan_step * 4,
    };
    memset(v, 0, MPG_V_WORDS * 4);
    memcpy(v, f, sizeof f);
}

static grad_result grad_run(const grad_case *gc, uint32_t seed)
{
    grad_result res;
    memset(&res, 0, sizeof res);
    rig r;
    if (!rig_open_words(&r, "vtx_maxpool_grad_nhwc_f32", MPG_V_WORDS)) {
        CU_FAIL("rig");
        rig_close(&r);
        return res;
    }
    const pool_shape *s = &gc->s;
    lcg_state = seed;
    size_t nx = (size_t)s->h * s->w * s->c, ny = (size_t)s->oh * s->ow * s->c;
    size_t nd = nx + SLACK_BYTES / 4;
    float *x = malloc(nx * 4), *dy = malloc(ny * 4), *want = malloc(nd * 4), *got = malloc(nd * 4);
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)floor(rnd_unit() * 4.0) / 2.0f;          /* 8 values: many ties */
    for (size_t i = 0; i < ny; i++)
        dy[i] = (float)rnd_unit() * (float)ldexp(1.0, (int)(lcg_state % 9) - 4);
    for (size_t i = 0; i < nd; i++)
        want[i] = float_of(SNAN_BITS);
    uint32_t xa = rig_alloc(&r, nx * 4), ya = rig_alloc(&r, ny * 4), da = rig_alloc(&r, nx * 4);
    rig_write(&r, xa, x, nx * 4);
    rig_write(&r, ya, dy, ny * 4);
    uint32_t rec[WORKERS * MPG_V_WORDS];
    uint64_t w[WORKERS];
    memset(rec, 0, sizeof rec);
    for (unsigned k = 0; k < WORKERS; k++) {
        pool_grad_range g = gc->r[k];
        g.dy_pixel_step = gc->dy_planes ? 1 : s->c;
        g.dy_chan_step = gc->dy_planes ? s->oh * s->ow : 1;
        grad_record(rec + k * MPG_V_WORDS, xa, ya, da + g.ih0 * s->w * s->c * 4, s, &g);
        w[k] = pool_model_maxpool_grad_cycles(x, s, &g);
        pool_model_maxpool_grad_nhwc(x, dy, want + (size_t)g.ih0 * s->w * s->c, s, &g);
    }
    res.run = rig_run_words(&r, rec, MPG_V_WORDS);
    if (!res.run.ran)
        fprintf(stderr, "\n  %s", res.run.fault);
    res.hand = hand_cycles(w);
    rig_read(&r, da, got, nd * 4);
    for (size_t i = 0; i < nd; i++)
        if (bits_of(got[i]) != bits_of(want[i]) && res.mismatches++ < 4)
            fprintf(stderr, "\n  dX word %zu: codelet 0x%08x, model 0x%08x", i, bits_of(got[i]), bits_of(want[i]));
    free(x); free(dy); free(want); free(got);
    rig_close(&r);
    return res;
}

/* The output rows whose windows reach input rows [ih0, ih1). */
static void grad_rows(const pool_shape *s, uint32_t ih0, uint32_t ih1, uint32_t *oh0, uint32_t *oh1)
{
    *oh0 = s->oh, *oh1 = 0;
    for (uint32_t oh = 0; oh < s->oh; oh++) {
        int64_t top = (int64_t)oh * s->sh - s->pt;
        if (top < ih1 && top + s->kh > ih0) {
            if (oh < *oh0)
                *oh0 = oh;
            *oh1 = oh + 1;
        }
    }
    if (*oh1 < *oh0)
        *oh0 = *oh1 = 0;
}

/* The rows of dX split among the workers. */
static void grad_split_rows(grad_case *gc, uint32_t chans)
{
    for (unsigned k = 0; k < WORKERS; k++) {
        pool_grad_range *g = &gc->r[k];
        g->ih0 = gc->s.h * k / WORKERS;
        g->ih1 = gc->s.h * (k + 1) / WORKERS;
        g->chans = chans;
        grad_rows(&gc->s, g->ih0, g->ih1, &g->oh0, &g->oh1);
    }
}

static void check_grad(const grad_result *g)
{
    CU_ASSERT_TRUE(g->run.ran);
    CU_ASSERT_EQUAL(g->mismatches, 0);
    CU_ASSERT_EQUAL(g->run.cycles, g->hand);
    if (g->run.cycles != g->hand)
        fprintf(stderr, "\n  cycles %llu, hand count %llu", (unsigned long long)g->run.cycles,
                (unsigned long long)g->hand);
}

/* The model on a 1-channel 3 x 4 image worked by hand: 2 x 2 windows,
 * stride 1 (overlapping), no padding; ties go to the first in row-major
 * order, and positions that are the first max of several windows sum
 * their dY. */
static void test_grad_model(void)
{
    const float x[12] = {1, 3, 3, 0,
                         2, 3, 1, 5,
                         0, 0, 4, 4};
    pool_shape s = shape(3, 4, 1, 2, 2, 1, 1, 0, 0, 0, 0);
    CU_ASSERT_EQUAL(s.oh, 2);
    CU_ASSERT_EQUAL(s.ow, 3);
    const float dy[6] = {1, 2, 4, 8, 16, 32};
    float dx[12];
    pool_grad_range g = {.oh0 = 0, .oh1 = 2, .ih0 = 0, .ih1 = 3, .chans = 1, .dy_pixel_step = 1, .dy_chan_step = 6};
    pool_model_maxpool_grad_nhwc(x, dy, dx, &s, &g);
    /* windows: (0,0) {1,3,2,3} -> x[0][1]; (0,1) {3,3,3,1} -> x[0][1]; (0,2) {3,0,1,5} -> x[1][3];
     * (1,0) {2,3,0,0} -> x[1][1]; (1,1) {3,1,0,4} -> x[2][2]; (1,2) {1,5,4,4} -> x[1][3]. */
    const float want[12] = {0, 1 + 2, 0, 0,
                            0, 8, 0, 4 + 32,
                            0, 0, 16, 0};
    for (unsigned i = 0; i < 12; i++)
        CU_ASSERT_EQUAL(bits_of(dx[i]), bits_of(want[i]));
    /* A worker owning row 1 only: rows 0 and 2 untouched, row 1 the same. */
    float part[4] = {-1, -1, -1, -1};
    g.ih0 = 1, g.ih1 = 2;
    pool_model_maxpool_grad_nhwc(x, dy, part, &s, &g);
    for (unsigned i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(bits_of(part[i]), bits_of(want[4 + i]));
    /* Padding: 3 x 3 stride 2 pad 1 on the same image: 2 x 2 windows, the
     * top-left one clipped to {1,3,2,3} -> x[0][1]. */
    pool_shape p = shape(3, 4, 1, 3, 3, 2, 2, 1, 1, 1, 1);
    CU_ASSERT_EQUAL(p.oh, 2);
    CU_ASSERT_EQUAL(p.ow, 2);
    g = (pool_grad_range){.oh0 = 0, .oh1 = 2, .ih0 = 0, .ih1 = 3, .chans = 1, .dy_pixel_step = 1, .dy_chan_step = 4};
    pool_model_maxpool_grad_nhwc(x, dy, dx, &p, &g);
    /* (0,0) rows 0-1 cols 0-1 -> x[0][1]; (0,1) rows 0-1 cols 1-3 -> x[1][3];
     * (1,0) rows 1-2 cols 0-1 -> x[1][1]; (1,1) rows 1-2 cols 1-3 -> x[1][3]. */
    const float want_p[12] = {0, 1, 0, 0,
                              0, 4, 0, 2 + 8,
                              0, 0, 0, 0};
    for (unsigned i = 0; i < 12; i++)
        CU_ASSERT_EQUAL(bits_of(dx[i]), bits_of(want_p[i]));
}

/* Shapes: overlapping and disjoint windows, padding, odd C, channels not
 * computed; rows split among the workers; dY channels-last and as planes. */
static void test_grad_vs_model(void)
{
    static const shape_row rows[] = {
        {9, 10, 4, 3, 3, 2, 2, 1, 1, 1, 1, 4},
        {12, 7, 3, 2, 2, 1, 1, 0, 0, 0, 0, 3},
        {8, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 5},
        {7, 9, 2, 2, 3, 2, 3, 0, 1, 1, 2, 2},
        {13, 11, 1, 3, 2, 2, 1, 1, 0, 1, 1, 1},
    };
    for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (int planes = 0; planes < 2; planes++) {
            const shape_row *q = &rows[i];
            grad_case gc;
            memset(&gc, 0, sizeof gc);
            gc.s = shape(q->h, q->w, q->c, q->kh, q->kw, q->sh, q->sw, q->pt, q->pl, q->pb, q->pr);
            gc.dy_planes = planes;
            grad_split_rows(&gc, q->chans);
            grad_result g = grad_run(&gc, 300u + 2 * i + (unsigned)planes);
            check_grad(&g);
        }
}

/* Records that do nothing (no rows, no channels), one visiting extra
 * output rows, and the worked count: 1 x 2 x 1 image, 1 x 2 window. */
static void test_grad_cycles(void)
{
    grad_case gc;
    memset(&gc, 0, sizeof gc);
    gc.s = shape(1, 2, 1, 1, 2, 1, 1, 0, 0, 0, 0);
    gc.r[0] = (pool_grad_range){.oh0 = 0, .oh1 = 1, .ih0 = 0, .ih1 = 1, .chans = 1};
    gc.r[1] = (pool_grad_range){.ih0 = 1, .ih1 = 1, .chans = 1};
    gc.r[2] = (pool_grad_range){.ih0 = 0, .ih1 = 1, .chans = 0};
    grad_result g = grad_run(&gc, 5u);
    check_grad(&g);
    /* Worker 1: entry 24, zeroing 2 pixels x 4, 4; the row 25 + 4; its
     * pixel 22 + 6; the channel: max 3 + (4 + 3) = 10, then the first max
     * found at column cq, 2 + 1 + 5 cq + 4, added 15, the loop 1. */
    pool_grad_range g0 = gc.r[0];
    float x[2] = {1, 2};
    CU_ASSERT_EQUAL(pool_model_maxpool_grad_cycles(x, &gc.s, &g0), 24 + 8 + 4 + 29 + 28 + 10 + 12 + 15 + 1);
    x[1] = 1;
    CU_ASSERT_EQUAL(pool_model_maxpool_grad_cycles(x, &gc.s, &g0), 24 + 8 + 4 + 29 + 28 + 10 + 7 + 15 + 1);
    pool_grad_range none = {.ih0 = 1, .ih1 = 1, .chans = 1}, nochan = {.ih0 = 0, .ih1 = 1};
    CU_ASSERT_EQUAL(pool_model_maxpool_grad_cycles(x, &gc.s, &none), 5);
    CU_ASSERT_EQUAL(pool_model_maxpool_grad_cycles(x, &gc.s, &nochan), 6);
    /* Every output row visited by every worker: the same dX, more cycles. */
    memset(&gc, 0, sizeof gc);
    gc.s = shape(9, 6, 3, 3, 3, 2, 2, 1, 1, 1, 1);
    grad_split_rows(&gc, 3);
    for (unsigned k = 0; k < WORKERS; k++)
        gc.r[k].oh0 = 0, gc.r[k].oh1 = gc.s.oh;
    g = grad_run(&gc, 6u);
    check_grad(&g);
}

/* ResNet-50's stem pool, 3x3 s2 p1 on 112 x 112 x 64: a block of one dX
 * row of 9 columns as the lowering gives a tile (its windows' X: 3 rows
 * of 19 columns), the channels split 6 ways. */
static void test_grad_large(void)
{
    grad_case gc;
    memset(&gc, 0, sizeof gc);
    /* X rows 4..6 and columns 17..35 of the image as a 3 x 19 image whose
     * dX row 1 (image row 5) is owned: windows of output rows 2..3,
     * columns 9..17. */
    gc.s = shape(3, 19, 64, 3, 3, 2, 2, 0, 1, 0, 1);
    gc.s.pt = 0;
    uint32_t per = 64 / WORKERS;
    (void)per;
    for (unsigned k = 0; k < WORKERS; k++)
        gc.r[k] = (pool_grad_range){.oh0 = 0, .oh1 = 1, .ih0 = 0, .ih1 = 3, .chans = 0};
    /* one worker does the whole block here: channels split would need
     * pointer offsets, which grad_run does not take */
    gc.r[0].chans = 64;
    grad_result g = grad_run(&gc, 77u);
    check_grad(&g);
    double outs = (double)gc.s.ow * 64;
    printf("\n    max-pool gradient 3x19x64 block, one worker: %llu cycles, %.1f per window channel\n",
           (unsigned long long)g.run.cycles, g.run.cycles / outs);
}

void test_register(void)
{
    ADD_SUITE("codelets_pool",
              {"model on hand-worked values", test_model},
              {"max pool vs model and reference, hand cycles", test_maxpool},
              {"average pool vs model and reference", test_avgpool},
              {"average pool, count_include_pad", test_avgpool_count_include_pad},
              {"global pools, channel split, > 4096 positions", test_global},
              {"hand-counted cycles", test_hand_cycles},
              {"odd C and odd chans vs model and reference", test_odd_channels},
              {"odd C split at odd channels (pixels 4 mod 8)", test_odd_channel_split},
              {"hand-counted cycles, C = 1", test_hand_cycles_odd},
              {"zero-row and zero-channel records", test_zero_work},
              {"windows with nothing inside", test_empty_windows},
              {"large: ResNet-50 sizes, odd-channel images", test_large},
              {"max-pool gradient: model on hand-worked values", test_grad_model},
              {"max-pool gradient vs model, hand cycles", test_grad_vs_model},
              {"max-pool gradient: empty records, worked count", test_grad_cycles},
              {"max-pool gradient: ResNet-50 stem block", test_grad_large});
}
