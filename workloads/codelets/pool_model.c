/*
 * pool_model.c — bit-exact models of the pooling codelets
 * (workloads/codelets/pool.S); see pool.h for the order of operations they
 * share with the codelets.
 *
 * Each helper is one aux-pipeline instruction as isa/exec_aux.c executes
 * it with $FP_CTL = 0: operands read from registers are flushed, the
 * special cases of fparith.h, the result rounded once to f32 and flushed
 * on its way into a register.  Loads and stores copy bits.  A channel
 * pooled alone (odd C or chans, pool.h) uses the scalar instruction, whose
 * arithmetic is that of one lane, so one model serves every path.
 */
#include "pool.h"

#include <math.h>

#include "isa/fparith.h"

static float reg(float f) { return fp32_flush(f); }

static float op_add(float a, float b)           /* f32v2add lane, or f32add */
{
    unsigned exc = 0;
    float r;
    a = reg(a), b = reg(b);
    if (fp32_add_special(a, b, &exc, &r))
        return r;
    return reg((float)((double)a + (double)b));
}

static float op_mul(float a, float b)           /* f32v2mul lane */
{
    unsigned exc = 0;
    float r;
    a = reg(a), b = reg(b);
    if (fp32_mul_special(a, b, &exc, &r))
        return r;
    return reg((float)((double)a * (double)b));
}

static float op_max(float a, float b) { return reg(fp32_max(reg(a), reg(b))); }   /* f32v2max lane, f32max */

