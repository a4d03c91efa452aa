/*
 * models.c — the built-in models (models.h).
 */
#include "models.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/fp16.h"

bool models_is_builtin(const char *spec)
{
    return strncmp(spec, "matmul:", 7) == 0 || strncmp(spec, "resnet50", 8) == 0 ||
           strncmp(spec, "bert-base", 9) == 0 || strncmp(spec, "bert-large", 10) == 0;
}

static double next_uniform(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* A number in a built-in spec's option at t: digits, saturating at
 * LONG_MAX, or -1 for a minus sign and digits (out of every range, and
 * named as written in the message); *end past them (t when there are
 * none). */
static long spec_number(const char *t, char **end)
{
    if (t[0] == '-' && strspn(t + 1, "0123456789")) {
        *end = (char *)t + 1 + strspn(t + 1, "0123456789");
        return -1;
    }
    size_t digits = strspn(t, "0123456789");
    *end = (char *)t + digits;
    if (!digits)
        return 0;
    errno = 0;
    long v = strtol(t, NULL, 10);
    return errno == ERANGE ? LONG_MAX : v;
}

/* One size of a built-in spec at *p, up to the next 'x', ':' or the end:
 * digits only, into *v; *p past it.  false with err saying what is wrong
 * (naming the spec and the size as what): no digits, a sign, zero, or more
 * than max. */
static bool spec_size(const char *spec, const char *what, const char **p, uint64_t max, uint64_t *v, char *err,
                      size_t err_size)
{
    size_t len = strcspn(*p, "x:");
    const char *text = *p;
    size_t digits = strspn(text, "0123456789");
    bool sign = (text[0] == '-' || text[0] == '+') && len > 1 && strspn(text + 1, "0123456789") == len - 1;
    if (sign && text[0] == '-') {
        snprintf(err, err_size, "%s: %s is %.*s: a size must be a positive integer", spec, what, (int)len, text);
        return false;
    }
    if (!len || digits != len) {
        snprintf(err, err_size, "%s: expected matmul:MxKxN[:f16|:f32] with M, K, N positive", spec);
        return false;
    }
    errno = 0;
    unsigned long long n = strtoull(text, NULL, 10);
    if (n == 0) {
        snprintf(err, err_size, "%s: expected matmul:MxKxN[:f16|:f32] with M, K, N positive", spec);
        return false;
    }
    if (errno == ERANGE || n > max) {
        snprintf(err, err_size, "%s: %s is %.*s: at most %llu for a built-in model", spec, what, (int)len, text,
                 (unsigned long long)max);
        return false;
    }
    *v = n;
    *p = text + len;
    return true;
}

static graph *build_matmul(const char *spec, char *err, size_t err_size)
{
    uint64_t m, k, n;
    const char *p = spec + 7;
    if (!spec_size(spec, "M", &p, 1u << 20, &m, err, err_size))
        return NULL;
    if (*p != 'x')
        goto malformed;
    p++;
    if (!spec_size(spec, "K", &p, 1u << 20, &k, err, err_size))
        return NULL;
    if (*p != 'x')
        goto malformed;
    p++;
    if (!spec_size(spec, "N", &p, 1u << 20, &n, err, err_size))
        return NULL;
    const char *type = *p ? p + 1 : "f16";
    if ((*p && *p != ':') || (strcmp(type, "f16") && strcmp(type, "f32")))
        goto malformed;
    if (k * n > (1ull << 28)) {
        snprintf(err, err_size, "%s: K x N is %llu weights: at most %llu for a built-in model", spec,
                 (unsigned long long)(k * n), 1ull << 28);
        return NULL;
    }
    bool f16 = !strcmp(type, "f16");
    graph_dtype dt = f16 ? GDT_F16 : GDT_F32;
    graph *g = graph_new(spec, 17);
    if (!g) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    size_t eb = f16 ? 2 : 4;
    void *w = malloc(k * n * eb);
    if (!w) {
        graph_free(g);
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    uint64_t s = 0x2545f4914f6cdd1dull;
    double scale = 1.0 / sqrt((double)k);
    for (size_t i = 0; i < k * n; i++) {
        float v = (float)(next_uniform(&s) * scale);
        if (f16)
            ((f16_t *)w)[i] = fp16_from_f32(v);
        else
            ((float *)w)[i] = v;
    }
    int a = graph_add_tensor(g, "a");
    graph_shape sa = { 2, { (int64_t)m, (int64_t)k } }, sb = { 2, { (int64_t)k, (int64_t)n } };
    g->tensors[a].dtype = dt;
    g->tensors[a].shape = sa;
    g->tensors[a].shape_known = true;
    graph_add_input(g, a);
    int b = graph_add_constant(g, "b", dt, &sb, w);
    free(w);
    int c = graph_add_tensor(g, "c");
    int ins[2] = { a, b };
    graph_add_node(g, GRAPH_OP_MATMUL, "matmul", ins, 2, &c, 1);
    graph_add_output(g, c);
    if (!graph_sort(g, err, err_size) || !graph_infer_all(g, true, err, err_size)) {
        graph_free(g);
        return NULL;
    }
    return g;
malformed:
    snprintf(err, err_size, "%s: expected matmul:MxKxN[:f16|:f32] with M, K, N positive", spec);
    return NULL;
}

/* ResNet-50 (v1.5) convolution layers, f16, batch from ":bN". */
typedef struct conv_layer {
    const char *name;
    int64_t c, h, w, k, r, stride, pad;
    const char *what;
} conv_layer;

static const conv_layer resnet50_layers[] = {
    { "conv1", 4, 224, 224, 64, 7, 2, 3,
      "the 7x7 stride-2 stem, input channels padded 3 -> 4 (as Graphcore's IPU ResNet-50 does)" },
    { "res2_3x3", 64, 56, 56, 64, 3, 1, 1, "a 3x3 64-channel layer of stage 2 at 56x56" },
    { "res3_3x3s2", 128, 56, 56, 128, 3, 2, 1, "the strided 3x3 of stage 3's first block (56x56 -> 28x28)" },
    { "res3_proj", 256, 56, 56, 512, 1, 2, 0, "the 1x1 stride-2 projection shortcut of stage 3" },
};

/* ResNet-50's pools, f32: the 3x3 stride-2 max pool after the stem and
 * the global average pool before the classifier. */
static graph *build_pool(const char *spec, const char *name, long batch, char *err, size_t err_size)
{
    bool max = !strcmp(name, "maxpool");
    int64_t c = max ? 64 : 2048, hw = max ? 112 : 7;
    graph *g = graph_new(spec, 17);
    if (!g) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    int x = graph_add_tensor(g, "x");
    g->tensors[x].dtype = GDT_F32;
    g->tensors[x].shape = (graph_shape){ 4, { batch, c, hw, hw } };
    g->tensors[x].shape_known = true;
    graph_add_input(g, x);
    int y = graph_add_tensor(g, "y");
    int node = graph_add_node(g, max ? GRAPH_OP_MAXPOOL : GRAPH_OP_GLOBALAVERAGEPOOL, name, &x, 1, &y, 1);
    if (max) {
        int64_t k2[2] = { 3, 3 }, st[2] = { 2, 2 }, pads[4] = { 1, 1, 1, 1 };
        graph_set_attr_ints(&g->nodes[node], "kernel_shape", k2, 2);
        graph_set_attr_ints(&g->nodes[node], "strides", st, 2);
        graph_set_attr_ints(&g->nodes[node], "pads", pads, 4);
    }
    graph_add_output(g, y);
    if (!graph_sort(g, err, err_size) || !graph_infer_all(g, true, err, err_size)) {
        graph_free(g);
        return NULL;
    }
    return g;
}

static graph *build_conv(const char *spec, char *err, size_t err_size)
{
    const char *name = spec + 9;
    size_t len = strcspn(name, ":");
    long batch = 1;
    if (name[len]) {
        char *end = NULL;          /* stays NULL when the option is not :bN */
        if (strncmp(name + len, ":b", 2) != 0 || (batch = spec_number(name + len + 2, &end)) < 1 || batch > 64 ||
            *end) {
            int n = end && end > name + len + 2 && !*end ? (int)(end - (name + len + 2)) : 0;
            snprintf(err, err_size, "%s: expected resnet50:LAYER[:bN] with a batch N of 1..64%s%.*s", spec,
                     n ? ": N is " : "", n, name + len + 2);
            return NULL;
        }
    }
    if ((len == 7 && !strncmp(name, "maxpool", 7)) || (len == 7 && !strncmp(name, "avgpool", 7))) {
        char which[8];
        memcpy(which, name, 7);
        which[7] = 0;
        return build_pool(spec, which, batch, err, err_size);
    }
    const conv_layer *L = NULL;
    for (size_t i = 0; i < sizeof resnet50_layers / sizeof resnet50_layers[0]; i++)
        if (strlen(resnet50_layers[i].name) == len && !strncmp(name, resnet50_layers[i].name, len))
            L = &resnet50_layers[i];
    if (!L) {
        snprintf(err, err_size, "%s: unknown ResNet-50 layer (conv1, res2_3x3, res3_3x3s2, res3_proj, maxpool, avgpool)", spec);
        return NULL;
    }
    graph *g = graph_new(spec, 17);
    size_t nw = (size_t)(L->k * L->c * L->r * L->r);
    f16_t *w = malloc(nw * sizeof *w);
    if (!g || !w) {
        graph_free(g);
        free(w);
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    uint64_t s = 0x9e3779b97f4a7c15ull;
    double scale = 1.0 / sqrt((double)(L->c * L->r * L->r));
    for (size_t i = 0; i < nw; i++) {
        size_t c = (i / (size_t)(L->r * L->r)) % (size_t)L->c;
        /* conv1's padded fourth channel has zero weights */
        w[i] = fp16_from_f32(!strcmp(L->name, "conv1") && c == 3 ? 0.0f : (float)(next_uniform(&s) * scale));
    }
    int x = graph_add_tensor(g, "x");
    g->tensors[x].dtype = GDT_F16;
    g->tensors[x].shape = (graph_shape){ 4, { batch, L->c, L->h, L->w } };
    g->tensors[x].shape_known = true;
    graph_add_input(g, x);
    graph_shape ws = { 4, { L->k, L->c, L->r, L->r } };
    int wt = graph_add_constant(g, "w", GDT_F16, &ws, w);
    free(w);
    int y = graph_add_tensor(g, "y");
    int ins[2] = { x, wt };
    int node = graph_add_node(g, GRAPH_OP_CONV, L->name, ins, 2, &y, 1);
    int64_t k2[2] = { L->r, L->r }, st[2] = { L->stride, L->stride }, pads[4] = { L->pad, L->pad, L->pad, L->pad };
    graph_set_attr_ints(&g->nodes[node], "kernel_shape", k2, 2);
    graph_set_attr_ints(&g->nodes[node], "strides", st, 2);
    graph_set_attr_ints(&g->nodes[node], "pads", pads, 4);
    graph_add_output(g, y);
    if (!graph_sort(g, err, err_size) || !graph_infer_all(g, true, err, err_size)) {
        graph_free(g);
        return NULL;
    }
    return g;
}

/* ---- BERT encoder layers ------------------------------------------------ */

typedef struct bert_builder {
    graph *g;
    uint64_t seed;
    int64_t seq, hidden, heads, ffn;
} bert_builder;

static int bert_const(bert_builder *b, const char *name, int rank, const int64_t *dims, double scale, double offset)
{
    graph_shape sh = { rank, { 0 } };
    size_t n = 1;
    for (int d = 0; d < rank; d++) {
        sh.dims[d] = dims[d];
        n *= (size_t)dims[d];
    }
    float *v = malloc(n * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(offset + next_uniform(&b->seed) * scale);
    int t = graph_add_constant(b->g, name, GDT_F32, &sh, v);
    free(v);
    return t;
}

static int bert_node(bert_builder *b, graph_op op, const char *name, const int *in, int n_in)
{
    char *out_name = graph_unique_name(b->g, name);
    int out = graph_add_tensor(b->g, out_name);
    free(out_name);
    graph_add_node(b->g, op, name, in, n_in, &out, 1);
    return out;
}

static int bert_ints(bert_builder *b, const char *name, int64_t a, int64_t c, int64_t d)
{
    int64_t v[3] = { a, c, d };
    int n = d ? 3 : 2;
    graph_shape sh = { 1, { n } };
    return graph_add_constant(b->g, name, GDT_I64, &sh, v);
}

/* A fused matmul x W + bias (and activation), W [in, out]. */
static int bert_dense(bert_builder *b, const char *name, int x, int64_t in, int64_t out, const char *act)
{
    char w[64], bias[64];
    snprintf(w, sizeof w, "%s.weight", name);
    snprintf(bias, sizeof bias, "%s.bias", name);
    int64_t wd[2] = { in, out }, bd[1] = { out };
    int ins[3] = { x, bert_const(b, w, 2, wd, 1.0 / sqrt((double)in), 0), bert_const(b, bias, 1, bd, 0.02, 0) };
    int t = bert_node(b, GRAPH_OP_FUSED_MATMUL, name, ins, 3);
    graph_set_attr_string(&b->g->nodes[b->g->n_nodes - 1], "activation", act);
    return t;
}

static int bert_layernorm(bert_builder *b, const char *name, int x)
{
    char gn[64], bn[64];
    snprintf(gn, sizeof gn, "%s.gamma", name);
    snprintf(bn, sizeof bn, "%s.beta", name);
    int64_t d[1] = { b->hidden };
    int ins[3] = { x, bert_const(b, gn, 1, d, 0.1, 1.0), bert_const(b, bn, 1, d, 0.1, 0) };
    int t = bert_node(b, GRAPH_OP_LAYERNORM, name, ins, 3);
    graph_set_attr_int(&b->g->nodes[b->g->n_nodes - 1], "axis", -1);
    graph_set_attr_float(&b->g->nodes[b->g->n_nodes - 1], "epsilon", 1e-12);
    return t;
}

/* One encoder layer (post-norm, as BERT): self-attention with `heads`
 * heads, residual and LayerNorm, the GELU feed-forward, residual and
 * LayerNorm. */
static int bert_layer(bert_builder *b, int l, int x)
{
    char name[64];
    int64_t dh = b->hidden / b->heads;
    int qkv[3];
    static const char *which[3] = { "query", "key", "value" };
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "layer%d.attention.%s", l, which[i]);
        int t = bert_dense(b, name, x, b->hidden, b->hidden, "none");
        snprintf(name, sizeof name, "layer%d.attention.%s.heads", l, which[i]);
        int in[2] = { t, bert_ints(b, "shape", b->seq, b->heads, dh) };
        t = bert_node(b, GRAPH_OP_RESHAPE, name, in, 2);
        snprintf(name, sizeof name, "layer%d.attention.%s.transpose", l, which[i]);
        t = bert_node(b, GRAPH_OP_TRANSPOSE, name, &t, 1);                 /* [heads, seq, dh] */
        int64_t perm[3] = { 1, 0, 2 };
        graph_set_attr_ints(&b->g->nodes[b->g->n_nodes - 1], "perm", perm, 3);
        qkv[i] = t;
    }
    snprintf(name, sizeof name, "layer%d.attention.key.t", l);
    int kt = bert_node(b, GRAPH_OP_TRANSPOSE, name, &qkv[1], 1);           /* [heads, dh, seq] */
    int64_t perm_t[3] = { 0, 2, 1 };
    graph_set_attr_ints(&b->g->nodes[b->g->n_nodes - 1], "perm", perm_t, 3);
    snprintf(name, sizeof name, "layer%d.attention.scores", l);
    int in2[2] = { qkv[0], kt };
    int sc = bert_node(b, GRAPH_OP_MATMUL, name, in2, 2);
    float inv = (float)(1.0 / sqrt((double)dh));
    graph_shape scalar = { 0, { 0 } };
    int scale = graph_add_constant(b->g, "scale", GDT_F32, &scalar, &inv);
    snprintf(name, sizeof name, "layer%d.attention.scaled", l);
    int in3[2] = { sc, scale };
    sc = bert_node(b, GRAPH_OP_MUL, name, in3, 2);
    snprintf(name, sizeof name, "layer%d.attention.probs", l);
    int pr = bert_node(b, GRAPH_OP_SOFTMAX, name, &sc, 1);
    graph_set_attr_int(&b->g->nodes[b->g->n_nodes - 1], "axis", -1);
    snprintf(name, sizeof name, "layer%d.attention.context", l);
    int in4[2] = { pr, qkv[2] };
    int cx = bert_node(b, GRAPH_OP_MATMUL, name, in4, 2);                  /* [heads, seq, dh] */
    snprintf(name, sizeof name, "layer%d.attention.context.transpose", l);
    cx = bert_node(b, GRAPH_OP_TRANSPOSE, name, &cx, 1);
    int64_t perm[3] = { 1, 0, 2 };
    graph_set_attr_ints(&b->g->nodes[b->g->n_nodes - 1], "perm", perm, 3);
    snprintf(name, sizeof name, "layer%d.attention.context.merged", l);
    int in5[2] = { cx, bert_ints(b, "shape", b->seq, b->hidden, 0) };
    cx = bert_node(b, GRAPH_OP_RESHAPE, name, in5, 2);
    snprintf(name, sizeof name, "layer%d.attention.output", l);
    int ao = bert_dense(b, name, cx, b->hidden, b->hidden, "none");
    snprintf(name, sizeof name, "layer%d.attention.residual", l);
    int in6[2] = { ao, x };
    int r1 = bert_node(b, GRAPH_OP_ADD, name, in6, 2);
    snprintf(name, sizeof name, "layer%d.attention.layernorm", l);
    int h1 = bert_layernorm(b, name, r1);
    snprintf(name, sizeof name, "layer%d.intermediate", l);
    int ff = bert_dense(b, name, h1, b->hidden, b->ffn, "gelu_erf");
    snprintf(name, sizeof name, "layer%d.output", l);
    int fo = bert_dense(b, name, ff, b->ffn, b->hidden, "none");
    snprintf(name, sizeof name, "layer%d.output.residual", l);
    int in7[2] = { fo, h1 };
    int r2 = bert_node(b, GRAPH_OP_ADD, name, in7, 2);
    snprintf(name, sizeof name, "layer%d.output.layernorm", l);
    return bert_layernorm(b, name, r2);
}

static graph *build_bert(const char *spec, char *err, size_t err_size)
{
    bool large = !strncmp(spec, "bert-large", 10);
    const char *opt = spec + (large ? 10 : 9);
    long seq = 128, layers = 1;
    while (*opt) {
        char *end;
        if (opt[0] == ':' && opt[1] == 's') {
            seq = spec_number(opt + 2, &end);
        } else if (opt[0] == ':' && opt[1] == 'l') {
            layers = spec_number(opt + 2, &end);
        } else {
            end = NULL;
        }
        if (!end || end == opt + 2 || (*end && *end != ':') || seq < 2 || seq > 512 || seq % 2 || layers < 1 ||
            layers > 24) {
            /* What is wrong, when it is one value: "SEQ is 0". */
            int n = end && end > opt + 2 && (!*end || *end == ':') ? (int)(end - (opt + 2)) : 0;
            snprintf(err, err_size, "%s: expected %s[:sSEQ][:lLAYERS] (SEQ even, 2..512; LAYERS 1..24)%s%s%.*s", spec,
                     large ? "bert-large" : "bert-base", n ? ": " : "", n ? (opt[1] == 's' ? "SEQ is " : "LAYERS is ")
                     : "", n, opt + 2);
            return NULL;
        }
        opt = end;
    }
    bert_builder b = { .g = graph_new(spec, 17), .seed = 0x243f6a8885a308d3ull, .seq = seq,
                       .hidden = large ? 1024 : 768, .heads = large ? 16 : 12, .ffn = large ? 4096 : 3072 };
    if (!b.g) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    int x = graph_add_tensor(b.g, "x");
    b.g->tensors[x].dtype = GDT_F32;
    b.g->tensors[x].shape = (graph_shape){ 2, { seq, b.hidden } };
    b.g->tensors[x].shape_known = true;
    graph_add_input(b.g, x);
    int h = x;
    for (int l = 0; l < layers; l++)
        h = bert_layer(&b, l, h);
    graph_add_output(b.g, h);
    if (!graph_sort(b.g, err, err_size) || !graph_infer_all(b.g, true, err, err_size)) {
        graph_free(b.g);
        return NULL;
    }
    return b.g;
}

/* ---- ResNet-50 v1.5, whole ------------------------------------------------ */

/* Conv (no bias) -> BatchNormalization (inference) [-> Relu], as exported:
 * the compiler folds the BatchNormalization into the weights and the Relu
 * into the convolution's epilogue (frontends/fusion.h). */
static int rn_conv_bn(bert_builder *b, const char *name, int x, int64_t cin, int64_t cout, int64_t k, int64_t stride,
                      bool relu)
{
    char w[96], nm[96];
    snprintf(w, sizeof w, "%s.weight", name);
    int64_t wd[4] = { cout, cin, k, k }, cd[1] = { cout };
    /* He initialisation: uniform with variance 2 / fan-in. */
    int ins[2] = { x, bert_const(b, w, 4, wd, sqrt(6.0 / (double)(cin * k * k)), 0) };
    int t = bert_node(b, GRAPH_OP_CONV, name, ins, 2);
    graph_node *cn = &b->g->nodes[b->g->n_nodes - 1];
    int64_t k2[2] = { k, k }, st[2] = { stride, stride }, pads[4] = { k / 2, k / 2, k / 2, k / 2 };
    graph_set_attr_ints(cn, "kernel_shape", k2, 2);
    graph_set_attr_ints(cn, "strides", st, 2);
    graph_set_attr_ints(cn, "pads", pads, 4);
    static const char *const part[4] = { "scale", "bias", "mean", "var" };
    static const double spread[4] = { 0.1, 0.1, 0.1, 0.1 }, centre[4] = { 1.0, 0.0, 0.0, 1.0 };
    int bn_in[5] = { t, 0, 0, 0, 0 };
    for (int q = 0; q < 4; q++) {
        snprintf(nm, sizeof nm, "%s.bn.%s", name, part[q]);
        bn_in[q + 1] = bert_const(b, nm, 1, cd, spread[q], centre[q]);
    }
    snprintf(nm, sizeof nm, "%s.bn", name);
    t = bert_node(b, GRAPH_OP_BATCHNORM, nm, bn_in, 5);
    graph_set_attr_float(&b->g->nodes[b->g->n_nodes - 1], "epsilon", 1e-5);
    if (relu) {
        snprintf(nm, sizeof nm, "%s.relu", name);
        t = bert_node(b, GRAPH_OP_RELU, nm, &t, 1);
    }
    return t;
}

/* A bottleneck block: 1x1 (mid), 3x3 (mid, the block's stride: v1.5),
 * 1x1 (out), plus the shortcut (a 1x1 projection where the shape
 * changes), then Relu. */
static int rn_block(bert_builder *b, const char *name, int x, int64_t cin, int64_t mid, int64_t cout, int64_t stride)
{
    char nm[96];
    snprintf(nm, sizeof nm, "%s.conv1", name);
    int t = rn_conv_bn(b, nm, x, cin, mid, 1, 1, true);
    snprintf(nm, sizeof nm, "%s.conv2", name);
    t = rn_conv_bn(b, nm, t, mid, mid, 3, stride, true);
    snprintf(nm, sizeof nm, "%s.conv3", name);
    t = rn_conv_bn(b, nm, t, mid, cout, 1, 1, false);
    int sc = x;
    if (cin != cout || stride != 1) {
        snprintf(nm, sizeof nm, "%s.downsample", name);
        sc = rn_conv_bn(b, nm, x, cin, cout, 1, stride, false);
    }
    int in2[2] = { t, sc };
    snprintf(nm, sizeof nm, "%s.add", name);
    t = bert_node(b, GRAPH_OP_ADD, nm, in2, 2);
    snprintf(nm, sizeof nm, "%s.relu", name);
    return bert_node(b, GRAPH_OP_RELU, nm, &t, 1);
}

static graph *build_resnet50(const char *spec, long batch, long size, char *err, size_t err_size)
{
    bert_builder b = { .g = graph_new(spec, 17), .seed = 0x13198a2e03707344ull };
    if (!b.g) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    int x = graph_add_tensor(b.g, "x");
    b.g->tensors[x].dtype = GDT_F32;
    b.g->tensors[x].shape = (graph_shape){ 4, { batch, 3, size, size } };
    b.g->tensors[x].shape_known = true;
    graph_add_input(b.g, x);
    int t = rn_conv_bn(&b, "conv1", x, 3, 64, 7, 2, true);
    t = bert_node(&b, GRAPH_OP_MAXPOOL, "maxpool", &t, 1);
    graph_node *mp = &b.g->nodes[b.g->n_nodes - 1];
    int64_t k2[2] = { 3, 3 }, st[2] = { 2, 2 }, pads[4] = { 1, 1, 1, 1 };
    graph_set_attr_ints(mp, "kernel_shape", k2, 2);
    graph_set_attr_ints(mp, "strides", st, 2);
    graph_set_attr_ints(mp, "pads", pads, 4);
    static const struct { int64_t mid, out, blocks, stride; } stages[4] = {
        { 64, 256, 3, 1 }, { 128, 512, 4, 2 }, { 256, 1024, 6, 2 }, { 512, 2048, 3, 2 },
    };
    int64_t cin = 64;
    for (int s = 0; s < 4; s++)
        for (int64_t k = 0; k < stages[s].blocks; k++) {
            char nm[48];
            snprintf(nm, sizeof nm, "layer%d.%lld", s + 1, (long long)k);
            t = rn_block(&b, nm, t, cin, stages[s].mid, stages[s].out, k == 0 ? stages[s].stride : 1);
            cin = stages[s].out;
        }
    t = bert_node(&b, GRAPH_OP_GLOBALAVERAGEPOOL, "avgpool", &t, 1);
    t = bert_node(&b, GRAPH_OP_FLATTEN, "flatten", &t, 1);
    graph_set_attr_int(&b.g->nodes[b.g->n_nodes - 1], "axis", 1);
    int64_t wd[2] = { 1000, 2048 }, bd[1] = { 1000 };
    int fc[3] = { t, bert_const(&b, "fc.weight", 2, wd, 1.0 / sqrt(2048.0), 0), bert_const(&b, "fc.bias", 1, bd, 0.02, 0) };
    t = bert_node(&b, GRAPH_OP_GEMM, "fc", fc, 3);
    graph_set_attr_int(&b.g->nodes[b.g->n_nodes - 1], "transB", 1);
    graph_add_output(b.g, t);
    if (!graph_sort(b.g, err, err_size) || !graph_infer_all(b.g, true, err, err_size)) {
        graph_free(b.g);
        return NULL;
    }
    return b.g;
}

graph *models_build(const char *spec, char *err, size_t err_size)
{
    if (!strcmp(spec, "resnet50") || !strncmp(spec, "resnet50:b", 10) || !strncmp(spec, "resnet50:s", 10)) {
        long batch = 1, size = 224;
        const char *opt = spec + 8;
        while (*opt) {
            char *end = NULL;
            long v = opt[0] == ':' && (opt[1] == 'b' || opt[1] == 's') ? spec_number(opt + 2, &end) : 0;
            if (!end || end == opt + 2 || (*end && *end != ':') || (opt[1] == 'b' && (v < 1 || v > 64)) ||
                (opt[1] == 's' && (v < 32 || v > 224 || v % 32))) {
                int n = end && end > opt + 2 && (!*end || *end == ':') ? (int)(end - (opt + 2)) : 0;
                snprintf(err, err_size, "%s: expected resnet50[:bN][:sSIZE] with a batch N of 1..64 and an image "
                         "SIZE a multiple of 32 in 32..224%s%s%.*s", spec, n ? ": " : "",
                         n ? (opt[1] == 'b' ? "N is " : "SIZE is ") : "", n, opt + 2);
                return NULL;
            }
            *(opt[1] == 'b' ? &batch : &size) = v;
            opt = end;
        }
        return build_resnet50(spec, batch, size, err, err_size);
    }
    if (strncmp(spec, "matmul:", 7) == 0)
        return build_matmul(spec, err, err_size);
    if (strncmp(spec, "resnet50:", 9) == 0)
        return build_conv(spec, err, err_size);
    if (strncmp(spec, "bert-base", 9) == 0 || strncmp(spec, "bert-large", 10) == 0)
        return build_bert(spec, err, err_size);
    snprintf(err, err_size, "%s: unknown built-in model (matmul:MxKxN[:f16|:f32], resnet50[:bN][:sSIZE], resnet50:LAYER[:bN], bert-base|bert-large[:sSEQ][:lLAYERS])", spec);
    return NULL;
}
