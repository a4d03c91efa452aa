/*
 * autodiff.h — reverse-mode differentiation of the graph IR, and the
 * training program built with it: the loss on the model's outputs, the
 * backward pass, and the optimizer's update of every trainable weight.
 *
 * A gradient is a tensor of the graph like any other: autodiff appends
 * the nodes that compute it (the rule of each op, ops.def's last column,
 * written in ordinary ops of the table), so the backward pass is
 * inferred, folded, fused, decomposed, planned and lowered by the same
 * passes as the forward pass, and evaluated by the same host evaluator.
 * Rules are applied in reverse topological order; a tensor read by
 * several nodes gets the sum of their contributions.
 *
 * Models PopART's autodiff (popart::Ir::constructBackwards: a grad op per
 * forward op, gradients summed where a tensor fans out, the loss's
 * gradient seeded with the loss scale) and its optimizers (SGD with
 * momentum and weight decay, Adam, LAMB; LARS as Graphcore's MLPerf
 * ResNet-50 uses it), with weights kept on the chip as variables updated
 * in place at the end of each step: f32, or f16 (f16_weights) read through
 * a Cast to f32 and updated in f32, the new value rounded to f16
 * stochastically as Graphcore's recipes do; optimizer state f32.  Does not
 * model: recomputation, or gradient accumulation over micro-batches.
 */
#ifndef IPUSIM_FRONTENDS_AUTODIFF_H
#define IPUSIM_FRONTENDS_AUTODIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "graph.h"

/* The gradients of scalar tensor loss with respect to tensors wrt[0..n):
 * appends the backward nodes to g (sorted and inferred, as g must be) and
 * sets grads[i] to the tensor holding d loss / d wrt[i] (-1 when loss does
 * not depend on it).  seed scales the loss's own gradient (1, or the loss
 * scale).  False with err naming the node whose op has no rule. */
bool autodiff_gradients(graph *g, int loss, double seed, const int *wrt, int n_wrt, int *grads, char *err,
                        size_t err_size);

enum train_optimizer {
    TRAIN_SGD,            /* v = momentum v + g; w -= lr v   (momentum 0: w -= lr g) */
    TRAIN_ADAM,           /* bias-corrected first and second moments */
    TRAIN_LAMB,           /* Adam's direction scaled by the trust ratio |w| / |r| */
    TRAIN_LARS,           /* SGD with momentum scaled by eta |w| / (|g| + wd |w|) */
};

typedef struct train_options {
    const char *loss;     /* "softmax-ce:OUTPUT:LABELS", "nll:OUTPUT:LABELS" or
                             "mse:OUTPUT:TARGET", several joined by '+' (summed);
                             NULL: the graph's first output is the loss */
    enum train_optimizer optimizer;
    double lr;            /* learning rate */
    double momentum;      /* SGD, LARS */
    double weight_decay;  /* added to the gradient as wd * w (LAMB: to the direction) */
    double beta1, beta2, epsilon; /* Adam, LAMB */
    double lars_eta;      /* LARS trust coefficient */
    double loss_scale;    /* static loss scaling: the backward pass starts from
                             this, the update divides it out (1: none) */
    bool anchor_gradients;/* each weight's gradient also a graph output,
                             "Gradient___NAME" (for checking values) */
    bool delay_updates;   /* every update after the backward pass (train.c
                             order_steps; else each as soon as it can run) */
    bool f16_weights;     /* weights stored as f16 (their update computed in f32
                             from an f16 value and rounded back); optimizer
                             state stays f32 */
    bool stochastic_rounding; /* that rounding stochastic (the tile PRNG), else
                             to nearest even */
    bool f16_optimizer_state; /* the optimizer's state kept in f16 (read through a
                             Cast to f32, its new value rounded to nearest) */
    bool optimizer_state_offchip; /* the optimizer's state (momentum, moments) kept
                             in streaming memory, loaded for each weight's update
                             and stored back (graph_tensor.in_streaming_memory) */
    uint32_t replicas;    /* data-parallel replicas the step runs on (0, 1: one):
                             the gradients summed over them (one fused
                             ReplicatedAllReduce) and the update taking their
                             mean, the same on every replica */
    uint32_t stages;      /* pipeline stages, one a chip (0, 1: none): the step
                             scheduled as a pipeline (train_pipeline.c) */
    uint32_t micro_batches; /* micro-batches a step (0, 1: one): the forward and
                             backward passes once for each, their gradients
                             accumulated, one update with their mean */
    bool recompute;       /* a pipeline's stages but the last make their forward
                             nodes again in their backward pass, stashing only
                             what they receive (PopART's pipeline recomputation) */
} train_options;

