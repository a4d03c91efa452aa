/*
 * exec_amp.c — semantics of the AMP instructions (f16v4hihoamp,
 * f16v4sisoamp, f16v4hihov4amp, f32sisoamp, f32sisov2amp) and of the
 * supervisor's weight loads into $CWEI (ld64putcs, ld128putcs).
 *
 * The pipeline, engine chaining and rounding are described in amp.h; the
 * per-instruction pseudo-code this follows is ISA2 §3.7.3.3.16,
 * §3.7.3.3.18, §3.7.3.3.29, §3.7.3.7.25, §3.7.3.7.27, §3.7.5.3.18–19.
 *
 * Every executor works in the ISA's stages: read operands and check input
 * exceptions, compute new accumulator values into locals, check output
 * exceptions, and only then commit ($AACC, $TAS, the destination
 * registers, the PRNG).  (The f16 executors know every flag before the
 * accumulator update, which raises none, and update in place after the
 * check.)  A malign FP exception therefore leaves all state as it was,
 * apart from the sticky $FP_STS flags.
 *
 * Speed: an f16 AMP issue is 64 (or 32) multiply-accumulates, so the f16
 * instructions have fast paths, each giving bit for bit what the plain
 * code gives (tests/test_amp_fastpath.c compares them on millions of
 * random and adversarial cases):
 *   - the dot product sums exact products in double inside a proven
 *     exponent window (DOT4_MAX_SPAN, below) and uses the exact 128-bit
 *     sum (isa_amp_f16_dot4_exact) outside it;
 *   - the weights of each phase are kept decoded (amp.h,
 *     isa_amp_f16_phase): as doubles, with their NaN/infinity kinds and
 *     exponent spans, rebuilt only when $CWEI changes;
 *   - the common issue (all engines, round to nearest, nothing special
 *     among its operands: f16_issue_fast) runs on vectors and, on x86-64,
 *     in an AVX2 build picked at load time; everything else takes the
 *     unit-by-unit path (exec_f16_amp).
 */
#include <math.h>
#include <string.h>

#include "exec.h"
#include "fp16.h"
#include "fparith.h"

/* ---- the arithmetic -------------------------------------------------- */

__extension__ typedef unsigned __int128 amp_u128;

static inline float bits_f32(uint32_t b) { return isa_bits_f32(b); }
static inline uint32_t f32_bits(float f) { return isa_f32_bits(f); }

static inline float qnan32(void) { return bits_f32(FP32_TILE_QNAN_BITS); }

/* Denormal f32 -> zero of the same sign (ISA2 §2.9.4.1). */
static inline float ftz(float f)
{
    uint32_t b = f32_bits(f);
    if ((b & 0x7f800000u) == 0 && (b & 0x007fffffu) != 0)
        return bits_f32(b & 0x80000000u);
    return f;
}

static inline bool f16_is_nan_or_inf(uint16_t h) { return (h & 0x7c00u) == 0x7c00u; }
/* A signalling NaN or an infinity: both raise INV as an arithmetic input
 * (ISA2 §2.9.4.2). */
static inline bool f16_signals(uint16_t h) { return f16_is_nan_or_inf(h) && !(h & 0x0200u); }
static inline bool f32_is_snan(uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) && !(b & 0x00400000u); }

/* Round a non-negative integer v (< 2^100) times 2^scale to f32, nearest
 * even.  Exact when v has at most 24 significant bits. */
static float round_scaled(amp_u128 v, int scale)
{
    if (v == 0)
        return 0.0f;
    int top = 127;
    while (!((v >> top) & 1))
        top--;
    if (top > 23) {
        int drop = top - 23;
        amp_u128 kept = v >> drop;
        amp_u128 rest = v & (((amp_u128)1 << drop) - 1);
        amp_u128 half = (amp_u128)1 << (drop - 1);
        if (rest > half || (rest == half && (kept & 1)))
            kept++;
        /* kept may now be 2^24: still exact as a float. */
        return ldexpf((float)(uint32_t)kept, scale + drop);
    }
    return ldexpf((float)(uint32_t)v, scale);
}

float isa_amp_f16_dot4_exact(const uint16_t x[4], const uint16_t w[4])
{
    /* An f16 value is m * 2^e with m < 2^11 and e >= -24, so each product is
     * an integer multiple of 2^-48 below 2^32: the sum of four is an exact
     * integer of at most 82 bits once scaled by 2^48. */
    amp_u128 pos = 0, neg = 0;
    bool all_negative_zero = true;
    for (int i = 0; i < 4; i++) {
        if (f16_is_nan_or_inf(x[i]) || f16_is_nan_or_inf(w[i]))
            return qnan32();
        unsigned ex = (x[i] >> 10) & 0x1f, ew = (w[i] >> 10) & 0x1f;
        uint32_t mx = (x[i] & 0x3ffu) | (ex ? 0x400u : 0);
        uint32_t mw = (w[i] & 0x3ffu) | (ew ? 0x400u : 0);
        int shift = (ex ? (int)ex : 1) + (ew ? (int)ew : 1) - 2; /* exponent + 48 */
        bool negative = ((x[i] ^ w[i]) & 0x8000u) != 0;
        amp_u128 p = (amp_u128)((uint64_t)mx * mw) << shift;
        if (p != 0 || !negative)
            all_negative_zero = false;
        if (negative)
            neg += p;
        else
            pos += p;
    }
    if (pos == neg)
        return all_negative_zero ? -0.0f : 0.0f;
    /* The result is a multiple of 2^-48, far above the f32 denormal range. */
    return pos > neg ? round_scaled(pos - neg, -48) : -round_scaled(neg - pos, -48);
}

