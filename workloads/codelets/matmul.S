// matmul.S — the kernel library's matrix product on the AMP, sizes and
// addresses at run time (record layout and the placement rules:
// workloads/codelets/matmul.h):
//
//     sv_matmul_f16    C[M x N] += A[M x K] * B[K x N]    A, B f16;
//                      C f16 partials (f16v4hihov4amp, 64 MACs an issue)
//                      or f32 partials (f16v4sisoamp, 32 MACs an issue)
//
// The computation is workloads/kernels/amp_matmul.S's (read its header for
// the weight blocks, the $CWEI loads and the worker pipeline), with three
// differences:
//   - the supervisor first works out the six worker records at run time
//     into the scratch area named by the record: each worker's first row,
//     its row count, and its packed pace strides;
//   - a worker's chunk of rows is walked forwards when three rows of A and
//     C follow it, else backwards (negative strides) when three precede
//     it, so that the pipeline's read-ahead stays inside A and C; a chunk
//     with neither (M <= 5) and every chunk of a placement that fails the
//     fast condition (matmul.h) takes the slow loop, 14 issues a row with
//     single 64-bit accesses, which can never conflict;
//   - the worker set-up reads its block offsets through its record and
//     $m13 (= $VERTEX_BASE): 11 issues instead of amp_matmul.S's 12.
// The results are bit for bit those of matmul_model_f16
// (workloads/matmul_model.c) on every path.
//
// Cycles (tile cycles; matmul_f16_cycles in matmul_model.c is this count,
// and tests/test_codelets_matmul.c checks it exactly on every shape and
// placement it runs).  With G = N / group output groups, Bk = K / 16
// blocks, L = 32 ld128putcs (f16 partials) or 16 (f32), every chunk fast
// and R = M / 6 rows a worker (M a multiple of 6):
//     cycles = S + G (4 + Bk (L + 6)) + 6 (4 R + 24) G Bk
// from the call to the return, S = 334 issues with f16 partials, 333 with
// f32 (the call; 110 checking the record, testing the placement, packing
// the strides and dividing the rows; 6 x 35 writing the worker records
// without branches; 10 or 11 choosing the variant; ld32, br).
// amp_matmul.S takes 9 + G (4 + Bk (L + 6)) + 6 (4 R + 25) G Bk with its
// records assembled in: this codelet costs 325 more set-up cycles and 6
// fewer a block (the $m13 worker set-up), so it is slower below about 54
// blocks and faster above.  E.g. M = 12, K = 32, N = 32, f16 partials:
// 961 for amp_matmul.S, 1262 here (plus the caller's setzi and exitz).
// When the workers' issue counts differ (M % 6 != 0, slow chunks) the
// block ends 1 cycle after the last worker's exit, which depends on the
// phase of the runall (matmul_f16_cycles works it out).
// Measured, A in region 0, C and B in region 1, the caller's 4
// instructions included:
//   M = 768, K = 128, N = 128, f16 partials: 208,626 cycles, 60.31 MACs a
//     tile cycle, 0.942 of the 64 peak (amp_matmul.S: 208,681);
//   M = 576, K = 128, N = 128, f32 partials: 316,561 cycles, 29.81 MACs a
//     tile cycle, 0.932 of this variant's 32.
// The slow loop: 14 issues a row (and 16 a block), about 3.5 times the
// fast loop's time for large M.

    // enumFlags of the f16 AMP instructions (isa/amp.h): four engines,
    // phases 0..3.
    .equ MMC_AMP_P0, 12
    .equ MMC_AMP_P1, 13
    .equ MMC_AMP_P2, 14
    .equ MMC_AMP_P3, 15

    // Record words (matmul.h: enum matmul_f16_record).
    .equ MMC_V_A, 0
    .equ MMC_V_B, 1
    .equ MMC_V_C, 2
    .equ MMC_V_M, 3
    .equ MMC_V_K, 4
    .equ MMC_V_N, 5
    .equ MMC_V_A_STEP, 6
    .equ MMC_V_C_STEP, 7
    .equ MMC_V_PARTIALS, 8
    .equ MMC_V_SCRATCH, 9

    // Scratch, in words: worker records (8 words each), the shared record,
    // the supervisor's saved values.
    .equ MMC_W_A, 0              // A address of the first row the worker runs
    .equ MMC_W_C, 1              // C address of that row
    .equ MMC_W_FAST_ROWS, 2      // rows for the fast loop (0: none)
    .equ MMC_W_STRIDES, 3        // packed pace strides (forwards or backwards)
    .equ MMC_W_SHARED, 4         // address of the shared record
    .equ MMC_W_SLOW_ROWS, 5      // rows for the slow loop (0: none)
    .equ MMC_W_WORDS, 8
    .equ MMC_S, 48               // shared record:
    .equ MMC_S_A_OFFSET, 0       //   byte offset of the current block in an A row
    .equ MMC_S_C_OFFSET, 1       //   byte offset of the current group in a C row
    .equ MMC_S_A_STEP, 2         //   A row step (slow loop)
    .equ MMC_S_C_STEP, 3         //   C row step (slow loop)
    .equ MMC_X, 52               // supervisor's values:
    .equ MMC_X_MF, 0             //   M if the placement is fast, else 0
    .equ MMC_X_T3, 1             //   3 if the placement is fast, else 0xffffffff
    .equ MMC_X_SF, 2             //   strides walking forwards
    .equ MMC_X_SD, 3             //   strides backwards minus forwards
    .equ MMC_X_LR, 4             //   the return address
    .equ MMC_X_KB, 5             //   K / 16 - 1
    .equ MMC_X_P, 6              //   partials kind
    // 58 words = 232 bytes: MATMUL_F16_SCRATCH_BYTES

    .equ MMC_TRAP_SIZES, 0x60
    .equ MMC_TRAP_PARTIALS, 0x61
    .equ MMC_TRAP_ALIGN, 0x62
    .equ MMC_TRAP_B_REGION, 0x63
    .equ MMC_TRAP_ROWS, 0x64

    .equ MMC_MAX_FAST_STEP, 4072

