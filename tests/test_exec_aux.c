/*
 * test_exec_aux.c — semantics of the aux-pipeline instructions (the AMP
 * rows excepted): values, special cases and flags, denormal flushing,
 * f16 rounding and saturation, stochastic rounding, FP exceptions and the
 * accumulators.  Expected values are exact bit patterns; where a value is
 * not obvious the comment says where it comes from.
 */
#include <CUnit/CUnit.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "exec_fixture.h"
#include "isa/fp16.h"
#include "isa/fparith.h"
#include "test_util.h"

static uint32_t fb(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

#define QNAN32 0x7FD9C000u                   /* FP32_TILE_QNAN_BITS */
#define QNAN16 0x7ECEu                       /* FP16_TILE_QNAN */
#define STS(c) ((c)->csr[ISA_CSR_FP_STS])

static isa_tile_state *T;
static isa_context *W;

static void begin(void)
{
    T = fx_tile_new();
    W = fx_worker(T, 1);
}

static void end(void)
{
    fx_tile_free(T);
    T = NULL;
}

/* Run one instruction expecting it to complete. */
#define RUN(...) CU_ASSERT_EQUAL(fx_run(T, W, __VA_ARGS__), ISA_FLOW_NEXT)

/* f32 binary op on two values: result bits, FP_STS cleared first. */
static uint32_t f32op(enum isa_op op, uint32_t a, uint32_t b)
{
    STS(W) = 0;
    W->a[1] = a;
    W->a[2] = b;
    W->a[0] = 0xDEADBEEFu;
    RUN(op, 0, 1, 2);
    return W->a[0];
}

static uint32_t f32un(enum isa_op op, uint32_t a)
{
    STS(W) = 0;
    W->a[1] = a;
    W->a[0] = 0xDEADBEEFu;
    RUN(op, 0, 1);
    return W->a[0];
}

/* f16v2 op on two registers of packed halves. */
static uint32_t f16op(enum isa_op op, uint32_t a, uint32_t b)
{
    STS(W) = 0;
    W->a[1] = a;
    W->a[2] = b;
    W->a[0] = 0xDEADBEEFu;
    RUN(op, 0, 1, 2);
    return W->a[0];
}

static uint32_t h2(uint16_t lo, uint16_t hi) { return (uint32_t)lo | ((uint32_t)hi << 16); }

/* ---- moves ----------------------------------------------------------------- */

static void test_moves(void)
{
    begin();
    W->a[3] = 0x12345678u;
    W->a[4] = 0x9ABCDEF0u;
    W->a[5] = 0x0BADF00Du;
    RUN(ISA_OP_FNOP);
    CU_ASSERT_EQUAL(W->a[3], 0x12345678u);
    RUN(ISA_OP_MOV_A, 7, 3);
    CU_ASSERT_EQUAL(W->a[7], 0x12345678u);
    RUN(ISA_OP_MOV_AP, 0, 4);
    CU_ASSERT_EQUAL(W->a[0], 0x9ABCDEF0u);
    CU_ASSERT_EQUAL(W->a[1], 0x0BADF00Du);
    RUN(ISA_OP_SETZI_A, 2, 0xFFFFF);
    CU_ASSERT_EQUAL(W->a[2], 0x000FFFFFu);
    RUN(ISA_OP_MOV_A, 2, 15);                 /* $a15 reads zero */
    CU_ASSERT_EQUAL(W->a[2], 0u);
    RUN(ISA_OP_MOV_A, 15, 3);                 /* and ignores writes */
    CU_ASSERT_EQUAL(W->a[15], 0u);
    end();
}

static void test_sign_ops(void)
{
    begin();
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32ABS, fb(-2.5f)), fb(2.5f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32NEG, fb(2.5f)), fb(-2.5f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32NEG, 0u), 0x80000000u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32ABS, 0xFF800001u), 0x7F800001u); /* sNaN kept, no flag */
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16V2ABS, h2(0xBC00, 0xFC00)), h2(0x3C00, 0x7C00));
    W->a[2] = fb(-1.0f);
    W->a[3] = 0x80000001u;
    RUN(ISA_OP_F32V2ABS, 4, 2);
    CU_ASSERT_EQUAL(W->a[4], fb(1.0f));
    CU_ASSERT_EQUAL(W->a[5], 0x00000001u);    /* a bit operation: no flush */
    end();
}

/* ---- f32 arithmetic ------------------------------------------------------- */

static void test_f32_values(void)
{
    begin();
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32ADD, fb(1.5f), fb(2.25f)), fb(3.75f));
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32SUB, fb(1.5f), fb(2.25f)), fb(-0.75f));
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MUL, fb(1.5f), fb(-2.25f)), fb(-3.375f));
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32DIV, fb(1.0f), fb(3.0f)), 0x3EAAAAABu);
    /* Round to nearest even: 1 + 2^-24 is half an ulp above 1. */
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32ADD, fb(1.0f), fb(0x1p-24f)), fb(1.0f));
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32ADD, fb(1.0f + 0x1p-23f), fb(0x1p-24f)), fb(1.0f + 0x1p-22f));
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32SUB, fb(1.0f), fb(1.0f)), 0u);      /* +0 */
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MAX, fb(-1.0f), fb(2.0f)), fb(2.0f));
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MIN, fb(-1.0f), fb(2.0f)), fb(-1.0f));
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MAX, 0x80000000u, 0u), 0u);          /* -0 < +0 */
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MIN, 0u, 0x80000000u), 0x80000000u);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MAX, 0x7FC00000u, fb(3.0f)), fb(3.0f)); /* maxNum */
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MIN, fb(3.0f), 0x7F800001u), QNAN32);  /* sNaN */
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MAX, 0x7FC00001u, 0xFFC00000u), QNAN32);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MAX, fb(-INFINITY), fb(-5.0f)), fb(-5.0f));
    end();
}

