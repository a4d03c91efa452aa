// exchange_all_tiles.S — the whole chip's exchange bandwidth: each of the
// 1472 tiles sends 4 KiB to the tile 92 further on (the same place in the
// next column) and receives 4 KiB from the tile 92 before it, in one
// superstep between two sync 1 barriers.
//
//   ipusim asm validation/micro/exchange_all_tiles.S -o exchange_all_tiles.elf
//   ipusim run exchange_all_tiles.elf --supersteps
//
// Figure: 1472 x 4096 bytes over superstep 1's exchange time.  Each tile
// sends at 4 B/cycle, but the two tiles of a supertile share one bus
// (exchange/exchange.h), so the chip moves 1472 / 2 x 4 = 2944 B/cycle:
// 3.9 TB/s at 1.325 GHz.  Published: 7.8 TB/s "all-to-all" exchange on
// GC200 (HC33; 1472 x 4 B x 1.325 GHz) — the shared bus halves it.
        .macro  TILE t
        .tile   \t
        .text
__supervisor:
        sync    1
        setzi   $m0, sbuf
        setzi   $m1, 4096
        setzi   $m2, ((\t) + 92) % 1472
        setzi   $m3, rbuf
        setzi   $m4, ((\t) + 1472 - 92) % 1472
        xsend   $m0, $m1, $m2
        xrecv   $m3, $m1, $m4
        sync    1
        exitz   $mzero
        .data
sbuf:   .space  4096
rbuf:   .space  4096
        .endm

        .set    T, 0
        .rept   1472
        TILE    T
        .set    T, T + 1
        .endr
