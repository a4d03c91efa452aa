/*
 * rowwise_model.c — bit-exact models of the row-wise codelets
 * (workloads/codelets/rowwise.S); see rowwise.h for the order of
 * operations they share with the codelets.
 *
 * Each helper below is one aux-pipeline instruction as isa/exec_aux.c
 * executes it with $FP_CTL = 0: operands read from registers are flushed
 * (fp32_from_bits), the special cases of fparith.h, the result rounded
 * once to f32 and flushed on its way into a register.  Values pass through
 * memory unchanged (loads and stores copy bits).
 */
#include "rowwise.h"

#include <math.h>
#include <string.h>

#include "isa/fp16.h"
#include "isa/fparith.h"

static float reg(float f) { return fp32_flush(f); }

/* f32add / f32v2add lane; f32sub is an add of the negated operand. */
static float op_add(float a, float b)
{
    unsigned exc = 0;
    float r;
    a = reg(a), b = reg(b);
    if (fp32_add_special(a, b, &exc, &r))
        return r;
    return reg((float)((double)a + (double)b));
}

static float op_sub(float a, float b) { return op_add(a, -reg(b)); }

static float op_mul(float a, float b)
{
    unsigned exc = 0;
    float r;
    a = reg(a), b = reg(b);
    if (fp32_mul_special(a, b, &exc, &r))
        return r;
    return reg((float)((double)a * (double)b));
}

static float op_div(float a, float b)
{
    unsigned exc = 0;
    float r;
    a = reg(a), b = reg(b);
    if (fp32_div_special(a, b, &exc, &r))
        return r;
    return reg((float)((double)a / (double)b));
}

static float op_max(float a, float b) { return reg(fp32_max(reg(a), reg(b))); }
static float op_min(float a, float b) { return reg(fp32_min(reg(a), reg(b))); }

/* f32abs: the sign bit cleared, nothing flushed. */
static float op_abs(float a)
{
    uint32_t b;
    memcpy(&b, &a, 4);
    b &= 0x7fffffffu;
    memcpy(&a, &b, 4);
    return a;
}

static float op_exp(float a)
{
    unsigned exc = 0;
    float r;
    a = reg(a);
    if (fp32_exp_special(a, &exc, &r))
        return r;
    return reg((float)exp((double)a));
}

static float op_recip(float a)                  /* f32oox */
{
    unsigned exc = 0;
    float r;
    a = reg(a);
    if (fp32_recip_special(a, &exc, &r))
        return r;
    return reg((float)(1.0 / (double)a));
}

static float op_rsqrt(float a)                  /* f32oorx */
{
    unsigned exc = 0;
    float r;
    a = reg(a);
    if (fp32_rsqrt_special(a, &exc, &r))
        return r;
    return reg((float)(1.0 / sqrt((double)a)));
}

/* f32v2acc lane: $AACC = v + $AACC (TFPU_Add, no flags). */
static float acc_add(float acc, float v) { return fp32_add(reg(v), acc); }

/* f32v2mac lane: $AACC = fl(x * x) + $AACC. */
static float acc_square(float acc, float x)
{
    unsigned exc = 0;
    float r;
    x = reg(x);
    if (fp32_mac_special(x, x, acc, &exc, &r))
        return r;
    return fp32_add(fp32_mul(x, x), acc);
}

/* f32v2gina: an accumulator read out into a register. */
static float acc_read(float acc) { return isnan(acc) ? fp32_qnan() : reg(acc); }

enum lane_kind { LANE_SUM, LANE_SQUARE, LANE_ABS };

/* The lanes' result of an accumulation over one row: acc_add, acc_square
 * or acc_add of |x|, the odd last column into lane 0 last. */
static float lanes_sum(const float *x, size_t cols, enum lane_kind kind)
{
    float lane[2] = {0.0f, 0.0f};
    for (size_t c = 0; c < cols; c++)
        lane[c % 2] = kind == LANE_SQUARE ? acc_square(lane[c % 2], x[c])
                      : acc_add(lane[c % 2], kind == LANE_ABS ? op_abs(x[c]) : x[c]);
    return op_add(acc_read(lane[0]), acc_read(lane[1]));
}

/* The max (or min) of one row: lanes started at x[0], combined, then the
 * odd last column. */
static float row_extreme(const float *x, size_t cols, float (*op)(float, float))
{
    float lane[2] = {reg(x[0]), reg(x[0])};
    size_t pairs = cols / 2;
    for (size_t k = 0; k < pairs; k++) {
        lane[0] = op(lane[0], x[2 * k]);
        lane[1] = op(lane[1], x[2 * k + 1]);
    }
    float m = op(lane[0], lane[1]);
    if (cols % 2)
        m = op(m, x[cols - 1]);
    return m;
}

static float row_max(const float *x, size_t cols) { return row_extreme(x, cols, op_max); }

