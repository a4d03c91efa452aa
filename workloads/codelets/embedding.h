/*
 * embedding.h — the embedding codelet of the kernel library
 * (workloads/codelets/embedding.S): its vertex record and its bit-exact C
 * model (workloads/codelets/embedding_model.c).
 *
 *   vtx_gather_range   ONNX Gather on axis 0 of a table split by rows over
 *                      tiles: out row i = table row IDX[i] when this tile
 *                      holds it, zeros when another tile does
 *   vtx_scatter_add_range_f32
 *                      the gradient of the lookup (PopLibs' multiUpdateAdd):
 *                      the table rows held here, zeroed, += the dY rows
 *                      whose index falls among them (record at the end)
 *
 * An embedding table of TOTAL_ROWS rows is too large for one tile; each
 * tile holds the rows [BASE, BASE + TABLE_ROWS) (row_bytes each) and runs
 * this codelet on every index.  For i < N:
 *     idx = IDX[i] (i32), idx + TOTAL_ROWS when negative (ONNX Gather);
 *     idx outside [0, TOTAL_ROWS): the worker stops with
 *         `trap EMBEDDING_TRAP_BAD_INDEX` before it writes out row i
 *         (rows before i are written), a simulated fault naming tile,
 *         worker and pc;
 *     BASE <= idx < BASE + TABLE_ROWS: out row i = table row idx - BASE;
 *     else out row i = zeros.
 * Every index is owned by exactly one tile, so the compiler can sum the
 * tiles' outputs (x + 0 = x exactly, f32 or f16, bar -0 + 0 = +0), or let
 * the owner's row win when it reduces by copying.
 *
 * Conditions on a record (beyond abi.h):
 *   - table 8-byte aligned; IDX 4-byte aligned is enough; out 4-byte
 *     aligned, out rows OUT_STEP bytes apart (OUT_STEP >= ROW_BYTES, a
 *     multiple of 4; out rows must not overlap the table or IDX);
 *   - ROW_BYTES a multiple of 4, >= 4, at most EMBEDDING_MAX_ROW_BYTES
 *     (one rpt of 64-bit pairs or of words, ISA2 rpt: count <= 4095);
 *   - BASE + TABLE_ROWS <= TOTAL_ROWS <= 2^31 (the model checks nothing).
 * A record with N == 0 does nothing.
 *
 * Rows are copied (or zeroed) in 64-bit pairs when ROW_BYTES and OUT_STEP
 * are multiples of 8 and out is 8-byte aligned, else in 32-bit words.  Only
 * single accesses (ld64step / st64step, ld32step / st32step): no placement
 * can raise a memory conflict.  Nothing is read past IDX[N - 1] or past the
 * end of a table row.
 *
 * Timing (worker cycles, one issue every 6 tile cycles; every issue 1
 * worker cycle; tests/test_codelets_embedding.c counts every issue), with
 * P = ROW_BYTES / 8 (pairs) or ROW_BYTES / 4 (words):
 *   record           2 with N == 0, else 17 (pairs) or 18 (words)
 *   row held here    14 + 2 P       (copy: ld, st a pair or word)
 *   row not held     12 + P         (zeros: one st a pair or word)
 * Six workers issue one bundle a tile cycle between them, so these are
 * tile cycles per row of the tile.  BERT-Base's word embedding (768 f32,
 * P = 384): 782 tile cycles a row held (0.25 per byte), 396 a row not held.
 */
#ifndef IPUSIM_CODELETS_EMBEDDING_H
#define IPUSIM_CODELETS_EMBEDDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EMBEDDING_TRAP_BAD_INDEX 0x49u          /* trap code: index outside [-TOTAL_ROWS, TOTAL_ROWS) */
#define EMBEDDING_MAX_ROW_BYTES (4095u * 4u)    /* 4095 words (pairs: 4095 x 8 when a multiple of 8) */

/* ---- vtx_gather_range ------------------------------------------------------ */
enum gather_range_vertex {
    GATHER_RANGE_V_TABLE = 0,       /* rows [BASE, BASE + TABLE_ROWS) of the table */
    GATHER_RANGE_V_IDX = 1,         /* N i32 indices into the whole table */
    GATHER_RANGE_V_OUT = 2,         /* out row 0 */
    GATHER_RANGE_V_N = 3,           /* indices (0: nothing to do) */
    GATHER_RANGE_V_ROW_BYTES = 4,
    GATHER_RANGE_V_OUT_STEP = 5,    /* bytes between out rows */
    GATHER_RANGE_V_BASE = 6,        /* the first table row held here */
    GATHER_RANGE_V_TABLE_ROWS = 7,  /* rows held here */
    GATHER_RANGE_V_TOTAL_ROWS = 8,  /* rows of the whole table (ONNX's negative indices count from it) */
    GATHER_RANGE_V_WORDS = 9,
};

