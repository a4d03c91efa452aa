/*
 * test_amp.c — the AMP unit (isa/exec_amp.c): loading $CWEI with
 * ld64putcs/ld128putcs, which weight entry each unit uses in each phase,
 * the 4-phase pipeline (partial sums in 8 issues before their result,
 * inputs 4 issues before it), f16 and f32 partials, the dual-set
 * f16v4hihov4amp and f32sisov2amp, engine enables, $FP_CLR.ZAACC, the f32
 * accumulation and the rounding of f16 results (nearest even, stochastic,
 * saturation), and the 4-element dot product model.
 *
 * Expected values are computed from formulas (sums of small integers, exact
 * in f16 and f32), never by running a second model of the pipeline.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec_fixture.h"
#include "isa/amp.h"
#include "isa/fp16.h"
#include "isa/fparith.h"
#include "test_util.h"

static uint16_t h16(double v) { return fp16_from_f32((float)v); }
static uint32_t f32b(double v) { return isa_f32_bits((float)v); }
static uint32_t pack2(uint16_t lo, uint16_t hi) { return (uint32_t)lo | ((uint32_t)hi << 16); }
static uint64_t pack4(const double v[4])
{
    return (uint64_t)h16(v[0]) | ((uint64_t)h16(v[1]) << 16) | ((uint64_t)h16(v[2]) << 32) |
           ((uint64_t)h16(v[3]) << 48);
}

/* ---- weight loads ------------------------------------------------------- */

static void test_ld64putcs(void)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *s = fx_supervisor(t);
    fx_poke64(t, FX_DATA0, 0x1111222233334444ull);
    fx_poke64(t, FX_DATA0 + 8, 0x5555666677778888ull);
    s->csr[ISA_CSR_CCCSLOAD] = FX_DATA0;
    /* $CWEI_1_1 (index 5), then $CWEI_15_3 (index 63) from the next word. */
    CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD64PUTCS, 5), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(s->csr[ISA_CSR_CCCSLOAD], FX_DATA0 + 8);
    CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD64PUTCS, 63), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(s->csr[ISA_CSR_CCCSLOAD], FX_DATA0 + 16);
    CU_ASSERT_EQUAL(isa_amp_cwei(&t->amp, 5), 0x1111222233334444ull);
    CU_ASSERT_EQUAL(t->amp.cwei[10], 0x33334444u);          /* low word first */
    CU_ASSERT_EQUAL(t->amp.cwei[11], 0x11112222u);
    CU_ASSERT_EQUAL(isa_amp_cwei(&t->amp, 63), 0x5555666677778888ull);
    for (unsigned i = 0; i < ISA_CWEI_ENTRIES; i++)
        if (i != 5 && i != 63)
            CU_ASSERT_EQUAL(isa_amp_cwei(&t->amp, i), 0);

    /* Not a $CWEI index. */
    CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD64PUTCS, 64), ISA_FLOW_FAULT);
    isa_fault f = fx_take_fault(t);
    CU_ASSERT_EQUAL(f.exception, ISA_EXC_INVALID_OPERAND);
    CU_ASSERT_STRING_EQUAL(f.message, "ld64putcs: configuration index 64 is not a $CWEI entry (0..63)");
    CU_ASSERT_EQUAL(s->csr[ISA_CSR_CCCSLOAD], FX_DATA0 + 16);

    /* Misaligned and out-of-range addresses. */
    s->csr[ISA_CSR_CCCSLOAD] = FX_DATA0 + 4;
    CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD64PUTCS, 0), ISA_FLOW_FAULT);
    f = fx_take_fault(t);
    CU_ASSERT_EQUAL(f.exception, ISA_EXC_MEM_ALIGN);
    CU_ASSERT_EQUAL(f.address, FX_DATA0 + 4);
    CU_ASSERT_STRING_EQUAL(f.message, "ld64putcs: $CCCSLOAD 0x50004 is not 8-byte aligned");
    s->csr[ISA_CSR_CCCSLOAD] = 0x40000;
    CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD64PUTCS, 0), ISA_FLOW_FAULT);
    CU_ASSERT_EQUAL(fx_take_fault(t).exception, ISA_EXC_MEM_RANGE);
    CU_ASSERT_EQUAL(isa_amp_cwei(&t->amp, 0), 0);
    fx_tile_free(t);
}

