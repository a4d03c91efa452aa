/*
 * test_codelets_optimizer.c — vtx_adam_updater_f32 (workloads/codelets/
 * optimizer.S) run on a simulated tile, six workers each on its own
 * share of the elements:
 *
 *   - every decay (none, Adam's L2, LAMB's decoupled) and width of w (f32,
 *     f16): the moments written over themselves and the direction equal
 *     optimizer_model_adam's bit for bit, in place (R = G) and apart;
 *   - the model against the same step in f64: each moment within 2 ulps
 *     of the largest of its terms and itself (two products and a sum
 *     rounded: 1.5 ulps; a sum may cancel), the direction computed in f64
 *     from the f32 moments within 5 ulps (two products, a root, a sum and
 *     a quotient rounded after them: each moves it by at most half an ulp,
 *     or a quarter through the root), on moments and gradients of ordinary
 *     size;
 *   - the cost: worker cycles exactly as optimizer.h gives them, for
 *     several counts and each loop.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/asm/asm.h"
#include "isa/fp16.h"
#include "sim/engine/tile.h"
#include "sim/program/machine.h"
#include "codelet_fixture.h"
#include "test_util.h"
#include "workloads/codelets/abi.h"
#include "workloads/codelets/elementwise.h"
#include "workloads/codelets/optimizer.h"
#include "frontends/kernels.h"

#define W CODELET_WORKERS
#define REC_ADDR 0x81000u
#define REC_STEP 64u
#define G_ADDR 0x88000u
#define M_ADDR 0xa0000u
#define V_ADDR 0xb0000u
#define W_ADDR 0xc0000u
#define R_ADDR 0xd0000u
#define C_ADDR 0x80f00u             /* c1, c2 */
#define MAX_N 4096u

static uint32_t lcg_state;
static uint32_t lcg(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state >> 8;
}
static float uniform(float lo, float hi) { return lo + (hi - lo) * (float)(lcg() % 1000000) / 1e6f; }
static uint32_t bits_of(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

typedef struct opt_run {
    ipu_exe *e;
    ipu_tile *t;
} opt_run;

static void setup(opt_run *r)
{
    memset(r, 0, sizeof *r);
    codelet_tile_load(&r->e, &r->t, "optimizer.S", "vtx_adam_updater_f32", REC_ADDR, REC_STEP);
}

static void put(opt_run *r, uint32_t addr, const void *data, size_t bytes)
{
    CU_ASSERT_EQUAL_FATAL(tmem_write_bytes(&r->t->s.mem, addr, data, bytes), TMEM_OK);
}

static void get(opt_run *r, uint32_t addr, void *data, size_t bytes)
{
    CU_ASSERT_EQUAL_FATAL(tmem_read_bytes(&r->t->s.mem, addr, data, bytes), TMEM_OK);
}

static void done(opt_run *r) { codelet_tile_free(&r->e, &r->t); }

typedef struct adam_case {
    uint32_t n, flags;
    bool in_place;                 /* R = G */
    uint32_t counts[W];            /* each worker's share; all zero: n split evenly */
} adam_case;

static const adam_constants K = { 0.9f, (float)(1 - 0.9), 0.999f, (float)(1 - 0.999), 1e-6f, 0.01f, 0 };

static float g_in[MAX_N], m_in[MAX_N], v_in[MAX_N], w_in[MAX_N];
static f16_t w16[MAX_N];

/* Runs one case on fresh data: the tile's moments and direction against
 * the model, element for element (mismatches returned); the cycles the
 * run took in *cycles. */
static size_t run_case(const adam_case *c, float c1, float c2, uint64_t *cycles, float *r_out, float *m_out,
                       float *v_out)
{
    for (uint32_t i = 0; i < c->n; i++) {
        g_in[i] = uniform(-1, 1) * (i % 7 == 3 ? 1e-3f : 1);
        m_in[i] = uniform(-0.1f, 0.1f);
        v_in[i] = uniform(0, 0.01f) * (i % 11 == 5 ? 0 : 1);
        w_in[i] = uniform(-2, 2);
        w16[i] = fp16_from_f32(w_in[i]);
        if (c->flags & ADAM_FLAG_W_F16)
            w_in[i] = fp16_to_f32(w16[i]);
    }
    opt_run r;
    setup(&r);
    uint32_t g = G_ADDR, out = c->in_place ? G_ADDR : R_ADDR;
    put(&r, G_ADDR, g_in, c->n * 4);
    put(&r, M_ADDR, m_in, c->n * 4);
    put(&r, V_ADDR, v_in, c->n * 4);
    if (c->flags & ADAM_FLAG_W_F16)
        put(&r, W_ADDR, w16, c->n * 2 + 2);
    else
        put(&r, W_ADDR, w_in, c->n * 4);
    float cs[2] = { c1, c2 };
    put(&r, C_ADDR, cs, 8);
    kernel_adam_constants k = { 0.9, 0.999, 1e-6, 0.01, c->flags };
    uint32_t at = 0;
    for (unsigned w = 0; w < W; w++) {
        bool even = true;
        for (unsigned q = 0; q < W; q++)
            even &= c->counts[q] == 0;
        uint32_t count = even ? (w == W - 1 ? c->n - at : c->n / W) : c->counts[w];
        uint32_t eb = c->flags & ADAM_FLAG_W_F16 ? 2 : 4, rec[16];
        kernel_adam_updater_record(rec, g + at * 4, M_ADDR + at * 4, V_ADDR + at * 4, W_ADDR + at * eb,
                                   out + at * 4, count, C_ADDR, C_ADDR + 4, &k);
        put(&r, REC_ADDR + w * REC_STEP, rec, ADAM_V_WORDS * 4);
        at += count;
    }
    CU_ASSERT_EQUAL_FATAL(at, c->n);
    enum tile_stop stop = tile_run_alone(r.t, 100000000);
    CU_ASSERT_EQUAL_FATAL(stop, TILE_STOP_END);
    *cycles = r.t->s.cycle;
    get(&r, out, r_out, c->n * 4);
    get(&r, M_ADDR, m_out, c->n * 4);
    get(&r, V_ADDR, v_out, c->n * 4);
    done(&r);
    adam_constants mk = K;
    mk.flags = c->flags;
    size_t bad = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        float m = m_in[i], v = v_in[i];
        float want = optimizer_model_adam(&mk, c1, c2, g_in[i], &m, &v, w_in[i]);
        bad += bits_of(want) != bits_of(r_out[i]) || bits_of(m) != bits_of(m_out[i]) ||
               bits_of(v) != bits_of(v_out[i]);
    }
    return bad;
}

