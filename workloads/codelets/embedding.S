// embedding.S — the embedding codelet of the kernel library (worker vertex,
// calling convention in workloads/codelets/abi.h; the record, the
// conditions on it and the bit-exact C model in workloads/codelets/
// embedding.h, embedding_model.c):
//
//   vtx_gather_range   out row i = table row IDX[i] - BASE when this tile
//                      holds it, else zeros
//   vtx_scatter_add_range_f32
//                      table row IDX[i] - BASE += dY row i when this tile
//                      holds it (the lookup's gradient; at the end)
//
// Per index: the index is loaded, a negative one moved up by TOTAL_ROWS
// (the sign smeared by shrs and masked, no branch), checked against
// TOTAL_ROWS (unsigned, so what is still negative fails too; trap
// EMBEDDING_TRAP_BAD_INDEX) and then against the rows held here (idx -
// BASE, unsigned, below TABLE_ROWS).  A row held is copied by a rpt of
// ld64step / st64step (or ld32step / st32step), 2 issues per pair or word;
// a row not held is zeroed by a rpt of st64step $azeros (st32step $azero),
// 1 issue per pair or word.  The store pointer runs along the out row and
// then skips OUT_STEP - ROW_BYTES to the next.  Single accesses only: no
// placement can raise a memory conflict.
//
// Timing (worker cycles; every issue a bundle of 1 worker cycle, so no
// branch target pays the misalignment cycle; P = pairs or words a row):
//   record        2 (N == 0), else 17 (pairs) or 18 (words)
//   row held      14 + 2 P           row not held   12 + P
// Six workers issue one bundle a tile cycle between them, so worker cycles
// per row are tile cycles per row of the tile.  Measured on one GC200 tile
// (tests/test_codelets_embedding.c, "BERT-Base rows"): rows of 768 f32
// (3072 B, P = 384: 782 a row held, 396 not), 6 x 16 indices into a
// 30522-row table of which the tile holds 48, about half of the indices
// held here: 63,602 tile cycles, 662.5 per index, 0.216 per output byte.
// (ldst64pace could copy a pair per issue where table and out are apart,
// as elementwise.S's copy does; rows held are a small share of the
// indices on a tile, so the simpler loop is kept.)

    .equ GATHER_RANGE_V_TABLE, 0
    .equ GATHER_RANGE_V_IDX, 1
    .equ GATHER_RANGE_V_OUT, 2
    .equ GATHER_RANGE_V_N, 3
    .equ GATHER_RANGE_V_ROW_BYTES, 4
    .equ GATHER_RANGE_V_OUT_STEP, 5
    .equ GATHER_RANGE_V_BASE, 6
    .equ GATHER_RANGE_V_TABLE_ROWS, 7
    .equ GATHER_RANGE_V_TOTAL_ROWS, 8
    .equ EMBEDDING_TRAP_BAD_INDEX, 0x49

    .text

// Registers: $m0 table, $m1 next index, $m2 out (store pointer), $m3 N - 1
// (brnzdec), $m4 ROW_BYTES, $m5 BASE, $m6 TABLE_ROWS, $m7 TOTAL_ROWS,
// $m8 the index, then the source row, $m9 P, $m10 OUT_STEP - ROW_BYTES,
// $m11 scratch.

// The index checks: 9 issues to the held / not-held branch.
.macro EMB_INDEX not_held
    { ld32step $m8, $mzero, $m1+=, 1 ; fnop }
    { shrs  $m11, $m8, 31 ; fnop }                  // -1 for a negative index
    { and   $m11, $m11, $m7 ; fnop }
    { add   $m8, $m8, $m11 ; fnop }
    { cmpult $m11, $m8, $m7 ; fnop }
    { brz   $m11, emb_bad_index ; fnop }
    { sub   $m8, $m8, $m5 ; fnop }
    { cmpult $m11, $m8, $m6 ; fnop }                // below BASE wraps to large
    { brz   $m11, \not_held ; fnop }
    { mul   $m8, $m8, $m4 ; fnop }
    { add   $m8, $m8, $m0 ; fnop }
.endm

    .align 8
    .globl vtx_gather_range
    .worker
