// exchange_all_tiles.S — the whole chip's exchange bandwidth: each of the
// TILES tiles receives BYTES from the tile one column before it and sends
// BYTES to the same place in the next column, in one superstep between
// two sync 1 barriers.
//
//   ipusim asm validation/micro/exchange_all_tiles.S -o exchange_all_tiles.elf
//   ipusim run exchange_all_tiles.elf --supersteps
//
// Parameters (.equ before this file is included, or the defaults below):
//   TILES     tiles of the chip: 1472 (GC200, 92 a column), 1216 (GC2, 76)
//   BYTES     bytes each tile sends, a multiple of 4 (64 KiB)
//   COLUMN    the distance to the next column: TILES / 16
//
// Each tile posts its receive first and then sends (a receive posted after
// the tile's own send would wait for it: exchange/exchange.h).  Both
// buffers are NOBITS, so the executable stays small, and sit in region 1
// from 0x80000 (GC2's region 1 holds 128 KiB: 64 KiB each at most).
//
// Figure: TILES x BYTES over superstep 1 less its sync.  Each tile sends
// on its own bus at 4 B/cycle (exchange/exchange.h, the supertile), so the
// chip moves TILES x 4 B/cycle once the streams run: 1472 x 4 = 5888
// B/cycle = 7.8 TB/s at 1.325 GHz.  The superstep also holds the 100-cycle
// set-up and the 121-cycle latency to the next column: with 64 KiB, 16384
// cycles of data in 16607 (1.3 % below the steady rate).  Published: 8
// TB/s all-to-all exchange on GC200 (HC33; 1472 x 4 B x 1.325 GHz = 7.8).
        .ifndef TILES
        .equ    TILES, 1472
        .endif
        .ifndef BYTES
        .equ    BYTES, 65536
        .endif
        .ifndef COLUMN
        .equ    COLUMN, TILES / 16
        .endif
        .if 2 * BYTES > 0x20000
        .error  "BYTES: the two buffers must fit in GC2's region 1 (at most 64 KiB each)"
        .endif

        .macro  TILE t
        .tile   \t
        .text
__supervisor:
        setzi   $m0, sbuf
        setzi   $m1, BYTES
        setzi   $m2, ((\t) + COLUMN) % TILES
        setzi   $m3, rbuf
        setzi   $m4, ((\t) + TILES - COLUMN) % TILES
        sync    1
        xrecv   $m3, $m1, $m4
        xsend   $m0, $m1, $m2
        sync    1
        exitz   $mzero
        .section .sbuf, "aw", @nobits, 0x80000
sbuf:   .space  BYTES
        .section .rbuf, "aw", @nobits, 0x80000 + BYTES
rbuf:   .space  BYTES
        .endm

        .set    T, 0
        .rept   TILES
        TILE    T
        .set    T, T + 1
        .endr
