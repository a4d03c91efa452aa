.equ MM_M, 12
.equ MM_K, 16
.equ MM_N, 16
.equ MM_F16_PARTIALS, 1
// amp_matmul.S — one tile's matrix product on the AMP:
//
//     C[M x N] += A[M x K] * B[K x N]        A, B f16; C f16 or f32
//
// Seen as a 1x1 convolution (IPU_FACTS.md): the M rows of A are field
// positions, K the input channels, N the output channels.  The weights are
// loaded into $CWEI one block at a time (16 input channels x 16 output
// channels, or x 8), and for each block six workers stream their share of
// the rows through the AMP:
//
//   MM_F16_PARTIALS = 1   f16v4hihov4amp, both AMP sets: 16 output channels
//                         per block, f16 partial sums in C, 64 MACs an issue
//   MM_F16_PARTIALS = 0   f16v4sisoamp, AMP set 0: 8 output channels per
//                         block, f32 partial sums in C, 32 MACs an issue
//
// C holds the initial partial sums on entry (zeros for a plain product).
// The arithmetic is modelled bit for bit by workloads/kernels/matmul_model.c.
//
// Parameters, defined (.equ) before this file is included:
//   MM_M, MM_K, MM_N    sizes: K a multiple of 16, N of the group (16 / 8)
//   MM_F16_PARTIALS     1 or 0, as above
//
// Data, at fixed tile addresses (symbols mm_a, mm_b, mm_c):
//   mm_a  region 0, M x K f16 row-major, then 2 rows of slack
//   mm_c  region 1 (the partials are the second load of ld2xst64pace, which
//         must not be in executable memory), M x N row-major, then 3 rows
//         of slack
//   mm_b  region 1 (ld128putcs needs interleaved memory), after mm_c, the
//         weights in blocks (matmul_pack_weights): for output group g and
//         input block j, g-major, a block of `group` rows of 16 f16 inputs,
//         row u for AMP unit u; 8 bytes of a block are one $CWEI entry, in
//         entry order (unit u, phase p at entry 4u + p, ISA2 §2.7.7).  With
//         f16v4hihov4amp a result word holds units 2p, 2p+1, 8+2p, 9+2p,
//         so unit u computes channel matmul_unit_channel(u), not u
// The slack rows are read, never written: each worker's loads run up to
// three rows past its last row (the pipeline is kept full to the end
// rather than drained) and those partial sums never come out.
//
// Worker pipeline (ISA2 f16v4hihoamp/f16v4sisoamp pages: a partial sum
// goes in 8 issues before its result comes out, the input vectors 4 to 1
// issues before).  Issue i of a worker, slot s = i / 4, phase p = i % 4:
//   amp i      takes the partials of row s (phase p's channel word), the
//              input vector p of row s - 1, and gives channel word p of
//              row s - 2;
//   the main   half of bundle i loads amp i+1's input and partials, and
//              stores amp i-2's result (amp results alternate between
//              $a4:5 and $a6:7, so bundle i stores what amp i is about to
//              overwrite).  The stored word (phase p - 2) and the loaded
//              partial word (phase p + 1) differ in address bit 3, so they
//              always sit in different memory elements of region 1.
// Issues 0..9 fill the pipeline (no stores); the loop then runs one row per
// iteration starting at phase 2, so its first store is row 0's first word
// and its last store, after R iterations, row R-1's last.
//
// Timing (IPU_FACTS.md: one worker issue every 6 tile cycles; 6 workers
// give one AMP issue per tile cycle): a worker with R rows issues 4 R + 25
// times per weight block; see tests/test_matmul_kernel.c for the whole
// count.

