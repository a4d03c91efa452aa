__supervisor:
    setzi   $m1, worker
    setzi   $m2, 0x80000
    runall  $m1, $m2, $mzero
    sync    0
    exitz   $mzero
    .align 8
worker:
    add     $m2, $m13, 0          // this worker's vertex base
    setzi   $m3, 3
    nop
    rpt     $m3, 0
    { ld64step $a0:1, $mzero, $m2+=, 1 ; f32add $a2, $a0, $a1 }
    st32    $a2, $m2, $mzero, 0
    exitz   $mzero
    .data
    .word 1, 2, 3, 4