static void test_f32_vectors(void)
{
    begin();
    W->a[2] = fb(1.0f); W->a[3] = fb(-8.0f);
    W->a[4] = fb(0.5f); W->a[5] = fb(3.0f);
    RUN(ISA_OP_F32V2ADD, 0, 2, 4);
    CU_ASSERT_EQUAL(W->a[0], fb(1.5f));
    CU_ASSERT_EQUAL(W->a[1], fb(-5.0f));
    RUN(ISA_OP_F32V2SUB, 0, 2, 4);
    CU_ASSERT_EQUAL(W->a[0], fb(0.5f));
    CU_ASSERT_EQUAL(W->a[1], fb(-11.0f));
    RUN(ISA_OP_F32V2MUL, 0, 2, 4);
    CU_ASSERT_EQUAL(W->a[0], fb(0.5f));
    CU_ASSERT_EQUAL(W->a[1], fb(-24.0f));
    RUN(ISA_OP_F32V2MAX, 0, 2, 4);
    CU_ASSERT_EQUAL(W->a[0], fb(1.0f));
    CU_ASSERT_EQUAL(W->a[1], fb(3.0f));
    RUN(ISA_OP_F32V2MIN, 0, 2, 4);
    CU_ASSERT_EQUAL(W->a[0], fb(0.5f));
    CU_ASSERT_EQUAL(W->a[1], fb(-8.0f));
    /* Destination overlapping a source: operands are read first. */
    RUN(ISA_OP_F32V2ADD, 2, 2, 2);
    CU_ASSERT_EQUAL(W->a[2], fb(2.0f));
    CU_ASSERT_EQUAL(W->a[3], fb(-16.0f));
    /* Element-wise special cases. */
    W->a[4] = fb(INFINITY); W->a[5] = fb(-INFINITY);
    W->a[6] = fb(-INFINITY); W->a[7] = fb(1.0f);
    STS(W) = 0;
    RUN(ISA_OP_F32V2ADD, 0, 4, 6);
    CU_ASSERT_EQUAL(W->a[0], QNAN32);
    CU_ASSERT_EQUAL(W->a[1], fb(-INFINITY));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    end();
}

static void test_f32_compare(void)
{
    begin();
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPEQ, fb(2.0f), fb(2.0f)), 0xFFFFFFFFu);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPEQ, 0u, 0x80000000u), 0xFFFFFFFFu);   /* +0 == -0 */
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPNE, fb(2.0f), fb(2.0f)), 0u);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPLT, fb(1.0f), fb(2.0f)), 0xFFFFFFFFu);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPLT, fb(2.0f), fb(2.0f)), 0u);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPLE, fb(2.0f), fb(2.0f)), 0xFFFFFFFFu);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPGT, fb(3.0f), fb(2.0f)), 0xFFFFFFFFu);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPGE, fb(1.0f), fb(2.0f)), 0u);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPGT, fb(INFINITY), fb(3e38f)), 0xFFFFFFFFu);
    CU_ASSERT_EQUAL(STS(W), 0u);
    /* Unordered-signalling: a quiet NaN raises invalid; only cmpne is true. */
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPEQ, 0x7FC00000u, fb(1.0f)), 0u);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPNE, 0x7FC00000u, 0x7FC00000u), 0xFFFFFFFFu);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPGE, fb(1.0f), 0x7FC00000u), 0u);
    end();
}

/* IEEE special cases and the flags each raises (ISA2 §4.1.3.19–33). */
static void test_f32_special_cases(void)
{
    begin();
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32ADD, fb(INFINITY), fb(-INFINITY)), QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32SUB, fb(INFINITY), fb(INFINITY)), QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32ADD, fb(INFINITY), fb(1.0f)), fb(INFINITY));
    CU_ASSERT_EQUAL(STS(W), 0u);              /* an infinite operand is not an overflow */
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MUL, 0u, fb(INFINITY)), QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MUL, fb(-2.0f), fb(INFINITY)), fb(-INFINITY));
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32DIV, fb(1.0f), 0u), fb(INFINITY));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_DIV0);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32DIV, fb(-1.0f), 0u), fb(-INFINITY));
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32DIV, fb(1.0f), 0x80000000u), fb(-INFINITY));
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32DIV, 0u, 0u), QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32DIV, fb(INFINITY), fb(-INFINITY)), QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32DIV, fb(-3.0f), fb(INFINITY)), 0x80000000u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32SQRT, fb(-1.0f)), QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32SQRT, 0x80000000u), 0x80000000u);   /* sqrt(-0) = -0 */
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32SQRT, fb(INFINITY)), fb(INFINITY));
    /* Overflow. */
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MUL, fb(FLT_MAX), fb(2.0f)), fb(INFINITY));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32ADD, fb(FLT_MAX), fb(FLT_MAX)), fb(INFINITY));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32DIV, fb(FLT_MAX), fb(0.5f)), fb(INFINITY));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO);
    /* Rounds back below the largest finite value: no overflow. */
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32ADD, fb(FLT_MAX), fb(0x1p102f)), fb(FLT_MAX));
    CU_ASSERT_EQUAL(STS(W), 0u);
    /* NaNs: signalling raise invalid, quiet do not; the result is the
     * fixed quiet NaN whatever the payload. */
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32ADD, 0x7FC12345u, fb(1.0f)), QNAN32);
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MUL, fb(1.0f), 0xFF812345u), QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    /* $FP_STS is sticky. */
    STS(W) = 0;
    W->a[1] = fb(1.0f); W->a[2] = 0;
    RUN(ISA_OP_F32DIV, 0, 1, 2);
    W->a[1] = fb(1.0f); W->a[2] = fb(2.0f);
    RUN(ISA_OP_F32ADD, 0, 1, 2);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_DIV0);
    end();
}

