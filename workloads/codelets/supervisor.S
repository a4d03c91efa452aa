// supervisor.S — the control program of a compiled tile: the supervisor
// walks a table of steps that the compiler wrote for this tile
// (frontends/lower.c) and does what each says.
//
// Poplar compiles a tile's control program into straight-line supervisor
// code; ipusim interprets a table instead, so that the code is the same on
// every tile (one library image, workloads/codelets/abi.h) and a whole-chip
// program compiles in seconds.  The price is one load and one branch per
// step (plus the loads of its operands), a few supervisor cycles next to
// the hundreds a compute set or an exchange takes.
//
// The table: 32-bit words.  A step is the address of its handler (below)
// followed by its operands; the handler does the step and jumps to the
// next one's handler.  The word at ctl_table (a per-tile copy of this
// library's data, patched by the compiler) holds the address of the first
// step.
//
//   ctl_run,  entry, vertex base, vertex step   start the six workers on a
//                                               compute set's vertices and
//                                               wait for them
//   ctl_call, entry, record                     a supervisor codelet (abi.h)
//   ctl_send, addr, bytes, endpoint             xsend
//   ctl_recv, addr, bytes, endpoint             xrecv
//   ctl_sends, addr, bytes, n - 1, endpoint 1 .. endpoint n
//                                               n xsend of `bytes` each
//                                               from consecutive blocks
//                                               from addr, one to each
//                                               endpoint in turn
//   ctl_recvs, addr, bytes, n - 1, endpoint 1 .. endpoint n
//                                               n xrecv of `bytes` each
//                                               into consecutive blocks
//                                               from addr, one from each
//                                               endpoint in turn (a block
//                                               gathered from many tiles)
//   ctl_sends16, addr, bytes, count, endpoints 1 and 2, 3 and 4, ...
//   ctl_recvs16, addr, bytes, count, endpoints 1 and 2, 3 and 4, ...
//                                               as ctl_sends / ctl_recvs
//                                               (n of 2 or more), the
//                                               endpoints (all below 65536)
//                                               two to a word, the first of
//                                               a pair in the low half (an
//                                               odd n's last word holds one,
//                                               the high half 0); count is
//                                               (n / 2 - 1) * 2 + n % 2
//   ctl_recvs16_group, addr, bytes, count, base, endpoints 1 and 2, ...
//                                               as ctl_recvs16, each
//                                               endpoint base | its half
//                                               (the receives of multicast
//                                               groups, XCH_MULTICAST |
//                                               g << 17 | sender, from
//                                               senders below 65536, base
//                                               the same for the run)
//   ctl_send_list, n - 1, addr 1, bytes 1 | endpoint 1 << 16, ...
//   ctl_recv_list, n - 1, addr 1, bytes 1 | endpoint 1 << 16, ...
//                                               n xsend / xrecv, each of
//                                               its own addr and bytes
//                                               (below 65536), to or from
//                                               its endpoint (below 65536)
//                                               (single transfers one
//                                               after another, two words
//                                               each where a step of its
//                                               own takes four)
//   ctl_send_list_group, n - 1, base, addr 1, bytes 1 | half 1 << 16, ...
//   ctl_recv_list_group, n - 1, base, addr 1, bytes 1 | half 1 << 16, ...
//                                               the same, each endpoint
//                                               base | its half (a
//                                               multicast group's)
//   ctl_send_rows, addr, bytes, stride, n - 1, endpoint
//                                               n xsend of `bytes` each
//                                               from blocks `stride` bytes
//                                               apart, all to one endpoint
//   ctl_recv_rows, addr, bytes, stride, n - 1, endpoint
//                                               n xrecv of `bytes` each
//                                               into blocks `stride` bytes
//                                               apart, all from one endpoint
//                                               (the rows of a block one
//                                               tile sends another)
//   ctl_sync_chip                               sync 1: the chip's barrier,
//                                               ends an exchange phase
//   ctl_sync_system                             sync 2: every chip's barrier
//   ctl_sync_exchange                           sync 3: ends an exchange
//                                               phase without a barrier
//   ctl_jump, addr                              the table goes on at addr
//                                               (a program in two blocks)
//   ctl_sub, addr                               the steps at addr, until
//                                               their ctl_ret, then the
//                                               step after this one (steps
//                                               several places share: a
//                                               pipeline's micro-batches;
//                                               one level, the return in
//                                               ctl_table's second word)
//   ctl_ret                                     back after the last ctl_sub
//   ctl_end                                     the tile's program is over
//
// Registers: $m9 points at the current step (abi.h: supervisor codelets
// preserve it); $m1 is the record address of ctl_call's codelet; $m10 its
// return address.

    .data
    .align 8
    .globl ctl_table