vtx_gather_range:
    { ld32  $m3, $m13, $mzero, GATHER_RANGE_V_N ; fnop }
    { brz   $m3, emb_exit ; fnop }
    { ld32  $m0, $m13, $mzero, GATHER_RANGE_V_TABLE ; fnop }
    { ld32  $m1, $m13, $mzero, GATHER_RANGE_V_IDX ; fnop }
    { ld32  $m2, $m13, $mzero, GATHER_RANGE_V_OUT ; fnop }
    { ld32  $m4, $m13, $mzero, GATHER_RANGE_V_ROW_BYTES ; fnop }
    { ld32  $m10, $m13, $mzero, GATHER_RANGE_V_OUT_STEP ; fnop }
    { ld32  $m5, $m13, $mzero, GATHER_RANGE_V_BASE ; fnop }
    { ld32  $m6, $m13, $mzero, GATHER_RANGE_V_TABLE_ROWS ; fnop }
    { ld32  $m7, $m13, $mzero, GATHER_RANGE_V_TOTAL_ROWS ; fnop }
    { add   $m3, $m3, -1 ; fnop }
    { or    $m11, $m4, $m10 ; fnop }
    { or    $m11, $m11, $m2 ; fnop }
    { and   $m11, $m11, 7 ; fnop }                  // pairs: row, step and out 8-aligned
    { sub   $m10, $m10, $m4 ; fnop }
    { shr   $m9, $m4, 3 ; fnop }
    { brz   $m11, emb_pair_row ; fnop }
    { shr   $m9, $m4, 2 ; fnop }
// ---- rows by words ----------------------------------------------------------------
emb_word_row:
    EMB_INDEX emb_word_zero
    { rpt   $m9, 1 ; fnop }
    { ld32step $a0, $mzero, $m8+=, 1 ; fnop }
    { st32step $a0, $mzero, $m2+=, 1 ; fnop }
    { add   $m2, $m2, $m10 ; fnop }
    { brnzdec $m3, emb_word_row ; fnop }
    { exitz $mzero ; fnop }
emb_word_zero:
    { rpt   $m9, 0 ; fnop }
    { st32step $azero, $mzero, $m2+=, 1 ; fnop }
    { add   $m2, $m2, $m10 ; fnop }
    { brnzdec $m3, emb_word_row ; fnop }
    { exitz $mzero ; fnop }
// ---- rows by 64-bit pairs ------------------------------------------------------------
emb_pair_row:
    EMB_INDEX emb_pair_zero
    { rpt   $m9, 1 ; fnop }
    { ld64step $a0:1, $mzero, $m8+=, 1 ; fnop }
    { st64step $a0:1, $mzero, $m2+=, 1 ; fnop }
    { add   $m2, $m2, $m10 ; fnop }
    { brnzdec $m3, emb_pair_row ; fnop }
    { exitz $mzero ; fnop }
emb_pair_zero:
    { rpt   $m9, 0 ; fnop }
    { st64step $azeros, $mzero, $m2+=, 1 ; fnop }
    { add   $m2, $m2, $m10 ; fnop }
    { brnzdec $m3, emb_pair_row ; fnop }
emb_exit:
    { exitz $mzero ; fnop }
emb_bad_index:
    { trap  EMBEDDING_TRAP_BAD_INDEX ; fnop }

// ---- vtx_scatter_add_range_f32 ---------------------------------------------------------
// The embedding's gradient (record and model in embedding.h): the table
// rows held here, [BASE, BASE + TABLE_ROWS), zeroed when ZERO is set, then
// for i < N: row IDX[i] += dY row i when held here (f32v2add a pair, or
// f32add a word), in the order of i.  The index checks are vtx_gather_
// range's (EMB_INDEX, the same trap).  Registers as vtx_gather_range's,
// with $m2 the dY row (DY_STEP apart in $m10, not less its row) and $m8
// the table row; $m11 walks the dY row.
//
// Timing (worker cycles, every issue a bundle of 1): TABLE_ROWS == 0: 3;
// else 16 (pairs) or 17 (words) to the loops; the zeroing 2 when ZERO is
// 0, else 4 + (P + 2) a row held; then 1 when N == 0, else 2 and per index
// 11 (not held) or 15 + 4 P (held: ld, ld, add, st a pair or word).

    .equ SCATTER_ADD_V_TABLE, 0
    .equ SCATTER_ADD_V_IDX, 1
    .equ SCATTER_ADD_V_DY, 2
    .equ SCATTER_ADD_V_N, 3
    .equ SCATTER_ADD_V_ROW_BYTES, 4
    .equ SCATTER_ADD_V_DY_STEP, 5
    .equ SCATTER_ADD_V_BASE, 6
    .equ SCATTER_ADD_V_TABLE_ROWS, 7
    .equ SCATTER_ADD_V_TOTAL_ROWS, 8
    .equ SCATTER_ADD_V_ZERO, 9

