/*
 * models.h — built-in models, built as graphs in code (frontends/graph.h)
 * with synthetic weights, so that `ipusim compile` needs no model file.
 *
 *   matmul:MxKxN[:f16|:f32]   C[M x N] = A[M x K] B[K x N], B a constant
 *                             (weights), A the input "a", C the output "c";
 *                             f16 by default (e.g. matmul:384x1024x4096 is a
 *                             BERT-Large projection at sequence 384)
 *   resnet50[:bN][:sSIZE]     the whole ResNet-50 v1.5 for inference, f32,
 *                             batch N (default 1) of SIZE x SIZE images
 *                             (default 224, a multiple of 32): input "x"
 *                             [N, 3, SIZE, SIZE], output "fc" the logits
 *                             [N, 1000]; each Conv followed by a
 *                             BatchNormalization and (but the last of a
 *                             block) a Relu as exporters write it, which the
 *                             compiler folds and fuses; bottleneck blocks
 *                             (3, 4, 6, 3) with the stride on the 3x3 and
 *                             1x1 projections, max pool after the stem,
 *                             global average pool and the classifier (Gemm).
 *                             Compile with --f16-matmul for the f16 AMP (as
 *                             the IPU runs it), without for the f32 path
 *   resnet50:LAYER[:bN]       one convolution of ResNet-50 v1.5, f16, batch N
 *                             (default 1): conv1 (7x7 stride 2, 224x224, the
 *                             input's 3 channels padded to 4, as Graphcore's
 *                             IPU ResNet-50 does), res2_3x3 (3x3, 64 -> 64 at
 *                             56x56), res3_3x3s2 (3x3 stride 2, 128 -> 128,
 *                             56x56 -> 28x28), res3_proj (1x1 stride 2,
 *                             256 -> 512, the projection shortcut), and in
 *                             f32 maxpool (3x3 stride 2 after the stem,
 *                             112x112x64) and avgpool (the global average
 *                             pool, 7x7x2048)
 *   bert-base[:sSEQ][:lN]     N encoder layers (default 1) of BERT-Base
 *   bert-large[:sSEQ][:lN]    (hidden 768, 12 heads, FFN 3072) or BERT-Large
 *                             (1024, 16, 4096) on SEQ tokens (default 128):
 *                             input "x" the hidden states [SEQ, hidden] f32,
 *                             output the last layer's; f32 activations with
 *                             the matmuls computed in f16 on the AMP (f32
 *                             partial sums), the mixed precision BERT is run
 *                             in on the IPU; the softmax, layer norms and
 *                             GELU in f32.
 *
 * Synthetic weights are uniform in [-1, 1) / sqrt(K) from a fixed seed, so
 * every compile of a model gives the same executable.
 *
 * Training models (models_build_training): the forward graph as MLPerf
 * trains the model, in plain ONNX ops (no fused nodes: the inference
 * compile's fusions still apply), its label inputs, and the loss to put on
 * its outputs (models_training_loss).  Weights are graph constants; the
 * gradient pass makes them trainable.  The graph is inferred without
 * constant folding, so that every weight stays an input of the node that
 * reads it.
 *   bert-base|bert-large[:sSEQ][:lN][:bB]
 *                             BERT pre-training: N encoder layers (default
 *                             1, as for inference), batch B (default 1) of
 *                             SEQ tokens (default 128).  Inputs, all i32:
 *                             input_ids, token_type_ids, attention_mask
 *                             [B, SEQ] (1 attend, 0 padding: added to the
 *                             scores as -10000 (1 - m) over every head and
 *                             query position), masked_lm_positions,
 *                             masked_lm_ids [B, P] (P =
 *                             models_bert_masked_positions(SEQ): 20 at 128,
 *                             76 at 512 as MLPerf's data has),
 *                             next_sentence_label [B].  Word (30522 x
 *                             hidden), position (512) and token-type (2)
 *                             embeddings summed and normalised; the encoder
 *                             on the rows [B x SEQ, hidden] (attention per
 *                             sequence and head); outputs mlm_logits
 *                             [B, P, 30522] (the masked rows, dense + GELU,
 *                             LayerNorm, the word embedding table itself as
 *                             the decoder: Gemm with transB, tied weights,
 *                             plus a bias) and nsp_logits [B, 2] (the [CLS]
 *                             row, pooler dense + Tanh, classifier).  Loss:
 *                             softmax cross-entropy on both (labels shaped
 *                             as the logits without their last axis).
 *   resnet50[:bN][:sSIZE]     the whole ResNet-50 v1.5 as for inference, but
 *                             every BatchNormalization with training_mode=1
 *                             (the batch's statistics) and each block's last
 *                             one's scale starting at zero (the MLPerf
 *                             reference's initialisation); inputs x and labels
 *                             [N] i32, output fc; loss "softmax-ce:fc:labels".
 * Precision: activations are f32 (the element-wise codelets are f32 only)
 * and the matmuls and convolutions are computed in f16 on the AMP with f32
 * partial sums when compiled with --f16-matmul (lower_options.f16_matmul),
 * as for the inference models.  Graphcore's MLPerf submissions train both
 * with f16 weights and activations and static loss scaling: BERT with f16
 * partials and stochastic rounding, its optimizer state in streaming
 * memory (LAMB); ResNet-50 with half partials (SGD with momentum, LARS at
 * large batch).
 */
#ifndef IPUSIM_WORKLOADS_MODELS_H
#define IPUSIM_WORKLOADS_MODELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frontends/graph.h"

/* true when spec names a built-in model (its form, not its validity). */
bool models_is_builtin(const char *spec);
/* Build it (inferred, ready to lower); NULL with err on a bad spec. */
graph *models_build(const char *spec, char *err, size_t err_size);

/* Build a training model (above): the forward graph, inferred; NULL with
 * err on a spec that names none. */
graph *models_build_training(const char *spec, char *err, size_t err_size);
/* The loss of a training model's graph, for the gradient pass: a
 * '+'-separated list of softmax-ce:OUTPUT:LABELS terms (the mean softmax
 * cross-entropy of the logits OUTPUT [..., classes] against the i32
 * classes LABELS [...]); NULL for a graph that is not one. */
const char *models_training_loss(const graph *g);
/* Masked positions a BERT pre-training sequence of seq tokens carries
 * (MLPerf's max_predictions_per_seq). */
int64_t models_bert_masked_positions(int64_t seq);

#endif
