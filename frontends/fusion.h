/*
 * fusion.h — graph rewrites the IPU rewards, for inference.
 *
 * The AMP produces a matmul or convolution result in its accumulators;
 * adding a bias and applying an activation while the result is written
 * out (an epilogue) costs no extra pass over memory, and folding a
 * BatchNormalization into the convolution's weights removes it entirely.
 * Each pass rewrites matches in place (the fused node takes the place of
 * the first node of the pattern, so the order stays topological) and
 * leaves the graph compacted and re-inferred.
 *
 * Patterns (every intermediate tensor must have one reader and not be a
 * graph output, since it disappears):
 *   batchnorm  Conv(X, W[, B]) -> BatchNormalization (inference: one
 *              output, training_mode 0) with constant W, B, scale, bias,
 *              mean, var: Conv(X, W', B') with W' = W s, B' = (B - mean) s
 *              + bias, s = scale / sqrt(var + epsilon), computed in f64.
 *   layernorm  the decomposed form exporters emit for opsets before 17:
 *              ReduceMean(x) -> Sub(x, mean) -> Pow(d, 2) | Mul(d, d) ->
 *              ReduceMean -> Add(eps) -> Sqrt -> Div(d, std) [-> Mul(gamma)
 *              [-> Add(beta)]], the reductions over the same trailing axes:
 *              one LayerNormalization.
 *   matmul     MatMul(A, B) [-> Add(bias)] or Gemm(A, B[, bias]) with
 *              alpha = beta = 1 and transA = 0, then optionally Relu or the
 *              exact GELU (x * 0.5 * (1 + erf(x / sqrt 2)) in the arrangements
 *              PyTorch and HuggingFace export): FusedMatMul(A, B[, bias])
 *              {activation, transB}.  The bias must be a constant with one
 *              value per output column ([N] or [1, ..., 1, N]).
 *   conv       Conv -> Relu: FusedConv {activation = relu}.
 * What is not matched: GELU's tanh approximation, a bias that is not a
 * constant, activations other than Relu and GELU.
 *
 * Models PopART's patterns (popart::Pattern, matched and applied to the IR
 * before lowering) and the epilogues PopLibs' matmul and convolution give
 * for free.  Does not model PopART's pattern levels or its training
 * patterns (no gradient ops).
 */
#ifndef IPUSIM_FRONTENDS_FUSION_H
#define IPUSIM_FRONTENDS_FUSION_H

#include <stdbool.h>
#include <stddef.h>

#include "graph.h"

typedef struct fusion_stats {
    int batchnorms_folded;      /* BatchNormalization folded into a Conv */
    int layernorms;             /* decomposed LayerNorms recognised */
    int matmul_epilogues;       /* FusedMatMul nodes made */
    int gelus;                  /* of which with a GELU epilogue */
    int conv_epilogues;         /* FusedConv nodes made */
} fusion_stats;

/* Each pass returns the number of rewrites; the graph must be sorted and
 * inferred. */
int fusion_fold_batchnorm(graph *g);
int fusion_layernorm(graph *g);
int fusion_matmul_epilogue(graph *g, int *gelus);
/* The exact GELU written out (x * 0.5 * (1 + erf(x / sqrt 2)), in the
 * arrangements exporters produce) made one Gelu node, whose gradient reads
 * only x: a training graph runs it before autodiff, so that the backward
 * pass keeps x alone of the GELU's values.  Returns the count. */
int fusion_gelu(graph *g);
int fusion_conv_epilogue(graph *g);
/* An optimizer's updates as PopLibs computes them (scaledAddTo): in the
 * update phase, p + s * q and p - s * q, with s a constant f32 scalar and
 * s * q read by the sum alone, become ScaledAdd(p, q, scale = ±s), the product rounded to f32
 * and then the sum, the same bits; and Cast(ScaledAdd(Cast(w16 to f32),
 * q) to f16), each value read once, becomes ScaledAdd(w16, q) with the
 * outer Cast's rounding, an f16 weight's update with no f32 copy of the
 * weight.  Run on a training graph after its optimizer is built (train.c);
 * returns the count of ScaledAdd nodes made.  Leaves the graph to be
 * inferred again (the new nodes are). */
int fusion_scaled_add(graph *g);

/* All passes in that order, then inference again over the whole graph to
 * check the result (an error there is a bug in a pass).  stats may be NULL. */
bool fusion_run_all(graph *g, fusion_stats *stats, char *err, size_t err_size);

#endif
