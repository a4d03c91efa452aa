// matmul.S — the kernel library's matrix product on the AMP, sizes and
// addresses at run time (record layout and the placement rules:
// workloads/codelets/matmul.h):
//
//     sv_matmul_f16    C[M x N] += A[M x K] * B[K x N]    A, B f16;
//                      C f16 partials (f16v4hihov4amp, 64 MACs an issue)
//                      or f32 partials (f16v4sisoamp, 32 MACs an issue)
//
// The computation is workloads/kernels/amp_matmul.S's (read its header for
// the weight blocks, the $CWEI loads and the worker pipeline), with these
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
//   - the workers read their records only at the call's first launch and
//     keep what they need in registers across the relaunches of the later
//     weight blocks (run sets only $PC, $VERTEX_BASE, $FP_CTL, $FP_STS
//     and $WSR, isa/exec_control.c; poplibs' ConvPartial1x1Out relaunches
//     its workers at "state retained" entries the same way).  The supervisor chooses
//     the entry: a block entry (A pointer + 32 bytes: 1 issue), a group
//     entry (C pointer + 32 bytes, A back to the first block: 3 issues) or
//     the first-launch entry; when the six workers' kinds differ, stubs
//     (br $m8 / br $m9) send each to its own.  A fast block thus costs a
//     worker 4 R + 15 issues: 4 R of rows, 10 of the pipeline filling and
//     draining (11 ld2x64pace / AMP issues before the loop, one a load
//     only, and the loop's last 2 rows that run beyond the chunk), and
//     add, tapack, rpt, exitz.  amp_matmul.S and the earlier form of this
//     codelet spent 4 R + 25 and 4 R + 24, re-reading the record and the
//     block offsets at every launch.
// The results are bit for bit those of matmul_model_f16
// (workloads/kernels/matmul_model.c) on every path.
//
// Cycles (tile cycles; matmul_f16_cycles in matmul_model.c is this count,
// and tests/test_codelets_matmul.c checks it exactly on every shape and
// placement it runs).  With G = N / group output groups, Bk = K / 16
// blocks, L = 32 ld128putcs (f16 partials) or 16 (f32), p = 1 for f16
// partials (a nop aligns the loop head) else 0, every chunk fast and
// R = M / 6 rows a worker (M a multiple of 6):
//     cycles = 395 + p + 15 G + G Bk (L + 94 + 24 R)
// from the call to the return.  Derivation:
//   - supervisor before the first ld128putcs: 339 + p issues (the call;
//     110 checking the record, testing the placement, packing the strides
//     and dividing the rows; 6 x 35 writing the worker records without
//     branches; 18 choosing the variant and the entries); after the
//     loops: ld32, br;
//   - a block: L ld128putcs, runall, then with equal worker counts n the
//     last worker exits 6 n - 1 cycles after runall's next cycle, sync
//     issues the cycle after, then mov, brnzdec: L + 4 + 6 n;
//   - n = 4 R + 15 (block), 4 R + 17 (a group's first block), 4 R + 26
//     (the call's first: 9 more reading the record), and each group ends
//     with mov, mov, brnzdec;
//   so 341 + p + G Bk (L + 4 + 6 (4 R + 15)) + 12 (G - 1) + 66 + 3 G.
// Per weight block that is L + 94 + 24 R cycles: at M = 48 (R = 8) with
// f32 partials 302, of which 192 are AMP issues of rows (the earlier form:
// 358, amp_matmul.S: 364; L + 150 + 24 R and L + 156 + 24 R).  The set-up
// is 386 + 11 G cycles more than amp_matmul.S's (9 + 4 G, records
// assembled in), repaid after about 7 blocks.  E.g. M = 12, K = 32, N = 32,
// f16 partials: 961 for amp_matmul.S, 1122 here (plus the caller's
// setzi and exitz).
// When the workers' issue counts differ (M % 6 != 0, slow or idle
// chunks) the block ends 1 cycle after the last worker's exit, which
// depends on the phase of the runall (matmul_f16_cycles works it out);
// through the stubs a fast block costs one issue more, a slow block
// 14 R + 6 (group 14 R + 8, first launch 14 R + 21), an idle worker 2
// (first launch 7).
// Measured (tests/test_codelets_matmul.c), A in region 0, C and B in
// region 1, the caller's 4 instructions included; MACs a tile cycle and
// the fraction of the variant's peak (64 f16 partials, 32 f32), before ->
// after keeping the workers' registers:
//   M = 48, K = 1024, N = 24, f32: 69,085 -> 58,428 cycles, 17.08 -> 20.19
//     (0.534 -> 0.631): the block the compiler gives each tile of a
//     384 x 1024 x 4096 product;
//   M = 96, K = 1024, N = 24, f32: 105,949 -> 95,292, 22.27 -> 24.76
//     (0.696 -> 0.774);
//   M = 192, K = 128, N = 128, f32: 119,953 -> 113,023, 26.23 -> 27.83
//     (0.820 -> 0.870);
//   M = 768, K = 128, N = 128, f16: 208,626 -> 205,192, 60.31 -> 61.32
//     (0.942 -> 0.958; amp_matmul.S: 208,681);
//   M = 576, K = 128, N = 128, f32: 316,561 -> 309,631, 29.81 -> 30.48
//     (0.932 -> 0.952).
// The slow loop: 14 issues a row (and 6 a block), about 3.5 times the
// fast loop's time for large M.
//
// What is left a block is the pipeline (10 issues) and the supervisor's
// L + 4.  Draining one block while the next fills (the AACC and $a
// registers also survive a relaunch) would need the C pointers to jump
// from the last rows of one block to the first of the next inside one
// pace stride (10-bit atom counts, 4 KiB) and the next block's first
// partial sums to be loaded before the previous block's results for the
// same rows are stored (a hazard when R < 4 or when one output group
// follows itself); this codelet does not attempt it.

    .ifndef MM_WORKER_ROWS
    .include "amp_worker_rows.S"
    .endif

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
    .equ MMC_S, 48               // shared record (the slow loop's steps):
    .equ MMC_S_A_STEP, 0         //   A row step
    .equ MMC_S_C_STEP, 1         //   C row step
    .equ MMC_X, 50               // supervisor's values:
    .equ MMC_X_MF, 0             //   M if the placement is fast, else 0
    .equ MMC_X_T3, 1             //   3 if the placement is fast, else 0xffffffff
    .equ MMC_X_SF, 2             //   strides walking forwards
    .equ MMC_X_SD, 3             //   strides backwards minus forwards
    .equ MMC_X_LR, 4             //   the return address
    .equ MMC_X_KB, 5             //   K / 16 - 1
    .equ MMC_X_P, 6              //   partials kind
    // 57 words = 228 bytes, within MATMUL_F16_SCRATCH_BYTES (232)

    // sv_matmul_f16_wl's record (matmul.h: enum matmul_f16_wl_record):
    // six worker list entries, then the shared fields.
    .equ MMC_WL_SHARED, 6
    .equ MMC_SH_A, 0                 // A's address - 32
    .equ MMC_SH_C, 1                 // C's address - 32
    .equ MMC_SH_A_STEP, 2
    .equ MMC_SH_C_STEP, 3
    .equ MMC_SH_SF, 4
    .equ MMC_SH_SB, 5
    .equ MMC_SH_B, 6
    .equ MMC_SH_LOOPS, 7

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

