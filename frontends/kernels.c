/*
 * kernels.c — the compiler's side of the kernel library (kernels.h): the
 * record layouts are the codelets' own enums (workloads/codelets/<group>.h), so
 * a change there changes what the compiler writes.
 */
#include "kernels.h"

#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "workloads/codelets/elementwise.h"
#include "workloads/codelets/embedding.h"
#include "workloads/codelets/matmul.h"
#include "workloads/codelets/matmul_f32.h"
#include "workloads/codelets/optimizer.h"
#include "workloads/codelets/pack.h"
#include "workloads/codelets/pool.h"
#include "workloads/codelets/rowwise.h"

const uint32_t KERNEL_COPY_WORDS = COPY_V_WORDS;
const uint32_t KERNEL_UNARY_WORDS = UNARY_F32_V_WORDS;
const uint32_t KERNEL_BINARY_WORDS = BINARY_F32_V_WORDS;
const uint32_t KERNEL_CAST_WORDS = CAST_V_WORDS;
const uint32_t KERNEL_SCALED_ADD_WORDS = SCALED_ADD_V_WORDS;
const uint32_t KERNEL_ADAM_UPDATER_WORDS = ADAM_V_WORDS;
const uint32_t KERNEL_SOFTMAX_WORDS = SOFTMAX_ROWS_V_WORDS;
const uint32_t KERNEL_LAYERNORM_WORDS = LAYERNORM_ROWS_V_WORDS;
const uint32_t KERNEL_MATMUL_WORDS = MATMUL_F16_V_WORDS;
const uint32_t KERNEL_MATMUL_SCRATCH_BYTES = MATMUL_F16_SCRATCH_BYTES;
const uint32_t KERNEL_MATMUL_WL_WORDS = MATMUL_F16_WL_WORDS;
const uint32_t KERNEL_REDUCE_WORDS = REDUCE_ROWS_V_WORDS;
const uint32_t KERNEL_REDUCE_MAX_COLS = ROWWISE_MAX_COLS;
const uint32_t KERNEL_ROW_MAX_COLS = ROWWISE_MAX_COLS;
const uint32_t KERNEL_PACK_WORDS = PACK_V_WORDS;
const uint32_t KERNEL_POOL_WORDS = POOL_V_WORDS;
const uint32_t KERNEL_POOL_MAX_KW = POOL_MAX_KW;
const uint32_t KERNEL_REDUCE_COLS_WORDS = REDUCE_COLS_V_WORDS;
const uint32_t KERNEL_REDUCE_COLS_MAX_ROWS = REDUCE_COLS_MAX_ROWS;
const uint32_t KERNEL_REDUCE_PARTIALS_WORDS = RED_PARTIALS_V_WORDS;
const uint32_t KERNEL_LAYERNORM_PART_WORDS = LAYERNORM_PART_V_WORDS;
const uint32_t KERNEL_ROW_PART_STATS_BYTES = ROWWISE_PART_STATS_BYTES;
const uint32_t KERNEL_SOFTMAX_PART_WORDS = SOFTMAX_PART_V_WORDS;
const uint32_t KERNEL_REDUCE_PARTIALS_MAX_ROWS = REDUCE_PARTIALS_MAX_ROWS;
const uint32_t KERNEL_TRANSPOSE_WORDS = TRANSPOSE_V_WORDS;
const uint32_t KERNEL_TRANSPOSE_MAX_COLS = ROWWISE_MAX_TRANSPOSE_COLS;
const uint32_t KERNEL_MATMUL_F32_WORDS = MATMUL_F32_V_WORDS;
const uint32_t KERNEL_MATMUL_F32_SCRATCH_BYTES = MATMUL_F32_SCRATCH_BYTES;
const uint32_t KERNEL_PACK_F32_WORDS = PACK_F32_V_WORDS;
const uint32_t KERNEL_GATHER_RANGE_WORDS = GATHER_RANGE_V_WORDS;
const uint32_t KERNEL_GATHER_MAX_ROW_BYTES = EMBEDDING_MAX_ROW_BYTES;
const uint32_t KERNEL_FILL_WORDS = FILL_V_WORDS;
const uint32_t KERNEL_MAXPOOL_GRAD_WORDS = MPG_V_WORDS;
const uint32_t KERNEL_SCATTER_ADD_WORDS = SCATTER_ADD_V_WORDS;

