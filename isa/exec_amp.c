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
 * registers, the PRNG).  A malign FP exception therefore leaves all state
 * as it was, apart from the sticky $FP_STS flags.
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

float isa_amp_f16_dot4(const uint16_t x[4], const uint16_t w[4])
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

/* An AACC value out as f16 (ISA2: TFPU_ApplyStochasticRound, then
 * TFPU_AACCReadFlags, then infinities and NaNs -> quiet NaN, then
 * Half(out).bitz32(smode)): overflow saturates to ±65504, or gives the
 * quiet NaN in NANOO mode. */
static uint16_t f16_result(float v, bool stochastic, uint32_t random, bool nanoo, uint32_t *fpx)
{
    if (stochastic)
        v = fp16_stochastic_round(v, random);
    *fpx |= fp_aacc_read_flags(v, true, nanoo);
    if (isnan(v) || isinf(v))
        return FP16_TILE_QNAN;
    return fp16_from_f32_tile(v, nanoo ? FP16_SAT_NAN : FP16_SAT_MAX);
}

static inline uint16_t half_of(uint32_t word, unsigned i) { return (uint16_t)(word >> (16 * i)); }

/* An incoming f16 partial sum as the accumulators see it. */
static inline float f16_partial(uint16_t h)
{
    return f16_is_nan_or_inf(h) ? qnan32() : fp16_to_f32(h);
}

/* An incoming f32 value (TFPU_F32FromBits: denormals flushed; NaN -> the
 * quiet NaN where the ISA asks for it). */
static inline float f32_partial(uint32_t b)
{
    float f = ftz(bits_f32(b));
    return isnan(f) ? qnan32() : f;
}

/*
 * One issue of a f16-input AMP instruction on `sets` sets (1 or 2).
 * x: the 4 f16 inputs; partial[set * 2 + (k & 1)]: the incoming partial
 * sums; out[]: the 2 (or 4) accumulators read out, before this issue's
 * update.  Computes the new accumulators into next[] (only enabled units).
 */
static void f16_amp_step(const isa_amp_shared *sh, const isa_amp_context *a, unsigned sets,
                         unsigned phase, unsigned ee, const uint16_t x[4], const float *partial,
                         float *out, uint32_t next[ISA_AACC_WORDS])
{
    const unsigned per_set = ISA_AMP_UNITS_PER_SET * 2;   /* accumulators per set */
    for (unsigned s = 0; s < sets; s++) {
        unsigned b = s * per_set + (phase ? 1 : 0);
        out[2 * s] = bits_f32(a->aacc[b]);
        out[2 * s + 1] = bits_f32(a->aacc[b + 2]);
    }
    memcpy(next, a->aacc, sizeof a->aacc);
    for (unsigned k = 0; k < sets * ISA_AMP_UNITS_PER_SET; k++) {
        unsigned engine = (k % ISA_AMP_UNITS_PER_SET) >> 1;
        if (!engine_enabled(ee, engine))
            continue;
        uint64_t cw = isa_amp_cwei(sh, k * 4 + phase);
        uint16_t w[4] = {(uint16_t)cw, (uint16_t)(cw >> 16), (uint16_t)(cw >> 32), (uint16_t)(cw >> 48)};
        float dot = isa_amp_f16_dot4(w, x);
        float even, odd;
        bool behind = engine_enabled(ee, engine + 1);
        float incoming = partial[(k / ISA_AMP_UNITS_PER_SET) * 2 + (k & 1)];
        if (phase == 0) {
            /* Start a new sum from the partial waiting in the odd
             * accumulator; the odd chain takes the finished sums of the
             * engine behind (or new partials at the end of the chain). */
            even = fp32_add(bits_f32(a->aacc[2 * k + 1]), dot);
            odd = behind ? bits_f32(a->aacc[2 * (k + 2)]) : incoming;
        } else {
            even = fp32_add(bits_f32(a->aacc[2 * k]), dot);
            odd = behind ? bits_f32(a->aacc[2 * (k + 2) + 1]) : incoming;
        }
        next[2 * k] = f32_bits(even);
        next[2 * k + 1] = f32_bits(odd);
    }
}

static uint32_t f16_input_flags(const uint16_t *h, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (f16_signals(h[i]))
            return FP_EXC_INV;
    return 0;
}

/* Weight entries the enabled units read this phase: sNaN/inf -> INV. */
static uint32_t weight_flags_f16(const isa_amp_shared *sh, unsigned sets, unsigned phase, unsigned ee)
{
    for (unsigned k = 0; k < sets * ISA_AMP_UNITS_PER_SET; k++) {
        if (!engine_enabled(ee, (k % ISA_AMP_UNITS_PER_SET) >> 1))
            continue;
        uint64_t cw = isa_amp_cwei(sh, k * 4 + phase);
        for (unsigned i = 0; i < 4; i++)
            if (f16_signals((uint16_t)(cw >> (16 * i))))
                return FP_EXC_INV;
    }
    return 0;
}

enum amp_f16_kind { AMP_HIHO, AMP_SISO, AMP_HIHOV4 };

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
    fpx |= weight_flags_f16(&t->amp, sets, phase, ee);

    float out[4];
    uint32_t next[ISA_AACC_WORDS];
    f16_amp_step(&t->amp, &c->amp, sets, phase, ee, x, partial, out, next);

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

    enum isa_flow flow = fp_status(t, c, in, fpx);
    if (flow != ISA_FLOW_NEXT)
        return flow;

    memcpy(c->amp.aacc, next, sizeof next);
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
    return exec_f16_amp(t, c, in, AMP_HIHO);
}

enum isa_flow isa_exec_AMP_F16V4SISO(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return exec_f16_amp(t, c, in, AMP_SISO);
}

enum isa_flow isa_exec_AMP_F16V4HIHOV4(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
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
