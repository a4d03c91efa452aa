/*
 * test_exec_int.c — integer instructions (ISA2 §3.7.1, §3.7.4), atom,
 * tapack, and control/status register access through get/put (isa/csr.c).
 */
#include <CUnit/CUnit.h>
#include <limits.h>
#include <string.h>

#include "exec_fixture.h"
#include "isa/fp16.h"
#include "test_util.h"

static isa_tile_state *t;
static isa_context *w;

/* Run a three-register op on fresh values: $m3 = $m1 op $m2. */
static uint32_t rrr(enum isa_op op, uint32_t a, uint32_t b)
{
    w->m[1] = a;
    w->m[2] = b;
    w->m[3] = 0xdeadbeefu;
    CU_ASSERT_EQUAL(fx_run(t, w, op, 3, 1, 2), ISA_FLOW_NEXT);
    return w->m[3];
}

/* $m3 = $m1 op imm */
static uint32_t rri(enum isa_op op, uint32_t a, int32_t imm)
{
    w->m[1] = a;
    w->m[3] = 0xdeadbeefu;
    CU_ASSERT_EQUAL(fx_run(t, w, op, 3, 1, imm), ISA_FLOW_NEXT);
    return w->m[3];
}

static void setup(void)
{
    t = fx_tile_new();
    w = fx_worker(t, 1);
}

static void teardown(void)
{
    fx_tile_free(t);
    t = NULL;
}

#define WITH_TILE(...) do { setup(); __VA_ARGS__; teardown(); } while (0)

static void test_add_sub_mul(void)
{
    WITH_TILE({
        CU_ASSERT_EQUAL(rrr(ISA_OP_ADD, 40, 2), 42);
        CU_ASSERT_EQUAL(rrr(ISA_OP_ADD, 0xffffffffu, 1), 0);             /* wraps */
        CU_ASSERT_EQUAL(rrr(ISA_OP_ADD, 0x7fffffffu, 1), 0x80000000u);   /* signed overflow wraps */
        CU_ASSERT_EQUAL(rrr(ISA_OP_SUB, 2, 40), (uint32_t)-38);          /* first minus second */
        CU_ASSERT_EQUAL(rrr(ISA_OP_SUB, 0, 1), 0xffffffffu);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SUB, 0x80000000u, 1), 0x7fffffffu);
        CU_ASSERT_EQUAL(rrr(ISA_OP_MUL, 6, 7), 42);
        CU_ASSERT_EQUAL(rrr(ISA_OP_MUL, (uint32_t)-3, 7), (uint32_t)-21);
        CU_ASSERT_EQUAL(rrr(ISA_OP_MUL, 0x10000u, 0x10000u), 0);         /* low 32 bits of 2^32 */
        CU_ASSERT_EQUAL(rrr(ISA_OP_MUL, 0x12345678u, 0x9abcdef0u), 0x242d2080u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_MUL, 0x80000000u, 0xffffffffu), 0x80000000u);
        /* Immediates: s16 sign-extended. */
        CU_ASSERT_EQUAL(rri(ISA_OP_ADD_I, 10, -11), 0xffffffffu);
        CU_ASSERT_EQUAL(rri(ISA_OP_ADD_I, 0xfffffff0u, 32767), 0x7fefu);
        CU_ASSERT_EQUAL(rri(ISA_OP_ADD_I, 0, -32768), 0xffff8000u);
        CU_ASSERT_EQUAL(rri(ISA_OP_MUL_I, 1000, -3), (uint32_t)-3000);
        CU_ASSERT_EQUAL(rri(ISA_OP_MUL_I, 0x40000000u, 4), 0);
    });
}