// The table's rows zeroed: \st of \zero, P a row; $m11, $m8 scratch.
.macro SCATTER_ZERO st, zero, done
    { ld32  $m11, $m13, $mzero, SCATTER_ADD_V_ZERO ; fnop }
    { brz   $m11, \done ; fnop }
    { mov   $m11, $m0 ; fnop }
    { add   $m8, $m6, -1 ; fnop }
1:
    { rpt   $m9, 0 ; fnop }
    { \st   \zero, $mzero, $m11+=, 1 ; fnop }
    { brnzdec $m8, 1b ; fnop }
.endm

    .align 8
    .globl vtx_scatter_add_range_f32
    .worker
vtx_scatter_add_range_f32:
    { ld32  $m3, $m13, $mzero, SCATTER_ADD_V_N ; fnop }
    { ld32  $m6, $m13, $mzero, SCATTER_ADD_V_TABLE_ROWS ; fnop }
    { brz   $m6, sca_exit ; fnop }
    { ld32  $m0, $m13, $mzero, SCATTER_ADD_V_TABLE ; fnop }
    { ld32  $m1, $m13, $mzero, SCATTER_ADD_V_IDX ; fnop }
    { ld32  $m2, $m13, $mzero, SCATTER_ADD_V_DY ; fnop }
    { ld32  $m4, $m13, $mzero, SCATTER_ADD_V_ROW_BYTES ; fnop }
    { ld32  $m10, $m13, $mzero, SCATTER_ADD_V_DY_STEP ; fnop }
    { ld32  $m5, $m13, $mzero, SCATTER_ADD_V_BASE ; fnop }
    { ld32  $m7, $m13, $mzero, SCATTER_ADD_V_TOTAL_ROWS ; fnop }
    { or    $m11, $m4, $m10 ; fnop }
    { or    $m11, $m11, $m2 ; fnop }
    { or    $m11, $m11, $m0 ; fnop }
    { and   $m11, $m11, 7 ; fnop }                  // pairs: row, step, dY and table 8-aligned
    { shr   $m9, $m4, 3 ; fnop }
    { brz   $m11, sca_pairs ; fnop }
    { shr   $m9, $m4, 2 ; fnop }
// ---- rows by words ----------------------------------------------------------------
    SCATTER_ZERO st32step, $azero, 2f
2:
    { brz   $m3, sca_exit ; fnop }
    { add   $m3, $m3, -1 ; fnop }
sca_word_row:
    EMB_INDEX sca_word_skip
    { mov   $m11, $m2 ; fnop }
    { rpt   $m9, 3 ; fnop }
    { ld32step $a0, $mzero, $m11+=, 1 ; fnop }
    { ld32  $a2, $m8, $mzero, 0 ; fnop }
    { nop   ; f32add $a2, $a2, $a0 }
    { st32step $a2, $mzero, $m8+=, 1 ; fnop }
sca_word_skip:
    { add   $m2, $m2, $m10 ; fnop }
    { brnzdec $m3, sca_word_row ; fnop }
    { exitz $mzero ; fnop }
// ---- rows by 64-bit pairs ------------------------------------------------------------
sca_pairs:
    SCATTER_ZERO st64step, $azeros, 2f
2:
    { brz   $m3, sca_exit ; fnop }
    { add   $m3, $m3, -1 ; fnop }
sca_pair_row:
    EMB_INDEX sca_pair_skip
    { mov   $m11, $m2 ; fnop }
    { rpt   $m9, 3 ; fnop }
    { ld64step $a0:1, $mzero, $m11+=, 1 ; fnop }
    { ld64  $a2:3, $m8, $mzero, 0 ; fnop }
    { nop   ; f32v2add $a2:3, $a2:3, $a0:1 }
    { st64step $a2:3, $mzero, $m8+=, 1 ; fnop }
sca_pair_skip:
    { add   $m2, $m2, $m10 ; fnop }
    { brnzdec $m3, sca_pair_row ; fnop }
sca_exit:
    { exitz $mzero ; fnop }