/* f32 denormals are zero on input and flushed on output (ISA2 §2.9.4.1). */
static void test_denormal_flush(void)
{
    begin();
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32ADD, 0x00000001u, 0u), 0u);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32ADD, 0x807FFFFFu, 0x80000000u), 0x80000000u);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32ADD, 0x00400000u, fb(1.0f)), fb(1.0f));
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32CMPEQ, 0x00000001u, 0x80000000u), 0xFFFFFFFFu);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32DIV, fb(1.0f), 0x00000001u), fb(INFINITY));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_DIV0);     /* the denormal divisor is a zero */
    /* 2^-100 * 2^-30 = 2^-130 would be a denormal: +0, sign kept. */
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MUL, fb(0x1p-100f), fb(0x1p-30f)), 0u);
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MUL, fb(-0x1p-100f), fb(0x1p-30f)), 0x80000000u);
    /* 1.5 * 2^-126 - 2^-126 = 2^-127 (denormal) -> +0. */
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32SUB, fb(0x1.8p-126f), fb(0x1p-126f)), 0u);
    /* ... but a result that rounds up to the smallest normal stays. */
    /* 4095 * 4097 * 2^-150 = 2^-126 - 2^-150: half a denormal step below
     * the smallest normal, a tie that rounds (to even) up to 2^-126. */
    CU_ASSERT_EQUAL(f32op(ISA_OP_F32MUL, fb(4095 * 0x1p-75f), fb(4097 * 0x1p-75f)), 0x00800000u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32OOX, fb(0x1p127f)), 0u);   /* 2^-127 */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32EXP, fb(-100.0f)), 0u);    /* e^-100 < 2^-126 */
    CU_ASSERT_EQUAL(STS(W), 0u);              /* no underflow flag on IPU2 */
    end();
}

static void test_f32_transcendental(void)
{
    begin();
    /* Expected: the correctly rounded f32 of the true value. */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32EXP, fb(1.0f)), 0x402DF854u);       /* e */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32EXP2, fb(3.0f)), fb(8.0f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32EXP2, fb(-1.0f)), fb(0.5f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32LN, fb(3.0f)), 0x3F8C9F54u);        /* ln 3 */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32LOG2, fb(10.0f)), 0x40549A78u);     /* log2 10 */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32LOG2, fb(8.0f)), fb(3.0f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TANH, fb(0.5f)), 0x3EEC9A9Fu);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TANH, 0x80000000u), 0x80000000u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32SIGM, fb(1.0f)), 0x3F3B26A8u);      /* 1/(1+e^-1) */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32SIGM, 0u), fb(0.5f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32SIGM, fb(-200.0f)), 0u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32SIGM, fb(20.0f)), fb(1.0f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32SIGM, fb(-INFINITY)), 0u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32SQRT, fb(2.0f)), 0x3FB504F3u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32OOX, fb(4.0f)), fb(0.25f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32OOX, fb(3.0f)), 0x3EAAAAABu);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32OORX, fb(4.0f)), fb(0.5f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32OORX, fb(2.0f)), 0x3F3504F3u);
    CU_ASSERT_EQUAL(STS(W), 0u);
    /* Special cases and flags. */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32EXP, fb(100.0f)), fb(INFINITY));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32EXP2, fb(128.0f)), fb(INFINITY));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32EXP, fb(-INFINITY)), 0u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32EXP, fb(INFINITY)), fb(INFINITY));
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32LN, 0u), fb(-INFINITY));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_DIV0);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32LOG2, fb(-1.0f)), QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32OOX, 0x80000000u), fb(-INFINITY));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_DIV0);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32OOX, fb(-INFINITY)), 0x80000000u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32OORX, 0x80000000u), fb(-INFINITY));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_DIV0);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32OORX, fb(-4.0f)), QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32OORX, fb(INFINITY)), 0u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TANH, 0x7F800001u), QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    end();
}

static void test_f32_integer_conversions(void)
{
    begin();
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32INT, fb(2.5f)), fb(2.0f));           /* ties to even */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32INT, fb(3.5f)), fb(4.0f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32INT, fb(-0.4f)), 0x80000000u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32INT, fb(1e10f)), fb(1e10f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32INT, fb(-INFINITY)), fb(-INFINITY));
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32INT, 0x7F800001u), QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);

    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOI32, fb(2.5f)), 2u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOI32, fb(-2.5f)), (uint32_t)-2);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOI32, fb(3.5f)), 4u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOI32, fb(-2147483648.0f)), 0x80000000u);
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOI32, fb(2147483648.0f)), 0x80000000u);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOI32, 0x7FC00000u), 0x80000000u);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOUI32, fb(4e9f)), 4000000000u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOUI32, fb(-0.4f)), 0u);
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOUI32, fb(-1.0f)), 0u);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOUI32, fb(INFINITY)), 0u);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);

    CU_ASSERT_EQUAL(f32un(ISA_OP_F32FROMI32, (uint32_t)-5), fb(-5.0f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32FROMI32, 16777217u), fb(16777216.0f)); /* 2^24+1: to even */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32FROMI32, 16777219u), fb(16777220.0f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32FROMI32, 0x80000000u), fb(-2147483648.0f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32FROMUI32, 0xFFFFFFFFu), fb(4294967296.0f));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32FROMUI32, 0x80000000u), fb(2147483648.0f));
    end();
}

/* ---- f16 <-> f32 -------------------------------------------------------------- */

