/*
 * phase_stats.c — a run's statistics per program phase (phase_stats.h).
 */
#include "phase_stats.h"

#include <string.h>

bool phase_stats_read(const ipu_exe *e, program_phases *ph, char *err, size_t err_size)
{
    memset(ph, 0, sizeof *ph);
    return !e->bsp.size || phases_decode(e->bsp.bytes, e->bsp.size, ph, err, err_size);
}

void phase_stats_sum(const engine_stats *st, const program_phases *ph, uint32_t chip, phase_totals *out)
{
    memset(out, 0, sizeof *out * ph->n);
    for (uint32_t i = 0; i < ph->n; i++)
        memcpy(out[i].name, ph->name[i], sizeof out[i].name);
    for (uint32_t i = 0; i < ph->n_stretches; i++)
        out[ph->s[i].phase].stretches++;
    for (size_t k = 0; k < st->n_supersteps; k++) {
        const engine_superstep *s = &st->supersteps[k];
        int p = s->chip == chip ? phases_of_superstep(ph, s->index) : -1;
        if (p < 0)
            continue;
        out[p].supersteps++;
        engine_counts_add(&out[p].c, &s->c);
    }
}

int phase_stats_find(const program_phases *ph, const char *name)
{
    for (uint32_t i = 0; i < ph->n; i++)
        if (!strcmp(ph->name[i], name))
            return (int)i;
    return -1;
}