static float r_buf[MAX_N], m_buf[MAX_N], v_buf[MAX_N];

/* Every loop, in place and apart, uneven shares (a worker with none). */
static void test_adam_model(void)
{
    static const uint32_t flag_sets[] = { 0, ADAM_FLAG_L2, ADAM_FLAG_L2 | ADAM_FLAG_W_F16, ADAM_FLAG_DECOUPLED,
                                          ADAM_FLAG_DECOUPLED | ADAM_FLAG_W_F16 };
    lcg_state = 7;
    for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++)
        for (int place = 0; place < 2; place++) {
            adam_case c = { 101, flag_sets[f], place, { 30, 1, 0, 40, 17, 13 } };
            uint64_t cyc;
            size_t bad = run_case(&c, 1.0f / (1 - 0.9f), 1.0f / (1 - 0.999f), &cyc, r_buf, m_buf, v_buf);
            if (bad)
                fprintf(stderr, "\n  flags %u in place %d: %zu of %u differ from the model\n", flag_sets[f], place,
                        bad, c.n);
            CU_ASSERT_EQUAL(bad, 0);
        }
}

/* The model against the step in f64 (no decay; the L2 and decoupled
 * terms are one product and one sum more, held by the model test). */
static void test_adam_reference(void)
{
    lcg_state = 11;
    adam_case c = { 2000, 0, true, { 0 } };
    uint64_t cyc;
    const float c1 = 1.0f / (1 - 0.9f * 0.9f * 0.9f), c2 = 1.0f / (1 - 0.999f * 0.999f * 0.999f);
    CU_ASSERT_EQUAL(run_case(&c, c1, c2, &cyc, r_buf, m_buf, v_buf), 0);
    double worst_m = 0, worst_v = 0, worst_r = 0;
    for (uint32_t i = 0; i < c.n; i++) {
        /* in f64 with the f32 constants the codelet multiplies by */
        double g = g_in[i];
        double m = (double)K.beta1 * m_in[i] + (double)K.one_minus_beta1 * g;
        double v = (double)K.beta2 * v_in[i] + (double)K.one_minus_beta2 * g * g;
        /* two products and a sum rounded: within 1.5 ulps of the largest
         * of the terms and the result (a sum may cancel) */
        double big_m = fmax(fmax(fabs((double)K.beta1 * m_in[i]), fabs((double)K.one_minus_beta1 * g)), fabs(m));
        double ulp_m = ldexp(1, ilogb(big_m + 1e-300) - 23), ulp_v = ldexp(1, ilogb(fabs(v) + 1e-300) - 23);
        double em = fabs(m_buf[i] - m) / ulp_m, ev = v > 0 ? fabs(v_buf[i] - v) / ulp_v : 0;
        worst_m = em > worst_m ? em : worst_m;
        worst_v = ev > worst_v ? ev : worst_v;
        /* the direction from the f32 moments, in f64: the codelet's
         * roundings after them (5 ulps) */
        double r = (double)m_buf[i] * c1 / (sqrt((double)v_buf[i] * c2) + (double)K.epsilon);
        double ulp_r = ldexp(1, ilogb(fabs(r) + 1e-300) - 23);
        double er = fabs(r_buf[i] - r) / ulp_r;
        worst_r = er > worst_r ? er : worst_r;
    }
    fprintf(stderr, "\n  moments within %.2f and %.2f ulps of f64, the direction within %.2f ulps ", worst_m, worst_v,
            worst_r);
    CU_ASSERT(worst_m <= 2.0);
    CU_ASSERT(worst_v <= 2.0);
    CU_ASSERT(worst_r <= 5.0);
}