/* Defaults: SGD, lr 0.01, momentum 0, no decay, Adam's betas 0.9 / 0.999,
 * epsilon 1e-6, eta 0.001, loss scale 1. */
void train_options_default(train_options *o);
/* "sgd", "adam", "lamb", "lars"; false if unknown. */
bool train_optimizer_parse(const char *name, enum train_optimizer *out);
const char *train_optimizer_name(enum train_optimizer o);

typedef struct train_info {
    int loss;             /* the loss tensor (a graph output) */
    int weights;          /* trainable weights, now variables */
    long long weight_elements;
    int state;            /* optimizer state variables */
    int forward_nodes, backward_nodes, update_nodes;
    int n_labels;         /* class-index inputs of the loss (softmax-ce, nll) */
    int label[4];         /* their tensors (indices valid until the graph is compacted: use the names) */
    char label_name[4][256];
    long long label_classes[4];   /* each one's class count: valid labels are 0 .. count - 1 */
} train_info;

/* Turn the inference graph g (sorted, inferred) into one training step:
 * the loss (o->loss) becomes g's first output, every float constant of
 * two or more elements the loss depends on becomes a trainable variable,
 * the backward pass and the optimizer's update follow, and each weight's
 * and state's new value is its variable's update.  Nodes are marked with
 * their phase (graph_node.phase).  False with err on a bad loss spec, an
 * op without a gradient rule, or a graph with nothing to train. */
bool train_graph(graph *g, const train_options *o, train_info *info, char *err, size_t err_size);

/* train_graph, then what every compile does next: constants folded,
 * dead nodes pruned, the fusions (when fuse) and the decompositions. */
bool train_prepare(graph *g, const train_options *o, bool fuse, train_info *info, char *err, size_t err_size);

/* The training step g (train_prepare's, before its order) made one of
 * `micro_batches` micro-batches on `stages` pipeline stages, each node
 * given its stage and pipeline cycle (graph_node.stage, .cycle), and the
 * nodes put in the schedule's order (train_pipeline.c); with recompute,
 * each stage but the last making its forward nodes again in its backward
 * pass.  False with err when the step cannot be cut into that many
 * stages. */
bool train_pipeline(graph *g, uint32_t stages, uint32_t micro_batches, bool recompute, char *err, size_t err_size);

/* ---- for the rules (autodiff_rules.c) ----------------------------------------------- */

typedef struct grad_ctx grad_ctx;

/* A rule: node k's output gradients are dy[i] (-1: none flows into output
 * i); it adds the nodes for the gradients of k's inputs and hands each to
 * grad_add.  Copy what the node holds first: adding nodes moves them. */
typedef bool (*graph_grad_fn)(grad_ctx *c, int k, const int *dy);

graph *grad_graph(grad_ctx *c);
/* Tensor t needs a gradient (a weight, or on a path from one). */
bool grad_wanted(const grad_ctx *c, int t);
/* Add dt to t's gradient. */
void grad_add(grad_ctx *c, int t, int dt);
/* A node of op on inputs in[] with n_out new outputs, attributes to be
 * set by the caller, then grad_infer; returns the node index. */
int grad_node(grad_ctx *c, graph_op op, const int *in, int n_in, int n_out);
/* Infer node k; its output 0, or -1 with the context's error set. */
int grad_infer(grad_ctx *c, int k);
/* A one-output op inferred at once; -1 on error. */
int grad_op(grad_ctx *c, graph_op op, const int *in, int n_in);
int grad_unary(grad_ctx *c, graph_op op, int a);
int grad_binary(grad_ctx *c, graph_op op, int a, int b);
/* A scalar constant of dtype dt. */
int grad_scalar(grad_ctx *c, double v, graph_dtype dt);
/* An int64 vector constant (shapes, axes). */
int grad_ints(grad_ctx *c, const int64_t *v, int n);
int grad_reshape(grad_ctx *c, int x, const graph_shape *to);
int grad_transpose(grad_ctx *c, int x, const int64_t *perm, int rank);
/* ReduceSum over axes (kept as size-1 dims when keepdims). */
int grad_reduce(grad_ctx *c, graph_op op, int x, const int64_t *axes, int n_axes, bool keepdims);
/* The gradient dx of a broadcast operand of shape to: summed over the
 * broadcast axes, reshaped to to. */
int grad_unbroadcast(grad_ctx *c, int dx, const graph_shape *to);
/* x broadcast to shape to (Expand). */
int grad_expand(grad_ctx *c, int x, const graph_shape *to);
/* Fail: "<source>: node 'NAME' (Op): gradient: <what>"; returns false. */
bool grad_fail(grad_ctx *c, int k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
