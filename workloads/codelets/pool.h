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

#endif