/* The geometry of a record, for the model. */
typedef struct gather_range_shape {
    uint32_t row_bytes, out_step_bytes;
    uint32_t base, table_rows, total_rows;
} gather_range_shape;

/* The codelet on host arrays: table holds rows [base, base + table_rows),
 * out row i is at out + i * out_step_bytes.  Returns the position of the
 * first index outside [-total_rows, total_rows) (the codelet traps there,
 * the rows before it written), or n when every index is valid.  Bytes of
 * out between rows are left alone. */
size_t embedding_model_gather_range(const void *table, const int32_t *idx, void *out, size_t n,
                                    const gather_range_shape *s);

/* ---- vtx_scatter_add_range_f32 -----------------------------------------------
 * The tile holds rows [BASE, BASE + TABLE_ROWS) of an f32 table (dTable),
 * ROW_BYTES each, contiguous from TABLE.  When ZERO is set they are first
 * zeroed (+0).  Then for i < N, in order: idx = IDX[i] as vtx_gather_range
 * takes it (negative: + TOTAL_ROWS; outside [0, TOTAL_ROWS): trap
 * EMBEDDING_TRAP_BAD_INDEX, the rows of indices before i added); when
 * BASE <= idx < BASE + TABLE_ROWS, table row idx - BASE += dY row i (at DY
 * + i DY_STEP), element by element with f32v2add (pairs) or f32add
 * (words): one rounding each, so a row hit by indices i1 < i2 < ... holds
 * ((0 + dY[i1]) + dY[i2]) + ..., flushed as the tile's arithmetic flushes
 * denormals.  Workers must hold disjoint rows (two workers adding to one
 * row would race).  A record with TABLE_ROWS == 0 does nothing; with N ==
 * 0 it only zeroes.
 *
 * Pairs when ROW_BYTES, DY_STEP, DY and TABLE are multiples of 8, else
 * words.  Single accesses only: no placement can raise a memory conflict.
 * ROW_BYTES a multiple of 4 in [4, EMBEDDING_MAX_ROW_BYTES]; DY 4-aligned,
 * DY_STEP >= ROW_BYTES; dY must not overlap the table.
 *
 * Timing (worker cycles, every issue a bundle of 1; tests/test_codelets_
 * embedding.c counts them, embedding_model_scatter_add_cycles), P pairs or
 * words a row:
 *   TABLE_ROWS == 0     3
 *   entry               16 (pairs) or 17 (words)
 *   zeroing             2 (ZERO == 0), else 4 + TABLE_ROWS (P + 2)
 *   indices             1 (N == 0), else 2 + per index 11 (not held here)
 *                       or 15 + 4 P (held: the row added)
 * BERT-Base (768 f32, P = 384, 128 indices): a worker holding a few of the
 * 30522 rows and none of the indices scans them in 2 + 128 x 11 = 1,410.
 */
enum scatter_add_vertex {
    SCATTER_ADD_V_TABLE = 0,
    SCATTER_ADD_V_IDX = 1,
    SCATTER_ADD_V_DY = 2,
    SCATTER_ADD_V_N = 3,
    SCATTER_ADD_V_ROW_BYTES = 4,
    SCATTER_ADD_V_DY_STEP = 5,
    SCATTER_ADD_V_BASE = 6,
    SCATTER_ADD_V_TABLE_ROWS = 7,
    SCATTER_ADD_V_TOTAL_ROWS = 8,
    SCATTER_ADD_V_ZERO = 9,
    SCATTER_ADD_V_WORDS = 10,
};

/* The geometry of a record, for the model. */
typedef struct scatter_add_shape {
    uint32_t row_bytes, dy_step_bytes;
    uint32_t base, table_rows, total_rows;
    bool zero;
} scatter_add_shape;

/* The codelet on host arrays (table: its rows held here; dy row i at dy +
 * i dy_step_bytes).  Returns the position of the first index outside
 * [-total_rows, total_rows), or n when every index is valid. */
size_t embedding_model_scatter_add(float *table, const int32_t *idx, const void *dy, size_t n,
                                   const scatter_add_shape *s);
/* Its worker cycles; pairs: the record's addresses allow 64-bit pairs. */
uint64_t embedding_model_scatter_add_cycles(const int32_t *idx, size_t n, const scatter_add_shape *s, bool pairs);

#endif
