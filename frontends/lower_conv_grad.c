/*
 * lower_conv_grad.c — the two gradients of a convolution on the AMP, as
 * PopLibs computes them: both are matmuls of lower_matmul.c's plan (an
 * M x N x K grid of tiles chosen by the codelet's cycles, operands
 * gathered by the exchange, f16 with f32 partials or the f32 path, the K
 * split summed by a reduce-scatter).
 *
 *   - ConvTranspose (the data gradient dX of Y = Conv(X, W)): a
 *     convolution, stride 1, of dY with zeros stuffed between its pixels
 *     (stride - 1 of them) by the flipped weights, padded by
 *     kernel - 1 - pad.  The im2col by the exchange only fetches the taps
 *     that land on dY's pixels: the stuffed zeros and the padding are the
 *     zeroed receive buffer, never sent.  This was chosen over the other
 *     form, a matmul of dY's rows by W as [Cout, C KH KW] followed by a
 *     col2im scatter-add: for ResNet-50's convolutions the scatter-add
 *     sends KH KW times the result through the exchange (9x for the 3x3
 *     ones, and 49x for the stem) and needs a compute set adding KH KW / s^2
 *     partial results a pixel, while the stuffed convolution moves the
 *     same im2col rows as the forward Conv and no partials; for stride 1
 *     (the 3x3 and 1x1 convolutions of every block but three) it wastes no
 *     AMP cycle.  For stride 2 it multiplies zeros: 3/4 of the rows of a
 *     1x1 (the downsampling shortcut) and about 1/2 to 3/4 of the K of a
 *     3x3 or 7x7 — the price of one plan for every convolution (splitting
 *     by the s^2 phases of the result would avoid it).
 *   - ConvWeightGrad (the weight gradient): dW [Cout, (kh, kw, c)] =
 *     dY^T [Cout, pixels] im2col(X) [pixels, (kh, kw, c)]: K is N OH OW;
 *     dY's channels-last rows are taken as A given transposed and turned
 *     on the tile, X's im2col rows are B, gathered by the exchange as the
 *     forward Conv gathers its A.  dW is kept as [Cout, KH, KW, C] (the
 *     channels-last order of a Conv's result), or turned into ONNX order
 *     where its readers need that (lower_layout.c).
 * Both take 2-D convolutions of group 1 without dilation, f16 or f32
 * (--f16-matmul computes an f32 one in f16 as Conv does).  ConvTranspose's
 * weights, when computed at run time, are read in runs where they are kept
 * channels-last (a training step's variable: [C, KH, KW, Cout] of the
 * forward Conv, a row of its columns per (c, kh, kw)), else an element at
 * a time (small f32 ones).
 */
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"
#include "ops_grad_conv.h"

/* The window both ops share, checked for what the lowering takes. */
static bool grad_window(const graph *g, const graph_node *n, bool weights, conv_grad_window *w, const char **why)
{
    char err[256];
    if (!(weights ? conv_weight_grad_window(g, n, w, err, sizeof err) : conv_transpose_window(g, n, w, err, sizeof err))) {
        *why = "bad convolution window";
        return false;
    }
    if (w->n_spatial != 2) {
        *why = "only 2-D convolutions are lowered";
        return false;
    }
    if (w->group != 1) {
        *why = "grouped convolutions are not yet supported (group must be 1)";
        return false;
    }
    if (w->dilation[0] != 1 || w->dilation[1] != 1) {
        *why = "dilated convolutions are not yet supported";
        return false;
    }
    graph_dtype a = g->tensors[n->inputs[0]].dtype, b = g->tensors[n->inputs[1]].dtype;
    if (a != b || (a != GDT_F16 && a != GDT_F32)) {
        *why = "operands must both be f16 or both f32";
        return false;
    }
    return true;
}

/* ConvTranspose as the convolution of its stuffed, padded input by the
 * flipped weights (false with why when it is not lowered). */
