/*
 * lower.h — from a graph (frontends/graph.h, after inference and fusion) to
 * an ipusim executable: the planner decides how each op is split across
 * the tiles, the lowering writes each tile's control program (a table of
 * steps for the library's supervisor, workloads/codelets/supervisor.S),
 * vertex records for the kernel library's codelets, the exchange between
 * steps, host streams for the graph's inputs and outputs, constants as
 * data loaded with the executable, and the tensor map (sim/program/tensor_map.h).
 *
 * What it models: the work of poplar::Graph and PopLibs behind PopART's
 * lowering — tensors mapped to tiles in pieces (Graph::setTileMapping),
 * compute sets of vertices (one per worker), exchange programs with syncs
 * (BSP supersteps), PopLibs' planners choosing splits from cost
 * estimates, storage reused after a tensor's last reader, and a control
 * program per tile (a poplar::program::Sequence compiled).  What it does
 * not: Poplar's graph compiler itself (its placement of variables, code
 * and exchange compression), buffered host streams, Repeat and If
 * programs, or training (no backward pass).
 *
 * The program, in BSP terms:
 *   1. every input piece arrives from the host (one host stream per piece),
 *      then a chip sync;
 *   2. per op, in topological order: if any tile needs data it does not
 *      hold, an exchange phase (receives posted first, then sends) ending
 *      in a chip sync; then the op's compute set(s) on the tiles that hold
 *      its output;
 *   3. every output piece goes to the host, then the program ends.
 * On a machine of several chips the program is made for chip 0 and
 * copied to every chip (data-parallel replicas; lower_options.replicas):
 * replica r's tiles are r x tiles_per_chip on (r x stages x tiles_per_chip
 * with a pipeline: a replica of a pipeline is its stages' chips), its host
 * streams follow replica r - 1's, and its tensors are "replicaR/NAME" in
 * the tensor map.
 * With pipeline stages (lower_options.pipeline) the ops are cut, in order,
 * into runs of about equal estimated work, one a chip (layers per IPU);
 * tensors crossing a cut go over the IPU-Links in the exchange phase of
 * the op that reads them, and every sync is a system sync (sync 2); one
 * batch passes through the stages in turn.  A training step scheduled as
 * a pipeline (train_pipeline.c: graph.pipeline_stages, each node's stage
 * and cycle) is lowered by its schedule instead: in each pipeline cycle
 * every stage's tiles run supersteps of their own (chip syncs, padded to
 * the same count), the cycle ends in a system sync, and the IpuCopy
 * nodes between the stages share the exchange that follows
 * (lower_options.serial_pipeline: one stage at a time).
 * Tensors are laid out in pieces: a piece is a run of consecutive elements
 * (row-major) at consecutive addresses of one tile, starting 8-byte aligned.
 * Views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout) share the
 * pieces of their input.  A small constant (a bias, a scale, an operand of
 * an element-wise op) is placed, at compile time, on every tile that reads
 * it (lw_fetch).  A matmul's or convolution's constant weights are stored
 * once: each block in parts on tiles down its grid column, loaded with the
 * executable, and gathered by the column's tiles in an exchange phase
 * before the products (lower_matmul.c), as Poplar keeps a weight once.
 * Each tensor's storage goes back to its tiles after its last reader, for
 * later tensors of the program.
 *
 * The planner's choices are estimates, made where each op is lowered:
 * lw_plan_tiles (lower_memory.c) spreads an element-wise or row op over
 * the fewest tiles whose busiest tile's codelet cycles (their measured
 * cycles per element, kernels.h) are within 5% of the best; the matmul
 * and convolution planner (plan_grid, lower_matmul.c) picks the grid with
 * the lowest estimate from the codelets' cycle counts and the exchange's
 * (bytes at the tile's exchange bandwidth plus send overheads); a plan
 * that needs more tile memory than a tile has is refused with the tile,
 * the bytes needed and the bytes in use.
 */
#ifndef IPUSIM_FRONTENDS_LOWER_H
#define IPUSIM_FRONTENDS_LOWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "isa/elf/executable.h"
#include "sim/program/machine.h"

typedef struct lower_options {
    const machine *machine;       /* the target (tiles per chip, memory size) */
    uint32_t tiles;               /* tiles to use on chip 0; 0: all of them */
    uint32_t replicas;            /* data-parallel copies, one a chip or pipeline (0: one on
                                     every chip, without a pipeline; 1 with one) */
    uint32_t pipeline;            /* pipeline stages, one a chip (0 or 1: none) */
    bool serial_pipeline;         /* a pipelined training step's cycles run one stage at a
                                     time (every sync a system sync), not the stages at once */
    bool f16_matmul;              /* f32 MatMul/Gemm computed with f16 inputs on the AMP
                                     (f32 partial sums), as a mixed-precision compile */
    bool half_partials;           /* the f16 AMP path sums in f16 (Poplar's partialsType half:
                                     f16v4hihov4amp, both engine sets), not f32 */
    bool verbose;                 /* print the plan of every op on stdout */
    bool compact_replicas;        /* leave replicas 1 .. to the executable's reader
                                     (exe_expand_replicas): for a program only written */
    /* Called after each op is lowered (done of total; a second lowering
     * starts again from 1); NULL: never. */
    void (*progress)(void *ctx, uint32_t done, uint32_t total);
    void *progress_ctx;
    uint32_t control_room_bytes;  /* 0, or the most room a region offers a tile's control
                                     program (the tests split small programs with it) */
    bool share_programs;          /* a pipeline's micro-batches run one program for each
                                     stage's forward and backward pass (lower_section.c) */
    bool no_share_programs;       /* the command line's --no-share-programs: share_programs
                                     not made the default of an overlapped pipeline */
} lower_options;

