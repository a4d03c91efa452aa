// pool.S — pooling codelets of the kernel library (worker vertices, calling
// convention in workloads/codelets/abi.h; the record layout, the conditions
// on it and the bit-exact C models in workloads/codelets/pool.h,
// pool_model.c):
//
//   vtx_maxpool_nhwc_f32   out[oh][ow][c] = max over the window of in[.][.][c]
//   vtx_avgpool_nhwc_f32   out[oh][ow][c] = (sum over the window) * f32oox(count)
//   vtx_maxpool_grad_nhwc_f32  dX[first max of each window][c] += dY[oh][ow][c]
//                          (the max pool's gradient; at the end)
//
// Channels last, so a pixel's channels are contiguous and the window's
// positions are C * 4 bytes apart along a row.  A worker walks its output
// pixels; for each, the channels in blocks of 4 pairs (8 channels) whose
// partial results stay in $a2..$a9 while the window is walked, then pairs
// left over (chans % 8) one at a time.  Per window position of a block:
// four ld64 and one add of the pixel stride (ld64step's step is an
// immediate, and a pixel is C * 4 bytes, so the position step takes its
// own add), and four f32v2max / f32v2add, each one bundle behind its load
// (the aux half reads $a0:1 before the main half's load of the next pair
// is committed, ISA2 §2.5): 5 bundles for 8 channels.  A window row is a
// rpt over its positions but the last, whose add jumps to the next window
// row.  When the clipped window spans whole input rows and the output has
// one column (a global pool), its rows are contiguous and walked as one.
// Nothing is read outside the window (no read-ahead past the last
// position), and only single 64-bit accesses are made: no placement can
// raise a memory conflict.
//
// Odd channel counts.  When C is odd a pixel starts 4 mod 8 every other
// time, so every channel is pooled alone: the left-over pair's loop with
// ld32 and the scalar op (f32max, f32add: one lane of the f32v2 op, the
// same arithmetic), stored with st32.  When C is even but chans is odd, the
// last channel is pooled alone first, and the others go on in blocks and
// pairs from an 8-byte boundary as above.  The record's entry tests (C |
// chans) & 1 in slots the even case already spent (the -inf pair is one
// load from beside the code instead of four issues through memory; the
// average's test rides in the main halves of its f32fromui32 / f32oox
// bundles), so the even case's loops and cycles are those of before; each
// case has its own copy of the body (POOL_BODY's mode).
//
// The average's count reaches the a-registers from the m-registers
// through the first word of the output pixel, which is written with its
// result later (st32, then ld32 into $a).
//
// Timing (one worker issue every 6 tile cycles; every bundle 1 worker
// cycle but f32oox, 3; ISA2 Table 4.1).  Worker cycles, with a window of
// nkh x nkw positions inside the input, B = chans / 8 blocks, T = (chans %
// 8) / 2 left-over pairs (tests/test_codelets_pool.c counts every issue):
//   block of 8 channels   max 8 + nkh (5 nkw + 2),  avg 9 + nkh (5 nkw + 2)
//   left-over pair        6 + nkh (2 nkw + 2) (+ 1 avg), + 1 for the last,
//                         + 1 more when B = 0
//   pixel                 max 29, avg 31 (count_include_pad) or 39;
//                         a flattened window 10 more
//   output row            17 (+ 4 after its last pixel)
//   record                max 18, avg 23; 5 (or 6) when it has no work;
//                         + 2 when C is odd, + 3 when C is even and chans odd
//   a channel alone       5 + nkh (2 nkw + 2) (+ 1 avg); when C is even (the
//                         last of an odd chans) it replaces the pixel's
//                         first block / pair test (2), which follows it
//                         unless chans = 1
//   empty window          3 a channel (st32) for odd C or chans, 3 a pair else
// Six workers issue one bundle a tile cycle between them, so worker cycles
// per element are tile cycles per element.  Measured on one GC200 tile
// (tests/test_codelets_pool.c, "large"):
//
//   codelet                                    tile cycles  per output  per input read
//   max 3x3 s2 p1, 13x112x64 -> 6x56x64          167,862       7.81         0.87
//     (ResNet-50's pool, 6 of its 56 output rows, one a worker: the
//     whole 112x112x64 input, 3.2 MB, is spread over many tiles)
//   avg global 7x7x2048 -> 1x1x2048               66,618      32.53         0.66
//     (channels split 6 ways: 344 or 336 a worker; one window row of 49)
//   max 3x3 s2 p1, 64x64x3 -> 32x32x3            131,566      42.83
//     (an RGB image: every channel alone)
//   max 3x3 s2 p1, 64x64x6 -> 32x32x6, chans 5   138,484      27.05
//     (the odd channel alone, then two pairs)
//
// The max pool's floor at 5 bundles a position of 8 channels is 9 x 5 / 8
// = 5.6 cycles an output; the rest is window rows (2 each), blocks (8) and
// pixels (29 for 64 channels).

    .equ POOL_V_IN, 0
    .equ POOL_V_OUT, 1
    .equ POOL_V_H, 2
    .equ POOL_V_W, 3
    .equ POOL_V_C, 4
    .equ POOL_V_KH, 5
    .equ POOL_V_KW, 6
    .equ POOL_V_SH, 7
    .equ POOL_V_SW, 8
    .equ POOL_V_PT, 9
    .equ POOL_V_PL, 10
    .equ POOL_V_OH, 11
    .equ POOL_V_OW, 12
    .equ POOL_V_OH0, 13
    .equ POOL_V_OH1, 14
    .equ POOL_V_COUNT_INCLUDE_PAD, 15
    .equ POOL_V_CHANS, 16

    .equ POOL_MAX_FLAT_POSITIONS, 4096    // rpt count positions - 1 <= 4095

    .text

