/*
 * models.c — the built-in models (models.h).
 */
#include "workloads/models.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/fp16.h"

bool models_is_builtin(const char *spec)
{
    return strncmp(spec, "matmul:", 7) == 0 || strncmp(spec, "resnet50:", 9) == 0;
}

static double next_uniform(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static graph *build_matmul(const char *spec, char *err, size_t err_size)
{
    unsigned long long m, k, n;
    char type[8] = "f16";
    int used = 0;
    if (sscanf(spec, "matmul:%llux%llux%llu%n", &m, &k, &n, &used) != 3 ||
        (spec[used] && sscanf(spec + used, ":%7s", type) != 1) || !m || !k || !n ||
        (strcmp(type, "f16") && strcmp(type, "f32"))) {
        snprintf(err, err_size, "%s: expected matmul:MxKxN[:f16|:f32] with M, K, N positive", spec);
        return NULL;
    }
    if (m > (1u << 20) || k > (1u << 20) || n > (1u << 20) || k * n > (1ull << 28)) {
        snprintf(err, err_size, "%s: sizes too large for a built-in model", spec);
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

static graph *build_conv(const char *spec, char *err, size_t err_size)
{
    const char *name = spec + 9;
    size_t len = strcspn(name, ":");
    long batch = 1;
    if (name[len]) {
        char *end;
        if (strncmp(name + len, ":b", 2) != 0 || (batch = strtol(name + len + 2, &end, 10)) < 1 || batch > 64 ||
            *end) {
            snprintf(err, err_size, "%s: expected resnet50:LAYER[:bN] with a batch N of 1..64", spec);
            return NULL;
        }
    }
    const conv_layer *L = NULL;
    for (size_t i = 0; i < sizeof resnet50_layers / sizeof resnet50_layers[0]; i++)
        if (strlen(resnet50_layers[i].name) == len && !strncmp(name, resnet50_layers[i].name, len))
            L = &resnet50_layers[i];
    if (!L) {
        snprintf(err, err_size, "%s: unknown ResNet-50 layer (conv1, res2_3x3, res3_3x3s2, res3_proj)", spec);
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

graph *models_build(const char *spec, char *err, size_t err_size)
{
    if (strncmp(spec, "matmul:", 7) == 0)
        return build_matmul(spec, err, err_size);
    if (strncmp(spec, "resnet50:", 9) == 0)
        return build_conv(spec, err, err_size);
    snprintf(err, err_size, "%s: unknown built-in model (matmul:MxKxN[:f16|:f32], resnet50:LAYER[:bN])", spec);
    return NULL;
}
