/*
 * op_map.h — which op of the model each superstep of a compiled program
 * belongs to (section ".ipusim.ops", isa/elf/executable.h), so that a run's
 * cycles read op by op, as PopVision's execution trace shows a Poplar
 * program's compute sets and exchanges by the op that made them.
 *
 * A superstep is the compute sets issued since the last sync, then an
 * exchange phase, then the sync ending it.  The compiler lowers one op at
 * a time: an op's operands arrive in the exchange that ends a superstep
 * whose compute sets are mostly the op before it, and its own compute
 * sets run in the next.  So each superstep has two owners: the op whose
 * compute set ran first in it (its compute cycles), and the op whose
 * lowering ended it (its exchange, sync and wait cycles).  Either may be
 * none: the host's inputs, the outputs, the variables' copies at the end
 * of a training step.
 *
 * Encoding: text, the op lines first, then one line per superstep in order:
 *   op TYPE NAME          op k is the k-th op line (from 0); TYPE the op's
 *                         name in the op table (letters, digits, '_'), NAME
 *                         the node's name (the rest of the line, not empty)
 *   superstep C X         superstep s is the s-th such line (from 0): C the
 *                         op of its compute, X of its exchange and sync,
 *                         each an op's number or -1
 *   stage S               the superstep lines after it are pipeline stage
 *                         S's (S = 1, 2, ... in order; before the first
 *                         such line, stage 0's)
 * Supersteps past the last line (and every superstep of a program without
 * the section) belong to no op.  A pipelined training step's chips run
 * different ops in the same superstep (each stage its own, lower.c): its
 * map has a list of owners for each stage, and chip c reads stage
 * c mod stages's (a program without stage lines: every chip stage 0's).
 */
#ifndef IPUSIM_SIM_OP_MAP_H
#define IPUSIM_SIM_OP_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OP_MAP_TYPE_BYTES 32
#define OP_MAP_NAME_MAX_BYTES 200     /* longer names are cut when encoded */

typedef struct op_map_op {
    char type[OP_MAP_TYPE_BYTES];
    char *name;                       /* malloc'd */
} op_map_op;

typedef struct op_map {
    uint32_t n_ops;
    size_t cap_ops;
    op_map_op *ops;
    uint32_t n_supersteps;
    size_t cap_supersteps;
    int32_t (*owner)[2];              /* per superstep: [0] compute, [1] exchange; -1 none
                                         (stage 0's) */
    uint32_t n_stages;                /* 0 or 1: one list of owners; else stages 1 .. */
    struct op_map_stage {
        uint32_t n_supersteps;
        size_t cap_supersteps;
        int32_t (*owner)[2];
    } *stages;                        /* ... n_stages - 1 here (stages[s - 1]) */
} op_map;

enum { OP_MAP_COMPUTE = 0, OP_MAP_EXCHANGE = 1 };

/* A new op (its number, or -1 when the host is out of memory); a type or
 * name with other characters is written with '_' for them. */
int32_t op_map_add_op(op_map *m, const char *type, const char *name);
/* Superstep s's compute or exchange (which) belongs to op (-1: none);
 * supersteps before it not yet noted belong to none.  False when the host
 * is out of memory. */
bool op_map_note(op_map *m, uint32_t superstep, int which, int32_t op);
/* The owner, or -1 (past the supersteps noted). */
int32_t op_map_owner(const op_map *m, uint32_t superstep, int which);
/* The same for pipeline stage `stage` (0: op_map_note, op_map_owner); a
 * stage past the map's reads stage 0's.  False when the host is out of
 * memory. */
bool op_map_note_stage(op_map *m, uint32_t stage, uint32_t superstep, int which, int32_t op);
int32_t op_map_owner_stage(const op_map *m, uint32_t stage, uint32_t superstep, int which);
void op_map_free(op_map *m);

/* Into a new buffer (*bytes, freed by the caller); false when the host is
 * out of memory. */
bool op_map_encode(const op_map *m, uint8_t **bytes, size_t *size);
/* False with err naming the line and what is wrong ("line 7: superstep:
 * op 12 is not one of the 9 ops"); *m empty then. */
bool op_map_decode(const void *bytes, size_t size, op_map *m, char *err, size_t err_size);

#endif