// Registers (both codelets):
//   $m0 load pointer          $m1 S = C * 4, the pixel stride in bytes
//   $m2 J = (W - nkw + 1) S, the step from a window row's last position
//       to the next row's first
//   $m3 nkw - 1 (rpt count)   $m4 window-row counter, scratch
//   $m5 nkh - 1 of the output row
//   $m6 the window's first position (channel 0)
//   $m7 the output pixel      $m8 input row ih0 of the output row
//   $m9 the block's channel offset in bytes, counting down to 0
//   $m10 ow                   $m11 oh
//   $a0:1 the pair loaded     $a2:3 .. $a8:9 the block's 4 pairs
//   $a10:11 the average's 1 / count, both lanes
//   $a12:13 -inf, both lanes (max)
//   a channel alone: $a0 the word loaded, $a2 the result

// The record's checks, S, and the first output pixel; C in $m4 for the
// choice of loops.  5 worker cycles (6 with rows but no channels) to \exit,
// else 13.
.macro POOL_ENTRY exit
    { ld32  $m11, $m13, $mzero, POOL_V_OH0 ; fnop }
    { ld32  $m0, $m13, $mzero, POOL_V_OH1 ; fnop }
    { ld32  $m9, $m13, $mzero, POOL_V_CHANS ; fnop }
    { cmpult $m0, $m11, $m0 ; fnop }
    { brz   $m0, \exit ; fnop }
    { brz   $m9, \exit ; fnop }
    { ld32  $m4, $m13, $mzero, POOL_V_C ; fnop }
    { shl   $m1, $m4, 2 ; fnop }
    { ld32  $m0, $m13, $mzero, POOL_V_OW ; fnop }
    { mul   $m0, $m0, $m1 ; fnop }
    { mul   $m0, $m0, $m11 ; fnop }
    { ld32  $m7, $m13, $mzero, POOL_V_OUT ; fnop }
    { add   $m7, $m7, $m0 ; fnop }
.endm

// One window position of a block: 4 pairs, then the step to the next.
.macro POOL_POS4 op, step
    { ld64  $a0:1, $m0, $mzero, 0 ; fnop }
    { ld64  $a0:1, $m0, $mzero, 1 ; \op $a2:3, $a2:3, $a0:1 }
    { ld64  $a0:1, $m0, $mzero, 2 ; \op $a4:5, $a4:5, $a0:1 }
    { ld64  $a0:1, $m0, $mzero, 3 ; \op $a6:7, $a6:7, $a0:1 }
    { add   $m0, $m0, \step ; \op $a8:9, $a8:9, $a0:1 }
.endm

// The rows, pixels and blocks of one codelet: \op accumulates, \init is
// the pair the accumulators start from, \avg adds the scaling; \mode 0
// (C, chans even) pairs only, 1 (C even, chans odd) the last channel alone
// and then pairs, 2 (C odd) every channel alone, with the scalar \sop
// from the word \init1.
.macro POOL_BODY p, op, init, avg, mode, sop, init1
    .align 8
