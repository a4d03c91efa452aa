// logic.S — comparisons, Where, logical ops on bool bytes and integer
// element-wise arithmetic (worker codelets of the kernel library):
//
//     vtx_compare_f32   out = in0 OP in1 as bool bytes (f32cmp*)
//     vtx_compare_i32   the same on i32 (cmpeq, cmpslt)
//     vtx_where_f32     out = in0 ? in1 : in2 (in0 bool bytes, 32-bit values)
//     vtx_logic_u8      and, or, xor, not of bool bytes
//     vtx_binary_i32    add, sub, mul, max, min on i32, wrapping
//
// The record, broadcasting (column steps and row jumps), alignment and
// the bool output's last-word rule are in logic.h (the word offsets are
// repeated here as .equ); the bit-exact models are in logic_model.c.
// Calling convention: abi.h (one record per worker, $m13 its address).
//
// Every worker instruction is a bundle ({ main ; fnop } or { nop ; aux }),
// as in elementwise.S, so every branch target is 8-byte aligned.
//
// One loop shape for all: elements one at a time, in segments that end
// at a row's end or at the record's end (min(columns left, elements
// left)), counted down by brnzdec; between segments each input pointer
// takes its row jump.  The integer and byte work runs on the main
// pipeline: the f32 compare's mask (0xffffffff / 0, ISA2 f32cmp*) comes
// to the MRF with atom.  A bool result is shifted into the top byte of an
// accumulator that moves down a byte per element (the element order in a
// little-endian word), stored by st32step every fourth element; a last
// partial word is merged with what the output already holds there (the
// tile has no byte store, ISA2 §2.8.9).
//
// Registers.  Bool-output codelets: $m0 in0, $m1 in1, $m2 in0's column
// step, $m3 out, $m4 elements left after this segment, $m5 the segment's
// counter, $m6 the accumulator, $m7 free bytes left in it, $m8 in1's column
// step, $m9-$m11 work ($m11 = 1 << 24 in vtx_compare_f32).  Word-output
// codelets: $m6 in2, $m7 in2's column step, the rest the same.
//
// Worker cycles per element in a segment (each issue one worker cycle,
// ISA2 Table 4.1; +2 on every fourth element of a bool output for the
// store): compare_f32 11, compare_i32 11 (LE/GE 12), logic_u8 11 (not 9),
// where 13, binary_i32 7; a row change costs 10 (12 for where).  With six
// workers busy a tile issues once a cycle, so tile cycles per element are
// the same figures: measured at 12,000 elements over six workers, one row
// each (tests/test_codelets_logic.c, "per-element cost"): compare_f32 and
// compare_i32 (eq) 11.51, logic_u8 (and) 11.51, where 13.01, binary_i32
// (add) 7.01.  The loops are plain; wider ones (four bools a word for the
// logical ops on aligned contiguous bytes) are left for later.
//
// A record whose op is out of range stops its worker with
// trap LOGIC_TRAP_BAD_OP.

    .equ LOGIC_V_OUT, 0
    .equ LOGIC_V_N, 1
    .equ LOGIC_V_COLS, 2
    .equ LOGIC_V_COL0, 3
    .equ LOGIC_V_OP, 4
    .equ LOGIC_V_IN0, 5
    .equ LOGIC_V_IN0_COL_STEP, 6
    .equ LOGIC_V_IN0_ROW_JUMP, 7
    .equ LOGIC_V_IN1, 8
    .equ LOGIC_V_IN1_COL_STEP, 9
    .equ LOGIC_V_IN1_ROW_JUMP, 10
    .equ LOGIC_V_IN2, 11
    .equ LOGIC_V_IN2_COL_STEP, 12
    .equ LOGIC_V_IN2_ROW_JUMP, 13
    .equ LOGIC_COMPARE_OPS, 5
    .equ LOGIC_BOOL_OPS, 4
    .equ LOGIC_INT_OPS, 5
    .equ LOGIC_TRAP_BAD_OP, 0x4c

    // Record entry: $m4 = n (exit at 0), the op checked against \ops
    // ($m9 = op), pointers and column steps loaded, $m10 = the columns left
    // in the first row, then a jump through the table \tab by op.
    .macro LG_ENTRY ops, tab, three, boolout
    { ld32  $m4, $m13, $mzero, LOGIC_V_N ; fnop }
    { ld32  $m9, $m13, $mzero, LOGIC_V_OP ; fnop }
    { brz   $m4, lg_exit ; fnop }
    { cmpult $m10, $m9, \ops ; fnop }
    { brz   $m10, lg_bad_op ; fnop }
    { ld32  $m0, $m13, $mzero, LOGIC_V_IN0 ; fnop }
    { ld32  $m2, $m13, $mzero, LOGIC_V_IN0_COL_STEP ; fnop }
    { ld32  $m1, $m13, $mzero, LOGIC_V_IN1 ; fnop }
    { ld32  $m8, $m13, $mzero, LOGIC_V_IN1_COL_STEP ; fnop }
    { ld32  $m3, $m13, $mzero, LOGIC_V_OUT ; fnop }
    .if \three
    { ld32  $m6, $m13, $mzero, LOGIC_V_IN2 ; fnop }
    { ld32  $m7, $m13, $mzero, LOGIC_V_IN2_COL_STEP ; fnop }
    .endif
    .if \boolout
    { setzi $m6, 0 ; fnop }
    { setzi $m7, 4 ; fnop }
    .endif
    { ld32  $m10, $m13, $mzero, LOGIC_V_COLS ; fnop }
    { ld32  $m11, $m13, $mzero, LOGIC_V_COL0 ; fnop }
    { sub   $m10, $m10, $m11 ; fnop }
    { setzi $m11, \tab ; fnop }
    { shl   $m9, $m9, 2 ; fnop }
    { ld32  $m9, $m11, $m9, 0 ; fnop }
    { br    $m9 ; fnop }
    .endm

    // The segment loop around one element's body \body (argument \arg):
    // on entry $m10 = columns left in the current row.
    .macro LG_LOOP body, arg, three, boolout