/*
 * The fast path of the dot product.  It gives exactly what
 * isa_amp_f16_dot4_exact gives, for the inputs it accepts:
 *
 *   - An f16 value is an integer below 2^11 times 2^e (e >= -24), so the
 *     product of two is an integer M < 2^22 times 2^s, s >= -48, below
 *     2^32 in magnitude: a normal f32 (or ±0), computed exactly by an f32
 *     multiplication, the sign of a zero product included.  (Exact
 *     products also make a fused multiply-add, where a compiler contracts,
 *     give the same sums.)
 *   - A non-zero product with f32 exponent e (|p| in [2^e, 2^(e+1))) has
 *     its lowest set bit at 2^s with s >= e - 21, because M < 2^22.  With
 *     emax and emin the largest and smallest exponents of the non-zero
 *     products, every partial sum of up to four of them, in any order, is
 *     a multiple of 2^(emin - 21) below 4 * 2^(emax + 1) = 2^(emax + 3) in
 *     magnitude: an integer of fewer than emax - emin + 24 bits times a
 *     power of two.  So when emax - emin <= 29 (DOT4_MAX_SPAN) it has at
 *     most 53 bits and every addition in double is exact; the one
 *     conversion to f32 then rounds the exact sum to nearest even, which
 *     is the exact path's result.  No overflow (|sum| < 2^34) and no f32
 *     denormal (a non-zero sum is a multiple of 2^-48).
 *   - Zeros: in round-to-nearest an exact sum that is zero is +0 unless
 *     every term is -0, which is the exact path's rule (-0 only when all
 *     four products are negative zeros).  Zero products do not count in
 *     the span.
 * Wider spans (a product more than 2^29 times smaller than another, rare
 * in real data) and NaN or infinite inputs go to the exact path.
 *
 * The executors check the span once per issue rather than per product:
 * a non-zero product x * w has exponent e(x) + e(w) or e(x) + e(w) + 1,
 * so the products of any unit span at most span(x) + span(w) + 1, where
 * span(x) is the exponent span of the non-zero inputs (exp_span4) and
 * span(w) the largest of the units' weight entries (cached per entry).
 * When that is within DOT4_MAX_SPAN every unit sums in double at once
 * (set_dots_fast, and the vectorised fast issue); otherwise each unit
 * checks its own products (dot4_fast) and falls back on its own.
 */
#define DOT4_MAX_SPAN 29

/* Largest minus smallest f32 exponent field among the non-zero values of
 * v[4] (finite, normal or zero: f16 values and their products); 0 when
 * fewer than two are non-zero. */
static inline unsigned exp_span4(const float v[4])
{
    uint32_t emax = 0, emin = 0xffu;
    for (int i = 0; i < 4; i++) {
        uint32_t e = (f32_bits(v[i]) >> 23) & 0xffu;
        emax = e > emax ? e : emax;
        uint32_t e_nonzero = e ? e : 0xffu;
        emin = e_nonzero < emin ? e_nonzero : emin;
    }
    return emax > emin ? emax - emin : 0;
}

/* The sum of the four products in double, rounded once to f32, where the
 * span of the products allows it (true); false where the exact path must
 * decide. */
static inline bool dot4_fast(const float xf[4], const float wf[4], float *result)
{
    float p[4];
    for (int i = 0; i < 4; i++)
        p[i] = xf[i] * wf[i];
    if (exp_span4(p) > DOT4_MAX_SPAN)
        return false;
    *result = (float)(((double)p[0] + (double)p[1]) + ((double)p[2] + (double)p[3]));
    return true;
}

/* f16 bits -> f32 for a finite f16 (no NaN or infinity): exact. */
static inline float f16_finite_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        float f = (float)m * 0x1p-24f;               /* subnormal: m * 2^-24, exact */
        return sign ? -f : f;
    }
    return bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

float isa_amp_f16_dot4(const uint16_t x[4], const uint16_t w[4])
{
    float xf[4], wf[4];
    for (int i = 0; i < 4; i++) {
        if (f16_is_nan_or_inf(x[i]) || f16_is_nan_or_inf(w[i]))
            return qnan32();
        xf[i] = f16_finite_to_f32(x[i]);
        wf[i] = f16_finite_to_f32(w[i]);
    }
    float r;
    if (dot4_fast(xf, wf, &r))
        return r;
    return isa_amp_f16_dot4_exact(x, w);
}

/* ---- decoded weights ------------------------------------------------- */

/* Rebuild phase p's decoded weights from $CWEI (amp.h: isa_amp_f16_phase).
 * isa_amp_set_cwei marks a phase stale; weights change once per block of
 * thousands of issues, so an issue normally finds its phase up to date. */
static void decode_phase(isa_amp_shared *sh, unsigned phase)
{
    isa_amp_f16_phase *ph = &sh->f16_phase[phase];
    for (unsigned s = 0; s < ISA_AMP_SETS; s++) {
        unsigned kind = 0, span = 0;
        for (unsigned u = 0; u < ISA_AMP_UNITS_PER_SET; u++) {
            unsigned k = s * ISA_AMP_UNITS_PER_SET + u;
            uint64_t bits = isa_amp_cwei(sh, 4 * k + phase);
            float wf[4];
            for (unsigned i = 0; i < 4; i++) {
                uint16_t h = (uint16_t)(bits >> (16 * i));
                if (f16_is_nan_or_inf(h)) {
                    kind |= ISA_AMP_W_NAN_OR_INF;
                    if (f16_signals(h))
                        kind |= ISA_AMP_W_SIGNALS;
                    wf[i] = 0.0f;                    /* unused: the dot is a NaN */
                } else {
                    wf[i] = f16_finite_to_f32(h);
                }
                ph->w[i][k] = wf[i];
            }
            unsigned entry_span = exp_span4(wf);
            span = entry_span > span ? entry_span : span;
            if (u & 1) {                             /* the engine's 2 units done */
                ph->kind[s][u >> 1] = (uint8_t)kind;
                ph->span[s][u >> 1] = (uint8_t)span;
            }
        }
    }
    sh->f16_stale &= ~(1u << phase);
}

unsigned isa_amp_macs(enum isa_op op)
{
    switch (op) {
    case ISA_OP_AMP_F16V4HIHO:
    case ISA_OP_AMP_F16V4SISO:   return ISA_AMP_UNITS_PER_SET * 4;
    case ISA_OP_AMP_F16V4HIHOV4: return ISA_AMP_SETS * ISA_AMP_UNITS_PER_SET * 4;
    case ISA_OP_AMP_F32SISO:     return ISA_AMP_UNITS_PER_SET;
    case ISA_OP_AMP_F32SISOV2:   return ISA_AMP_SETS * ISA_AMP_UNITS_PER_SET;
    default:                     return 0;
    }
}

unsigned isa_amp_insn_macs(const isa_insn *in)
{
    unsigned full = isa_amp_macs((enum isa_op)in->op);
    if (!full)
        return 0;
    bool f32 = in->op == ISA_OP_AMP_F32SISO || in->op == ISA_OP_AMP_F32SISOV2;
    unsigned engines = ((unsigned)in->operand[3] >> (f32 ? 3 : 2) & 3u) + 1;
    return full * engines / ISA_AMP_ENGINES_PER_SET;
}

/* ---- the engine chain -------------------------------------------------- */

/* Engine enables from EE: engine 0 always, engine e if ee >= e; the entry
 * past the last engine is false ("end of the chain"). */
