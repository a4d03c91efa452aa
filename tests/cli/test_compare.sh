#!/usr/bin/env bash
# `ipusim compare` on a small board program: same cycles of compute on both
# machines, time scaled by the clock; off-chip time unchanged.
source "$(dirname "$0")/lib.sh"
DEMO="$(cd "$(dirname "$0")/../../workloads/demo" && pwd)"
printf '    .equ DEMO_TILES, 8\n    .include "%s/board_step.S"\n' "$DEMO" > "$WORK/small.S"
expect 0 "" -- "$IPUSIM" asm "$WORK/small.S" -o "$WORK/small.elf"
expect 0 "tile clock \(GHz\) +1.325 +1.85 +1.396" -- "$IPUSIM" compare "$WORK/small.elf" \
    --items 3072 --item-name rows --json "$WORK/c.json" --chart "$WORK/c.svg"
out=$("$IPUSIM" compare "$WORK/small.elf" 2>&1)
check "compute scales with the clock (ratio 1/1.396 = 0.716)" grep -Eq "^ +compute .* 0\.71[0-9]$" <<<"$out"
check "IPU-Link time does not scale" grep -Eq "^ +IPU-Links .* 1\.000$" <<<"$out"
check "host time does not scale" grep -Eq "^ +host link .* 1\.000$" <<<"$out"
check "same instructions on both" grep -Eq "^ +instructions .* 1\.000$" <<<"$out"
check "json written" grep -q '"speedup_b_over_a"' "$WORK/c.json"
# the ratio from the two runs: the share of m2000's time that scales with the clock and the
# seconds that do not (the program's IPU-Link and host transfers), and what they make of 1.396
check "the ratio explained" grep -Eq "^  Of m2000's time, [0-9.]+% is tile cycles, which scale with the clock, and [0-9.]+% \([0-9.]+ [nu]s\)" <<<"$out"
share=$(grep -Eo "1 / \([0-9.]+ / 1\.396 \+ [0-9.]+\) = [0-9.]+x" <<<"$out")
ratio=$(grep -Eo "is [0-9.]+x as fast" <<<"$out" | grep -Eo "[0-9.]+")
check "the explained ratio is the measured one" grep -q "= ${ratio}x" <<<"$share"
check "json explains the ratio" grep -q '"a_clock_scaled_share"' "$WORK/c.json"
check "json has throughput" grep -q '"rows_per_second"' "$WORK/c.json"
check "chart written" grep -q "<svg" "$WORK/c.svg"
expect 0 "gc200 \(modified\) vs bow \(modified\)" -- "$IPUSIM" compare "$WORK/small.elf" --machines gc200,bow --set chips=4
expect 1 "unknown machine 'm3000'" -- "$IPUSIM" compare "$WORK/small.elf" --machines m3000,bow2000
expect 2 "--machines expects two machine names" -- "$IPUSIM" compare "$WORK/small.elf" --machines m2000
expect 1 "tile 2944 is beyond|beyond" -- "$IPUSIM" compare "$WORK/small.elf" --machines gc200,bow
finish