1:
    { min   $m5, $m10, $m4 ; fnop }
    { sub   $m4, $m4, $m5 ; fnop }
    { add   $m5, $m5, -1 ; fnop }
2:
    \body \arg
    { brnzdec $m5, 2b ; fnop }
    .if \boolout
    { brz   $m4, lg_finish_bool ; fnop }
    .else
    { brz   $m4, lg_exit ; fnop }
    .endif
    { ld32  $m10, $m13, $mzero, LOGIC_V_IN0_ROW_JUMP ; fnop }
    { add   $m0, $m0, $m10 ; fnop }
    { ld32  $m10, $m13, $mzero, LOGIC_V_IN1_ROW_JUMP ; fnop }
    { add   $m1, $m1, $m10 ; fnop }
    .if \three
    { ld32  $m10, $m13, $mzero, LOGIC_V_IN2_ROW_JUMP ; fnop }
    { add   $m6, $m6, $m10 ; fnop }
    .endif
    { ld32  $m10, $m13, $mzero, LOGIC_V_COLS ; fnop }
    { bri   1b ; fnop }
    .endm

    // A bool result in $m9's byte 3 (other bits zero) into the accumulator.
    .macro LG_EMIT
    { shr   $m6, $m6, 8 ; fnop }
    { or    $m6, $m6, $m9 ; fnop }
    { add   $m7, $m7, -1 ; fnop }
    { brnz  $m7, 3f ; fnop }
    { st32step $m6, $mzero, $m3+=, 1 ; fnop }
    { setzi $m7, 4 ; fnop }