static void test_bitwise(void)
{
    WITH_TILE({
        CU_ASSERT_EQUAL(rrr(ISA_OP_AND, 0xff00ff00u, 0x0ff00ff0u), 0x0f000f00u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_OR, 0xff00ff00u, 0x0ff00ff0u), 0xfff0fff0u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_XOR, 0xff00ff00u, 0x0ff00ff0u), 0xf0f0f0f0u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_ANDC, 0xff00ff00u, 0x0ff00ff0u), 0xf000f000u);
        /* u16 immediates are zero-extended: no sign bits reach the top. */
        CU_ASSERT_EQUAL(rri(ISA_OP_AND_I, 0xffffffffu, 0xffff), 0x0000ffffu);
        CU_ASSERT_EQUAL(rri(ISA_OP_OR_I, 0x12340000u, 0x8001), 0x12348001u);
        CU_ASSERT_EQUAL(rri(ISA_OP_XOR_I, 0xffffffffu, 0x8000), 0xffff7fffu);
        /* setzi: 20-bit zero-extended. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_SETZI, 4, 0xfffff), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[4], 0x000fffffu);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_SETZI, 4, 0x80000), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[4], 0x00080000u);
        /* mov */
        w->m[7] = 0xcafef00du;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_MOV, 5, 7), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[5], 0xcafef00du);
        CU_ASSERT_EQUAL(w->m[7], 0xcafef00du);
    });
}

static void test_shifts(void)
{
    WITH_TILE({
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHL, 0x80000001u, 0), 0x80000001u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHL, 0x80000001u, 1), 0x00000002u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHL, 1, 31), 0x80000000u);
        /* ISA2 §3.7.4.11: the amount is taken modulo 32. */
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHL, 0x12345678u, 32), 0x12345678u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHL, 0x12345678u, 33), 0x2468acf0u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHL, 0x12345678u, 0xfffffffcu), 0x80000000u); /* 28 */
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHR, 0x80000000u, 31), 1);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHR, 0x80000000u, 0), 0x80000000u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHR, 0x80000000u, 32), 0x80000000u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHR, 0xf0000000u, 36), 0x0f000000u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHRS, 0x80000000u, 31), 0xffffffffu);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHRS, 0x80000000u, 4), 0xf8000000u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHRS, 0x40000000u, 4), 0x04000000u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHRS, 0x80000010u, 32), 0x80000010u);
        CU_ASSERT_EQUAL(rrr(ISA_OP_SHRS, 0xfffffff0u, 0), 0xfffffff0u);
        CU_ASSERT_EQUAL(rri(ISA_OP_SHL_I, 3, 4), 48);
        CU_ASSERT_EQUAL(rri(ISA_OP_SHL_I, 3, 32), 3);
        CU_ASSERT_EQUAL(rri(ISA_OP_SHR_I, 0xffffffffu, 28), 0xf);
        CU_ASSERT_EQUAL(rri(ISA_OP_SHR_I, 0xffffffffu, 0xffff), 1);    /* 65535 % 32 = 31 */
        CU_ASSERT_EQUAL(rri(ISA_OP_SHRS_I, 0xfffffff0u, 2), 0xfffffffcu);
        CU_ASSERT_EQUAL(rri(ISA_OP_SHRS_I, 0x7ffffff0u, 31), 0);
    });
}

static void test_compare_min_max(void)
{
    WITH_TILE({
        const uint32_t int_min = 0x80000000u, int_max = 0x7fffffffu;
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPEQ, 5, 5), 1);
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPEQ, 5, 6), 0);
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPNE, 5, 5), 0);
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPNE, 5, 6), 1);
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPULT, 1, int_min), 1);
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPULT, int_min, 1), 0);
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPULT, 7, 7), 0);
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPSLT, int_min, 1), 1);
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPSLT, 1, int_min), 0);
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPSLT, int_min, int_max), 1);
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPSLT, int_max, int_min), 0);
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPSLT, int_min, int_min), 0);
        CU_ASSERT_EQUAL(rrr(ISA_OP_CMPSLT, 0xffffffffu, 0), 1);
        CU_ASSERT_EQUAL(rrr(ISA_OP_MIN, int_min, int_max), int_min);
        CU_ASSERT_EQUAL(rrr(ISA_OP_MIN, 0xffffffffu, 1), 0xffffffffu);
        CU_ASSERT_EQUAL(rrr(ISA_OP_MAX, int_min, int_max), int_max);
        CU_ASSERT_EQUAL(rrr(ISA_OP_MAX, 0xffffffffu, 1), 1);
        CU_ASSERT_EQUAL(rrr(ISA_OP_MAX, int_min, int_min), int_min);
        /* Immediates: cmpeq/cmpne/cmpslt/min/max s16, cmpult u16. */
        CU_ASSERT_EQUAL(rri(ISA_OP_CMPEQ_I, 0xffffffffu, -1), 1);
        CU_ASSERT_EQUAL(rri(ISA_OP_CMPEQ_I, 0x0000ffffu, -1), 0);
        CU_ASSERT_EQUAL(rri(ISA_OP_CMPNE_I, 0xffff8000u, -32768), 0);
        CU_ASSERT_EQUAL(rri(ISA_OP_CMPNE_I, 0x8000u, -32768), 1);
        CU_ASSERT_EQUAL(rri(ISA_OP_CMPULT_I, 0xfffeu, 0xffff), 1);
        CU_ASSERT_EQUAL(rri(ISA_OP_CMPULT_I, 0xffffffffu, 0xffff), 0);
        CU_ASSERT_EQUAL(rri(ISA_OP_CMPSLT_I, int_min, -32768), 1);
        CU_ASSERT_EQUAL(rri(ISA_OP_CMPSLT_I, 0xffff8000u, -32768), 0);
        CU_ASSERT_EQUAL(rri(ISA_OP_CMPSLT_I, 0xffffffffu, 0), 1);
        CU_ASSERT_EQUAL(rri(ISA_OP_MIN_I, 5, -1), 0xffffffffu);
        CU_ASSERT_EQUAL(rri(ISA_OP_MIN_I, int_min, 100), int_min);
        CU_ASSERT_EQUAL(rri(ISA_OP_MAX_I, 0xfffffff0u, -20), 0xfffffff0u);
        CU_ASSERT_EQUAL(rri(ISA_OP_MAX_I, int_min, -32768), 0xffff8000u);
    });
}

