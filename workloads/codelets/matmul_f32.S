// matmul_f32.S — the kernel library's f32 matrix product on the AMP, sizes
// and addresses at run time (record layout, granularity, placement rule
// and error bound: workloads/codelets/matmul_f32.h):
//
//     sv_matmul_f32    C[M x N] += A[M x K] * B[K x N]    A, B, C f32
//                      (f32sisov2amp: 16 MACs an issue, both engine sets)
//     vtx_pack_b_f32   a row-major B in tile memory -> the packed weights
//
// The f32 AMP (ISA2 §2.9.11 and the pages of f32sisoamp / f32sisov2amp;
// isa/exec_amp.c exec_f32_amp) has eight phases.  Each issue takes one f32
// input: every unit of set 0 multiplies it by the low (even phase) or high
// (odd phase) half of its $CWEI_k_(phase/2) and adds the product to its
// even accumulator; set 1 does the same one issue later with the input
// kept in $TAS.  So eight issues multiply 8 inputs (one weight block of K)
// by 16 units x 8 weights: a block is 8 rows of K by 16 columns of N, 512
// bytes, all 64 $CWEI entries (32 ld128putcs).  Partial sums walk in down
// the odd accumulators, two per issue, and results walk out two per issue:
// at phase j the pair of columns 2j, 2j+1 of an output group (set j & 1,
// engine j / 2, matmul_f32.h's unit order).  With cycle c the issues
// 8c .. 8c+7, cycle c takes the partial sums of row c, the inputs of row
// c - 1 and gives the results of row c - 2.  (Poplibs drives its float
// ConvPartial1x1Out / ConvPartialnx1 loops the same way: one input word,
// one partials pair and one result pair an issue.)
//
// The fast loop, 8 issues a row (one output row of 16 columns):
//     { ld2xst64pace $a0:3, $aR ; f32sisov2amp $aR, $a0 or $a1, $a2:3, Pj }
// with A loaded 8 bytes (two inputs) at every issue, each word twice
// (stride field 3 = 0 on the odd issue), the C partials 8 bytes an issue,
// and the result of the issue two before stored ($a4:5 and $a6:7 in turn,
// the store reading the register before the same bundle's AMP writes it).
// Pace strides: field 1 = A row step / 8 - 3 (A word 3 -> the next row's
// word 0), field 2 = C row step / 8 - 7 (the same for C's 8 words), field
// 3 = 0.  Before the loop, 19 issues of ld2x64pace fill the pipeline (one
// without AMP, 8 for the partials of row 0, 8 for the inputs of row 0, 2
// more so that the loop starts where the stores of row 0 begin); the loop
// runs R times (rows R..R+2 of C and R, R+1 of A read ahead, results
// discarded: the chunk rule of matmul_f32.h keeps those reads inside A
// and C).  The loaded and the stored word of C are 19 words apart in the
// stream, 2 or 3 rows apart with word indices of different parity, so
// with C_ROW_STEP % 16 == 0 they lie in different elements of a region-1
// pair; A must lie in other elements (matmul_f32.h).
//
// The slow loop, 26 issues a row, single 64-bit accesses (never a
// conflict): 8 issues with the row's partials (inputs zero), 8 with its
// inputs (partials zero), 8 giving its results (stored one issue later),
// one load before and one store after.
//
// The supervisor checks the record, tests the placement, writes the six
// worker records once, then for each output group (N / 16) and weight
// block (K / 8) loads the block into $CWEI, runs the six workers and waits
// for them; two shared words in the scratch (the byte offsets of the
// block in A's rows and of the group in C's rows) tell the workers which
// block it is.  Each launch reads the worker's record afresh.
//
// Cycles (tile cycles; matmul_f32_cycles in matmul_f32_model.c is this
// count, and tests/test_codelets_matmul_f32.c checks it exactly on every
// shape and placement it runs).  With G = N / 16 output groups, Bk = K / 8
// weight blocks, every chunk fast and R = M / 6 rows a worker:
//     cycles = 327 + 6 G + G Bk (229 + 48 R)
// from the call to the return.  Derivation:
//   - supervisor before the first ld128putcs: 325 issues (the call; 101
//     checking the record, testing the placement, packing the strides and
//     dividing the rows; 6 x 35 writing the worker records without
//     branches; 12 setting up the loops; the nop .align puts before the
//     loop head); after the loops: ld32, br;
//   - a block: 32 ld128putcs, runall, then with equal worker counts n the
//     last worker exits 6 n - 1 cycles after runall's next cycle, sync
//     issues the cycle after, then add, st32, brnzdec: 37 + 6 n;
//   - a worker's fast launch: n = 8 R + 32 (11 reading the record and
//     packing the addresses, 19 filling the pipeline, rpt, 8 R, exitz);
//   - each group ends with setzi, st32, add, st32, mov, brnzdec.
// A slow launch is 26 R + 17 issues, an idle one 12.  When the workers'
// counts differ the block ends 1 cycle after the last worker's exit, which
// depends on the phase of the runall (matmul_f32_cycles works it out).
// Per weight block that is 229 + 48 R cycles, of which 48 R are AMP issues
// of rows: 0.93 of the AMP's peak at R = 64.
//
// Measured (tests/test_codelets_matmul_f32.c, A in region 0, C and B in
// region 1, the caller's 4 instructions included):
//   M = 384, K = 128, N = 64: 211,619 cycles, 14.87 MACs a tile cycle,
//   0.929 of the f32 AMP's peak of 16;
//   M = 48, K = 16, N = 16 (R = 8): 1,563 cycles, 7.86 MACs a tile cycle.
// The slow loop: 26 issues a row and block, 3.25 times the fast loop's.
// vtx_pack_b_f32: about 2.1 worker issues a value (K = 64, N = 64 on six
// workers, 4 groups on 4 of them: 13,632 tile cycles).

    .ifndef MM_WORKER_ROWS
    .include "amp_worker_rows.S"
    .endif

    // Record words (matmul_f32.h: enum matmul_f32_record).
    .equ MMF_V_A, 0
    .equ MMF_V_B, 1
    .equ MMF_V_C, 2
    .equ MMF_V_M, 3
    .equ MMF_V_K, 4
    .equ MMF_V_N, 5
    .equ MMF_V_A_STEP, 6
    .equ MMF_V_C_STEP, 7
    .equ MMF_V_SCRATCH, 8

    // Scratch, in words: worker records (8 words each), the shared record,
    // the supervisor's values.
    .equ MMF_W_A, 0              // A address of the first row the worker runs
    .equ MMF_W_C, 1              // C address of that row
    .equ MMF_W_FAST_ROWS, 2      // rows for the fast loop (0: none)
    .equ MMF_W_STRIDES, 3        // packed pace strides (forwards or backwards)
    .equ MMF_W_SHARED, 4         // address of the shared record
    .equ MMF_W_SLOW_ROWS, 5      // rows for the slow loop (0: none)
    .equ MMF_W_WORDS, 8
    .equ MMF_S, 48               // shared record:
    .equ MMF_S_A_STEP, 0         //   A row step
    .equ MMF_S_C_STEP, 1         //   C row step
    .equ MMF_S_A_OFF, 2          //   bytes from a row of A to this block's inputs
    .equ MMF_S_C_OFF, 3          //   bytes from a row of C to this group's columns
    .equ MMF_X, 52               // supervisor's values:
    .equ MMF_X_MF, 0             //   M if the placement is fast, else 0
    .equ MMF_X_T3, 1             //   3 if the placement is fast, else 0xffffffff
    .equ MMF_X_SF, 2             //   strides walking forwards
    .equ MMF_X_SD, 3             //   strides backwards minus forwards
    .equ MMF_X_LR, 4             //   the return address
    .equ MMF_X_KB, 5             //   K / 8 - 1
    // 58 words = 232 bytes = MATMUL_F32_SCRATCH_BYTES

    .equ MMF_TRAP_SIZES, 0x68
    .equ MMF_TRAP_ALIGN, 0x69
    .equ MMF_TRAP_B_REGION, 0x6a
    .equ MMF_TRAP_ROWS, 0x6b

    .equ MMF_MAX_FAST_STEP, 4040

    // enumFlags of f32sisov2amp, four engines: ISA_AMP_F32_FLAGS(4, p).
    .equ MMF_P0, 24
    .equ MMF_P1, 25
    .equ MMF_P2, 26
    .equ MMF_P3, 27
    .equ MMF_P4, 28
    .equ MMF_P5, 29
    .equ MMF_P6, 30
    .equ MMF_P7, 31

