/*
 * amp.h — state and arithmetic of the Accumulating Matrix Product (AMP) unit.
 *
 * What is modelled (ISA2 §2.7.6, §2.7.7, §2.9.9–2.9.11 and the instruction
 * pages of f16v4hihoamp, f16v4sisoamp, f16v4hihov4amp, f32sisoamp,
 * f32sisov2amp, ld64putcs, ld128putcs):
 *
 *   - Weights live in the Common Compute Configuration State: 64 entries of
 *     64 bits, $CWEI_n_m at index 4n + m (n 0..15, m 0..3), shared by all
 *     contexts and written only by the supervisor through $CCCSLOAD with
 *     ld64putcs (one entry) and ld128putcs (an even/odd pair).
 *   - Each context has 32 f32 accumulators $AACC.  The AMP has 2 sets of 4
 *     engines; an engine has 2 units, unit k owns $AACC[2k] (even: the sum
 *     being accumulated) and $AACC[2k+1] (odd: the chain that carries
 *     incoming partial sums down the engines and finished results out).
 *     Set 0 is units 0..7, set 1 units 8..15.  The accumulators *are* the
 *     4-phase pipeline: a partial sum enters at the last enabled engine,
 *     walks down the odd accumulators, is combined with 4 (f16) or 8 (f32)
 *     dot-product steps in the even accumulator, and walks out again, so a
 *     result leaves 8 issues after its partial sum entered and 4 issues
 *     after the last input it depends on (f16; f32: 16 and 8).
 *   - f16 inputs: every unit takes a 4-element f16 dot product of the input
 *     vector with its weight entry $CWEI_k_phase per issue (f16v4hihoamp and
 *     f16v4sisoamp: set 0, 32 MACs; f16v4hihov4amp: both sets, 64 MACs).
 *     f32 inputs: every unit multiplies the scalar input by one 32-bit half
 *     of $CWEI_k_(phase/2) (f32sisoamp: set 0, 8 MACs; f32sisov2amp: both
 *     sets, set 1 one issue behind through $TAS, 16 MACs).
 *   - Accumulation is strictly f32, denormals flushed to zero (ISA2
 *     §2.9.9 "IPU2 implementation detail", §2.9.4.1); f16 results are
 *     rounded from f32 to nearest even, or stochastically when
 *     $FP_CTL.ESR is set (2 PRNG steps per issue, ISA2 §2.13.6), saturating
 *     to ±65504 on overflow (qNaN if $FP_CTL.NANOO); infinities and NaNs
 *     come out as the fixed quiet NaN.  $FP_STS flags and malign FP
 *     exceptions follow the instruction pages.
 *
 * What is approximated:
 *   - ISA2 does not publish TFPU_F16DotProduct (its body is empty in
 *     §4.1.3.18; §2.9.10.1 only says the result "may differ" from the exact
 *     one).  ipusim computes the 4 products and their sum exactly and rounds
 *     once to f32 (nearest even): isa_amp_f16_dot4().
 *   - The bit positions of the enumFlags fields (PH phase, EE engine enable)
 *     are in figures that the ISA text does not carry; ipusim's layout is
 *     ISA_AMP_F16_FLAGS / ISA_AMP_F32_FLAGS below.
 *   - NaN results are the tile's fixed quiet NaNs (fparith.h, fp16.h).
 */
#ifndef IPUSIM_ISA_AMP_H
#define IPUSIM_ISA_AMP_H

#include <stdint.h>

#include "isa.h"

#define ISA_CWEI_ENTRIES    64     /* 64-bit $CWEI_n_m entries (CCCS indices 0..63) */
#define ISA_CWEI_WORDS      128    /* the same state as 32-bit words */
#define ISA_AACC_WORDS      32     /* f32 accumulators per context (TFPU_NUM_ACCUM) */
#define ISA_AMP_SETS        2
#define ISA_AMP_UNITS_PER_SET 8    /* 4 engines of 2 units */
#define ISA_AMP_ENGINES_PER_SET 4

/* enumFlags of the f16 AMP instructions: PH in bits 1..0 (phase 0..3), EE in
 * bits 3..2 (engines enabled minus one, 0..3).  Poplibs' TAMP_F16V4_E4_P<p>
 * is ISA_AMP_F16_FLAGS(4, p). */
#define ISA_AMP_F16_FLAGS(engines, phase) ((((engines) - 1u) << 2) | (phase))
/* enumFlags of f32sisoamp/f32sisov2amp: PH in bits 2..0 (phase 0..7), EE in
 * bits 4..3.  TAMP_F32_E4_P<p> is ISA_AMP_F32_FLAGS(4, p). */
#define ISA_AMP_F32_FLAGS(engines, phase) ((((engines) - 1u) << 3) | (phase))

