#!/usr/bin/env bash
# The example program in README.md works as the README says.
source "$(dirname "$0")/lib.sh"
README="$(dirname "$0")/../../README.md"
awk '/^```asm/{on=1; next} /^```/{if(on) exit} on' "$README" > "$WORK/double.S"
check "README has an assembly example" test -s "$WORK/double.S"
expect 0 "" -- "$IPUSIM" asm "$WORK/double.S"
check "asm wrote double.elf beside the source" test -s "$WORK/double.elf"
expect 0 "2 4 6 8 10 12 14 16" -- "$IPUSIM" run "$WORK/double.elf" --dump data:12:f32
expect 0 "18 20 22 24" -- "$IPUSIM" run "$WORK/double.elf" --dump data:12:f32
finish
