// bench_amp_matmul.S — AMP benchmark for `ipusim bench`: the matmul
// codelet's workers (amp_matmul.S, f16 partials: f16v4hihov4amp fed by
// ld2xst64pace in a rpt loop) on the large test product, C[756 x 128] +=
// A[756 x 128] * B[128 x 128], computed BENCH_REPEATS times over.
//
// amp_matmul.S's own supervisor ends the program after one product (about
// 0.4 million simulated instructions, 8 ms at the speed below), so this
// program has its own supervisor, the entry: the same block loop (load a
// 16 x 16 weight block into $CWEI, tell the workers the block's offsets
// through mm_block, runall, sync) inside a repeat loop.  The matrices are
// left as zeros (the AMP's arithmetic costs the same whatever the values).
//
// Size: per product 8 output groups x 8 input blocks, each 6 workers x 529
// issues (tests/test_matmul_kernel.c), 205,609 tile cycles and about 0.4
// million instructions; 30 products make a run of about 12 million
// instructions, about 0.25 s at 50 million simulated instructions per host
// second.

    .equ MM_M, 756
    .equ MM_K, 128
    .equ MM_N, 128
    .equ MM_F16_PARTIALS, 1
    .include "amp_matmul.S"

    .equ BENCH_REPEATS, 30

    .entry bench_supervisor

    .text
    .align 8
    .supervisor
bench_supervisor:
    setzi   $m10, BENCH_REPEATS - 1
    setzi   $m5, mm_vertex                // vertex base of worker 1
    setzi   $m6, 16                       // ... and the step to the next
    setzi   $m7, mm_worker
    setzi   $m8, mm_block
    setzi   $m4, MM_B_ADDR
bench_repeat:
    // One product, as amp_matmul.S's supervisor computes it.  Branch
    // targets are 8-byte aligned (no misalignment penalty).
    put     $CCCSLOAD, $m4                // ld128putcs steps on from here
    setzi   $m1, 0                        // byte offset of group g in a C row
    setzi   $m9, MM_N_GROUPS - 1
    .align  8
bench_group_loop:
    setzi   $m2, 0                        // byte offset of block j in an A row
    setzi   $m3, MM_K_BLOCKS - 1
bench_block_loop:
    st32    $m2, $m8, $mzero, 0
    st32    $m1, $m8, $mzero, 1
    .set    BENCH_I, 0
    .rept   MM_CWEI_LOADS
    ld128putcs BENCH_I
    .set    BENCH_I, BENCH_I + 2
    .endr
    runall  $m7, $m5, $m6
    sync    0                             // until every worker has exited
    add     $m2, $m2, MM_K_BLOCK * 2
    brnzdec $m3, bench_block_loop
    add     $m1, $m1, MM_GROUP_BYTES
    brnzdec $m9, bench_group_loop
    brnzdec $m10, bench_repeat
    exitz   $mzero