static bool describe_transpose(const graph *g, const graph_node *n, lw_conv_grad *cg, const char **why)
{
    conv_grad_window w;
    if (!grad_window(g, n, false, &w, why))
        return false;
    const graph_tensor *dy = &g->tensors[n->inputs[0]];
    *cg = (lw_conv_grad){ .f32_inputs = dy->dtype == GDT_F32, .image = n->inputs[0], .other = n->inputs[1],
                          .bias = n->n_inputs > 2 ? n->inputs[2] : -1, .result = n->outputs[0],
                          .n_img = w.batch, .c_in = w.c_y, .h = w.y[0], .w = w.y[1], .dh = w.stride[0],
                          .dw = w.stride[1], .kh = w.kernel[0], .kw = w.kernel[1], .sh = 1, .sw = 1,
                          .ph = w.kernel[0] - 1 - w.pad_begin[0], .pw = w.kernel[1] - 1 - w.pad_begin[1],
                          .oh = w.x[0], .ow = w.x[1], .c_out = w.c_x };
    if (!cg->f32_inputs && cg->c_in % 2) {
        *why = "f16 inputs with an odd number of channels are not yet supported";
        return false;
    }
    if (!cg->f32_inputs && !g->tensors[cg->other].data && cg->kh * cg->kw != 1 &&
        !lw_weights_channels_last(g, cg->other)) {
        *why = "f16 weights computed at run time must be kept channels-last (a variable, or element-wise ops of "
               "variables)";
        return false;
    }
    if (cg->bias >= 0) {
        const graph_tensor *b = &g->tensors[cg->bias];
        if (b->dtype != dy->dtype || (!b->data && !cg->f32_inputs)) {
            *why = "the bias must be of the input's type (f16 ones constant)";
            return false;
        }
    }
    return lw_channels_last_ok(g, n, why);
}

/* ConvWeightGrad as dY^T im2col(X) (false with why when it is not
 * lowered). */
static bool describe_weight_grad(const graph *g, const graph_node *n, lw_conv_grad *cg, const char **why)
{
    conv_grad_window w;
    if (!grad_window(g, n, true, &w, why))
        return false;
    *cg = (lw_conv_grad){ .weights = true, .f32_inputs = g->tensors[n->inputs[0]].dtype == GDT_F32,
                          .image = n->inputs[0], .other = n->inputs[1], .bias = -1, .result = n->outputs[0],
                          .n_img = w.batch, .c_in = w.c_x, .h = w.x[0], .w = w.x[1], .dh = 1, .dw = 1,
                          .kh = w.kernel[0], .kw = w.kernel[1], .sh = w.stride[0], .sw = w.stride[1],
                          .ph = w.pad_begin[0], .pw = w.pad_begin[1], .oh = w.y[0], .ow = w.y[1], .c_out = w.c_y };
    if (!cg->f32_inputs && (cg->c_in % 2 || cg->c_out % 2)) {
        *why = "f16 images or gradients with an odd number of channels are not yet supported";
        return false;
    }
    if (!lw_channels_last_ok(g, n, why))
        return false;
    /* dY is read channels-last too (lower_layout.c counts it an image). */
    bool *in = lw_nhwc_set(g);
    bool ok = in && (in[cg->other] || cg->oh * cg->ow == 1);
    free(in);
    if (!ok)
        *why = "dY must be kept channels-last: a graph input, or made by convolutions, pools and element-wise ops";
    return ok;
}

bool lw_conv_transpose_supported(const graph *g, const graph_node *n, const char **why)
{
    lw_conv_grad cg;
    return describe_transpose(g, n, &cg, why);
}

bool lw_lower_conv_transpose(lowering *lw, const graph_node *n, int index)
{
    lw_conv_grad cg;
    const char *why;
    if (!describe_transpose(lw->g, n, &cg, &why))
        return lw_unsupported(lw, n, index, why);
    return lw_lower_conv_grad(lw, n, index, &cg);
}

bool lw_conv_weight_grad_supported(const graph *g, const graph_node *n, const char **why)
{
    lw_conv_grad cg;
    return describe_weight_grad(g, n, &cg, why);
}

bool lw_lower_conv_weight_grad(lowering *lw, const graph_node *n, int index)
{
    lw_conv_grad cg;
    const char *why;
    if (!describe_weight_grad(lw->g, n, &cg, &why))
        return lw_unsupported(lw, n, index, why);
    return lw_lower_conv_grad(lw, n, index, &cg) && lw_weight_grad_to_onnx_order(lw, n, index);
}