static inline bool engine_enabled(unsigned ee, unsigned engine) { return engine < 4 && engine <= ee; }

/* FP status: sticky flags, malign if enabled in $FP_CTL (TFPU_IsMalign). */
static enum isa_flow fp_status(isa_tile_state *t, isa_context *c, const isa_insn *in, uint32_t flags)
{
    c->csr[ISA_CSR_FP_STS] |= flags;
    uint32_t malign = flags & c->csr[ISA_CSR_FP_CTL] & (FP_EXC_INV | FP_EXC_DIV0 | FP_EXC_OFLO);
    if (malign)
        return isa_raise(t, c, in, ISA_EXC_FP, 0, "%s: floating-point exception (%s) enabled in $FP_CTL",
                         isa_get(in->op)->mnemonic, fp_exc_name(malign));
    return ISA_FLOW_NEXT;
}

static uint32_t f32_read_flags(const float *out, unsigned n)
{
    uint32_t f = 0;
    for (unsigned i = 0; i < n; i++)
        f |= fp_aacc_read_flags(out[i], false, false);
    return f;
}

/* |v| <= 65504 (the largest finite f16) as f32 bits, sign cleared. */
#define F16_MAX_AS_F32_BITS 0x477fe000u

/* f32 bits -> f16, nearest even, for |v| <= 65504 (not NaN): what
 * fp16_from_f32 gives there, f32 denormals included (they give ±0). */
static inline uint16_t f16_from_f32_in_range(uint32_t b)
{
    uint32_t sign = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
    if (a >= 0x38800000u) {
        /* 2^-14 and up, a normal f16: rebias the exponent (127 -> 15) and
         * drop 13 significand bits, rounding to nearest even; a carry out
         * of the significand correctly steps the exponent. */
        uint32_t r = a - 0x38000000u;
        return (uint16_t)(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
    }
    /* Below 2^-14 the f16 steps are 2^-24, the f32 ulp in [0.5, 1): one
     * f32 addition of 0.5 rounds |v| to a multiple of 2^-24 (nearest even,
     * the host's mode), and the low bits of the sum count the steps; 2^10
     * of them (|v| rounded up to 2^-14) is the smallest normal's pattern. */
    float f = bits_f32(a) + 0.5f;
    return (uint16_t)(sign | (f32_bits(f) - 0x3f000000u));
}

/* An AACC value out as f16 (ISA2: TFPU_ApplyStochasticRound, then
 * TFPU_AACCReadFlags, then infinities and NaNs -> quiet NaN, then
 * Half(out).bitz32(smode)): overflow saturates to ±65504, or gives the
 * quiet NaN in NANOO mode.  A value up to 65504 raises no flag (it cannot
 * round above the largest f16) and converts directly. */
static inline uint16_t f16_result(float v, bool stochastic, uint32_t random, bool nanoo, uint32_t *fpx)
{
    if (stochastic)
        v = fp16_stochastic_round(v, random);
    if ((f32_bits(v) & 0x7fffffffu) <= F16_MAX_AS_F32_BITS)
        return f16_from_f32_in_range(f32_bits(v));
    *fpx |= fp_aacc_read_flags(v, true, nanoo);
    if (isnan(v) || isinf(v))
        return FP16_TILE_QNAN;
    return fp16_from_f32_tile(v, nanoo ? FP16_SAT_NAN : FP16_SAT_MAX);
}

static inline uint16_t half_of(uint32_t word, unsigned i) { return (uint16_t)(word >> (16 * i)); }

/* An incoming f16 partial sum as the accumulators see it. */
static inline float f16_partial(uint16_t h)
{
    return f16_is_nan_or_inf(h) ? qnan32() : f16_finite_to_f32(h);
}

/* An incoming f32 value (TFPU_F32FromBits: denormals flushed; NaN -> the
 * quiet NaN where the ISA asks for it). */
static inline float f32_partial(uint32_t b)
{
    float f = ftz(bits_f32(b));
    return isnan(f) ? qnan32() : f;
}

/* $AACC value + dot product, as fp32_add. */
static inline uint32_t accumulate(uint32_t acc_bits, float dot)
{
    float sum;
    if (!fp32_add_finite(bits_f32(acc_bits), dot, &sum))
        sum = fp32_add(bits_f32(acc_bits), dot);
    return f32_bits(sum);
}

/* Flush an f32 denormal to zero of its sign, without a branch. */
static inline uint32_t ftz_bits(uint32_t b)
{
    return b & ((b & 0x7f800000u) ? 0xffffffffu : 0x80000000u);
}

/*
 * The dot products of the 8 units of one set on the fast path (all_fast
 * below): every product is exact in double, so is every sum (the span
 * condition of DOT4_MAX_SPAN), and the one conversion to f32 rounds.  One
 * loop over the units with the weights in columns, which compilers turn
 * into SIMD code.
 */
static inline void set_dots_fast(const isa_amp_f16_phase *ph, unsigned set, const double xd[4],
                                 float dot[ISA_AMP_UNITS_PER_SET])
{
    const double *w0 = ph->w[0] + set * ISA_AMP_UNITS_PER_SET, *w1 = ph->w[1] + set * ISA_AMP_UNITS_PER_SET;
    const double *w2 = ph->w[2] + set * ISA_AMP_UNITS_PER_SET, *w3 = ph->w[3] + set * ISA_AMP_UNITS_PER_SET;
    for (unsigned u = 0; u < ISA_AMP_UNITS_PER_SET; u++)
        dot[u] = (float)((xd[0] * w0[u] + xd[1] * w1[u]) + (xd[2] * w2[u] + xd[3] * w3[u]));
}

/*
 * The accumulator update of one issue of an f16-input AMP instruction on
 * `sets` sets (1 or 2), in place (nothing can fault once it starts).
 * x: the 4 f16 inputs, xd their values; partial[set * 2 + (k & 1)]: the
 * incoming partial sums; ph: the phase's decoded weights.  all_fast: no
 * NaN or infinity among x and the enabled units' weights, and the issue's
 * exponent span allows the fast sum for every enabled unit (see
 * DOT4_MAX_SPAN).
 *
 * Units of a set are visited in increasing order: unit k's odd
 * accumulator takes unit k + 2's accumulators as they were before the
 * issue, and those are written only after k's.
 */
static void f16_amp_step(isa_amp_context *a, const isa_amp_shared *sh, unsigned sets, unsigned phase,
                         unsigned ee, const uint16_t x[4], const double xd[4], bool all_fast,
                         const float *partial)
{
    const isa_amp_f16_phase *ph = &sh->f16_phase[phase];
    unsigned units = 2 * (ee + 1);                 /* enabled units per set */
    for (unsigned s = 0; s < sets; s++) {
        float dot[ISA_AMP_UNITS_PER_SET];
        uint32_t *acc = a->aacc + 2 * s * ISA_AMP_UNITS_PER_SET;
        uint32_t incoming[2] = {f32_bits(partial[2 * s]), f32_bits(partial[2 * s + 1])};
        /* Phase 0 starts a new sum from the partial waiting in the odd
         * accumulator; the odd chain takes the finished sums of the engine
         * behind (or new partials at the end of the chain). */
        unsigned from = phase ? 0 : 1, chain = phase ? 1 : 0;
        if (all_fast) {
            set_dots_fast(ph, s, xd, dot);
            for (unsigned u = 0; u < units; u++) {
                uint32_t odd = u + 2 < units ? acc[2 * (u + 2) + chain] : incoming[u & 1];
                uint32_t old = acc[2 * u + from];
                /* dot is finite and not a denormal: fp32_add is an f32
                 * addition of the flushed accumulator, flushed, unless the
                 * accumulator holds a NaN or an infinity. */
                if ((old & 0x7f800000u) != 0x7f800000u)
                    acc[2 * u] = ftz_bits(f32_bits(bits_f32(ftz_bits(old)) + dot[u]));
                else
                    acc[2 * u] = f32_bits(fp32_add(bits_f32(old), dot[u]));
                acc[2 * u + 1] = odd;
            }
        } else {
            for (unsigned u = 0; u < units; u++) {
                uint64_t bits = isa_amp_cwei(sh, 4 * (s * ISA_AMP_UNITS_PER_SET + u) + phase);
                uint16_t w[4] = {(uint16_t)bits, (uint16_t)(bits >> 16), (uint16_t)(bits >> 32),
                                 (uint16_t)(bits >> 48)};
                dot[u] = isa_amp_f16_dot4(w, x);
            }
            for (unsigned u = 0; u < units; u++) {
                uint32_t odd = u + 2 < units ? acc[2 * (u + 2) + chain] : incoming[u & 1];
                acc[2 * u] = accumulate(acc[2 * u + from], dot[u]);
                acc[2 * u + 1] = odd;
            }
        }
    }
}

static uint32_t f16_input_flags(const uint16_t *h, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (f16_signals(h[i]))
            return FP_EXC_INV;
    return 0;
}

enum amp_f16_kind { AMP_HIHO, AMP_SISO, AMP_HIHOV4 };

/* ---- the fast issue ------------------------------------------------------ */

/*
 * The common issue of f16v4hihoamp / f16v4hihov4amp done with far fewer
 * host instructions and the same result: all four engines enabled, round
 * to nearest (no $FP_CTL.ESR), no NaN or infinity among the inputs,
 * partials, weights and the accumulators it sums, every dot product on the
 * fast sum (the issue's exponent span within DOT4_MAX_SPAN) and every
 * value read out within ±65504.  Such an issue raises no FP flag, so
 * nothing is left to check once those conditions hold; any other issue
 * goes the general way (exec_f16_amp below).  The conditions are all
 * checked before anything is written.
 *
 * The arithmetic is written with GCC/Clang vector types (SSE2 or AVX2 on
 * x86-64, NEON on AArch64): 8 f32 lanes (the 8 units of a set), 4 double
 * lanes (4 units' dot products, exact as in set_dots_fast); a compiler
 * without __builtin_shufflevector gets only the general path.  A set's 16
 * accumulators are split into its 8 even and 8 odd ones; the new even one
 * of unit u is fp32_add(from[u], dot[u]), where from is the even
 * accumulators, or in phase 0 the odd ones, and the new odd one is
 * chain[u + 2], chain being the other half (the incoming partials past
 * unit 7): exactly f16_amp_step's chain.
 */
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector) && __has_builtin(__builtin_convertvector)
#define AMP_FAST_ISSUE 1
#endif
#endif