static void test_ld128putcs(void)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *s = fx_supervisor(t);
    fx_poke64(t, FX_DATA1, 0xaaaa0000aaaa0001ull);
    fx_poke64(t, FX_DATA1 + 8, 0xbbbb0000bbbb0002ull);
    s->csr[ISA_CSR_CCCSLOAD] = FX_DATA1;
    CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD128PUTCS, 10), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(isa_amp_cwei(&t->amp, 10), 0xaaaa0000aaaa0001ull);   /* $CWEI_2_2 */
    CU_ASSERT_EQUAL(isa_amp_cwei(&t->amp, 11), 0xbbbb0000bbbb0002ull);   /* $CWEI_2_3 */
    CU_ASSERT_EQUAL(s->csr[ISA_CSR_CCCSLOAD], FX_DATA1 + 16);

    CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD128PUTCS, 7), ISA_FLOW_FAULT);  /* odd index */
    isa_fault f = fx_take_fault(t);
    CU_ASSERT_EQUAL(f.exception, ISA_EXC_INVALID_OPERAND);
    CU_ASSERT_STRING_EQUAL(f.message, "ld128putcs: configuration index 7 must be an even $CWEI entry (0..62)");
    CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD128PUTCS, 64), ISA_FLOW_FAULT);
    CU_ASSERT_EQUAL(fx_take_fault(t).exception, ISA_EXC_INVALID_OPERAND);
    /* 128-bit loads need the interleaved region 1. */
    s->csr[ISA_CSR_CCCSLOAD] = FX_DATA0;
    CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD128PUTCS, 0), ISA_FLOW_FAULT);
    f = fx_take_fault(t);
    CU_ASSERT_EQUAL(f.exception, ISA_EXC_MEM_REGION);
    CU_ASSERT_EQUAL(s->csr[ISA_CSR_CCCSLOAD], FX_DATA0);
    s->csr[ISA_CSR_CCCSLOAD] = FX_DATA1 + 8;
    CU_ASSERT_EQUAL(fx_run(t, s, ISA_OP_LD128PUTCS, 0), ISA_FLOW_FAULT);
    CU_ASSERT_EQUAL(fx_take_fault(t).exception, ISA_EXC_MEM_ALIGN);
    CU_ASSERT_EQUAL(isa_amp_cwei(&t->amp, 0), 0);
    fx_tile_free(t);
}

/* ---- the f16 pipeline ------------------------------------------------- */

enum { ROWS = 3 };

/* Small integers: every sum below is exact in f16 and f32. */
static double wgt(unsigned unit, unsigned j) { return (double)((int)((unit * 7 + j * 3) % 5) - 2); }
static double inp(unsigned row, unsigned j) { return (double)((int)((row * 5 + j * 4 + 1) % 7) - 3); }
static double par(unsigned row, unsigned ch) { return (double)((int)((row * 37 + ch * 11) % 200) - 100); }

/* Result channel ch of row r: unit ch takes input element 4p + j with the
 * j-th half of $CWEI_ch_p (f16), or the (j&1) half of $CWEI_ch_(j/2) (f32,
 * 8 inputs). */
static double f16_result_of(unsigned r, unsigned ch)
{
    double sum = par(r, ch);
    for (unsigned j = 0; j < 16; j++)
        sum += inp(r, j) * wgt(ch, j);
    return sum;
}

static void set_f16_weights(isa_tile_state *t, unsigned units)
{
    for (unsigned k = 0; k < units; k++)
        for (unsigned p = 0; p < 4; p++) {
            double v[4];
            for (unsigned j = 0; j < 4; j++)
                v[j] = wgt(k, 4 * p + j);
            isa_amp_set_cwei(&t->amp, 4 * k + p, pack4(v));
        }
}

/*
 * Drive an f16-input AMP instruction (all 4 engines) the way a 1x1
 * convolution does: at issue i (slot s = i / 4, phase p = i % 4) the
 * partials of row s go in, input vector p of row s - 1 goes in, and
 * channels (2p, 2p+1) [and (8+2p, 9+2p) for hihov4] of row s - 2 come out.
 */
