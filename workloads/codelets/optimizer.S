// optimizer.S — the optimizer codelets of the kernel library (worker
// codelets):
//
//     vtx_adam_updater_f32   Adam's and LAMB's moments and update
//                            direction of a weight, element by element,
//                            the moments written over themselves
//
// The record, the arithmetic and the costs are in optimizer.h (the word
// offsets are repeated here as .equ); the bit-exact model is in
// optimizer_model.c.  Calling convention: abi.h (one record per worker,
// $m13 its address).  Every instruction is a bundle ({ main ; fnop } or
// { nop ; aux }), so every branch target is 8-byte aligned.
//
// One loop for each decay (none, Adam's L2, LAMB's decoupled) and width
// of w (f32, f16), chosen once; the loop takes an element a turn, its
// loads and stores paired with the arithmetic where one waits for the
// other no more.  Registers: $m0 G, $m1 M, $m2 V, $m3 W, $m4 R, $m5 the
// flags, $m7 the f32 elements' byte offset, $m8 the f16 one's, $m9 the
// elements left less one (brnzdec); $a6 c1, $a7 c2, $a8 beta1, $a9
// 1 - beta1, $a10 beta2, $a11 1 - beta2, $a12 epsilon, $a13 the decay;
// $a0 g (then gw), $a1 m, $a2 v, $a3 w, $a4 and $a5 what is between.

    .equ ADAM_V_G, 0
    .equ ADAM_V_M, 1
    .equ ADAM_V_V, 2
    .equ ADAM_V_W, 3
    .equ ADAM_V_R, 4
    .equ ADAM_V_N, 5
    .equ ADAM_V_C1, 6
    .equ ADAM_V_C2, 7
    .equ ADAM_V_BETA1, 8
    .equ ADAM_V_ONE_MINUS_BETA1, 9
    .equ ADAM_V_BETA2, 10
    .equ ADAM_V_ONE_MINUS_BETA2, 11
    .equ ADAM_V_EPSILON, 12
    .equ ADAM_V_WEIGHT_DECAY, 13
    .equ ADAM_V_FLAGS, 14
    .equ ADAM_FLAG_L2, 1
    .equ ADAM_FLAG_DECOUPLED, 2
    .equ ADAM_FLAG_W_F16, 4

// The loop over the elements: decay 0 none, 1 L2 (into g), 2 decoupled
// (into r); half 1 for an f16 w.
    .macro ADAM_LOOP decay, half
1:
    { ld32  $a0, $m0, $m7, 0 ; fnop }                  // g
    .if \decay == 1
    .if \half
    { ldb16 $a3, $m3, $m8, 0 ; fnop }
    { add   $m8, $m8, 2 ; f16tof32 $a3, $a3 }
    .else
    { ld32  $a3, $m3, $m7, 0 ; fnop }                  // w
    .endif
    { ld32  $a1, $m1, $m7, 0 ; f32mul $a4, $a3, $a13 } // m; w decay
    { ld32  $a2, $m2, $m7, 0 ; f32add $a0, $a0, $a4 }  // v; gw = g + w decay
    .else
    { ld32  $a1, $m1, $m7, 0 ; fnop }                  // m
    { ld32  $a2, $m2, $m7, 0 ; fnop }                  // v
    .endif
    .if \decay == 2
    .if \half
    { ldb16 $a3, $m3, $m8, 0 ; f32mul $a1, $a1, $a8 }  // w; m beta1
    { add   $m8, $m8, 2 ; f16tof32 $a3, $a3 }
    .else
    { ld32  $a3, $m3, $m7, 0 ; f32mul $a1, $a1, $a8 }  // w; m beta1
    .endif
    .else
    { nop ; f32mul $a1, $a1, $a8 }                     // m beta1
    .endif
    { nop ; f32mul $a5, $a0, $a9 }                     // gw (1 - beta1)
    { nop ; f32add $a1, $a1, $a5 }                     // m'
    { st32  $a1, $m1, $m7, 0 ; f32mul $a2, $a2, $a10 } // m' stored; v beta2
    { nop ; f32mul $a5, $a0, $a0 }                     // gw gw
    { nop ; f32mul $a5, $a5, $a11 }                    // (1 - beta2) gw gw
    { nop ; f32add $a2, $a2, $a5 }                     // v'
    { st32  $a2, $m2, $m7, 0 ; f32mul $a5, $a2, $a7 }  // v' stored; v' c2
    { nop ; f32sqrt $a5, $a5 }
    { nop ; f32add $a5, $a5, $a12 }                    // sqrt(v' c2) + epsilon
    { nop ; f32mul $a4, $a1, $a6 }                     // m' c1
    { nop ; f32div $a4, $a4, $a5 }                     // r
    .if \decay == 2
    { nop ; f32mul $a5, $a3, $a13 }                    // w decay
    { nop ; f32add $a4, $a4, $a5 }                     // r + w decay
    .endif
    { st32  $a4, $m4, $m7, 0 ; fnop }
    { add   $m7, $m7, 4 ; fnop }
    { brnzdec $m9, 1b ; fnop }
    { exitz $mzero ; fnop }
    .endm

    .section .text.optimizer, "ax"
    .align 8
    .worker
    .globl vtx_adam_updater_f32