#ifdef AMP_FAST_ISSUE
typedef uint32_t amp_v4u __attribute__((vector_size(16)));
typedef int32_t amp_v4i __attribute__((vector_size(16)));
typedef float amp_v4f __attribute__((vector_size(16)));
typedef double amp_v4d __attribute__((vector_size(32)));
typedef uint16_t amp_v8h __attribute__((vector_size(16)));
typedef uint32_t amp_v8u __attribute__((vector_size(32)));
typedef int32_t amp_v8i __attribute__((vector_size(32)));
typedef float amp_v8f __attribute__((vector_size(32)));

/* Constants as whole vectors, which compilers keep in memory and use as
 * operands (a scalar operand would be broadcast at every use). */
#define AMP_V4(x) {(x), (x), (x), (x)}
#define AMP_V8(x) {(x), (x), (x), (x), (x), (x), (x), (x)}
static const amp_v8u v8_exp = AMP_V8(0x7f800000u), v8_sign = AMP_V8(0x80000000u);
static const amp_v8u v8_f16_sign = AMP_V8(0x8000u), v8_f16_mag = AMP_V8(0x7fffu);
static const amp_v8u v8_f16_rebias = AMP_V8(0x38000000u), v8_f16_subnormal_end = AMP_V8(0x400u);
static const amp_v8f v8_two_m24 = AMP_V8(0x1p-24f);
static const amp_v4u v4_mag = AMP_V4(0x7fffffffu), v4_f16_max = AMP_V4(F16_MAX_AS_F32_BITS);
static const amp_v4u v4_exp_field = AMP_V4(0xffu);

/* Any of the four f16 quarters of w a NaN or an infinity (exponent all
 * ones): the masked exponent plus one step carries into bit 15 of its
 * quarter only then, and never across quarters. */
static inline bool f16x4_nan_or_inf(uint64_t w)
{
    return (((w & 0x7c007c007c007c00u) + 0x0400040004000400u) & 0x8000800080008000u) != 0;
}

/* Eight finite f16 values (the halves of w[0..3], low half first) as f32
 * bits, as f16_finite_to_f32 gives them: normal ones by moving the fields
 * (the exponent rebiased), subnormal ones (and zeros) converted from their
 * integer significand and scaled by 2^-24; both exact. */
