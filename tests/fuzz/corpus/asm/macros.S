// macros.S — .macro with arguments and defaults, \@ labels, nested
// expansion, .rept, conditionals.

        .macro  ADDI dst, src, imm=1
        add     \dst, \src, \imm
        .endm

        .macro  LOOP count, reg
        setzi   \reg, \count
loop\@:
        brnzdec \reg, loop\@
        .endm

        .macro  TWICE what:vararg
        \what
        \what
        .endm

        .macro  CHOOSE kind
        .ifc    \kind, float
        f32add  $a0, $a0, $a1
        .elseif 0
        nop
        .else
        f16v2add $a0, $a0, $a1
        .endif
        .endm

        .text
start:
        ADDI    $m0, $m0
        ADDI    $m1, $m0, -7
        LOOP    3, $m2
        LOOP    5, $m3
        TWICE   add $m4, $m4, 2
        CHOOSE  float
        CHOOSE  half
        .set    i, 0
        .rept   3
        add     $m5, $m5, i
        .set    i, i + 1
        .endr
        .rept   2
        .rept   2
        nop
        .endr
        .endr
        .ifdef  start
        exitz   $mzero
        .endif
        .ifndef start
        .error  "start must be defined"
        .endif
