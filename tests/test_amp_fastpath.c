/*
 * test_amp_fastpath.c — the fast paths of the AMP and of the pace loads
 * against the slow, obviously correct code they replace, which this file
 * keeps as reference functions:
 *
 *   - the 4-element f16 dot product: isa_amp_f16_dot4 (products and sums
 *     in double inside a proven exponent window, the 128-bit exact sum
 *     outside it) against isa_amp_f16_dot4_exact, on millions of random
 *     vectors and on adversarial ones built around the window's edge:
 *     wide exponent spreads, cancellation, ties;
 *   - fp32_add (an f32 addition for finite operands) against the double
 *     computation it replaced, on every pair of boundary values and on
 *     random ones; fp_overflow_check's early exit likewise;
 *   - one issue of f16v4hihoamp / f16v4sisoamp / f16v4hihov4amp (the
 *     vectorised fast issue, the decoded-weight cache and every fallback)
 *     against a reference model of the whole instruction written from the
 *     original per-unit code: accumulators, result registers, $FP_STS,
 *     the PRNG and malign exceptions, on random states, weights, inputs,
 *     enumFlags and $FP_CTL, with the weights rewritten between issues;
 *   - tmem_element (shifts instead of divisions) against the original
 *     formula at every address, for several memory sizes, and the pace
 *     loads' one-pass access check against the rules checked one by one.
 *
 * Random numbers come from a fixed-seed generator: every run tests the
 * same values.  On an x86-64 host with AVX2 the executor runs the AVX2
 * build of the fast issue (exec_amp.c); both builds compile the same
 * source.
 */
#include <CUnit/CUnit.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec_fixture.h"
#include "isa/amp.h"
#include "isa/fp16.h"
#include "isa/fparith.h"
#include "test_util.h"

/* ---- helpers ----------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned rnd_below(unsigned n) { return (unsigned)(rnd() % n); }

static uint32_t f32_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static float bits_f32(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

/* An f16 with biased exponent field e (0..30), random significand and
 * sign. */
static uint16_t f16_with_exp(unsigned e)
{
    return (uint16_t)((rnd() & 0x8000u) | (e << 10) | (rnd() & 0x3ffu));
}

/* f16 values of the kinds AMP inputs hold: moderate values mostly, some
 * zeros, subnormals, extremes, infinities and NaNs (quiet and
 * signalling). */
static uint16_t rnd_f16(void)
{
    unsigned k = rnd_below(100);
    if (k < 60)
        return f16_with_exp(8 + rnd_below(12));         /* about 2^-7 .. 2^4 */
    if (k < 70)
        return (uint16_t)(rnd() & 0x8000u);              /* ±0 */
    if (k < 78)
        return (uint16_t)((rnd() & 0x8000u) | (rnd() & 0x3ffu));   /* subnormal */
    if (k < 94)
        return f16_with_exp(rnd_below(31));
    if (k < 96)
        return (uint16_t)((rnd() & 0x8000u) | 0x7c00u);  /* infinity */
    if (k < 98)
        return (uint16_t)((rnd() & 0x8000u) | 0x7e00u | (rnd() & 0x1ffu));   /* quiet NaN */
    return (uint16_t)((rnd() & 0x8000u) | 0x7c00u | 1u | (rnd() & 0x1ffu));  /* signalling NaN */
}

/* Finite f16 only, the kinds of rnd_f16. */
static uint16_t rnd_f16_finite(void)
{
    uint16_t h;
    do
        h = rnd_f16();
    while ((h & 0x7c00u) == 0x7c00u);
    return h;
}

/* ---- the reference functions ------------------------------------------- */

/* fp32_add as it was: the double sum of the flushed operands, rounded to
 * f32 and flushed. */
static float ref_fp32_add(float a, float b)
{
    if (isnan(a) || isnan(b))
        return fp32_qnan();
    a = fp32_flush(a);
    b = fp32_flush(b);
    if (isinf(a) && isinf(b) && signbit(a) != signbit(b))
        return fp32_qnan();
    if (isinf(a))
        return a;
    if (isinf(b))
        return b;
    return fp32_flush((float)((double)a + (double)b));
}

/* fp_overflow_check as it was (no early exit). */
static unsigned ref_overflow_check(double v, bool f16, bool nanoo)
{
    if (isnan(v) || v == 0.0)
        return 0;
    bool over;
    if (isinf(v)) {
        over = true;
    } else {
        int bits = f16 ? 11 : 24;
        int e;
        double m = frexp(fabs(v), &e);
        double rounded = ldexp(nearbyint(ldexp(m, bits)), e - bits);
        over = rounded > (f16 ? 65504.0 : (double)FLT_MAX);
    }
    if (!over)
        return 0;
    return (f16 && nanoo) ? (FP_EXC_OFLO | FP_EXC_INV) : FP_EXC_OFLO;
}

static unsigned ref_aacc_read_flags(float v, bool f16, bool nanoo)
{
    if (isinf(v))
        return f16 ? (FP_EXC_OFLO | FP_EXC_INV) : FP_EXC_OFLO;
    return ref_overflow_check(v, f16, nanoo);
}

/* The dot product in double without the exponent window: wrong where the
 * double sum is inexact.  The adversarial tests show that they hit such
 * vectors, which the window must send to the exact path. */
static float naive_dot4(const uint16_t x[4], const uint16_t w[4])
{
    double p[4];
    for (int i = 0; i < 4; i++)
        p[i] = (double)(fp16_to_f32(x[i]) * fp16_to_f32(w[i]));
    return (float)((p[0] + p[1]) + (p[2] + p[3]));
}

/* Largest minus smallest binary exponent of the non-zero products. */
static int product_span(const uint16_t x[4], const uint16_t w[4])
{
    int emax = -1000, emin = 1000;
    for (int i = 0; i < 4; i++) {
        float p = fp16_to_f32(x[i]) * fp16_to_f32(w[i]);
        if (p == 0.0f)
            continue;
        int e;
        frexpf(p, &e);
        emax = e > emax ? e : emax;
        emin = e < emin ? e : emin;
    }
    return emax >= emin ? emax - emin : 0;
}

