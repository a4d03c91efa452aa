/*
 * kernels.h — the compiler's view of the kernel library: the addresses of
 * the codelets in the library image, how to fill each codelet's vertex
 * record (the layouts are the codelets' own, workloads/codelets/<group>.h), and
 * the planner's cost figures (tile cycles per element, measured on the
 * codelets and recorded in their headers).
 *
 * Models PopLibs' view of its codelets (the vertex classes it adds to
 * compute sets, their fields, and the planners' cost figures).  Does not
 * model Poplar's vertex field layout or its vertex state compression: the
 * records are the codelets' own word layouts.
 */
#ifndef IPUSIM_FRONTENDS_KERNELS_H
#define IPUSIM_FRONTENDS_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workloads/codelets/codelet_library.h"

typedef struct kernel_symbols {
    uint32_t supervisor, ctl_table;
    uint32_t ctl_run, ctl_call, ctl_send, ctl_recv, ctl_recvs, ctl_sends, ctl_send_rows, ctl_recv_rows;
    uint32_t ctl_recvs16, ctl_sends16;          /* runs with endpoints two to a word */
    uint32_t ctl_recvs16_group;                 /* ... above a base word (a multicast group's) */
    uint32_t ctl_recv_list, ctl_send_list;      /* single transfers two words each ... */
    uint32_t ctl_recv_list_group, ctl_send_list_group;  /* ... above a base word */
    uint32_t ctl_sync_chip, ctl_sync_system, ctl_jump, ctl_sub, ctl_ret, ctl_end;
    uint32_t vtx_copy, vtx_unary_f32, vtx_binary_f32, vtx_cast_f32_to_f16, vtx_cast_f16_to_f32;
    uint32_t vtx_cast_f32_to_f16_sr;            /* rounded stochastically */
    uint32_t vtx_scaled_add_f32, vtx_scaled_add_f16, vtx_scaled_add_f16_sr;   /* x + scale y */
    uint32_t vtx_unary_f32_split, vtx_binary_f32_split, vtx_binary_f32_split_rows;   /* one record for six workers */
    uint32_t vtx_reduce_cols_f32_split;
    uint32_t vtx_reduce_partials_f16;           /* f16 partial sums added in f32 */
    uint32_t vtx_softmax_rows_f32, vtx_layernorm_rows_f32, vtx_reduce_rows_f32;
    uint32_t vtx_layernorm_part1_f32, vtx_layernorm_part2_f32, vtx_layernorm_part3_f32;   /* a row's columns on six workers */
    uint32_t vtx_softmax_part1_f32, vtx_softmax_part2_f32, vtx_softmax_part3_f32;
    uint32_t sv_matmul_f16, sv_matmul_f32;      /* 0 when the library lacks it */
    uint32_t sv_matmul_f16_wl;                  /* sv_matmul_f16 on the compiler's worker lists */
    uint32_t vtx_pack_b_f16, vtx_pack_b_f16_h16, vtx_maxpool_nhwc_f32, vtx_avgpool_nhwc_f32;
    uint32_t vtx_pack_b_f32, vtx_reduce_cols_f32, vtx_transpose_f32, vtx_gather_range, vtx_fill;
    uint32_t vtx_maxpool_grad_nhwc_f32, vtx_scatter_add_range_f32;
    uint32_t vtx_adam_updater_f32;              /* Adam's and LAMB's moments and direction */
} kernel_symbols;

/* Look the symbols up; false with err naming a missing one. */
bool kernel_symbols_find(const codelet_library *lib, kernel_symbols *k, char *err, size_t err_size);