static void test_m15_destination(void)
{
    WITH_TILE({
        w->m[1] = 40;
        w->m[2] = 2;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ADD, 15, 1, 2), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[15], 0);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_SETZI, 15, 123), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[15], 0);
        /* $m15 as a source reads zero. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ADD, 3, 1, 15), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[3], 40);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_OR_I, 4, 15, 0x1234), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[4], 0x1234);
        /* Destination equal to a source. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_SUB, 1, 1, 2), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[1], 38);
    });
}

static void test_atom(void)
{
    WITH_TILE({
        w->a[6] = 0x3f800000u;   /* 1.0f: copied as bits, not converted */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ATOM, 2, 6), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[2], 0x3f800000u);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_ATOM, 2, 15), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[2], 0);
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_NOP), ISA_FLOW_NEXT);
    });
}

static void test_tapack(void)
{
    WITH_TILE({
        /* ISA2 §4.1.1.5-6: lower = a0 | a2[10:0] << 21, upper = a1 | a2[20:11] << 21. */
        w->m[1] = 0x0004c008u;
        w->m[2] = 0x000e7ff8u;
        w->m[3] = 0x00091238u;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_TAPACK, 4, 1, 2, 3), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[4], 0x0004c008u | (0x238u << 21));
        CU_ASSERT_EQUAL(w->m[5], 0x000e7ff8u | (0x122u << 21));
        /* Address bits above 21 are dropped. */
        w->m[1] = 0xfff4c000u;
        w->m[2] = 0x80080000u;
        w->m[3] = 0xffffffffu;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_TAPACK, 6, 1, 2, 3), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[6], 0xfff4c000u);
        CU_ASSERT_EQUAL(w->m[7], 0x7fe80000u);
        /* Into $m14:15: $m15 stays zero. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_TAPACK, 14, 1, 2, 3), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->m[14], 0xfff4c000u);
        CU_ASSERT_EQUAL(w->m[15], 0);
    });
}

/* ---- CSRs ------------------------------------------------------------------ */

static uint32_t get_csr(isa_context *c, unsigned csr)
{
    c->m[9] = 0xdeadbeefu;
    CU_ASSERT_EQUAL(fx_run(t, c, ISA_OP_GET, 9, (int)csr), ISA_FLOW_NEXT);
    return c->m[9];
}

static enum isa_flow put_csr(isa_context *c, unsigned csr, uint32_t v)
{
    c->m[8] = v;
    return fx_run(t, c, ISA_OP_PUT, (int)csr, 8);
}