/*
 * One issue of an f16-input AMP instruction as the original executor
 * computed it, unit by unit (ISA2 pseudo-code, amp.h): reads the state
 * before the issue, writes the expected state after it into the ref_*
 * arguments.  Returns the expected flow.
 */
typedef struct amp_expect {
    uint32_t aacc[ISA_AACC_WORDS];
    uint32_t a[16];
    uint32_t fp_sts;
    uint64_t prng[2];
    enum isa_flow flow;
} amp_expect;

static bool ref_signals(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && !(h & 0x0200u); }
static bool ref_nan_or_inf(uint16_t h) { return (h & 0x7c00u) == 0x7c00u; }
static bool ref_f32_snan(uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) && !(b & 0x00400000u); }

static uint16_t ref_f16_result(float v, bool stochastic, uint32_t random, bool nanoo, uint32_t *fpx)
{
    if (stochastic)
        v = fp16_stochastic_round(v, random);
    *fpx |= ref_aacc_read_flags(v, true, nanoo);
    if (isnan(v) || isinf(v))
        return FP16_TILE_QNAN;
    return fp16_from_f32_tile(v, nanoo ? FP16_SAT_NAN : FP16_SAT_MAX);
}

static enum isa_flow ref_f16_amp(const isa_tile_state *t, const isa_context *c, enum isa_op op, unsigned dst,
                                 unsigned src0, unsigned src1, unsigned flags, amp_expect *x_out)
{
    unsigned phase = flags & 3u, ee = (flags >> 2) & 3u;
    bool siso = op == ISA_OP_AMP_F16V4SISO, v4 = op == ISA_OP_AMP_F16V4HIHOV4;
    unsigned sets = v4 ? 2 : 1;
    uint32_t ctl = c->csr[ISA_CSR_FP_CTL];
    bool nanoo = (ctl & FP_CTL_NANOO) != 0;
    memcpy(x_out->aacc, c->amp.aacc, sizeof x_out->aacc);
    memcpy(x_out->a, c->a, sizeof x_out->a);
    x_out->prng[0] = c->prng[0];
    x_out->prng[1] = c->prng[1];

    uint16_t x[4] = {(uint16_t)c->a[src0], (uint16_t)(c->a[src0] >> 16), (uint16_t)c->a[src0 + 1],
                     (uint16_t)(c->a[src0 + 1] >> 16)};
    uint32_t fpx = 0;
    for (unsigned i = 0; i < 4; i++)
        if (ref_signals(x[i]))
            fpx |= FP_EXC_INV;
    float partial[4];
    if (siso) {
        uint32_t p0 = c->a[src1], p1 = c->a[src1 + 1];
        if (ref_f32_snan(p0) || ref_f32_snan(p1))
            fpx |= FP_EXC_INV;
        for (unsigned i = 0; i < 2; i++) {
            float f = fp32_flush(bits_f32(c->a[src1 + i]));
            partial[i] = isnan(f) ? fp32_qnan() : f;
        }
    } else {
        unsigned n = v4 ? 4 : 2;
        for (unsigned i = 0; i < n; i++) {
            uint16_t h = (uint16_t)(c->a[src1 + i / 2] >> (16 * (i & 1)));
            if (ref_signals(h))
                fpx |= FP_EXC_INV;
            partial[i] = ref_nan_or_inf(h) ? fp32_qnan() : fp16_to_f32(h);
        }
    }
    for (unsigned k = 0; k < sets * 8; k++) {
        if (((k % 8) >> 1) > ee)
            continue;
        uint64_t cw = isa_amp_cwei(&t->amp, k * 4 + phase);
        for (unsigned i = 0; i < 4; i++)
            if (ref_signals((uint16_t)(cw >> (16 * i))))
                fpx |= FP_EXC_INV;
    }

    float out[4];
    for (unsigned s = 0; s < sets; s++) {
        unsigned b = s * 16 + (phase ? 1 : 0);
        out[2 * s] = bits_f32(c->amp.aacc[b]);
        out[2 * s + 1] = bits_f32(c->amp.aacc[b + 2]);
    }
    uint32_t next[ISA_AACC_WORDS];
    memcpy(next, c->amp.aacc, sizeof next);
    for (unsigned k = 0; k < sets * 8; k++) {
        unsigned engine = (k % 8) >> 1;
        if (engine > ee)
            continue;
        uint64_t cw = isa_amp_cwei(&t->amp, k * 4 + phase);
        uint16_t w[4] = {(uint16_t)cw, (uint16_t)(cw >> 16), (uint16_t)(cw >> 32), (uint16_t)(cw >> 48)};
        float dot = isa_amp_f16_dot4_exact(w, x);
        bool behind = engine + 1 < 4 && engine + 1 <= ee;
        float incoming = partial[(k / 8) * 2 + (k & 1)];
        float even, odd;
        if (phase == 0) {
            even = ref_fp32_add(bits_f32(c->amp.aacc[2 * k + 1]), dot);
            odd = behind ? bits_f32(c->amp.aacc[2 * (k + 2)]) : incoming;
        } else {
            even = ref_fp32_add(bits_f32(c->amp.aacc[2 * k]), dot);
            odd = behind ? bits_f32(c->amp.aacc[2 * (k + 2) + 1]) : incoming;
        }
        next[2 * k] = f32_bits(even);
        next[2 * k + 1] = f32_bits(odd);
    }

    unsigned n_out = 2 * sets;
    uint32_t dst_words[2] = {0, 0};
    uint64_t prng[2] = {c->prng[0], c->prng[1]};
    if (siso) {
        for (unsigned i = 0; i < n_out; i++)
            fpx |= ref_aacc_read_flags(out[i], false, false);
        for (unsigned i = 0; i < 2; i++)
            dst_words[i] = isnan(out[i]) ? FP32_TILE_QNAN_BITS : f32_bits(fp32_flush(out[i]));
    } else {
        bool stochastic = (ctl & FP_CTL_ESR) != 0;
        uint64_t r[2] = {0, 0};
        if (stochastic)
            fp_prng_advance(prng, r);
        uint16_t h[4];
        for (unsigned i = 0; i < n_out; i++)
            h[i] = ref_f16_result(out[i], stochastic, fp16_sr_bits(r, i), nanoo, &fpx);
        for (unsigned i = 0; i < n_out; i += 2)
            dst_words[i / 2] = (uint32_t)h[i] | ((uint32_t)h[i + 1] << 16);
    }

    x_out->fp_sts = c->csr[ISA_CSR_FP_STS] | fpx;
    if (fpx & ctl & (FP_EXC_INV | FP_EXC_DIV0 | FP_EXC_OFLO))
        return x_out->flow = ISA_FLOW_FAULT;
    memcpy(x_out->aacc, next, sizeof next);
    x_out->prng[0] = prng[0];
    x_out->prng[1] = prng[1];
    if (dst < 14)
        x_out->a[dst] = dst_words[0];
    if (op != ISA_OP_AMP_F16V4HIHO && dst + 1 < 14)
        x_out->a[dst + 1] = dst_words[1];
    return x_out->flow = ISA_FLOW_NEXT;
}