// The supervisor's loops over output groups and weight blocks: put the
// block's weights into $CWEI, start the workers, wait for them.  The
// workers keep their registers from one launch to the next (run touches
// only $PC, $VERTEX_BASE, $FP_CTL, $FP_STS and $WSR: isa/exec_control.c;
// poplibs' ConvPartial1x1Out relaunches its workers the same way, at
// entries that skip the set-up), so the entry tells them what changed: $m7 is the
// first-launch entry for the call's first block, then the block entry
// ($m1: the next 16 rows of K, A pointers + 32 bytes) or, for the first
// block of a group, the group entry ($m4: the next 32 bytes of C's rows,
// A back to its first block).  One head for both loops, 8-byte aligned
// (no branch penalty).
    .macro mmc_block_loops loads, pfx, lr_in_m10=0
\pfx\()_block:
    .set    MMC_I, 0
    .rept   \loads
    ld128putcs MMC_I
    .set    MMC_I, MMC_I + 2
    .endr
    runall  $m7, $m5, $m6
    sync    0                             // until every worker has exited
    mov     $m7, $m1
    brnzdec $m3, \pfx\()_block
    mov     $m7, $m4
    mov     $m3, $m2
    brnzdec $m0, \pfx\()_block
    .if \lr_in_m10 == 0
    ld32    $m10, $m5, $mzero, MMC_X + MMC_X_LR
    .endif
    br      $m10
    .endm

