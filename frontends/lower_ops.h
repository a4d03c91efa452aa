/*
 * lower_ops.h — the lowering's op table (the layout and lowering columns of
 * ops.def) and what the files of the lowering driver share beyond
 * lower_internal.h: lower.c (the driver), lower_ops.c (the table),
 * lower_memory.c (tile memory and tensor placement), lower_exchange.c
 * (control-program steps and exchange phases), lower_elementwise.c
 * (views, element-wise and row ops) and lower_program.c (the executable).
 * Internal to frontends/lower*.c.
 *
 * Models PopART's per-op lowering (an Opx per op, found by op type) and
 * the layout side of PopLibs' tensor creation (which ops keep the order
 * their operands are stored in).  Does not model PopART's op registry at
 * run time, nor grad ops: the table is fixed at compile time, one row an op.
 */
#ifndef IPUSIM_FRONTENDS_LOWER_OPS_H
#define IPUSIM_FRONTENDS_LOWER_OPS_H

#include "lower_internal.h"

/* What the channels-last analysis (lower_layout.c) does with an op. */
enum lw_layout {
    LAYOUT_BARRIER,               /* reads its operands in ONNX order: a channels-last
                                     tensor may not reach it */
    LAYOUT_ELEMENTWISE,           /* element-wise over every operand: its result keeps the
                                     order its operands are stored in */
    LAYOUT_ELEMENTWISE_FIRST,     /* the same over input 0 alone (Dropout: the others are
                                     its ratio and mode) */
    LAYOUT_CHANNELS_LAST,         /* convolutions and pools: read and write images
                                     channels-last */
    LAYOUT_PAIRWISE,              /* output k in the order input k is stored in, whatever
                                     it is (the replicas' all-reduce of the gradients) */
};

/* Lower node n (the index-th of the graph); false when lw failed. */
typedef bool (*lw_lower_fn)(lowering *lw, const graph_node *n, int index);
/* Whether node n can be lowered; false with *why when not. */
typedef bool (*lw_supports_fn)(const graph *g, const graph_node *n, const char **why);
/* Whether node n's output is its input 0's storage (no code). */
typedef bool (*lw_alias_fn)(const graph *g, const graph_node *n);

/* One op's row of the lowering: ops.def's layout column and its lowering
 * column (LOWER(...) and its kin, lower_ops.c). */
typedef struct lw_op_rule {
    enum lw_layout layout;
    lw_lower_fn lower;            /* NULL: no lowering ("no lowering for this op yet") */
    lw_supports_fn supports;      /* NULL: every node reaching the lowering is taken (the
                                     lowering checks the rest and reports) */
    lw_alias_fn aliases;          /* NULL: never */
    bool view;                    /* always its input's storage (Reshape, Identity, ...) */
    bool all_outputs;             /* lowers its outputs past the first (LayerNorm's
                                     statistics); others lower output 0 only */
    int function;                 /* element-wise ops: the codelet's function
                                     (enum elementwise_unary_fn / elementwise_binary_op) */
} lw_op_rule;

extern const lw_op_rule lw_op_rules[GRAPH_OP_COUNT];

/* Lowering functions the table names (lower_elementwise.c). */
bool lw_lower_view(lowering *lw, const graph_node *n, int index);
bool lw_lower_unary(lowering *lw, const graph_node *n, int index);
bool lw_lower_binary(lowering *lw, const graph_node *n, int index);
bool lw_lower_rows(lowering *lw, const graph_node *n, int index);
/* The same with the codelet function and operands given (Pow's forms). */
bool lw_lower_unary_fn(lowering *lw, const graph_node *n, int index, int function);
bool lw_lower_binary_fn(lowering *lw, const graph_node *n, int index, int function, int in0, int in1);

/* Shared by the driver's files. */
bool lw_grow(void **p, size_t *cap, size_t need, size_t elem);
uint32_t lw_tile_used_bytes(const lowering *lw, const ltile *t);
/* "does not fit", naming the tile, the bytes and what they were for; 0. */
uint32_t lw_no_room(lowering *lw, uint32_t tile, uint64_t need, const char *what);
/* A new block of `need` bytes aligned to a + 1 in one region (lower_memory.c). */
uint32_t lw_bump_alloc(lowering *lw, uint32_t tile, uint64_t bytes, uint64_t need, uint32_t a, bool region0);
/* Which tensors share storage, and the last node reading each storage. */
void lw_tensor_roots(lowering *lw);
/* After node i: the storage of the tensors it was the last to read goes back. */
bool lw_release_dead(lowering *lw, int i);
/* Tensor's pieces in element order. */
void lw_sort_pieces(lowering *lw, int tensor);
/* Output `out` stored in the order of `in`'s axes. */
void lw_same_layout(lowering *lw, int out, int in);
/* Output `out` in pieces like tensor `like`'s, with new storage. */
bool lw_place_like(lowering *lw, int out, int like, const char *what);
/* The graph outputs to the host, after a sync (lower_program.c). */
bool lw_send_outputs(lowering *lw);
/* The tensor map, the tiles' sections and the report into e. */
bool lw_write_executable(lowering *lw, ipu_exe *e);

#endif