static void run_f16_pipeline(enum isa_op op)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    bool v4 = op == ISA_OP_AMP_F16V4HIHOV4, f32p = op == ISA_OP_AMP_F16V4SISO;
    set_f16_weights(t, v4 ? 16 : 8);
    unsigned checked = 0;
    for (unsigned i = 0; i < 4 * (ROWS + 2); i++) {
        unsigned s = i / 4, p = i % 4;
        double x[4] = {0, 0, 0, 0};
        if (s >= 1 && s - 1 < ROWS)
            for (unsigned j = 0; j < 4; j++)
                x[j] = inp(s - 1, 4 * p + j);
        uint64_t xv = pack4(x);
        w->a[0] = (uint32_t)xv;
        w->a[1] = (uint32_t)(xv >> 32);
        bool have = s < ROWS;
        if (f32p) {
            w->a[2] = have ? f32b(par(s, 2 * p)) : 0;
            w->a[3] = have ? f32b(par(s, 2 * p + 1)) : 0;
        } else {
            w->a[2] = have ? pack2(h16(par(s, 2 * p)), h16(par(s, 2 * p + 1))) : 0;
            w->a[3] = have && v4 ? pack2(h16(par(s, 8 + 2 * p)), h16(par(s, 9 + 2 * p))) : 0;
        }
        w->a[4] = w->a[5] = 0xdeadbeefu;
        CU_ASSERT_EQUAL_FATAL(fx_run(t, w, op, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(4u, p)), ISA_FLOW_NEXT);
        if (s < 2) {
            /* Warm-up: nothing has come through yet. */
            CU_ASSERT_EQUAL(w->a[4], 0);
            if (op != ISA_OP_AMP_F16V4HIHO) {
                CU_ASSERT_EQUAL(w->a[5], 0);
            }
            continue;
        }
        if (s - 2 >= ROWS)
            continue;
        unsigned r = s - 2;
        if (f32p) {
            CU_ASSERT_EQUAL(w->a[4], f32b(f16_result_of(r, 2 * p)));
            CU_ASSERT_EQUAL(w->a[5], f32b(f16_result_of(r, 2 * p + 1)));
        } else {
            CU_ASSERT_EQUAL(w->a[4], pack2(h16(f16_result_of(r, 2 * p)), h16(f16_result_of(r, 2 * p + 1))));
            if (v4) {
                CU_ASSERT_EQUAL(w->a[5], pack2(h16(f16_result_of(r, 8 + 2 * p)), h16(f16_result_of(r, 9 + 2 * p))));
            } else {
                CU_ASSERT_EQUAL(w->a[5], 0xdeadbeefu);     /* hihoamp writes one register */
            }
        }
        checked++;
    }
    CU_ASSERT_EQUAL(checked, 4 * ROWS);
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], 0);
    fx_tile_free(t);
}

static void test_hihoamp_pipeline(void) { run_f16_pipeline(ISA_OP_AMP_F16V4HIHO); }
static void test_sisoamp_pipeline(void) { run_f16_pipeline(ISA_OP_AMP_F16V4SISO); }
static void test_hihov4amp_pipeline(void) { run_f16_pipeline(ISA_OP_AMP_F16V4HIHOV4); }

/* The first result of a sequence leaves 4 issues after its first input and
 * 8 after its partials: feed one row only and watch where it appears. */
static void test_latency(void)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    /* Unit k: weight 1 on input element 0 of phase 0, so R_k = P_k + x. */
    for (unsigned k = 0; k < 8; k++)
        isa_amp_set_cwei(&t->amp, 4 * k, h16(1.0));
    int first_nonzero = -1;
    for (int i = 0; i < 16; i++) {
        w->a[0] = i == 4 ? h16(10.0) : 0;                      /* the input, issue 4 */
        w->a[1] = 0;
        w->a[2] = i < 4 ? pack2(h16(2 * i + 1), h16(2 * i + 2)) : 0;   /* P_0..P_7, issues 0..3 */
        CU_ASSERT_EQUAL_FATAL(fx_run(t, w, ISA_OP_AMP_F16V4HIHO, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(4u, i % 4)),
                              ISA_FLOW_NEXT);
        if (w->a[4] && first_nonzero < 0)
            first_nonzero = i;
        if (i >= 8 && i < 12)
            CU_ASSERT_EQUAL(w->a[4], pack2(h16(10 + 2 * (i - 8) + 1), h16(10 + 2 * (i - 8) + 2)));
    }
    CU_ASSERT_EQUAL(first_nonzero, 8);
    fx_tile_free(t);
}

