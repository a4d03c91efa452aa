// amp_peak.S — the AMP's arithmetic rate: on every tile, six workers each
// run REPEATS bundles of one AMP instruction in a rpt loop, between two
// sync 1 barriers.
//
//   ipusim asm validation/micro/amp_peak.S -o amp.elf
//   ipusim run amp.elf --supersteps
//
// Parameters (.equ before this file is included, or the defaults below):
//   TILES     tiles that run it, 0 .. TILES-1 (1472 on GC200, 1216 on GC2)
//   REPEATS   bundles per worker, 1 .. 4095 (rpt's count)
//   ACCESS    0: f16v4hihov4amp  f16 in, f16 partials, both engine sets: 64 MACs
//             1: f32sisov2amp    f32, both engine sets: 16 MACs
//
// The inputs are zeros and the weights whatever $CWEI holds after reset
// (zeros): the rate does not depend on the values.  On a machine with one
// engine set (GC2) each of these issues takes two worker turns, the rate
// its AMP has (amp_f16/f32_peak_macs_per_cycle).
//
// Figure: the MACs superstep 1 issued on the chip, x 2 flops, over its
// time less its sync.  6 x REPEATS issues a tile at one a tile cycle (two
// on GC2), plus about 50 cycles of worker start and exit.  Published: the
// chips' peak arithmetic, GC200 250 TFLOPS f16 and 62.5 TFLOPS f32
// (1472 x 64 or 16 MACs x 2 x 1.325 GHz), GC2 124.5 and 31.1 TFLOPS
// (1216 x 32 or 8 x 2 x 1.6 GHz), Bow 350 TFLOPS f16.
        .ifndef TILES
        .equ    TILES, 1472
        .endif
        .ifndef REPEATS
        .equ    REPEATS, 4000
        .endif
        .ifndef ACCESS
        .equ    ACCESS, 0
        .endif
        .if REPEATS < 1 || REPEATS > 4095
        .error  "REPEATS must be 1 .. 4095 (one rpt)"
        .endif

        .macro  TILE t
        .tile   \t
        .text
        .supervisor
__supervisor:
        setzi   $m1, worker
        sync    1
        runall  $m1, $mzero, $mzero
        sync    0                       // until the six workers have exited
        sync    1
        exitz   $mzero

        .align  8
        .worker
worker:                                 // the rpt bundle at an 8-byte boundary
        { rpt   REPEATS, 0 ; fnop }
        .if ACCESS == 0
        { nop ; f16v4hihov4amp $a4:5, $azeros, $a2:3, 12 }   // all four engines (phase 0)
        .else
        { nop ; f32sisov2amp $a4:5, $azero, $a2:3, 24 }     // all four engines (phase 0)
        .endif
        exitz   $mzero
        .endm

        .set    T, 0
        .rept   TILES
        TILE    T
        .set    T, T + 1
        .endr
