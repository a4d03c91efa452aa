/*
 * models_bert.c — BERT-Base and BERT-Large (models.h): the inference
 * encoder on one sequence's hidden states, and the pre-training model as
 * MLPerf trains it (embeddings, encoder on a batch with the attention
 * mask, masked-LM and next-sentence heads).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models_internal.h"

#define BERT_VOCAB 30522          /* WordPiece vocabulary of the uncased models */
#define BERT_POSITIONS 512        /* learned position embeddings */
#define BERT_TOKEN_TYPES 2        /* segment A and segment B */

/* A 1-D i64 constant of n values (a Reshape's target shape). */
static int bert_shape(model_builder *b, int n, const int64_t *v)
{
    graph_shape sh = { 1, { n } };
    return graph_add_constant(b->g, "shape", GDT_I64, &sh, v);
}

/* The last node added. */
static graph_node *last_node(model_builder *b)
{
    return &b->g->nodes[b->g->n_nodes - 1];
}

/* x reshaped to the n dims in v. */
static int bert_reshape(model_builder *b, const char *name, int x, int n, const int64_t *v)
{
    int in[2] = { x, bert_shape(b, n, v) };
    return model_node(b, GRAPH_OP_RESHAPE, name, in, 2);
}

/* x transposed by the n-axis permutation perm. */
static int bert_transpose(model_builder *b, const char *name, int x, int n, const int64_t *perm)
{
    int t = model_node(b, GRAPH_OP_TRANSPOSE, name, &x, 1);
    graph_set_attr_ints(last_node(b), "perm", perm, (size_t)n);
    return t;
}

/* The binary op on x and y. */
static int bert_binary(model_builder *b, graph_op op, const char *name, int x, int y)
{
    int in[2] = { x, y };
    return model_node(b, op, name, in, 2);
}

/* The exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)), as PyTorch exports it
 * ((x * e) * 0.5, the arrangement frontends/fusion.h moves into a matmul's
 * epilogue). */
static int bert_gelu(model_builder *b, const char *name, int x)
{
    char nm[96];
    snprintf(nm, sizeof nm, "%s.gelu.scaled", name);
    int t = bert_binary(b, GRAPH_OP_DIV, nm, x, model_scalar(b, "sqrt2", (float)sqrt(2.0)));
    snprintf(nm, sizeof nm, "%s.gelu.erf", name);
    t = model_node(b, GRAPH_OP_ERF, nm, &t, 1);
    snprintf(nm, sizeof nm, "%s.gelu.erf1", name);
    t = bert_binary(b, GRAPH_OP_ADD, nm, t, model_scalar(b, "one", 1.0f));
    snprintf(nm, sizeof nm, "%s.gelu.product", name);
    t = bert_binary(b, GRAPH_OP_MUL, nm, x, t);
    snprintf(nm, sizeof nm, "%s.gelu", name);
    return bert_binary(b, GRAPH_OP_MUL, nm, t, model_scalar(b, "half", 0.5f));
}

/* x W + bias (then act: "none" or "gelu_erf"), W [in, out]: for inference
 * one fused matmul; for training MatMul, Add (its output named name) and
 * the GELU as separate ops, which the inference compile fuses back. */
static int bert_dense(model_builder *b, const char *name, int x, int64_t in, int64_t out, const char *act)
{
    char w[96], bias[96], nm[96];
    snprintf(w, sizeof w, "%s.weight", name);
    snprintf(bias, sizeof bias, "%s.bias", name);
    int64_t wd[2] = { in, out }, bd[1] = { out };
    int ins[3] = { x, model_const(b, w, 2, wd, 1.0 / sqrt((double)in), 0), model_const(b, bias, 1, bd, 0.02, 0) };
    if (b->batch) {
        snprintf(nm, sizeof nm, "%s.matmul", name);
        int t = model_node(b, GRAPH_OP_MATMUL, nm, ins, 2);
        t = bert_binary(b, GRAPH_OP_ADD, name, t, ins[2]);
        return strcmp(act, "none") ? bert_gelu(b, name, t) : t;
    }
    int t = model_node(b, GRAPH_OP_FUSED_MATMUL, name, ins, 3);
    graph_set_attr_string(last_node(b), "activation", act);
    return t;
}