/* Measured tile cycles per element with six workers at a large size (the
 * tables in the codelets' headers); the planner only compares them. */
const double KERNEL_UNARY_CYCLES_PER_ELEMENT = 1.0;
const double KERNEL_BINARY_CYCLES_PER_ELEMENT = 1.0;
const double KERNEL_SOFTMAX_CYCLES_PER_ELEMENT = 4.0;
const double KERNEL_LAYERNORM_CYCLES_PER_ELEMENT = 4.0;

static uint32_t bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

bool kernel_symbols_find(const codelet_library *lib, kernel_symbols *k, char *err, size_t err_size)
{
    static const struct { const char *name; size_t offset; bool required; } table[] = {
#define SYM(f, req) { #f, offsetof(kernel_symbols, f), req }
        SYM(ctl_table, true), SYM(ctl_run, true), SYM(ctl_call, true), SYM(ctl_send, true),
        SYM(ctl_recv, true), SYM(ctl_recvs, true), SYM(ctl_sends, true), SYM(ctl_send_rows, true),
        SYM(ctl_recv_rows, true), SYM(ctl_recvs16, true), SYM(ctl_sends16, true), SYM(ctl_recvs16_group, true), SYM(ctl_recv_list, true), SYM(ctl_send_list, true), SYM(ctl_recv_list_group, true), SYM(ctl_send_list_group, true), SYM(ctl_sync_chip, true), SYM(ctl_sync_system, true), SYM(ctl_jump, true), SYM(ctl_sub, true), SYM(ctl_ret, true),
        SYM(ctl_end, true),
        SYM(vtx_copy, true), SYM(vtx_unary_f32, true), SYM(vtx_binary_f32, true), SYM(vtx_unary_f32_split, true), SYM(vtx_binary_f32_split, true),
        SYM(vtx_binary_f32_split_rows, true), SYM(vtx_reduce_cols_f32_split, true),
        SYM(vtx_reduce_partials_f16, true), SYM(vtx_layernorm_part1_f32, true), SYM(vtx_layernorm_part2_f32, true),
        SYM(vtx_layernorm_part3_f32, true), SYM(vtx_softmax_part1_f32, true), SYM(vtx_softmax_part2_f32, true),
        SYM(vtx_softmax_part3_f32, true),
        SYM(vtx_cast_f32_to_f16, true), SYM(vtx_cast_f32_to_f16_sr, true), SYM(vtx_cast_f16_to_f32, true),
        SYM(vtx_scaled_add_f32, true), SYM(vtx_scaled_add_f16, true), SYM(vtx_scaled_add_f16_sr, true),
        SYM(vtx_softmax_rows_f32, true),
        SYM(vtx_layernorm_rows_f32, true), SYM(vtx_reduce_rows_f32, true), SYM(sv_matmul_f16, true), SYM(sv_matmul_f16_wl, true), SYM(sv_matmul_f32, true),
        SYM(vtx_pack_b_f16, true), SYM(vtx_pack_b_f16_h16, true), SYM(vtx_maxpool_nhwc_f32, true), SYM(vtx_avgpool_nhwc_f32, true),
        SYM(vtx_pack_b_f32, true), SYM(vtx_reduce_cols_f32, true), SYM(vtx_transpose_f32, true),
        SYM(vtx_gather_range, true), SYM(vtx_fill, true),
        SYM(vtx_maxpool_grad_nhwc_f32, true), SYM(vtx_scatter_add_range_f32, true),
        SYM(vtx_adam_updater_f32, true),
#undef SYM
    };
    memset(k, 0, sizeof *k);
    if (!codelet_library_symbol(lib, "__supervisor", &k->supervisor)) {
        snprintf(err, err_size, "the kernel library has no __supervisor");
        return false;
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        uint32_t *slot = (uint32_t *)((char *)k + table[i].offset);
        if (!codelet_library_symbol(lib, table[i].name, slot) && table[i].required) {
            snprintf(err, err_size, "the kernel library has no %s", table[i].name);
            return false;
        }
    }
    return true;
}

