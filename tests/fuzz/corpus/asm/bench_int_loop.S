// bench_int_loop.S — integer benchmark: six workers each run a counted loop
// of integer instructions; the supervisor starts them and waits.
//
// Every worker issues once per barrel turn, so with six workers the tile
// issues one instruction every cycle: cycles = instructions executed, plus
// start-up and wind-down.

    .equ ITERATIONS, 1000000

    .text
    .globl __supervisor
__supervisor:
    setzi   $m1, worker
    setzi   $m2, 0
    runall  $m1, $m2, $mzero      // six workers, all with vertex base 0
    sync    0                     // wait until every worker has exited
    exitz   $mzero                // end of the tile's program

worker:
    setzi   $m0, ITERATIONS - 1   // brnzdec runs the body ITERATIONS times
    setzi   $m1, 0
    setzi   $m2, 0
1:
    add     $m1, $m1, 3
    xor     $m2, $m2, $m1
    brnzdec $m0, 1b
    exitz   $mzero
