// exchange_latency.S — tile-to-tile latency by distance: tile 0 broadcasts
// one 32-bit word; tiles 1, 4, 8, 44, 91 (same column), 92, 100 (next
// column) and 1471 (last column) receive it, and each records the cycle it
// resumed at after its sync 3, which is when the word landed.
//
//   ipusim asm validation/micro/exchange_latency.S -o exchange_latency.elf
//   ipusim run exchange_latency.elf --dump arrived@N:1:u32
//
// Tile 0 records in `sent` the cycle after its xsend (105: its supervisor
// is busy until the word has left).  TILES (default 1472; 1216 on GC2)
// places the receivers: 1, 4, 8, 44, the last of the first column
// (TILES / 16 - 1), the first two of the next column's islands 0 and 2
// (TILES / 16, + 8) and the last tile; with 1472 they are as above.
//
// Figure: latency = arrived - sent = arrived - 104 - 1 (the word leaves at
// cycle 104, after three setup instructions and the 100-cycle set-up, and
// takes one cycle at 4 B/cycle).  Model: 59 cycles in an island, +2 per
// island of 4 tiles, +62 across columns: 59, 61, 63, 81, 103, 121, 125,
// 165 (GC2: 59, 61, 63, 81, 95, 121, 125, 157).  Published (GC2,
// DISS Fig 4.2): 59-95 cycles within a column, +2 per island, up to ~157
// across columns.
        .ifndef TILES
        .equ    TILES, 1472
        .endif
        .equ    COLUMN, TILES / 16

        .tile   0
__supervisor:
        setzi   $m0, word
        setzi   $m1, 4
        add     $m2, $mzero, -1         // the broadcast endpoint
        xsend   $m0, $m1, $m2
        get     $m3, $COUNT_L           // the word has left the tile
        setzi   $m4, sent
        st32    $m3, $m4, $mzero, 0
        sync    3
        exitz   $mzero
        .data
word:   .word   0x12345678
sent:   .word   0

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
        RECEIVER (COLUMN-1)
        RECEIVER COLUMN
        RECEIVER (COLUMN+8)
        RECEIVER (TILES-1)