static int bert_layernorm(model_builder *b, const char *name, int x)
{
    char gn[96], bn[96];
    snprintf(gn, sizeof gn, "%s.gamma", name);
    snprintf(bn, sizeof bn, "%s.beta", name);
    int64_t d[1] = { b->hidden };
    int ins[3] = { x, model_const(b, gn, 1, d, 0.1, 1.0), model_const(b, bn, 1, d, 0.1, 0) };
    int t = model_node(b, GRAPH_OP_LAYERNORM, name, ins, 3);
    graph_set_attr_int(last_node(b), "axis", -1);
    graph_set_attr_float(last_node(b), "epsilon", 1e-12);
    return t;
}

/* Self-attention of one sequence (inference): x [seq, hidden] to the
 * heads' contexts merged back to [seq, hidden]. */
static int bert_attention_seq(model_builder *b, int l, int x)
{
    char name[64];
    int64_t dh = b->hidden / b->heads;
    int qkv[3];
    static const char *which[3] = { "query", "key", "value" };
    static const int64_t perm[3] = { 1, 0, 2 }, perm_t[3] = { 0, 2, 1 };
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "layer%d.attention.%s", l, which[i]);
        int t = bert_dense(b, name, x, b->hidden, b->hidden, "none");
        snprintf(name, sizeof name, "layer%d.attention.%s.heads", l, which[i]);
        int64_t heads[3] = { b->seq, b->heads, dh };
        t = bert_reshape(b, name, t, 3, heads);
        snprintf(name, sizeof name, "layer%d.attention.%s.transpose", l, which[i]);
        qkv[i] = bert_transpose(b, name, t, 3, perm);                    /* [heads, seq, dh] */
    }
    snprintf(name, sizeof name, "layer%d.attention.key.t", l);
    int kt = bert_transpose(b, name, qkv[1], 3, perm_t);                  /* [heads, dh, seq] */
    snprintf(name, sizeof name, "layer%d.attention.scores", l);
    int sc = bert_binary(b, GRAPH_OP_MATMUL, name, qkv[0], kt);
    snprintf(name, sizeof name, "layer%d.attention.scaled", l);
    sc = bert_binary(b, GRAPH_OP_MUL, name, sc, model_scalar(b, "scale", (float)(1.0 / sqrt((double)dh))));
    snprintf(name, sizeof name, "layer%d.attention.probs", l);
    int pr = model_node(b, GRAPH_OP_SOFTMAX, name, &sc, 1);
    graph_set_attr_int(last_node(b), "axis", -1);
    snprintf(name, sizeof name, "layer%d.attention.context", l);
    int cx = bert_binary(b, GRAPH_OP_MATMUL, name, pr, qkv[2]);           /* [heads, seq, dh] */
    snprintf(name, sizeof name, "layer%d.attention.context.transpose", l);
    cx = bert_transpose(b, name, cx, 3, perm);
    snprintf(name, sizeof name, "layer%d.attention.context.merged", l);
    int64_t merged[2] = { b->seq, b->hidden };
    return bert_reshape(b, name, cx, 2, merged);
}

/* Self-attention of a batch (training): x [batch * seq, hidden]; each
 * sequence's heads as one batch of [seq, dh] matrices ([batch * heads,
 * seq, dh]: the matmuls are 3-D), the scores seen as [batch, heads, seq,
 * seq] to add the mask (b->mask, [batch, 1, 1, seq]) before the softmax. */