// enumFlags of the f16 AMP instructions (isa/amp.h: PH bits 1..0, EE bits
// 3..2 = engines - 1): all four engines, phases 0..3.
    .equ TAMP_F16V4_E4_P0, 12
    .equ TAMP_F16V4_E4_P1, 13
    .equ TAMP_F16V4_E4_P2, 14
    .equ TAMP_F16V4_E4_P3, 15

    .equ MM_WORKERS, 6
    .equ MM_K_BLOCK, 16
    .equ MM_GROUP, 8 + 8 * MM_F16_PARTIALS           // output channels per block
    .equ MM_C_ELEM_BYTES, 4 - 2 * MM_F16_PARTIALS
    .equ MM_A_ROW_BYTES, MM_K * 2
    .equ MM_C_ROW_BYTES, MM_N * MM_C_ELEM_BYTES
    .equ MM_N_GROUPS, MM_N / MM_GROUP
    .equ MM_K_BLOCKS, MM_K / MM_K_BLOCK
    .equ MM_B_BLOCK_BYTES, MM_GROUP * MM_K_BLOCK * 2  // one $CWEI load
    .equ MM_CWEI_LOADS, MM_B_BLOCK_BYTES / 16         // ld128putcs per block
    .equ MM_GROUP_BYTES, MM_GROUP * MM_C_ELEM_BYTES   // 32: four 64-bit words

    // Packed pace strides (ISA2 §4.1.6.3), in 64-bit atoms: STRIDE0 from an
    // input row's last word to the next row's first, STRIDE1 the same for
    // C; STRIDE2 = 0 (select 0b11: stay put).
    .equ MM_STRIDE_A, MM_A_ROW_BYTES / 8 - 3
    .equ MM_STRIDE_C, MM_C_ROW_BYTES / 8 - 3
    .equ MM_STRIDES, MM_STRIDE_A | (MM_STRIDE_C << 10)

    // Memory map.  The code sits in region 0's first element (0x4c000 -
    // 0x4ffff); a worker's region-0 data accesses must avoid the element of
    // its rpt body (ISA2 §4.1.6.2), so A starts at the next element and the
    // small tables go to region 1, after the weights.
    .equ MM_A_ADDR, 0x50000
    .equ MM_C_ADDR, 0x80000
    .equ MM_B_ADDR, (MM_C_ADDR + (MM_M + 3) * MM_C_ROW_BYTES + 15) & ~15
    .equ MM_A_END, MM_A_ADDR + (MM_M + 2) * MM_A_ROW_BYTES
    .equ MM_B_END, MM_B_ADDR + MM_K * MM_N * 2
    .equ MM_DATA_ADDR, MM_B_END                      // vertex table, block record
    .equ MM_DATA_END, MM_DATA_ADDR + MM_WORKERS * 16 + 8

    .if MM_F16_PARTIALS != 0 && MM_F16_PARTIALS != 1
    .error "MM_F16_PARTIALS must be 0 or 1"
    .endif
    .if MM_K % MM_K_BLOCK || MM_K == 0
    .error "MM_K must be a positive multiple of 16"
    .endif
    .if MM_N % MM_GROUP || MM_N == 0
    .error "MM_N must be a positive multiple of the output group (16 with f16 partials, 8 with f32)"
    .endif
    .if MM_STRIDE_A > 511 || MM_STRIDE_C > 511
    .error "rows too long for the 10-bit pace strides"
    .endif
    .if (MM_M + MM_WORKERS - 1) / MM_WORKERS > 4095
    .error "too many rows per worker for rpt"
    .endif
    .if MM_A_END > 0x80000
    .error "A does not fit in region 0"
    .endif
    .if MM_DATA_END > 0xe8000
    .error "C and the weights do not fit in region 1"
    .endif

// The AMP instruction of the chosen variant.
    .macro amp dst, in, partials, flags
    .if MM_F16_PARTIALS
    f16v4hihov4amp \dst, \in, \partials, \flags
    .else
    f16v4sisoamp \dst, \in, \partials, \flags
    .endif
    .endm

// ---- supervisor -------------------------------------------------------------
//
// For each output group g, for each input block j: put the block's
// weights into $CWEI (its bytes follow the previous block's, so $CCCSLOAD
// is set once), tell the workers the block's A and C offsets, start them
// all, wait for them.
    .text
    .align 8
    .globl __supervisor
    .supervisor
__supervisor:
    setzi   $m4, MM_B_ADDR
    put     $CCCSLOAD, $m4
    setzi   $m5, mm_vertex                // vertex base of worker 1
    setzi   $m6, 16                       // ... and the step to the next
    setzi   $m7, mm_worker
    setzi   $m8, mm_block
    setzi   $m1, 0                        // byte offset of group g in a C row
    setzi   $m9, MM_N_GROUPS - 1
mm_group_loop:
    setzi   $m2, 0                        // byte offset of block j in an A row
    setzi   $m3, MM_K_BLOCKS - 1