// One AMP issue of the variant (hiho = 1: f16v4hihov4amp, 0: f16v4sisoamp).
    .macro mmc_amp hiho, dst, in, partials, flags
    .if \hiho
    f16v4hihov4amp \dst, \in, \partials, \flags
    .else
    f16v4sisoamp \dst, \in, \partials, \flags
    .endif
    .endm

// The supervisor's loops over output groups and weight blocks (as in
// amp_matmul.S): put the block's weights into $CWEI, tell the workers the
// block's A offset and the group's C offset, start them, wait for them.
// Both loop heads must be 8-byte aligned (no branch penalty).
    .macro mmc_block_loops loads, pfx
\pfx\()_group:
    setzi   $m2, 0
    ld32    $m3, $m5, $mzero, MMC_X + MMC_X_KB
\pfx\()_block:
    st32    $m2, $m8, $mzero, MMC_S_A_OFFSET
    st32    $m1, $m8, $mzero, MMC_S_C_OFFSET
    .set    MMC_I, 0
    .rept   \loads
    ld128putcs MMC_I
    .set    MMC_I, MMC_I + 2
    .endr
    runall  $m7, $m5, $m6
    sync    0                             // until every worker has exited
    add     $m2, $m2, 32
    brnzdec $m3, \pfx\()_block
    add     $m1, $m1, 32
    brnzdec $m0, \pfx\()_group
    ld32    $m10, $m5, $mzero, MMC_X + MMC_X_LR
    br      $m10
    .endm