ctl_table:
    .word 0                             // address of the first step (per tile)
    .word 0                             // where the last ctl_sub returns to

    .text
    .align 8
    .globl __supervisor
    .supervisor
__supervisor:
    setzi   $m2, ctl_table
    ld32    $m9, $m2, $mzero, 0
ctl_dispatch:
    ld32    $m1, $m9, $mzero, 0
    br      $m1

    .align 8
    .globl ctl_run
ctl_run:
    ld32    $m5, $m9, $mzero, 1
    ld32    $m6, $m9, $mzero, 2
    ld32    $m7, $m9, $mzero, 3
    runall  $m5, $m6, $m7
    add     $m9, $m9, 16
    sync    0                           // until every worker has exited
    ld32    $m1, $m9, $mzero, 0
    br      $m1

    .align 8
    .globl ctl_call
ctl_call:
    ld32    $m2, $m9, $mzero, 1
    ld32    $m1, $m9, $mzero, 2
    add     $m9, $m9, 12
    setzi   $m10, ctl_dispatch
    br      $m2

    .align 8
    .globl ctl_send
ctl_send:
    ld32    $m1, $m9, $mzero, 1
    ld32    $m2, $m9, $mzero, 2
    ld32    $m3, $m9, $mzero, 3
    xsend   $m1, $m2, $m3
    add     $m9, $m9, 16
    ld32    $m1, $m9, $mzero, 0
    br      $m1

    .align 8
    .globl ctl_recv
ctl_recv:
    ld32    $m1, $m9, $mzero, 1
    ld32    $m2, $m9, $mzero, 2
    ld32    $m3, $m9, $mzero, 3
    xrecv   $m1, $m2, $m3
    add     $m9, $m9, 16
    ld32    $m1, $m9, $mzero, 0
    br      $m1

    .align 8
    .globl ctl_sync_chip
ctl_sync_chip:
    sync    1
    add     $m9, $m9, 4
    ld32    $m1, $m9, $mzero, 0
    br      $m1

    .align 8
    .globl ctl_sync_system
ctl_sync_system:
    sync    2
    add     $m9, $m9, 4
    ld32    $m1, $m9, $mzero, 0
    br      $m1

    .align 8
    .globl ctl_sync_exchange
ctl_sync_exchange:
    sync    3
    add     $m9, $m9, 4
    ld32    $m1, $m9, $mzero, 0
    br      $m1

    .align 8
    .globl ctl_jump
ctl_jump:
    ld32    $m9, $m9, $mzero, 1
    ld32    $m1, $m9, $mzero, 0
    br      $m1

    .align 8
    .globl ctl_sub
ctl_sub:
    add     $m2, $m9, 8
    setzi   $m3, ctl_table
    st32    $m2, $m3, $mzero, 1
    ld32    $m9, $m9, $mzero, 1
    ld32    $m1, $m9, $mzero, 0
    br      $m1

    .align 8
    .globl ctl_ret
ctl_ret:
    setzi   $m3, ctl_table
    ld32    $m9, $m3, $mzero, 1
    ld32    $m1, $m9, $mzero, 0
    br      $m1

    .align 8
    .globl ctl_end
ctl_end:
    exitz   $mzero

// A run of n sends or receives (ctl_sends, ctl_recvs): \insn of `bytes`
// from consecutive blocks at addr, to or from endpoint 1 .. n in turn.
    .macro CTL_RUN_OF name, insn
    .align 8
    .globl \name
\name:
    ld32    $m5, $m9, $mzero, 1
    ld32    $m6, $m9, $mzero, 2
    ld32    $m7, $m9, $mzero, 3
    add     $m9, $m9, 16
1:
    ld32    $m3, $m9, $mzero, 0
    \insn   $m5, $m6, $m3
    add     $m5, $m5, $m6
    add     $m9, $m9, 4
    brnzdec $m7, 1b
    ld32    $m1, $m9, $mzero, 0
    br      $m1
    .endm

    CTL_RUN_OF ctl_sends, xsend
    CTL_RUN_OF ctl_recvs, xrecv

