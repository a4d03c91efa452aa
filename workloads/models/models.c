/*
 * models.c — the built-in models (models.h): the spec's dispatch, the
 * single matmul, ResNet-50's single layers, and the builder the models'
 * files share (models_internal.h).  BERT is in models_bert.c, the whole
 * ResNet-50 in models_resnet.c.
 */
#include "models.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/fp16.h"
#include "models_internal.h"

bool models_is_builtin(const char *spec)
{
    return strncmp(spec, "matmul:", 7) == 0 || strncmp(spec, "resnet50", 8) == 0 ||
           strncmp(spec, "bert-base", 9) == 0 || strncmp(spec, "bert-large", 10) == 0;
}

double model_uniform(uint64_t *s)
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
long model_spec_number(const char *t, char **end)
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

int model_const(model_builder *b, const char *name, int rank, const int64_t *dims, double scale, double offset)
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
        v[i] = (float)(offset + model_uniform(&b->seed) * scale);
    int t = graph_add_constant(b->g, name, GDT_F32, &sh, v);
    free(v);
    return t;
}

int model_node(model_builder *b, graph_op op, const char *name, const int *in, int n_in)
{
    char *out_name = graph_unique_name(b->g, name);
    int out = graph_add_tensor(b->g, out_name);
    free(out_name);
    graph_add_node(b->g, op, name, in, n_in, &out, 1);
    return out;
}

int model_scalar(model_builder *b, const char *name, float v)
{
    graph_shape scalar = { 0, { 0 } };
    return graph_add_constant(b->g, name, GDT_F32, &scalar, &v);
}

int model_input(graph *g, const char *name, graph_dtype dtype, int rank, const int64_t *dims)
{
    int t = graph_add_tensor(g, name);
    g->tensors[t].dtype = dtype;
    g->tensors[t].shape.rank = rank;
    for (int d = 0; d < rank; d++)
        g->tensors[t].shape.dims[d] = dims[d];
    g->tensors[t].shape_known = true;
    graph_add_input(g, t);
    return t;
}

graph *model_finish(graph *g, bool fold, char *err, size_t err_size)
{
    if (!graph_sort(g, err, err_size) || !graph_infer_all(g, fold, err, err_size)) {
        graph_free(g);
        return NULL;
    }
    return g;
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
        float v = (float)(model_uniform(&s) * scale);
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
        if (strncmp(name + len, ":b", 2) != 0 || (batch = model_spec_number(name + len + 2, &end)) < 1 || batch > 64 ||
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
        w[i] = fp16_from_f32(!strcmp(L->name, "conv1") && c == 3 ? 0.0f : (float)(model_uniform(&s) * scale));
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

graph *models_build(const char *spec, char *err, size_t err_size)
{
    if (!strcmp(spec, "resnet50") || !strncmp(spec, "resnet50:b", 10) || !strncmp(spec, "resnet50:s", 10))
        return models_build_resnet50(spec, false, err, err_size);
    if (strncmp(spec, "matmul:", 7) == 0)
        return build_matmul(spec, err, err_size);
    if (strncmp(spec, "resnet50:", 9) == 0)
        return build_conv(spec, err, err_size);
    if (strncmp(spec, "bert-base", 9) == 0 || strncmp(spec, "bert-large", 10) == 0)
        return models_build_bert(spec, false, err, err_size);
    snprintf(err, err_size, "%s: unknown built-in model (matmul:MxKxN[:f16|:f32], resnet50[:bN][:sSIZE], resnet50:LAYER[:bN], bert-base|bert-large[:sSEQ][:lLAYERS])", spec);
    return NULL;
}

graph *models_build_training(const char *spec, char *err, size_t err_size)
{
    if (!strcmp(spec, "resnet50") || !strncmp(spec, "resnet50:b", 10) || !strncmp(spec, "resnet50:s", 10))
        return models_build_resnet50(spec, true, err, err_size);
    if (strncmp(spec, "bert-base", 9) == 0 || strncmp(spec, "bert-large", 10) == 0)
        return models_build_bert(spec, true, err, err_size);
    snprintf(err, err_size, "%s: no built-in training model of that name (resnet50[:bN][:sSIZE], "
             "bert-base|bert-large[:sSEQ][:lLAYERS][:bBATCH])", spec);
    return NULL;
}

/* Tensor `name` is one of g's inputs (outputs when output). */
static bool has_io(const graph *g, const char *name, bool output)
{
    int t = graph_find_tensor(g, name);
    return t >= 0 && (output ? g->tensors[t].is_output : g->tensors[t].is_input);
}

const char *models_training_loss(const graph *g)
{
    if (has_io(g, "mlm_logits", true) && has_io(g, "nsp_logits", true) && has_io(g, "masked_lm_ids", false) &&
        has_io(g, "next_sentence_label", false))
        return "softmax-ce:mlm_logits:masked_lm_ids+softmax-ce:nsp_logits:next_sentence_label";
    if (has_io(g, "fc", true) && has_io(g, "labels", false))
        return "softmax-ce:fc:labels";
    return NULL;
}
