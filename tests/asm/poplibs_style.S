// poplibs_style.S — a worker written the way poplibs codelets are:
// quoted section names, .type/.size, .worker, braces on lines of their
// own, rpt body sizes computed from labels, the short ld32 form.

#define WKR_OUT_PTR   0
        .equ    WKR_COUNT, 4
        .equ    WKR_STRIDE, 8

        .section ".text.zeroAndAccumulate", "ax"
        .globl  zeroAndAccumulate
        .type   zeroAndAccumulate, @function
        .align  8
        .worker
zeroAndAccumulate:
        ld32          $m0, $m7, 0                      // WKR_OUT_PTR / 4
        ld32          $m1, $m7, WKR_COUNT / 4
        ld32          $m2, $m7, WKR_STRIDE / 4
        tapack        $m4:5, $m0, $m0, $m0
        add           $m1, $m1, -1
        rpt           $m1, (LZeroEnd - LZeroBegin) / 8 - 1
LZeroBegin:
        {
          st64pace    $azeros, $m4:5+=, $mzero, 0b00
          fnop
        }
        {
          st64pace    $azeros, $m4:5+=, $m2, 0b10
          f32v2add    $a0:1, $a0:1, $a2:3
        }
LZeroEnd:
        {
          ld2x64pace  $a0:1, $a2:3, $m4:5+=, $m2, 0b0011
          f32v2mul    $a4:5, $a0:1, $a2:3
        }
        exitz         $mzero
.size zeroAndAccumulate, . - zeroAndAccumulate

        .section ".text.supervisor", "ax"
        .supervisor
        .globl  __supervisor
__supervisor:
        setzi         $m0, zeroAndAccumulate
        setzi         $m1, vertexState
        runall        $m0, $m1, $mzero
        sync          0
        exitz         $mzero

        .data
        .align  8
vertexState:
        .word   outBuf, 16, 8
        .bss
outBuf: .space  128
