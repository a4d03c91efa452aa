// basic.S — a small worker kernel touching most of the assembler: sections,
// data of every width, labels and local labels, expressions, both bundle
// spellings, rpt with a body size computed from labels.

        .equ    N_ITEMS, 4
        .set    STRIDE, 2 * 4

        .text
        .globl  __supervisor
        .type   __supervisor, @function
__supervisor:
        setzi   $m0, table              // address of the table (fits u20)
        setzi   $m1, N_ITEMS - 1
        add     $m2, $m0, STRIDE        // the add-immediate row
        add     $m3, $m0, $m2           // the three-register row
        ld32    $m4, $m0, $mzero, 1
        ld32    $a0, $m0, $m1, 0        // the ARF row of ld32
        { ld64step $a2:3, $mzero, $m2+=, 1 ; f32add $a0, $a0, $a1 }
        {
          f32v2add $a4:5, $a2:3, $a4:5
          ld64step $a2:3, $mzero, $m2+=, 1
        }
        nop                             // the rpt body must start 8-byte aligned
        rpt     $m1, (2f - 1f) / 8 - 1
1:      { ld64step $a2:3, $mzero, $m2+=, 1 ; f32v2add $a4:5, $a2:3, $a4:5 }
        { st32step $a4, $mzero, $m3+=, 1 ; fnop }
2:      brnzdec $m1, 1b
3:      exitz   $mzero
        bri     3b
        .size   __supervisor, . - __supervisor

        .data
        .align  8
table:  .word   1, 2, 3, 4
        .word   table, table + 4, end_of_data - table
halves: .half   0x1234, -1
bytes:  .byte   'A', 0x7f, -128, 255
        .align  4
floats: .float  1.5, -2.0, 0x1p-2
f16s:   .f16    1.0, -2.0
text:   .asciz  "hi\n"
        .ascii  "ab"
end_of_data:

        .bss
        .align  16
buffer: .space  64
scratch:
        .zero   8