static void test_f32_to_f16(void)
{
    begin();
    /* The result is broadcast to both halves. */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, fb(1.0f / 3.0f)), h2(0x3555, 0x3555));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, 0x80000000u), h2(0x8000, 0x8000));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, fb(0x1p-24f)), h2(0x0001, 0x0001));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, fb(0x1p-25f)), 0u);           /* tie to even */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, 0x00000001u), 0u);            /* f32 denormal */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, fb(65519.99f)), h2(0x7BFF, 0x7BFF));
    CU_ASSERT_EQUAL(STS(W), 0u);
    /* Overflow saturates (NANOO = 0) and flags it. */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, fb(65520.0f)), h2(0x7BFF, 0x7BFF));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, fb(-1e6f)), h2(0xFBFF, 0xFBFF));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO);
    /* Infinities are treated as signalling NaNs. */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, fb(INFINITY)), h2(QNAN16, QNAN16));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, 0x7FC00000u), h2(QNAN16, QNAN16));
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, 0xFF800001u), h2(QNAN16, QNAN16));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    /* NaN on overflow. */
    W->csr[ISA_CSR_FP_CTL] = FP_CTL_NANOO;
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, fb(70000.0f)), h2(QNAN16, QNAN16));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO | FP_EXC_INV);
    W->csr[ISA_CSR_FP_CTL] = 0;
    /* The pair form packs element 0 in the low half. */
    W->a[2] = fb(1.0f);
    W->a[3] = fb(-2.0f);
    RUN(ISA_OP_F32V2TOF16, 0, 2);
    CU_ASSERT_EQUAL(W->a[0], h2(0x3C00, 0xC000));
    end();
}

static void test_f16_to_f32(void)
{
    begin();
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16TOF32, h2(0x3C00, 0xC000)), fb(1.0f));    /* low half */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16TOF32, 0x0001u), 0x33800000u);            /* 2^-24 */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16TOF32, 0xFC00u), fb(-INFINITY));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16TOF32, 0x7E01u), QNAN32);
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16TOF32, 0x7D00u), QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    W->a[2] = h2(0x3555, 0x8001);
    RUN(ISA_OP_F16V2TOF32, 4, 2);
    CU_ASSERT_EQUAL(W->a[4], 0x3EAAA000u);    /* f16(1/3) exactly */
    CU_ASSERT_EQUAL(W->a[5], 0xB3800000u);    /* -2^-24 */
    end();
}

/* ---- f16 arithmetic ------------------------------------------------------ */

static void test_f16_values(void)
{
    begin();
    /* [1, 2] + [0.5, -2] = [1.5, +0] */
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2ADD, h2(0x3C00, 0x4000), h2(0x3800, 0xC000)), h2(0x3E00, 0x0000));
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2SUB, h2(0x3C00, 0x4000), h2(0x3800, 0xC000)), h2(0x3800, 0x4400));
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2MUL, h2(0x3C00, 0x4000), h2(0x3800, 0xC000)), h2(0x3800, 0xC400));
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2MAX, h2(0x3C00, 0x4000), h2(0x3800, 0xC000)), h2(0x3C00, 0x4000));
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2MIN, h2(0x3C00, 0x4000), h2(0x3800, 0xC000)), h2(0x3800, 0xC000));
    CU_ASSERT_EQUAL(STS(W), 0u);
    /* Ties to even: 2048 + 1 = 2049 -> 2048; 2050 + 1 = 2051 -> 2052. */
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2ADD, h2(0x6800, 0x6801), h2(0x3C00, 0x3C00)), h2(0x6800, 0x6802));
    /* The product is rounded once from the exact value: (1+2^-10)^2 =
     * 1 + 2^-9 + 2^-20 -> 1 + 2^-9 (0x3C02). */
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2MUL, h2(0x3C01, 0x3C01), h2(0x3C01, 0x3555)), h2(0x3C02, 0x3556));
    /* Subnormals: 2^-24 + 2^-24 = 2^-23; 2^-24 * 0.5 = 2^-25 -> 0 (tie to even);
     * 3 * 2^-24 * 0.5 = 1.5 * 2^-24 -> 2 * 2^-24 (tie to even). */
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2ADD, h2(0x0001, 0x03FF), h2(0x0001, 0x0001)), h2(0x0002, 0x0400));
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2MUL, h2(0x0001, 0x0003), h2(0x3800, 0x3800)), h2(0x0000, 0x0002));
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2MUL, h2(0x8001, 0x0001), h2(0x3800, 0x3800)), h2(0x8000, 0x0000));
    CU_ASSERT_EQUAL(STS(W), 0u);
    /* f16v4: two registers per operand. */
    W->a[2] = h2(0x3C00, 0x4000); W->a[3] = h2(0x4200, 0x4400);    /* 1 2 3 4 */
    W->a[4] = h2(0x4400, 0x4200); W->a[5] = h2(0x4000, 0x3C00);    /* 4 3 2 1 */
    RUN(ISA_OP_F16V4ADD, 0, 2, 4);
    CU_ASSERT_EQUAL(W->a[0], h2(0x4500, 0x4500));                  /* 5 5 */
    CU_ASSERT_EQUAL(W->a[1], h2(0x4500, 0x4500));
    RUN(ISA_OP_F16V4SUB, 0, 2, 4);
    CU_ASSERT_EQUAL(W->a[0], h2(0xC200, 0xBC00));                  /* -3 -1 */
    CU_ASSERT_EQUAL(W->a[1], h2(0x3C00, 0x4200));                  /* 1 3 */
    RUN(ISA_OP_F16V4MUL, 0, 2, 4);
    CU_ASSERT_EQUAL(W->a[0], h2(0x4400, 0x4600));                  /* 4 6 */
    CU_ASSERT_EQUAL(W->a[1], h2(0x4600, 0x4400));
    RUN(ISA_OP_F16V4MAX, 0, 2, 4);
    CU_ASSERT_EQUAL(W->a[0], h2(0x4400, 0x4200));
    CU_ASSERT_EQUAL(W->a[1], h2(0x4200, 0x4400));
    RUN(ISA_OP_F16V4MIN, 0, 2, 4);
    CU_ASSERT_EQUAL(W->a[0], h2(0x3C00, 0x4000));
    CU_ASSERT_EQUAL(W->a[1], h2(0x4000, 0x3C00));
    end();
}