// The launches' entries, then the loops: $m7 the first launch's entry,
// $m1 the fast loop's block entry or, when $m3 is 1, the stub's ($m8 =
// mmc_disp_block), $m4 the group entry 8 bytes before it, $m3 the blocks
// of the first group ($m2).  pad 1: a nop, so the loop head is 8-byte
// aligned.
    .macro mmc_launch_loops first, fast, loads, pfx, lr_in_m10=0, pad=0
    setzi   $m7, \first
    setzi   $m1, \fast
    sub     $m8, $m8, $m1
    mul     $m8, $m8, $m3
    add     $m1, $m1, $m8
    add     $m4, $m1, -8
    mov     $m3, $m2
    .if \pad
    nop                                   // the loop head 8-byte aligned
    .endif
    mmc_block_loops \loads, \pfx, \lr_in_m10
    .endm

// A worker.  The first launch of a call enters at init and reads its
// record ($m13 = $VERTEX_BASE) into registers that the later launches
// keep: $m3 rows, $m4 pace strides (fast) or $m2 / $m10 / $m11 the A
// step, the C step and its negation (slow), $m5 the A address of the
// current block's first row, $m6 the C address of the current group's
// first row, $m7 the A address of the first row minus 32, $m8 / $m9 the
// worker's own block and group entries (used through the dispatch stubs
// when the workers' kinds differ).
    .macro mmc_worker hiho, pfx
    .align  8
    // Named for the debugger (break 7:mmc_h_fast_block): the worker's entry
    // and its fast loop, where the AMP streams rows.
    .globl \pfx\()_init, \pfx\()_fast_block
\pfx\()_init:
    { ld32  $m3, $m13, $mzero, MMC_W_FAST_ROWS ; fnop }
    brz     $m3, \pfx\()_slow_init
    ld32    $m7, $m13, $mzero, MMC_W_A
    ld32    $m6, $m13, $mzero, MMC_W_C
    ld32    $m4, $m13, $mzero, MMC_W_STRIDES
    setzi   $m8, \pfx\()_fast_block
    setzi   $m9, \pfx\()_fast_group
    add     $m7, $m7, -32
    add     $m6, $m6, -32
    // 8-byte aligned (a branch target); the first launch falls through.
\pfx\()_fast_group:
    add     $m6, $m6, 32
    mov     $m5, $m7
\pfx\()_fast_block:
    add     $m5, $m5, 32
    // The fast loop: amp_matmul.S's pipeline.  Stride selects: 0b00 next
    // word, 0b01 field 1 (A to its next row), 0b10 field 2 (C to its next
    // row), 0b11 field 3 (stay).
    tapack  $m0:1, $m5, $m6, $m6
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
    // The first launch of sv_matmul_f16_wl ($m13 the record for every
    // worker): word i of the record, i the worker's index ($WSR bits
    // 2..0), gives its first row run, its rows and how it runs them (4 x:
    // 0 idle, 4 forwards, 8 backwards, 12 slow); the fields all workers
    // share follow the six entries.  The worker works out its A and C
    // addresses (less 32: the loops add 32 first) and takes its pace
    // strides, then joins the loops above or the slow loop's set-up below.
    .align  8
    .globl  \pfx\()_wl_init