static int bert_attention_batch(model_builder *b, int l, int x)
{
    char name[64];
    int64_t dh = b->hidden / b->heads, bh = b->batch * b->heads;
    int qkv[3];
    static const char *which[3] = { "query", "key", "value" };
    /* [batch, seq, heads, dh] -> [batch, heads, seq, dh]; the key to
     * [batch, heads, dh, seq] */
    static const int64_t perm[4] = { 0, 2, 1, 3 }, perm_k[4] = { 0, 2, 3, 1 };
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "layer%d.attention.%s", l, which[i]);
        int t = bert_dense(b, name, x, b->hidden, b->hidden, "none");
        snprintf(name, sizeof name, "layer%d.attention.%s.heads", l, which[i]);
        int64_t heads[4] = { b->batch, b->seq, b->heads, dh };
        t = bert_reshape(b, name, t, 4, heads);
        snprintf(name, sizeof name, "layer%d.attention.%s.transpose", l, which[i]);
        t = bert_transpose(b, name, t, 4, i == 1 ? perm_k : perm);
        snprintf(name, sizeof name, "layer%d.attention.%s.batched", l, which[i]);
        int64_t batched[3] = { bh, i == 1 ? dh : b->seq, i == 1 ? b->seq : dh };
        qkv[i] = bert_reshape(b, name, t, 3, batched);
    }
    snprintf(name, sizeof name, "layer%d.attention.scores", l);
    int sc = bert_binary(b, GRAPH_OP_MATMUL, name, qkv[0], qkv[1]);       /* [batch * heads, seq, seq] */
    snprintf(name, sizeof name, "layer%d.attention.scaled", l);
    sc = bert_binary(b, GRAPH_OP_MUL, name, sc, model_scalar(b, "scale", (float)(1.0 / sqrt((double)dh))));
    snprintf(name, sizeof name, "layer%d.attention.scores4", l);
    int64_t four[4] = { b->batch, b->heads, b->seq, b->seq };
    sc = bert_reshape(b, name, sc, 4, four);
    snprintf(name, sizeof name, "layer%d.attention.masked", l);
    sc = bert_binary(b, GRAPH_OP_ADD, name, sc, b->mask);
    snprintf(name, sizeof name, "layer%d.attention.probs", l);
    int pr = model_node(b, GRAPH_OP_SOFTMAX, name, &sc, 1);
    graph_set_attr_int(last_node(b), "axis", -1);
    snprintf(name, sizeof name, "layer%d.attention.probs3", l);
    int64_t three[3] = { bh, b->seq, b->seq };
    pr = bert_reshape(b, name, pr, 3, three);
    snprintf(name, sizeof name, "layer%d.attention.context", l);
    int cx = bert_binary(b, GRAPH_OP_MATMUL, name, pr, qkv[2]);           /* [batch * heads, seq, dh] */
    snprintf(name, sizeof name, "layer%d.attention.context.heads", l);
    int64_t ctx4[4] = { b->batch, b->heads, b->seq, dh };
    cx = bert_reshape(b, name, cx, 4, ctx4);
    snprintf(name, sizeof name, "layer%d.attention.context.transpose", l);
    cx = bert_transpose(b, name, cx, 4, perm);                            /* [batch, seq, heads, dh] */
    snprintf(name, sizeof name, "layer%d.attention.context.merged", l);
    int64_t merged[2] = { b->batch * b->seq, b->hidden };
    return bert_reshape(b, name, cx, 2, merged);
}

/* One encoder layer (post-norm, as BERT): self-attention with `heads`
 * heads, residual and LayerNorm, the GELU feed-forward, residual and
 * LayerNorm. */
static int bert_layer(model_builder *b, int l, int x)
{
    char name[64];
    int cx = b->batch ? bert_attention_batch(b, l, x) : bert_attention_seq(b, l, x);
    snprintf(name, sizeof name, "layer%d.attention.output", l);
    int ao = bert_dense(b, name, cx, b->hidden, b->hidden, "none");
    snprintf(name, sizeof name, "layer%d.attention.residual", l);
    int r1 = bert_binary(b, GRAPH_OP_ADD, name, ao, x);
    snprintf(name, sizeof name, "layer%d.attention.layernorm", l);
    int h1 = bert_layernorm(b, name, r1);
    snprintf(name, sizeof name, "layer%d.intermediate", l);
    int ff = bert_dense(b, name, h1, b->hidden, b->ffn, "gelu_erf");
    snprintf(name, sizeof name, "layer%d.output", l);
    int fo = bert_dense(b, name, ff, b->ffn, b->hidden, "none");
    snprintf(name, sizeof name, "layer%d.output.residual", l);
    int r2 = bert_binary(b, GRAPH_OP_ADD, name, fo, h1);
    snprintf(name, sizeof name, "layer%d.output.layernorm", l);
    return bert_layernorm(b, name, r2);
}