/* ISA2 §2.9.4.2: f16 arithmetic never produces infinity. */
static void test_f16_corner_cases(void)
{
    begin();
    /* Overflow saturates to ±65504 and flags it. */
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2ADD, h2(0x7BFF, 0xFBFF), h2(0x5000, 0xD000)), h2(0x7BFF, 0xFBFF));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO);
    /* 65504 + 8 = 65512 rounds back to 65504: no overflow. */
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2ADD, h2(0x7BFF, 0x7BFF), h2(0x4800, 0x0000)), h2(0x7BFF, 0x7BFF));
    CU_ASSERT_EQUAL(STS(W), 0u);
    /* 65504 + 16 = 65520 is the tie that rounds to 65536: overflow. */
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2ADD, h2(0x7BFF, 0x3C00), h2(0x4C00, 0x3C00)), h2(0x7BFF, 0x4000));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO);
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2MUL, h2(0x5C00, 0x3C00), h2(0x5C00, 0x3C00)), h2(0x7BFF, 0x3C00));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO);
    /* NaN on overflow. */
    W->csr[ISA_CSR_FP_CTL] = FP_CTL_NANOO;
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2ADD, h2(0x7BFF, 0x3C00), h2(0x7BFF, 0x3C00)), h2(QNAN16, 0x4000));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO | FP_EXC_INV);
    W->csr[ISA_CSR_FP_CTL] = 0;
    /* An infinite operand is treated as a signalling NaN. */
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2ADD, h2(0x7C00, 0x3C00), h2(0x3C00, 0x3C00)), h2(QNAN16, 0x4000));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2MUL, h2(0x3C00, 0xFC00), h2(0x3C00, 0x0000)), h2(0x3C00, QNAN16));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    /* Quiet NaN operands: fixed NaN, no flag; signalling: invalid. */
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2SUB, h2(0x7E55, 0x3C00), h2(0x3C00, 0x3C00)), h2(QNAN16, 0x0000));
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2ADD, h2(0x3C00, 0x3C00), h2(0x3C00, 0x7D00)), h2(0x4000, QNAN16));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    /* min/max keep infinities and pass over a quiet NaN; no flags. */
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2MAX, h2(0x7C00, 0x7E00), h2(0x3C00, 0x4000)), h2(0x7C00, 0x4000));
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2MIN, h2(0xFC00, 0x8000), h2(0x3C00, 0x0000)), h2(0xFC00, 0x8000));
    CU_ASSERT_EQUAL(STS(W), 0u);
    CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2MAX, h2(0x7D00, 0x7E00), h2(0x3C00, 0x7E01)), h2(QNAN16, QNAN16));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    end();
}

static void test_f16_transcendental(void)
{
    begin();
    /* Expected: the f16 nearest the true value. */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16V2EXP, h2(0x0000, 0x3C00)), h2(0x3C00, 0x4170)); /* 1, e */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16V2TANH, h2(0x3800, 0xC000)), h2(0x3765, 0xBBB6)); /* tanh .5, -2 */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16V2SIGM, h2(0x0000, 0x3C00)), h2(0x3800, 0x39D9)); /* .5, 1/(1+1/e) */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16V2TANH, h2(0x8000, 0x7BFF)), h2(0x8000, 0x3C00));
    CU_ASSERT_EQUAL(STS(W), 0u);
    /* exp(12) = 162755: saturates, overflow. */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16V2EXP, h2(0x4A00, 0xCA00)), h2(0x7BFF, 0x0067));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO);
    /* exp(-12) = 6.144e-6 = 103.08 * 2^-24: the f16 subnormal 0x0067. */
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16V2EXP, h2(0xCA00, 0xCA00)), h2(0x0067, 0x0067));
    CU_ASSERT_EQUAL(f32un(ISA_OP_F16V2SIGM, h2(0x7C00, 0x3C00)), h2(QNAN16, 0x39D9));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    end();
}

/* ---- stochastic rounding ----------------------------------------------------- */

/* With $FP_CTL.ESR, 2049 (= 2048 + 1, a tie for round to nearest) has the
 * 13-bit remainder 0x1000 below the f16 lsb: it rounds up iff bit 12 of the
 * element's random pattern is set — bit 12 of the PRNG's first word for
 * element 0, bit 28 for element 1 (ISA2 listing 2.12). */
static void test_stochastic_rounding(void)
{
    begin();
    W->csr[ISA_CSR_FP_CTL] = FP_CTL_ESR;
    fp_prng_seed(W->prng, 0xABCD1234u);
    unsigned up0 = 0, up1 = 0;
    for (int i = 0; i < 64; i++) {
        uint64_t expect_state[2] = {W->prng[0], W->prng[1]}, rnd[2];
        fp_prng_advance(expect_state, rnd);
        uint32_t r = f16op(ISA_OP_F16V2ADD, h2(0x6800, 0x6800), h2(0x3C00, 0x3C00));
        uint16_t e0 = (rnd[0] >> 12) & 1 ? 0x6801 : 0x6800;
        uint16_t e1 = (rnd[0] >> 28) & 1 ? 0x6801 : 0x6800;
        CU_ASSERT_EQUAL(r, h2(e0, e1));
        /* Two xoroshiro128aox steps per instruction. */
        CU_ASSERT_EQUAL(W->prng[0], expect_state[0]);
        CU_ASSERT_EQUAL(W->prng[1], expect_state[1]);
        up0 += e0 == 0x6801;
        up1 += e1 == 0x6801;
    }
    /* Round to nearest would give 2048 every time. */
    CU_ASSERT_TRUE(up0 > 0 && up0 < 64);
    CU_ASSERT_TRUE(up1 > 0 && up1 < 64);

    /* Deterministic for a given seed. */
    uint32_t first[16];
    fp_prng_seed(W->prng, 7);
    for (int i = 0; i < 16; i++)
        first[i] = f16op(ISA_OP_F16V2MUL, h2(0x3555, 0x3C01), h2(0x3555, 0x3C01));
    fp_prng_seed(W->prng, 7);
    for (int i = 0; i < 16; i++)
        CU_ASSERT_EQUAL(f16op(ISA_OP_F16V2MUL, h2(0x3555, 0x3C01), h2(0x3555, 0x3C01)), first[i]);

    /* Without ESR the PRNG is not touched. */
    W->csr[ISA_CSR_FP_CTL] = 0;
    uint64_t before0 = W->prng[0];
    f16op(ISA_OP_F16V2ADD, h2(0x6800, 0x6800), h2(0x3C00, 0x3C00));
    CU_ASSERT_EQUAL(W->prng[0], before0);
    end();
}