// ---- supervisor ---------------------------------------------------------------
    .text
    .align 8
    .globl sv_matmul_f32
    .supervisor
sv_matmul_f32:
    ld32    $m0, $m1, $mzero, MMF_V_M
    brz     $m0, mmf_return
    ld32    $m2, $m1, $mzero, MMF_V_K
    brz     $m2, mmf_return
    ld32    $m3, $m1, $mzero, MMF_V_N
    brz     $m3, mmf_return
    // Sizes: K % 8, N % 16, rows a worker within rpt's count.
    and     $m4, $m2, 7
    brnz    $m4, mmf_trap_sizes
    and     $m4, $m3, 15
    brnz    $m4, mmf_trap_sizes
    cmpult  $m5, $m0, 6 * 4095 + 1
    brz     $m5, mmf_trap_rows
    // Alignment, and B in region 1.
    ld32    $m5, $m1, $mzero, MMF_V_A
    ld32    $m6, $m1, $mzero, MMF_V_C
    or      $m7, $m5, $m6
    ld32    $m6, $m1, $mzero, MMF_V_A_STEP
    or      $m7, $m7, $m6
    ld32    $m6, $m1, $mzero, MMF_V_C_STEP
    or      $m7, $m7, $m6
    ld32    $m6, $m1, $mzero, MMF_V_SCRATCH
    or      $m7, $m7, $m6
    and     $m7, $m7, 7
    brnz    $m7, mmf_trap_align
    ld32    $m7, $m1, $mzero, MMF_V_B
    and     $m8, $m7, 15
    brnz    $m8, mmf_trap_align
    shr     $m8, $m7, 19
    brz     $m8, mmf_trap_b_region
    put     $CCCSLOAD, $m7                // the weight blocks follow one another
    // From here $m6 is the scratch area.
    st32    $m10, $m6, $mzero, MMF_X + MMF_X_LR
    shr     $m5, $m2, 3
    add     $m5, $m5, -1
    st32    $m5, $m6, $mzero, MMF_X + MMF_X_KB
    // The fast condition (matmul_f32.h).  Block of A's last byte -> $m2,
    // of A's first -> $m8.
    add     $m7, $m0, -1
    ld32    $m5, $m1, $mzero, MMF_V_A_STEP
    st32    $m5, $m6, $mzero, MMF_S + MMF_S_A_STEP
    mul     $m5, $m5, $m7
    shl     $m2, $m2, 2
    add     $m5, $m5, $m2
    ld32    $m8, $m1, $mzero, MMF_V_A
    add     $m5, $m5, $m8
    add     $m5, $m5, -1
    shr     $m2, $m5, 15
    shr     $m8, $m8, 15
    // Block of C's last byte -> $m5, of C's first -> $m7; C's rows hold
    // 4 N bytes.
    ld32    $m5, $m1, $mzero, MMF_V_C_STEP
    st32    $m5, $m6, $mzero, MMF_S + MMF_S_C_STEP
    mul     $m5, $m5, $m7
    shl     $m7, $m3, 2
    add     $m5, $m5, $m7
    ld32    $m7, $m1, $mzero, MMF_V_C
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
    ld32    $m5, $m1, $mzero, MMF_V_C_STEP
    and     $m8, $m5, 15
    cmpeq   $m8, $m8, 0
    and     $m2, $m2, $m8
    cmpult  $m8, $m5, MMF_MAX_FAST_STEP + 1
    and     $m2, $m2, $m8
    ld32    $m7, $m1, $mzero, MMF_V_A_STEP
    cmpult  $m8, $m7, MMF_MAX_FAST_STEP + 1
    and     $m2, $m2, $m8                 // F: 1 when the placement is fast
    mul     $m8, $m0, $m2
    st32    $m8, $m6, $mzero, MMF_X + MMF_X_MF
    shl     $m8, $m2, 2
    add     $m8, $m8, -1
    st32    $m8, $m6, $mzero, MMF_X + MMF_X_T3
    // Pace strides (ISA2 §4.1.1.3 packed strides, in atoms): field 1 from
    // an A row's word 3 to the next row's word 0, field 2 from a C row's
    // word 7 to the next row's word 0, field 3 zero.  Walking backwards,
    // the next row is the one before.
    shr     $m7, $m7, 3                   // A step in atoms
    shr     $m5, $m5, 3                   // C step in atoms
    add     $m8, $m7, -3
    and     $m8, $m8, 0x3ff
    add     $m2, $m5, -7
    and     $m2, $m2, 0x3ff
    shl     $m2, $m2, 10
    or      $m8, $m8, $m2
    st32    $m8, $m6, $mzero, MMF_X + MMF_X_SF
    sub     $m7, $mzero, $m7
    add     $m7, $m7, -3
    and     $m7, $m7, 0x3ff
    sub     $m5, $mzero, $m5
    add     $m5, $m5, -7
    and     $m5, $m5, 0x3ff
    shl     $m5, $m5, 10
    or      $m7, $m7, $m5
    sub     $m7, $m7, $m8
    st32    $m7, $m6, $mzero, MMF_X + MMF_X_SD
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
    // The six worker records (amp_worker_rows.S).
    mm_worker_records MMF
    // Block loops: $m0 groups left - 1, $m2 blocks a group - 1, $m3 blocks
    // left in the group - 1, $m5 the vertex base (the scratch), $m6 its
    // step, $m7 the workers' entry, $m4 the A offset of the block, $m1 the
    // C offset of the group (also in the shared record for the workers).
    ld32    $m0, $m1, $mzero, MMF_V_N
    shr     $m0, $m0, 4
    add     $m0, $m0, -1
    mov     $m5, $m2
    setzi   $m6, 4 * MMF_W_WORDS
    setzi   $m7, mmf_worker
    ld32    $m2, $m5, $mzero, MMF_X + MMF_X_KB
    setzi   $m4, 0
    setzi   $m1, 0
    st32    $m4, $m5, $mzero, MMF_S + MMF_S_A_OFF
    st32    $m1, $m5, $mzero, MMF_S + MMF_S_C_OFF
    mov     $m3, $m2
    .align  8