vtx_adam_updater_f32:
    { ld32  $m9, $m13, $mzero, ADAM_V_N ; fnop }
    { brz   $m9, adam_exit ; fnop }
    { ld32  $m0, $m13, $mzero, ADAM_V_G ; fnop }
    { ld32  $m1, $m13, $mzero, ADAM_V_M ; fnop }
    { ld32  $m2, $m13, $mzero, ADAM_V_V ; fnop }
    { ld32  $m3, $m13, $mzero, ADAM_V_W ; fnop }
    { ld32  $m4, $m13, $mzero, ADAM_V_R ; fnop }
    { ld32  $m5, $m13, $mzero, ADAM_V_FLAGS ; fnop }
    { ld32  $m6, $m13, $mzero, ADAM_V_C1 ; fnop }
    { ld32  $a6, $m6, $mzero, 0 ; fnop }
    { ld32  $m6, $m13, $mzero, ADAM_V_C2 ; fnop }
    { ld32  $a7, $m6, $mzero, 0 ; fnop }
    { ld32  $a8, $m13, $mzero, ADAM_V_BETA1 ; fnop }
    { ld32  $a9, $m13, $mzero, ADAM_V_ONE_MINUS_BETA1 ; fnop }
    { ld32  $a10, $m13, $mzero, ADAM_V_BETA2 ; fnop }
    { ld32  $a11, $m13, $mzero, ADAM_V_ONE_MINUS_BETA2 ; fnop }
    { ld32  $a12, $m13, $mzero, ADAM_V_EPSILON ; fnop }
    { ld32  $a13, $m13, $mzero, ADAM_V_WEIGHT_DECAY ; fnop }
    { setzi $m7, 0 ; fnop }
    { setzi $m8, 0 ; fnop }
    { add   $m9, $m9, -1 ; fnop }
    { and   $m6, $m5, ADAM_FLAG_L2 ; fnop }
    { brnz  $m6, adam_l2 ; fnop }
    { and   $m6, $m5, ADAM_FLAG_DECOUPLED ; fnop }
    { brnz  $m6, adam_decoupled ; fnop }
    ADAM_LOOP 0, 0
adam_l2:
    { and   $m6, $m5, ADAM_FLAG_W_F16 ; fnop }
    { brnz  $m6, adam_l2_half ; fnop }
    ADAM_LOOP 1, 0
adam_l2_half:
    ADAM_LOOP 1, 1
adam_decoupled:
    { and   $m6, $m5, ADAM_FLAG_W_F16 ; fnop }
    { brnz  $m6, adam_decoupled_half ; fnop }
    ADAM_LOOP 2, 0
adam_decoupled_half:
    ADAM_LOOP 2, 1
adam_exit:
    { exitz $mzero ; fnop }