/* ---- pre-training model --------------------------------------------------- */

/* Masked positions a sequence carries (max_predictions_per_seq): 20 at
 * sequence 128 and 76 at 512, as the MLPerf BERT data is made (MLCommons
 * training, language_model/tensorflow/bert: create_pretraining_data.py
 * --max_seq_length=512 --max_predictions_per_seq=76 --masked_lm_prob=0.15;
 * the sequence-128 phase of BERT's pre-training takes 20); otherwise
 * round(0.15 x SEQ), at least 1. */
int64_t models_bert_masked_positions(int64_t seq)
{
    if (seq == 128)
        return 20;
    if (seq == 512)
        return 76;
    int64_t p = (seq * 15 + 50) / 100;
    return p < 1 ? 1 : p;
}

/* An i32 constant of shape sh: 0, step, 2 step, ... in row-major order. */
static int bert_i32_ramp(model_builder *b, const char *name, graph_shape sh, int32_t step)
{
    int64_t n = graph_shape_numel(&sh);
    int32_t *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return -1;
    for (int64_t i = 0; i < n; i++)
        v[i] = (int32_t)i * step;
    int t = graph_add_constant(b->g, name, GDT_I32, &sh, v);
    free(v);
    return t;
}

/* The embeddings: word (tied with the masked-LM decoder: *word_table),
 * position and token type looked up, summed and normalised; returns the
 * rows [batch * seq, hidden]. */
static int bert_embeddings(model_builder *b, int input_ids, int token_type_ids, int *word_table)
{
    int64_t wd[2] = { BERT_VOCAB, b->hidden }, pd[2] = { BERT_POSITIONS, b->hidden },
            td[2] = { BERT_TOKEN_TYPES, b->hidden };
    *word_table = model_const(b, "embeddings.word_embeddings", 2, wd, 0.1, 0);
    int pos_table = model_const(b, "embeddings.position_embeddings", 2, pd, 0.1, 0);
    int type_table = model_const(b, "embeddings.token_type_embeddings", 2, td, 0.1, 0);
    int words = bert_binary(b, GRAPH_OP_GATHER, "embeddings.words", *word_table, input_ids);
    int types = bert_binary(b, GRAPH_OP_GATHER, "embeddings.token_types", type_table, token_type_ids);
    int position_ids = bert_i32_ramp(b, "position_ids", (graph_shape){ 1, { b->seq } }, 1);
    int positions = bert_binary(b, GRAPH_OP_GATHER, "embeddings.positions", pos_table, position_ids);
    int t = bert_binary(b, GRAPH_OP_ADD, "embeddings.sum", words, types);
    t = bert_binary(b, GRAPH_OP_ADD, "embeddings.sum_positions", t, positions);      /* [batch, seq, hidden] */
    int64_t rows[2] = { b->batch * b->seq, b->hidden };
    t = bert_reshape(b, "embeddings.rows", t, 2, rows);
    return bert_layernorm(b, "embeddings.layernorm", t);
}

/* The additive attention mask from attention_mask [batch, seq] (1: attend,
 * 0: padding): -10000 (1 - m) as [batch, 1, 1, seq], broadcast over the
 * heads and the query positions.  Computed as Where(m == 0, -10000, 0),
 * equal for a 0/1 mask: the lowering casts only between f32 and f16, so
 * the i32 mask is compared, not cast. */