static inline void f16x8_to_f32(const uint32_t w[4], amp_v4u *lo, amp_v4u *hi)
{
    amp_v8h h16;
    memcpy(&h16, w, sizeof h16);
    amp_v8u h = __builtin_convertvector(h16, amp_v8u);
    amp_v8u mag = h & v8_f16_mag;
    amp_v8u normal = (mag << 13) + v8_f16_rebias;
    amp_v8f subnormal = __builtin_convertvector((amp_v8i)mag, amp_v8f) * v8_two_m24;
    amp_v8u is_sub = (amp_v8u)(mag < v8_f16_subnormal_end);
    amp_v8u f = ((h & v8_f16_sign) << 16) | (normal & ~is_sub) | ((amp_v8u)subnormal & is_sub);
    *lo = __builtin_shufflevector(f, f, 0, 1, 2, 3);
    *hi = __builtin_shufflevector(f, f, 4, 5, 6, 7);
}

/* Lane selects: m ? a : b for masks m of all ones or zeros (compilers
 * turn these into blends). */
static inline amp_v4i sel4(amp_v4i m, amp_v4i a, amp_v4i b) { return (a & m) | (b & ~m); }
static inline void sel8(const amp_v8u *m, const amp_v8u *a, amp_v8u *b_out)
{
    *b_out = (*a & *m) | (*b_out & ~*m);
}

/* Largest minus smallest exponent field of the non-zero lanes of f32
 * bits v (0 if fewer than two are non-zero), as exp_span4. */
static inline unsigned exp_span_v(amp_v4u v)
{
    amp_v4i e = (amp_v4i)((v >> 23) & v4_exp_field);
    amp_v4i e_nonzero = e | ((e == 0) & (amp_v4i)v4_exp_field);
    amp_v4i hi = __builtin_shufflevector(e, e, 2, 3, 0, 1);
    amp_v4i emax = sel4(e > hi, e, hi);
    hi = __builtin_shufflevector(emax, emax, 1, 0, 3, 2);
    emax = sel4(emax > hi, emax, hi);
    amp_v4i lo = __builtin_shufflevector(e_nonzero, e_nonzero, 2, 3, 0, 1);
    amp_v4i emin = sel4(e_nonzero < lo, e_nonzero, lo);
    lo = __builtin_shufflevector(emin, emin, 1, 0, 3, 2);
    emin = sel4(emin < lo, emin, lo);
    int span = emax[0] - emin[0];
    return span > 0 ? (unsigned)span : 0;
}

/* Dot products of units u .. u + 3 (the fast sum: products and sums exact
 * in double, one rounding to f32). */
static inline amp_v4f dots4(const isa_amp_f16_phase *ph, unsigned u, const amp_v4d x[4])
{
    amp_v4d w0, w1, w2, w3;
    memcpy(&w0, &ph->w[0][u], sizeof w0);
    memcpy(&w1, &ph->w[1][u], sizeof w1);
    memcpy(&w2, &ph->w[2][u], sizeof w2);
    memcpy(&w3, &ph->w[3][u], sizeof w3);
    return __builtin_convertvector((x[0] * w0 + x[1] * w1) + (x[2] * w2 + x[3] * w3), amp_v4f);
}

/* One set's accumulators split into halves (units 0..3 and 4..7): `from`,
 * what each unit's even accumulator sums onto, and `chain`, the other
 * half (see above). */
typedef struct amp_set_v {
    amp_v4u from_lo, from_hi, chain_lo, chain_hi;
} amp_set_v;

static inline void set_split_v(const uint32_t acc[16], bool phase0, amp_set_v *sv)
{
    amp_v4u v[4];
    memcpy(v, acc, sizeof v);
    amp_v4u even_lo = __builtin_shufflevector(v[0], v[1], 0, 2, 4, 6);
    amp_v4u even_hi = __builtin_shufflevector(v[2], v[3], 0, 2, 4, 6);
    amp_v4u odd_lo = __builtin_shufflevector(v[0], v[1], 1, 3, 5, 7);
    amp_v4u odd_hi = __builtin_shufflevector(v[2], v[3], 1, 3, 5, 7);
    sv->from_lo = phase0 ? odd_lo : even_lo;
    sv->from_hi = phase0 ? odd_hi : even_hi;
    sv->chain_lo = phase0 ? even_lo : odd_lo;
    sv->chain_hi = phase0 ? even_hi : odd_hi;
}

/* Nonzero in the lanes of `from` that hold a NaN or an infinity. */
static inline amp_v4u set_special_v(const amp_set_v *sv)
{
    amp_v8u from = __builtin_shufflevector(sv->from_lo, sv->from_hi, 0, 1, 2, 3, 4, 5, 6, 7);
    amp_v8u special = (amp_v8u)((from & v8_exp) == v8_exp);
    return __builtin_shufflevector(special, special, 0, 1, 2, 3) | __builtin_shufflevector(special, special, 4, 5, 6, 7);
}

/* Set s's update, written to acc[16]: the even accumulators get
 * fp32_add(from, dot), the odd ones chain[u + 2] and the incoming
 * partials.  Here `from` holds no NaN or infinity, and the dot product is
 * ±0 or at least 2^-48 in magnitude, so fp32_add is one f32 addition of
 * the flushed `from`, and its result needs no flushing: with dot ±0 the
 * sum is `from` (or a zero); with |from| < 2^-49 it exceeds 2^-49; and
 * otherwise both operands, and so their exact sum, are multiples of
 * 2^-72, which is 0 or far above the denormals. */
static inline __attribute__((always_inline)) void set_update_v(const isa_amp_f16_phase *ph, unsigned s,
                                                               const amp_v4d x[4], const amp_set_v *sv,
                                                               amp_v4u incoming, uint32_t acc[16])
{
    unsigned u = s * ISA_AMP_UNITS_PER_SET;
    amp_v8f dot = __builtin_shufflevector(dots4(ph, u, x), dots4(ph, u + 4, x), 0, 1, 2, 3, 4, 5, 6, 7);
    amp_v8u from = __builtin_shufflevector(sv->from_lo, sv->from_hi, 0, 1, 2, 3, 4, 5, 6, 7);
    amp_v8u zero_exp = (amp_v8u)((from & v8_exp) == 0), signed_zero = from & v8_sign;
    sel8(&zero_exp, &signed_zero, &from);                       /* flush a denormal */
    amp_v8u sum = (amp_v8u)((amp_v8f)from + dot);
    amp_v4u sum_lo = __builtin_shufflevector(sum, sum, 0, 1, 2, 3);
    amp_v4u sum_hi = __builtin_shufflevector(sum, sum, 4, 5, 6, 7);
    amp_v4u odd_new_lo = __builtin_shufflevector(sv->chain_lo, sv->chain_hi, 2, 3, 4, 5);
    amp_v4u odd_new_hi = __builtin_shufflevector(sv->chain_hi, incoming, 2, 3, 4, 5);
    amp_v4u v[4] = {
        __builtin_shufflevector(sum_lo, odd_new_lo, 0, 4, 1, 5), __builtin_shufflevector(sum_lo, odd_new_lo, 2, 6, 3, 7),
        __builtin_shufflevector(sum_hi, odd_new_hi, 0, 4, 1, 5), __builtin_shufflevector(sum_hi, odd_new_hi, 2, 6, 3, 7),
    };
    memcpy(acc, v, sizeof v);
}

