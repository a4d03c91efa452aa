// tile_memory_bandwidth.S — tile memory bandwidth: on every tile, six
// workers each run REPEATS bundles of one load (or load/store)
// instruction in a rpt loop, between two sync 1 barriers.
//
//   ipusim asm validation/micro/tile_memory_bandwidth.S -o mem.elf
//   ipusim run mem.elf --supersteps
//
// Parameters (.equ before this file is included, or the defaults below):
//   TILES     tiles that run it, 0 .. TILES-1 (1472 on GC200, 1216 on GC2)
//   REPEATS   bundles per worker, 1 .. 4095 (rpt's count)
//   ACCESS    0: ld64          one 64-bit load         8 B per bundle
//             1: ld2x64pace    two 64-bit loads       16 B
//             2: ld128         one 128-bit load       16 B
//             3: ld2xst64pace  two 64-bit loads and
//                              one 64-bit store       24 B
//
// Every bundle of a worker hits the same addresses (the timing model does
// not depend on them, and so the program fits GC2's 256 KiB): loads from
// 0x80000 and 0x80008 (region 1, the two elements of an interleaved pair:
// ld128 and ld2xst64pace's second load need region 1, ISA2 §2.8.4, and
// one instruction's accesses must hit different elements, ISA2 §2.8.11),
// the store to 0x7c000 (region 0's last element on every machine, away
// from the code's first one).  The pace
// forms use stride select 0b11 with $mzero as the stride register: +0.
//
// Figure: superstep 1 (from the first barrier's release to the second
// barrier) less its sync: 6 x REPEATS bundles issued at one per tile cycle
// (six workers, one slot each, ISA2 §2.3), plus about 50 cycles of
// worker start and exit.  Bytes per tile cycle = 6 x REPEATS x bytes per
// bundle / those cycles: 8 (ld64), 16 (ld2x64pace, ld128), 24
// (ld2xst64pace).  Published: two 64-bit loads and one 64-bit store per
// tile cycle (ISA2 §3.7.5, ld2xst64pace), i.e. 16 B/cycle of loads; the
// aggregate 24 B x 1472 x 1.325 GHz = 46.8 TB/s against Graphcore's
// 47.5 TB/s for GC200, 24 B x 1216 x 1.6 GHz = 46.7 TB/s against 45 TB/s
// for GC2 (DISS).
        .ifndef TILES
        .equ    TILES, 1472
        .endif
        .ifndef REPEATS
        .equ    REPEATS, 4000
        .endif
        .ifndef ACCESS
        .equ    ACCESS, 1
        .endif
        .if REPEATS < 1 || REPEATS > 4095
        .error  "REPEATS must be 1 .. 4095 (one rpt)"
        .endif

        .equ    LOAD0, 0x80000
        .equ    LOAD1, 0x80008
        .equ    STORE, 0x7c000

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
worker:
        setzi   $m2, LOAD0
        setzi   $m3, LOAD1
        setzi   $m4, STORE >> 11        // the store address's bits 20..11
        shl     $m4, $m4, 21            // ... above address 1 (tapack)
        or      $m3, $m3, $m4
        nop                             // the rpt bundle at an 8-byte boundary
        { rpt   REPEATS, 0 ; fnop }
        .if ACCESS == 0
        { ld64  $a0:1, $m2, $mzero, 0 ; fnop }
        .elseif ACCESS == 1
        { ld2x64pace $a0:1, $a2:3, $m2:3+=, $mzero, 0b1111 ; fnop }
        .elseif ACCESS == 2
        { ld128 $a0:3, $m2, $mzero, 0 ; fnop }
        .else
        { ld2xst64pace $a0:3, $a4:5, $m2:3+=, $mzero, 0b111111 ; fnop }
        .endif
        exitz   $mzero
        .endm

        .set    T, 0
        .rept   TILES
        TILE    T
        .set    T, T + 1
        .endr