static void test_csr_read_state(void)
{
    WITH_TILE({
        t->cycle = 0x0000000512345678ull;
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_COUNT_L), 0x12345678u);
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_COUNT_U), 5);
        w->pc = 0x4c230;
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_PC), 0x4c230);
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_WSR), 0);          /* worker 1: index 0 */
        CU_ASSERT_EQUAL(get_csr(&t->ctx[6], ISA_CSR_WSR), 5);
        w->rpt_remaining = 17;
        w->rpt_first = 0x4c240;
        w->rpt_end = 0x4c260;
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_REPEAT_COUNT), 17);
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_REPEAT_FIRST), 0x4c240);
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_REPEAT_END), 0x4c260);
        /* Plain storage registers. */
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_VERTEX_BASE, 0x9a000), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_VERTEX_BASE), 0x9a000);
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_TAS, 0x3c003c00u), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->csr[ISA_CSR_TAS], 0x3c003c00u);
        /* $DBG_DATA is one register seen by every context. */
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_DBG_DATA, 0x600dd00du), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(get_csr(&t->ctx[4], ISA_CSR_DBG_DATA), 0x600dd00du);
        CU_ASSERT_EQUAL(get_csr(&t->ctx[0], ISA_CSR_DBG_DATA), 0x600dd00du);
    });
}

static void test_csr_fp(void)
{
    WITH_TILE({
        w->csr[ISA_CSR_FP_STS] = 0x7;
        for (unsigned i = 0; i < ISA_AACC_WORDS; i++)
            w->amp.aacc[i] = 0x3f800000u + i;
        /* Clear DIV0 only: the accumulators stay. */
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_FP_CLR, 0x2), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], 0x5);
        CU_ASSERT_EQUAL(w->amp.aacc[31], 0x3f800000u + 31);
        /* ZAACC (bit 3) zeroes every accumulator, and only those. */
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_FP_CLR, 0x8), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], 0x5);
        for (unsigned i = 0; i < ISA_AACC_WORDS; i++)
            CU_ASSERT_EQUAL(w->amp.aacc[i], 0);
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_FP_CLR, 0xffffffffu), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], 0);
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_FP_CLR), 0);     /* reads 0 */
        /* Another context's accumulators are not touched. */
        t->ctx[2].amp.aacc[0] = 0x40000000u;
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_FP_CLR, 0x8), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(t->ctx[2].amp.aacc[0], 0x40000000u);
        /* $FP_CTL: RND [18:16] is read-only (round to nearest even). */
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_FP_CTL, 0xffffffffu), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_FP_CTL), 0x00180007u);
        /* $FP_STS is read-only. */
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_FP_STS, 1), ISA_FLOW_FAULT);
        isa_fault f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_INVALID_OPERAND);
        CU_ASSERT_STRING_EQUAL(f.message, "put: $FP_STS is read-only");
    });
}

static void test_csr_prng(void)
{
    WITH_TILE({
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_PRNG_0_0, 0x11111111u), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_PRNG_0_1, 0x22222222u), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_PRNG_1_0, 0x33333333u), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_PRNG_1_1, 0x44444444u), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->prng[0], 0x2222222211111111ull);
        CU_ASSERT_EQUAL(w->prng[1], 0x4444444433333333ull);
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_PRNG_0_1), 0x22222222u);
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_PRNG_1_0), 0x33333333u);
        /* Seeding goes through fp_prng_seed: compare with a direct call. */
        uint64_t expect[2];
        fp_prng_seed(expect, 0x12345678u);
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_PRNG_SEED, 0x12345678u), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->prng[0], expect[0]);
        CU_ASSERT_EQUAL(w->prng[1], expect[1]);
        /* ISA2 §2.7.5.2.19: $PRNG_0_0 = seed, $PRNG_0_1 = ~seed. */
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_PRNG_0_0), 0x12345678u);
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_PRNG_0_1), 0xedcba987u);
        CU_ASSERT_EQUAL(get_csr(w, ISA_CSR_PRNG_SEED), 0);
    });
}

