/*
 * ops_grad_conv.h — the geometry of the two gradients of a convolution
 * (ops_grad_conv.c): ConvTranspose (the data gradient) and ConvWeightGrad
 * (the weight gradient), shared by their inference, their evaluation and
 * their lowering on the AMP (lower_conv_grad.c).
 */
#ifndef IPUSIM_FRONTENDS_OPS_GRAD_CONV_H
#define IPUSIM_FRONTENDS_OPS_GRAD_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"

/* The forward convolution both gradients belong to: its image's spatial
 * extent x[] (ConvTranspose's result, ConvWeightGrad's X), its result's y[]
 * (ConvTranspose's input, dY), the window (kernel, strides, dilations,
 * pads at either end), the group count and the channels: c_x of the image,
 * c_y of the result. */
typedef struct conv_grad_window {
    int n_spatial;
    int64_t batch, group, c_x, c_y;
    int64_t x[GRAPH_MAX_RANK], y[GRAPH_MAX_RANK], kernel[GRAPH_MAX_RANK], stride[GRAPH_MAX_RANK],
        dilation[GRAPH_MAX_RANK], pad_begin[GRAPH_MAX_RANK], pad_end[GRAPH_MAX_RANK];
} conv_grad_window;

/* ConvTranspose's window from its input [N, C, ...] and weights [C, M/group,
 * k...] and its attributes (ONNX's rules for output_shape, output_padding
 * and auto_pad); false with err when they do not agree. */
bool conv_transpose_window(const graph *g, const graph_node *n, conv_grad_window *w, char *err, size_t err_size);
/* ConvWeightGrad's window from X [N, Cin, ...], dY [N, Cout, ...] and the
 * attributes of the forward Conv (kernel_shape required). */
bool conv_weight_grad_window(const graph *g, const graph_node *n, conv_grad_window *w, char *err,
                             size_t err_size);

#endif
