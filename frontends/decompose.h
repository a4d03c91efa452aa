/*
 * decompose.h — rewrites of ops the lowering has no direct form for into
 * ops it lowers, so the graph is compiled for the IPU instead of being
 * left to the host.  Unlike fusion.h, which trades ops for cheaper ones,
 * every rewrite here adds ops; it runs after the fusions (a BatchNorm after
 * a Conv is folded there, not here) and before lower_graph.
 *
 * Rewrites (f32 tensors only, the dtype the tile's element-wise, Exp/Log
 * and row kernels take; other dtypes keep the lowering's reason):
 *   batchnorm  BatchNormalization in inference form (one output, not
 *              training_mode): y = x * s + t with s = scale / sqrt(var +
 *              epsilon) and t = B - mean * s per channel, s and t reshaped
 *              to [C, 1, ..., 1].  Constant parameters fold to constants.
 *   softmax    Softmax over an axis that is not the last.  From opset 13
 *              (one axis): Transpose swapping the axis with the last,
 *              Softmax, the same Transpose back.  Before 13 (the input seen
 *              as 2-D, [prod(dims[:axis]), prod(dims[axis:])]): Reshape to
 *              that, Softmax over axis 1, Reshape back.
 *   log_softmax LogSoftmax (f32) over its normalised axes (as Softmax's,
 *              opset 13 or not): d = x - ReduceMax(x), then d -
 *              ReduceLogSumExp(d), both reductions keeping their axes; no
 *              exp can overflow (d <= 0) and the log's argument is >= 1.
 *   clip       Clip (f32 or i32): Max with min, then Min with max, of
 *              those given.
 *   max_min    Max and Min (f32 or i32) of one input: Identity; of more
 *              than two: a chain of binary ones, from an input of the
 *              output's shape (the lowering broadcasts one operand only).
 *   pow        Pow with an f32 base and an exponent the lowering has no
 *              exact form for (lower_pow_is_direct).  A constant integer
 *              exponent n with |n| <= 8 and the base's shape: square and
 *              multiply (then Reciprocal for n < 0; n = 0 is Expand of 1).
 *              Otherwise exp(y log|x|), with C pow's special cases put back:
 *              the sign (-1)^y of a negative base and an integer y, NaN for
 *              a negative base and a non-integer y, x^0 = 1 (0^0 and
 *              NaN^0 included).  A constant exponent of another dtype is
 *              converted to f32 first.
 *   batchnorm_training  BatchNormalization with training_mode=1 (opset
 *              14 on, decompose_train.c): the batch's mean and biased
 *              variance by ReduceMean over every axis but 1, y = (x - mean)
 *              * (1 / sqrt(var + epsilon)) * scale + B, and the running
 *              statistics input * momentum + batch * (1 - momentum).
 *   class_loss SoftmaxCrossEntropyLoss (log-softmax over axis 1 as
 *              LogSoftmax's rewrite) and NegativeLogLikelihoodLoss: a
 *              weighted one-hot [N, d.., C] (Where of Equal of the i32
 *              labels against the classes 0..C-1, ignore_index's entry
 *              made INT32_MIN; i64 labels narrowed by a Gather of an i32
 *              table covering [min(0, ignore_index), max(C, ignore_index +
 *              1)), at most 2^20 rows), moved to [N, C, d..], times the
 *              log-probabilities, ReduceSum over axis 1, Neg; sum and mean
 *              by ReduceSums in rows the reduce codelet takes, mean divided
 *              by the one-hot's sum (the weights taken).
 *   optimizer  Momentum (standard, Nesterov), Adam and Adagrad steps with
 *              an update count T known when compiling (or one the step
 *              does not depend on: Momentum with beta 1, Adagrad without
 *              decay): element-wise ops, T's factors folded.
 * What is approximated: exp(y log|x|) in f32 loses about |y log|x|| ulps
 * of the result (|y log|x|| <= 88 for finite f32 results: < 1e-5
 * relative).  Not reproduced: (-1)^(+-inf) = 1 and 1^NaN = 1 (NaN here),
 * and the sign of -0 to an odd power (+0 or +inf here).
 * What is left as it is: BatchNorm in inference mode with several
 * outputs, an optimizer step whose T is given at run time (an i64 the
 * tile cannot convert; decompose_stats.left says so), Pow with a
 * run-time exponent that is not f32 (it would need a Cast from an
 * integer, which the tile does not lower) or a base that is not f32; the
 * lowering reports them.
 *
 * Models PopART's decomposition patterns (an op replaced by ops the
 * lowering has, before lowering).  Does not model PopLibs' own fused
 * kernels for these ops (popnn's batch norm, popops' map expressions).
 */
#ifndef IPUSIM_FRONTENDS_DECOMPOSE_H
#define IPUSIM_FRONTENDS_DECOMPOSE_H

#include <stdbool.h>
#include <stddef.h>

#include "graph.h"

typedef struct decompose_stats {
    int batchnorms;             /* BatchNormalization into Mul and Add */
    int softmaxes;              /* Softmax moved to the last axis */
    int log_softmaxes;          /* LogSoftmax into ReduceMax, Sub and ReduceLogSumExp */
    int clips;                  /* Clip into Max and Min */
    int max_mins;               /* Max and Min into Identity or binary ones */
    int pows_by_multiplying;    /* Pow with a small integer exponent */
    int pows_by_exp_log;        /* Pow as exp(y log|x|) */
    int batchnorms_training;    /* BatchNormalization with the batch's statistics */
    int class_losses;           /* SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss */
    int optimizers;             /* Momentum, Adam, Adagrad steps */
    char left[256];             /* why the first training op left as it is was left
                                   (decompose_train.c), "" if none */
} decompose_stats;

/* Rewrite every node above; the graph must be sorted and inferred and is
 * left so, with constant parameters folded.  A node that is not rewritten
 * is left as it is.  false with err only when inference of the result
 * fails (a bug in a rewrite).  stats may be NULL. */
bool decompose_graph(graph *g, decompose_stats *stats, char *err, size_t err_size);

#endif