\pfx\()_wl_init:
    get     $m10, $WSR
    and     $m10, $m10, 7
    shl     $m10, $m10, 2
    ld32    $m3, $m13, $m10, 0
    shr     $m2, $m3, 28
    brz     $m2, mmc_empty_init
    and     $m5, $m3, 0xffff              // the first row run
    ld32    $m7, $m13, $mzero, MMC_WL_SHARED + MMC_SH_A_STEP
    mul     $m7, $m7, $m5
    ld32    $m4, $m13, $mzero, MMC_WL_SHARED + MMC_SH_A
    add     $m7, $m7, $m4
    ld32    $m6, $m13, $mzero, MMC_WL_SHARED + MMC_SH_C_STEP
    mul     $m6, $m6, $m5
    ld32    $m4, $m13, $mzero, MMC_WL_SHARED + MMC_SH_C
    add     $m6, $m6, $m4
    shl     $m3, $m3, 4
    shr     $m3, $m3, 20                  // rows
    cmpult  $m5, $m2, 12
    brz     $m5, \pfx\()_wl_slow
    // strides forwards (4) or backwards (8)
    ld32    $m4, $m13, $m2, MMC_WL_SHARED + MMC_SH_SF - 1
    setzi   $m8, \pfx\()_fast_block
    setzi   $m9, \pfx\()_fast_group
    br      $m9
    .align  8
\pfx\()_wl_slow:
    ld32    $m2, $m13, $mzero, MMC_WL_SHARED + MMC_SH_A_STEP
    ld32    $m10, $m13, $mzero, MMC_WL_SHARED + MMC_SH_C_STEP
    sub     $m11, $mzero, $m10
    setzi   $m8, \pfx\()_slow_block
    setzi   $m9, \pfx\()_slow_group
    br      $m9
    // The slow loop, one row at a time: partials in (4 issues, inputs
    // zero), inputs in (4), results out (4, inputs and partials zero),
    // with single 64-bit loads and stores.  The stores address the row the
    // loads have just left: $m1 + $m11 with $m11 = -C step.
    .align  8
\pfx\()_slow_init:
    ld32    $m3, $m13, $mzero, MMC_W_SLOW_ROWS
    brz     $m3, mmc_empty_init
    ld32    $m7, $m13, $mzero, MMC_W_A
    ld32    $m6, $m13, $mzero, MMC_W_C
    ld32    $m10, $m13, $mzero, MMC_W_SHARED
    ld32    $m2, $m10, $mzero, MMC_S_A_STEP
    ld32    $m10, $m10, $mzero, MMC_S_C_STEP
    sub     $m11, $mzero, $m10
    setzi   $m8, \pfx\()_slow_block
    setzi   $m9, \pfx\()_slow_group
    add     $m7, $m7, -32
    add     $m6, $m6, -32
    // 8-byte aligned (a branch target); the first launch falls through.
\pfx\()_slow_group:
    add     $m6, $m6, 32
    mov     $m5, $m7
\pfx\()_slow_block:
    add     $m5, $m5, 32
    mov     $m0, $m5
    mov     $m1, $m6
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
    { add   $m0, $m0, $m2 ; mmc_amp \hiho, $a6:7, $a2:3, $azeros, MMC_AMP_P3 }
    { add   $m1, $m1, $m10 ; mmc_amp \hiho, $a4:5, $azeros, $azeros, MMC_AMP_P0 }
    { st64  $a4:5, $m1, $m11, 0 ; mmc_amp \hiho, $a6:7, $azeros, $azeros, MMC_AMP_P1 }
    { st64  $a6:7, $m1, $m11, 1 ; mmc_amp \hiho, $a4:5, $azeros, $azeros, MMC_AMP_P2 }
    { st64  $a4:5, $m1, $m11, 2 ; mmc_amp \hiho, $a6:7, $azeros, $azeros, MMC_AMP_P3 }
    { st64  $a6:7, $m1, $m11, 3 ; fnop }