mmf_block:
    .set    MMF_I, 0
    .rept   32
    ld128putcs MMF_I
    .set    MMF_I, MMF_I + 2
    .endr
    runall  $m7, $m5, $m6
    sync    0                             // until every worker has exited
    add     $m4, $m4, 32                  // the next 8 rows of K
    st32    $m4, $m5, $mzero, MMF_S + MMF_S_A_OFF
    brnzdec $m3, mmf_block
    setzi   $m4, 0                        // the next 16 columns of N, K from 0
    st32    $m4, $m5, $mzero, MMF_S + MMF_S_A_OFF
    add     $m1, $m1, 64
    st32    $m1, $m5, $mzero, MMF_S + MMF_S_C_OFF
    mov     $m3, $m2
    brnzdec $m0, mmf_block
    ld32    $m10, $m5, $mzero, MMF_X + MMF_X_LR
    br      $m10
    .align  8
mmf_return:
    br      $m10
mmf_trap_sizes:
    trap    MMF_TRAP_SIZES
mmf_trap_align:
    trap    MMF_TRAP_ALIGN
mmf_trap_b_region:
    trap    MMF_TRAP_B_REGION
mmf_trap_rows:
    trap    MMF_TRAP_ROWS

// ---- workers -----------------------------------------------------------------
// A launch reads the worker's record ($m13 = $VERTEX_BASE) and the shared
// offsets of this block: $m5 / $m6 the A / C address of the first row run.
    .worker
    .align  8