/* ---- the dot product ------------------------------------------------------ */

static unsigned dot_mismatches(const uint16_t x[4], const uint16_t w[4])
{
    float fast = isa_amp_f16_dot4(x, w), exact = isa_amp_f16_dot4_exact(x, w);
    return f32_bits(fast) != f32_bits(exact);
}

/* Random f16 bit patterns, and random finite values of every range. */
static void test_dot4_random(void)
{
    unsigned bad = 0;
    for (unsigned n = 0; n < 1000000; n++) {
        uint16_t x[4], w[4];
        uint64_t a = rnd(), b = rnd();
        for (int i = 0; i < 4; i++) {
            x[i] = (uint16_t)(a >> (16 * i));
            w[i] = (uint16_t)(b >> (16 * i));
        }
        bad += dot_mismatches(x, w);
        for (int i = 0; i < 4; i++) {
            x[i] = rnd_f16_finite();
            w[i] = rnd_f16_finite();
        }
        bad += dot_mismatches(x, w);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/*
 * Vectors around the edge of the exponent window (DOT4_MAX_SPAN = 29 in
 * exec_amp.c): products placed at chosen exponents, with the large ones
 * cancelling and the small ones landing on or next to rounding
 * midpoints.  Every one must match the exact path; the naive double sum
 * must fail on some of them (so a window that is too wide would be
 * caught), and both sides of the window must be exercised.
 */
static void test_dot4_adversarial(void)
{
    unsigned bad = 0, naive_wrong = 0, inside = 0, outside = 0;
    for (unsigned n = 0; n < 1000000; n++) {
        uint16_t x[4], w[4];
        /* Exponent fields: a product of fields ex, ew is about
         * 2^(ex + ew - 30); spreads up to 60 binades. */
        unsigned base = 15 + rnd_below(16);
        for (int i = 0; i < 4; i++) {
            unsigned drop = rnd_below(4) ? rnd_below(40) : 0;
            unsigned ex = base, ew = base;
            unsigned d = drop;
            while (d && ex > 1) { ex--; d--; }
            while (d && ew > 1) { ew--; d--; }
            bool pow2 = rnd_below(3) == 0;              /* powers of two make ties */
            x[i] = (uint16_t)((rnd() & 0x8000u) | (ex << 10) | (pow2 ? 0 : rnd() & 0x3ffu));
            w[i] = (uint16_t)((ex == 1 && rnd_below(2) ? 0 : (ew << 10)) | (pow2 ? 0 : rnd() & 0x3ffu));
            if (d && rnd_below(2))
                w[i] = (uint16_t)(rnd() & 0x3ffu);      /* subnormal weight: deeper still */
        }
        switch (rnd_below(4)) {
        case 0:
            /* Exact cancellation of the two largest terms. */
            x[1] = (uint16_t)(x[0] ^ 0x8000u);
            w[1] = w[0];
            break;
        case 1:
            /* Near cancellation: one step apart. */
            x[1] = (uint16_t)((x[0] ^ 0x8000u) + ((x[0] & 0x3ffu) != 0x3ffu ? 1 : 0));
            w[1] = w[0];
            break;
        default:
            break;
        }
        bad += dot_mismatches(x, w);
        int span = product_span(x, w);
        if (span <= 29)
            inside++;
        else
            outside++;
        if (f32_bits(naive_dot4(x, w)) != f32_bits(isa_amp_f16_dot4_exact(x, w)))
            naive_wrong++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(inside > 100000);
    CU_ASSERT(outside > 100000);
    CU_ASSERT(naive_wrong > 0);

    /* A known case: 2^10 + 2^-14 + 2^-46.  The exact sum lies just above
     * the midpoint 2^10 + 2^-14 and rounds up; the double sum loses 2^-46
     * and then rounds the tie to even (down).  Span 56: exact path. */
    const uint16_t xk[4] = {0x5400u /* 2^6 */, 0x2000u /* 2^-7 */, 0x0002u /* 2^-23 */, 0};
    const uint16_t wk[4] = {0x4c00u /* 2^4 */, 0x2000u /* 2^-7 */, 0x0002u /* 2^-23 */, 0x3c00u};
    CU_ASSERT_EQUAL(f32_bits(isa_amp_f16_dot4_exact(xk, wk)), f32_bits(0x1p10f + 0x1p-13f));
    CU_ASSERT_EQUAL(f32_bits(naive_dot4(xk, wk)), f32_bits(0x1p10f));
    CU_ASSERT_EQUAL(f32_bits(isa_amp_f16_dot4(xk, wk)), f32_bits(0x1p10f + 0x1p-13f));

    /* Ties inside the window: 1 + 2^-23 + 2^-24 rounds to even, up, and
     * 1 + 2^-24 down; the signs of zero sums. */
    const uint16_t one = 0x3c00u, m11 = 0x1000u /* 2^-11 */, m12 = 0x0c00u /* 2^-12 */, m13 = 0x0800u;
    const uint16_t xt[4] = {one, m12, m12, 0}, wt[4] = {one, m11, m12, 0};
    CU_ASSERT_EQUAL(f32_bits(isa_amp_f16_dot4(xt, wt)), f32_bits(1.0f + 0x1p-22f));
    const uint16_t xu[4] = {one, m12, 0, 0}, wu[4] = {one, m12, 0, 0};
    CU_ASSERT_EQUAL(f32_bits(isa_amp_f16_dot4(xu, wu)), f32_bits(1.0f));
    const uint16_t xv[4] = {one, m13, m13, 0}, wv[4] = {one, m11, m13, 0};
    CU_ASSERT_EQUAL(f32_bits(isa_amp_f16_dot4(xv, wv)), f32_bits(isa_amp_f16_dot4_exact(xv, wv)));
    const uint16_t nz[4] = {0x8000u, 0x8000u, 0x8000u, 0x8000u}, pz[4] = {0, 0, 0, 0};
    CU_ASSERT_EQUAL(f32_bits(isa_amp_f16_dot4(nz, pz)), 0x80000000u);      /* every product -0 */
    const uint16_t mixed[4] = {0x8000u, 0x8000u, 0, 0x8000u};
    CU_ASSERT_EQUAL(f32_bits(isa_amp_f16_dot4(mixed, pz)), 0u);
    const uint16_t xc[4] = {one, (uint16_t)(one | 0x8000u), 0x8000u, 0x8000u}, wc[4] = {one, one, 0, 0};
    CU_ASSERT_EQUAL(f32_bits(isa_amp_f16_dot4(xc, wc)), 0u);               /* 1 - 1 = +0 */
}

/* ---- fp32_add and the overflow check --------------------------------------- */

static const uint32_t f32_edges[] = {
    0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00400000u, 0x00800000u, 0x80800000u,
    0x00800001u, 0x00ffffffu, 0x01000000u, 0x3f800000u, 0xbf800000u, 0x3f800001u, 0xbf7fffffu,
    0x33800000u, 0x4b800000u, 0x7f7fffffu, 0xff7fffffu, 0x7f7ffffeu, 0x7f000000u, 0x7e800000u,
    0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fa00000u, 0x477fe000u,
    0x477ff000u, 0x38800000u, 0x387fe000u, 0x34000000u,
};

static unsigned add_mismatch(uint32_t a, uint32_t b)
{
    return f32_bits(fp32_add(bits_f32(a), bits_f32(b))) != f32_bits(ref_fp32_add(bits_f32(a), bits_f32(b)));
}

/* f32 bits of the kinds that make additions interesting. */
static uint32_t rnd_f32_bits(void)
{
    switch (rnd_below(6)) {
    case 0:
        return (uint32_t)rnd();                               /* anything */
    case 1:
        return (uint32_t)(rnd() & 0x80ffffffu);               /* denormals and the smallest normals */
    case 2:
        return (uint32_t)((rnd() & 0x807fffffu) | 0x7e800000u);  /* near overflow */
    default:
        return (uint32_t)((rnd() & 0x807fffffu) | ((120u + rnd_below(16)) << 23));
    }
}

static void test_fp32_add_fast(void)
{
    unsigned n_edges = sizeof f32_edges / sizeof f32_edges[0], bad = 0;
    for (unsigned i = 0; i < n_edges; i++)
        for (unsigned j = 0; j < n_edges; j++) {
            uint32_t a = f32_edges[i], b = f32_edges[j];
            bad += add_mismatch(a, b) + add_mismatch(a ^ 0x80000000u, b) + add_mismatch(a + 1, b - 1);
        }
    for (unsigned n = 0; n < 2000000; n++) {
        uint32_t a = rnd_f32_bits(), b = rnd_f32_bits();
        bad += add_mismatch(a, b);
        /* Near cancellation, including denormal results. */
        bad += add_mismatch(a, (a ^ 0x80000000u) + (uint32_t)rnd_below(5) - 2u);
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* What the fast path must produce: flushed operands and results. */
    CU_ASSERT_EQUAL(f32_bits(fp32_add(bits_f32(0x00800001u), bits_f32(0x80800000u))), 0u);
    CU_ASSERT_EQUAL(f32_bits(fp32_add(bits_f32(0x80800001u), bits_f32(0x00800000u))), 0x80000000u);
    CU_ASSERT_EQUAL(f32_bits(fp32_add(bits_f32(0x00000001u), 1.0f)), f32_bits(1.0f));
    CU_ASSERT_EQUAL(f32_bits(fp32_add(bits_f32(0x7f7fffffu), bits_f32(0x73000000u))), 0x7f800000u);
    CU_ASSERT_EQUAL(f32_bits(fp32_add(-0.0f, -0.0f)), 0x80000000u);
    CU_ASSERT_EQUAL(f32_bits(fp32_add(-0.0f, 0.0f)), 0u);
}

static void test_overflow_check_fast(void)
{
    static const double edges[] = {
        0.0, 65504.0, 65504.5, 65519.0, 65519.999, 65520.0, 65536.0, 1e30, (double)FLT_MAX,
        (double)FLT_MAX * (1 + 0x1p-25), (double)FLT_MAX * (1 + 0x1p-24), (double)FLT_MAX * 1.5, 1e300,
        INFINITY, NAN, 0x1p-30, 5.96e-8,
    };
    unsigned bad = 0;
    for (unsigned i = 0; i < sizeof edges / sizeof edges[0]; i++)
        for (int sign = 0; sign < 2; sign++)
            for (int k = 0; k < 4; k++) {
                double v = sign ? -edges[i] : edges[i];
                bad += fp_overflow_check(v, k & 1, k & 2) != ref_overflow_check(v, k & 1, k & 2);
            }
    for (unsigned n = 0; n < 300000; n++) {
        float f = bits_f32(rnd_f32_bits());
        double d = ldexp((double)(rnd() >> 11), (int)rnd_below(200) - 100 - 53);
        for (int k = 0; k < 4; k++) {
            bad += fp_overflow_check(f, k & 1, k & 2) != ref_overflow_check(f, k & 1, k & 2);
            bad += fp_overflow_check(d, k & 1, k & 2) != ref_overflow_check(d, k & 1, k & 2);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* ---- whole issues against the reference model ------------------------------- */

/* f32 bits for an accumulator: mostly values an f16 result can hold, some
 * beyond ±65504, denormals, zeros, infinities and NaNs. */
static uint32_t rnd_aacc(void)
{
    unsigned k = rnd_below(100);
    if (k < 70)
        return (uint32_t)((rnd() & 0x807fffffu) | ((110u + rnd_below(32)) << 23));
    if (k < 80)
        return (uint32_t)(rnd() & 0x80000000u);
    if (k < 85)
        return (uint32_t)(rnd() & 0x807fffffu);              /* denormal */
    if (k < 92)
        return (uint32_t)((rnd() & 0x807fffffu) | ((142u + rnd_below(10)) << 23));   /* about 2^15 .. 2^24 */
    if (k < 96)
        return (uint32_t)((rnd() & 0x80000000u) | 0x7f800000u);
    return (uint32_t)((rnd() & 0x80000000u) | 0x7f800000u | 1u | (uint32_t)(rnd() & 0x7fffffu));
}

/* A weight entry: four f16 of one of several distributions. */
static uint64_t rnd_weights(unsigned style)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 4; i++) {
        uint16_t h;
        switch (style) {
        case 0:
            h = f16_with_exp(12 + rnd_below(6));            /* narrow: fast issues */
            break;
        case 1:
            h = rnd_f16_finite();
            break;
        default:
            h = rnd_f16();
            break;
        }
        v |= (uint64_t)h << (16 * i);
    }
    return v;
}

static uint32_t rnd_f16_pair(unsigned style)
{
    uint16_t lo = style == 0 ? f16_with_exp(10 + rnd_below(8)) : style == 1 ? rnd_f16_finite() : rnd_f16();
    uint16_t hi = style == 0 ? f16_with_exp(10 + rnd_below(8)) : style == 1 ? rnd_f16_finite() : rnd_f16();
    return (uint32_t)lo | ((uint32_t)hi << 16);
}

typedef struct issue_stats {
    unsigned issues, faults, mismatches;
} issue_stats;

/* Run one issue through the executor and the reference; count mismatches. */
static void check_issue(isa_tile_state *t, isa_context *w, enum isa_op op, unsigned dst, unsigned src0,
                        unsigned src1, unsigned flags, issue_stats *st)
{
    amp_expect e;
    enum isa_flow want = ref_f16_amp(t, w, op, dst, src0, src1, flags, &e);
    isa_insn in = fx_insn(op, (int)dst, (int)src0, (int)src1, (int)flags);
    enum isa_flow got = fx_exec(t, w, &in);
    bool ok = got == want && memcmp(w->amp.aacc, e.aacc, sizeof e.aacc) == 0
              && memcmp(w->a, e.a, sizeof e.a) == 0 && w->csr[ISA_CSR_FP_STS] == e.fp_sts
              && w->prng[0] == e.prng[0] && w->prng[1] == e.prng[1];
    if (got == ISA_FLOW_FAULT) {
        ok = ok && fx_take_fault(t).exception == ISA_EXC_FP;
        st->faults++;
    }
    if (!ok && st->mismatches++ < 5)
        fprintf(stderr, "\namp issue mismatch: %s flags %u, FP_CTL 0x%x, flow %d/%d\n", isa_get(op)->mnemonic,
                flags, w->csr[ISA_CSR_FP_CTL], got, want);
    if (!ok) {
        /* Resynchronise so that one mismatch is reported once. */
        memcpy(w->amp.aacc, e.aacc, sizeof e.aacc);
        memcpy(w->a, e.a, sizeof e.a);
        w->csr[ISA_CSR_FP_STS] = e.fp_sts;
        w->prng[0] = e.prng[0];
        w->prng[1] = e.prng[1];
    }
    st->issues++;
}

static void test_issue_random(void)
{
    static const enum isa_op ops[] = {ISA_OP_AMP_F16V4HIHO, ISA_OP_AMP_F16V4SISO, ISA_OP_AMP_F16V4HIHOV4};
    static const unsigned regs[][3] = {{4, 0, 2}, {0, 0, 2}, {6, 2, 4}, {12, 8, 10}, {2, 2, 2}};
    issue_stats st = {0, 0, 0};
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    isa_context *s = fx_supervisor(t);
    for (unsigned trial = 0; trial < 6000; trial++) {
        unsigned wstyle = rnd_below(10) < 6 ? 0 : rnd_below(10) < 7 ? 1 : 2;
        unsigned vstyle = rnd_below(10) < 6 ? 0 : rnd_below(10) < 7 ? 1 : 2;
        for (unsigned i = 0; i < ISA_CWEI_ENTRIES; i++)
            isa_amp_set_cwei(&t->amp, i, rnd_weights(wstyle));
        bool calm = rnd_below(2) == 0;                 /* accumulators f16 can hold */
        for (unsigned i = 0; i < ISA_AACC_WORDS; i++)
            w->amp.aacc[i] = calm ? (uint32_t)((rnd() & 0x807fffffu) | ((115u + rnd_below(20)) << 23))
                                  : rnd_aacc();
        w->csr[ISA_CSR_FP_STS] = 0;
        unsigned ctl = 0;
        if (rnd_below(4) == 0)
            ctl |= FP_CTL_ESR;
        if (rnd_below(4) == 0)
            ctl |= FP_CTL_NANOO;
        if (rnd_below(5) == 0)
            ctl |= (uint32_t)rnd() & (FP_EXC_INV | FP_EXC_OFLO | FP_EXC_DIV0);
        w->csr[ISA_CSR_FP_CTL] = ctl;
        w->prng[0] = rnd();
        w->prng[1] = rnd() | 1u;
        enum isa_op op = ops[rnd_below(3)];
        const unsigned *r = regs[rnd_below(5)];
        for (unsigned k = 0; k < 24; k++) {
            for (unsigned i = 0; i < 14; i++)
                w->a[i] = op == ISA_OP_AMP_F16V4SISO && (i == r[2] || i == r[2] + 1) && rnd_below(2)
                              ? rnd_aacc() : rnd_f16_pair(vstyle);
            unsigned ee = rnd_below(4) ? 3 : rnd_below(3);
            unsigned flags = ISA_AMP_F16_FLAGS(ee + 1, k % 4);
            check_issue(t, w, op, r[0], r[1], r[2], flags, &st);
            /* Rewrite some weights between issues: directly, or by the
             * supervisor's ld64putcs / ld128putcs. */
            switch (rnd_below(8)) {
            case 0:
                isa_amp_set_cwei(&t->amp, rnd_below(ISA_CWEI_ENTRIES), rnd_weights(wstyle));
                break;
            case 1: {
                unsigned index = rnd_below(ISA_CWEI_ENTRIES);
                fx_poke64(t, FX_DATA1, rnd_weights(wstyle));
                s->csr[ISA_CSR_CCCSLOAD] = FX_DATA1;
                CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD64PUTCS, (int)index), ISA_FLOW_NEXT);
                break;
            }
            case 2: {
                unsigned index = 2 * rnd_below(ISA_CWEI_ENTRIES / 2);
                fx_poke64(t, FX_DATA1, rnd_weights(wstyle));
                fx_poke64(t, FX_DATA1 + 8, rnd_weights(wstyle));
                s->csr[ISA_CSR_CCCSLOAD] = FX_DATA1;
                CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD128PUTCS, (int)index), ISA_FLOW_NEXT);
                break;
            }
            default:
                break;
            }
        }
    }
    CU_ASSERT_EQUAL(st.mismatches, 0);
    CU_ASSERT(st.faults > 100);
    fx_tile_free(t);
}

/* The case the fast issue is made for (all engines, narrow values, no
 * ESR), long sequences of it, with the results read out compared too. */
static void test_issue_steady(void)
{
    issue_stats st = {0, 0, 0};
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    for (unsigned trial = 0; trial < 40; trial++) {
        for (unsigned i = 0; i < ISA_CWEI_ENTRIES; i++)
            isa_amp_set_cwei(&t->amp, i, rnd_weights(0));
        memset(w->amp.aacc, 0, sizeof w->amp.aacc);
        w->csr[ISA_CSR_FP_CTL] = trial % 2 ? FP_EXC_INV | FP_EXC_OFLO : 0;
        enum isa_op op = trial % 3 == 0 ? ISA_OP_AMP_F16V4HIHO : ISA_OP_AMP_F16V4HIHOV4;
        for (unsigned k = 0; k < 2000; k++) {
            w->a[0] = rnd_f16_pair(0);
            w->a[1] = rnd_f16_pair(0);
            w->a[2] = rnd_f16_pair(0);
            w->a[3] = rnd_f16_pair(0);
            check_issue(t, w, op, 4, 0, 2, ISA_AMP_F16_FLAGS(4u, k % 4), &st);
        }
    }
    CU_ASSERT_EQUAL(st.mismatches, 0);
    CU_ASSERT_EQUAL(st.issues, 80000);
    fx_tile_free(t);
}

/*
 * The exponent window checked per issue (inputs' span plus weights' span)
 * and per unit (the products' span), through the executor: products
 * 2^10, 2^-14 (half an f32 step of 2^10) and two that cancel to 2^-44
 * (1024 * 556 - 1097 * 519 = 1, in units of 2^-44).  The exact sum lies
 * above the midpoint and rounds up to 2^10 + 2^-13; in double, 2^-44 is
 * lost and the midpoint then rounds to even, 2^10.  Inputs span 20
 * binades, weights 15: outside the window, the exact path must decide.
 */
static void test_issue_window_edge(void)
{
    const uint16_t x[4] = {0x6400u /* 2^10 */, 0x2000u /* 2^-7 */, 0x1400u /* 2^-10 */,
                           0x9449u /* -1097 * 2^-20 */};
    const uint16_t w[4] = {0x3c00u /* 1 */, 0x2000u /* 2^-7 */, 0x022cu /* 556 * 2^-24 */,
                           0x0207u /* 519 * 2^-24 */};
    CU_ASSERT_EQUAL(f32_bits(isa_amp_f16_dot4_exact(x, w)), f32_bits(0x1p10f + 0x1p-13f));
    CU_ASSERT_EQUAL(f32_bits(naive_dot4(x, w)), f32_bits(0x1p10f));
    CU_ASSERT_EQUAL(f32_bits(isa_amp_f16_dot4(x, w)), f32_bits(0x1p10f + 0x1p-13f));

    issue_stats st = {0, 0, 0};
    isa_tile_state *t = fx_tile_new();
    isa_context *wk = fx_worker(t, 1);
    uint64_t entry = 0;
    for (unsigned i = 0; i < 4; i++)
        entry |= (uint64_t)w[i] << (16 * i);
    for (unsigned k = 0; k < 16; k++)
        isa_amp_set_cwei(&t->amp, 4 * k + 1, entry);             /* phase 1, every unit */
    wk->a[0] = (uint32_t)x[0] | (uint32_t)x[1] << 16;
    wk->a[1] = (uint32_t)x[2] | (uint32_t)x[3] << 16;
    wk->a[2] = wk->a[3] = 0;
    check_issue(t, wk, ISA_OP_AMP_F16V4HIHOV4, 4, 0, 2, ISA_AMP_F16_FLAGS(4u, 1u), &st);
    CU_ASSERT_EQUAL(st.mismatches, 0);
    CU_ASSERT_EQUAL(wk->amp.aacc[0], f32_bits(0x1p10f + 0x1p-13f));
    CU_ASSERT_EQUAL(wk->amp.aacc[30], f32_bits(0x1p10f + 0x1p-13f));
    fx_tile_free(t);
}

/* Accumulators holding f32 denormals are read as ±0: with a zero dot
 * product a negative denormal gives +0 (-0 + +0), not -0. */
static void test_issue_denormal_accumulators(void)
{
    issue_stats st = {0, 0, 0};
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    for (unsigned i = 0; i < ISA_CWEI_ENTRIES; i++)
        isa_amp_set_cwei(&t->amp, i, 0x3c003c003c003c00ull);   /* all weights 1.0 */
    for (unsigned k = 0; k < 4000; k++) {
        for (unsigned i = 0; i < ISA_AACC_WORDS; i++)
            w->amp.aacc[i] = (uint32_t)(rnd() & 0x807fffffu);   /* denormals and zeros */
        bool zero_input = k % 2 == 0;
        w->a[0] = zero_input ? 0 : rnd_f16_pair(0);
        w->a[1] = zero_input ? 0 : rnd_f16_pair(0);
        w->a[2] = rnd_f16_pair(0);
        w->a[3] = rnd_f16_pair(0);
        check_issue(t, w, k % 3 ? ISA_OP_AMP_F16V4HIHOV4 : ISA_OP_AMP_F16V4HIHO, 4, 0, 2,
                    ISA_AMP_F16_FLAGS(4u, k % 4), &st);
    }
    CU_ASSERT_EQUAL(st.mismatches, 0);
    /* And one by hand: phase 1 sums unit 0's even accumulator. */
    memset(w->amp.aacc, 0, sizeof w->amp.aacc);
    w->amp.aacc[0] = 0x80000001u;
    w->a[0] = w->a[1] = 0;
    CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_AMP_F16V4HIHOV4, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(4u, 1u)), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(w->amp.aacc[0], 0u);
    fx_tile_free(t);
}