/* What the compile produced, for the report. */
typedef struct lower_report {
    uint32_t tiles_used;
    uint32_t ops, compute_sets, exchange_phases;
    uint64_t exchange_bytes;      /* moved between tiles (estimate of the plan) */
    uint64_t max_tile_bytes;      /* the fullest tile's memory use */
    uint64_t control_bytes, record_bytes;          /* control programs and vertex records, summed over
                                                      the program's tiles (one replica) ... */
    uint64_t max_control_bytes, max_record_bytes;  /* ... the most on one tile ... */
    uint32_t program_tiles;                        /* ... and how many tiles have a program */
    uint32_t split_programs;      /* tiles whose control program is in two blocks */
    uint64_t reused_bytes;        /* tensor storage placed in blocks dead tensors gave back
                                     (all tiles of chip 0) ... */
    uint64_t reused_scratch_bytes;  /* ... of which in blocks past ops' scratch had used */
    uint64_t lent_bytes;          /* ops' scratch in blocks dead tensors gave back */
    uint32_t folded_transposes;   /* Transposes a MatMul reads through (never made) */
    uint32_t folded_casts;        /* Casts of f16 weights their matmuls read as f16 (never made) */
    uint32_t lowerings;           /* 2 or 3: lowered again with room held back on every tile for
                                     its records and control program (lower_graph) */
    uint32_t max_tile;            /* ... and which tile that is */
    uint32_t updates_in_place;    /* variables whose new value the optimizer wrote over them */
    uint32_t updates_copied;      /* ... and those copied into them at the end of the step */
    uint32_t streaming_variables; /* variables kept in streaming memory ... */
    uint64_t streaming_bytes;     /* ... their bytes there (one replica) */
    uint32_t scatters_in_place;   /* GatherGrads added into their initial gradient's storage */
    uint32_t scatter_chunks;      /* ... in this many chunks of dY rows in all (more than one
                                     a scatter where its dY slices did not fit at once) */
    uint32_t serialised_matmuls;  /* matmuls computed in serial parts where no grid fit at once ... */
    uint32_t serialised_by[3];    /* ... cut along their rows, columns or K ... */
    uint32_t serial_parts;        /* ... in this many parts in all */
    uint32_t accumulated_in_parts;  /* ... of them, those whose rows each part added into the
                                     running sum over the micro-batches as it made them */
    uint64_t shared_record_bytes; /* worker records not stored twice on a tile (all tiles) */
    uint32_t shared_sections;     /* a pipeline's sections that ran the steps of an earlier
                                     alike one (lower_options.share_programs) ... */
    uint64_t shared_section_tiles;  /* ... on how many of their tiles in all ... */
    uint64_t shared_control_bytes;  /* ... and the control program bytes that saved */
    uint64_t merged_record_bytes; /* worker records saved by one record for six workers (all tiles) */
    uint64_t memory_bytes;        /* tile memory of one tile */
    uint64_t library_bytes;       /* of it the kernel library's (code and its data) */
    uint64_t estimated_cycles;    /* the planner's estimate for the whole program */
    uint32_t input_streams, output_streams;
    uint32_t replicas;            /* copies of the program, on chips 0 .. replicas - 1 */
    uint32_t stages;              /* pipeline stages (chips 0 .. stages - 1) */
    bool unsupported;             /* the compile failed on something ipusim does not
                                     lower yet (not a fault in the model) */
} lower_report;

/* Lower g to an executable.  On failure returns NULL and err names the
 * node and op (unsupported op or attribute), or the tile and bytes (does
 * not fit).  g must have been through graph inference. */
ipu_exe *lower_graph(const graph *g, const lower_options *o, lower_report *report, char *err,
                     size_t err_size);

/* Whether every node of g is one the lowering supports; if not, err names
 * the first node that is not (used by `validate` to count tests as
 * unsupported rather than failed). */
bool lower_supports(const graph *g, const lower_options *o, char *err, size_t err_size);

/* A Pow the lowering computes directly: an f32 base and a constant scalar
 * exponent of 2, 1, 0.5, -1 or -0.5 (x * x, a copy, sqrt, reciprocal,
 * rsqrt).  decompose.h rewrites the others it can. */
bool lower_pow_is_direct(const graph *g, const graph_node *n);

#endif