/* The product: lanes from 1.0, the odd last column into lane 0 last. */
static float row_prod(const float *x, size_t cols)
{
    float lane[2] = {1.0f, 1.0f};
    for (size_t c = 0; c < cols; c++)
        lane[c % 2] = op_mul(lane[c % 2], x[c]);
    return op_mul(lane[0], lane[1]);
}

void rowwise_model_reduce(const float *in, float *out, size_t rows, size_t cols, size_t step,
                          enum reduce_op op, float scale)
{
    for (size_t r = 0; r < rows; r++) {
        const float *x = in + r * step;
        switch (op) {
        case REDUCE_OP_MAX:
            out[r] = row_max(x, cols);
            break;
        case REDUCE_OP_MIN:
            out[r] = row_extreme(x, cols, op_min);
            break;
        case REDUCE_OP_PROD:
            out[r] = row_prod(x, cols);
            break;
        case REDUCE_OP_SUMSQ:
            out[r] = lanes_sum(x, cols, LANE_SQUARE);
            break;
        case REDUCE_OP_ABS_SUM:
            out[r] = lanes_sum(x, cols, LANE_ABS);
            break;
        case REDUCE_OP_MEAN:
            out[r] = op_mul(lanes_sum(x, cols, LANE_SUM), scale);
            break;
        case REDUCE_OP_SUM:
        default:
            out[r] = lanes_sum(x, cols, LANE_SUM);
            break;
        }
    }
}

/* vtx_reduce_cols_f32's t(x) and op (rowwise.h). */
static float col_t(enum reduce_op op, float x)
{
    return op == REDUCE_OP_SUMSQ ? op_mul(x, x) : op == REDUCE_OP_ABS_SUM ? op_abs(x) : x;
}

static float col_op(enum reduce_op op, float acc, float v)
{
    switch (op) {
    case REDUCE_OP_MAX: return op_max(acc, v);
    case REDUCE_OP_MIN: return op_min(acc, v);
    case REDUCE_OP_PROD: return op_mul(acc, v);
    default: return op_add(acc, v);
    }
}

/* f32tof16 with $FP_CTL = 0: the operand flushed, infinities and NaNs to
 * the tile's f16 quiet NaN, overflow saturating. */
static uint16_t to_f16(float x)
{
    x = reg(x);
    return fp16_from_f32_tile(isnan(x) || isinf(x) ? fp32_qnan() : x, FP16_SAT_MAX);
}

void rowwise_model_reduce_cols(const float *in, float *out, uint16_t *out_f16, bool f16, size_t rows,
                               size_t cols, size_t step, enum reduce_op op, float scale)
{
    if (!rows)
        return;
    for (size_t c = 0; c < cols; c++) {
        float acc = col_t(op, in[c]);
        for (size_t r = 1; r < rows; r++)
            acc = col_op(op, acc, col_t(op, in[r * step + c]));
        if (op == REDUCE_OP_MEAN)
            acc = op_mul(acc, scale);
        if (f16)
            out_f16[c] = to_f16(acc);
        else
            out[c] = acc;
    }
    if (f16 && cols % 2)
        out_f16[cols] = out_f16[cols - 1];
}

void rowwise_model_reduce_partials(const uint16_t *first, const uint16_t *rest, size_t rows, size_t cols,
                                   size_t step, float *out, uint16_t *out_f16)
{
    if (!rows)
        return;
    for (size_t c = 0; c < cols; c++) {
        float acc = 0.0f;
        for (size_t r = 0; r < rows; r++) {
            uint16_t h = r ? rest[(r - 1) * step + c] : first[c];
            acc = acc_add(acc, fp16_is_inf(h) ? fp32_qnan() : fp16_to_f32(h));
        }
        acc = acc_read(acc);
        if (out)
            out[c] = acc;
        if (out_f16)
            out_f16[c] = to_f16(acc);
    }
}

void rowwise_model_softmax(const float *in, float *out, size_t rows, size_t cols, size_t step)
{
    for (size_t r = 0; r < rows; r++) {
        const float *x = in + r * step;
        float *y = out + r * step;
        float m = row_max(x, cols);
        float lane[2] = {0.0f, 0.0f};
        for (size_t c = 0; c < cols; c++) {
            float e = op_exp(op_sub(x[c], m));
            y[c] = e;
            lane[c % 2] = acc_add(lane[c % 2], e);
        }
        float inv = op_recip(op_add(acc_read(lane[0]), acc_read(lane[1])));
        for (size_t c = 0; c < cols; c++)
            y[c] = op_mul(y[c], inv);
    }
}

void rowwise_model_layernorm(const float *in, float *out, const float *gamma, const float *beta,
                             size_t rows, size_t cols, size_t step, float eps)
{
    rowwise_model_layernorm_stats(in, out, gamma, beta, rows, cols, step, eps, NULL, NULL);
}