// A worker: its record is at $m13 ($VERTEX_BASE).
    .macro mmc_worker hiho
    { ld32  $m3, $m13, $mzero, MMC_W_FAST_ROWS ; fnop }
    brz     $m3, 5f
    ld32    $m1, $m13, $mzero, MMC_W_A
    ld32    $m2, $m13, $mzero, MMC_W_C
    ld32    $m6, $m13, $mzero, MMC_W_SHARED
    ld32    $m4, $m6, $mzero, MMC_S_A_OFFSET
    ld32    $m5, $m6, $mzero, MMC_S_C_OFFSET
    add     $m1, $m1, $m4
    add     $m2, $m2, $m5
    ld32    $m4, $m13, $mzero, MMC_W_STRIDES
    // The fast loop: amp_matmul.S's pipeline.  Stride selects: 0b00 next
    // word, 0b01 field 1 (A to its next row), 0b10 field 2 (C to its next
    // row), 0b11 field 3 (stay).
    tapack  $m0:1, $m1, $m2, $m2
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; mmc_amp \hiho, $a4:5, $azeros, $a2:3, MMC_AMP_P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; mmc_amp \hiho, $a6:7, $azeros, $a2:3, MMC_AMP_P1 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b1011 ; mmc_amp \hiho, $a4:5, $azeros, $a2:3, MMC_AMP_P2 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; mmc_amp \hiho, $a6:7, $azeros, $a2:3, MMC_AMP_P3 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; mmc_amp \hiho, $a4:5, $a0:1, $a2:3, MMC_AMP_P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; mmc_amp \hiho, $a6:7, $a0:1, $a2:3, MMC_AMP_P1 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b1001 ; mmc_amp \hiho, $a4:5, $a0:1, $a2:3, MMC_AMP_P2 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; mmc_amp \hiho, $a6:7, $a0:1, $a2:3, MMC_AMP_P3 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; mmc_amp \hiho, $a4:5, $a0:1, $a2:3, MMC_AMP_P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; mmc_amp \hiho, $a6:7, $a0:1, $a2:3, MMC_AMP_P1 }
    { rpt $m3, (2f - 1f) / 8 - 1 ; fnop }
1:
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m4, 0b001001 ; mmc_amp \hiho, $a4:5, $a0:1, $a2:3, MMC_AMP_P2 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m4, 0b000000 ; mmc_amp \hiho, $a6:7, $a0:1, $a2:3, MMC_AMP_P3 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m4, 0b000000 ; mmc_amp \hiho, $a4:5, $a0:1, $a2:3, MMC_AMP_P0 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m4, 0b100000 ; mmc_amp \hiho, $a6:7, $a0:1, $a2:3, MMC_AMP_P1 }
2:
    exitz   $mzero
    // The slow loop, one row at a time: partials in (4 issues, inputs
    // zero), inputs in (4), results out (4, inputs and partials zero),
    // with single 64-bit loads and stores.  The stores address the row the
    // loads have just left: $m1 + $m7 with $m7 = -C step.
    .align  8
5:
    { ld32  $m3, $m13, $mzero, MMC_W_SLOW_ROWS ; fnop }
    brz     $m3, 9f
    ld32    $m0, $m13, $mzero, MMC_W_A
    ld32    $m1, $m13, $mzero, MMC_W_C
    ld32    $m6, $m13, $mzero, MMC_W_SHARED
    ld32    $m4, $m6, $mzero, MMC_S_A_OFFSET
    ld32    $m5, $m6, $mzero, MMC_S_C_OFFSET
    add     $m0, $m0, $m4
    add     $m1, $m1, $m5
    ld32    $m4, $m6, $mzero, MMC_S_A_STEP
    ld32    $m5, $m6, $mzero, MMC_S_C_STEP
    sub     $m7, $mzero, $m5
    rpt     $m3, (8f - 7f) / 8 - 1
