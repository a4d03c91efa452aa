/*
 * models_internal.h — what the built-in models' files share (models.c,
 * models_bert.c, models_resnet.c): the synthetic weights' generator, the
 * spec parser's number reader, and a small builder that adds constants,
 * nodes and inputs to a graph.
 */
#ifndef IPUSIM_WORKLOADS_MODELS_INTERNAL_H
#define IPUSIM_WORKLOADS_MODELS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frontends/graph.h"

/* A graph being built: the weights' generator state and, for BERT, the
 * encoder's sizes.  batch is 0 for the inference encoder (one sequence,
 * rows [seq, hidden], fused matmuls); the training graphs set it and
 * build from plain ONNX ops. */
typedef struct model_builder {
    graph *g;
    uint64_t seed;
    int64_t seq, hidden, heads, ffn;
    int64_t batch;
    int mask;            /* the additive attention mask [batch, 1, 1, seq], or -1 */
} model_builder;

/* The next number of the xorshift generator, uniform in [-1, 1). */
double model_uniform(uint64_t *s);
/* A number in a built-in spec's option at t: digits, saturating at
 * LONG_MAX, or -1 for a minus sign and digits; *end past them (t when
 * there are none). */
long model_spec_number(const char *t, char **end);

/* An f32 constant of this shape, uniform in offset +- scale; -1 when out
 * of host memory. */
int model_const(model_builder *b, const char *name, int rank, const int64_t *dims, double scale, double offset);
/* A node of one output (named from the node's name); returns the output. */
int model_node(model_builder *b, graph_op op, const char *name, const int *in, int n_in);
/* A scalar f32 constant. */
int model_scalar(model_builder *b, const char *name, float v);
/* A graph input of this dtype and shape. */
int model_input(graph *g, const char *name, graph_dtype dtype, int rank, const int64_t *dims);
/* Sort and infer g (folding constants when fold); NULL with err (g freed)
 * on a failure. */
graph *model_finish(graph *g, bool fold, char *err, size_t err_size);

/* BERT (models_bert.c): the inference encoder or the pre-training model. */
graph *models_build_bert(const char *spec, bool training, char *err, size_t err_size);
/* The whole ResNet-50 v1.5 (models_resnet.c); training: BatchNormalization
 * on batch statistics and the labels input. */
graph *models_build_resnet50(const char *spec, bool training, char *err, size_t err_size);

#endif
