/*
 * pool.h — the pooling codelets of the kernel library
 * (workloads/codelets/pool.S): their vertex record layout and their
 * bit-exact C models (workloads/codelets/pool_model.c).
 *
 *   vtx_maxpool_nhwc_f32   ONNX MaxPool (padding ignored: the max over the
 *                          window's positions inside the input)
 *   vtx_avgpool_nhwc_f32   ONNX AveragePool (the sum over the window's
 *                          positions inside the input, divided by their
 *                          number, or by KH x KW with count_include_pad)
 *   vtx_maxpool_grad_nhwc_f32
 *                          the gradient of MaxPool (MaxPoolGrad): each
 *                          window's dY added at its first maximum (the
 *                          record and its rules at the end of this file)
 *
 * One image, channels last: the input is H x W pixels of C f32 channels
 * (pixel (ih, iw) at in + (ih W + iw) C * 4), the output OH x OW pixels of
 * C channels alike.  Output pixel (oh, ow) pools the window of input rows
 * oh SH - PT .. + KH - 1 and columns ow SW - PL .. + KW - 1, clipped to the
 * input; bottom and right padding are whatever OH and OW imply.  A worker
 * computes output rows [oh0, oh1) and channels [0, chans) of every pixel:
 * a lowering that splits channels between workers (the global average pool
 * of ResNet-50 has one output row) offsets in and out by the first channel
 * and keeps C as the pixel stride.
 *
 * Conditions on every record, beyond abi.h:
 *   - chans <= C (either of any parity); KH, KW, SH, SW >= 1; KW <=
 *     POOL_MAX_KW (one rpt block of window columns, ISA2 rpt);
 *   - in and out 8-byte aligned when C is even; 4-byte aligned when C is
 *     odd (a lowering that splits channels offsets in and out by any first
 *     channel then: pixels start 4 mod 8 every other time anyway);
 *   - speed: with C and chans even, channels are read and written in
 *     64-bit pairs (blocks of 4 pairs); with C even and chans odd, the
 *     last channel is pooled alone (32-bit accesses) and the rest in pairs;
 *     with C odd every channel is pooled alone (pool.S has the cycles);
 *   - out must not overlap in (no in-place pooling): the codelet uses the
 *     first word of an output pixel as scratch before it writes the pixel;
 *   - a window with no position inside the input (padding >= kernel, which
 *     ONNX does not produce) gives -inf (max) or +0 (average).
 * A record with oh1 <= oh0 or chans == 0 does nothing.
 *
 * Reads: exactly the channels [0, chans) of the input pixels inside the
 * windows; nothing past a tensor's end.  Only single 64-bit or 32-bit
 * accesses: no placement can raise a memory conflict.
 *
 * Arithmetic ($FP_CTL = 0, see isa/fparith.h), per channel, over the
 * window's positions inside the input in row-major order (row by row, left
 * to right):
 *   max:     acc = -inf; acc = f32max(acc, x) (f32v2max, or f32max for a
 *            channel alone: the same maxNum, a quiet NaN operand yields
 *            the other); out = acc.
 *   average: acc = +0; acc = acc + x (f32v2add or f32add, one rounding
 *            each); out = acc * r, r = f32oox(f32fromui32(count)) (one
 *            reciprocal per pixel, then a multiply, not a division), count
 *            = KH KW with count_include_pad, else the number of positions
 *            inside.
 */
#ifndef IPUSIM_CODELETS_POOL_H
#define IPUSIM_CODELETS_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POOL_MAX_KW 4096u           /* window columns: rpt count nkw - 1 <= 4095 */

/* ---- vtx_maxpool_nhwc_f32, vtx_avgpool_nhwc_f32: one layout ----------- */
enum pool_vertex {
    POOL_V_IN = 0,              /* input image, H x W x C f32 */
    POOL_V_OUT = 1,             /* output image, OH x OW x C f32 (row 0) */
    POOL_V_H = 2,
    POOL_V_W = 3,
    POOL_V_C = 4,               /* channels of a pixel: the pixel stride of in and out */
    POOL_V_KH = 5,
    POOL_V_KW = 6,
    POOL_V_SH = 7,
    POOL_V_SW = 8,
    POOL_V_PT = 9,              /* padding above the image */
    POOL_V_PL = 10,             /* padding left of the image */
    POOL_V_OH = 11,
    POOL_V_OW = 12,
    POOL_V_OH0 = 13,            /* this worker's output rows [oh0, oh1) */
    POOL_V_OH1 = 14,
    POOL_V_COUNT_INCLUDE_PAD = 15,  /* average: divide by KH KW; ignored by max */
    POOL_V_CHANS = 16,          /* channels computed, [0, chans) of every pixel */
    POOL_V_WORDS = 17,
};

/* The geometry of a record, for the models. */
typedef struct pool_shape {
    uint32_t h, w, c;           /* input H x W x C (C: the pixel stride in floats) */
    uint32_t kh, kw, sh, sw;    /* kernel and strides */
    uint32_t pt, pl;            /* top and left padding */
    uint32_t oh, ow;            /* output H x W */
} pool_shape;

/* ---- bit-exact models ------------------------------------------------------
 * in, out: the image tensors (in: h x w x c, out: oh x ow x c floats); the
 * models write output rows [oh0, oh1), channels [0, chans), as the codelets
 * do, and nothing else. */