/* Worker cycles from optimizer.h: n elements, the decay and width of w. */
static uint64_t worker_cycles(uint32_t n, uint32_t flags)
{
    if (!n)
        return 3;
    bool half = flags & ADAM_FLAG_W_F16;
    uint64_t start = flags & ADAM_FLAG_DECOUPLED ? 27 : 25;
    uint64_t each = 24 + (flags & ADAM_FLAG_L2 ? (half ? 2 : 1) : flags & ADAM_FLAG_DECOUPLED ? (half ? 3 : 2) : 0);
    return start + each * n + 1;
}

/* The tile cycles of a run where worker 0 alone has work: its first
 * issue at tile cycle 6 (the supervisor's runall at cycle 3, the barrel's
 * next turn for worker 0), one issue every six tile cycles to its exitz,
 * then the supervisor's sync and exit (3). */
#define FIRST_ISSUE_CYCLE 6u

static void test_adam_cycles(void)
{
    static const uint32_t flag_sets[] = { 0, ADAM_FLAG_L2, ADAM_FLAG_L2 | ADAM_FLAG_W_F16, ADAM_FLAG_DECOUPLED,
                                          ADAM_FLAG_DECOUPLED | ADAM_FLAG_W_F16 };
    static const uint32_t sizes[] = { 1, 2, 5, 64 };
    lcg_state = 3;
    for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            adam_case c = { sizes[s], flag_sets[f], true, { sizes[s], 0, 0, 0, 0, 0 } };
            uint64_t cyc;
            CU_ASSERT_EQUAL(run_case(&c, 2.0f, 3.0f, &cyc, r_buf, m_buf, v_buf), 0);
            uint64_t want = FIRST_ISSUE_CYCLE + W * (worker_cycles(sizes[s], flag_sets[f]) - 1) + 3;
            if (cyc != want)
                fprintf(stderr, "\n  flags %u n %u: %llu cycles, optimizer.h gives %llu\n", flag_sets[f], sizes[s],
                        (unsigned long long)cyc, (unsigned long long)want);
            CU_ASSERT_EQUAL(cyc, want);
        }
}

void test_register(void)
{
    ADD_SUITE("optimizer codelets",
              { "Adam updater: every loop equals the model bit for bit", test_adam_model },
              { "Adam updater: the model against the step in f64", test_adam_reference },
              { "Adam updater: worker cycles as optimizer.h gives them", test_adam_cycles });
}