/* Results read out: every f16 rounding boundary of the f32 values an
 * accumulator can hold (f16 values, the midpoints between them and one
 * f32 step either side), subnormal f16 results, f32 denormals, and values
 * past 65504, in the four lanes of f16v4hihov4amp. */
static void test_issue_readout(void)
{
    issue_stats st = {0, 0, 0};
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    uint32_t values[4];
    unsigned nv = 0;
    for (uint32_t h = 0; h <= 0x7c00u; h++) {
        float lo = fp16_to_f32((uint16_t)h), hi = fp16_to_f32((uint16_t)(h + 1));
        uint32_t mid = f32_bits(h < 0x7c00u ? (lo + hi) / 2 : 65520.0f);
        const uint32_t cand[] = {f32_bits(lo), mid - 1, mid, mid + 1, (uint32_t)(rnd() & 0x7fffffu)};
        for (unsigned j = 0; j < sizeof cand / sizeof cand[0]; j++) {
            values[nv++] = cand[j] | (uint32_t)(rnd() & 0x80000000u);
            if (nv < 4)
                continue;
            nv = 0;
            unsigned phase = rnd_below(4), b = phase ? 1 : 0;
            memset(w->amp.aacc, 0, sizeof w->amp.aacc);
            w->amp.aacc[b] = values[0];
            w->amp.aacc[b + 2] = values[1];
            w->amp.aacc[16 + b] = values[2];
            w->amp.aacc[18 + b] = values[3];
            w->a[0] = w->a[1] = w->a[2] = w->a[3] = 0;
            w->csr[ISA_CSR_FP_STS] = 0;
            w->csr[ISA_CSR_FP_CTL] = rnd_below(4) == 0 ? FP_CTL_NANOO : 0;
            check_issue(t, w, ISA_OP_AMP_F16V4HIHOV4, 4, 0, 2, ISA_AMP_F16_FLAGS(4u, phase), &st);
        }
    }
    CU_ASSERT_EQUAL(st.mismatches, 0);
    CU_ASSERT(st.issues > 38000);
    fx_tile_free(t);
}

