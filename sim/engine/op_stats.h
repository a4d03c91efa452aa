/*
 * op_stats.h — a run's statistics op by op (sim/program/op_map.h): for one
 * chip, each superstep's compute cycles given to the op whose compute set
 * ran first in it, its exchange, sync and wait cycles to the op whose
 * operands that exchange brought; so a step reads as PopVision's
 * operation summary does, the ops that took longest first.
 */
#ifndef IPUSIM_SIM_ENGINE_OP_STATS_H
#define IPUSIM_SIM_ENGINE_OP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "isa/elf/executable.h"
#include "sim/program/op_map.h"

typedef struct op_totals {
    int32_t op;                   /* in the map; -1: no op (inputs, outputs, the step's end) */
    uint32_t supersteps;          /* with some of their cycles given to it */
    uint64_t cycles;              /* compute + exchange + sync (wait included) */
    uint64_t compute_cycles, exchange_cycles, sync_cycles;
} op_totals;

/* The program's op map from its executable; false with err on a bad
 * section, true with m->n_ops == 0 when there is none. */
bool op_stats_read(const ipu_exe *e, op_map *m, char *err, size_t err_size);
/* The supersteps of chips first_chip .. first_chip + chips - 1 given to
 * their ops (a pipelined step's chip to its stage's, chip mod the map's
 * stages), summed: out[0 .. m->n_ops) the ops in the map's order,
 * out[m->n_ops] no op. */
void op_stats_sum(const engine_stats *st, const op_map *m, uint32_t first_chip, uint32_t chips, op_totals *out);
/* out (n entries) sorted by cycles, the most first (ties: map order). */
void op_stats_sort(op_totals *out, size_t n);

#endif