/* f16_from_f32_in_range lane by lane (|v| <= 65504, no NaN). */
static inline amp_v4u f16_from_f32_in_range_v(amp_v4u b)
{
    amp_v4u sign = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
    amp_v4u r = a - 0x38000000u;
    amp_v4u normal = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
    amp_v4u small = (amp_v4u)((amp_v4f)a + (amp_v4f)AMP_V4(0.5f)) - 0x3f000000u;
    amp_v4u is_normal = (amp_v4u)((amp_v4i)a >= 0x38800000);
    return sign | (normal & is_normal) | (small & ~is_normal);
}

/* One fast issue of f16v4hihoamp (sets = 1) or f16v4hihov4amp (sets = 2)
 * (conditions above); false, with nothing changed, if the issue does not
 * qualify.  Inlined into each executor, where sets is a constant. */
static inline __attribute__((always_inline)) bool f16_issue_fast(isa_tile_state *t, isa_context *c,
                                                                 const isa_insn *in, unsigned sets)
{
    unsigned dst = (unsigned)in->operand[0], src0 = (unsigned)in->operand[1], src1 = (unsigned)in->operand[2];
    unsigned flags = (unsigned)in->operand[3];
    unsigned phase = flags & 3u, ee = (flags >> 2) & 3u;
    if (ee != ISA_AMP_ENGINES_PER_SET - 1 || (c->csr[ISA_CSR_FP_CTL] & FP_CTL_ESR))
        return false;
    /* Inputs x (lanes 0..3) and partials (lanes 4, 5 for set 0; 6, 7 for
     * set 1), f16. */
    uint32_t words[4] = {isa_a(c, src0), isa_a(c, src0 + 1), isa_a(c, src1), sets == 2 ? isa_a(c, src1 + 1) : 0};
    if (f16x4_nan_or_inf(words[0] | (uint64_t)words[1] << 32) | f16x4_nan_or_inf(words[2] | (uint64_t)words[3] << 32))
        return false;
    if (t->amp.f16_stale & (1u << phase))
        decode_phase(&t->amp, phase);
    const isa_amp_f16_phase *ph = &t->amp.f16_phase[phase];
    unsigned wkind = ph->kind[0][ee], w_span = ph->span[0][ee];
    if (sets == 2) {
        wkind |= ph->kind[1][ee];
        w_span = ph->span[1][ee] > w_span ? ph->span[1][ee] : w_span;
    }
    amp_v4u xb, partial;
    f16x8_to_f32(words, &xb, &partial);
    if ((wkind & ISA_AMP_W_NAN_OR_INF) || exp_span_v(xb) + w_span + 1 > DOT4_MAX_SPAN)
        return false;

    /* The accumulators summed must hold no NaN or infinity, and those read
     * out (before the update: units 0 and 1 of each set) be within
     * ±65504 (sign cleared, a signed compare does). */
    uint32_t *aacc = c->amp.aacc;
    amp_set_v sv[2];
    set_split_v(aacc, phase == 0, &sv[0]);
    amp_v4u special = set_special_v(&sv[0]);
    amp_v4u out;
    if (sets == 2) {
        set_split_v(aacc + 16, phase == 0, &sv[1]);
        special |= set_special_v(&sv[1]);
        out = __builtin_shufflevector(sv[0].chain_lo, sv[1].chain_lo, 0, 1, 4, 5);
    } else {
        out = __builtin_shufflevector(sv[0].chain_lo, sv[0].chain_lo, 0, 1, 0, 1);
    }
    special |= (amp_v4u)((amp_v4i)(out & v4_mag) > (amp_v4i)v4_f16_max);
    uint64_t any[2];
    memcpy(any, &special, sizeof any);
    if (any[0] | any[1])
        return false;

    amp_v4d xd = __builtin_convertvector((amp_v4f)xb, amp_v4d);
    amp_v4d x[4] = {__builtin_shufflevector(xd, xd, 0, 0, 0, 0), __builtin_shufflevector(xd, xd, 1, 1, 1, 1),
                    __builtin_shufflevector(xd, xd, 2, 2, 2, 2), __builtin_shufflevector(xd, xd, 3, 3, 3, 3)};
    set_update_v(ph, 0, x, &sv[0], partial, aacc);
    if (sets == 2)
        set_update_v(ph, 1, x, &sv[1], __builtin_shufflevector(partial, partial, 2, 3, 0, 1), aacc + 16);
    amp_v4u h = f16_from_f32_in_range_v(out);
    h = h | (__builtin_shufflevector(h, h, 1, 0, 3, 2) << 16);    /* lanes 0, 2: the result words */
    isa_set_a(c, (int)dst, h[0]);
    if (sets == 2)
        isa_set_a(c, (int)dst + 1, h[2]);
    return true;
}

/*
 * On x86-64 with glibc the fast issue is compiled twice, for SSE2 (the
 * x86-64 baseline) and for AVX2, and the loader picks the one the host
 * runs (GCC/Clang target_clones, an ifunc).  With AVX2 the double-
 * precision dot products go four units at a time instead of two, and the
 * rest gets three-operand instructions: about a fifth fewer host
 * instructions per issue.  Both compile the same source; the arithmetic
 * of vector types does not depend on the target.  GCC only: Clang 14
 * refuses target_clones together with noinline (the fuzz builds use it).
 */
#if defined(__x86_64__) && defined(__GLIBC__) && defined(__has_attribute) && !defined(__clang__)
#if __has_attribute(target_clones)
#define AMP_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef AMP_TARGET_CLONES
#define AMP_TARGET_CLONES
#endif

static AMP_TARGET_CLONES __attribute__((noinline)) bool f16_issue_fast_1set(isa_tile_state *t, isa_context *c,
                                                                            const isa_insn *in)
{
    return f16_issue_fast(t, c, in, 1);
}

static AMP_TARGET_CLONES __attribute__((noinline)) bool f16_issue_fast_2sets(isa_tile_state *t, isa_context *c,
                                                                             const isa_insn *in)
{
    return f16_issue_fast(t, c, in, 2);
}
#endif /* AMP_FAST_ISSUE */