void kernel_copy_record(uint32_t *rec, uint32_t src, uint32_t dst, uint32_t bytes)
{
    rec[COPY_V_SRC] = src;
    rec[COPY_V_DST] = dst;
    rec[COPY_V_BYTES] = bytes;
}

void kernel_fill_record(uint32_t *rec, uint32_t dst, uint32_t bytes)
{
    rec[FILL_V_DST] = dst;
    rec[FILL_V_BYTES] = bytes;
}

static uint32_t unary_fn(int function)
{
    switch (function) {
    case KERNEL_UNARY_RELU: return ELEMENTWISE_RELU;
    case KERNEL_UNARY_NEG: return ELEMENTWISE_NEG;
    case KERNEL_UNARY_ABS: return ELEMENTWISE_ABS;
    case KERNEL_UNARY_EXP: return ELEMENTWISE_EXP;
    case KERNEL_UNARY_LOG: return ELEMENTWISE_LOG;
    case KERNEL_UNARY_SQRT: return ELEMENTWISE_SQRT;
    case KERNEL_UNARY_RSQRT: return ELEMENTWISE_RSQRT;
    case KERNEL_UNARY_RECIPROCAL: return ELEMENTWISE_RECIPROCAL;
    case KERNEL_UNARY_TANH: return ELEMENTWISE_TANH;
    case KERNEL_UNARY_SIGMOID: return ELEMENTWISE_SIGMOID;
    case KERNEL_UNARY_ERF: return ELEMENTWISE_ERF;
    case KERNEL_UNARY_GELU_ERF: return ELEMENTWISE_GELU_ERF;
    case KERNEL_UNARY_GELU_TANH: return ELEMENTWISE_GELU_TANH;
    case KERNEL_UNARY_FLOOR: return ELEMENTWISE_FLOOR;
    case KERNEL_UNARY_CEIL: return ELEMENTWISE_CEIL;
    default: return ELEMENTWISE_SCALE_SHIFT;
    }
}

void kernel_unary_record_fn(uint32_t *rec, uint32_t in, uint32_t out, uint32_t n, uint32_t codelet_fn, float a,
                           float b)
{
    rec[UNARY_F32_V_IN] = in;
    rec[UNARY_F32_V_OUT] = out;
    rec[UNARY_F32_V_N] = n;
    rec[UNARY_F32_V_FN] = codelet_fn;
    rec[UNARY_F32_V_A] = bits(a);
    rec[UNARY_F32_V_B] = bits(b);
}

void kernel_unary_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t n, int function, float a, float b)
{
    kernel_unary_record_fn(rec, in, out, n, unary_fn(function), a, b);
}

void kernel_binary_record_op(uint32_t *rec, uint32_t in0, uint32_t in1, uint32_t out, uint32_t rows, uint32_t cols,
                             uint32_t row_step_bytes, uint32_t in1_row_step_bytes, uint32_t in1_col_step_bytes,
                             uint32_t codelet_op)
{
    rec[BINARY_F32_V_IN0] = in0;
    rec[BINARY_F32_V_IN1] = in1;
    rec[BINARY_F32_V_OUT] = out;
    rec[BINARY_F32_V_ROWS] = rows;
    rec[BINARY_F32_V_COLS] = cols;
    rec[BINARY_F32_V_ROW_STEP] = row_step_bytes;
    rec[BINARY_F32_V_IN1_ROW_STEP] = in1_row_step_bytes;
    rec[BINARY_F32_V_IN1_COL_STEP] = in1_col_step_bytes;
    rec[BINARY_F32_V_OP] = codelet_op;
}

void kernel_binary_record(uint32_t *rec, uint32_t in0, uint32_t in1, uint32_t out, uint32_t rows, uint32_t cols,
                          uint32_t row_step_bytes, uint32_t in1_row_step_bytes, uint32_t in1_col_step_bytes,
                          int function)
{
    static const uint32_t ops[] = {
        [KERNEL_BINARY_ADD] = ELEMENTWISE_ADD, [KERNEL_BINARY_SUB] = ELEMENTWISE_SUB,
        [KERNEL_BINARY_MUL] = ELEMENTWISE_MUL, [KERNEL_BINARY_DIV] = ELEMENTWISE_DIV,
        [KERNEL_BINARY_MAX] = ELEMENTWISE_MAX, [KERNEL_BINARY_MIN] = ELEMENTWISE_MIN,
    };
    kernel_binary_record_op(rec, in0, in1, out, rows, cols, row_step_bytes, in1_row_step_bytes, in1_col_step_bytes,
                            ops[function]);
}