/* Kinds of weight values (isa_amp_f16_phase.kind). */
#define ISA_AMP_W_NAN_OR_INF 0x1u  /* some weight is a NaN or an infinity */
#define ISA_AMP_W_SIGNALS    0x2u  /* some weight is an sNaN or an infinity (INV) */

#define ISA_AMP_UNITS (ISA_AMP_SETS * ISA_AMP_UNITS_PER_SET)

/* The weights one phase of the f16 AMP instructions reads ($CWEI_k_phase
 * for units k = 0..15), decoded for exec_amp.c's fast path: a cache of
 * cwei[], never state of its own. */
typedef struct isa_amp_f16_phase {
    /* w[i][k]: element i of unit k's entry as a double (exact); 0 where
     * that element is a NaN or an infinity. */
    double w[4][ISA_AMP_UNITS];
    /* Over the units of set s in engines 0..e (those EE = e enables):
     * kind[s][e], the ISA_AMP_W_* of their weights, OR-ed; span[s][e], the
     * largest exponent span (largest minus smallest binary exponent of
     * the non-zero finite weights) of one entry. */
    uint8_t kind[ISA_AMP_SETS][ISA_AMP_ENGINES_PER_SET];
    uint8_t span[ISA_AMP_SETS][ISA_AMP_ENGINES_PER_SET];
} isa_amp_f16_phase;

/* $CWEI: entry i (CCCS index i = 4n + m, $CWEI_n_m) is cwei[2i] (bits 31..0)
 * and cwei[2i+1] (bits 63..32).  Write entries only with isa_amp_set_cwei:
 * it marks the phase's decoded weights stale (entry 4k + p belongs to phase
 * p), and the f16 AMP executors rebuild a stale phase before using it.
 * An all-zero isa_amp_shared (memset) is consistent: zero weights, nothing
 * stale. */
typedef struct isa_amp_shared {
    uint32_t cwei[ISA_CWEI_WORDS];
    uint32_t f16_stale;                  /* bit p: f16_phase[p] out of date */
    isa_amp_f16_phase f16_phase[4];
} isa_amp_shared;

/* $AACC of one context, f32 bits: the whole AMP pipeline state of the
 * context.  $FP_CLR.ZAACC zeroes all of it (isa_amp_clear). */
typedef struct isa_amp_context {
    uint32_t aacc[ISA_AACC_WORDS];
} isa_amp_context;

static inline void isa_amp_clear(isa_amp_context *a)
{
    for (unsigned i = 0; i < ISA_AACC_WORDS; i++)
        a->aacc[i] = 0;
}

static inline uint64_t isa_amp_cwei(const isa_amp_shared *s, unsigned index)
{
    return (uint64_t)s->cwei[2 * index] | ((uint64_t)s->cwei[2 * index + 1] << 32);
}

static inline void isa_amp_set_cwei(isa_amp_shared *s, unsigned index, uint64_t v)
{
    s->cwei[2 * index] = (uint32_t)v;
    s->cwei[2 * index + 1] = (uint32_t)(v >> 32);
    s->f16_stale |= 1u << (index & 3u);
}

/* MACs one issue of op performs with every engine enabled: 32 for
 * f16v4hihoamp and f16v4sisoamp, 64 for f16v4hihov4amp, 8 for f32sisoamp,
 * 16 for f32sisov2amp, 0 for anything else.  One worker issues per tile
 * cycle, so these are also the tile's MACs per cycle when six workers issue
 * nothing else (ISA2 §2.9.11: peak 64 f16 / 16 f32). */
unsigned isa_amp_macs(enum isa_op op);

/* The same for one decoded instruction: engines disabled by its enumFlags
 * do no work. */
unsigned isa_amp_insn_macs(const isa_insn *in);

/* The AMP's 4-element f16 dot product (TFPU_F16DotProduct as ipusim
 * models it): the sum of x[i] * w[i] (f16 bits) computed exactly and
 * rounded once to f32, nearest even; any NaN or infinite element gives the
 * tile's quiet NaN.  The result is never an f32 denormal (it is 0 or at
 * least 2^-48 in magnitude).  Accumulation then uses fp32_add (fparith.h),
 * and the f32 AMP products fp32_mul. */
float isa_amp_f16_dot4(const uint16_t x[4], const uint16_t w[4]);

/* The same value computed the slow, obviously exact way: the four products
 * as integers times 2^-48, summed in 128 bits and rounded once.
 * isa_amp_f16_dot4 and the f16 AMP executors take a faster path where it
 * is provably equal and fall back on this one otherwise; it is public as
 * the reference the tests compare the fast path with. */
float isa_amp_f16_dot4_exact(const uint16_t x[4], const uint16_t w[4]);

#endif