/* Only engine 0 (EE = 0): partials go straight into units 0 and 1; the one
 * given at phase 3 is what phase 0 starts from; units 2..7 stay idle. */
static void test_engine_enable(void)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    set_f16_weights(t, 8);
    /* Row 0: partials (given at phase 3 of slot 0), inputs in slot 1. */
    for (unsigned i = 0; i < 9; i++) {
        unsigned s = i / 4, p = i % 4;
        double x[4] = {0, 0, 0, 0};
        if (s == 1)
            for (unsigned j = 0; j < 4; j++)
                x[j] = inp(0, 4 * p + j);
        uint64_t xv = pack4(x);
        w->a[0] = (uint32_t)xv;
        w->a[1] = (uint32_t)(xv >> 32);
        w->a[2] = s == 0 && p == 3 ? pack2(h16(par(0, 0)), h16(par(0, 1))) : pack2(h16(1000), h16(1000));
        CU_ASSERT_EQUAL_FATAL(fx_run(t, w, ISA_OP_AMP_F16V4HIHO, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(1u, p)),
                              ISA_FLOW_NEXT);
    }
    CU_ASSERT_EQUAL(w->a[4], pack2(h16(f16_result_of(0, 0)), h16(f16_result_of(0, 1))));
    for (unsigned a = 4; a < ISA_AACC_WORDS; a++)
        CU_ASSERT_EQUAL(w->amp.aacc[a], 0);
    isa_insn e1 = fx_insn(ISA_OP_AMP_F16V4HIHO, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(1u, 0u));
    isa_insn e4 = fx_insn(ISA_OP_AMP_F16V4HIHOV4, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(4u, 0u));
    CU_ASSERT_EQUAL(isa_amp_insn_macs(&e1), 8);
    CU_ASSERT_EQUAL(isa_amp_insn_macs(&e4), 64);
    fx_tile_free(t);
}

static void test_macs(void)
{
    CU_ASSERT_EQUAL(isa_amp_macs(ISA_OP_AMP_F16V4HIHO), 32);
    CU_ASSERT_EQUAL(isa_amp_macs(ISA_OP_AMP_F16V4SISO), 32);
    CU_ASSERT_EQUAL(isa_amp_macs(ISA_OP_AMP_F16V4HIHOV4), 64);
    CU_ASSERT_EQUAL(isa_amp_macs(ISA_OP_AMP_F32SISO), 8);
    CU_ASSERT_EQUAL(isa_amp_macs(ISA_OP_AMP_F32SISOV2), 16);
    CU_ASSERT_EQUAL(isa_amp_macs(ISA_OP_F32V2MAC), 0);
    CU_ASSERT_EQUAL(isa_amp_macs(ISA_OP_LD128PUTCS), 0);
}

/* ---- the f32 pipeline ------------------------------------------------- */

static double f32_result_of(unsigned r, unsigned ch)
{
    double sum = par(r, ch);
    for (unsigned j = 0; j < 8; j++)
        sum += inp(r, j) * wgt(ch, j);
    return sum;
}

/*
 * f32sisoamp: 8 issues per row; at issue i (slot s = i / 8, phase p) input
 * p of row s - 1 goes in; at even phases the partials of channels (p, p+1)
 * of row s go in and channels (p, p+1) of row s - 2 come out.
 * f32sisov2amp adds set 1, one issue behind: at odd phases channels
 * (7+p, 8+p) go in and come out.
 */
