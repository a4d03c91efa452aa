/*
 * embedding.h — the embedding codelet of the kernel library
 * (workloads/codelets/embedding.S): its vertex record and its bit-exact C
 * model (workloads/codelets/embedding_model.c).
 *
 *   vtx_gather_range   ONNX Gather on axis 0 of a table split by rows over
 *                      tiles: out row i = table row IDX[i] when this tile
 *                      holds it, zeros when another tile does
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

#endif