// ---- an output row: its window rows [ih0, ih1), 17 cycles --------------------
\p\()_row:
    { ld32  $m0, $m13, $mzero, POOL_V_SH ; fnop }
    { mul   $m0, $m11, $m0 ; fnop }
    { ld32  $m2, $m13, $mzero, POOL_V_PT ; fnop }
    { sub   $m0, $m0, $m2 ; fnop }                      // oh SH - PT
    { ld32  $m2, $m13, $mzero, POOL_V_KH ; fnop }
    { add   $m2, $m0, $m2 ; fnop }
    { ld32  $m3, $m13, $mzero, POOL_V_H ; fnop }
    { min   $m2, $m2, $m3 ; fnop }                      // ih1
    { max   $m0, $m0, 0 ; fnop }                        // ih0
    { sub   $m5, $m2, $m0 ; fnop }
    { add   $m5, $m5, -1 ; fnop }                       // nkh - 1, negative when empty
    { ld32  $m2, $m13, $mzero, POOL_V_W ; fnop }
    { mul   $m0, $m0, $m2 ; fnop }
    { mul   $m0, $m0, $m1 ; fnop }
    { ld32  $m8, $m13, $mzero, POOL_V_IN ; fnop }
    { add   $m8, $m8, $m0 ; fnop }                      // in + ih0 W S
    { setzi $m10, 0 ; fnop }
// ---- an output pixel ---------------------------------------------------------------
\p\()_pixel:
    { ld32  $m0, $m13, $mzero, POOL_V_SW ; fnop }
    { mul   $m0, $m10, $m0 ; fnop }
    { ld32  $m2, $m13, $mzero, POOL_V_PL ; fnop }
    { sub   $m0, $m0, $m2 ; fnop }                      // ow SW - PL
    { ld32  $m2, $m13, $mzero, POOL_V_KW ; fnop }
    { add   $m2, $m0, $m2 ; fnop }
    { ld32  $m3, $m13, $mzero, POOL_V_W ; fnop }
    { min   $m2, $m2, $m3 ; fnop }                      // iw1
    { max   $m0, $m0, 0 ; fnop }                        // iw0
    { sub   $m4, $m2, $m0 ; fnop }                      // nkw
    { mul   $m6, $m0, $m1 ; fnop }
    { add   $m6, $m6, $m8 ; fnop }                      // the window's first position
    { sub   $m2, $m3, $m4 ; fnop }
    { add   $m2, $m2, 1 ; fnop }
    { mul   $m2, $m2, $m1 ; fnop }                      // J
    { add   $m3, $m4, -1 ; fnop }
    { brneg $m3, \p\()_empty ; fnop }
    { brneg $m5, \p\()_empty ; fnop }
    // Whole input rows (J == S) and one output column: one window row of
    // nkh nkw positions, if a rpt can count them.  $m5 is the output row's,
    // and this is its only pixel.
    { cmpeq $m4, $m2, $m1 ; fnop }
    { brz   $m4, 1f ; fnop }
    { ld32  $m4, $m13, $mzero, POOL_V_OW ; fnop }
    { cmpeq $m4, $m4, 1 ; fnop }
    { brz   $m4, 1f ; fnop }
    { add   $m4, $m5, 1 ; fnop }
    { add   $m0, $m3, 1 ; fnop }
    { mul   $m4, $m4, $m0 ; fnop }
    { cmpult $m0, $m4, POOL_MAX_FLAT_POSITIONS + 1 ; fnop }
    { brz   $m0, 1f ; fnop }
    { add   $m3, $m4, -1 ; fnop }
    { setzi $m5, 0 ; fnop }
1:
    .if \avg
    // 1 / count into $a10:11 (count_include_pad: the record's, set once).
    { ld32  $m4, $m13, $mzero, POOL_V_COUNT_INCLUDE_PAD ; fnop }
    { brnz  $m4, 1f ; fnop }
    { add   $m4, $m5, 1 ; fnop }
    { add   $m0, $m3, 1 ; fnop }
    { mul   $m4, $m4, $m0 ; fnop }                      // nkh nkw
    { st32  $m4, $m7, $mzero, 0 ; fnop }
    { ld32  $a10, $m7, $mzero, 0 ; fnop }
    { ld32  $m9, $m13, $mzero, POOL_V_CHANS ; f32fromui32 $a10, $a10 }
    { shl   $m9, $m9, 2 ; f32oox $a10, $a10 }
    { bri   2f ; mov $a11, $a10 }
    .endif