// The same with the endpoints two to a word (ctl_sends16, ctl_recvs16):
// nine issues a pair of blocks where the wide form takes ten, for half
// its words, and three more a step (the count's two halves and the odd
// block's test).  $m7 counts the pairs still to go after the current one,
// $m2 is 1 when an odd block is left for the end.
//
// With a base word after the count (ctl_recvs16_group: a multicast
// group's receives, whose endpoints share the bits above the sender's
// tile), each endpoint is base | its half: two issues more a pair and one
// a step, for half the words of the wide form.
    .macro CTL_RUN16_OF name, insn, based=0
    .align 8
    .globl \name
\name:
    ld32    $m5, $m9, $mzero, 1
    ld32    $m6, $m9, $mzero, 2
    ld32    $m7, $m9, $mzero, 3
    .if \based
    ld32    $m8, $m9, $mzero, 4
    add     $m9, $m9, 20
    .else
    add     $m9, $m9, 16
    .endif
    and     $m2, $m7, 1
    shr     $m7, $m7, 1
1:
    ld32    $m4, $m9, $mzero, 0
    and     $m3, $m4, 0xffff
    .if \based
    or      $m3, $m3, $m8
    .endif
    \insn   $m5, $m6, $m3
    add     $m5, $m5, $m6
    shr     $m3, $m4, 16
    .if \based
    or      $m3, $m3, $m8
    .endif
    \insn   $m5, $m6, $m3
    add     $m5, $m5, $m6
    add     $m9, $m9, 4
    brnzdec $m7, 1b
    brz     $m2, 2f
    ld32    $m3, $m9, $mzero, 0         // the odd last endpoint, the high half 0
    .if \based
    or      $m3, $m3, $m8
    .endif
    \insn   $m5, $m6, $m3
    add     $m9, $m9, 4
2:
    ld32    $m1, $m9, $mzero, 0
    br      $m1
    .endm

    CTL_RUN16_OF ctl_sends16, xsend
    CTL_RUN16_OF ctl_recvs16, xrecv
    CTL_RUN16_OF ctl_recvs16_group, xrecv, 1

// A list of single sends or receives (ctl_send_list, ctl_recv_list):
// seven issues a transfer, as a step of its own takes; eight above a
// base (ctl_send_list_group, ctl_recv_list_group).
    .macro CTL_LIST_OF name, insn, based=0
    .align 8
    .globl \name
\name:
    ld32    $m7, $m9, $mzero, 1
    .if \based
    ld32    $m8, $m9, $mzero, 2
    add     $m9, $m9, 12
    .else
    add     $m9, $m9, 8
    .endif
1:
    ld32    $m5, $m9, $mzero, 0
    ld32    $m4, $m9, $mzero, 1
    and     $m6, $m4, 0xffff
    shr     $m3, $m4, 16
    .if \based
    or      $m3, $m3, $m8
    .endif
    \insn   $m5, $m6, $m3
    add     $m9, $m9, 8
    brnzdec $m7, 1b
    ld32    $m1, $m9, $mzero, 0
    br      $m1
    .endm

    CTL_LIST_OF ctl_send_list, xsend
    CTL_LIST_OF ctl_recv_list, xrecv
    CTL_LIST_OF ctl_send_list_group, xsend, 1
    CTL_LIST_OF ctl_recv_list_group, xrecv, 1

// n sends or receives of `bytes` to or from one endpoint, the blocks
// `stride` bytes apart (ctl_send_rows, ctl_recv_rows): three issues a row,
// as the loop of compiled exchange code that walks a block's rows.
    .macro CTL_ROWS_OF name, insn
    .align 8
    .globl \name
\name:
    ld32    $m5, $m9, $mzero, 1
    ld32    $m6, $m9, $mzero, 2
    ld32    $m7, $m9, $mzero, 3
    ld32    $m4, $m9, $mzero, 4
    ld32    $m3, $m9, $mzero, 5
    add     $m9, $m9, 24
1:
    \insn   $m5, $m6, $m3
    add     $m5, $m5, $m7
    brnzdec $m4, 1b
    ld32    $m1, $m9, $mzero, 0
    br      $m1
    .endm

    CTL_ROWS_OF ctl_send_rows, xsend
    CTL_ROWS_OF ctl_recv_rows, xrecv