static void run_f32_pipeline(enum isa_op op)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    bool v2 = op == ISA_OP_AMP_F32SISOV2;
    for (unsigned k = 0; k < (v2 ? 16u : 8u); k++)
        for (unsigned m = 0; m < 4; m++)
            isa_amp_set_cwei(&t->amp, 4 * k + m,
                             (uint64_t)f32b(wgt(k, 2 * m)) | ((uint64_t)f32b(wgt(k, 2 * m + 1)) << 32));
    unsigned checked = 0;
    for (unsigned i = 0; i < 8 * (ROWS + 2); i++) {
        unsigned s = i / 8, p = i % 8;
        w->a[0] = s >= 1 && s - 1 < ROWS ? f32b(inp(s - 1, p)) : 0;
        bool have = s < ROWS;
        unsigned ch = p % 2 == 0 ? p : 7 + p;          /* channel pair at this phase */
        bool used = p % 2 == 0 || v2;
        w->a[2] = have && used ? f32b(par(s, ch)) : 0;
        w->a[3] = have && used ? f32b(par(s, ch + 1)) : 0;
        w->a[4] = w->a[5] = 0xdeadbeefu;
        CU_ASSERT_EQUAL_FATAL(fx_run(t, w, op, 4, 0, 2, (int)ISA_AMP_F32_FLAGS(4u, p)), ISA_FLOW_NEXT);
        if (!used)
            continue;
        if (s < 2) {
            CU_ASSERT_EQUAL(w->a[4], 0);
            CU_ASSERT_EQUAL(w->a[5], 0);
        } else if (s - 2 < ROWS) {
            CU_ASSERT_EQUAL(w->a[4], f32b(f32_result_of(s - 2, ch)));
            CU_ASSERT_EQUAL(w->a[5], f32b(f32_result_of(s - 2, ch + 1)));
            checked++;
        }
    }
    CU_ASSERT_EQUAL(checked, (v2 ? 8u : 4u) * ROWS);
    fx_tile_free(t);
}

static void test_f32sisoamp_pipeline(void) { run_f32_pipeline(ISA_OP_AMP_F32SISO); }
static void test_f32sisov2amp_pipeline(void) { run_f32_pipeline(ISA_OP_AMP_F32SISOV2); }

/* f32sisov2amp hands each issue's input to set 1 through $TAS. */
static void test_f32sisov2amp_tas(void)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    w->a[0] = f32b(3.5);
    CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_AMP_F32SISOV2, 4, 0, 2, (int)ISA_AMP_F32_FLAGS(4u, 0u)), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_TAS], f32b(3.5));
    w->a[0] = 0x00000001u;                                 /* a denormal: flushed */
    CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_AMP_F32SISOV2, 4, 0, 2, (int)ISA_AMP_F32_FLAGS(4u, 1u)), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_TAS], 0);
    /* f32sisoamp leaves $TAS alone. */
    w->a[0] = f32b(1.0);
    CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_AMP_F32SISO, 4, 0, 2, (int)ISA_AMP_F32_FLAGS(4u, 0u)), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_TAS], 0);
    fx_tile_free(t);
}

/* ---- accumulation and rounding ------------------------------------------- */

/* One engine, weights 1 on element 0 of every phase: after a partial P at
 * phase 3 and inputs x0..x3 at phases 0..3, the next phase 0 gives
 * P + x0 + x1 + x2 + x3, accumulated in f32. */
static uint32_t sum_e1(isa_tile_state *t, isa_context *w, enum isa_op op, uint32_t partial,
                       const double x[4], uint32_t *second)
{
    for (unsigned k = 0; k < 2; k++)
        for (unsigned p = 0; p < 4; p++)
            isa_amp_set_cwei(&t->amp, 4 * k + p, h16(1.0));
    w->a[0] = w->a[1] = 0;
    w->a[2] = partial;
    w->a[3] = op == ISA_OP_AMP_F16V4SISO ? partial : 0;
    CU_ASSERT_EQUAL(fx_run(t, w, op, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(1u, 3u)), ISA_FLOW_NEXT);
    for (unsigned p = 0; p < 5; p++) {
        w->a[0] = p < 4 ? h16(x[p]) : 0;
        w->a[2] = w->a[3] = 0;
        CU_ASSERT_EQUAL(fx_run(t, w, op, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(1u, p % 4)), ISA_FLOW_NEXT);
    }
    if (second)
        *second = w->a[5];
    return w->a[4];
}

static void test_f32_accumulation(void)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    /* 2048 + 1 + 1: in f16 each step would round back to 2048 (ties to even);
     * in f32 the sum is 2050, exact in f16. */
    const double ones[4] = {1, 1, 0, 0};
    CU_ASSERT_EQUAL(sum_e1(t, w, ISA_OP_AMP_F16V4HIHO, pack2(h16(2048), h16(2048)), ones, NULL),
                    pack2(h16(2050), h16(2050)));
    /* 2048 + 1 = 2049 rounds to even 2048 on the way out; 2048 + 3 to 2052. */
    const double one[4] = {1, 0, 0, 0}, three[4] = {1, 2, 0, 0};
    CU_ASSERT_EQUAL(sum_e1(t, w, ISA_OP_AMP_F16V4HIHO, pack2(h16(2048), h16(2048)), one, NULL), 0x68006800u);
    CU_ASSERT_EQUAL(sum_e1(t, w, ISA_OP_AMP_F16V4HIHO, pack2(h16(2048), h16(2048)), three, NULL), 0x68026802u);
    /* With f32 partials and results the same sum is exact. */
    uint32_t second;
    CU_ASSERT_EQUAL(sum_e1(t, w, ISA_OP_AMP_F16V4SISO, f32b(2048), one, &second), f32b(2049));
    CU_ASSERT_EQUAL(second, f32b(2049));
    /* An f32 partial keeps bits an f16 one cannot hold. */
    const double none[4] = {0, 0, 0, 0};
    CU_ASSERT_EQUAL(sum_e1(t, w, ISA_OP_AMP_F16V4SISO, 0x3f800001u, none, NULL), 0x3f800001u);
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], 0);
    fx_tile_free(t);
}

