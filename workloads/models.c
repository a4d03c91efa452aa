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
    return strncmp(spec, "matmul:", 7) == 0;
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

graph *models_build(const char *spec, char *err, size_t err_size)
{
    if (strncmp(spec, "matmul:", 7) == 0)
        return build_matmul(spec, err, err_size);
    snprintf(err, err_size, "%s: unknown built-in model (matmul:MxKxN[:f16|:f32])", spec);
    return NULL;
}