mm_block_loop:
    st32    $m2, $m8, $mzero, 0
    st32    $m1, $m8, $mzero, 1
    .set    MM_I, 0
    .rept   MM_CWEI_LOADS
    ld128putcs MM_I
    .set    MM_I, MM_I + 2
    .endr
    runall  $m7, $m5, $m6
    sync    0                             // until every worker has exited
    add     $m2, $m2, MM_K_BLOCK * 2
    brnzdec $m3, mm_block_loop
    add     $m1, $m1, MM_GROUP_BYTES
    brnzdec $m9, mm_group_loop
    exitz   $mzero

// ---- worker -----------------------------------------------------------------
    .align 8
    .worker
mm_worker:
    get     $m6, $VERTEX_BASE
    ld32    $m3, $m6, $mzero, 2           // rows
    brz     $m3, 9f
    ld32    $m1, $m6, $mzero, 0           // first A row of this worker
    ld32    $m2, $m6, $mzero, 1           // first C row
    setzi   $m6, mm_block
    ld32    $m4, $m6, $mzero, 0           // block's offset in an A row
    ld32    $m5, $m6, $mzero, 1           // group's offset in a C row
    add     $m1, $m1, $m4
    add     $m2, $m2, $m5
    setzi   $m4, MM_STRIDES
    // Input, partials and results all start at row 0 of the chunk.
    tapack  $m0:1, $m1, $m2, $m2
    // Partials of row 0, word 0.  Inputs for amps 0..3 are zero ($azeros):
    // their loads stay on row 0, word 0 (stride select 0b11 = 0).
    {
      ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011
      fnop
    }
    // Slot 0: partials of row 0 go in.
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; amp $a4:5, $azeros, $a2:3, TAMP_F16V4_E4_P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0011 ; amp $a6:7, $azeros, $a2:3, TAMP_F16V4_E4_P1 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b1011 ; amp $a4:5, $azeros, $a2:3, TAMP_F16V4_E4_P2 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; amp $a6:7, $azeros, $a2:3, TAMP_F16V4_E4_P3 }
    // Slot 1: row 0's inputs, row 1's partials.
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; amp $a6:7, $a0:1, $a2:3, TAMP_F16V4_E4_P1 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b1001 ; amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P2 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; amp $a6:7, $a0:1, $a2:3, TAMP_F16V4_E4_P3 }
    // Slot 2, phases 0 and 1: row 0's first results are in $a4:5, $a6:7.
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m4, 0b0000 ; amp $a6:7, $a0:1, $a2:3, TAMP_F16V4_E4_P1 }
    { rpt $m3, (2f - 1f) / 8 - 1 ; fnop }
1:
    // Stride selects, ld2xst64pace: [1:0] input, [3:2] partials, [5:4] store.
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m4, 0b001001 ; amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P2 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m4, 0b000000 ; amp $a6:7, $a0:1, $a2:3, TAMP_F16V4_E4_P3 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m4, 0b000000 ; amp $a4:5, $a0:1, $a2:3, TAMP_F16V4_E4_P0 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m4, 0b100000 ; amp $a6:7, $a0:1, $a2:3, TAMP_F16V4_E4_P1 }
2:
9:
    exitz   $mzero

// ---- data -------------------------------------------------------------------
    .section .mm_data, "aw", MM_DATA_ADDR
// Per worker: first A row, first C row, rows, (pad).  Rows are shared out
// as evenly as they go: the first M % 6 workers take one more.
mm_vertex:
    .set    MM_ROW0, 0
    .set    MM_W, 0
    .rept   MM_WORKERS
    .set    MM_ROWS_W, MM_M / MM_WORKERS + (MM_W < MM_M % MM_WORKERS)
    .word   MM_A_ADDR + MM_ROW0 * MM_A_ROW_BYTES, MM_C_ADDR + MM_ROW0 * MM_C_ROW_BYTES, MM_ROWS_W, 0
    .set    MM_ROW0, MM_ROW0 + MM_ROWS_W
    .set    MM_W, MM_W + 1
    .endr
// The current block: byte offset of its inputs in an A row, of its output
// group in a C row (written by the supervisor before each runall).
mm_block:
    .word   0, 0

    .section .mm_a, "aw", @nobits, MM_A_ADDR
    .globl  mm_a
mm_a:
    .space  MM_A_END - MM_A_ADDR

    .section .mm_c, "aw", @nobits, MM_C_ADDR
    .globl  mm_c
mm_c:
    .space  MM_B_ADDR - MM_C_ADDR

    .section .mm_b, "aw", @nobits, MM_B_ADDR
    .globl  mm_b
mm_b:
    .space  MM_B_END - MM_B_ADDR
