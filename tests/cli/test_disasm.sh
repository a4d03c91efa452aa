#!/usr/bin/env bash
# `ipusim disasm` of a compiled program and `ipusim asm` of what it writes:
# the kernel code every tile holds is written once, under the `.tile` list
# of those tiles, each tile's own data under the tile; the text assembles
# back to the same sections, symbols and entries (the disassembly of what
# it assembles to is the same text, less the comments on what is not
# assembly: the tensor map, the machine).
source "$(dirname "$0")/lib.sh"
OUT="$WORK/out"
mkdir -p "$OUT"

expect 0 "matmul:128x48x40 -> $WORK/mm.elf for gc200" -- "$IPUSIM" compile matmul:128x48x40 -o "$WORK/mm.elf"
check "disassembled" timeout 60 "$IPUSIM" disasm "$WORK/mm.elf" -o "$WORK/mm.S"

# The counts: N sections on T tiles, K written.
header=$(sed -n 2p "$WORK/mm.S")
sections=$(sed -nE '1s/^\/\/ ipusim disassembly: ([0-9]+) sections.*/\1/p' "$WORK/mm.S")
shown=$(sed -nE 's/.*: ([0-9]+) shown for [0-9]+ tiles$/\1/p' <<<"$header")
tiles=$(sed -nE 's/.* shown for ([0-9]+) tiles$/\1/p' <<<"$header")
check "the header counts what is shown ($header)" test -n "$shown" -a -n "$tiles"
check "a .section line for each section shown" test "$(grep -c '^\.section ' "$WORK/mm.S")" -eq "${shown:-0}"
check "many fewer shown ($shown) than there are ($sections)" test "$(( ${shown:-0} * 10 ))" -lt "${sections:-0}"
check "every tile has code" test "${tiles:-0}" -gt 600
# The kernel library once, under the list of every tile with code.
check ".text once" test "$(grep -c '^\.section \.text, "ax"' "$WORK/mm.S")" -eq 1
list=$(awk '/^\.tile /{t=$0} /^\.section \.text, "ax"/{print t}' "$WORK/mm.S")
check ".text under .tile 0-$((tiles - 1)) ($list)" test "$list" = ".tile 0-$((tiles - 1))"
check "one .entry for all" test "$(grep -c '^\.entry ' "$WORK/mm.S")" -eq 1
check "each tile's own data under its tile" test "$(grep -cE '^\.tile [0-9]+$' "$WORK/mm.S")" -gt 100
# Small: at most 1500 bytes of text for each section shown (the kernel
# code is most of it), where a copy a tile made 300 MB.
size=$(stat -c %s "$WORK/mm.S")
check "text of $size bytes for $shown sections shown" test "$size" -lt "$(( ${shown:-0} * 1500 ))"
check "instructions of the kernels once ($(grep -c '// 0x' "$WORK/mm.S"))" \
    test "$(grep -c '// 0x' "$WORK/mm.S")" -lt 10000

# Back: assembles, and disassembles to the same text.
check "assembled" timeout 120 "$IPUSIM" asm "$WORK/mm.S" -o "$WORK/mm2.elf"
check "disassembled again" "$IPUSIM" disasm "$WORK/mm2.elf" -o "$WORK/mm2.S"
grep -v '^// \.ipusim\.' "$WORK/mm.S" > "$WORK/mm_asm.S"
check "the same text again" cmp -s "$WORK/mm_asm.S" "$WORK/mm2.S"
check "no comment on the tensor map in the text of the text" test "$(grep -c '^// \.ipusim\.' "$WORK/mm2.S")" -eq 0

# A list the assembler refuses, with its message.
printf '.tile 0-3, 9-7\nnop\n' > "$WORK/bad.S"
fails 1 "$WORK/bad.S:1:12: error: tile range 9-7 is reversed: the first tile must not be above the last" -- \
    "$IPUSIM" asm "$WORK/bad.S" -o "$OUT/bad.elf"
printf '.tile 0-3\n.data\n.word 1\n.tile 2\n.data\n' > "$WORK/reopen.S"
fails 1 "$WORK/reopen.S:5:1: error: section .data on tile 2 was opened for tiles 0-3 (at $WORK/reopen.S:2), not for tile 2: reopen it under the same '.tile' list" -- \
    "$IPUSIM" asm "$WORK/reopen.S" -o "$OUT/reopen.elf"

finish
