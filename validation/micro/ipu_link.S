// ipu_link.S — chip-to-chip latency and bandwidth over the IPU-Links of an
// M2000 / Bow-2000: tiles 0 .. SENDERS-1 of chip 0 each send BYTES to the
// same tile of chip 1, in one superstep between two sync 2 barriers.
//
//   ipusim asm validation/micro/ipu_link.S -o ipu_link.elf
//   ipusim run ipu_link.elf --machine m2000 --supersteps --dump arrived@1472:1:u32
//
// Parameters (.equ before this file is included, or the defaults below):
//   SENDERS   sending tiles on chip 0 (8)
//   BYTES     bytes each sends, a multiple of 4 (65536)
//   CHIP_TILES tiles per chip (1472)
//
// Each sender records in `sent` the cycle after its xsend: its supervisor
// is busy until the last byte has left the tile, so that is when the
// stream's last byte leaves.  Each receiver posts its receive, waits for
// the data with sync 3 and records in `arrived` the cycle it resumes at:
// when the last byte is in its memory.
//
// Latency (SENDERS 1, BYTES 4): arrived - sent = one IPU-Link hop,
// ipu_link_hop_latency_ps (160 ns), rounded up to the receiver's clock:
// 212 cycles at 1.325 GHz = 160.0 ns (sent 105, arrived 317).  Published: +0.16 us per IPU-Link
// hop (DISS Fig 4.4, Mk1).
//
// Bandwidth (SENDERS 8, BYTES 64 KiB): one tile sends at 4 B/cycle (5.3
// GB/s at 1.325 GHz), eight together more than the two links between a
// pair of chips carry (ipu_links_per_chip_pair x ipu_link_bandwidth =
// 27.2 GB/s), so the links set the pace: 512 KiB in 19.3 us, plus the
// set-up and one hop: superstep 1 less its sync is 19.5 us, 26.9 GB/s.
// Published: 128 Gbit/s x 0.85 usable per link (POPLIBS
// poplibs_test/Util.cpp), 2 links per chip pair on an M2000 [I].
        .ifndef SENDERS
        .equ    SENDERS, 8
        .endif
        .ifndef BYTES
        .equ    BYTES, 65536
        .endif
        .ifndef CHIP_TILES
        .equ    CHIP_TILES, 1472
        .endif

        .macro  SENDER t
        .tile   \t
        .text
__supervisor:
        setzi   $m0, sbuf
        setzi   $m1, BYTES
        setzi   $m2, (\t) + CHIP_TILES
        setzi   $m4, sent
        sync    2
        xsend   $m0, $m1, $m2
        get     $m3, $COUNT_L           // the last byte has left the tile
        st32    $m3, $m4, $mzero, 0
        sync    2
        exitz   $mzero
        .data
sent:   .word   0
        .bss
sbuf:   .space  BYTES
        .endm

        .macro  RECEIVER t
        .tile   (\t) + CHIP_TILES
        .text
__supervisor:
        setzi   $m0, rbuf
        setzi   $m1, BYTES
        setzi   $m2, \t
        setzi   $m4, arrived
        sync    2
        xrecv   $m0, $m1, $m2
        sync    3                       // resumes when the last byte is in
        get     $m3, $COUNT_L
        st32    $m3, $m4, $mzero, 0
        sync    2
        exitz   $mzero
        .data
arrived: .word  0
        .bss
rbuf:   .space  BYTES
        .endm

        .set    T, 0
        .rept   SENDERS
        SENDER  T
        RECEIVER T
        .set    T, T + 1
        .endr
