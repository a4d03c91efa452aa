// multitile.S — code and data on several tiles, sections at given
// addresses, .org, custom sections, entries by every rule.

        .tile   0
        .section .text.worker, "ax", 0x4c100
worker: exitz   $mzero

        .text
__supervisor:                           // tile 0: entry by name
        setzi   $m0, worker
        bri     __supervisor

        .section .rodata.consts, "a"
consts: .word   0xdeadbeef, 0x01234567

        .tile   1
        .text                           // tile 1: entry is the start of .text
        nop
        exitz   $mzero

        .section .data, "aw", 0x90000
        .word   1

        .tile   2
        .section .code2, "ax"
        .org    0x50000
        nop
main2:  exitz   $mzero
        .entry  main2                   // tile 2: entry by .entry
        .org    0x50010
        exitz   $mzero

        .section .bss, "aw", @nobits, 0xa0000
big:    .space  256