/* Functions of vtx_unary_f32 and vtx_binary_f32. */
enum kernel_unary {
    KERNEL_UNARY_RELU, KERNEL_UNARY_NEG, KERNEL_UNARY_ABS, KERNEL_UNARY_EXP, KERNEL_UNARY_LOG,
    KERNEL_UNARY_SQRT, KERNEL_UNARY_RSQRT, KERNEL_UNARY_RECIPROCAL, KERNEL_UNARY_TANH,
    KERNEL_UNARY_SIGMOID, KERNEL_UNARY_ERF, KERNEL_UNARY_GELU_ERF, KERNEL_UNARY_GELU_TANH,
    KERNEL_UNARY_SCALE_SHIFT, KERNEL_UNARY_FLOOR, KERNEL_UNARY_CEIL,
};
enum kernel_binary {
    KERNEL_BINARY_ADD, KERNEL_BINARY_SUB, KERNEL_BINARY_MUL, KERNEL_BINARY_DIV, KERNEL_BINARY_MAX,
    KERNEL_BINARY_MIN,
};

enum kernel_reduce {
    KERNEL_REDUCE_SUM, KERNEL_REDUCE_MAX, KERNEL_REDUCE_SUMSQ, KERNEL_REDUCE_MEAN, KERNEL_REDUCE_MIN,
    KERNEL_REDUCE_PROD, KERNEL_REDUCE_ABS_SUM,
};

/* Record sizes in words and the record builders. */
extern const uint32_t KERNEL_COPY_WORDS, KERNEL_UNARY_WORDS, KERNEL_BINARY_WORDS, KERNEL_CAST_WORDS,
    KERNEL_SOFTMAX_WORDS, KERNEL_LAYERNORM_WORDS, KERNEL_MATMUL_WORDS, KERNEL_MATMUL_SCRATCH_BYTES, KERNEL_MATMUL_WL_WORDS,
    KERNEL_REDUCE_WORDS, KERNEL_REDUCE_MAX_COLS, KERNEL_ROW_MAX_COLS, KERNEL_PACK_WORDS, KERNEL_POOL_WORDS,
    KERNEL_POOL_MAX_KW, KERNEL_REDUCE_COLS_WORDS, KERNEL_REDUCE_COLS_MAX_ROWS, KERNEL_TRANSPOSE_WORDS,
    KERNEL_TRANSPOSE_MAX_COLS, KERNEL_MATMUL_F32_WORDS, KERNEL_MATMUL_F32_SCRATCH_BYTES, KERNEL_PACK_F32_WORDS,
    KERNEL_GATHER_RANGE_WORDS, KERNEL_GATHER_MAX_ROW_BYTES, KERNEL_FILL_WORDS, KERNEL_REDUCE_PARTIALS_WORDS,
    KERNEL_REDUCE_PARTIALS_MAX_ROWS, KERNEL_LAYERNORM_PART_WORDS, KERNEL_ROW_PART_STATS_BYTES,
    KERNEL_SOFTMAX_PART_WORDS;
extern const uint32_t KERNEL_MAXPOOL_GRAD_WORDS, KERNEL_SCATTER_ADD_WORDS, KERNEL_SCALED_ADD_WORDS;
extern const uint32_t KERNEL_ADAM_UPDATER_WORDS;

void kernel_copy_record(uint32_t *rec, uint32_t src, uint32_t dst, uint32_t bytes);
/* vtx_scaled_add_*: out = x + scale y over n elements. */
void kernel_scaled_add_record(uint32_t *rec, uint32_t x, uint32_t y, uint32_t out, uint32_t n, float scale);

/* vtx_adam_updater_f32 over n elements (workloads/codelets/optimizer.h):
 * the gradient, moments, weight (0: not read) and direction at g, m, v,
 * w and r; c1 and c2 the addresses of this step's bias corrections;
 * beta1, beta2, epsilon and the decay; flags ADAM_FLAG_*. */
typedef struct kernel_adam_constants {
    double beta1, beta2, epsilon, weight_decay;
    uint32_t flags;
} kernel_adam_constants;
void kernel_adam_updater_record(uint32_t *rec, uint32_t g, uint32_t m, uint32_t v, uint32_t w, uint32_t r,
                                uint32_t n, uint32_t c1, uint32_t c2, const kernel_adam_constants *k);
