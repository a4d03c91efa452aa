/*
 * exec_aux.c — semantics of the aux (floating-point) pipeline rows of
 * isa.def, the AMP rows excepted (exec_amp.c).
 *
 * Every executor follows the ISA2 pseudo-code of its instruction (§3.7.3,
 * §3.7.6): operands prepared (f32 denormals flushed), special cases checked,
 * the result computed in double and rounded once, the exception flags ORed
 * into $FP_STS and, when one of them is enabled in $FP_CTL, ISA_EXC_FP
 * raised without writing the destination (precise exception); f32div's
 * overflow is the one imprecise case: its result is written first (ISA2
 * §4.1.4.1).  f16 results follow §2.9.4.2: round to nearest even, or
 * stochastically when $FP_CTL.ESR is set (two PRNG steps per instruction,
 * whatever its vector width); overflow saturates to ±65504, or gives the
 * fixed quiet NaN with $FP_CTL.NANOO; NaN results are the fixed quiet NaNs.
 *
 * Rows that ISA2 does not have, and ipusim's definitions for them:
 *   f32abs, f32neg, f32v2abs, f16v2abs   the IEEE 754 sign-bit operations
 *       (§5.5.1): no rounding, no flags, NaN payloads and denormals kept —
 *       what and/xor with a sign mask give on the IPU;
 *   mov (a,a / ap,ap)   register copy;
 *   f32v2acc $aN:N+1     the 2-element form of f32v4acc: $AACC[0] and
 *       $AACC[2] accumulate the two f32 operands;
 *   f16v4mac $aX:X+1, $aY:Y+1   element-wise f16 products accumulated into
 *       $AACC[0], [2], [4], [6] as f32v2mac does for f32 (the product of two
 *       f16 values is exact in f32, then added with one rounding, §2.9.9.2).
 * Rows whose ISA2 immediate isa.def does not carry:
 *   f32int      rounds to nearest even (IPU2's only mode; ISA2 takes the
 *               mode from an immediate);
 *   f32v2gina   behaves as with immediate 0: reads $AACC[0], [2], shifts the
 *               even accumulators of AMP set 0 down by four and writes the
 *               operands to $AACC[12], [14].
 *
 * ipusim's reading of two places where the ISA2 pseudo-code and its prose
 * differ: an f16 infinity given to an arithmetic instruction (add, sub, mul,
 * exp, tanh, sigm, accumulate) is treated like a signalling NaN — invalid
 * operation flag, quiet NaN result — as §2.9.4.2 says, while min/max keep
 * infinities (minNum/maxNum); and min/max of two NaNs give the fixed quiet
 * NaN (§2.9.13).
 */
#include "exec.h"

#include <math.h>
#include <stdio.h>

#include "fp16.h"
#include "fparith.h"

static const char *const mnemonic[ISA_OP_COUNT] = {
#define ISA_INSN(id, mn, ops, major, funct, pipe, cost, flags) [ISA_OP_##id] = mn,
#include "isa.def"
#undef ISA_INSN
};

/* ---- registers, accumulators, $FP_CTL ---------------------------------- */

static float rd_f32(const isa_context *c, int r) { return fp32_from_bits(isa_a(c, r)); }
static void wr_f32(isa_context *c, int r, float f) { isa_set_a(c, r, fp32_to_bits(f)); }

/* n f16 values from consecutive registers, element 0 in the low half of r. */
static void rd_f16(const isa_context *c, int r, unsigned n, f16_t *h)
{
    for (unsigned i = 0; i < n; i++)
        h[i] = (f16_t)(isa_a(c, r + (int)(i / 2)) >> (16 * (i % 2)));
}

static void wr_f16(isa_context *c, int r, unsigned n, const f16_t *h)
{
    for (unsigned i = 0; i < n; i += 2)
        isa_set_a(c, r + (int)(i / 2), (uint32_t)h[i] | ((uint32_t)h[i + 1] << 16));
}

static float aacc(const isa_context *c, unsigned i) { return fp32_from_bits(c->amp.aacc[i]); }
static void set_aacc(isa_context *c, unsigned i, float f) { c->amp.aacc[i] = fp32_to_bits(f); }