1:
    { ld32  $m9, $m13, $mzero, POOL_V_CHANS ; fnop }
    { shl   $m9, $m9, 2 ; fnop }                        // past the last channel
2:
    .if \mode == 2
// ---- every channel alone (C odd), from the top: 5 + rows (avg 6) -------------------
\p\()_single:
    POOL_SINGLE \sop, \init1, \avg
    { brnz  $m9, \p\()_single ; fnop }
    .else
    .if \mode == 1
    // The odd last channel alone, then pairs from an 8-byte boundary.
    POOL_SINGLE \sop, \init1, \avg
    { brz   $m9, \p\()_next ; fnop }
    .endif
    { and   $m4, $m9, 31 ; fnop }
    { brnz  $m4, \p\()_tail ; mov $a8:9, \init }
// ---- a block of 8 channels: 3 + rows + 5 (avg 6) ---------------------------------
\p\()_block:
    { add   $m9, $m9, -32 ; mov $a2:3, \init }
    { add   $m0, $m6, $m9 ; mov $a4:5, \init }
    { mov   $m4, $m5 ; mov $a6:7, \init }
\p\()_brow:
    { rpt   $m3, 4 ; fnop }
    POOL_POS4 \op, $m1
    POOL_POS4 \op, $m2
    { brnzdec $m4, \p\()_brow ; fnop }
    .if \avg
    { nop ; f32v2mul $a2:3, $a2:3, $a10:11 }
    { st64  $a2:3, $m7, $m9, 0 ; f32v2mul $a4:5, $a4:5, $a10:11 }
    { st64  $a4:5, $m7, $m9, 1 ; f32v2mul $a6:7, $a6:7, $a10:11 }
    { st64  $a6:7, $m7, $m9, 2 ; f32v2mul $a8:9, $a8:9, $a10:11 }
    .else
    { st64  $a2:3, $m7, $m9, 0 ; fnop }
    { st64  $a4:5, $m7, $m9, 1 ; fnop }
    { st64  $a6:7, $m7, $m9, 2 ; fnop }
    .endif
    { st64  $a8:9, $m7, $m9, 3 ; mov $a8:9, \init }     // the store reads first
    { brnz  $m9, \p\()_block ; fnop }
    .endif
// ---- the next pixel, the next output row: 5, or 9 ---------------------------------
\p\()_next:
    { add   $m7, $m7, $m1 ; fnop }
    { add   $m10, $m10, 1 ; fnop }
    { ld32  $m4, $m13, $mzero, POOL_V_OW ; fnop }
    { cmpult $m4, $m10, $m4 ; fnop }
    { brnz  $m4, \p\()_pixel ; fnop }
    { add   $m11, $m11, 1 ; fnop }
    { ld32  $m4, $m13, $mzero, POOL_V_OH1 ; fnop }
    { cmpult $m4, $m11, $m4 ; fnop }
    { brnz  $m4, \p\()_row ; fnop }
    { exitz $mzero ; fnop }
    .if \mode < 2
// ---- a left-over pair (chans % 8), at the top of the pixel's channels --------------
\p\()_tail:
    { add   $m9, $m9, -8 ; mov $a2:3, \init }
    { add   $m0, $m6, $m9 ; fnop }
    { mov   $m4, $m5 ; fnop }
\p\()_trow:
    { rpt   $m3, 1 ; fnop }
    { ld64  $a0:1, $m0, $mzero, 0 ; fnop }
    { add   $m0, $m0, $m1 ; \op $a2:3, $a2:3, $a0:1 }
    { ld64  $a0:1, $m0, $mzero, 0 ; fnop }
    { add   $m0, $m0, $m2 ; \op $a2:3, $a2:3, $a0:1 }
    { brnzdec $m4, \p\()_trow ; fnop }
    .if \avg
    { nop ; f32v2mul $a2:3, $a2:3, $a10:11 }
    .endif
    { st64  $a2:3, $m7, $m9, 0 ; fnop }
    { and   $m4, $m9, 31 ; fnop }
    { brnz  $m4, \p\()_tail ; fnop }
    { brnz  $m9, \p\()_block ; fnop }
    { bri   \p\()_next ; fnop }
    .endif