static void test_f16_saturation(void)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    const double big[4] = {16, 16, 0, 0};
    /* 65504 + 32 rounds past the largest f16: saturates, OFLO. */
    CU_ASSERT_EQUAL(sum_e1(t, w, ISA_OP_AMP_F16V4HIHO, pack2(h16(65504), h16(-65504)), big, NULL),
                    pack2(0x7bff, h16(-65472)));
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], FP_EXC_OFLO);
    const double negbig[4] = {-16, -16, 0, 0};
    w->csr[ISA_CSR_FP_STS] = 0;
    CU_ASSERT_EQUAL(sum_e1(t, w, ISA_OP_AMP_F16V4HIHO, pack2(h16(-65504), h16(1)), negbig, NULL),
                    pack2(0xfbff, h16(-31)));
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], FP_EXC_OFLO);
    /* NaN on overflow: the quiet NaN, and INV too. */
    w->csr[ISA_CSR_FP_STS] = 0;
    w->csr[ISA_CSR_FP_CTL] = FP_CTL_NANOO;
    CU_ASSERT_EQUAL(sum_e1(t, w, ISA_OP_AMP_F16V4HIHO, pack2(h16(65504), h16(0)), big, NULL),
                    pack2(FP16_TILE_QNAN, h16(32)));
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], FP_EXC_OFLO | FP_EXC_INV);

    /* Overflow made malign: the issue faults and changes nothing. */
    w->csr[ISA_CSR_FP_CTL] = FP_EXC_OFLO;
    w->csr[ISA_CSR_FP_STS] = 0;
    for (unsigned p = 0; p < 4; p++)
        isa_amp_set_cwei(&t->amp, p, h16(1.0));
    w->a[0] = h16(0);
    w->a[2] = 0;
    w->amp.aacc[0] = f32b(70000.0);                       /* read out at phase 0 */
    uint32_t before[ISA_AACC_WORDS];
    memcpy(before, w->amp.aacc, sizeof before);
    w->a[4] = 0x12345678u;
    CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_AMP_F16V4HIHO, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(1u, 0u)), ISA_FLOW_FAULT);
    isa_fault f = fx_take_fault(t);
    CU_ASSERT_EQUAL(f.exception, ISA_EXC_FP);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.message, "f16v4hihoamp: floating-point exception"));
    CU_ASSERT_EQUAL(w->a[4], 0x12345678u);
    CU_ASSERT_EQUAL(memcmp(before, w->amp.aacc, sizeof before), 0);
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], FP_EXC_OFLO);
    fx_tile_free(t);
}

/* NaN and infinity inputs: the result is the quiet NaN; an infinity or a
 * signalling NaN raises INV. */
static void test_nan_inputs(void)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    const double x[4] = {1, 0, 0, 0};
    CU_ASSERT_EQUAL(sum_e1(t, w, ISA_OP_AMP_F16V4HIHO, pack2(0x7c00, 0x7e00), x, NULL),
                    pack2(FP16_TILE_QNAN, FP16_TILE_QNAN));
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], FP_EXC_INV);   /* from the infinity */
    w->csr[ISA_CSR_FP_STS] = 0;
    CU_ASSERT_EQUAL(sum_e1(t, w, ISA_OP_AMP_F16V4SISO, 0x7fc00000u, x, NULL), FP32_TILE_QNAN_BITS);
    CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], 0);             /* a quiet NaN is benign */
    fx_tile_free(t);
}