static int bert_mask(model_builder *b, int attention_mask)
{
    int32_t zero = 0;
    graph_shape scalar = { 0, { 0 } };
    int z = graph_add_constant(b->g, "zero", GDT_I32, &scalar, &zero);
    int padding = bert_binary(b, GRAPH_OP_EQUAL, "attention_mask.padding", attention_mask, z);
    int in[3] = { padding, model_scalar(b, "mask_value", -10000.0f), model_scalar(b, "zero", 0.0f) };
    int t = model_node(b, GRAPH_OP_WHERE, "attention_mask.additive", in, 3);
    int64_t four[4] = { b->batch, 1, 1, b->seq };
    return bert_reshape(b, "attention_mask.broadcast", t, 4, four);
}

/* The masked-LM head on the encoder's rows h [batch * seq, hidden]: the
 * rows at masked_lm_positions [batch, P] (row b * seq + position), dense
 * + GELU, LayerNorm, and the decoder on the word embedding table itself
 * (Gemm with transB: tied weights) plus a bias, seen as mlm_logits
 * [batch, P, vocab] (one row of classes a label of masked_lm_ids). */
static int bert_mlm_head(model_builder *b, int h, int positions, int64_t p, int word_table)
{
    int offsets = bert_i32_ramp(b, "sequence_offsets", (graph_shape){ 2, { b->batch, 1 } }, (int32_t)b->seq);
    int rows = bert_binary(b, GRAPH_OP_ADD, "cls.predictions.rows", positions, offsets);
    int t = bert_binary(b, GRAPH_OP_GATHER, "cls.predictions.gather", h, rows);       /* [batch, P, hidden] */
    int64_t flat[2] = { b->batch * p, b->hidden };
    t = bert_reshape(b, "cls.predictions.flat", t, 2, flat);
    t = bert_dense(b, "cls.predictions.transform.dense", t, b->hidden, b->hidden, "gelu_erf");
    t = bert_layernorm(b, "cls.predictions.transform.layernorm", t);
    int64_t bd[1] = { BERT_VOCAB };
    int in[3] = { t, word_table, model_const(b, "cls.predictions.bias", 1, bd, 0.02, 0) };
    t = model_node(b, GRAPH_OP_GEMM, "cls.predictions.decoder", in, 3);
    graph_set_attr_int(last_node(b), "transB", 1);
    int64_t per_sequence[3] = { b->batch, p, BERT_VOCAB };
    return bert_reshape(b, "mlm_logits", t, 3, per_sequence);
}

/* The next-sentence head: each sequence's first ([CLS]) row of h
 * [batch * seq, hidden] (rows 0, seq, 2 seq, ..: a lookup on axis 0, whose
 * gradient is the embedding gradient's scatter-add), the pooler (dense +
 * Tanh) and the classifier: nsp_logits [batch, 2]. */
static int bert_nsp_head(model_builder *b, int h)
{
    int first = bert_i32_ramp(b, "cls_rows", (graph_shape){ 1, { b->batch } }, (int32_t)b->seq);
    int t = bert_binary(b, GRAPH_OP_GATHER, "pooler.first_token", h, first);          /* [batch, hidden] */
    t = bert_dense(b, "pooler.dense", t, b->hidden, b->hidden, "none");
    t = model_node(b, GRAPH_OP_TANH, "pooler", &t, 1);
    return bert_dense(b, "nsp_logits", t, b->hidden, 2, "none");
}