/* f32tof16 with ESR: 1 + 2^-11 + 2^-13 has remainder 0x1400 (of 0x2000):
 * up iff (low 13 bits of element 0's pattern) >= 0xC00. */
static void test_stochastic_f32tof16(void)
{
    begin();
    W->csr[ISA_CSR_FP_CTL] = FP_CTL_ESR;
    fp_prng_seed(W->prng, 99);
    unsigned ups = 0;
    for (int i = 0; i < 200; i++) {
        uint64_t st[2] = {W->prng[0], W->prng[1]}, rnd[2];
        fp_prng_advance(st, rnd);
        uint32_t r = f32un(ISA_OP_F32TOF16, fb(1.0f + 0x1p-11f + 0x1p-13f));
        uint16_t e = (rnd[0] & 0x1FFF) >= 0xC00 ? 0x3C01 : 0x3C00;
        CU_ASSERT_EQUAL(r, h2(e, e));
        ups += e == 0x3C01;
    }
    CU_ASSERT_TRUE(ups > 200 * 5 / 8 - 40 && ups < 200 * 5 / 8 + 40);
    /* Stochastic rounding past 65504 still saturates and flags. */
    W->csr[ISA_CSR_FP_CTL] = FP_CTL_ESR;
    CU_ASSERT_EQUAL(f32un(ISA_OP_F32TOF16, fb(65535.0f)) & 0xFFFF, 0x7BFFu);
    end();
}

/* ---- FP exceptions ------------------------------------------------------------ */

static void test_fp_exception_enabled(void)
{
    begin();
    W->csr[ISA_CSR_FP_CTL] = FP_EXC_DIV0;
    W->a[0] = 0x11111111u;
    W->a[1] = fb(1.0f);
    W->a[2] = 0;
    CU_ASSERT_EQUAL(fx_run(T, W, ISA_OP_F32DIV, 0, 1, 2), ISA_FLOW_FAULT);
    isa_fault f = fx_take_fault(T);
    CU_ASSERT_EQUAL(f.exception, ISA_EXC_FP);
    CU_ASSERT_STRING_EQUAL(f.message, "f32div: divide by zero");
    CU_ASSERT_EQUAL(f.context, 1);
    CU_ASSERT_EQUAL(W->a[0], 0x11111111u);    /* precise: not written */
    CU_ASSERT_EQUAL(STS(W), FP_EXC_DIV0);     /* the flag is still set */

    /* A disabled flag is only recorded. */
    W->a[1] = fb(INFINITY);
    W->a[2] = fb(-INFINITY);
    CU_ASSERT_EQUAL(fx_run(T, W, ISA_OP_F32ADD, 0, 1, 2), ISA_FLOW_NEXT);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_DIV0 | FP_EXC_INV);

    /* Invalid and overflow enabled: f16 overflow in NaN-on-overflow mode
     * raises both. */
    W->csr[ISA_CSR_FP_CTL] = FP_EXC_INV | FP_EXC_OFLO | FP_CTL_NANOO;
    W->a[0] = 0x11111111u;
    W->a[1] = h2(0x7BFF, 0x3C00);
    W->a[2] = h2(0x7BFF, 0x3C00);
    CU_ASSERT_EQUAL(fx_run(T, W, ISA_OP_F16V2ADD, 0, 1, 2), ISA_FLOW_FAULT);
    f = fx_take_fault(T);
    CU_ASSERT_STRING_EQUAL(f.message, "f16v2add: invalid operation, overflow");
    CU_ASSERT_EQUAL(W->a[0], 0x11111111u);

    /* f32div's overflow is imprecise: the result is written, then raised. */
    W->csr[ISA_CSR_FP_CTL] = FP_EXC_OFLO;
    W->a[1] = fb(FLT_MAX);
    W->a[2] = fb(0.25f);
    CU_ASSERT_EQUAL(fx_run(T, W, ISA_OP_F32DIV, 0, 1, 2), ISA_FLOW_FAULT);
    f = fx_take_fault(T);
    CU_ASSERT_STRING_EQUAL(f.message, "f32div: overflow");
    CU_ASSERT_EQUAL(W->a[0], fb(INFINITY));

    /* Overflow elsewhere is precise. */
    W->a[0] = 0x22222222u;
    CU_ASSERT_EQUAL(fx_run(T, W, ISA_OP_F32MUL, 0, 1, 1), ISA_FLOW_FAULT);
    CU_ASSERT_EQUAL(W->a[0], 0x22222222u);
    f = fx_take_fault(T);
    CU_ASSERT_STRING_EQUAL(f.message, "f32mul: overflow");

    /* f32tof16 of an infinity with invalid enabled. */
    W->csr[ISA_CSR_FP_CTL] = FP_EXC_INV;
    W->a[1] = fb(-INFINITY);
    CU_ASSERT_EQUAL(fx_run(T, W, ISA_OP_F32TOF16, 0, 1), ISA_FLOW_FAULT);
    f = fx_take_fault(T);
    CU_ASSERT_EQUAL(f.exception, ISA_EXC_FP);
    CU_ASSERT_STRING_EQUAL(f.message, "f32tof16: invalid operation");
    end();
}

/* ---- accumulators -------------------------------------------------------------- */