void kernel_cast_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t n)
{
    rec[CAST_V_IN] = in;
    rec[CAST_V_OUT] = out;
    rec[CAST_V_N] = n;
}

void kernel_scaled_add_record(uint32_t *rec, uint32_t x, uint32_t y, uint32_t out, uint32_t n, float scale)
{
    rec[SCALED_ADD_V_X] = x;
    rec[SCALED_ADD_V_Y] = y;
    rec[SCALED_ADD_V_OUT] = out;
    rec[SCALED_ADD_V_N] = n;
    memcpy(&rec[SCALED_ADD_V_SCALE], &scale, 4);
}

void kernel_adam_updater_record(uint32_t *rec, uint32_t g, uint32_t m, uint32_t v, uint32_t w, uint32_t r,
                                uint32_t n, uint32_t c1, uint32_t c2, const kernel_adam_constants *k)
{
    rec[ADAM_V_G] = g;
    rec[ADAM_V_M] = m;
    rec[ADAM_V_V] = v;
    rec[ADAM_V_W] = w;
    rec[ADAM_V_R] = r;
    rec[ADAM_V_N] = n;
    rec[ADAM_V_C1] = c1;
    rec[ADAM_V_C2] = c2;
    rec[ADAM_V_BETA1] = bits((float)k->beta1);
    rec[ADAM_V_ONE_MINUS_BETA1] = bits((float)(1 - k->beta1));
    rec[ADAM_V_BETA2] = bits((float)k->beta2);
    rec[ADAM_V_ONE_MINUS_BETA2] = bits((float)(1 - k->beta2));
    rec[ADAM_V_EPSILON] = bits((float)k->epsilon);
    rec[ADAM_V_WEIGHT_DECAY] = bits((float)k->weight_decay);
    rec[ADAM_V_FLAGS] = k->flags;
}

void kernel_softmax_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t rows, uint32_t cols,
                           uint32_t row_step_bytes)
{
    rec[SOFTMAX_ROWS_V_IN] = in;
    rec[SOFTMAX_ROWS_V_OUT] = out;
    rec[SOFTMAX_ROWS_V_ROWS] = rows;
    rec[SOFTMAX_ROWS_V_COLS] = cols;
    rec[SOFTMAX_ROWS_V_STEP] = row_step_bytes;
}

void kernel_layernorm_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t gamma, uint32_t beta,
                             uint32_t rows, uint32_t cols, uint32_t row_step_bytes, float eps, uint32_t mean_out,
                             uint32_t rstd_out)
{
    rec[LAYERNORM_ROWS_V_IN] = in;
    rec[LAYERNORM_ROWS_V_OUT] = out;
    rec[LAYERNORM_ROWS_V_GAMMA] = gamma;
    rec[LAYERNORM_ROWS_V_BETA] = beta;
    rec[LAYERNORM_ROWS_V_ROWS] = rows;
    rec[LAYERNORM_ROWS_V_COLS] = cols;
    rec[LAYERNORM_ROWS_V_STEP] = row_step_bytes;
    rec[LAYERNORM_ROWS_V_EPS] = bits(eps);
    rec[LAYERNORM_ROWS_V_MEAN_OUT] = mean_out;
    rec[LAYERNORM_ROWS_V_INV_STD_OUT] = rstd_out;
}