static enum isa_flow exec_f16_amp(isa_tile_state *t, isa_context *c, const isa_insn *in, enum amp_f16_kind kind)
{
    unsigned dst = (unsigned)in->operand[0], src0 = (unsigned)in->operand[1], src1 = (unsigned)in->operand[2];
    unsigned flags = (unsigned)in->operand[3];
    unsigned phase = flags & 3u, ee = (flags >> 2) & 3u;
    unsigned sets = kind == AMP_HIHOV4 ? 2 : 1;
    uint32_t ctl = c->csr[ISA_CSR_FP_CTL];
    bool nanoo = (ctl & FP_CTL_NANOO) != 0;

    uint16_t x[4] = {half_of(isa_a(c, src0), 0), half_of(isa_a(c, src0), 1),
                     half_of(isa_a(c, src0 + 1), 0), half_of(isa_a(c, src0 + 1), 1)};
    uint32_t fpx = f16_input_flags(x, 4);
    bool x_nan_or_inf = false;
    float xf[4];
    double xd[4];
    for (unsigned i = 0; i < 4; i++) {
        x_nan_or_inf |= f16_is_nan_or_inf(x[i]);
        xf[i] = f16_is_nan_or_inf(x[i]) ? 0.0f : f16_finite_to_f32(x[i]);
        xd[i] = xf[i];
    }
    unsigned x_span = exp_span4(xf);
    float partial[4];
    if (kind == AMP_SISO) {
        uint32_t p0 = isa_a(c, src1), p1 = isa_a(c, src1 + 1);
        if (f32_is_snan(p0) || f32_is_snan(p1))
            fpx |= FP_EXC_INV;
        partial[0] = f32_partial(p0);
        partial[1] = f32_partial(p1);
    } else {
        unsigned n = kind == AMP_HIHOV4 ? 4 : 2;
        uint16_t p[4];
        for (unsigned i = 0; i < n; i++)
            p[i] = half_of(isa_a(c, src1 + i / 2), i & 1);
        fpx |= f16_input_flags(p, n);
        for (unsigned i = 0; i < n; i++)
            partial[i] = f16_partial(p[i]);
    }

    /* The weight entries the enabled units read this phase; an sNaN or
     * infinity among them raises INV. */
    if (t->amp.f16_stale & (1u << phase))
        decode_phase(&t->amp, phase);
    const isa_amp_f16_phase *ph = &t->amp.f16_phase[phase];
    unsigned wkind = ph->kind[0][ee], w_span = ph->span[0][ee];
    if (sets == 2) {
        wkind |= ph->kind[1][ee];
        w_span = ph->span[1][ee] > w_span ? ph->span[1][ee] : w_span;
    }
    if (wkind & ISA_AMP_W_SIGNALS)
        fpx |= FP_EXC_INV;
    bool all_fast = !x_nan_or_inf && !(wkind & ISA_AMP_W_NAN_OR_INF)
                    && x_span + w_span + 1 <= DOT4_MAX_SPAN;

    /* Read out: the 2 (or 4) accumulators before this issue's update. */
    float out[4];
    const unsigned per_set = ISA_AMP_UNITS_PER_SET * 2;   /* accumulators per set */
    for (unsigned s = 0; s < sets; s++) {
        unsigned b = s * per_set + (phase ? 1 : 0);
        out[2 * s] = bits_f32(c->amp.aacc[b]);
        out[2 * s + 1] = bits_f32(c->amp.aacc[b + 2]);
    }

    unsigned n_out = 2 * sets;
    uint32_t dst_words[2] = {0, 0};
    uint64_t prng[2] = {c->prng[0], c->prng[1]};
    if (kind == AMP_SISO) {
        fpx |= f32_read_flags(out, n_out);
        for (unsigned i = 0; i < 2; i++)
            dst_words[i] = isnan(out[i]) ? FP32_TILE_QNAN_BITS : f32_bits(ftz(out[i]));
    } else {
        bool stochastic = (ctl & FP_CTL_ESR) != 0;
        uint64_t r[2] = {0, 0};
        if (stochastic)
            fp_prng_advance(prng, r);
        uint16_t h[4];
        for (unsigned i = 0; i < n_out; i++)
            h[i] = f16_result(out[i], stochastic, fp16_sr_bits(r, i), nanoo, &fpx);
        for (unsigned i = 0; i < n_out; i += 2)
            dst_words[i / 2] = (uint32_t)h[i] | ((uint32_t)h[i + 1] << 16);
    }

    /* Every flag is known before the accumulators change (the update
     * raises none), so a malign exception leaves them as they were. */
    enum isa_flow flow = fp_status(t, c, in, fpx);
    if (flow != ISA_FLOW_NEXT)
        return flow;

    f16_amp_step(&c->amp, &t->amp, sets, phase, ee, x, xd, all_fast, partial);
    c->prng[0] = prng[0];
    c->prng[1] = prng[1];
    if (kind == AMP_HIHO) {
        isa_set_a(c, (int)dst, dst_words[0]);
    } else {
        isa_set_a(c, (int)dst, dst_words[0]);
        isa_set_a(c, (int)dst + 1, dst_words[1]);
    }
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_AMP_F16V4HIHO(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
#ifdef AMP_FAST_ISSUE
    if (f16_issue_fast_1set(t, c, in))
        return ISA_FLOW_NEXT;
#endif
    return exec_f16_amp(t, c, in, AMP_HIHO);
}

enum isa_flow isa_exec_AMP_F16V4SISO(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return exec_f16_amp(t, c, in, AMP_SISO);
}

enum isa_flow isa_exec_AMP_F16V4HIHOV4(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
#ifdef AMP_FAST_ISSUE
    if (f16_issue_fast_2sets(t, c, in))
        return ISA_FLOW_NEXT;
#endif
    return exec_f16_amp(t, c, in, AMP_HIHOV4);
}

/*
 * f32sisoamp (sets = 1) and f32sisov2amp (sets = 2).  Eight phases: the
 * even accumulator of unit k takes one product per issue with the
 * low (even phase) or high (odd phase) half of $CWEI_k_(phase/2);
 * partial sums move down the odd chain on every other issue of their set.
 * Set 1 runs one phase behind set 0 and takes last issue's input from $TAS.
 */
static enum isa_flow exec_f32_amp(isa_tile_state *t, isa_context *c, const isa_insn *in, unsigned sets)
{
    unsigned dst = (unsigned)in->operand[0], src0 = (unsigned)in->operand[1], src1 = (unsigned)in->operand[2];
    unsigned flags = (unsigned)in->operand[3];
    unsigned phase = flags & 7u, ee = (flags >> 3) & 3u;
    const isa_amp_context *a = &c->amp;