static void test_mac_and_gina(void)
{
    begin();
    /* f32mac accumulates in $AACC[0]: 2*3 + 4*5 = 26. */
    W->a[1] = fb(2.0f); W->a[2] = fb(3.0f);
    RUN(ISA_OP_F32MAC, 1, 2);
    W->a[1] = fb(4.0f); W->a[2] = fb(5.0f);
    RUN(ISA_OP_F32MAC, 1, 2);
    CU_ASSERT_EQUAL(W->amp.aacc[0], fb(26.0f));
    /* Not fused: (1 + 2^-12)^2 rounds to 1 + 2^-11 before adding -1. */
    W->amp.aacc[0] = fb(-1.0f);
    W->a[1] = fb(1.0f + 0x1p-12f);
    RUN(ISA_OP_F32MAC, 1, 1);
    CU_ASSERT_EQUAL(W->amp.aacc[0], fb(0x1p-11f));
    /* f32v2mac: $AACC[0] and $AACC[2]. */
    W->amp.aacc[0] = fb(1.0f);
    W->amp.aacc[2] = fb(10.0f);
    W->a[2] = fb(2.0f); W->a[3] = fb(3.0f);
    W->a[4] = fb(4.0f); W->a[5] = fb(-5.0f);
    RUN(ISA_OP_F32V2MAC, 2, 4);
    CU_ASSERT_EQUAL(W->amp.aacc[0], fb(9.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[2], fb(-5.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[1], 0u);      /* odd accumulators untouched */
    /* f16v4mac: $AACC[0, 2, 4, 6] += x*y. */
    memset(W->amp.aacc, 0, sizeof W->amp.aacc);
    W->a[2] = h2(0x3C00, 0x4000); W->a[3] = h2(0x4200, 0x4400);   /* 1 2 3 4 */
    W->a[4] = h2(0x3800, 0x3800); W->a[5] = h2(0xC000, 0x0001);   /* .5 .5 -2 2^-24 */
    RUN(ISA_OP_F16V4MAC, 2, 4);
    CU_ASSERT_EQUAL(W->amp.aacc[0], fb(0.5f));
    CU_ASSERT_EQUAL(W->amp.aacc[2], fb(1.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[4], fb(-6.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[6], fb(0x1p-22f));  /* exact f16 product */
    /* inf * 0 is invalid even into an accumulator. */
    STS(W) = 0;
    W->a[1] = fb(INFINITY); W->a[2] = 0;
    RUN(ISA_OP_F32MAC, 1, 2);
    CU_ASSERT_EQUAL(W->amp.aacc[0], QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);

    /* f32v2gina: read $AACC[0], [2]; shift [4,8,12] -> [0,4,8] (and the
     * [2] chain); write the operands into [12], [14]. */
    for (unsigned k = 0; k < 16; k++)
        W->amp.aacc[k] = fb((float)k);
    W->a[6] = fb(100.0f); W->a[7] = fb(200.0f);
    RUN(ISA_OP_F32V2GINA, 0, 6);
    CU_ASSERT_EQUAL(W->a[0], fb(0.0f));
    CU_ASSERT_EQUAL(W->a[1], fb(2.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[0], fb(4.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[4], fb(8.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[8], fb(12.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[12], fb(100.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[14], fb(200.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[10], fb(14.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[1], fb(1.0f));     /* odd ones untouched */
    /* Three more issues read out the rest, the fourth the written pair. */
    RUN(ISA_OP_F32V2GINA, 0, 14);                  /* $azeros */
    CU_ASSERT_EQUAL(W->a[0], fb(4.0f));
    CU_ASSERT_EQUAL(W->a[1], fb(6.0f));
    RUN(ISA_OP_F32V2GINA, 0, 14);
    RUN(ISA_OP_F32V2GINA, 0, 14);
    CU_ASSERT_EQUAL(W->a[0], fb(12.0f));
    RUN(ISA_OP_F32V2GINA, 0, 14);
    CU_ASSERT_EQUAL(W->a[0], fb(100.0f));
    CU_ASSERT_EQUAL(W->a[1], fb(200.0f));
    /* An infinite accumulator read out is taken as an overflow. */
    W->amp.aacc[0] = fb(-INFINITY);
    STS(W) = 0;
    RUN(ISA_OP_F32V2GINA, 0, 14);
    CU_ASSERT_EQUAL(W->a[0], fb(-INFINITY));
    CU_ASSERT_EQUAL(STS(W), FP_EXC_OFLO);
    end();
}

static void test_acc(void)
{
    begin();
    /* f16v8acc: eight f16 values into the even accumulators. */
    W->a[4] = h2(0x3C00, 0x4000); W->a[5] = h2(0x4200, 0x4400);   /* 1 2 3 4 */
    W->a[6] = h2(0x4500, 0x4600); W->a[7] = h2(0x4700, 0x0001);   /* 5 6 7 2^-24 */
    RUN(ISA_OP_F16V8ACC, 4);
    RUN(ISA_OP_F16V8ACC, 4);
    for (unsigned i = 0; i < 7; i++)
        CU_ASSERT_EQUAL(W->amp.aacc[2 * i], fb(2.0f * (i + 1)));
    CU_ASSERT_EQUAL(W->amp.aacc[14], fb(0x1p-23f));
    CU_ASSERT_EQUAL(W->amp.aacc[1], 0u);
    /* f32v4acc: [0, 2, 4, 6]; f32v2acc: [0, 2]. */
    memset(W->amp.aacc, 0, sizeof W->amp.aacc);
    W->a[8] = fb(1.5f); W->a[9] = fb(-2.0f); W->a[10] = fb(1e30f); W->a[11] = 0x00000001u;
    RUN(ISA_OP_F32V4ACC, 8);
    RUN(ISA_OP_F32V2ACC, 8);
    CU_ASSERT_EQUAL(W->amp.aacc[0], fb(3.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[2], fb(-4.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[4], fb(1e30f));
    CU_ASSERT_EQUAL(W->amp.aacc[6], 0u);           /* denormal operand flushed */
    /* Accumulators may overflow to infinity without a flag. */
    W->amp.aacc[0] = fb(FLT_MAX);
    W->a[8] = fb(FLT_MAX); W->a[9] = 0;
    STS(W) = 0;
    RUN(ISA_OP_F32V2ACC, 8);
    CU_ASSERT_EQUAL(W->amp.aacc[0], fb(INFINITY));
    CU_ASSERT_EQUAL(STS(W), 0u);
    /* A signalling NaN operand raises invalid and poisons its accumulator. */
    W->a[8] = 0x7F800001u;
    RUN(ISA_OP_F32V2ACC, 8);
    CU_ASSERT_EQUAL(W->amp.aacc[0], QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    end();
}

/* f32v2axpy: $AACC[0,2] = $TAS * x + y; the destination gets the previous
 * accumulator values (a one-issue pipeline). */
static void test_axpy(void)
{
    begin();
    W->csr[ISA_CSR_TAS] = fb(2.0f);
    W->amp.aacc[0] = fb(-7.0f);
    W->amp.aacc[2] = fb(-8.0f);
    W->a[2] = fb(1.0f); W->a[3] = fb(2.0f);        /* x */
    W->a[4] = fb(10.0f); W->a[5] = fb(20.0f);      /* y */
    RUN(ISA_OP_F32V2AXPY, 0, 2, 4);
    CU_ASSERT_EQUAL(W->a[0], fb(-7.0f));
    CU_ASSERT_EQUAL(W->a[1], fb(-8.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[0], fb(12.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[2], fb(24.0f));
    RUN(ISA_OP_F32V2AXPY, 0, 14, 14);               /* flush with zeros */
    CU_ASSERT_EQUAL(W->a[0], fb(12.0f));
    CU_ASSERT_EQUAL(W->a[1], fb(24.0f));
    CU_ASSERT_EQUAL(W->amp.aacc[0], 0u);
    /* The product is rounded to f32 before the addition: with a = 1 + 2^-12,
     * a * a = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11; minus 1 gives 2^-11. */
    W->csr[ISA_CSR_TAS] = fb(1.0f + 0x1p-12f);
    W->a[2] = fb(1.0f + 0x1p-12f); W->a[3] = 0;
    W->a[4] = fb(-1.0f); W->a[5] = 0;
    RUN(ISA_OP_F32V2AXPY, 0, 2, 4);
    CU_ASSERT_EQUAL(W->amp.aacc[0], fb(0x1p-11f));
    /* inf * 0 is invalid. */
    STS(W) = 0;
    W->csr[ISA_CSR_TAS] = fb(INFINITY);
    RUN(ISA_OP_F32V2AXPY, 0, 14, 14);
    CU_ASSERT_EQUAL(W->amp.aacc[0], QNAN32);
    CU_ASSERT_EQUAL(STS(W), FP_EXC_INV);
    end();
}

/* ---- uget / uput ----------------------------------------------------------------- */

static void test_uget_uput(void)
{
    begin();
    W->a[3] = FP_EXC_DIV0;
    RUN(ISA_OP_UPUT, ISA_CSR_FP_CTL, 3);
    CU_ASSERT_EQUAL(W->csr[ISA_CSR_FP_CTL], FP_EXC_DIV0);
    W->a[1] = fb(1.0f); W->a[2] = 0;
    CU_ASSERT_EQUAL(fx_run(T, W, ISA_OP_F32DIV, 0, 1, 2), ISA_FLOW_FAULT);
    fx_take_fault(T);
    RUN(ISA_OP_UGET, 5, ISA_CSR_FP_STS);
    CU_ASSERT_EQUAL(W->a[5], FP_EXC_DIV0);
    /* Seeding through $PRNG_SEED, read back through $PRNG_1_0. */
    W->a[3] = 1;
    RUN(ISA_OP_UPUT, ISA_CSR_PRNG_SEED, 3);
    RUN(ISA_OP_UGET, 6, ISA_CSR_PRNG_1_0);
    CU_ASSERT_EQUAL(W->a[6], 0x3FFFu);
    /* $TAS feeds f32v2axpy. */
    W->a[3] = fb(3.0f);
    RUN(ISA_OP_UPUT, ISA_CSR_TAS, 3);
    W->a[8] = fb(2.0f); W->a[9] = 0;
    RUN(ISA_OP_F32V2AXPY, 0, 8, 14);
    RUN(ISA_OP_F32V2AXPY, 0, 14, 14);
    CU_ASSERT_EQUAL(W->a[0], fb(6.0f));
    end();
}

void test_register(void)
{
    ADD_SUITE("exec_aux_basic",
              {"fnop, mov, setzi", test_moves},
              {"abs and neg are sign-bit operations", test_sign_ops});
    ADD_SUITE("exec_aux_f32",
              {"add sub mul div max min", test_f32_values},
              {"f32v2 element-wise", test_f32_vectors},
              {"comparisons and their bit patterns", test_f32_compare},
              {"IEEE special cases and flags", test_f32_special_cases},
              {"denormals flushed to zero", test_denormal_flush},
              {"sqrt, reciprocals, transcendentals", test_f32_transcendental},
              {"integer conversions", test_f32_integer_conversions});
    ADD_SUITE("exec_aux_f16",
              {"f32 to f16 conversions", test_f32_to_f16},
              {"f16 to f32 conversions", test_f16_to_f32},
              {"f16v2/f16v4 values and ties", test_f16_values},
              {"saturation, infinities, NaNs", test_f16_corner_cases},
              {"f16v2 exp tanh sigm", test_f16_transcendental},
              {"stochastic rounding from $FP_CTL.ESR", test_stochastic_rounding},
              {"stochastic f32tof16", test_stochastic_f32tof16});
    ADD_SUITE("exec_aux_exceptions",
              {"malign FP exceptions", test_fp_exception_enabled});
    ADD_SUITE("exec_aux_accumulators",
              {"mac and gina", test_mac_and_gina},
              {"acc", test_acc},
              {"axpy pipeline", test_axpy},
              {"uget and uput", test_uget_uput});
}
