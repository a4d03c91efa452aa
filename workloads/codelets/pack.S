// pack.S — vtx_pack_b_f16: put a block of a matmul's second operand that
// is computed at run time (attention's K^T and V) into the weight layout
// of sv_matmul_f16 with f32 partial sums (workloads/kernels/matmul_model.h,
// matmul_pack_weights): for every output-channel group g of 8 and input
// block j of 16, g-major, 8 rows of 16 f16 values, row u holding
// B[16 j .. 16 j + 15][8 g + u].
//
// The source is f32, element (k, n) at SRC + k * K_STEP + n * N_STEP
// bytes, so a row-major B (K_STEP = row bytes, N_STEP = 4) and a row-major
// B^T (K_STEP = 4, N_STEP = row bytes) are packed alike; its rows past K
// and columns past N are the caller's zeros (the block is padded to whole
// blocks of 16 and groups of 8).  Each value is rounded to f16 by
// f32v2tof16 (round to nearest even, as the tile's other casts).
//
// Record (words): SRC (8 g0's first value), DST (where group g0's block
// starts: 256 bytes a group per block), BLOCKS (K / 16), GROUPS (this
// worker's groups; 0: nothing), K_STEP, N_STEP.  The six workers take
// consecutive runs of groups.
//
// Cost: per output word (two values) two ld32, one bundle of add and
// f32v2tof16, one st32step: 4 issues, 2 worker issues a value; with the
// loop overheads a unit row (16 values) is 35 issues, a group of J blocks
// 2 + J (2 + 8 x 35 + 2) + 3.  Six workers busy: about 0.37 tile cycles a
// value.

    .equ PACK_V_SRC, 0
    .equ PACK_V_DST, 1
    .equ PACK_V_BLOCKS, 2
    .equ PACK_V_GROUPS, 3
    .equ PACK_V_K_STEP, 4
    .equ PACK_V_N_STEP, 5
    .equ PACK_V_WORDS, 6

// Both codelets: the record into $m0..$m5 (nothing to do: to \exit), the
// counts made brnzdec's, $m11 two rows of k.
    .macro pk_record exit
    ld32    $m0, $m13, $mzero, PACK_V_SRC
    ld32    $m1, $m13, $mzero, PACK_V_DST
    ld32    $m2, $m13, $mzero, PACK_V_BLOCKS
    ld32    $m3, $m13, $mzero, PACK_V_GROUPS
    ld32    $m4, $m13, $mzero, PACK_V_K_STEP
    ld32    $m5, $m13, $mzero, PACK_V_N_STEP
    brz     $m3, \exit
    brz     $m2, \exit
    add     $m3, $m3, -1                 // brnzdec counts: n - 1 .. 0
    add     $m2, $m2, -1
    add     $m11, $m4, $m4               // two rows of k
    .endm

// One unit row: 16 values of k down the column at $m8, cast in pairs and
// stored at $m1 on.
    .macro pk_unit_row
    .rept 8
    { ld32  $a0, $m8, $mzero, 0 ; fnop }
    { ld32  $a1, $m8, $m4, 0 ; fnop }
    { add   $m8, $m8, $m11 ; f32v2tof16 $a2, $a0:1 }
    { st32step $a2, $mzero, $m1+=, 1 ; fnop }
    .endr
    .endm

    .text
    .align 8
    .globl vtx_pack_b_f16
    .worker
vtx_pack_b_f16:
    pk_record pk_exit
    shl     $m14, $m4, 4                 // sixteen rows of k: the next block
pk_group:                                // every issue from here a bundle (8-byte aligned)
    { mov   $m9, $m0 ; fnop }            // (k 0, n 8 g) of this group
    { mov   $m6, $m2 ; fnop }
pk_block:
    { mov   $m10, $m9 ; fnop }           // (k 16 j, n 8 g + u)
    { setzi $m7, 7 ; fnop }
pk_unit:
    { mov   $m8, $m10 ; fnop }
    pk_unit_row
    { add   $m10, $m10, $m5 ; fnop }
    { brnzdec $m7, pk_unit ; fnop }
    { add   $m9, $m9, $m14 ; fnop }
    { brnzdec $m6, pk_block ; fnop }
    { shl   $m8, $m5, 3 ; fnop }         // the next group: 8 columns on
    { add   $m0, $m0, $m8 ; fnop }
    { brnzdec $m3, pk_group ; fnop }
pk_exit:
    exitz   $mzero

// vtx_pack_b_f16_h16: the same for sv_matmul_f16 with f16 partial sums
// (matmul_pack_weights with MATMUL_PARTIALS_F16): groups of 16 output
// channels, and unit u of a group holding channel matmul_unit_channel(u):
// units 0, 1, 2, 3, ..., 15 take channels 0, 1, 4, 5, 8, 9, 12, 13, then
// 2, 3, 6, 7, 10, 11, 14, 15 (f16v4hihov4amp's result words, units 2p,
// 2p + 1 of each engine set).  Record as above, GROUPS counting groups of
// 16 columns and DST 512 bytes a group per block.  Two halves (from column
// 0, then 2) of four pairs of units (columns c and c + 1, c four apart).
// ($m12 and $m13 are read-only on a worker: the counters live in $m7 and
// the pair step in $m14.)
//
// Cost: the unit rows as above (35 issues each); a pair 2 x 35 + 2, a half
// 1 + 4 x 72, a block 1 + 2 + 2 x 289 + 3, a group 2 + J x 584 + 3.

    .macro pkh_half
    { setzi $m7, 3 ; fnop }
1:
    { mov   $m8, $m10 ; fnop }           // the pair's first unit: column c
    pk_unit_row
    { add   $m8, $m10, $m5 ; fnop }      // its second: column c + 1
    pk_unit_row
    { add   $m10, $m10, $m14 ; fnop }
    { brnzdec $m7, 1b ; fnop }
    .endm

    .text
    .align 8
    .globl vtx_pack_b_f16_h16
    .worker
vtx_pack_b_f16_h16:
    pk_record pkh_exit
    shl     $m14, $m5, 2                 // four columns: the next pair
pkh_group:                               // every issue from here a bundle (8-byte aligned)
    { mov   $m9, $m0 ; fnop }            // (k 0, n 16 g) of this group
    { mov   $m6, $m2 ; fnop }
pkh_block:
    { mov   $m10, $m9 ; fnop }           // (k 16 j, n 16 g): the first half from column 0
    pkh_half
    { add   $m10, $m9, $m5 ; fnop }      // the second from column 2
    { add   $m10, $m10, $m5 ; fnop }
    pkh_half
    { shl   $m8, $m4, 4 ; fnop }         // sixteen rows of k: the next block
    { add   $m9, $m9, $m8 ; fnop }
    { brnzdec $m6, pkh_block ; fnop }
    { shl   $m8, $m5, 4 ; fnop }         // the next group: 16 columns on
    { add   $m0, $m0, $m8 ; fnop }
    { brnzdec $m3, pkh_group ; fnop }
pkh_exit:
    exitz   $mzero
