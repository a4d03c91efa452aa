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
