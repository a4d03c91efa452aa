/*
 * logic_model.c — bit-exact models of the logic codelets (logic.h): the
 * element operations as the tile's instructions compute them, and a whole
 * record walked in the codelets' order (rows, column steps, row jumps, a
 * bool output packed into words with the last word read, merged and
 * written back).
 */
#include "logic.h"

#include <string.h>

#include "isa/fparith.h"

uint8_t logic_model_compare_f32(enum logic_compare_op op, float a, float b)
{
    /* f32cmp*: operands read as the tile reads registers (denormals are
     * zeros), unordered when either is NaN (ISA2 §2.9.8). */
    enum fp_relation r = fp32_relation(fp32_flush(a), fp32_flush(b));
    switch (op) {
    case LOGIC_EQ: return r == FP_REL_EQ;
    case LOGIC_LT: return r == FP_REL_LT;
    case LOGIC_GT: return r == FP_REL_GT;
    case LOGIC_LE: return r == FP_REL_LT || r == FP_REL_EQ;
    case LOGIC_GE: return r == FP_REL_GT || r == FP_REL_EQ;
    default: return 0;
    }
}

uint8_t logic_model_compare_i32(enum logic_compare_op op, int32_t a, int32_t b)
{
    switch (op) {
    case LOGIC_EQ: return a == b;
    case LOGIC_LT: return a < b;
    case LOGIC_GT: return a > b;
    case LOGIC_LE: return a <= b;
    case LOGIC_GE: return a >= b;
    default: return 0;
    }
}

uint8_t logic_model_bool(enum logic_bool_op op, uint8_t a, uint8_t b)
{
    switch (op) {
    case LOGIC_AND: return a & b;
    case LOGIC_OR: return a | b;
    case LOGIC_XOR: return a ^ b;
    case LOGIC_NOT: return a ^ 1u;
    default: return 0;
    }
}

int32_t logic_model_int(enum logic_int_op op, int32_t a, int32_t b)
{
    uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
    switch (op) {
    case LOGIC_ADD: return (int32_t)(ua + ub);
    case LOGIC_SUB: return (int32_t)(ua - ub);
    case LOGIC_MUL: return (int32_t)(ua * ub);
    case LOGIC_MAX: return a > b ? a : b;
    case LOGIC_MIN: return a < b ? a : b;
    default: return 0;
    }
}

uint32_t logic_model_where(uint8_t cond, uint32_t x, uint32_t y) { return cond ? x : y; }

/* ---- whole records ---------------------------------------------------------------- */

typedef struct model_mem {
    uint8_t *mem;
    uint32_t base;
    size_t size;
    bool ok;
} model_mem;

static uint8_t *at(model_mem *m, uint32_t addr, uint32_t bytes)
{
    if (addr < m->base || (uint64_t)addr - m->base + bytes > m->size) {
        m->ok = false;
        return NULL;
    }
    return m->mem + (addr - m->base);
}

static uint32_t rd32(model_mem *m, uint32_t addr)
{
    uint32_t v = 0;
    const uint8_t *p = at(m, addr, 4);
    if (p)
        memcpy(&v, p, 4);
    return v;
}

static uint8_t rd8(model_mem *m, uint32_t addr)
{
    const uint8_t *p = at(m, addr, 1);
    return p ? *p : 0;
}

static void wr32(model_mem *m, uint32_t addr, uint32_t v)
{
    uint8_t *p = at(m, addr, 4);
    if (p)
        memcpy(p, &v, 4);
}

static float f32_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

bool logic_model_record(enum logic_codelet codelet, const uint32_t rec[LOGIC_V_WORDS], uint8_t *mem,
                        uint32_t base, size_t size)
{
    model_mem m = {mem, base, size, true};
    uint32_t n = rec[LOGIC_V_N], op = rec[LOGIC_V_OP];
    if (n == 0)
        return true;
    uint32_t limit = codelet == LOGIC_CODELET_COMPARE_F32 || codelet == LOGIC_CODELET_COMPARE_I32 ? LOGIC_COMPARE_OPS
                     : codelet == LOGIC_CODELET_BOOL                                                 ? LOGIC_BOOL_OPS
                     : codelet == LOGIC_CODELET_BINARY_I32                                           ? LOGIC_INT_OPS
                                                                                                     : UINT32_MAX;
    if (op >= limit)
        return false;
    uint32_t p[3] = {rec[LOGIC_V_IN0], rec[LOGIC_V_IN1], rec[LOGIC_V_IN2]};
    const uint32_t step[3] = {rec[LOGIC_V_IN0_COL_STEP], rec[LOGIC_V_IN1_COL_STEP], rec[LOGIC_V_IN2_COL_STEP]};
    const uint32_t jump[3] = {rec[LOGIC_V_IN0_ROW_JUMP], rec[LOGIC_V_IN1_ROW_JUMP], rec[LOGIC_V_IN2_ROW_JUMP]};
    const int inputs = codelet == LOGIC_CODELET_WHERE ? 3 : codelet == LOGIC_CODELET_BOOL && op == LOGIC_NOT ? 1 : 2;
    const bool bool_out = codelet != LOGIC_CODELET_WHERE && codelet != LOGIC_CODELET_BINARY_I32;
    uint32_t out = rec[LOGIC_V_OUT], cols = rec[LOGIC_V_COLS], col = rec[LOGIC_V_COL0];
    uint32_t word = 0;
    unsigned in_word = 0;
    for (uint32_t i = 0; i < n && m.ok; i++) {
        uint32_t v = 0;
        switch (codelet) {
        case LOGIC_CODELET_COMPARE_F32:
            v = logic_model_compare_f32(op, f32_of(rd32(&m, p[0])), f32_of(rd32(&m, p[1])));
            break;
        case LOGIC_CODELET_COMPARE_I32:
            v = logic_model_compare_i32(op, (int32_t)rd32(&m, p[0]), (int32_t)rd32(&m, p[1]));
            break;
        case LOGIC_CODELET_BOOL:
            v = logic_model_bool(op, rd8(&m, p[0]), op == LOGIC_NOT ? 0 : rd8(&m, p[1]));
            break;
        case LOGIC_CODELET_BINARY_I32:
            v = (uint32_t)logic_model_int(op, (int32_t)rd32(&m, p[0]), (int32_t)rd32(&m, p[1]));
            break;
        case LOGIC_CODELET_WHERE:
            v = logic_model_where(rd8(&m, p[0]), rd32(&m, p[1]), rd32(&m, p[2]));
            break;
        }
        if (bool_out) {
            word |= (v & 0xffu) << (8 * in_word);
            if (++in_word == 4) {
                wr32(&m, out, word);
                out += 4;
                word = 0;
                in_word = 0;
            }
        } else {
            wr32(&m, out, v);
            out += 4;
        }
        for (int k = 0; k < inputs; k++)
            p[k] += step[k];
        if (++col == cols) {
            col = 0;
            for (int k = 0; k < inputs; k++)
                p[k] += jump[k];
        }
    }
    if (bool_out && in_word && m.ok) {
        uint32_t keep = 0xffffffffu << (8 * in_word);
        wr32(&m, out, (rd32(&m, out) & keep) | word);
    }
    return m.ok;
}
