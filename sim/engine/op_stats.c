/*
 * op_stats.c — a run's statistics per op (op_stats.h).
 */
#include "op_stats.h"

#include <stdlib.h>
#include <string.h>

bool op_stats_read(const ipu_exe *e, op_map *m, char *err, size_t err_size)
{
    memset(m, 0, sizeof *m);
    return !e->ops.size || op_map_decode(e->ops.bytes, e->ops.size, m, err, err_size);
}

void op_stats_sum(const engine_stats *st, const op_map *m, uint32_t first_chip, uint32_t chips, op_totals *out)
{
    memset(out, 0, sizeof *out * (m->n_ops + 1));
    for (uint32_t i = 0; i <= m->n_ops; i++)
        out[i].op = i < m->n_ops ? (int32_t)i : -1;
    for (size_t k = 0; k < st->n_supersteps; k++) {
        const engine_superstep *s = &st->supersteps[k];
        if (s->chip < first_chip || s->chip - first_chip >= chips)
            continue;
        uint32_t stage = m->n_stages > 1 ? s->chip % m->n_stages : 0;
        int32_t c = op_map_owner_stage(m, stage, s->index, OP_MAP_COMPUTE);
        int32_t x = op_map_owner_stage(m, stage, s->index, OP_MAP_EXCHANGE);
        op_totals *tc = &out[c < 0 ? m->n_ops : (uint32_t)c], *tx = &out[x < 0 ? m->n_ops : (uint32_t)x];
        uint64_t sync = s->c.sync_cycles + s->c.wait_cycles;
        tc->compute_cycles += s->c.compute_cycles;
        tc->cycles += s->c.compute_cycles;
        tx->exchange_cycles += s->c.exchange_cycles;
        tx->sync_cycles += sync;
        tx->cycles += s->c.exchange_cycles + sync;
        tc->supersteps++;
        tx->supersteps += tx != tc;
    }
}

static int by_cycles(const void *a, const void *b)
{
    const op_totals *x = a, *y = b;
    if (x->cycles != y->cycles)
        return x->cycles > y->cycles ? -1 : 1;
    uint32_t ix = (uint32_t)x->op, iy = (uint32_t)y->op;     /* -1 (no op) last */
    return ix < iy ? -1 : ix > iy;
}

void op_stats_sort(op_totals *out, size_t n)
{
    qsort(out, n, sizeof *out, by_cycles);
}
