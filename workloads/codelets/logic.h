/*
 * logic.h — comparisons, Where, logical ops on bool bytes and integer
 * element-wise arithmetic (workloads/codelets/logic.S): the vertex record
 * and the bit-exact C models (logic_model.c).
 *
 * Codelets (worker vertices, calling convention in abi.h), all on the one
 * record below, element i of a record (0 <= i < n):
 *   vtx_compare_f32   out[i] = in0[i] OP in1[i] as a bool byte (0 or 1),
 *                     OP in enum logic_compare_op (f32cmpeq, f32cmplt,
 *                     f32cmpgt, f32cmple, f32cmpge: a NaN compares false;
 *                     denormal operands are read as zeros, isa/fparith.h)
 *   vtx_compare_i32   the same on two's complement i32 (cmpeq, cmpslt)
 *   vtx_where_f32     out[i] = in0[i] ? in1[i] : in2[i]; in0 bool bytes
 *                     (any nonzero byte is true), in1, in2 and out 32-bit
 *                     words (f32 or i32: the bits are copied)
 *   vtx_logic_u8      out[i] = in0[i] AND/OR/XOR in1[i], or NOT in0[i]
 *                     (enum logic_bool_op) on bool bytes: the byte
 *                     operations themselves, so bytes 0/1 give bytes 0/1
 *   vtx_binary_i32    out[i] = in0[i] OP in1[i], OP in enum logic_int_op,
 *                     wrap-around two's complement (add, sub, mul; max
 *                     and min signed)
 *
 * Broadcasting.  The elements of a record are consecutive elements of the
 * output (out contiguous), seen as rows of `cols` elements; the first is
 * in column col0.  Each input k is a pointer to the element that goes with
 * the record's first element, a column step (bytes added after every
 * element: the element size when contiguous, 0 when broadcast along the
 * row) and a row jump (bytes added after the last column of every row, on
 * top of its column step: row step - cols x column step, two's
 * complement).  So numpy broadcasting of any input costs nothing but a
 * record per run of rows whose row steps are the same (the lowering's
 * business, frontends/lower_logic.c).
 *
 * Alignment: 32-bit inputs and outputs 4-byte aligned; bool inputs any
 * byte address.  A bool output is written a 32-bit word at a time (the
 * tile stores 32 or 64 bits, ISA2 §2.8.9): out must be 4-byte aligned, and
 * when n is not a multiple of 4 the last word is read, its bytes past the
 * output's end kept, and written back.  So the records of one output must
 * split it at multiples of 4 elements (two workers must never share a
 * word), and nothing may write the bytes of the output's last word past
 * its end while the codelet runs.  Inputs are read element by element:
 * nothing is read past an input's last element.  An output may be an
 * input of the same element size (in place).
 *
 * A record whose op is out of range stops the worker with
 * `trap LOGIC_TRAP_BAD_OP`; n = 0 does nothing; cols >= 1 and col0 < cols.
 *
 * Cost (logic.S): one element at a time, the loop of the record's op:
 * 7 (binary_i32) to 13 (where) worker cycles an element, which with six
 * workers busy is the same number of tile cycles an element; measured
 * figures in logic.S.
 */
#ifndef IPUSIM_CODELETS_LOGIC_H
#define IPUSIM_CODELETS_LOGIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOGIC_TRAP_BAD_OP 0x4cu   /* trap code: op out of range */

/* The record of every logic codelet (32-bit words). */
enum logic_vertex {
    LOGIC_V_OUT = 0,               /* out, element 0 (4-byte aligned) */
    LOGIC_V_N,                     /* elements (0: nothing to do) */
    LOGIC_V_COLS,                  /* elements per row (>= 1) */
    LOGIC_V_COL0,                  /* column of element 0 (< cols) */
    LOGIC_V_OP,                    /* the codelet's op enum (where: ignored) */
    LOGIC_V_IN0,                   /* in0 element 0 */
    LOGIC_V_IN0_COL_STEP,          /* bytes after each element */
    LOGIC_V_IN0_ROW_JUMP,          /* bytes after each row's last element, on top */
    LOGIC_V_IN1,
    LOGIC_V_IN1_COL_STEP,
    LOGIC_V_IN1_ROW_JUMP,
    LOGIC_V_IN2,                   /* where only: the "else" value */
    LOGIC_V_IN2_COL_STEP,
    LOGIC_V_IN2_ROW_JUMP,
    LOGIC_V_WORDS
};

enum logic_compare_op {
    LOGIC_EQ = 0, LOGIC_LT, LOGIC_GT, LOGIC_LE, LOGIC_GE,
    LOGIC_COMPARE_OPS
};

enum logic_bool_op {
    LOGIC_AND = 0, LOGIC_OR, LOGIC_XOR, LOGIC_NOT,
    LOGIC_BOOL_OPS
};

enum logic_int_op {
    LOGIC_ADD = 0, LOGIC_SUB, LOGIC_MUL, LOGIC_MAX, LOGIC_MIN,
    LOGIC_INT_OPS
};

/* One element, as the codelets compute it. */
uint8_t logic_model_compare_f32(enum logic_compare_op op, float a, float b);
uint8_t logic_model_compare_i32(enum logic_compare_op op, int32_t a, int32_t b);
uint8_t logic_model_bool(enum logic_bool_op op, uint8_t a, uint8_t b);
int32_t logic_model_int(enum logic_int_op op, int32_t a, int32_t b);
uint32_t logic_model_where(uint8_t cond, uint32_t x, uint32_t y);

/* Which codelet a whole-record model runs. */
enum logic_codelet {
    LOGIC_CODELET_COMPARE_F32, LOGIC_CODELET_COMPARE_I32, LOGIC_CODELET_WHERE, LOGIC_CODELET_BOOL,
    LOGIC_CODELET_BINARY_I32
};

/* A whole record over host memory laid out as on the tile: `mem` is the
 * tile's bytes from address `base` (every address in rec lies in
 * [base, base + size)); the outputs are written into mem as the codelet
 * writes them (whole words for a bool output, its last word's bytes past
 * the end kept).  False if an address falls outside mem or the op is out
 * of range. */
bool logic_model_record(enum logic_codelet codelet, const uint32_t rec[LOGIC_V_WORDS], uint8_t *mem,
                        uint32_t base, size_t size);

#endif
