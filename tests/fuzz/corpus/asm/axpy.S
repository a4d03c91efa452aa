.equ AXPY_N, 13
// axpy.S — one tile's f32 vector update on the aux pipeline:
//
//     y[i] = a * x[i] + y[i]        i = 0 .. AXPY_N - 1, all f32
//
// The supervisor starts six workers with runall and waits for them.  The
// AXPY_N / 2 element pairs are shared out as evenly as they go (the first
// (AXPY_N / 2) % 6 workers take one pair more); worker 6, which has the
// fewest, also does the last element when AXPY_N is odd.  A worker streams
// its pairs through f32v2axpy (ISA2 f32v2axpy: $AACC[0,2] = $TAS * x + y,
// the product rounded to f32 before the addition, the destination given the
// previous $AACC[0,2]) in a zero-overhead rpt loop of one bundle per pair:
//
//     { ld2xst64pace $a0:3, $a4:5, $m0:1+=, ... ; f32v2axpy $a4:5, $a0:1, $a2:3 }
//
// The arithmetic is modelled bit for bit by workloads/kernels/axpy_model.c.
//
// Parameter, defined (.equ) before this file is included:
//   AXPY_N    elements, 1 .. about 77,000 (x and y must fit in tile memory)
//
// Data, at fixed tile addresses (symbols axpy_x, axpy_y, axpy_a):
//   axpy_x  from 0x50000 (region 0, past the code's memory element; for
//           long vectors it runs on into region 1), AXPY_N f32, then slack
//   axpy_y  region 1 (the second load of ld2xst64pace must be interleaved
//           memory, ISA2 §3.7.5.1.2), AXPY_N f32, then slack; overwritten
//           with the result
//   axpy_a  the f32 scalar a (one word, written by the caller)
// The slack (3 pairs after each vector, less an odd last element) is read,
// never written: each worker's loads run three pairs past its last pair
// (the pipeline is kept full to the end rather than drained) and what is
// computed from them never comes out.  A worker's over-reads fall in the
// next worker's pairs, whose values it discards.
//
// Worker pipeline.  Bundle b of the fill and the loop loads pair b (the
// main half's loads are written after the aux half has read its operands),
// f32v2axpy takes pair b - 1 and gives the result of pair b - 2, and the
// main half stores what the previous bundle's f32v2axpy gave (the store
// reads $a4:5 before this bundle's aux half overwrites it): the result of
// pair b - 3.  Bundles 0..2 fill the pipeline without storing (bundle 1's
// f32v2axpy gives whatever $AACC held: it is never stored); the loop then
// runs P times for P pairs, its first store being pair 0's result and its
// last pair P - 1's.  The stored word (pair b - 3) and the loaded y word
// (pair b) are 24 bytes apart: address bit 3 differs, so they are always in
// different memory elements of region 1 (ISA2 §2.8.11.1); x is in another
// element altogether (region 0, or at least 0x30000 bytes below y).
// rpt counts at most 4095 (ISA2 rpt), so a longer share loops over rpt
// blocks of up to 4095 pairs; the pipeline carries on across blocks.
//
// Timing (IPU_FACTS.md: one worker issue every 6 tile cycles, so six
// workers give one bundle, two elements, per tile cycle — 0.5 tile cycles
// per element at best).  A worker with P pairs (and R = ceil(P / 4095) rpt
// blocks) issues P + 14 + 4 R times, P + 19 + 4 R with the odd last
// element, 11 (16) with no pairs; see tests/test_axpy_kernel.c for the whole
// count.  Measured on one GC200 tile (tests/test_axpy_kernel.c):
//
//     AXPY_N    tile cycles   cycles/element
//          27           152       5.63     (set-up and exit dominate)
//         100           166       1.66
//        1000           616       0.616
//       10000          5116       0.512
//       49152         24714       0.5028   (4096 pairs a worker: 2 rpt blocks)
//       65536         32908       0.5021   (ideal 0.5)

    .equ AXPY_WORKERS, 6
    .equ AXPY_RPT_MAX, 4095                        // rpt's largest count
    .equ AXPY_FP_CLR_ZAACC, 1 << 3                 // $FP_CLR: zero $AACC (ISA2 §2.7.5.2.13)

    .equ AXPY_PAIRS, AXPY_N / 2
    .equ AXPY_ODD, AXPY_N % 2
    .equ AXPY_SLACK_BYTES, 3 * 8                   // three pairs read past the end
    .equ AXPY_SPAN_BYTES, AXPY_PAIRS * 8 + AXPY_SLACK_BYTES   // covers the odd element too

    // Memory map.  The code sits in region 0's first element (0x4c000 -
    // 0x4ffff); a worker's region-0 data accesses must avoid the element of
    // its rpt body (ISA2 §4.1.6.2), so x starts at the next element.  y
    // starts at region 1 or right after x, whichever is later.
    .equ AXPY_X_ADDR, 0x50000
    .equ AXPY_X_END, AXPY_X_ADDR + AXPY_SPAN_BYTES
    .equ AXPY_Y_ADDR, 0x80000 + (AXPY_X_END > 0x80000) * (AXPY_X_END - 0x80000)
    .equ AXPY_Y_END, AXPY_Y_ADDR + AXPY_SPAN_BYTES
    .equ AXPY_DATA_ADDR, AXPY_Y_END                // scalar, vertex table
    .equ AXPY_VERTEX_BYTES, 24
    .equ AXPY_DATA_END, AXPY_DATA_ADDR + 8 + AXPY_WORKERS * AXPY_VERTEX_BYTES

    // A worker's vertex record (word offsets for ld32).
    .equ AXPY_V_X, 0                               // its first x pair
    .equ AXPY_V_Y, 1                               // its first y pair
    .equ AXPY_V_PAIRS, 2                           // pairs
    .equ AXPY_V_TAIL_X, 3                          // the odd last x element, or 0
    .equ AXPY_V_TAIL_Y, 4                          // ... and its y element

    .if AXPY_N < 1
    .error "AXPY_N must be at least 1"
    .endif
    .if AXPY_DATA_END > 0xe8000
    .error "x and y do not fit in tile memory (AXPY_N too large)"
    .endif

