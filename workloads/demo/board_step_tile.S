// board_step_tile.S — the supervisor of one tile of board_step.S, included
// once per tile with DEMO_CHIP and DEMO_T set.  It reuses the workers, the
// vertex table and the data layout of amp_matmul.S and replaces its
// supervisor.

    .entry demo_supervisor
    .text
    .align 8
    .supervisor
demo_supervisor:
    // ---- compute: C += A x B, one $CWEI block at a time (as amp_matmul.S) --
    setzi   $m5, mm_vertex
    setzi   $m6, 16
    setzi   $m7, mm_worker
    setzi   $m8, mm_block
    setzi   $m4, MM_B_ADDR
    put     $CCCSLOAD, $m4
    setzi   $m1, 0
    setzi   $m9, MM_N_GROUPS - 1
demo_group_loop:
    setzi   $m2, 0
    setzi   $m3, MM_K_BLOCKS - 1
demo_block_loop:
    st32    $m2, $m8, $mzero, 0
    st32    $m1, $m8, $mzero, 1
    .set    DEMO_I, 0
    .rept   MM_CWEI_LOADS
    ld128putcs DEMO_I
    .set    DEMO_I, DEMO_I + 2
    .endr
    runall  $m7, $m5, $m6
    sync    0
    add     $m2, $m2, MM_K_BLOCK * 2
    brnzdec $m3, demo_block_loop
    add     $m1, $m1, MM_GROUP_BYTES
    brnzdec $m9, demo_group_loop

    // ---- the board synchronises, then the IPU-Link exchange ---------------
    sync    2
    setzi   $m1, MM_C_ADDR
    setzi   $m2, DEMO_SEND_BYTES
    setzi   $m3, ((DEMO_CHIP + 1) % DEMO_CHIPS) * DEMO_TILES_PER_CHIP + DEMO_T
    xsend   $m1, $m2, $m3
    setzi   $m1, DEMO_RECV_ADDR
    setzi   $m3, ((DEMO_CHIP + DEMO_CHIPS - 1) % DEMO_CHIPS) * DEMO_TILES_PER_CHIP + DEMO_T
    xrecv   $m1, $m2, $m3
    .if DEMO_T == 0
    // ---- tile 0 streams results to the host: stream number = chip --------
    setzi   $m1, MM_C_ADDR
    setzi   $m2, DEMO_HOST_BYTES
    setzi   $m3, 0x8000
    shl     $m3, $m3, 16
    or      $m3, $m3, DEMO_CHIP
    xsend   $m1, $m2, $m3
    .endif
    sync    2
    exitz   $mzero