7:
    { ld64  $a0:1, $m1, $mzero, 0 ; fnop }
    { ld64  $a0:1, $m1, $mzero, 1 ; mmc_amp \hiho, $a4:5, $azeros, $a0:1, MMC_AMP_P0 }
    { ld64  $a0:1, $m1, $mzero, 2 ; mmc_amp \hiho, $a6:7, $azeros, $a0:1, MMC_AMP_P1 }
    { ld64  $a0:1, $m1, $mzero, 3 ; mmc_amp \hiho, $a4:5, $azeros, $a0:1, MMC_AMP_P2 }
    { ld64  $a2:3, $m0, $mzero, 0 ; mmc_amp \hiho, $a6:7, $azeros, $a0:1, MMC_AMP_P3 }
    { ld64  $a2:3, $m0, $mzero, 1 ; mmc_amp \hiho, $a4:5, $a2:3, $azeros, MMC_AMP_P0 }
    { ld64  $a2:3, $m0, $mzero, 2 ; mmc_amp \hiho, $a6:7, $a2:3, $azeros, MMC_AMP_P1 }
    { ld64  $a2:3, $m0, $mzero, 3 ; mmc_amp \hiho, $a4:5, $a2:3, $azeros, MMC_AMP_P2 }
    { add   $m0, $m0, $m4 ; mmc_amp \hiho, $a6:7, $a2:3, $azeros, MMC_AMP_P3 }
    { add   $m1, $m1, $m5 ; mmc_amp \hiho, $a4:5, $azeros, $azeros, MMC_AMP_P0 }
    { st64  $a4:5, $m1, $m7, 0 ; mmc_amp \hiho, $a6:7, $azeros, $azeros, MMC_AMP_P1 }
    { st64  $a6:7, $m1, $m7, 1 ; mmc_amp \hiho, $a4:5, $azeros, $azeros, MMC_AMP_P2 }
    { st64  $a4:5, $m1, $m7, 2 ; mmc_amp \hiho, $a6:7, $azeros, $azeros, MMC_AMP_P3 }
    { st64  $a6:7, $m1, $m7, 3 ; fnop }
8:
9:
    exitz   $mzero
    .endm

// ---- supervisor ---------------------------------------------------------------
    .text
    .align 8
    .globl sv_matmul_f16
    .supervisor
