// amp_worker_rows.S — assembler macros shared by the matmul codelets
// (matmul.S, matmul_f32.S).  It emits nothing itself: the kernel library
// is one text of its sources in file-name order (codelet_library.c), so
// the macros here are defined before the codelets that use them; a codelet
// assembled on its own includes this file (MM_WORKER_ROWS undefined).
    .set    MM_WORKER_ROWS, 1

// mm_worker_records p: the six worker records of a matmul call, written
// at run time without branches (so the set-up takes the same cycles for
// every size), for the codelet whose constants start with p (MMC: matmul.S,
// MMF: matmul_f32.S).  On entry $m5 = M % 6, $m4 = M / 6 + 1, $m3 = 0 (the
// first row of the chunk), $m2 = the scratch (p_X: the shared values, p_W_*
// a worker's record), $m1 = the vertex record.  Per worker: nf = the chunk
// lacks 3 rows after it (always when the placement is slow: MF = 0), nr =
// it lacks 3 before it (always when slow: T3 = ~0); slow = nf & nr,
// backwards = nf & !nr.  Uses $m0, $m6..$m8, $m10; $m3 ends at M.
    .macro  mm_worker_records p
    .set    \p\()_WI, 0
    .rept   6
    cmpult  $m6, $m5, \p\()_WI + 1
    sub     $m6, $m4, $m6                 // R
    add     $m7, $m3, $m6                 // end of the chunk
    add     $m0, $m7, 3
    ld32    $m8, $m2, $mzero, \p\()_X + \p\()_X_MF
    cmpult  $m8, $m8, $m0                 // nf
    ld32    $m0, $m2, $mzero, \p\()_X + \p\()_X_T3
    cmpult  $m0, $m3, $m0                 // nr
    and     $m0, $m0, $m8                 // slow
    sub     $m8, $m8, $m0                 // backwards
    mul     $m10, $m6, $m0
    st32    $m10, $m2, $mzero, \p\()_W_WORDS * \p\()_WI + \p\()_W_SLOW_ROWS
    sub     $m10, $m6, $m10
    st32    $m10, $m2, $mzero, \p\()_W_WORDS * \p\()_WI + \p\()_W_FAST_ROWS
    add     $m6, $m6, -1
    mul     $m6, $m6, $m8
    add     $m6, $m6, $m3                 // first row run: the last if backwards
    ld32    $m0, $m2, $mzero, \p\()_X + \p\()_X_SD
    mul     $m0, $m0, $m8
    ld32    $m10, $m2, $mzero, \p\()_X + \p\()_X_SF
    add     $m0, $m0, $m10
    st32    $m0, $m2, $mzero, \p\()_W_WORDS * \p\()_WI + \p\()_W_STRIDES
    ld32    $m0, $m1, $mzero, \p\()_V_A_STEP
    mul     $m0, $m0, $m6
    ld32    $m10, $m1, $mzero, \p\()_V_A
    add     $m0, $m0, $m10
    st32    $m0, $m2, $mzero, \p\()_W_WORDS * \p\()_WI + \p\()_W_A
    ld32    $m0, $m1, $mzero, \p\()_V_C_STEP
    mul     $m0, $m0, $m6
    ld32    $m10, $m1, $mzero, \p\()_V_C
    add     $m0, $m0, $m10
    st32    $m0, $m2, $mzero, \p\()_W_WORDS * \p\()_WI + \p\()_W_C
    add     $m0, $m2, 4 * \p\()_S
    st32    $m0, $m2, $mzero, \p\()_W_WORDS * \p\()_WI + \p\()_W_SHARED
    mov     $m3, $m7
    .set    \p\()_WI, \p\()_WI + 1
    .endr
    .endm