/* The lanes' sum of fl(fl(x - mean)^2) over columns [c0, c1) (c0 even:
 * lane c % 2), combined: a layer norm's variance pass (f32v2sub, f32v2mac). */
static float lanes_deviation(const float *x, size_t c0, size_t c1, float mean)
{
    float lane[2] = {0.0f, 0.0f};
    for (size_t c = c0; c < c1; c++)
        lane[c % 2] = acc_square(lane[c % 2], op_sub(x[c], mean));
    return op_add(acc_read(lane[0]), acc_read(lane[1]));
}

/* A layer norm row's result from its mean and rstd, which go to
 * mean_out[r] and rstd_out[r] where those are given. */
static void layernorm_out(const float *x, float *y, const float *gamma, const float *beta, size_t cols, float mean,
                          float rstd, size_t r, float *mean_out, float *rstd_out)
{
    if (mean_out)
        mean_out[r] = mean;
    if (rstd_out)
        rstd_out[r] = rstd;
    for (size_t c = 0; c < cols; c++)
        y[c] = op_add(op_mul(op_mul(op_sub(x[c], mean), rstd), gamma[c]), beta[c]);
}

void rowwise_model_layernorm_stats(const float *in, float *out, const float *gamma, const float *beta,
                                   size_t rows, size_t cols, size_t step, float eps, float *mean_out,
                                   float *rstd_out)
{
    float n = (float)cols;                      /* f32fromui32: exact below 2^24 */
    for (size_t r = 0; r < rows; r++) {
        const float *x = in + r * step;
        float *y = out + r * step;
        float mean = op_div(lanes_sum(x, cols, LANE_SUM), n);
        float var = op_div(lanes_deviation(x, 0, cols, mean), n);
        layernorm_out(x, y, gamma, beta, cols, mean, op_rsqrt(op_add(var, eps)), r, mean_out, rstd_out);
    }
}

void rowwise_model_softmax_parts(const float *in, float *out, size_t rows, size_t cols, size_t step,
                                 const size_t bounds[7])
{
    for (size_t r = 0; r < rows; r++) {
        const float *x = in + r * step;
        float *y = out + r * step, m = 0.0f, sum = 0.0f;
        for (int w = 0; w < 6; w++) {
            float part = row_extreme(x + bounds[w], bounds[w + 1] - bounds[w], op_max);
            m = w ? op_max(m, part) : part;
        }
        for (int w = 0; w < 6; w++) {
            float lane[2] = {0.0f, 0.0f};
            for (size_t c = bounds[w]; c < bounds[w + 1]; c++) {
                float e = op_exp(op_sub(x[c], m));
                y[c] = e;
                lane[c % 2] = acc_add(lane[c % 2], e);
            }
            float part = op_add(acc_read(lane[0]), acc_read(lane[1]));
            sum = w ? op_add(sum, part) : part;
        }
        float inv = op_recip(sum);
        for (size_t c = 0; c < cols; c++)
            y[c] = op_mul(y[c], inv);
    }
}

void rowwise_model_layernorm_parts(const float *in, float *out, const float *gamma, const float *beta,
                                   size_t rows, size_t cols, size_t step, const size_t bounds[7], float eps,
                                   float *mean_out, float *rstd_out)
{
    float n = (float)cols;
    for (size_t r = 0; r < rows; r++) {
        const float *x = in + r * step;
        float *y = out + r * step;
        float sum = 0.0f, sq = 0.0f;
        for (int w = 0; w < 6; w++) {
            float part = lanes_sum(x + bounds[w], bounds[w + 1] - bounds[w], LANE_SUM);
            sum = w ? op_add(sum, part) : part;
        }
        float mean = op_div(sum, n);
        for (int w = 0; w < 6; w++) {
            float part = lanes_deviation(x, bounds[w], bounds[w + 1], mean);
            sq = w ? op_add(sq, part) : part;
        }
        layernorm_out(x, y, gamma, beta, cols, mean, op_rsqrt(op_add(op_div(sq, n), eps)), r, mean_out, rstd_out);
    }
}

size_t rowwise_model_gather(const void *table, const int32_t *idx, void *out, size_t n,
                            size_t row_bytes, size_t table_rows)
{
    for (size_t i = 0; i < n; i++) {
        int64_t k = idx[i];
        if (k < 0)
            k += (int64_t)table_rows;
        if (k < 0 || k >= (int64_t)table_rows)
            return i;
        memcpy((char *)out + i * row_bytes, (const char *)table + (size_t)k * row_bytes, row_bytes);
    }
    return n;
}

void rowwise_model_transpose(const float *in, float *out, size_t rows, size_t cols, size_t in_step,
                             size_t out_step)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            memcpy(&out[c * out_step + r], &in[r * in_step + c], 4);
}
