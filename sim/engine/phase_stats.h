/*
 * phase_stats.h — a run's statistics split by the phases of its program
 * (sim/program/phases.h): for one chip, the counters of the supersteps of
 * each phase summed, so a training step reads as forward, backward and
 * update, each with its compute, exchange, sync and wait cycles.
 */
#ifndef IPUSIM_SIM_ENGINE_PHASE_STATS_H
#define IPUSIM_SIM_ENGINE_PHASE_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "isa/elf/executable.h"
#include "sim/program/phases.h"

typedef struct phase_totals {
    char name[16];
    uint32_t supersteps;
    uint32_t stretches;           /* runs of consecutive supersteps of the phase */
    engine_counts c;              /* summed; c.cycles the phase's length */
} phase_totals;

/* The program's phases from its executable (ph: a large struct); false
 * with err on a bad blob, true with ph->n == 0 when there are none. */
bool phase_stats_read(const ipu_exe *e, program_phases *ph, char *err, size_t err_size);
/* Chip `chip`'s supersteps summed per phase into out[0 .. ph->n). */
void phase_stats_sum(const engine_stats *st, const program_phases *ph, uint32_t chip, phase_totals *out);
/* The index of the phase named name, -1 when the program has none. */
int phase_stats_find(const program_phases *ph, const char *name);

#endif
