/*
 * embedding_model.c — the bit-exact model of vtx_gather_range
 * (workloads/codelets/embedding.S; what it does is in embedding.h).  The
 * codelet only moves bits, so the model is byte copies and zero fills in
 * the codelet's order, stopping where the codelet traps.
 */
#include "embedding.h"

#include <string.h>

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