/* Stochastic rounding: every f16v4hihov4amp issue with $FP_CTL.ESR takes two
 * PRNG steps; result i rounds up iff bit 12 of its 24-bit pattern (16 bits
 * of the first step, 8 of the second, ISA2 Listing 2.12) carries the
 * half-ulp of 2049 into the f16 lsb. */
static void test_stochastic_rounding(void)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    w->csr[ISA_CSR_FP_CTL] = FP_CTL_ESR;
    fp_prng_seed(w->prng, 12345);
    uint64_t state[2] = {w->prng[0], w->prng[1]};
    /* Every unit: weight 1 on element 0 of every phase; inputs 0.25 so a row
     * adds 1 to its partial of 2048: 2049, halfway between f16 values. */
    for (unsigned k = 0; k < 16; k++)
        for (unsigned p = 0; p < 4; p++)
            isa_amp_set_cwei(&t->amp, 4 * k + p, h16(1.0));
    unsigned ups = 0, downs = 0;
    for (unsigned i = 0; i < 4 * 12; i++) {
        unsigned s = i / 4;
        w->a[0] = s >= 1 ? h16(0.25) : 0;
        w->a[1] = 0;
        w->a[2] = w->a[3] = pack2(h16(2048), h16(2048));
        CU_ASSERT_EQUAL_FATAL(fx_run(t, w, ISA_OP_AMP_F16V4HIHOV4, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(4u, i % 4)),
                              ISA_FLOW_NEXT);
        uint64_t r0 = 0, r1 = 0;
        r0 = fp_prng_next(state);
        r1 = fp_prng_next(state);
        if (s < 2)
            continue;
        for (unsigned e = 0; e < 4; e++) {
            uint32_t bits = (uint32_t)((r0 >> (16 * e)) & 0xffff) | (uint32_t)(((r1 >> (8 * e)) & 0xff) << 16);
            uint16_t want = (bits & 0x1000u) ? h16(2050) : h16(2048);
            uint16_t got = (uint16_t)(w->a[4 + e / 2] >> (16 * (e % 2)));
            CU_ASSERT_EQUAL(got, want);
            if (got == h16(2050))
                ups++;
            else
                downs++;
        }
    }
    CU_ASSERT_EQUAL(w->prng[0], state[0]);
    CU_ASSERT_EQUAL(w->prng[1], state[1]);
    CU_ASSERT_TRUE(ups > 5 && downs > 5);
    fx_tile_free(t);
}

/* $FP_CLR.ZAACC zeroes every accumulator: the pipeline forgets its contents. */
static void test_zaacc(void)
{
    isa_tile_state *t = fx_tile_new();
    isa_context *w = fx_worker(t, 1);
    const double x[4] = {5, 0, 0, 0};
    CU_ASSERT_EQUAL(sum_e1(t, w, ISA_OP_AMP_F16V4SISO, f32b(7), x, NULL), f32b(12));
    for (unsigned a = 0; a < ISA_AACC_WORDS; a++)
        w->amp.aacc[a] = f32b(a + 1.0);
    isa_insn put = fx_insn(ISA_OP_UPUT, ISA_CSR_FP_CLR, 0);
    CU_ASSERT_EQUAL(isa_csr_write(t, w, &put, ISA_CSR_FP_CLR, FP_CLR_ZAACC), ISA_FLOW_NEXT);
    for (unsigned a = 0; a < ISA_AACC_WORDS; a++)
        CU_ASSERT_EQUAL(w->amp.aacc[a], 0);
    /* Phase 0 reads out the (now zero) even accumulators. */
    w->a[0] = w->a[1] = w->a[2] = w->a[3] = 0;
    CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_AMP_F16V4SISO, 4, 0, 2, (int)ISA_AMP_F16_FLAGS(4u, 0u)), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(w->a[4], 0);
    CU_ASSERT_EQUAL(w->a[5], 0);
    fx_tile_free(t);
}

/* ---- the dot product model ---------------------------------------------- */