void kernel_matmul_record(uint32_t *rec, uint32_t a, uint32_t b, uint32_t c, uint32_t m, uint32_t k, uint32_t n,
                          uint32_t a_row_step, uint32_t c_row_step, bool f16_partials, uint32_t scratch)
{
    rec[MATMUL_F16_V_A] = a;
    rec[MATMUL_F16_V_B] = b;
    rec[MATMUL_F16_V_C] = c;
    rec[MATMUL_F16_V_M] = m;
    rec[MATMUL_F16_V_K] = k;
    rec[MATMUL_F16_V_N] = n;
    rec[MATMUL_F16_V_A_ROW_STEP] = a_row_step;
    rec[MATMUL_F16_V_C_ROW_STEP] = c_row_step;
    rec[MATMUL_F16_V_PARTIALS] = f16_partials ? MATMUL_PARTIALS_F16 : MATMUL_PARTIALS_F32;
    rec[MATMUL_F16_V_SCRATCH] = scratch;
}

bool kernel_matmul_wl_record(uint32_t *rec, uint32_t a, uint32_t b, uint32_t c, uint32_t m, uint32_t k, uint32_t n,
                             uint32_t a_row_step, uint32_t c_row_step, bool f16_partials, const char **why)
{
    matmul_f16_args args = {
        .a = a, .b = b, .c = c, .m = m, .k = k, .n = n, .a_row_step = a_row_step, .c_row_step = c_row_step,
        .partials = f16_partials ? MATMUL_PARTIALS_F16 : MATMUL_PARTIALS_F32,
    };
    return matmul_f16_wl_record(&args, rec, why);
}

static const uint32_t reduce_ops[] = {
    [KERNEL_REDUCE_SUM] = REDUCE_OP_SUM, [KERNEL_REDUCE_MAX] = REDUCE_OP_MAX,
    [KERNEL_REDUCE_SUMSQ] = REDUCE_OP_SUMSQ, [KERNEL_REDUCE_MEAN] = REDUCE_OP_MEAN,
    [KERNEL_REDUCE_MIN] = REDUCE_OP_MIN, [KERNEL_REDUCE_PROD] = REDUCE_OP_PROD,
    [KERNEL_REDUCE_ABS_SUM] = REDUCE_OP_ABS_SUM,
};

void kernel_reduce_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t rows, uint32_t cols,
                          uint32_t row_step_bytes, int op, float scale)
{
    rec[REDUCE_ROWS_V_IN] = in;
    rec[REDUCE_ROWS_V_OUT] = out;
    rec[REDUCE_ROWS_V_ROWS] = rows;
    rec[REDUCE_ROWS_V_COLS] = cols;
    rec[REDUCE_ROWS_V_IN_STEP] = row_step_bytes;
    rec[REDUCE_ROWS_V_OP] = reduce_ops[op];
    rec[REDUCE_ROWS_V_SCALE] = bits(scale);
}

void kernel_reduce_cols_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t rows, uint32_t cols,
                               uint32_t in_step_bytes, int op, float scale, bool out_f16)
{
    rec[REDUCE_COLS_V_IN] = in;
    rec[REDUCE_COLS_V_OUT] = out;
    rec[REDUCE_COLS_V_ROWS] = rows;
    rec[REDUCE_COLS_V_COLS] = cols;
    rec[REDUCE_COLS_V_IN_STEP] = in_step_bytes;
    rec[REDUCE_COLS_V_OP] = reduce_ops[op];
    rec[REDUCE_COLS_V_SCALE] = bits(scale);
    rec[REDUCE_COLS_V_OUT_F16] = out_f16;
}

void kernel_layernorm_part_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t gamma, uint32_t beta,
                                  uint32_t rows, uint32_t pairs, uint32_t row_step_bytes, float eps, uint32_t stats,
                                  uint32_t slot, uint32_t cols, uint32_t mean_out, uint32_t rstd_out)
{
    rec[LAYERNORM_PART_V_IN] = in;
    rec[LAYERNORM_PART_V_OUT] = out;
    rec[LAYERNORM_PART_V_GAMMA] = gamma;
    rec[LAYERNORM_PART_V_BETA] = beta;
    rec[LAYERNORM_PART_V_ROWS] = rows;
    rec[LAYERNORM_PART_V_PAIRS] = pairs;
    rec[LAYERNORM_PART_V_STEP] = row_step_bytes;
    rec[LAYERNORM_PART_V_EPS] = bits(eps);
    rec[LAYERNORM_PART_V_STATS] = stats;
    rec[LAYERNORM_PART_V_SLOT] = slot;
    rec[LAYERNORM_PART_V_COLS] = cols;
    rec[LAYERNORM_PART_V_MEAN_OUT] = mean_out;
    rec[LAYERNORM_PART_V_INV_STD_OUT] = rstd_out;
}