3:
    .endm

    .macro LG_CMP_F32 cmp
    { ld32  $a0, $m0, $mzero, 0 ; fnop }
    { ld32  $a1, $m1, $mzero, 0 ; fnop }
    { add   $m0, $m0, $m2 ; \cmp $a2, $a0, $a1 }
    { add   $m1, $m1, $m8 ; fnop }
    { atom  $m9, $a2 ; fnop }
    { and   $m9, $m9, $m11 ; fnop }
    LG_EMIT
    .endm

    // i32: \kind 0 eq, 1 lt, 2 gt, 3 le (not gt), 4 ge (not lt).
    .macro LG_CMP_I32 kind
    { ld32  $m9, $m0, $mzero, 0 ; fnop }
    { ld32  $m10, $m1, $mzero, 0 ; fnop }
    { add   $m0, $m0, $m2 ; fnop }
    { add   $m1, $m1, $m8 ; fnop }
    .if \kind == 0
    { cmpeq $m9, $m9, $m10 ; fnop }
    .endif
    .if \kind == 1
    { cmpslt $m9, $m9, $m10 ; fnop }
    .endif
    .if \kind == 2
    { cmpslt $m9, $m10, $m9 ; fnop }
    .endif
    .if \kind == 3
    { cmpslt $m9, $m10, $m9 ; fnop }
    { xor   $m9, $m9, 1 ; fnop }
    .endif
    .if \kind == 4
    { cmpslt $m9, $m9, $m10 ; fnop }
    { xor   $m9, $m9, 1 ; fnop }
    .endif
    { shl   $m9, $m9, 24 ; fnop }
    LG_EMIT
    .endm

    .macro LG_BOOL op
    { ldz8  $m9, $m0, $mzero, 0 ; fnop }
    { add   $m0, $m0, $m2 ; fnop }
    .ifc \op, not
    { xor   $m9, $m9, 1 ; fnop }
    .else
    { ldz8  $m10, $m1, $mzero, 0 ; fnop }
    { add   $m1, $m1, $m8 ; fnop }
    { \op   $m9, $m9, $m10 ; fnop }
    .endif
    { shl   $m9, $m9, 24 ; fnop }
    LG_EMIT
    .endm

    .macro LG_INT op
    { ld32  $m9, $m0, $mzero, 0 ; fnop }
    { ld32  $m10, $m1, $mzero, 0 ; fnop }
    { add   $m0, $m0, $m2 ; fnop }
    { add   $m1, $m1, $m8 ; fnop }
    { \op   $m9, $m9, $m10 ; fnop }
    { st32step $m9, $mzero, $m3+=, 1 ; fnop }
    .endm

    // where: the mask 0 - (cond != 0) picks x's bits or y's.
    .macro LG_WHERE arg
    { ldz8  $m9, $m0, $mzero, 0 ; fnop }
    { ld32  $m10, $m1, $mzero, 0 ; fnop }
    { ld32  $m11, $m6, $mzero, 0 ; fnop }
    { add   $m0, $m0, $m2 ; fnop }
    { add   $m1, $m1, $m8 ; fnop }
    { add   $m6, $m6, $m7 ; fnop }
    { cmpne $m9, $m9, 0 ; fnop }
    { sub   $m9, $mzero, $m9 ; fnop }
    { and   $m10, $m10, $m9 ; fnop }
    { andc  $m11, $m11, $m9 ; fnop }
    { or    $m10, $m10, $m11 ; fnop }
    { st32step $m10, $mzero, $m3+=, 1 ; fnop }
    .endm

    .section .text.logic, "ax"
    .align 8
    .worker
lg_exit:
    { exitz $mzero ; fnop }
lg_bad_op:
    { trap  LOGIC_TRAP_BAD_OP ; fnop }

// The bool output's last partial word: $m7 free bytes (4: none pending);
// the pending bytes sit in the accumulator's top bytes.
lg_finish_bool:
    { cmpeq $m9, $m7, 4 ; fnop }
    { brnz  $m9, lg_exit ; fnop }
    { shl   $m9, $m7, 3 ; fnop }
    { shr   $m6, $m6, $m9 ; fnop }
    { add   $m10, $mzero, -1 ; fnop }
    { shr   $m10, $m10, $m9 ; fnop }            // the bytes written
    { ld32  $m11, $m3, $mzero, 0 ; fnop }
    { andc  $m11, $m11, $m10 ; fnop }
    { or    $m6, $m6, $m11 ; fnop }
    { st32  $m6, $m3, $mzero, 0 ; fnop }
    { exitz $mzero ; fnop }

// ---- vtx_compare_f32 ------------------------------------------------------------------
    .globl vtx_compare_f32
vtx_compare_f32:
    LG_ENTRY LOGIC_COMPARE_OPS, lg_tab_cmp_f32, 0, 1
lg_cf_eq:
    { setzi $m11, 1 ; fnop }
    { shl   $m11, $m11, 24 ; fnop }
    LG_LOOP LG_CMP_F32, f32cmpeq, 0, 1
lg_cf_lt:
    { setzi $m11, 1 ; fnop }
    { shl   $m11, $m11, 24 ; fnop }
    LG_LOOP LG_CMP_F32, f32cmplt, 0, 1
lg_cf_gt:
    { setzi $m11, 1 ; fnop }
    { shl   $m11, $m11, 24 ; fnop }
    LG_LOOP LG_CMP_F32, f32cmpgt, 0, 1