mmf_worker:
    { ld32  $m3, $m13, $mzero, MMF_W_FAST_ROWS ; fnop }
    ld32    $m7, $m13, $mzero, MMF_W_SHARED
    ld32    $m5, $m13, $mzero, MMF_W_A
    ld32    $m6, $m13, $mzero, MMF_W_C
    ld32    $m8, $m7, $mzero, MMF_S_A_OFF
    ld32    $m9, $m7, $mzero, MMF_S_C_OFF
    add     $m5, $m5, $m8
    add     $m6, $m6, $m9
    brz     $m3, mmf_slow
    ld32    $m4, $m13, $mzero, MMF_W_STRIDES
    tapack  $m0:1, $m5, $m6, $m6
    // Filling: ld2x64pace strides [1:0] A, [3:2] C loads (0b00 next word,
    // 0b01 field 1: A's next row, 0b10 field 2: C's next row, 0b11 stay).
    // A stays on row 0's first word until the inputs begin.
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; fnop }
    // Cycle 0: the partials of row 0 (inputs: whatever A's first word holds).
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P1 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P2 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P3 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P4 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P5 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b1011 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P6 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P7 }
    // Cycle 1: the inputs of row 0, the partials of row 1.
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P1 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P2 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P3 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P4 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P5 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b1001 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P6 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P7 }
    // Cycle 2 up to where the results of row 0 begin to be stored.
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P1 }
    { rpt $m3, (2f - 1f) / 8 - 1 ; fnop }
    // One row a turn, from phase 2 of its cycle c to phase 1 of c + 1:
    // stores row c - 2; strides [5:4] the C store.