/* The decoded weights follow $CWEI: an issue after a rewrite (by
 * isa_amp_set_cwei or ld64putcs) uses the new weights. */
static void test_weight_cache(void)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    isa_context *s = fx_supervisor(t);
    const uint64_t one = 0x3c00u, two = 0x4000u;             /* weight element 0: 1.0 or 2.0 */
    isa_amp_set_cwei(&t->amp, 0, one);                         /* unit 0, phase 0 */
    w->a[0] = 0x4200u;                                         /* x0 = 3 */
    w->a[1] = w->a[2] = w->a[3] = 0;
    CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_AMP_F16V4HIHOV4, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(4u, 0u)), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(w->amp.aacc[0], f32_bits(3.0f));
    isa_amp_set_cwei(&t->amp, 0, two);
    CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_AMP_F16V4HIHOV4, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(4u, 0u)), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(w->amp.aacc[0], f32_bits(6.0f));           /* odd (0) + 2 * 3 */
    fx_poke64(t, FX_DATA1, 0x4400u);                           /* 4.0 */
    s->csr[ISA_CSR_CCCSLOAD] = FX_DATA1;
    CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD64PUTCS, 0), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_AMP_F16V4HIHOV4, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(4u, 0u)), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(w->amp.aacc[0], f32_bits(12.0f));
    /* A signalling NaN weight in a phase's entries raises INV from the
     * fast issue's cache too, and only for the engines enabled. */
    isa_amp_set_cwei(&t->amp, 4 * 7 + 1, 0x7d00u);           /* unit 7 (engine 3), phase 1 */
    CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_AMP_F16V4HIHO, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(3u, 1u)), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], 0);
    CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_AMP_F16V4HIHO, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(4u, 1u)), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], FP_EXC_INV);
    CU_ASSERT_EQUAL(w->amp.aacc[14], 0x7fd9c000u);            /* unit 7: the quiet NaN */
    fx_tile_free(t);
}

