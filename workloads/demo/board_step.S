// board_step.S — the demo for `ipusim compare`: one step of a data-parallel
// layer on a 4-IPU board.
//
// Every tile of every chip (DEMO_TILES per chip, 4 chips) multiplies its own
// A[MM_M x MM_K] by B[MM_K x MM_N] on the AMP (workloads/kernels/amp_matmul.S,
// f16 with f16 partial sums), then the board synchronises (sync 2), and each
// tile passes the first DEMO_SEND_BYTES of its result to the same tile of the
// next chip over the IPU-Links while receiving the previous chip's, and tile
// 0 of each chip streams DEMO_HOST_BYTES of result to the host.  A second
// board-wide sync ends the step.
//
// The program is the same on every machine; only the machine differs.  On a
// Bow-2000 the compute phase takes the same cycles as on an IPU-M2000 at a
// 1.85 / 1.325 faster clock, while the IPU-Link and host transfers, timed in
// bytes per second, take the same time: the comparison shows how much of
// the step scales with the clock.

    .ifndef DEMO_TILES
    .equ DEMO_TILES, 1472          // tiles used on each chip
    .endif
    .equ DEMO_CHIPS, 4
    .equ DEMO_TILES_PER_CHIP, 1472 // the GC200 / Bow tile count
    .equ DEMO_SEND_BYTES, 256      // to the next chip, per tile
    .equ DEMO_HOST_BYTES, 4096     // to the host, from tile 0 of each chip
    .equ DEMO_RECV_ADDR, 0xe0000   // where a tile receives (region 1, after C and B)

    .equ MM_M, 96
    .equ MM_K, 64
    .equ MM_N, 64
    .equ MM_F16_PARTIALS, 1

    .set DEMO_CHIP, 0
    .rept DEMO_CHIPS
    .set DEMO_T, 0
    .rept DEMO_TILES
    .tile DEMO_CHIP * DEMO_TILES_PER_CHIP + DEMO_T
    .include "../kernels/amp_matmul.S"
    .include "board_step_tile.S"
    .set DEMO_T, DEMO_T + 1
    .endr
    .set DEMO_CHIP, DEMO_CHIP + 1
    .endr