1:
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m4, 0b000000 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P2 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m4, 0b000011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P3 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m4, 0b000000 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P4 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m4, 0b000011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P5 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m4, 0b001001 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P6 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m4, 0b000011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P7 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m4, 0b000000 ; f32sisov2amp $a4:5, $a0, $a2:3, MMF_P0 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m4, 0b100011 ; f32sisov2amp $a6:7, $a1, $a2:3, MMF_P1 }
2:
    exitz   $mzero
    // The slow loop, one row at a time: $m0 A's row, $m1 C's row for the
    // loads, $m4 C's row for the stores (the loads have moved on).
    .align  8
mmf_slow:
    { ld32  $m3, $m13, $mzero, MMF_W_SLOW_ROWS ; fnop }
    brz     $m3, mmf_idle
    ld32    $m2, $m7, $mzero, MMF_S_A_STEP
    ld32    $m10, $m7, $mzero, MMF_S_C_STEP
    mov     $m0, $m5
    mov     $m1, $m6
    rpt     $m3, (8f - 7f) / 8 - 1
7:
    { ld64  $a2:3, $m1, $mzero, 0 ; fnop }
    { ld64  $a2:3, $m1, $mzero, 1 ; f32sisov2amp $a4:5, $azero, $a2:3, MMF_P0 }
    { ld64  $a2:3, $m1, $mzero, 2 ; f32sisov2amp $a4:5, $azero, $a2:3, MMF_P1 }
    { ld64  $a2:3, $m1, $mzero, 3 ; f32sisov2amp $a4:5, $azero, $a2:3, MMF_P2 }
    { ld64  $a2:3, $m1, $mzero, 4 ; f32sisov2amp $a4:5, $azero, $a2:3, MMF_P3 }
    { ld64  $a2:3, $m1, $mzero, 5 ; f32sisov2amp $a4:5, $azero, $a2:3, MMF_P4 }
    { ld64  $a2:3, $m1, $mzero, 6 ; f32sisov2amp $a4:5, $azero, $a2:3, MMF_P5 }
    { ld64  $a2:3, $m1, $mzero, 7 ; f32sisov2amp $a4:5, $azero, $a2:3, MMF_P6 }
    { ld64  $a0:1, $m0, $mzero, 0 ; f32sisov2amp $a4:5, $azero, $a2:3, MMF_P7 }
    { mov   $m4, $m1 ; f32sisov2amp $a4:5, $a0, $azeros, MMF_P0 }
    { ld64  $a0:1, $m0, $mzero, 1 ; f32sisov2amp $a4:5, $a1, $azeros, MMF_P1 }
    { add   $m1, $m1, $m10 ; f32sisov2amp $a4:5, $a0, $azeros, MMF_P2 }
    { ld64  $a0:1, $m0, $mzero, 2 ; f32sisov2amp $a4:5, $a1, $azeros, MMF_P3 }
    { nop ; f32sisov2amp $a4:5, $a0, $azeros, MMF_P4 }
    { ld64  $a0:1, $m0, $mzero, 3 ; f32sisov2amp $a4:5, $a1, $azeros, MMF_P5 }
    { add   $m0, $m0, $m2 ; f32sisov2amp $a4:5, $a0, $azeros, MMF_P6 }
    { nop ; f32sisov2amp $a4:5, $a1, $azeros, MMF_P7 }
    { nop ; f32sisov2amp $a4:5, $azero, $azeros, MMF_P0 }
    { st64  $a4:5, $m4, $mzero, 0 ; f32sisov2amp $a4:5, $azero, $azeros, MMF_P1 }
    { st64  $a4:5, $m4, $mzero, 1 ; f32sisov2amp $a4:5, $azero, $azeros, MMF_P2 }
    { st64  $a4:5, $m4, $mzero, 2 ; f32sisov2amp $a4:5, $azero, $azeros, MMF_P3 }
    { st64  $a4:5, $m4, $mzero, 3 ; f32sisov2amp $a4:5, $azero, $azeros, MMF_P4 }
    { st64  $a4:5, $m4, $mzero, 4 ; f32sisov2amp $a4:5, $azero, $azeros, MMF_P5 }
    { st64  $a4:5, $m4, $mzero, 5 ; f32sisov2amp $a4:5, $azero, $azeros, MMF_P6 }
    { st64  $a4:5, $m4, $mzero, 6 ; f32sisov2amp $a4:5, $azero, $azeros, MMF_P7 }
    { st64  $a4:5, $m4, $mzero, 7 ; fnop }