// ---- a window with no position inside the input: \init stored ----------------------
\p\()_empty:
    { ld32  $m9, $m13, $mzero, POOL_V_CHANS ; fnop }
    { shl   $m9, $m9, 2 ; fnop }
1:
    .if \mode == 0
    { add   $m9, $m9, -8 ; fnop }
    { st64  \init, $m7, $m9, 0 ; fnop }
    .else
    { add   $m9, $m9, -4 ; fnop }
    { st32  \init1, $m7, $m9, 0 ; fnop }
    .endif
    { brnz  $m9, 1b ; fnop }
    { bri   \p\()_next ; fnop }
.endm

// One channel alone, the one below byte offset $m9 (which it steps down
// by 4), over the window: the pair loop of a left-over pair with ld32 and
// the scalar \sop (one lane of the f32v2 op: the same arithmetic), the
// result stored with st32.  3 + nkh (2 nkw + 2) + 1 (avg 2).
.macro POOL_SINGLE sop, init1, avg
    { add   $m9, $m9, -4 ; mov $a2, \init1 }
    { add   $m0, $m6, $m9 ; fnop }
    { mov   $m4, $m5 ; fnop }
1:
    { rpt   $m3, 1 ; fnop }
    { ld32  $a0, $m0, $mzero, 0 ; fnop }
    { add   $m0, $m0, $m1 ; \sop $a2, $a2, $a0 }
    { ld32  $a0, $m0, $mzero, 0 ; fnop }
    { add   $m0, $m0, $m2 ; \sop $a2, $a2, $a0 }
    { brnzdec $m4, 1b ; fnop }
    .if \avg
    { nop ; f32mul $a2, $a2, $a10 }
    .endif
    { st32  $a2, $m7, $m9, 0 ; fnop }
.endm

// ---- vtx_maxpool_nhwc_f32 ------------------------------------------------------------
    .align 8
    .globl vtx_maxpool_nhwc_f32
    .worker
vtx_maxpool_nhwc_f32:
    POOL_ENTRY pool_exit
    { or    $m4, $m4, $m9 ; fnop }
    { and   $m4, $m4, 1 ; fnop }                        // C or chans odd
    { setzi $m0, pool_neg_inf ; fnop }
    { ld64  $a12:13, $m0, $mzero, 0 ; fnop }
    { brz   $m4, pool_max_row ; fnop }
    { and   $m4, $m1, 4 ; fnop }
    { brnz  $m4, pool_max2_row ; fnop }
    { bri   pool_max1_row ; fnop }
    POOL_BODY pool_max, f32v2max, $a12:13, 0, 0, f32max, $a12
    POOL_BODY pool_max1, f32v2max, $a12:13, 0, 1, f32max, $a12
    POOL_BODY pool_max2, f32v2max, $a12:13, 0, 2, f32max, $a12

// ---- vtx_avgpool_nhwc_f32 ------------------------------------------------------------
    .align 8
    .globl vtx_avgpool_nhwc_f32
    .worker
vtx_avgpool_nhwc_f32:
    POOL_ENTRY pool_exit
    // 1 / (KH KW) into $a10:11, for count_include_pad
    { ld32  $m0, $m13, $mzero, POOL_V_KH ; fnop }
    { ld32  $m2, $m13, $mzero, POOL_V_KW ; fnop }
    { mul   $m0, $m0, $m2 ; fnop }
    { st32  $m0, $m7, $mzero, 0 ; fnop }
    { ld32  $a10, $m7, $mzero, 0 ; fnop }
    { or    $m4, $m4, $m9 ; f32fromui32 $a10, $a10 }
    { and   $m4, $m4, 1 ; f32oox $a10, $a10 }          // C or chans odd
    { brz   $m4, pool_avg_row ; mov $a11, $a10 }
    { and   $m4, $m1, 4 ; fnop }
    { brnz  $m4, pool_avg2_row ; fnop }
    { bri   pool_avg1_row ; fnop }
    POOL_BODY pool_avg, f32v2add, $azeros, 1, 0, f32add, $azero
    POOL_BODY pool_avg1, f32v2add, $azeros, 1, 1, f32add, $azero
    POOL_BODY pool_avg2, f32v2add, $azeros, 1, 2, f32add, $azero

    .align 8
