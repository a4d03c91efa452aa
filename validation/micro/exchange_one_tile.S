// exchange_one_tile.S — one tile's exchange bandwidth: tile 0 sends 64 KiB
// to tile 1 in one xsend, between two sync 1 barriers.
//
//   ipusim asm validation/micro/exchange_one_tile.S -o exchange_one_tile.elf
//   ipusim run exchange_one_tile.elf --supersteps
//
// Figure: superstep 1's exchange; tile 1 records the cycle after it
// (--dump done@1:1:u32).  The data start leaving at the set-up's
// end and arrive at exchange_send_bytes_per_cycle: 65536 B in 16384
// cycles = 4 B/cycle = 5.3 GB/s at 1.325 GHz (GC200), 7.4 GB/s at 1.85 GHz
// (Bow).  Published: 6.34 GB/s per tile on GC2 at 1.6 GHz = 3.96 B/cycle
// (DISS Table 4.4).
        .tile   0
__supervisor:
        sync    1
        setzi   $m0, buf
        setzi   $m1, 65536
        setzi   $m2, 1
        xsend   $m0, $m1, $m2
        sync    1
        exitz   $mzero
        .section .buf, "aw", @nobits, 0x88000   // region 1, within GC2's 128 KiB
buf:    .space  65536

        .tile   1
__supervisor:
        sync    1
        setzi   $m0, buf
        setzi   $m1, 65536
        setzi   $m2, 0
        xrecv   $m0, $m1, $m2
        sync    1
        get     $m3, $COUNT_L           // the first cycle after the exchange's barrier
        setzi   $m4, done
        st32    $m3, $m4, $mzero, 0
        exitz   $mzero
        .data
done:   .word   0
        .section .buf, "aw", @nobits, 0x88000
buf:    .space  65536