    uint32_t in_bits = isa_a(c, src0), p0 = isa_a(c, src1), p1 = isa_a(c, src1 + 1);
    uint32_t tas = c->csr[ISA_CSR_TAS];
    float op1 = ftz(bits_f32(in_bits));
    float partial[2] = {f32_partial(p0), f32_partial(p1)};
    uint32_t fpx = 0;
    if (f32_is_snan(in_bits) || f32_is_snan(p0) || f32_is_snan(p1) || (sets == 2 && f32_is_snan(tas)))
        fpx |= FP_EXC_INV;

    /* Set s reads out at its "special" phase s (even accumulators) and
     * otherwise the odd ones; f32sisoamp reads set 0 on every issue. */
    unsigned oset = sets == 2 ? (phase & 1u) : 0;
    unsigned base = oset * ISA_AMP_UNITS_PER_SET * 2 + (phase == oset ? 0 : 1);
    float out[2] = {bits_f32(a->aacc[base]), bits_f32(a->aacc[base + 2])};

    uint32_t next[ISA_AACC_WORDS];
    memcpy(next, a->aacc, sizeof next);
    for (unsigned k = 0; k < sets * ISA_AMP_UNITS_PER_SET; k++) {
        unsigned engine = (k % ISA_AMP_UNITS_PER_SET) >> 1;
        if (!engine_enabled(ee, engine))
            continue;
        unsigned set = k / ISA_AMP_UNITS_PER_SET;
        unsigned lphase = (phase - set) & 7u;
        uint64_t cw = isa_amp_cwei(&t->amp, k * 4 + (lphase >> 1));
        uint32_t wbits = (uint32_t)(cw >> (32 * (lphase & 1)));
        if (f32_is_snan(wbits))
            fpx |= FP_EXC_INV;
        float input = set == 0 ? op1 : ftz(bits_f32(tas));
        float weight = ftz(bits_f32(wbits));
        if ((isinf(input) && weight == 0.0f) || (isinf(weight) && input == 0.0f))
            fpx |= FP_EXC_INV;
        bool special = phase == set;
        float addend = bits_f32(a->aacc[2 * k + (special ? 1 : 0)]);
        next[2 * k] = f32_bits(fp32_add(addend, fp32_mul(input, weight)));
        bool behind = engine_enabled(ee, engine + 1);
        if (special)
            next[2 * k + 1] = behind ? a->aacc[2 * (k + 2)] : f32_bits(partial[k & 1]);
        else if ((phase & 1u) == set)
            next[2 * k + 1] = behind ? a->aacc[2 * (k + 2) + 1] : f32_bits(partial[k & 1]);
    }

    fpx |= f32_read_flags(out, 2);
    enum isa_flow flow = fp_status(t, c, in, fpx);
    if (flow != ISA_FLOW_NEXT)
        return flow;

    memcpy(c->amp.aacc, next, sizeof next);
    if (sets == 2)
        c->csr[ISA_CSR_TAS] = f32_bits(op1);
    isa_set_a(c, (int)dst, isnan(out[0]) ? FP32_TILE_QNAN_BITS : f32_bits(ftz(out[0])));
    isa_set_a(c, (int)dst + 1, isnan(out[1]) ? FP32_TILE_QNAN_BITS : f32_bits(ftz(out[1])));
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_AMP_F32SISO(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return exec_f32_amp(t, c, in, 1);
}

enum isa_flow isa_exec_AMP_F32SISOV2(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return exec_f32_amp(t, c, in, 2);
}

/* ---- weight loads ------------------------------------------------------ */

static enum isa_flow mem_fault(isa_tile_state *t, isa_context *c, const isa_insn *in,
                               enum tmem_status st, uint32_t addr, unsigned bytes)
{
    const char *mn = isa_get(in->op)->mnemonic;
    switch (st) {
    case TMEM_ALIGN:
        return isa_raise(t, c, in, ISA_EXC_MEM_ALIGN, addr, "%s: $CCCSLOAD 0x%x is not %u-byte aligned",
                         mn, addr, bytes);
    case TMEM_REGION:
        return isa_raise(t, c, in, ISA_EXC_MEM_REGION, addr,
                         "%s: $CCCSLOAD 0x%x is not in an interleaved region (128-bit loads need region 1)",
                         mn, addr);
    default:
        return isa_raise(t, c, in, ISA_EXC_MEM_RANGE, addr, "%s: $CCCSLOAD 0x%x is outside tile memory",
                         mn, addr);
    }
}

/* $CCCSLOAD holds a 20-bit byte address (ISA2 §2.7.5.1.2). */
#define CCCSLOAD_MASK 0xfffffu

enum isa_flow isa_exec_LD64PUTCS(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    unsigned index = (unsigned)in->operand[0];
    uint32_t addr = c->csr[ISA_CSR_CCCSLOAD];
    if (index >= ISA_CWEI_ENTRIES)
        return isa_raise(t, c, in, ISA_EXC_INVALID_OPERAND, 0,
                         "ld64putcs: configuration index %u is not a $CWEI entry (0..%u)", index,
                         ISA_CWEI_ENTRIES - 1);
    uint64_t v = 0;
    enum tmem_status st = tmem_load64(&t->mem, addr, &v);
    if (st != TMEM_OK)
        return mem_fault(t, c, in, st, addr, 8);
    isa_amp_set_cwei(&t->amp, index, v);
    c->csr[ISA_CSR_CCCSLOAD] = (addr + 8) & CCCSLOAD_MASK;
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_LD128PUTCS(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    unsigned index = (unsigned)in->operand[0];
    uint32_t addr = c->csr[ISA_CSR_CCCSLOAD];
    if ((index & 1) || index + 1 >= ISA_CWEI_ENTRIES)
        return isa_raise(t, c, in, ISA_EXC_INVALID_OPERAND, 0,
                         "ld128putcs: configuration index %u must be an even $CWEI entry (0..%u)", index,
                         ISA_CWEI_ENTRIES - 2);
    uint64_t v[2];
    enum tmem_status st = tmem_load(&t->mem, addr, 16, v);
    if (st != TMEM_OK)
        return mem_fault(t, c, in, st, addr, 16);
    isa_amp_set_cwei(&t->amp, index, v[0]);
    isa_amp_set_cwei(&t->amp, index + 1, v[1]);
    c->csr[ISA_CSR_CCCSLOAD] = (addr + 16) & CCCSLOAD_MASK;
    return ISA_FLOW_NEXT;
}