static uint32_t fp_ctl(const isa_context *c) { return c->csr[ISA_CSR_FP_CTL]; }

static enum fp16_sat f16_sat(const isa_context *c)
{
    return (fp_ctl(c) & FP_CTL_NANOO) ? FP16_SAT_NAN : FP16_SAT_MAX;
}

/* An f16 operand of an arithmetic instruction: infinities count as
 * signalling NaNs (ISA2 §2.9.4.2); an f16 sNaN stays an f32 sNaN. */
static float f16_arith_in(f16_t h, unsigned *exc)
{
    if (fp16_is_inf(h)) {
        *exc |= FP_EXC_INV;
        return fp32_qnan();
    }
    return fp16_to_f32(h);
}

/* $FP_STS |= exc; the flags enabled in $FP_CTL are malign and raise
 * ISA_EXC_FP ("f32div: divide by zero").  Returns NEXT or FAULT. */
static enum isa_flow fp_flags(isa_tile_state *t, isa_context *c, const isa_insn *in, unsigned exc)
{
    exc &= FP_EXC_ALL;
    c->csr[ISA_CSR_FP_STS] |= exc;
    unsigned malign = exc & fp_ctl(c);
    if (!malign)
        return ISA_FLOW_NEXT;
    char names[64] = "";
    size_t len = 0;
    for (unsigned bit = FP_EXC_INV; bit <= FP_EXC_OFLO; bit <<= 1)
        if (malign & bit)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                    len ? ", " : "", fp_exc_name(bit));
    return isa_raise(t, c, in, ISA_EXC_FP, 0, "%s: %s", mnemonic[in->op], names);
}

/* ---- moves and immediates ---------------------------------------------- */

