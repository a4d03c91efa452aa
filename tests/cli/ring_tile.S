// ring_tile.S — the command-line debugger tests' ring program, one tile of it per
// TILE t, next, prev line the test appends: six workers count and store, the
// supervisor sends 16 bytes to the next tile, receives from the previous one,
// sync 1; twice.  The tests name its lines (ring.S:N), so they move with these.
.macro TILE t, next, prev
 .tile \t
 .text
__supervisor:
 setzi $m8, 2
 setzi $m1, worker
 setzi $m2, counts
 setzi $m3, sbuf
 setzi $m4, 16
 setzi $m5, \next
 setzi $m6, rbuf
 setzi $m7, \prev
loop:
 runall $m1, $m2, $m4
 sync 0
 xsend $m3, $m4, $m5
 xrecv $m6, $m4, $m7
 sync 1
 add $m8, $m8, -1
 brnz $m8, loop
 exitz $mzero
worker:
 setzi $m0, 4
1: add $m2, $m2, 1
 brnzdec $m0, 1b
 st32 $m2, $m13, $mzero, 0
 exitz $mzero
 .data
sbuf: .word \t + 7, \t, \t, \t
rbuf: .space 16
counts: .space 96
.endm