static void test_dot4(void)
{
    /* 1 + 2^-24 + 2^-24 is exactly 1 + 2^-23: summing in f32 one product at a
     * time would lose both halves (ties to even); the exact sum keeps them. */
    const uint16_t x[4] = {0x3c00, 0x0c00, 0x0c00, 0};     /* 1, 2^-12, 2^-12 */
    CU_ASSERT_EQUAL(isa_f32_bits(isa_amp_f16_dot4(x, x)), 0x3f800001u);
    /* 1 + 2^-24 alone is a tie: rounds to even (1.0). */
    const uint16_t y[4] = {0x3c00, 0x0c00, 0, 0};
    CU_ASSERT_EQUAL(isa_f32_bits(isa_amp_f16_dot4(y, y)), 0x3f800000u);
    /* 1 + 3 * 2^-24 is a tie between 1 + 2^-23 and 1 + 2^-22: even wins. */
    const uint16_t a3[4] = {0x3c00, 0x0c00, 0, 0}, b3[4] = {0x3c00, 0x1200, 0, 0};
    CU_ASSERT_EQUAL(isa_f32_bits(isa_amp_f16_dot4(a3, b3)), 0x3f800002u);
    /* Cancellation is exact; the smallest product survives. */
    const uint16_t c[4] = {0x7bff, 0xfbff, 0x0001, 0}, d[4] = {0x7bff, 0x7bff, 0x0001, 0};
    CU_ASSERT_EQUAL(isa_amp_f16_dot4(c, d), ldexpf(1.0f, -48));
    /* NaN and infinity inputs give the quiet NaN. */
    const uint16_t n[4] = {0x3c00, 0x7c00, 0, 0};
    CU_ASSERT_EQUAL(isa_f32_bits(isa_amp_f16_dot4(n, y)), FP32_TILE_QNAN_BITS);
    /* -0 only when every product is -0. */
    const uint16_t nz[4] = {0x8000, 0x8000, 0x8000, 0x8000}, pz[4] = {0, 0, 0, 0};
    CU_ASSERT_EQUAL(isa_f32_bits(isa_amp_f16_dot4(nz, pz)), 0x80000000u);
    const uint16_t mz[4] = {0x8000, 0x8000, 0x8000, 0};
    CU_ASSERT_EQUAL(isa_f32_bits(isa_amp_f16_dot4(mz, pz)), 0);

    /* Random normal inputs below 2 in magnitude: products are multiples of
     * 2^-48 below 4, so the double sum is exact and (float) rounds it once. */
    srand(7);
    for (int iter = 0; iter < 20000; iter++) {
        uint16_t p[4], q[4];
        double exact = 0;
        for (int i = 0; i < 4; i++) {
            p[i] = (uint16_t)(((rand() & 1) << 15) | ((1 + rand() % 15) << 10) | (rand() & 0x3ff));
            q[i] = (uint16_t)(((rand() & 1) << 15) | ((1 + rand() % 15) << 10) | (rand() & 0x3ff));
            exact += (double)fp16_to_f32(p[i]) * (double)fp16_to_f32(q[i]);
        }
        float got = isa_amp_f16_dot4(p, q);
        if (isa_f32_bits(got) != isa_f32_bits((float)exact) && !(got == 0 && exact == 0)) {
            CU_FAIL("dot4 is not the exact sum rounded once");
            break;
        }
    }
}

void test_register(void)
{
    ADD_SUITE("amp_weights",
              {"ld64putcs writes one $CWEI entry", test_ld64putcs},
              {"ld128putcs writes an even/odd pair", test_ld128putcs});
    ADD_SUITE("amp_pipeline",
              {"f16v4hihoamp: 8 channels, f16 partials", test_hihoamp_pipeline},
              {"f16v4sisoamp: 8 channels, f32 partials", test_sisoamp_pipeline},
              {"f16v4hihov4amp: 16 channels on both sets", test_hihov4amp_pipeline},
              {"first result 4 issues after its input", test_latency},
              {"engine enables shorten the chain", test_engine_enable},
              {"MACs per issue", test_macs},
              {"f32sisoamp: 8 phases", test_f32sisoamp_pipeline},
              {"f32sisov2amp: set 1 one issue behind", test_f32sisov2amp_pipeline},
              {"f32sisov2amp passes its input through $TAS", test_f32sisov2amp_tas},
              {"$FP_CLR.ZAACC clears the accumulators", test_zaacc});
    ADD_SUITE("amp_arithmetic",
              {"f32 accumulation, f16 and f32 partials", test_f32_accumulation},
              {"f16 results saturate; malign overflow faults", test_f16_saturation},
              {"NaN and infinity inputs", test_nan_inputs},
              {"stochastic rounding of f16 results", test_stochastic_rounding},
              {"4-element dot product is exact then rounded", test_dot4});
}