8:
    exitz   $mzero
    .align  8
mmf_idle:
    exitz   $mzero

// ---- vtx_pack_b_f32 ----------------------------------------------------------
// B row-major in tile memory, (k, n) at SRC + k * ROW_STEP + 4 n, into the
// packed layout (matmul_f32.h, matmul_pack_weights_f32): for each output
// group g and weight block j, g-major, 16 unit rows of 8 values, unit u
// holding B[8 j .. 8 j + 7][16 g + matmul_f32_unit_channel(u)].  Record
// (words, matmul_f32.h enum pack_f32_vertex): SRC (B's (0, 16 g0)), DST
// (where group g0 starts: 512 bytes a block), BLOCKS (K / 8), GROUPS (this
// worker's; 0: nothing), ROW_STEP.  The units of set s are the columns
// 2 s + 4 p + b (p 0..3, b 0..1).  Per unit row: mov, then 4 x (ld32,
// ld32, add, st64step): 17 issues for 8 values; a set 2 + 8 x 17, a block
// 2 + 2 x 138 + 2, a group 2 + Bk x 280 + 3.
    .equ PKF_V_SRC, 0
    .equ PKF_V_DST, 1
    .equ PKF_V_BLOCKS, 2
    .equ PKF_V_GROUPS, 3
    .equ PKF_V_ROW_STEP, 4

    .align 8
    .globl vtx_pack_b_f32
    .worker
vtx_pack_b_f32:
    ld32    $m0, $m13, $mzero, PKF_V_SRC
    ld32    $m1, $m13, $mzero, PKF_V_DST
    ld32    $m2, $m13, $mzero, PKF_V_BLOCKS
    ld32    $m3, $m13, $mzero, PKF_V_GROUPS
    ld32    $m4, $m13, $mzero, PKF_V_ROW_STEP
    brz     $m3, pkf_exit
    brz     $m2, pkf_exit
    add     $m3, $m3, -1                 // brnzdec counts: n - 1 .. 0
    add     $m2, $m2, -1
    add     $m11, $m4, $m4               // two rows of k
    shl     $m10, $m4, 3                 // eight rows of k: the next block
pkf_group:
    mov     $m9, $m0                     // (k 8 j, n 16 g)
    mov     $m6, $m2
pkf_block:
    mov     $m5, $m9                     // (k 8 j, n 16 g + 2 s)
    setzi   $m7, 1
pkf_set:
    .set    PKF_P, 0
    .rept   4
    .set    PKF_B, 0
    .rept   2
    mov     $m8, $m5
    .rept   4
    ld32    $a0, $m8, $mzero, 4 * PKF_P + PKF_B
    ld32    $a1, $m8, $m4, 4 * PKF_P + PKF_B
    add     $m8, $m8, $m11
    st64step $a0:1, $mzero, $m1+=, 1
    .endr
    .set    PKF_B, PKF_B + 1
    .endr
    .set    PKF_P, PKF_P + 1
    .endr
    add     $m5, $m5, 8
    brnzdec $m7, pkf_set
    add     $m9, $m9, $m10
    brnzdec $m6, pkf_block
    add     $m0, $m0, 64                 // the next 16 columns
    brnzdec $m3, pkf_group
pkf_exit:
    exitz   $mzero