static float op_recip(float a)                  /* f32oox */
{
    unsigned exc = 0;
    float r;
    a = reg(a);
    if (fp32_recip_special(a, &exc, &r))
        return r;
    return reg((float)(1.0 / (double)a));
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

void pool_window(const pool_shape *s, uint32_t oh, uint32_t ow, int64_t *ih0, int64_t *ih1, int64_t *iw0,
                 int64_t *iw1)
{
    int64_t hs = (int64_t)oh * s->sh - s->pt, ws = (int64_t)ow * s->sw - s->pl;
    *ih0 = clamp(hs, 0, s->h);
    *ih1 = clamp(hs + s->kh, 0, s->h);
    *iw0 = clamp(ws, 0, s->w);
    *iw1 = clamp(ws + s->kw, 0, s->w);
}

/* One output pixel: max (avg == false) or the sum, over the window. */
static void pool_pixel(const float *in, float *out, const pool_shape *s, uint32_t oh, uint32_t ow, uint32_t chans,
                       bool avg, bool count_include_pad)
{
    int64_t ih0, ih1, iw0, iw1;
    pool_window(s, oh, ow, &ih0, &ih1, &iw0, &iw1);
    float *y = out + ((size_t)oh * s->ow + ow) * s->c;
    bool empty = ih1 <= ih0 || iw1 <= iw0;
    float scale = 0;
    if (avg && !empty) {
        uint32_t count = count_include_pad ? s->kh * s->kw : (uint32_t)((ih1 - ih0) * (iw1 - iw0));
        scale = op_recip((float)(double)count);
    }
    for (uint32_t c = 0; c < chans; c++) {
        if (empty) {
            y[c] = avg ? 0.0f : -INFINITY;
            continue;
        }
        float acc = avg ? 0.0f : -INFINITY;
        for (int64_t ih = ih0; ih < ih1; ih++)
            for (int64_t iw = iw0; iw < iw1; iw++) {
                float x = in[((size_t)ih * s->w + (size_t)iw) * s->c + c];
                acc = avg ? op_add(acc, x) : op_max(acc, x);
            }
        y[c] = avg ? op_mul(acc, scale) : acc;
    }
}

void pool_model_maxpool_nhwc(const float *in, float *out, const pool_shape *s, uint32_t oh0, uint32_t oh1,
                             uint32_t chans)
{
    for (uint32_t oh = oh0; oh < oh1; oh++)
        for (uint32_t ow = 0; ow < s->ow; ow++)
            pool_pixel(in, out, s, oh, ow, chans, false, false);
}

void pool_model_avgpool_nhwc(const float *in, float *out, const pool_shape *s, uint32_t oh0, uint32_t oh1,
                             uint32_t chans, bool count_include_pad)
{
    for (uint32_t oh = oh0; oh < oh1; oh++)
        for (uint32_t ow = 0; ow < s->ow; ow++)
            pool_pixel(in, out, s, oh, ow, chans, true, count_include_pad);
}

/* ---- vtx_maxpool_grad_nhwc_f32 ------------------------------------------------ */

/* The first position of the window of (oh, ow) whose channel c equals the
 * window's max, as rows and columns of the input; false when none (a NaN
 * max) or the window is empty.  *rq, *cq: its row and column in the
 * clipped window. */
static bool grad_first_max(const float *in, const pool_shape *s, uint32_t oh, uint32_t ow, uint32_t c,
                           int64_t *ih, int64_t *iw, int64_t *rq, int64_t *cq)
{
    int64_t ih0, ih1, iw0, iw1;
    pool_window(s, oh, ow, &ih0, &ih1, &iw0, &iw1);
    if (ih1 <= ih0 || iw1 <= iw0)
        return false;
    float m = -INFINITY;
    for (int64_t r = ih0; r < ih1; r++)
        for (int64_t q = iw0; q < iw1; q++)
            m = op_max(m, in[((size_t)r * s->w + (size_t)q) * s->c + c]);
    for (int64_t r = ih0; r < ih1; r++)
        for (int64_t q = iw0; q < iw1; q++)
            if (fp32_relation(in[((size_t)r * s->w + (size_t)q) * s->c + c], m) == FP_REL_EQ) {
                *ih = r, *iw = q, *rq = r - ih0, *cq = q - iw0;
                return true;
            }
    return false;
}

void pool_model_maxpool_grad_nhwc(const float *in, const float *dy, float *dx, const pool_shape *s,
                                  const pool_grad_range *r)
{
    if (r->ih1 <= r->ih0 || r->chans == 0)
        return;
    for (size_t p = 0; p < (size_t)(r->ih1 - r->ih0) * s->w; p++)
        for (uint32_t c = 0; c < r->chans; c++)
            dx[p * s->c + c] = 0.0f;
    for (uint32_t oh = r->oh0; oh < r->oh1; oh++)
        for (uint32_t ow = 0; ow < s->ow; ow++)
            for (uint32_t c = r->chans; c-- > 0;) {
                int64_t ih, iw, rq, cq;
                if (!grad_first_max(in, s, oh, ow, c, &ih, &iw, &rq, &cq) || ih < r->ih0 || ih >= r->ih1)
                    continue;
                float *d = &dx[((size_t)(ih - r->ih0) * s->w + (size_t)iw) * s->c + c];
                *d = op_add(*d, dy[((size_t)oh * s->ow + ow) * r->dy_pixel_step + (size_t)c * r->dy_chan_step]);
            }
}

uint64_t pool_model_maxpool_grad_cycles(const float *in, const pool_shape *s, const pool_grad_range *r)
{
    if (r->ih1 <= r->ih0)
        return 5;
    if (r->chans == 0)
        return 6;
    uint64_t w = 24 + (uint64_t)(r->ih1 - r->ih0) * s->w * (r->chans + 3) + 4;
    for (uint32_t oh = r->oh0; oh < r->oh1; oh++) {
        w += 25 + 4;
        int64_t ih0, ih1, iw0, iw1;
        pool_window(s, oh, 0, &ih0, &ih1, &iw0, &iw1);
        if (ih1 <= ih0)
            continue;
        uint64_t nkh = (uint64_t)(ih1 - ih0);
        for (uint32_t ow = 0; ow < s->ow; ow++) {
            pool_window(s, oh, ow, &ih0, &ih1, &iw0, &iw1);
            w += 6;
            if (iw1 <= iw0) {
                w += 20;
                continue;
            }
            uint64_t nkw = (uint64_t)(iw1 - iw0);
            w += 22;
            for (uint32_t c = 0; c < r->chans; c++) {
                int64_t ih, iw, rq, cq;
                w += 3 + nkh * (2 * nkw + 3) + 1;
                if (!grad_first_max(in, s, oh, ow, c, &ih, &iw, &rq, &cq)) {
                    w += 2 + nkh * (5 * nkw + 3) + 1;
                    continue;
                }
                w += 2 + (uint64_t)rq * (5 * nkw + 3) + 1 + 5 * (uint64_t)cq + 4;
                w += ih < r->ih0 || ih >= r->ih1 ? 6 : 15;
            }
        }
    }
    return w;
}