pool_exit:
    exitz   $mzero

// -inf in both lanes, the max's starting pair: beside the code, as no
// single main-pipeline instruction makes 0xff800000 and $a registers are
// written only from memory (a load here is 2 issues; building it in $m0
// and passing it through memory was 4).
    .align 8
pool_neg_inf:
    .word 0xff800000, 0xff800000

// ---- vtx_maxpool_grad_nhwc_f32 -------------------------------------------------------
// The gradient of the max pool (record and model in pool.h): the worker's
// dX rows [IH0, IH1), channels [0, CHANS), zeroed, then for every output
// pixel of rows [OH0, OH1) and every channel, the window's max (pass 1:
// f32max from -inf, row-major, as vtx_maxpool_nhwc_f32), its first
// position equal to it (pass 2: f32cmpeq, atom, a branch a position), and,
// when that position is in the worker's rows, dX there += dY (f32add).
// One channel at a time (32-bit accesses: any C, no memory conflict).
//
// Registers: $m0 load pointer, $m1 S = C * 4, $m2 J = (W - nkw) S (a
// window row's end to the next row's start), $m3 nkw, $m4 window-row
// counter, $m5 nkh - 1, $m6 the window's first position (channel 0), $m7
// the dY pixel, $m8 pass 2's column counter, $m9 the channel's byte offset
// (counting down), $m10 scratch, $m11 oh; $a12 -inf, $a2 the max.  The
// record's last four words hold what does not fit in registers.

    .equ MPG_V_IN, 0
    .equ MPG_V_DY, 1
    .equ MPG_V_DX, 2
    .equ MPG_V_H, 3
    .equ MPG_V_W, 4
    .equ MPG_V_C, 5
    .equ MPG_V_KH, 6
    .equ MPG_V_KW, 7
    .equ MPG_V_SH, 8
    .equ MPG_V_SW, 9
    .equ MPG_V_PT, 10
    .equ MPG_V_PL, 11
    .equ MPG_V_OW, 12
    .equ MPG_V_OH0, 13
    .equ MPG_V_OH1, 14
    .equ MPG_V_IH0, 15
    .equ MPG_V_IH1, 16
    .equ MPG_V_CHANS, 17
    .equ MPG_V_DY_PIXEL_STEP, 18
    .equ MPG_V_DY_CHAN_STEP, 19
    .equ MPG_V_ROW_AT, 20
    .equ MPG_V_OW_AT, 21
    .equ MPG_V_OWN_AT, 22
    .equ MPG_V_OWN_BYTES, 23

    .align 8
    .globl vtx_maxpool_grad_nhwc_f32
    .worker
vtx_maxpool_grad_nhwc_f32:
    { ld32  $m0, $m13, $mzero, MPG_V_IH0 ; fnop }
    { ld32  $m2, $m13, $mzero, MPG_V_IH1 ; fnop }
    { ld32  $m9, $m13, $mzero, MPG_V_CHANS ; fnop }
    { cmpult $m4, $m0, $m2 ; fnop }
    { brz   $m4, mpg_exit ; fnop }
    { brz   $m9, mpg_exit ; fnop }
    { ld32  $m1, $m13, $mzero, MPG_V_C ; fnop }
    { shl   $m1, $m1, 2 ; fnop }                        // S
    { ld32  $m3, $m13, $mzero, MPG_V_W ; fnop }
    { sub   $m2, $m2, $m0 ; fnop }
    { mul   $m2, $m2, $m3 ; fnop }                      // pixels of the worker's rows
    { mul   $m3, $m3, $m1 ; fnop }                      // W S
    { mul   $m4, $m2, $m1 ; fnop }
    { st32  $m4, $m13, $mzero, MPG_V_OWN_BYTES ; fnop }
    { mul   $m0, $m0, $m3 ; fnop }
    { ld32  $m4, $m13, $mzero, MPG_V_IN ; fnop }
    { add   $m0, $m0, $m4 ; fnop }
    { st32  $m0, $m13, $mzero, MPG_V_OWN_AT ; fnop }    // X pixel (IH0, 0)
    { setzi $m0, pool_neg_inf ; fnop }
    { ld32  $a12, $m0, $mzero, 0 ; fnop }
    { ld32  $m0, $m13, $mzero, MPG_V_DX ; fnop }
    { shl   $m5, $m9, 2 ; fnop }
    { sub   $m5, $m1, $m5 ; fnop }                      // S - CHANS * 4
    { add   $m2, $m2, -1 ; fnop }