/* ---- tile memory elements and the pace access check ------------------------ */

/* tmem_element as it was written, with divisions. */
static unsigned ref_element(const tile_memory *m, uint32_t addr)
{
    uint32_t off = addr - m->base;
    if (off >= m->size_bytes)
        return TMEM_NO_ELEMENT;
    uint32_t r1_off = m->region1_base - m->base;
    if (off < r1_off)
        return off / ISA_ELEMENT_BYTES;
    uint32_t r0_elements = r1_off / ISA_ELEMENT_BYTES;
    uint32_t in_r1 = off - r1_off;
    uint32_t pair = in_r1 / (2 * ISA_ELEMENT_BYTES);
    if ((pair + 1u) * (2 * ISA_ELEMENT_BYTES) > m->size_bytes - r1_off)
        return r0_elements + 2u * pair;
    return r0_elements + 2u * pair + ((addr >> 3) & 1u);
}

static void test_element_reference(void)
{
    /* GC200 (624 KiB), GC2-like 256 KiB (an unpaired last element), all
     * region 0, exactly region 0, region 1 one element long, 1 MiB. */
    static const uint32_t sizes[] = {638976u, 262144u, 65536u, 0x34000u, 0x38000u, 1048576u};
    unsigned bad = 0;
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        tile_memory m;
        tmem_init(&m, ISA_MEMORY_BASE, sizes[i]);
        for (uint32_t addr = m.base - 64; addr < m.base + m.size_bytes + 64; addr += 4)
            bad += tmem_element(&m, addr) != ref_element(&m, addr);
        bad += tmem_element(&m, 0) != TMEM_NO_ELEMENT;
        bad += tmem_element(&m, 0xfffffff8u) != TMEM_NO_ELEMENT;
        tmem_free(&m);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* ld2xst64pace from random packed addresses (in and out of range, aligned
 * or not, in either region, on equal or different elements): the outcome
 * is the first failing rule (range, region of the second load, alignment,
 * elements) or the two loads and the store. */
static void test_pace_checks(void)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    const tile_memory *m = &t->mem;
    unsigned bad = 0, done = 0, faults[ISA_EXC_UNIMPLEMENTED + 1] = {0};
    for (unsigned n = 0; n < 20000; n++) {
        uint32_t ea[3];
        for (unsigned i = 0; i < 3; i++) {
            unsigned k = rnd_below(20);
            uint32_t a = m->base + (uint32_t)rnd_below(m->size_bytes);
            if (k < 14)
                a &= ~7u;
            else if (k < 16)
                a = (uint32_t)rnd() & 0x1fffffu;
            else if (k < 18 && i > 0)
                a = (ea[i - 1] ^ 0x40u) & ~7u;                 /* often the same element */
            ea[i] = a & 0x1fffffu;
        }
        w->m[2] = (ea[0] & 0x1fffffu) | (ea[2] & 0x7ffu) << 21;
        w->m[3] = (ea[1] & 0x1fffffu) | ((ea[2] >> 11) & 0x3ffu) << 21;
        w->m[7] = 0;
        w->a[4] = (uint32_t)rnd();
        w->a[5] = (uint32_t)rnd();
        int want = -1;                                        /* -1: no fault */
        for (unsigned i = 0; i < 3 && want < 0; i++)
            if (ea[i] - m->base >= m->size_bytes)
                want = ISA_EXC_MEM_RANGE;
        if (want < 0 && ea[1] < m->region1_base)
            want = ISA_EXC_MEM_REGION;
        for (unsigned i = 0; i < 3 && want < 0; i++)
            if (ea[i] & 7u)
                want = ISA_EXC_MEM_ALIGN;
        if (want < 0 && (ref_element(m, ea[0]) == ref_element(m, ea[1])
                         || ref_element(m, ea[0]) == ref_element(m, ea[2])
                         || ref_element(m, ea[1]) == ref_element(m, ea[2])))
            want = ISA_EXC_MEM_CONFLICT;
        uint64_t before0 = 0, before1 = 0;
        if (want < 0) {
            before0 = fx_peek64(t, ea[0]);
            before1 = fx_peek64(t, ea[1]);
        }
        enum isa_flow f = fx_run(t, w, ISA_OP_LD2XST64PACE, 0, 4, 2, 7, 0);
        if (want < 0) {
            bad += f != ISA_FLOW_NEXT;
            bad += ((uint64_t)w->a[1] << 32 | w->a[0]) != before0;
            bad += ((uint64_t)w->a[3] << 32 | w->a[2]) != before1;
            bad += fx_peek64(t, ea[2]) != ((uint64_t)w->a[5] << 32 | w->a[4]);
            done++;
        } else {
            isa_fault fault = fx_take_fault(t);
            bad += f != ISA_FLOW_FAULT || fault.exception != (unsigned)want;
            faults[want]++;
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(done > 1000);
    CU_ASSERT(faults[ISA_EXC_MEM_RANGE] > 100);
    CU_ASSERT(faults[ISA_EXC_MEM_REGION] > 100);
    CU_ASSERT(faults[ISA_EXC_MEM_ALIGN] > 100);
    CU_ASSERT(faults[ISA_EXC_MEM_CONFLICT] > 100);
    fx_tile_free(t);
}

void test_register(void)
{
    ADD_SUITE("amp_fastpath",
              {"dot4: random vectors against the exact sum", test_dot4_random},
              {"dot4: window edges, cancellation, ties", test_dot4_adversarial},
              {"fp32_add: finite operands in f32", test_fp32_add_fast},
              {"fp_overflow_check: values up to the maximum", test_overflow_check_fast},
              {"f16 AMP issues against the reference model", test_issue_random},
              {"f16 AMP steady issues (the fast issue)", test_issue_steady},
              {"f16 AMP issue at the exponent window's edge", test_issue_window_edge},
              {"f16 AMP accumulators holding denormals", test_issue_denormal_accumulators},
              {"f16 AMP results read out at every rounding boundary", test_issue_readout},
              {"decoded weights follow $CWEI", test_weight_cache},
              {"tmem_element against the formula with divisions", test_element_reference},
              {"ld2xst64pace access checks against the rules", test_pace_checks});
}
