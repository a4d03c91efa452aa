// exchange_latency.S — tile-to-tile latency by distance: tile 0 broadcasts
// one 32-bit word; tiles 1, 4, 8, 44, 91 (same column), 92, 100 (next
// column) and 1471 (last column) receive it, and each records the cycle it
// resumed at after its sync 3, which is when the word landed.
//
//   ipusim asm validation/micro/exchange_latency.S -o exchange_latency.elf
//   ipusim run exchange_latency.elf --dump arrived@N:1:u32
//
// Figure: latency = arrived - 104 - 1 (the word leaves at cycle 104, after
// three setup instructions and the 100-cycle set-up, and takes one cycle
// at 4 B/cycle).  Model: 59 cycles in an island, +2 per island of 4 tiles,
// +62 across columns: 59, 61, 63, 81, 103, 121, 125, 165.  Published (GC2,
// DISS Fig 4.2): 59-95 cycles within a column, +2 per island, up to ~157
// across columns.
        .tile   0
__supervisor:
        setzi   $m0, word
        setzi   $m1, 4
        add     $m2, $mzero, -1         // the broadcast endpoint
        xsend   $m0, $m1, $m2
        sync    3
        exitz   $mzero
        .data
word:   .word   0x12345678

        .macro  RECEIVER t
        .tile   \t
        .text
__supervisor:
        setzi   $m0, word
        setzi   $m1, 4
        setzi   $m2, 0
        xrecv   $m0, $m1, $m2
        sync    3
        get     $m3, $COUNT_L
        setzi   $m4, arrived
        st32    $m3, $m4, $mzero, 0
        exitz   $mzero
        .data
word:   .word   0
arrived: .word  0
        .endm

        RECEIVER 1
        RECEIVER 4
        RECEIVER 8
        RECEIVER 44
        RECEIVER 91
        RECEIVER 92
        RECEIVER 100
        RECEIVER 1471