// ---- dX's rows zeroed: CHANS + 3 a pixel -----------------------------------------
mpg_zero:
    { rpt   $m9, 0 ; fnop }
    { st32step $azero, $mzero, $m0+=, 1 ; fnop }
    { add   $m0, $m0, $m5 ; fnop }
    { brnzdec $m2, mpg_zero ; fnop }
    { ld32  $m11, $m13, $mzero, MPG_V_OH0 ; fnop }
    { ld32  $m4, $m13, $mzero, MPG_V_OH1 ; fnop }
    { cmpult $m4, $m11, $m4 ; fnop }
    { brz   $m4, mpg_exit ; fnop }
// ---- an output row: 25 cycles ------------------------------------------------------
mpg_row:
    { ld32  $m7, $m13, $mzero, MPG_V_OW ; fnop }
    { mul   $m7, $m7, $m11 ; fnop }
    { ld32  $m4, $m13, $mzero, MPG_V_DY_PIXEL_STEP ; fnop }
    { mul   $m7, $m7, $m4 ; fnop }
    { ld32  $m4, $m13, $mzero, MPG_V_DY ; fnop }
    { add   $m7, $m7, $m4 ; fnop }                      // dY pixel (oh, 0)
    { ld32  $m0, $m13, $mzero, MPG_V_SH ; fnop }
    { mul   $m0, $m11, $m0 ; fnop }
    { ld32  $m2, $m13, $mzero, MPG_V_PT ; fnop }
    { sub   $m0, $m0, $m2 ; fnop }                      // oh SH - PT
    { ld32  $m2, $m13, $mzero, MPG_V_KH ; fnop }
    { add   $m2, $m0, $m2 ; fnop }
    { ld32  $m3, $m13, $mzero, MPG_V_H ; fnop }
    { min   $m2, $m2, $m3 ; fnop }                      // ih1
    { max   $m0, $m0, 0 ; fnop }                        // ih0
    { sub   $m5, $m2, $m0 ; fnop }
    { add   $m5, $m5, -1 ; fnop }                       // nkh - 1, negative when empty
    { ld32  $m2, $m13, $mzero, MPG_V_W ; fnop }
    { mul   $m0, $m0, $m2 ; fnop }
    { mul   $m0, $m0, $m1 ; fnop }
    { ld32  $m2, $m13, $mzero, MPG_V_IN ; fnop }
    { add   $m0, $m0, $m2 ; fnop }
    { st32  $m0, $m13, $mzero, MPG_V_ROW_AT ; fnop }    // X pixel (ih0, 0)
    { st32  $mzero, $m13, $mzero, MPG_V_OW_AT ; fnop }
    { brneg $m5, mpg_row_next ; fnop }
// ---- an output pixel: 22 cycles ----------------------------------------------------
mpg_pixel:
    { ld32  $m10, $m13, $mzero, MPG_V_OW_AT ; fnop }
    { ld32  $m0, $m13, $mzero, MPG_V_SW ; fnop }
    { mul   $m0, $m10, $m0 ; fnop }
    { ld32  $m2, $m13, $mzero, MPG_V_PL ; fnop }
    { sub   $m0, $m0, $m2 ; fnop }                      // ow SW - PL
    { ld32  $m2, $m13, $mzero, MPG_V_KW ; fnop }
    { add   $m2, $m0, $m2 ; fnop }
    { ld32  $m4, $m13, $mzero, MPG_V_W ; fnop }
    { min   $m2, $m2, $m4 ; fnop }                      // iw1
    { max   $m0, $m0, 0 ; fnop }                        // iw0
    { sub   $m3, $m2, $m0 ; fnop }                      // nkw
    { sub   $m2, $m4, $m3 ; fnop }
    { mul   $m2, $m2, $m1 ; fnop }                      // J
    { mul   $m6, $m0, $m1 ; fnop }
    { ld32  $m0, $m13, $mzero, MPG_V_ROW_AT ; fnop }
    { add   $m6, $m6, $m0 ; fnop }                      // the window's first position
    { add   $m10, $m10, 1 ; fnop }
    { st32  $m10, $m13, $mzero, MPG_V_OW_AT ; fnop }
    { add   $m4, $m3, -1 ; fnop }
    { brneg $m4, mpg_pixel_next ; fnop }
    { ld32  $m9, $m13, $mzero, MPG_V_CHANS ; fnop }
    { shl   $m9, $m9, 2 ; fnop }                        // past the last channel