void pool_model_maxpool_nhwc(const float *in, float *out, const pool_shape *s, uint32_t oh0, uint32_t oh1,
                             uint32_t chans);
void pool_model_avgpool_nhwc(const float *in, float *out, const pool_shape *s, uint32_t oh0, uint32_t oh1,
                             uint32_t chans, bool count_include_pad);

/* The window of output pixel (oh, ow) clipped to the input: rows [*ih0,
 * *ih1) and columns [*iw0, *iw1) (empty when *ih1 <= *ih0 or *iw1 <= *iw0). */
void pool_window(const pool_shape *s, uint32_t oh, uint32_t ow, int64_t *ih0, int64_t *ih1, int64_t *iw0,
                 int64_t *iw1);

/* ---- vtx_maxpool_grad_nhwc_f32 ------------------------------------------------
 * The worker owns dX rows [IH0, IH1) (all W columns, channels [0, CHANS)):
 * it zeroes them (+0), then for every output pixel (oh, ow), oh in [OH0,
 * OH1), ow in [0, OW), and every channel c < CHANS (the last channel first:
 * channels are independent) it computes, over the window's positions inside
 * the input in row-major order,
 *     m = f32max(... f32max(-inf, x0) ..., xk)      (maxNum, as the forward)
 *     p = the first position with f32cmpeq(x_p, m)  (none when m is NaN)
 * and, when p lies in rows [IH0, IH1), dX[p][c] = f32add(dX[p][c], dY[oh][ow][c]).
 * Windows are taken in row-major order of (oh, ow), so a position that is
 * the first maximum of several windows sums their dY in that order, one
 * rounding each.  OH0..OH1 must cover every output row whose window reaches
 * rows [IH0, IH1) (more rows only cost time); workers with disjoint rows or
 * disjoint channels never write the same word.
 *
 * Addresses: X pixel (ih, iw) at IN + (ih W + iw) C * 4 (the rows the
 * windows reach must be there; IN may point below the received rows),
 * channel c 4 c further; dX pixel (ih, iw) at DX + ((ih - IH0) W + iw) C * 4
 * (DX: pixel (IH0, 0)); dY of (oh, ow, c) at DY + (oh OW + ow)
 * DY_PIXEL_STEP + c DY_CHAN_STEP (channels-last: C * 4 and 4; planes: 4
 * and the plane's bytes).  32-bit accesses only (any alignment of 4, any
 * C): no placement can raise a memory conflict.  CHANS and KW at most
 * 4095 (rpt); KH, KW, SH, SW >= 1.  Words 20-23 of the record are the
 * codelet's scratch (it writes them).
 *
 * Timing (worker cycles, every issue a bundle of 1; tests/test_codelets_pool.c
 * counts them, pool_model_maxpool_grad_cycles): IH1 <= IH0: 5; CHANS == 0: 6;
 * else 24 + (IH1 - IH0) W (CHANS + 3) for the zeroing, + 4; an output row
 * 25 (+ 4 for the next), its pixels 22 each (20 when the window has no
 * column inside) + 6 for the next; a channel 3 + nkh (2 nkw + 3) for the
 * max, 2 + rq (5 nkw + 3) + 1 + 5 cq + 4 to find the first max at window
 * row rq, column cq, then 6 (outside the worker's rows) or 15 (added), and
 * 1 for the next channel; a channel whose max is NaN 2 + nkh (5 nkw + 3) +
 * 1 + 1.  Measured (tests/test_codelets_pool.c): a block of ResNet-50's
 * stem pool gradient, 10 windows x 64 channels of 3 x 3 on one worker,
 * 439 tile cycles a window channel (73 worker cycles: one channel at a
 * time, two passes over the window).
 */
enum maxpool_grad_vertex {
    MPG_V_IN = 0, MPG_V_DY = 1, MPG_V_DX = 2,
    MPG_V_H = 3, MPG_V_W = 4, MPG_V_C = 5,
    MPG_V_KH = 6, MPG_V_KW = 7, MPG_V_SH = 8, MPG_V_SW = 9, MPG_V_PT = 10, MPG_V_PL = 11,
    MPG_V_OW = 12,
    MPG_V_OH0 = 13, MPG_V_OH1 = 14,     /* output rows visited */
    MPG_V_IH0 = 15, MPG_V_IH1 = 16,     /* dX rows owned */
    MPG_V_CHANS = 17,
    MPG_V_DY_PIXEL_STEP = 18,           /* bytes */
    MPG_V_DY_CHAN_STEP = 19,            /* bytes */
    MPG_V_WORDS = 24,                   /* 20..23: scratch */
};

/* What a record of vtx_maxpool_grad_nhwc_f32 covers, beyond pool_shape
 * (whose oh is not read). */
typedef struct pool_grad_range {
    uint32_t oh0, oh1, ih0, ih1, chans;
    uint32_t dy_pixel_step, dy_chan_step;   /* in floats */
} pool_grad_range;

/* The model: in is X pixel (0, 0), dy dY (0, 0, 0), dx dX pixel (ih0, 0). */
void pool_model_maxpool_grad_nhwc(const float *in, const float *dy, float *dx, const pool_shape *s,
                                  const pool_grad_range *r);
/* Its worker cycles (the timing above) on these values of X. */
uint64_t pool_model_maxpool_grad_cycles(const float *in, const pool_shape *s, const pool_grad_range *r);

#endif