void kernel_softmax_part_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t rows, uint32_t pairs,
                                uint32_t row_step_bytes, uint32_t stats, uint32_t slot)
{
    rec[SOFTMAX_PART_V_IN] = in;
    rec[SOFTMAX_PART_V_OUT] = out;
    rec[SOFTMAX_PART_V_ROWS] = rows;
    rec[SOFTMAX_PART_V_PAIRS] = pairs;
    rec[SOFTMAX_PART_V_STEP] = row_step_bytes;
    rec[SOFTMAX_PART_V_STATS] = stats;
    rec[SOFTMAX_PART_V_SLOT] = slot;
}

void kernel_reduce_partials_record(uint32_t *rec, uint32_t first, uint32_t rest, uint32_t out, uint32_t rows,
                                   uint32_t cols, uint32_t step_bytes, bool out_f16)
{
    rec[RED_PARTIALS_V_FIRST] = first;
    rec[RED_PARTIALS_V_REST] = rest;
    rec[RED_PARTIALS_V_OUT] = out;
    rec[RED_PARTIALS_V_ROWS] = rows;
    rec[RED_PARTIALS_V_COLS] = cols;
    rec[RED_PARTIALS_V_STEP] = step_bytes;
    rec[RED_PARTIALS_V_OUT_F16] = out_f16;
}

void kernel_transpose_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t rows, uint32_t cols,
                             uint32_t in_step_bytes, uint32_t out_step_bytes)
{
    rec[TRANSPOSE_V_IN] = in;
    rec[TRANSPOSE_V_OUT] = out;
    rec[TRANSPOSE_V_ROWS] = rows;
    rec[TRANSPOSE_V_COLS] = cols;
    rec[TRANSPOSE_V_IN_STEP] = in_step_bytes;
    rec[TRANSPOSE_V_OUT_STEP] = out_step_bytes;
}

void kernel_gather_range_record(uint32_t *rec, uint32_t table, uint32_t idx, uint32_t out, uint32_t n,
                                uint32_t row_bytes, uint32_t out_step_bytes, uint32_t base, uint32_t table_rows,
                                uint32_t total_rows)
{
    rec[GATHER_RANGE_V_TABLE] = table;
    rec[GATHER_RANGE_V_IDX] = idx;
    rec[GATHER_RANGE_V_OUT] = out;
    rec[GATHER_RANGE_V_N] = n;
    rec[GATHER_RANGE_V_ROW_BYTES] = row_bytes;
    rec[GATHER_RANGE_V_OUT_STEP] = out_step_bytes;
    rec[GATHER_RANGE_V_BASE] = base;
    rec[GATHER_RANGE_V_TABLE_ROWS] = table_rows;
    rec[GATHER_RANGE_V_TOTAL_ROWS] = total_rows;
}

void kernel_matmul_f32_record(uint32_t *rec, uint32_t a, uint32_t b, uint32_t c, uint32_t m, uint32_t k, uint32_t n,
                              uint32_t a_row_step, uint32_t c_row_step, uint32_t scratch)
{
    rec[MATMUL_F32_V_A] = a;
    rec[MATMUL_F32_V_B] = b;
    rec[MATMUL_F32_V_C] = c;
    rec[MATMUL_F32_V_M] = m;
    rec[MATMUL_F32_V_K] = k;
    rec[MATMUL_F32_V_N] = n;
    rec[MATMUL_F32_V_A_ROW_STEP] = a_row_step;
    rec[MATMUL_F32_V_C_ROW_STEP] = c_row_step;
    rec[MATMUL_F32_V_SCRATCH] = scratch;
}

void kernel_pack_f32_record(uint32_t *rec, uint32_t src, uint32_t dst, uint32_t blocks, uint32_t groups,
                            uint32_t row_step)
{
    rec[PACK_F32_V_SRC] = src;
    rec[PACK_F32_V_DST] = dst;
    rec[PACK_F32_V_BLOCKS] = blocks;
    rec[PACK_F32_V_GROUPS] = groups;
    rec[PACK_F32_V_ROW_STEP] = row_step;
}