8:
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
    // The six worker records (amp_worker_rows.S).
    mm_worker_records MMC
    // Block loops: $m0 groups left, $m2 blocks a group - 1, $m3 blocks
    // left in the group, $m5 vertex base (the scratch), $m6 its step, $m7
    // the entry of the next launch, $m1 the block entry, $m4 the group
    // entry.  When every worker runs the fast loop (the placement is fast
    // and M >= 6: matmul.h) the entries are the fast loop's own; otherwise
    // stubs that jump to each worker's entry ($m8, $m9).  A group entry
    // lies 8 bytes before its block entry.
    ld32    $m4, $m1, $mzero, MMC_V_PARTIALS
    ld32    $m0, $m1, $mzero, MMC_V_N
    mov     $m5, $m2
    setzi   $m6, 4 * MMC_W_WORDS
    ld32    $m2, $m5, $mzero, MMC_X + MMC_X_KB
    ld32    $m3, $m5, $mzero, MMC_X + MMC_X_MF
    cmpult  $m3, $m3, 6                   // 1: use the stubs
    setzi   $m8, mmc_disp_block
    brnz    $m4, mmc_f16_partials
    shr     $m0, $m0, 3
    add     $m0, $m0, -1
    mmc_launch_loops mmc_s_init, mmc_s_fast_block, 16, mmc_s
    .align  8
mmc_f16_partials:
    shr     $m0, $m0, 4
    add     $m0, $m0, -1
    mmc_launch_loops mmc_h_init, mmc_h_fast_block, 32, mmc_h, 0, 1
    .align  8
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

// sv_matmul_f16_wl: the same product with the work split and the workers'
// lists worked out by the compiler (matmul_f16_wl_record, matmul.h), as
// poplibs' ConvPartial1x1Out takes its worklists: no checks, no scratch,
// the return address stays in $m10.  The loops word: output groups - 1 in
// bits 14..0, weight blocks - 1 in bits 29..15, the stubs in bit 30, f16
// partials in bit 31.
    .align 8
    .globl sv_matmul_f16_wl
    .supervisor
sv_matmul_f16_wl:
    ld32    $m7, $m1, $mzero, MMC_WL_SHARED + MMC_SH_B
    put     $CCCSLOAD, $m7
    ld32    $m4, $m1, $mzero, MMC_WL_SHARED + MMC_SH_LOOPS
    and     $m0, $m4, 0x7fff
    shr     $m2, $m4, 15
    and     $m2, $m2, 0x7fff
    mov     $m5, $m1
    setzi   $m6, 0                        // every worker's $m13 the record
    shr     $m3, $m4, 30
    and     $m3, $m3, 1                   // 1: use the stubs
    setzi   $m8, mmc_disp_block
    shr     $m4, $m4, 31
    brnz    $m4, mmc_wl_f16_partials
    mmc_launch_loops mmc_s_wl_init, mmc_s_fast_block, 16, mmc_sw, 1
    .align  8
mmc_wl_f16_partials:
    mmc_launch_loops mmc_h_wl_init, mmc_h_fast_block, 32, mmc_hw, 1, 1

// ---- workers -----------------------------------------------------------------
    .worker
    mmc_worker 1, mmc_h
    mmc_worker 0, mmc_s
// The dispatch stubs (group entry 8 bytes before the block entry) and the
// idle worker.
    .align  8
mmc_disp_group:
    br      $m9
    nop
mmc_disp_block:
    br      $m8
    .align  8
mmc_empty_init:
    setzi   $m8, mmc_empty
    setzi   $m9, mmc_empty
mmc_empty:
    exitz   $mzero