sv_matmul_f16:
    ld32    $m0, $m1, $mzero, MMC_V_M
    brz     $m0, mmc_return
    ld32    $m2, $m1, $mzero, MMC_V_K
    brz     $m2, mmc_return
    ld32    $m3, $m1, $mzero, MMC_V_N
    brz     $m3, mmc_return
    // Sizes: K % 16, the partials kind, N % group (group - 1 = 7 + 8 p),
    // rows a worker within rpt's count.
    and     $m4, $m2, 15
    brnz    $m4, mmc_trap_sizes
    ld32    $m4, $m1, $mzero, MMC_V_PARTIALS
    cmpult  $m5, $m4, 2
    brz     $m5, mmc_trap_partials
    shl     $m5, $m4, 3
    add     $m5, $m5, 7
    and     $m5, $m3, $m5
    brnz    $m5, mmc_trap_sizes
    cmpult  $m5, $m0, 6 * 4095 + 1
    brz     $m5, mmc_trap_rows
    // Alignment, and B in region 1.
    ld32    $m5, $m1, $mzero, MMC_V_A
    ld32    $m6, $m1, $mzero, MMC_V_C
    or      $m7, $m5, $m6
    ld32    $m6, $m1, $mzero, MMC_V_A_STEP
    or      $m7, $m7, $m6
    ld32    $m6, $m1, $mzero, MMC_V_C_STEP
    or      $m7, $m7, $m6
    ld32    $m6, $m1, $mzero, MMC_V_SCRATCH
    or      $m7, $m7, $m6
    and     $m7, $m7, 7
    brnz    $m7, mmc_trap_align
    ld32    $m7, $m1, $mzero, MMC_V_B
    and     $m8, $m7, 15
    brnz    $m8, mmc_trap_align
    shr     $m8, $m7, 19
    brz     $m8, mmc_trap_b_region
    put     $CCCSLOAD, $m7                // the weight blocks follow one another
    // From here $m6 is the scratch area.
    st32    $m10, $m6, $mzero, MMC_X + MMC_X_LR
    st32    $m4, $m6, $mzero, MMC_X + MMC_X_P
    shr     $m5, $m2, 4
    add     $m5, $m5, -1
    st32    $m5, $m6, $mzero, MMC_X + MMC_X_KB
    // The fast condition (matmul.h).  Block of A's last byte -> $m2, of
    // A's first -> $m8.
    add     $m7, $m0, -1
    ld32    $m5, $m1, $mzero, MMC_V_A_STEP
    st32    $m5, $m6, $mzero, MMC_S + MMC_S_A_STEP
    mul     $m5, $m5, $m7
    add     $m5, $m5, $m2
    add     $m5, $m5, $m2
    ld32    $m8, $m1, $mzero, MMC_V_A
    add     $m5, $m5, $m8
    add     $m5, $m5, -1
    shr     $m2, $m5, 15
    shr     $m8, $m8, 15
    // Block of C's last byte -> $m5, of C's first -> $m7; C's rows hold
    // N (4 - 2 p) bytes.
    ld32    $m5, $m1, $mzero, MMC_V_C_STEP
    st32    $m5, $m6, $mzero, MMC_S + MMC_S_C_STEP
    mul     $m5, $m5, $m7
    shl     $m7, $m4, 1
    sub     $m7, $mzero, $m7
    add     $m7, $m7, 4
    mul     $m7, $m7, $m3
    add     $m5, $m5, $m7
    ld32    $m7, $m1, $mzero, MMC_V_C
    add     $m5, $m5, $m7
    add     $m5, $m5, -1
    shr     $m5, $m5, 15
    shr     $m7, $m7, 15
    cmpult  $m2, $m2, $m7                 // A's blocks all below C's
    cmpult  $m5, $m5, $m8                 // or C's all below A's
    or      $m2, $m2, $m5
    cmpult  $m7, $m7, 16                  // C below region 1 (block 16 = 0x80000)
    xor     $m7, $m7, 1
    and     $m2, $m2, $m7
    ld32    $m5, $m1, $mzero, MMC_V_C_STEP
    and     $m8, $m5, 15
    cmpeq   $m8, $m8, 0
    and     $m2, $m2, $m8
    cmpult  $m8, $m5, MMC_MAX_FAST_STEP + 1
    and     $m2, $m2, $m8
    ld32    $m7, $m1, $mzero, MMC_V_A_STEP
    cmpult  $m8, $m7, MMC_MAX_FAST_STEP + 1
    and     $m2, $m2, $m8                 // F: 1 when the placement is fast
    mul     $m8, $m0, $m2
    st32    $m8, $m6, $mzero, MMC_X + MMC_X_MF
    shl     $m8, $m2, 2
    add     $m8, $m8, -1
    st32    $m8, $m6, $mzero, MMC_X + MMC_X_T3
    // Pace strides (ISA2 §4.1.1.3 packed strides, in atoms): field 1 from
    // an A row's word 3 to the next row's word 0, field 2 the same for C,
    // field 3 zero.  Walking backwards, the next row is the one before.
    shr     $m7, $m7, 3                   // A step in atoms
    shr     $m5, $m5, 3                   // C step in atoms
    add     $m8, $m7, -3
    and     $m8, $m8, 0x3ff
    add     $m2, $m5, -3
    and     $m2, $m2, 0x3ff
    shl     $m2, $m2, 10
    or      $m8, $m8, $m2
    st32    $m8, $m6, $mzero, MMC_X + MMC_X_SF
    sub     $m7, $mzero, $m7
    add     $m7, $m7, -3
    and     $m7, $m7, 0x3ff
    sub     $m5, $mzero, $m5
    add     $m5, $m5, -3
    and     $m5, $m5, 0x3ff
    shl     $m5, $m5, 10
    or      $m7, $m7, $m5
    sub     $m7, $m7, $m8
    st32    $m7, $m6, $mzero, MMC_X + MMC_X_SD
    // Rows a worker: q = M / 6 (M * 43691 >> 18 is exact for M < 2^17),
    // the first M % 6 workers take q + 1.
    setzi   $m5, 43691
    mul     $m5, $m0, $m5
    shr     $m5, $m5, 18
    add     $m4, $m5, 1                   // q + 1
    mul     $m7, $m5, 6
    sub     $m5, $m0, $m7                 // M % 6
    setzi   $m3, 0                        // first row of the chunk
    mov     $m2, $m6
    // The six worker records, without branches (so the set-up takes the
    // same cycles for every size): nf = the chunk lacks 3 rows after it
    // (always when the placement is slow: MF = 0), nr = it lacks 3 before
    // it (always when slow: T3 = ~0); slow = nf & nr, backwards = nf & !nr.
    .set    MMC_WI, 0
    .rept   6
    cmpult  $m6, $m5, MMC_WI + 1
    sub     $m6, $m4, $m6                 // R
    add     $m7, $m3, $m6                 // end of the chunk
    add     $m0, $m7, 3
    ld32    $m8, $m2, $mzero, MMC_X + MMC_X_MF
    cmpult  $m8, $m8, $m0                 // nf
    ld32    $m0, $m2, $mzero, MMC_X + MMC_X_T3
    cmpult  $m0, $m3, $m0                 // nr
    and     $m0, $m0, $m8                 // slow
    sub     $m8, $m8, $m0                 // backwards
    mul     $m10, $m6, $m0
    st32    $m10, $m2, $mzero, MMC_W_WORDS * MMC_WI + MMC_W_SLOW_ROWS
    sub     $m10, $m6, $m10
    st32    $m10, $m2, $mzero, MMC_W_WORDS * MMC_WI + MMC_W_FAST_ROWS
    add     $m6, $m6, -1
    mul     $m6, $m6, $m8
    add     $m6, $m6, $m3                 // first row run: the last if backwards
    ld32    $m0, $m2, $mzero, MMC_X + MMC_X_SD
    mul     $m0, $m0, $m8
    ld32    $m10, $m2, $mzero, MMC_X + MMC_X_SF
    add     $m0, $m0, $m10
    st32    $m0, $m2, $mzero, MMC_W_WORDS * MMC_WI + MMC_W_STRIDES
    ld32    $m0, $m1, $mzero, MMC_V_A_STEP
    mul     $m0, $m0, $m6
    ld32    $m10, $m1, $mzero, MMC_V_A
    add     $m0, $m0, $m10
    st32    $m0, $m2, $mzero, MMC_W_WORDS * MMC_WI + MMC_W_A
    ld32    $m0, $m1, $mzero, MMC_V_C_STEP
    mul     $m0, $m0, $m6
    ld32    $m10, $m1, $mzero, MMC_V_C
    add     $m0, $m0, $m10
    st32    $m0, $m2, $mzero, MMC_W_WORDS * MMC_WI + MMC_W_C
    add     $m0, $m2, 4 * MMC_S
    st32    $m0, $m2, $mzero, MMC_W_WORDS * MMC_WI + MMC_W_SHARED
    mov     $m3, $m7
    .set    MMC_WI, MMC_WI + 1
    .endr
    // Block loops: $m0 groups left, $m1 C offset of the group, $m2 A
    // offset of the block, $m3 blocks left, $m5 vertex base (the scratch),
    // $m6 its step, $m7 the worker entry, $m8 the shared record.
    ld32    $m4, $m1, $mzero, MMC_V_PARTIALS
    ld32    $m0, $m1, $mzero, MMC_V_N
    mov     $m5, $m2
    setzi   $m6, 4 * MMC_W_WORDS
    add     $m8, $m2, 4 * MMC_S
    setzi   $m1, 0
    brnz    $m4, mmc_f16_partials
    shr     $m0, $m0, 3
    add     $m0, $m0, -1
    setzi   $m7, mmc_worker_siso
    mmc_block_loops 16, mmc_s
    .align  8
mmc_f16_partials:
    shr     $m0, $m0, 4
    add     $m0, $m0, -1
    setzi   $m7, mmc_worker_hiho
    nop                                   // the loop heads 8-byte aligned
    mmc_block_loops 32, mmc_h
mmc_return:
    br      $m10
mmc_trap_sizes:
    trap    MMC_TRAP_SIZES
mmc_trap_partials:
    trap    MMC_TRAP_PARTIALS
mmc_trap_align:
    trap    MMC_TRAP_ALIGN
mmc_trap_b_region:
    trap    MMC_TRAP_B_REGION
mmc_trap_rows:
    trap    MMC_TRAP_ROWS

// ---- workers -----------------------------------------------------------------
    .worker
    .align  8
mmc_worker_hiho:
    mmc_worker 1
    .align  8
mmc_worker_siso:
    mmc_worker 0
