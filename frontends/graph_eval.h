/*
 * graph_eval.h — the host reference evaluator of the graph IR.
 *
 * It is the yardstick the compiled graph on the simulated IPU is checked
 * against, and at import it folds constants.  What it computes in:
 *   - Elementwise ops, reductions, normalisations, pooling and softmax on
 *     floating-point tensors work in f64 and round once to the output dtype,
 *     so their only error is that final rounding.
 *   - MatMul, Gemm and Conv on f16, bf16 and f32 tensors are f32 products
 *     with f32 accumulation (OpenBLAS cblas_sgemm, convolution as im2col +
 *     sgemm): the arithmetic the IPU's AMP does with f32 partials.  On f64
 *     and integer tensors they use cblas_dgemm (exact for integers below
 *     2^53).
 *   - Integer ops work in int64 and wrap to the output width; integer Div
 *     truncates towards zero and a division by zero gives 0 (ONNX leaves it
 *     undefined; this keeps the evaluator from trapping).
 *   - f32 -> f16 and f32 -> bf16 round to nearest even; float -> integer
 *     Cast truncates towards zero and saturates at the type's range.
 *
 * Models no part of Poplar: it stands where the ONNX reference (onnxruntime
 * or PopART's CPU checks) stands, the host arithmetic the IPU's results are
 * compared with.  It does not model the tile's arithmetic (that is the
 * codelets' C models, workloads/codelets/<group>.h).
 */
#ifndef IPUSIM_FRONTENDS_GRAPH_EVAL_H
#define IPUSIM_FRONTENDS_GRAPH_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"

/* A tensor value outside the graph: the evaluator's inputs and outputs. */
typedef struct graph_value {
    graph_dtype dtype;
    graph_shape shape;
    void *data;                         /* numel * dtype size bytes */
} graph_value;

void graph_value_free(graph_value *v);

/* Evaluate the graph.  inputs[i] feeds g->inputs[i] (dtype and shape must
 * match the tensor's); outputs[i] receives g->outputs[i] with malloc'd
 * data (free with graph_value_free).  Intermediate values are freed after
 * their last use. */
bool graph_eval(const graph *g, const graph_value *inputs, graph_value *outputs, char *err,
                size_t err_size);

/* One training step (variables, graph.h): graph_eval, then every variable
 * with an update takes that tensor's value, ready for the next step. */
bool graph_eval_step(graph *g, const graph_value *inputs, graph_value *outputs, char *err, size_t err_size);

/* graph_eval_step with Monte Carlo arithmetic: every op that computes
 * (not one that only moves, selects or converts values) has each element
 * of its floating results multiplied by 1 + d, d uniform in [-u, u] for
 * the result type's unit roundoff u, and rounded again.  Runs with
 * different seeds (non-zero) spread as far apart as the rounding of the
 * arithmetic can move the results: how well the step's results are
 * conditioned, measured.  The same seed gives the same results.  With
 * partials_roundoff u16 > 0 (matmuls summing in f16: --partials half) a
 * matmul or convolution of K products a result is perturbed at no less
 * than u16 sqrt(K / 16), the K / 16 roundings of its running sum
 * (random errors of either sign); 0: the result type's u alone. */
bool graph_eval_step_mca(graph *g, const graph_value *inputs, uint64_t seed, double partials_roundoff,
                         graph_value *outputs, char *err, size_t err_size);

/* Element access in any dtype the IR holds. */
double graph_load_f64(graph_dtype t, const void *data, size_t i);
void graph_store_f64(graph_dtype t, void *data, size_t i, double v);
int64_t graph_load_i64(graph_dtype t, const void *data, size_t i);
void graph_store_i64(graph_dtype t, void *data, size_t i, int64_t v);

/* bfloat16: the top half of an f32; from f32 rounds to nearest even. */
float graph_bf16_to_f32(uint16_t h);
uint16_t graph_bf16_from_f32(float f);

#endif