/* vtx_fill: bytes (a multiple of 4) of zeros from dst (8-byte aligned). */
void kernel_fill_record(uint32_t *rec, uint32_t dst, uint32_t bytes);
void kernel_unary_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t n, int function, float a, float b);
void kernel_binary_record(uint32_t *rec, uint32_t in0, uint32_t in1, uint32_t out, uint32_t rows, uint32_t cols,
                          uint32_t row_step_bytes, uint32_t in1_row_step_bytes, uint32_t in1_col_step_bytes,
                          int function);
/* The same with the codelet's own function number (enum elementwise_unary_fn /
 * elementwise_binary_op), as the op table (ops.def) names it. */
void kernel_unary_record_fn(uint32_t *rec, uint32_t in, uint32_t out, uint32_t n, uint32_t codelet_fn, float a,
                           float b);
void kernel_binary_record_op(uint32_t *rec, uint32_t in0, uint32_t in1, uint32_t out, uint32_t rows, uint32_t cols,
                             uint32_t row_step_bytes, uint32_t in1_row_step_bytes, uint32_t in1_col_step_bytes,
                             uint32_t codelet_op);
void kernel_cast_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t n);
void kernel_softmax_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t rows, uint32_t cols,
                           uint32_t row_step_bytes);
/* mean_out, rstd_out: 0, or where the rows' mean and 1/std go (f32 each). */
void kernel_layernorm_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t gamma, uint32_t beta,
                             uint32_t rows, uint32_t cols, uint32_t row_step_bytes, float eps, uint32_t mean_out,
                             uint32_t rstd_out);
/* vtx_layernorm_part{1,2,3}_f32: worker `slot`'s `pairs` pairs of columns
 * (in, out, gamma, beta at its first) of `rows` rows of `cols`, the six
 * workers' sums in stats (rows x KERNEL_ROW_PART_STATS_BYTES). */
void kernel_layernorm_part_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t gamma, uint32_t beta,
                                  uint32_t rows, uint32_t pairs, uint32_t row_step_bytes, float eps, uint32_t stats,
                                  uint32_t slot, uint32_t cols, uint32_t mean_out, uint32_t rstd_out);
/* vtx_softmax_part{1,2,3}_f32: worker `slot`'s `pairs` pairs of columns. */
void kernel_softmax_part_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t rows, uint32_t pairs,
                                uint32_t row_step_bytes, uint32_t stats, uint32_t slot);
void kernel_reduce_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t rows, uint32_t cols,
                          uint32_t row_step_bytes, int op, float scale);
/* vtx_reduce_cols_f32: out[c] = REDUCE over r of in[r][c], f32 or f16 out. */
/* vtx_reduce_partials_f16: out = the f32 sum of `rows` rows of `cols` f16
 * partials (cols a multiple of 8), row 0 at first, row r >= 1 at rest +
 * (r - 1) step_bytes; f32 out, or rounded to f16 when out_f16. */
void kernel_reduce_partials_record(uint32_t *rec, uint32_t first, uint32_t rest, uint32_t out, uint32_t rows,
                                   uint32_t cols, uint32_t step_bytes, bool out_f16);
void kernel_reduce_cols_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t rows, uint32_t cols,
                               uint32_t in_step_bytes, int op, float scale, bool out_f16);
/* vtx_transpose_f32: out[c][r] = in[r][c]. */
void kernel_transpose_record(uint32_t *rec, uint32_t in, uint32_t out, uint32_t rows, uint32_t cols,
                             uint32_t in_step_bytes, uint32_t out_step_bytes);
/* vtx_gather_range: out row i = table row idx[i] when this tile holds it
 * (rows [base, base + table_rows)), zeros otherwise. */
void kernel_gather_range_record(uint32_t *rec, uint32_t table, uint32_t idx, uint32_t out, uint32_t n,
                                uint32_t row_bytes, uint32_t out_step_bytes, uint32_t base, uint32_t table_rows,
                                uint32_t total_rows);