void kernel_pack_record(uint32_t *rec, uint32_t src, uint32_t dst, uint32_t blocks, uint32_t groups,
                        uint32_t k_step, uint32_t n_step)
{
    rec[PACK_V_SRC] = src;
    rec[PACK_V_DST] = dst;
    rec[PACK_V_BLOCKS] = blocks;
    rec[PACK_V_GROUPS] = groups;
    rec[PACK_V_K_STEP] = k_step;
    rec[PACK_V_N_STEP] = n_step;
}

void kernel_pool_record(uint32_t *rec, uint32_t in, uint32_t out, const kernel_pool_shape *s, uint32_t oh0,
                        uint32_t oh1, uint32_t chans, bool count_include_pad)
{
    rec[POOL_V_IN] = in;
    rec[POOL_V_OUT] = out;
    rec[POOL_V_H] = s->h;
    rec[POOL_V_W] = s->w;
    rec[POOL_V_C] = s->c;
    rec[POOL_V_KH] = s->kh;
    rec[POOL_V_KW] = s->kw;
    rec[POOL_V_SH] = s->sh;
    rec[POOL_V_SW] = s->sw;
    rec[POOL_V_PT] = s->pt;
    rec[POOL_V_PL] = s->pl;
    rec[POOL_V_OH] = s->oh;
    rec[POOL_V_OW] = s->ow;
    rec[POOL_V_OH0] = oh0;
    rec[POOL_V_OH1] = oh1;
    rec[POOL_V_COUNT_INCLUDE_PAD] = count_include_pad;
    rec[POOL_V_CHANS] = chans;
}

void kernel_maxpool_grad_record(uint32_t *rec, uint32_t in, uint32_t dy, uint32_t dx, const kernel_pool_shape *s,
                                uint32_t oh0, uint32_t oh1, uint32_t ih0, uint32_t ih1, uint32_t chans,
                                uint32_t dy_pixel_step, uint32_t dy_chan_step)
{
    memset(rec, 0, MPG_V_WORDS * sizeof *rec);
    rec[MPG_V_IN] = in;
    rec[MPG_V_DY] = dy;
    rec[MPG_V_DX] = dx;
    rec[MPG_V_H] = s->h;
    rec[MPG_V_W] = s->w;
    rec[MPG_V_C] = s->c;
    rec[MPG_V_KH] = s->kh;
    rec[MPG_V_KW] = s->kw;
    rec[MPG_V_SH] = s->sh;
    rec[MPG_V_SW] = s->sw;
    rec[MPG_V_PT] = s->pt;
    rec[MPG_V_PL] = s->pl;
    rec[MPG_V_OW] = s->ow;
    rec[MPG_V_OH0] = oh0;
    rec[MPG_V_OH1] = oh1;
    rec[MPG_V_IH0] = ih0;
    rec[MPG_V_IH1] = ih1;
    rec[MPG_V_CHANS] = chans;
    rec[MPG_V_DY_PIXEL_STEP] = dy_pixel_step;
    rec[MPG_V_DY_CHAN_STEP] = dy_chan_step;
}

void kernel_scatter_add_record(uint32_t *rec, uint32_t table, uint32_t idx, uint32_t dy, uint32_t n,
                               uint32_t row_bytes, uint32_t dy_step_bytes, uint32_t base, uint32_t table_rows,
                               uint32_t total_rows, bool zero)
{
    rec[SCATTER_ADD_V_TABLE] = table;
    rec[SCATTER_ADD_V_IDX] = idx;
    rec[SCATTER_ADD_V_DY] = dy;
    rec[SCATTER_ADD_V_N] = n;
    rec[SCATTER_ADD_V_ROW_BYTES] = row_bytes;
    rec[SCATTER_ADD_V_DY_STEP] = dy_step_bytes;
    rec[SCATTER_ADD_V_BASE] = base;
    rec[SCATTER_ADD_V_TABLE_ROWS] = table_rows;
    rec[SCATTER_ADD_V_TOTAL_ROWS] = total_rows;
    rec[SCATTER_ADD_V_ZERO] = zero;
}
