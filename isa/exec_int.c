/*
 * exec_int.c — integer and register-move instructions of the main pipeline
 * (ISA2 §3.7.1 bit, §3.7.4 integer, §3.7.5.3.1 atom).
 *
 * All arithmetic is on 32-bit words and wraps modulo 2^32, as the
 * hardware's does: add, sub and mul keep the low 32 bits (mul is 32 x 32 ->
 * 32, so signedness does not change the result).  Shifts use the amount
 * modulo 32 (ISA2 §3.7.4.11-13: "op1 << (op2 % 32)"), so shifting by 32
 * leaves the value unchanged and by 33 shifts by one.  Comparisons write 1
 * or 0.  min and max compare as signed words.
 *
 * Immediate forms follow isa.def: s16 immediates arrive sign-extended, u16
 * and u20 zero-extended (the decoder does it).  ISA2 gives and/or/andc a
 * 12-bit immediate; ipusim's encoding has room for 16 bits and uses it.
 *
 * $m15 reads as zero and ignores writes (isa_set_m); nothing else in the
 * MRF is special here.
 */
#include "exec.h"

/* The two source values of a three-register or register+immediate form. */
#define RA(in)  isa_m(c, (in)->operand[1])
#define RB(in)  isa_m(c, (in)->operand[2])
#define IMM(in) ((uint32_t)(in)->operand[2])

static uint32_t shift_left(uint32_t v, uint32_t amount) { return v << (amount % 32u); }
static uint32_t shift_right(uint32_t v, uint32_t amount) { return v >> (amount % 32u); }

/* Arithmetic right shift without relying on the implementation-defined
 * behaviour of >> on negative ints. */
static uint32_t shift_right_signed(uint32_t v, uint32_t amount)
{
    amount %= 32u;
    return (v & 0x80000000u) ? ~(~v >> amount) : v >> amount;
}

static int32_t as_signed(uint32_t v)
{
    /* Two's complement reinterpretation, defined for every value. */
    return v <= 0x7fffffffu ? (int32_t)v : -(int32_t)(~v) - 1;
}

static uint32_t min_signed(uint32_t a, uint32_t b) { return as_signed(a) < as_signed(b) ? a : b; }
static uint32_t max_signed(uint32_t a, uint32_t b) { return as_signed(a) > as_signed(b) ? a : b; }

static enum isa_flow write_m(isa_context *c, const isa_insn *in, uint32_t v)
{
    isa_set_m(c, in->operand[0], v);
    return ISA_FLOW_NEXT;
}

#define BINARY(ID, EXPR_A, EXPR_B, RESULT)                                            \
    enum isa_flow isa_exec_##ID(isa_tile_state *t, isa_context *c, const isa_insn *in) \
    {                                                                               \
        (void)t;                                                                    \
        uint32_t a = (EXPR_A), b = (EXPR_B);                                        \
        return write_m(c, in, (RESULT));                                            \
    }

/* Register-register forms. */
BINARY(ADD,    RA(in), RB(in), a + b)
BINARY(SUB,    RA(in), RB(in), a - b)
BINARY(MUL,    RA(in), RB(in), a * b)
BINARY(AND,    RA(in), RB(in), a & b)
BINARY(OR,     RA(in), RB(in), a | b)
BINARY(XOR,    RA(in), RB(in), a ^ b)
BINARY(ANDC,   RA(in), RB(in), a & ~b)
BINARY(SHL,    RA(in), RB(in), shift_left(a, b))
BINARY(SHR,    RA(in), RB(in), shift_right(a, b))
BINARY(SHRS,   RA(in), RB(in), shift_right_signed(a, b))
BINARY(CMPEQ,  RA(in), RB(in), a == b ? 1u : 0u)
BINARY(CMPNE,  RA(in), RB(in), a != b ? 1u : 0u)
BINARY(CMPULT, RA(in), RB(in), a < b ? 1u : 0u)
BINARY(CMPSLT, RA(in), RB(in), as_signed(a) < as_signed(b) ? 1u : 0u)
BINARY(MIN,    RA(in), RB(in), min_signed(a, b))
BINARY(MAX,    RA(in), RB(in), max_signed(a, b))

/* Register-immediate forms (immediates already extended by the decoder). */
BINARY(ADD_I,    RA(in), IMM(in), a + b)
BINARY(MUL_I,    RA(in), IMM(in), a * b)
BINARY(AND_I,    RA(in), IMM(in), a & b)
BINARY(OR_I,     RA(in), IMM(in), a | b)
BINARY(XOR_I,    RA(in), IMM(in), a ^ b)
BINARY(CMPEQ_I,  RA(in), IMM(in), a == b ? 1u : 0u)
BINARY(CMPNE_I,  RA(in), IMM(in), a != b ? 1u : 0u)
BINARY(CMPULT_I, RA(in), IMM(in), a < b ? 1u : 0u)
BINARY(CMPSLT_I, RA(in), IMM(in), as_signed(a) < as_signed(b) ? 1u : 0u)
BINARY(MIN_I,    RA(in), IMM(in), min_signed(a, b))
BINARY(MAX_I,    RA(in), IMM(in), max_signed(a, b))
BINARY(SHL_I,    RA(in), IMM(in), shift_left(a, b))
BINARY(SHR_I,    RA(in), IMM(in), shift_right(a, b))
BINARY(SHRS_I,   RA(in), IMM(in), shift_right_signed(a, b))

enum isa_flow isa_exec_NOP(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t, (void)c, (void)in;
    return ISA_FLOW_NEXT;
}

/* setzi $mDst, zimm20 (ISA2 §3.7.1.17). */
enum isa_flow isa_exec_SETZI(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    return write_m(c, in, (uint32_t)in->operand[1] & 0xfffffu);
}

enum isa_flow isa_exec_MOV(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    return write_m(c, in, isa_m(c, in->operand[1]));
}

/* atom $mDst, $aSrc: the ARF word's bits, unconverted (ISA2 §3.7.5.3.1).
 * It reads the ARF as it is when the main instruction executes, before any
 * write of the bundle's aux sibling. */
enum isa_flow isa_exec_ATOM(isa_tile_state *t, isa_context *c, const isa_insn *in)
{
    (void)t;
    return write_m(c, in, isa_a(c, in->operand[1]));
}