// ---- supervisor -------------------------------------------------------------
    .text
    .align 8
    .globl __supervisor
    .supervisor
__supervisor:
    setzi   $m5, axpy_vertex              // vertex base of worker 1
    setzi   $m6, AXPY_VERTEX_BYTES        // ... and the step to the next
    setzi   $m7, axpy_worker
    runall  $m7, $m5, $m6
    sync    0                             // until every worker has exited
    exitz   $mzero

// ---- worker -----------------------------------------------------------------
// $m0:1 packed addresses: 0 = x load, 1 = y load, 2 = y store; all step by
// one 64-bit pair (stride select 0b00), so no stride register is needed.
    .align 8
    .worker
axpy_worker:
    // $AACC is zeroed so that the f32v2axpy whose output is never stored
    // reads out no stale infinity or NaN (which would set $FP_STS flags).
    { setzi   $m4, axpy_a                       ; setzi $a6, AXPY_FP_CLR_ZAACC }
    { ld32    $a7, $m4, $mzero, 0               ; uput  $FP_CLR, $a6 }
    { ld32    $m3, $m13, $mzero, AXPY_V_PAIRS   ; uput  $TAS, $a7 }
    ld32    $m1, $m13, $mzero, AXPY_V_X
    ld32    $m2, $m13, $mzero, AXPY_V_Y
    tapack  $m0:1, $m1, $m2, $m2
    brz     $m3, 8f
    // Fill: pairs 0, 1, 2 loaded; pair 0 and 1 through f32v2axpy.
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0b0000 ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0b0000 ; f32v2axpy $a4:5, $a0:1, $a2:3 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0b0000 ; f32v2axpy $a4:5, $a0:1, $a2:3 }
1:
    min     $m5, $m3, AXPY_RPT_MAX        // this rpt block's pairs
    sub     $m3, $m3, $m5
    { rpt $m5, (3f - 2f) / 8 - 1 ; fnop }
2:
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $mzero, 0b000000 ; f32v2axpy $a4:5, $a0:1, $a2:3 }
3:
    { brnz  $m3, 1b ; fnop }
8:
    // The odd last element (worker 6 only): lane 1 is zeros, so nothing
    // but the element itself goes through f32v2axpy; the second f32v2axpy
    // brings its result out.
    { ld32    $m4, $m13, $mzero, AXPY_V_TAIL_X  ; setzi $a1, 0 }
    { ld32    $m5, $m13, $mzero, AXPY_V_TAIL_Y  ; setzi $a3, 0 }
    brz     $m4, 9f
    ld32    $a0, $m4, $mzero, 0
    ld32    $a2, $m5, $mzero, 0
    f32v2axpy $a4:5, $a0:1, $a2:3
    f32v2axpy $a4:5, $azeros, $azeros
    st32    $a4, $m5, $mzero, 0
9:
    exitz   $mzero

// ---- data -------------------------------------------------------------------
    .section .axpy_data, "aw", AXPY_DATA_ADDR
    .globl  axpy_a
axpy_a:
    .word   0, 0                          // a (f32 bits), pad
// Per worker: first x pair, first y pair, pairs, odd last element's x and y
// addresses (worker 6 when AXPY_N is odd, else 0), pad.
axpy_vertex:
    .set    AXPY_PAIR0, 0
    .set    AXPY_W, 0
    .rept   AXPY_WORKERS
    .set    AXPY_PAIRS_W, AXPY_PAIRS / AXPY_WORKERS + (AXPY_W < AXPY_PAIRS % AXPY_WORKERS)
    .set    AXPY_TAIL_W, AXPY_ODD * (AXPY_W == AXPY_WORKERS - 1)
    .word   AXPY_X_ADDR + AXPY_PAIR0 * 8, AXPY_Y_ADDR + AXPY_PAIR0 * 8, AXPY_PAIRS_W
    .word   AXPY_TAIL_W * (AXPY_X_ADDR + AXPY_PAIRS * 8), AXPY_TAIL_W * (AXPY_Y_ADDR + AXPY_PAIRS * 8), 0
    .set    AXPY_PAIR0, AXPY_PAIR0 + AXPY_PAIRS_W
    .set    AXPY_W, AXPY_W + 1
    .endr

    .section .axpy_x, "aw", @nobits, AXPY_X_ADDR
    .globl  axpy_x
axpy_x:
    .space  AXPY_SPAN_BYTES

    .section .axpy_y, "aw", @nobits, AXPY_Y_ADDR
    .globl  axpy_y
axpy_y:
    .space  AXPY_SPAN_BYTES
