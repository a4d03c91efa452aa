// host_bandwidth.S — the host link of one chip: tiles 0 .. SENDERS-1 each
// send BYTES to host stream t (DIRECTION 0) or receive BYTES from host
// input stream t (DIRECTION 1), in one superstep between two sync 1
// barriers.
//
//   ipusim asm validation/micro/host_bandwidth.S -o host.elf
//   ipusim run host.elf --machine m2000 --supersteps
//
// Parameters (.equ before this file is included, or the defaults below):
//   SENDERS    tiles taking part (16)
//   BYTES      bytes each moves, a multiple of 4 (131072)
//   DIRECTION  0: to the host (xsend), 1: from the host (xrecv; the
//              input streams must hold BYTES each)
//
// Figure: SENDERS x BYTES over superstep 1 less its sync.  Sixteen tiles at
// 4 B/cycle (85 GB/s at 1.325 GHz) more than fill the chip's host channel
// (host_bandwidth_bytes_per_s, 16 GB/s each way), so the channel sets the
// pace: 2 MiB in 131 us, plus the set-up and host_latency_ps (2 us):
// 15.8 GB/s.  Published: PCIe Gen4 x8 between the gateway and each IPU of
// an M2000 (M2K [I]), 16 GB/s each way.
        .ifndef SENDERS
        .equ    SENDERS, 16
        .endif
        .ifndef BYTES
        .equ    BYTES, 131072
        .endif
        .ifndef DIRECTION
        .equ    DIRECTION, 0
        .endif
        .equ    XCH_HOST_HI, 0x80000    // XCH_HOST >> 12 (exchange.h)

        .macro  TILE t
        .tile   \t
        .text
__supervisor:
        setzi   $m0, buf
        setzi   $m1, BYTES
        setzi   $m2, XCH_HOST_HI
        shl     $m2, $m2, 12
        or      $m2, $m2, \t            // host stream t
        sync    1
        .if DIRECTION == 0
        xsend   $m0, $m1, $m2
        .else
        xrecv   $m0, $m1, $m2
        .endif
        sync    1
        exitz   $mzero
        .bss
buf:    .space  BYTES
        .endm

        .set    T, 0
        .rept   SENDERS
        TILE    T
        .set    T, T + 1
        .endr