static void test_csr_errors(void)
{
    WITH_TILE({
        isa_fault f;
        /* Supervisor-only registers from a worker. */
        w->m[9] = 77;
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_GET, 9, ISA_CSR_FP_ICTL), ISA_FLOW_FAULT);
        CU_ASSERT_EQUAL(w->m[9], 77);
        f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_INVALID_OPERAND);
        CU_ASSERT_EQUAL(f.context, 1);
        CU_ASSERT_EQUAL(f.pc, FX_CODE_BASE);
        CU_ASSERT_STRING_EQUAL(f.message, "get: $FP_ICTL is a supervisor register; worker 1 cannot reach it");
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_CCCSLOAD, 0x80000), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_STRING_EQUAL(f.message, "put: $CCCSLOAD is a supervisor register; worker 1 cannot reach it");
        /* Unknown numbers. */
        CU_ASSERT_EQUAL(fx_run(t, w, ISA_OP_GET, 9, 0xee), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_EQUAL(f.exception, ISA_EXC_INVALID_OPERAND);
        CU_ASSERT_STRING_EQUAL(f.message, "get: there is no control register number 0xee");
        CU_ASSERT_EQUAL(put_csr(w, 0x3f, 1), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_STRING_EQUAL(f.message, "put: there is no control register number 0x3f");
        /* Read-only registers. */
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_COUNT_L, 0), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_STRING_EQUAL(f.message, "put: $COUNT_L is read-only");
        CU_ASSERT_EQUAL(put_csr(w, ISA_CSR_PC, 0x4c000), ISA_FLOW_FAULT);
        CU_ASSERT_EQUAL(w->pc, FX_CODE_BASE);
        f = fx_take_fault(t);
        CU_ASSERT_STRING_EQUAL(f.message, "put: $PC is read-only");
        /* The supervisor reaches its own registers. */
        isa_context *s = fx_supervisor(t);
        CU_ASSERT_EQUAL(put_csr(s, ISA_CSR_FP_ICTL, 0x00080001u), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(get_csr(s, ISA_CSR_FP_ICTL), 0x00080001u);
        CU_ASSERT_EQUAL(put_csr(s, ISA_CSR_CCCSLOAD, 0x80040), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(s->csr[ISA_CSR_CCCSLOAD], 0x80040);
        CU_ASSERT_EQUAL(put_csr(s, ISA_CSR_CTXT_STS, 0), ISA_FLOW_FAULT);
        f = fx_take_fault(t);
        CU_ASSERT_STRING_EQUAL(f.message, "put: $CTXT_STS is read-only");
    });
}

static void test_csr_ctxt_sts(void)
{
    WITH_TILE({
        isa_context *s = fx_supervisor(t);
        /* Supervisor active (1), worker 1 active (fx_worker), worker 3
         * excepted (3), the rest inactive. */
        t->ctx[3].run_mode = ISA_RUN_FAULTED;
        CU_ASSERT_EQUAL(get_csr(s, ISA_CSR_CTXT_STS), 0x1u | 0x1u << 2 | 0x3u << 6);
    });
}

/* Direct calls (as uget/uput make them) without an instruction. */
static void test_csr_direct(void)
{
    WITH_TILE({
        uint32_t v = 0;
        w->csr[ISA_CSR_FP_STS] = 0x4;
        CU_ASSERT_EQUAL(isa_csr_read(t, w, NULL, ISA_CSR_FP_STS, &v), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(v, 0x4);
        CU_ASSERT_EQUAL(isa_csr_write(t, w, NULL, ISA_CSR_FP_CLR, 0x4), ISA_FLOW_NEXT);
        CU_ASSERT_EQUAL(w->csr[ISA_CSR_FP_STS], 0);
        CU_ASSERT_EQUAL(isa_csr_write(t, w, NULL, ISA_CSR_WSR, 1), ISA_FLOW_FAULT);
        isa_fault f = fx_take_fault(t);
        CU_ASSERT_STRING_EQUAL(f.message, "put: $WSR is read-only");
        CU_ASSERT_EQUAL(f.word, 0);
    });
}

void test_register(void)
{
    ADD_SUITE("exec_int",
              {"add, sub, mul wrap modulo 2^32", test_add_sub_mul},
              {"and, or, xor, andc, setzi, mov", test_bitwise},
              {"shifts by 0, 31, 32 and more", test_shifts},
              {"compares, min, max at INT_MIN/INT_MAX", test_compare_min_max},
              {"$m15 reads zero, ignores writes", test_m15_destination},
              {"atom copies ARF bits", test_atom},
              {"tapack packs three addresses", test_tapack});
    ADD_SUITE("exec_csr",
              {"cycle counter, pc, rpt state, storage", test_csr_read_state},
              {"$FP_CLR clears flags and accumulators", test_csr_fp},
              {"$PRNG halves and seed", test_csr_prng},
              {"unknown, supervisor-only, read-only", test_csr_errors},
              {"$CTXT_STS from run modes", test_csr_ctxt_sts},
              {"direct calls without an instruction", test_csr_direct});
}
