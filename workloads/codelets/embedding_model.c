/*
 * embedding_model.c — the bit-exact models of vtx_gather_range and
 * vtx_scatter_add_range_f32 (workloads/codelets/embedding.S; what they do
 * is in embedding.h).  The gather only moves bits, so its model is byte
 * copies and zero fills in the codelet's order, stopping where the codelet
 * traps; the scatter-add's is f32add as the tile computes it, in the
 * codelet's order, and the cycle count of its timing table.
 */
#include "embedding.h"

#include <string.h>

#include "isa/fparith.h"

size_t embedding_model_gather_range(const void *table, const int32_t *idx, void *out, size_t n,
                                    const gather_range_shape *s)
{
    for (size_t i = 0; i < n; i++) {
        int64_t k = idx[i];
        if (k < 0)
            k += (int64_t)s->total_rows;
        if (k < 0 || k >= (int64_t)s->total_rows)
            return i;
        char *row = (char *)out + i * (size_t)s->out_step_bytes;
        k -= (int64_t)s->base;
        if (k >= 0 && k < (int64_t)s->table_rows)
            memcpy(row, (const char *)table + (size_t)k * s->row_bytes, s->row_bytes);
        else
            memset(row, 0, s->row_bytes);
    }
    return n;
}

/* f32add as the tile computes it ($FP_CTL = 0): operands and result
 * flushed, one rounding (isa/fparith.h). */
static float tile_add(float a, float b)
{
    unsigned exc = 0;
    float r;
    a = fp32_flush(a), b = fp32_flush(b);
    if (fp32_add_special(a, b, &exc, &r))
        return r;
    return fp32_flush((float)((double)a + (double)b));
}

/* The index as the codelet takes it, or -1 when it traps. */
static int64_t scatter_index(int32_t i, uint32_t total_rows)
{
    int64_t k = i < 0 ? (int64_t)i + total_rows : i;
    return k < 0 || k >= (int64_t)total_rows ? -1 : k;
}

size_t embedding_model_scatter_add(float *table, const int32_t *idx, const void *dy, size_t n,
                                   const scatter_add_shape *s)
{
    size_t per_row = s->row_bytes / 4;
    if (s->table_rows == 0)
        return n;
    if (s->zero)
        memset(table, 0, (size_t)s->table_rows * s->row_bytes);
    for (size_t i = 0; i < n; i++) {
        int64_t k = scatter_index(idx[i], s->total_rows);
        if (k < 0)
            return i;
        k -= (int64_t)s->base;
        if (k < 0 || k >= (int64_t)s->table_rows)
            continue;
        const float *src = (const float *)((const char *)dy + i * (size_t)s->dy_step_bytes);
        for (size_t e = 0; e < per_row; e++)
            table[(size_t)k * per_row + e] = tile_add(table[(size_t)k * per_row + e], src[e]);
    }
    return n;
}

uint64_t embedding_model_scatter_add_cycles(const int32_t *idx, size_t n, const scatter_add_shape *s, bool pairs)
{
    if (s->table_rows == 0)
        return 3;
    uint64_t p = pairs ? s->row_bytes / 8 : s->row_bytes / 4;
    uint64_t w = pairs ? 16 : 17;
    w += s->zero ? 4 + (uint64_t)s->table_rows * (p + 2) : 2;
    if (n == 0)
        return w + 1;
    w += 2;
    for (size_t i = 0; i < n; i++) {
        int64_t k = scatter_index(idx[i], s->total_rows);
        if (k < 0)
            break;
        bool held = k >= s->base && k < (int64_t)s->base + s->table_rows;
        w += held ? 15 + 4 * p : 11;
    }
    return w;
}