enum isa_flow isa_exec_FNOP(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t; (void)c; (void)in;
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_MOV_A(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    isa_set_a(c, in->operand[0], isa_a(c, in->operand[1]));
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_MOV_AP(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    uint32_t lo = isa_a(c, in->operand[1]), hi = isa_a(c, in->operand[1] + 1);
    isa_set_a(c, in->operand[0], lo);
    isa_set_a(c, in->operand[0] + 1, hi);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_SETZI_A(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    isa_set_a(c, in->operand[0], (uint32_t)in->operand[1] & 0xfffffu);
    return ISA_FLOW_NEXT;
}

/* ---- sign-bit operations (ipusim's own rows) ---------------------------- */

static enum isa_flow sign_op(isa_context *c, const isa_insn *in, unsigned regs,
                             uint32_t and_mask, uint32_t xor_mask)
{
    uint32_t v[2];
    for (unsigned i = 0; i < regs; i++)
        v[i] = (isa_a(c, in->operand[1] + (int)i) & and_mask) ^ xor_mask;
    for (unsigned i = 0; i < regs; i++)
        isa_set_a(c, in->operand[0] + (int)i, v[i]);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_F32ABS(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ (void)t; return sign_op(c, in, 1, 0x7fffffffu, 0); }

enum isa_flow isa_exec_F32NEG(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ (void)t; return sign_op(c, in, 1, 0xffffffffu, 0x80000000u); }

enum isa_flow isa_exec_F32V2ABS(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ (void)t; return sign_op(c, in, 2, 0x7fffffffu, 0); }

enum isa_flow isa_exec_F16V2ABS(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ (void)t; return sign_op(c, in, 1, 0x7fff7fffu, 0); }

/* ---- f32 arithmetic ------------------------------------------------------ */

enum f32_binop { F32_ADD, F32_SUB, F32_MUL, F32_DIV };

/* One element of f32add/sub/mul/div: special cases, then the double result
 * rounded once to f32 and checked for overflow (ISA2 §3.7.3.7). */
static float f32_binop(enum f32_binop op, float a, float b, unsigned *exc)
{
    float r;
    if (op == F32_SUB)
        b = -b;                             /* as ISA2 does, before the checks */
    bool special = op == F32_MUL ? fp32_mul_special(a, b, exc, &r)
                 : op == F32_DIV ? fp32_div_special(a, b, exc, &r)
                 : fp32_add_special(a, b, exc, &r);
    if (special)
        return r;
    double e = op == F32_MUL ? (double)a * b : op == F32_DIV ? (double)a / b : (double)a + b;
    r = (float)e;
    *exc |= fp_overflow_check(r, false, false);
    return r;
}

static enum isa_flow f32_binary(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                enum f32_binop op, unsigned n)
{
    float r[2];
    unsigned exc = 0;
    for (unsigned i = 0; i < n; i++)
        r[i] = f32_binop(op, rd_f32(c, in->operand[1] + (int)i), rd_f32(c, in->operand[2] + (int)i), &exc);
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    for (unsigned i = 0; i < n; i++)
        wr_f32(c, in->operand[0] + (int)i, r[i]);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_F32ADD(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_binary(t, c, in, F32_ADD, 1); }
enum isa_flow isa_exec_F32SUB(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_binary(t, c, in, F32_SUB, 1); }
enum isa_flow isa_exec_F32MUL(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_binary(t, c, in, F32_MUL, 1); }
enum isa_flow isa_exec_F32V2ADD(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_binary(t, c, in, F32_ADD, 2); }
enum isa_flow isa_exec_F32V2SUB(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_binary(t, c, in, F32_SUB, 2); }
enum isa_flow isa_exec_F32V2MUL(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_binary(t, c, in, F32_MUL, 2); }

/* f32div: a malign overflow alone is an imprecise exception (ISA2 §4.1.4.1,
 * TFPU_F32DivExceptIsImprecise): the quotient is written, then the
 * exception is raised. */
enum isa_flow isa_exec_F32DIV(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    unsigned exc = 0;
    float r = f32_binop(F32_DIV, rd_f32(c, in->operand[1]), rd_f32(c, in->operand[2]), &exc);
    bool imprecise = exc == FP_EXC_OFLO && (fp_ctl(c) & FP_EXC_OFLO);
    if (imprecise)
        wr_f32(c, in->operand[0], r);
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    wr_f32(c, in->operand[0], r);
    return ISA_FLOW_NEXT;
}

static enum isa_flow f32_minmax(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                bool max, unsigned n)
{
    float r[2];
    unsigned exc = 0;
    for (unsigned i = 0; i < n; i++) {
        float a = rd_f32(c, in->operand[1] + (int)i), b = rd_f32(c, in->operand[2] + (int)i);
        if (fp32_is_snan(a) || fp32_is_snan(b))
            exc |= FP_EXC_INV;
        r[i] = max ? fp32_max(a, b) : fp32_min(a, b);
    }
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    for (unsigned i = 0; i < n; i++)
        wr_f32(c, in->operand[0] + (int)i, r[i]);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_F32MAX(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_minmax(t, c, in, true, 1); }
enum isa_flow isa_exec_F32MIN(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_minmax(t, c, in, false, 1); }
enum isa_flow isa_exec_F32V2MAX(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_minmax(t, c, in, true, 2); }
enum isa_flow isa_exec_F32V2MIN(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_minmax(t, c, in, false, 2); }

/* Comparisons are IEEE unordered-signalling predicates: any NaN operand
 * raises invalid (ISA2 §2.9.8).  `truth` has bit (1 << relation) set for the
 * relations that give TFPU_FP32_TRUE (0xffffffff). */
static enum isa_flow f32_compare(isa_tile_state *t, isa_context *c, const isa_insn *in, unsigned truth)
{
    enum fp_relation rel = fp32_relation(rd_f32(c, in->operand[1]), rd_f32(c, in->operand[2]));
    enum isa_flow f = fp_flags(t, c, in, rel == FP_REL_UN ? FP_EXC_INV : 0);
    if (f != ISA_FLOW_NEXT)
        return f;
    isa_set_a(c, in->operand[0], (truth >> rel) & 1 ? 0xffffffffu : 0u);
    return ISA_FLOW_NEXT;
}

#define REL(r) (1u << (r))
enum isa_flow isa_exec_F32CMPEQ(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_compare(t, c, in, REL(FP_REL_EQ)); }
enum isa_flow isa_exec_F32CMPNE(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_compare(t, c, in, REL(FP_REL_LT) | REL(FP_REL_GT) | REL(FP_REL_UN)); }
enum isa_flow isa_exec_F32CMPLT(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_compare(t, c, in, REL(FP_REL_LT)); }
enum isa_flow isa_exec_F32CMPLE(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_compare(t, c, in, REL(FP_REL_LT) | REL(FP_REL_EQ)); }
enum isa_flow isa_exec_F32CMPGT(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_compare(t, c, in, REL(FP_REL_GT)); }
enum isa_flow isa_exec_F32CMPGE(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_compare(t, c, in, REL(FP_REL_GT) | REL(FP_REL_EQ)); }
#undef REL

/* ---- f32 square root, reciprocals, transcendentals ----------------------- */

typedef bool (*fp32_special_fn)(float, unsigned *, float *);

static double d_sqrt(double x) { return sqrt(x); }
static double d_recip(double x) { return 1.0 / x; }
static double d_rsqrt(double x) { return 1.0 / sqrt(x); }
static double d_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* A one-operand f32 instruction: special cases, else fn in double rounded
 * once to f32; `oflo` for the instructions that can overflow (exp, exp2). */
static enum isa_flow f32_unary(isa_tile_state *t, isa_context *c, const isa_insn *in,
                               fp32_special_fn special, double (*fn)(double), bool oflo)
{
    float a = rd_f32(c, in->operand[1]), r;
    unsigned exc = 0;
    if (!special(a, &exc, &r)) {
        r = (float)fn(a);
        if (oflo)
            exc |= fp_overflow_check(r, false, false);
    }
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    wr_f32(c, in->operand[0], r);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_F32SQRT(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_unary(t, c, in, fp32_sqrt_special, d_sqrt, false); }
enum isa_flow isa_exec_F32OOX(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_unary(t, c, in, fp32_recip_special, d_recip, false); }
enum isa_flow isa_exec_F32OORX(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_unary(t, c, in, fp32_rsqrt_special, d_rsqrt, false); }
enum isa_flow isa_exec_F32EXP(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_unary(t, c, in, fp32_exp_special, exp, true); }
enum isa_flow isa_exec_F32EXP2(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_unary(t, c, in, fp32_exp_special, exp2, true); }
enum isa_flow isa_exec_F32LN(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_unary(t, c, in, fp32_log_special, log, false); }
enum isa_flow isa_exec_F32LOG2(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_unary(t, c, in, fp32_log_special, log2, false); }
enum isa_flow isa_exec_F32TANH(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_unary(t, c, in, fp32_tanh_special, tanh, false); }
enum isa_flow isa_exec_F32SIGM(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_unary(t, c, in, fp32_sigmoid_special, d_sigmoid, false); }

/* ---- integer conversions ----------------------------------------------- */

enum isa_flow isa_exec_F32INT(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    float a = rd_f32(c, in->operand[1]);
    enum isa_flow f = fp_flags(t, c, in, fp32_is_snan(a) ? FP_EXC_INV : 0);
    if (f != ISA_FLOW_NEXT)
        return f;
    wr_f32(c, in->operand[0], fp32_round_integral(a, FP_RND_EVEN));
    return ISA_FLOW_NEXT;
}

/* f32toi32/f32toui32 (ISA2 §3.7.3.1.9–10): round to nearest even; NaN,
 * infinity and out-of-range values are invalid and give INT32_MIN (signed)
 * or 0 (unsigned). */
static enum isa_flow f32_to_int(isa_tile_state *t, isa_context *c, const isa_insn *in, bool is_signed)
{
    float a = rd_f32(c, in->operand[1]);
    double lo = is_signed ? (double)INT32_MIN : 0.0;
    double hi = is_signed ? (double)INT32_MAX : (double)UINT32_MAX;
    uint32_t bad = is_signed ? 0x80000000u : 0u, result;
    unsigned exc = 0;
    if (isnan(a) || isinf(a)) {
        exc = FP_EXC_INV;
        result = bad;
    } else {
        double r = fp32_round_integral(a, FP_RND_EVEN);
        if (r < lo || r > hi) {
            exc = FP_EXC_INV;
            result = bad;
        } else {
            result = is_signed ? (uint32_t)(int32_t)r : (uint32_t)r;
        }
    }
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    isa_set_a(c, in->operand[0], result);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_F32TOI32(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_to_int(t, c, in, true); }
enum isa_flow isa_exec_F32TOUI32(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_to_int(t, c, in, false); }

/* Exact up to 2^24 in magnitude, rounded to nearest even above. */
enum isa_flow isa_exec_F32FROMI32(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    wr_f32(c, in->operand[0], (float)(double)(int32_t)isa_a(c, in->operand[1]));
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_F32FROMUI32(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    wr_f32(c, in->operand[0], (float)(double)isa_a(c, in->operand[1]));
    return ISA_FLOW_NEXT;
}

/* ---- f16 <-> f32 conversions ------------------------------------------- */

/* f32tof16 (n = 1, result in both halves) and f32v2tof16 (n = 2), ISA2
 * §3.7.3.1.8, §3.7.3.1.12. */
static enum isa_flow f32_to_f16(isa_tile_state *t, isa_context *c, const isa_insn *in, unsigned n)
{
    float x[2], r[2];
    unsigned exc = 0;
    bool nanoo = fp_ctl(c) & FP_CTL_NANOO;
    for (unsigned i = 0; i < n; i++)
        x[i] = r[i] = rd_f32(c, in->operand[1] + (int)i);
    if (fp_ctl(c) & FP_CTL_ESR) {
        uint64_t rnd[2];
        fp_prng_advance(c->prng, rnd);
        for (unsigned i = 0; i < n; i++)
            r[i] = fp16_stochastic_round(r[i], fp16_sr_bits(rnd, i));
    }
    for (unsigned i = 0; i < n; i++) {
        if (fp32_is_snan(x[i]) || isinf(x[i]))
            exc |= FP_EXC_INV;
        else if (!isnan(x[i]))
            exc |= fp_overflow_check(r[i], true, nanoo);
    }
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    f16_t h[2];
    for (unsigned i = 0; i < n; i++)
        h[i] = fp16_from_f32_tile(isnan(x[i]) || isinf(x[i]) ? fp32_qnan() : r[i], f16_sat(c));
    if (n == 1)
        h[1] = h[0];
    wr_f16(c, in->operand[0], 2, h);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_F32TOF16(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_to_f16(t, c, in, 1); }
enum isa_flow isa_exec_F32V2TOF16(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f32_to_f16(t, c, in, 2); }

/* f16tof32 (element 0) and f16v2tof32: exact; NaNs become the fixed quiet
 * NaN, signalling ones raising invalid; infinities stay infinities. */
static enum isa_flow f16_to_f32(isa_tile_state *t, isa_context *c, const isa_insn *in, unsigned n)
{
    f16_t h[2];
    unsigned exc = 0;
    rd_f16(c, in->operand[1], 2, h);
    for (unsigned i = 0; i < n; i++)
        if (fp16_is_snan(h[i]))
            exc |= FP_EXC_INV;
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    for (unsigned i = 0; i < n; i++)
        wr_f32(c, in->operand[0] + (int)i, fp16_is_nan(h[i]) ? fp32_qnan() : fp16_to_f32(h[i]));
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_F16TOF32(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_to_f32(t, c, in, 1); }
enum isa_flow isa_exec_F16V2TOF32(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_to_f32(t, c, in, 2); }

/* ---- f16 vector arithmetic ----------------------------------------------- */

enum f16_binop { F16_ADD, F16_SUB, F16_MUL, F16_MAX, F16_MIN };

/* f16v2/f16v4 min and max (ISA2 §3.7.3.2.19, .21): minNum/maxNum with
 * infinities kept; only signalling NaNs raise invalid. */
static enum isa_flow f16_minmax(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                bool max, unsigned n)
{
    f16_t x[4], y[4], z[4];
    unsigned exc = 0;
    rd_f16(c, in->operand[1], n, x);
    rd_f16(c, in->operand[2], n, y);
    for (unsigned i = 0; i < n; i++) {
        if (fp16_is_snan(x[i]) || fp16_is_snan(y[i]))
            exc |= FP_EXC_INV;
        float a = fp16_to_f32(x[i]), b = fp16_to_f32(y[i]);
        z[i] = fp16_from_f32_tile(max ? fp32_max(a, b) : fp32_min(a, b), FP16_SAT_PROP_INF);
    }
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    wr_f16(c, in->operand[0], n, z);
    return ISA_FLOW_NEXT;
}

/* f16v2/f16v4 add, sub, mul (ISA2 §3.7.3.2.3, .22, .24; §3.7.3.3.5, .25,
 * .32): the exact result of the two f16 operands (exact in double) is
 * rounded once to f16 precision with ties to even — or, with $FP_CTL.ESR,
 * rounded to f32 and then stochastically to f16 with the bits of one
 * PRNG advance (element i uses fp16_sr_bits(rnd, i)).  Then the overflow
 * check, then saturation (or NaN with $FP_CTL.NANOO). */
static enum isa_flow f16_binary(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                enum f16_binop op, unsigned n)
{
    if (op == F16_MAX || op == F16_MIN)
        return f16_minmax(t, c, in, op == F16_MAX, n);

    f16_t x[4], y[4], z[4];
    float a[4], b[4], r[4];
    bool special[4];
    unsigned exc = 0;
    bool sr = fp_ctl(c) & FP_CTL_ESR, nanoo = fp_ctl(c) & FP_CTL_NANOO;
    rd_f16(c, in->operand[1], n, x);
    rd_f16(c, in->operand[2], n, y);
    for (unsigned i = 0; i < n; i++) {
        a[i] = f16_arith_in(x[i], &exc);
        b[i] = f16_arith_in(y[i], &exc);
        special[i] = op == F16_MUL ? fp32_mul_special(a[i], b[i], &exc, &r[i])
                   : fp32_add_special(a[i], op == F16_SUB ? -b[i] : b[i], &exc, &r[i]);
    }
    uint64_t rnd[2] = {0, 0};
    if (sr)
        fp_prng_advance(c->prng, rnd);
    for (unsigned i = 0; i < n; i++) {
        if (!special[i]) {
            double e = op == F16_MUL ? (double)a[i] * b[i]
                     : op == F16_SUB ? (double)a[i] - b[i] : (double)a[i] + b[i];
            r[i] = sr ? (float)e : fp_round_f16_precision(e);
        }
        if (sr)
            r[i] = fp16_stochastic_round(r[i], fp16_sr_bits(rnd, i));
        exc |= fp_overflow_check(r[i], true, nanoo);
    }
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    for (unsigned i = 0; i < n; i++)
        z[i] = fp16_from_f32_tile(r[i], f16_sat(c));
    wr_f16(c, in->operand[0], n, z);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_F16V2ADD(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_binary(t, c, in, F16_ADD, 2); }
enum isa_flow isa_exec_F16V2SUB(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_binary(t, c, in, F16_SUB, 2); }
enum isa_flow isa_exec_F16V2MUL(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_binary(t, c, in, F16_MUL, 2); }
enum isa_flow isa_exec_F16V2MAX(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_binary(t, c, in, F16_MAX, 2); }
enum isa_flow isa_exec_F16V2MIN(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_binary(t, c, in, F16_MIN, 2); }
enum isa_flow isa_exec_F16V4ADD(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_binary(t, c, in, F16_ADD, 4); }
enum isa_flow isa_exec_F16V4SUB(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_binary(t, c, in, F16_SUB, 4); }
enum isa_flow isa_exec_F16V4MUL(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_binary(t, c, in, F16_MUL, 4); }
enum isa_flow isa_exec_F16V4MAX(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_binary(t, c, in, F16_MAX, 4); }
enum isa_flow isa_exec_F16V4MIN(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_binary(t, c, in, F16_MIN, 4); }

/* f16v2exp, f16v2tanh, f16v2sigm (ISA2 §3.7.3.2.13, .23, .26): special
 * cases as for f32, else the function in double rounded to f16 precision
 * (ISA2 specifies exp and tanh correctly rounded, sigm within 16.5 ulp). */
static enum isa_flow f16_unary(isa_tile_state *t, isa_context *c, const isa_insn *in,
                               fp32_special_fn special, double (*fn)(double), bool oflo)
{
    f16_t x[2], z[2];
    float r[2];
    unsigned exc = 0;
    bool nanoo = fp_ctl(c) & FP_CTL_NANOO;
    rd_f16(c, in->operand[1], 2, x);
    for (unsigned i = 0; i < 2; i++) {
        float a = f16_arith_in(x[i], &exc);
        if (!special(a, &exc, &r[i])) {
            r[i] = fp_round_f16_precision(fn(a));
            if (oflo)
                exc |= fp_overflow_check(r[i], true, nanoo);
        }
    }
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    for (unsigned i = 0; i < 2; i++)
        z[i] = fp16_from_f32_tile(r[i], f16_sat(c));
    wr_f16(c, in->operand[0], 2, z);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_F16V2EXP(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_unary(t, c, in, fp32_exp_special, exp, true); }
enum isa_flow isa_exec_F16V2TANH(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_unary(t, c, in, fp32_tanh_special, tanh, false); }
enum isa_flow isa_exec_F16V2SIGM(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return f16_unary(t, c, in, fp32_sigmoid_special, d_sigmoid, false); }

/* ---- accumulators ($AACC, ISA2 §2.9.9) ----------------------------------- */

/* Read n f32 operands from register r, or n f16 operands when f16. */
static void rd_operands(const isa_context *c, int r, unsigned n, bool f16, float *v, unsigned *exc)
{
    if (f16) {
        f16_t h[8];
        rd_f16(c, r, n, h);
        for (unsigned i = 0; i < n; i++)
            v[i] = f16_arith_in(h[i], exc);
    } else {
        for (unsigned i = 0; i < n; i++)
            v[i] = rd_f32(c, r + (int)i);
    }
}

/* f16v8acc, f32v4acc, f32v2acc: $AACC[2i] += operand i, i < n, without
 * rounding flags (TFPU_Add); only signalling NaN operands raise invalid. */
static enum isa_flow accumulate(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                unsigned n, bool f16)
{
    float v[8];
    unsigned exc = 0;
    rd_operands(c, in->operand[0], n, f16, v, &exc);
    for (unsigned i = 0; i < n; i++)
        if (fp32_is_snan(v[i]))
            exc |= FP_EXC_INV;
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    for (unsigned i = 0; i < n; i++)
        set_aacc(c, 2 * i, fp32_add(v[i], aacc(c, 2 * i)));
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_F16V8ACC(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return accumulate(t, c, in, 8, true); }
enum isa_flow isa_exec_F32V4ACC(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return accumulate(t, c, in, 4, false); }
enum isa_flow isa_exec_F32V2ACC(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return accumulate(t, c, in, 2, false); }

/* f32mac, f32v2mac, f16v4mac: $AACC[2i] += x[i] * y[i], the product rounded
 * to f32 before the addition (not fused, ISA2 §2.9.9.1). */
static enum isa_flow multiply_accumulate(isa_tile_state *t, isa_context *c, const isa_insn *in,
                                         unsigned n, bool f16)
{
    float x[4], y[4], r[4];
    bool special[4];
    unsigned exc = 0;
    rd_operands(c, in->operand[0], n, f16, x, &exc);
    rd_operands(c, in->operand[1], n, f16, y, &exc);
    for (unsigned i = 0; i < n; i++)
        special[i] = fp32_mac_special(x[i], y[i], aacc(c, 2 * i), &exc, &r[i]);
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    for (unsigned i = 0; i < n; i++)
        set_aacc(c, 2 * i, special[i] ? r[i] : fp32_add(fp32_mul(x[i], y[i]), aacc(c, 2 * i)));
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_F32MAC(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return multiply_accumulate(t, c, in, 1, false); }
enum isa_flow isa_exec_F32V2MAC(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return multiply_accumulate(t, c, in, 2, false); }
enum isa_flow isa_exec_F16V4MAC(isa_tile_state *t, isa_context *c, const isa_insn *in)
{ return multiply_accumulate(t, c, in, 4, true); }

/* f32v2gina (ISA2 §3.7.3.5.14) with immediate 0: read $AACC[0] and $AACC[2]
 * into the destination, move the even accumulators of set 0 down a step
 * ([0] <- [4] <- [8] <- [12], [2] <- [6] <- [10] <- [14]) and put the two
 * operands in $AACC[12] and $AACC[14], so four issues read out and replace
 * all eight. */
enum isa_flow isa_exec_F32V2GINA(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    float x[2] = { rd_f32(c, in->operand[1]), rd_f32(c, in->operand[1] + 1) };
    float out[2] = { aacc(c, 0), aacc(c, 2) };
    unsigned exc = (fp32_is_snan(x[0]) || fp32_is_snan(x[1])) ? FP_EXC_INV : 0;
    for (unsigned i = 0; i < 2; i++)
        exc |= fp_aacc_read_flags(out[i], false, false);
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    for (unsigned k = 0; k < 12; k += 4) {
        c->amp.aacc[k] = c->amp.aacc[k + 4];
        c->amp.aacc[k + 2] = c->amp.aacc[k + 6];
    }
    set_aacc(c, 12, isnan(x[0]) ? fp32_qnan() : x[0]);
    set_aacc(c, 14, isnan(x[1]) ? fp32_qnan() : x[1]);
    for (unsigned i = 0; i < 2; i++)
        wr_f32(c, in->operand[0] + (int)i, isnan(out[i]) ? fp32_qnan() : out[i]);
    return ISA_FLOW_NEXT;
}

/* f32v2axpy $aD, $aX, $aY (ISA2 §3.7.3.5.5): $AACC[0,2] = $TAS * x + y, the
 * product rounded to f32 first (operands flushed from the denormal range
 * as every f32 multiply's are, so it gives a Mul's and an Add's bits);
 * the destination gets the previous
 * $AACC[0,2] — a result comes out one issue after its operands went in, so
 * a loop runs one issue behind its loads and ends with a flushing issue. */
enum isa_flow isa_exec_F32V2AXPY(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    float a = fp32_from_bits(c->csr[ISA_CSR_TAS]);
    float x[2], y[2], r[2], out[2];
    bool special[2];
    unsigned exc = 0;
    for (unsigned i = 0; i < 2; i++) {
        x[i] = rd_f32(c, in->operand[1] + (int)i);
        y[i] = rd_f32(c, in->operand[2] + (int)i);
        out[i] = aacc(c, 2 * i);
        special[i] = fp32_axpby_special(a, x[i], 1.0f, y[i], &exc, &r[i]);
        if (!special[i])
            r[i] = fp32_add(fp32_mul(a, x[i]), y[i]);
        if (isnan(out[i]))
            out[i] = fp32_qnan();
        exc |= fp_aacc_read_flags(out[i], false, false);
    }
    enum isa_flow f = fp_flags(t, c, in, exc);
    if (f != ISA_FLOW_NEXT)
        return f;
    for (unsigned i = 0; i < 2; i++) {
        set_aacc(c, 2 * i, r[i]);
        wr_f32(c, in->operand[0] + (int)i, out[i]);
    }
    return ISA_FLOW_NEXT;
}

/* ---- worker CSRs from the aux pipeline ------------------------------------ */

enum isa_flow isa_exec_UGET(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    uint32_t v;
    enum isa_flow f = isa_csr_read(t, c, in, (unsigned)in->operand[1], &v);
    if (f != ISA_FLOW_NEXT)
        return f;
    isa_set_a(c, in->operand[0], v);
    return ISA_FLOW_NEXT;
}

enum isa_flow isa_exec_UPUT(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    return isa_csr_write(t, c, in, (unsigned)in->operand[0], isa_a(c, in->operand[1]));
}