lg_cf_le:
    { setzi $m11, 1 ; fnop }
    { shl   $m11, $m11, 24 ; fnop }
    LG_LOOP LG_CMP_F32, f32cmple, 0, 1
lg_cf_ge:
    { setzi $m11, 1 ; fnop }
    { shl   $m11, $m11, 24 ; fnop }
    LG_LOOP LG_CMP_F32, f32cmpge, 0, 1

// ---- vtx_compare_i32 ------------------------------------------------------------------
    .globl vtx_compare_i32
vtx_compare_i32:
    LG_ENTRY LOGIC_COMPARE_OPS, lg_tab_cmp_i32, 0, 1
lg_ci_eq:   LG_LOOP LG_CMP_I32, 0, 0, 1
lg_ci_lt:   LG_LOOP LG_CMP_I32, 1, 0, 1
lg_ci_gt:   LG_LOOP LG_CMP_I32, 2, 0, 1
lg_ci_le:   LG_LOOP LG_CMP_I32, 3, 0, 1
lg_ci_ge:   LG_LOOP LG_CMP_I32, 4, 0, 1

// ---- vtx_logic_u8 ---------------------------------------------------------------------
    .globl vtx_logic_u8
vtx_logic_u8:
    LG_ENTRY LOGIC_BOOL_OPS, lg_tab_bool, 0, 1
lg_b_and:   LG_LOOP LG_BOOL, and, 0, 1
lg_b_or:    LG_LOOP LG_BOOL, or, 0, 1
lg_b_xor:   LG_LOOP LG_BOOL, xor, 0, 1
lg_b_not:   LG_LOOP LG_BOOL, not, 0, 1

// ---- vtx_binary_i32 -------------------------------------------------------------------
    .globl vtx_binary_i32
vtx_binary_i32:
    LG_ENTRY LOGIC_INT_OPS, lg_tab_int, 0, 0
lg_i_add:   LG_LOOP LG_INT, add, 0, 0
lg_i_sub:   LG_LOOP LG_INT, sub, 0, 0
lg_i_mul:   LG_LOOP LG_INT, mul, 0, 0
lg_i_max:   LG_LOOP LG_INT, max, 0, 0
lg_i_min:   LG_LOOP LG_INT, min, 0, 0

// ---- vtx_where_f32 --------------------------------------------------------------------
// The op word is ignored (the table has one entry for every op up to 2^32).
    .globl vtx_where_f32
vtx_where_f32:
    { ld32  $m4, $m13, $mzero, LOGIC_V_N ; fnop }
    { ld32  $m0, $m13, $mzero, LOGIC_V_IN0 ; fnop }
    { brz   $m4, lg_exit ; fnop }
    { ld32  $m2, $m13, $mzero, LOGIC_V_IN0_COL_STEP ; fnop }
    { ld32  $m1, $m13, $mzero, LOGIC_V_IN1 ; fnop }
    { ld32  $m8, $m13, $mzero, LOGIC_V_IN1_COL_STEP ; fnop }
    { ld32  $m3, $m13, $mzero, LOGIC_V_OUT ; fnop }
    { ld32  $m6, $m13, $mzero, LOGIC_V_IN2 ; fnop }
    { ld32  $m7, $m13, $mzero, LOGIC_V_IN2_COL_STEP ; fnop }
    { ld32  $m10, $m13, $mzero, LOGIC_V_COLS ; fnop }
    { ld32  $m11, $m13, $mzero, LOGIC_V_COL0 ; fnop }
    { sub   $m10, $m10, $m11 ; fnop }
    LG_LOOP LG_WHERE, 0, 1, 0

// ---- dispatch tables --------------------------------------------------------------------
    .section .data.logic, "aw"
    .align 8
lg_tab_cmp_f32:                          // by enum logic_compare_op
    .word lg_cf_eq, lg_cf_lt, lg_cf_gt, lg_cf_le, lg_cf_ge
lg_tab_cmp_i32:
    .word lg_ci_eq, lg_ci_lt, lg_ci_gt, lg_ci_le, lg_ci_ge
lg_tab_bool:                             // by enum logic_bool_op
    .word lg_b_and, lg_b_or, lg_b_xor, lg_b_not
lg_tab_int:                              // by enum logic_int_op
    .word lg_i_add, lg_i_sub, lg_i_mul, lg_i_max, lg_i_min
    .text