/* vtx_pack_b_f16: `groups` groups of 8 columns of a kp x n f32 block
 * (element (k, n) at src + k k_step + n n_step) into the AMP layout (f32
 * partials); vtx_pack_b_f16_h16 takes the same record, groups of 16
 * columns, the layout with f16 partials. */
void kernel_pack_record(uint32_t *rec, uint32_t src, uint32_t dst, uint32_t blocks, uint32_t groups,
                        uint32_t k_step, uint32_t n_step);
/* vtx_maxpool_nhwc_f32 / vtx_avgpool_nhwc_f32 (workloads/codelets/pool.h). */
typedef struct kernel_pool_shape {
    uint32_t h, w, c, kh, kw, sh, sw, pt, pl, oh, ow;
} kernel_pool_shape;
void kernel_pool_record(uint32_t *rec, uint32_t in, uint32_t out, const kernel_pool_shape *s, uint32_t oh0,
                        uint32_t oh1, uint32_t chans, bool count_include_pad);
/* vtx_maxpool_grad_nhwc_f32 (pool.h): s->oh unused; oh0..oh1 the output rows
 * visited, ih0..ih1 the dX rows owned (dx: pixel (ih0, 0)); dY steps in bytes. */
void kernel_maxpool_grad_record(uint32_t *rec, uint32_t in, uint32_t dy, uint32_t dx, const kernel_pool_shape *s,
                                uint32_t oh0, uint32_t oh1, uint32_t ih0, uint32_t ih1, uint32_t chans,
                                uint32_t dy_pixel_step, uint32_t dy_chan_step);
/* vtx_scatter_add_range_f32 (embedding.h): table rows [base, base +
 * table_rows) (zeroed first when zero) += dY row i where idx[i] is one. */
void kernel_scatter_add_record(uint32_t *rec, uint32_t table, uint32_t idx, uint32_t dy, uint32_t n,
                               uint32_t row_bytes, uint32_t dy_step_bytes, uint32_t base, uint32_t table_rows,
                               uint32_t total_rows, bool zero);
/* sv_matmul_f32: C[m x n] += A[m x k] B (packed), all f32. */
void kernel_matmul_f32_record(uint32_t *rec, uint32_t a, uint32_t b, uint32_t c, uint32_t m, uint32_t k, uint32_t n,
                              uint32_t a_row_step, uint32_t c_row_step, uint32_t scratch);
/* vtx_pack_b_f32: `groups` groups of 16 columns of a k x n f32 block
 * (rows row_step bytes apart) into the f32 AMP layout. */
void kernel_pack_f32_record(uint32_t *rec, uint32_t src, uint32_t dst, uint32_t blocks, uint32_t groups,
                            uint32_t row_step);
/* sv_matmul_f16: C[m x n] += A[m x k] B (packed), f32 or f16 partials. */
void kernel_matmul_record(uint32_t *rec, uint32_t a, uint32_t b, uint32_t c, uint32_t m, uint32_t k, uint32_t n,
                          uint32_t a_row_step, uint32_t c_row_step, bool f16_partials, uint32_t scratch);

/* sv_matmul_f16_wl: the same, the work split into the record (matmul.h:
 * matmul_f16_wl_record); false with *why for sizes or operands it cannot
 * take. */
bool kernel_matmul_wl_record(uint32_t *rec, uint32_t a, uint32_t b, uint32_t c, uint32_t m, uint32_t k, uint32_t n,
                             uint32_t a_row_step, uint32_t c_row_step, bool f16_partials, const char **why);

/* Planner figures: tile cycles per element with six workers busy. */
extern const double KERNEL_UNARY_CYCLES_PER_ELEMENT, KERNEL_BINARY_CYCLES_PER_ELEMENT,
    KERNEL_SOFTMAX_CYCLES_PER_ELEMENT, KERNEL_LAYERNORM_CYCLES_PER_ELEMENT;

#endif