// ---- a channel: pass 1, the max: 3 + nkh (2 nkw + 3) -------------------------------
mpg_chan:
    { add   $m9, $m9, -4 ; mov $a2, $a12 }
    { add   $m0, $m6, $m9 ; fnop }
    { mov   $m4, $m5 ; fnop }
mpg_max_row:
    { rpt   $m3, 1 ; fnop }
    { ld32  $a0, $m0, $mzero, 0 ; fnop }
    { add   $m0, $m0, $m1 ; f32max $a2, $a2, $a0 }
    { add   $m0, $m0, $m2 ; fnop }
    { brnzdec $m4, mpg_max_row ; fnop }
// ---- pass 2, its first position: 2 + a row 1 + 5 a position + 2 ------------------
    { add   $m0, $m6, $m9 ; fnop }
    { mov   $m4, $m5 ; fnop }
mpg_find_row:
    { add   $m8, $m3, -1 ; fnop }
mpg_find:
    { ld32  $a0, $m0, $mzero, 0 ; fnop }
    { add   $m0, $m0, $m1 ; f32cmpeq $a1, $a0, $a2 }
    { atom  $m10, $a1 ; fnop }
    { brnz  $m10, mpg_found ; fnop }
    { brnzdec $m8, mpg_find ; fnop }
    { add   $m0, $m0, $m2 ; fnop }
    { brnzdec $m4, mpg_find_row ; fnop }
    { bri   mpg_chan_next ; fnop }                      // none (a NaN max): no gradient
// ---- found (4 for the position): 6 when outside the worker's rows, else 15 ------
mpg_found:
    { ld32  $m10, $m13, $mzero, MPG_V_OWN_AT ; fnop }
    { sub   $m0, $m0, $m1 ; fnop }
    { sub   $m0, $m0, $m10 ; fnop }                     // bytes from X pixel (IH0, 0)
    { ld32  $m10, $m13, $mzero, MPG_V_OWN_BYTES ; fnop }
    { cmpult $m10, $m0, $m10 ; fnop }
    { brz   $m10, mpg_chan_next ; fnop }
    { ld32  $m10, $m13, $mzero, MPG_V_DX ; fnop }
    { add   $m0, $m0, $m10 ; fnop }                     // dX there
    { shr   $m10, $m9, 2 ; fnop }
    { ld32  $m8, $m13, $mzero, MPG_V_DY_CHAN_STEP ; fnop }
    { mul   $m10, $m10, $m8 ; fnop }
    { ld32  $a0, $m0, $mzero, 0 ; fnop }
    { ld32  $a1, $m7, $m10, 0 ; fnop }                  // dY[oh][ow][c]
    { nop   ; f32add $a0, $a0, $a1 }
    { st32  $a0, $m0, $mzero, 0 ; fnop }
mpg_chan_next:
    { brnz  $m9, mpg_chan ; fnop }
// ---- the next pixel: 6; the next row: 4 ----------------------------------------------
mpg_pixel_next:
    { ld32  $m4, $m13, $mzero, MPG_V_DY_PIXEL_STEP ; fnop }
    { add   $m7, $m7, $m4 ; fnop }
    { ld32  $m10, $m13, $mzero, MPG_V_OW_AT ; fnop }
    { ld32  $m4, $m13, $mzero, MPG_V_OW ; fnop }
    { cmpult $m4, $m10, $m4 ; fnop }
    { brnz  $m4, mpg_pixel ; fnop }
mpg_row_next:
    { add   $m11, $m11, 1 ; fnop }
    { ld32  $m4, $m13, $mzero, MPG_V_OH1 ; fnop }
    { cmpult $m4, $m11, $m4 ; fnop }
    { brnz  $m4, mpg_row ; fnop }
mpg_exit:
    { exitz $mzero ; fnop }