/* The pre-training graph (models.h, models_build_training). */
static graph *bert_pretraining(model_builder *b, int layers, char *err, size_t err_size)
{
    int64_t p = models_bert_masked_positions(b->seq);
    int64_t bs[2] = { b->batch, b->seq }, bp[2] = { b->batch, p }, bb[1] = { b->batch };
    int input_ids = model_input(b->g, "input_ids", GDT_I32, 2, bs);
    int token_type_ids = model_input(b->g, "token_type_ids", GDT_I32, 2, bs);
    int attention_mask = model_input(b->g, "attention_mask", GDT_I32, 2, bs);
    int positions = model_input(b->g, "masked_lm_positions", GDT_I32, 2, bp);
    int masked_ids = model_input(b->g, "masked_lm_ids", GDT_I32, 2, bp);
    int nsp_label = model_input(b->g, "next_sentence_label", GDT_I32, 1, bb);
    /* the values each input takes: token ids, segments A and B, a mask of
     * 0 and 1, positions in the sequence, the two NSP classes */
    b->g->tensors[input_ids].value_limit = b->g->tensors[masked_ids].value_limit = BERT_VOCAB;
    b->g->tensors[token_type_ids].value_limit = b->g->tensors[attention_mask].value_limit = 2;
    b->g->tensors[nsp_label].value_limit = 2;
    b->g->tensors[positions].value_limit = b->seq;
    int word_table;
    int h = bert_embeddings(b, input_ids, token_type_ids, &word_table);
    b->mask = bert_mask(b, attention_mask);
    for (int l = 0; l < layers; l++)
        h = bert_layer(b, l, h);
    graph_add_output(b->g, bert_mlm_head(b, h, positions, p, word_table));
    graph_add_output(b->g, bert_nsp_head(b, h));
    /* no folding: a weight read only through constants (the position
     * table's lookup of positions 0 .. seq - 1) stays a weight */
    return model_finish(b->g, false, err, err_size);
}

/* bert-base|bert-large[:sSEQ][:lLAYERS] (and [:bBATCH] for training):
 * the options into *seq, *layers, *batch; false with err on a bad one. */
static bool bert_parse(const char *spec, bool large, bool training, long *seq, long *layers, long *batch, char *err,
                       size_t err_size)
{
    const char *opt = spec + (large ? 10 : 9);
    while (*opt) {
        char *end = NULL;
        long *v = opt[0] != ':' ? NULL : opt[1] == 's' ? seq : opt[1] == 'l' ? layers
                : opt[1] == 'b' && training ? batch : NULL;
        if (v)
            *v = model_spec_number(opt + 2, &end);
        if (!end || end == opt + 2 || (*end && *end != ':') || *seq < 2 || *seq > 512 || *seq % 2 || *layers < 1 ||
            *layers > 24 || *batch < 1 || *batch > 64) {
            /* What is wrong, when it is one value: "SEQ is 0". */
            int n = end && end > opt + 2 && (!*end || *end == ':') ? (int)(end - (opt + 2)) : 0;
            const char *what = opt[1] == 's' ? "SEQ is " : opt[1] == 'l' ? "LAYERS is " : "BATCH is ";
            snprintf(err, err_size, "%s: expected %s[:sSEQ][:lLAYERS]%s (SEQ even, 2..512; LAYERS 1..24%s)%s%s%.*s",
                     spec, large ? "bert-large" : "bert-base", training ? "[:bBATCH]" : "",
                     training ? "; BATCH 1..64" : "", n ? ": " : "", n ? what : "", n, opt + 2);
            return false;
        }
        opt = end;
    }
    return true;
}

graph *models_build_bert(const char *spec, bool training, char *err, size_t err_size)
{
    bool large = !strncmp(spec, "bert-large", 10);
    long seq = 128, layers = 1, batch = 1;
    if (!bert_parse(spec, large, training, &seq, &layers, &batch, err, err_size))
        return NULL;
    model_builder b = { .g = graph_new(spec, 17), .seed = 0x243f6a8885a308d3ull, .seq = seq,
                        .hidden = large ? 1024 : 768, .heads = large ? 16 : 12, .ffn = large ? 4096 : 3072,
                        .batch = training ? batch : 0, .mask = -1 };
    if (!b.g) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    if (training)
        return bert_pretraining(&b, (int)layers, err, err_size);
    int64_t xd[2] = { seq, b.hidden };
    int h = model_input(b.g, "x", GDT_F32, 2, xd);
    for (int l = 0; l < layers; l++)
        h = bert_layer(&b, l, h);
    graph_add_output(b.g, h);
    return model_finish(b.g, true, err, err_size);
}
