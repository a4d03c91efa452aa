#!/usr/bin/env bash
# The compiled one-tile `matmul:Nx16x16:f16 --partials half --tiles 1` on
# bow (one tile's 1x1 convolution partial: N output rows of 16 channels, 16
# input channels) against PopLibs' own cycle estimate for the vertex that
# Poplar would run, at N from 16 to 2048: within 10 %.
#
# The estimate (lib/poplin/PerformanceEstimation.hpp, for half activations
# and half partials on 16 conv units, one conv group, one input group of
# 16 channels, one output group of 16):
#   getConvPartial1x1SupervisorInnerLoopCycleEstimateHalfFloat, with
#   zeroing: a worker with e output rows takes 37 + 4 (e - 3) worker
#   cycles for e >= 3, 41 for e = 2, 32 for e = 1, less the 7 cycles
#   state retention saves (conv1x1WorkerRetentionSavings); the tile waits
#   6 x the slowest worker, and at least 6 x the quickest + 14;
#   getConvPartial1x1SupervisorOuterLoopCycleEstimateHalfFloat adds 50
#   (supervisor) + 6 x 7 (retention) + 12 + 1 (conv group) + 10 + 1 (the
#   input group) + 19 - 1 (output group) + 7 + 32 (one pass: 16 units x
#   32 bytes of weights loaded at 16 bytes a cycle, ld128putcs) = 173.
# The rows are shared among the six workers as the codelet shares them
# (the first N % 6 take one more), as createConvPartial1x1OutVertex splits
# the field.  What ipusim counts is the op's compute on the tile (`run
# --ops`): the control program's call of sv_matmul_f16_wl and its return.
source "$(dirname "$0")/lib.sh"

estimate() {
    awk -v n="$1" 'BEGIN {
        q = int(n / 6); r = n % 6; most = 0; least = -1
        for (w = 0; w < 6; w++) {
            e = q + (w < r)
            c = e >= 3 ? 37 + 4 * (e - 3) : e == 2 ? 41 : e == 1 ? 32 : 21
            if (e > 0) c -= 7
            c *= 6
            if (c > most) most = c
            if (least < 0 || c < least) least = c
        }
        if (least + 14 > most) most = least + 14
        print 173 + most
    }'
}

sizes="$(seq 16 96) $(seq 112 16 2048)"
worst=0 worst_n=0 n_sizes=0 table=""
for n in $sizes; do
    "$IPUSIM" compile "matmul:${n}x16x16:f16" --partials half --tiles 1 --machine bow -o "$WORK/mm.elf" \
        > /dev/null 2>&1 || { echo "FAIL: matmul:${n}x16x16:f16 does not compile"; FAILED=$((FAILED + 1)); continue; }
    got=$("$IPUSIM" run "$WORK/mm.elf" --ops 0 2>/dev/null | awk '$1 == "matmul" && $2 == "MatMul" { print $5; exit }')
    want=$(estimate "$n")
    if [ -z "$got" ]; then
        echo "FAIL: N = $n: no matmul op in run --ops"; FAILED=$((FAILED + 1)); continue
    fi
    off=$(awk -v g="$got" -v w="$want" 'BEGIN { printf "%.1f", 100 * (g - w) / w }')
    n_sizes=$((n_sizes + 1))
    case $n in 16|17|32|64|100|256|1024|2048) table="$table  N $n: $got cycles, PopLibs $want ($off %)\n" ;; esac
    if awk -v o="$off" 'BEGIN { exit !(o > 10 || o < -10) }'; then
        echo "FAIL: N = $n: $got cycles, PopLibs' estimate $want ($off %)"; FAILED=$((FAILED + 1))
    fi
    if awk -v o="$off" -v w="$worst" 'BEGIN { o = o < 0 ? -o : o; w = w < 0 ? -w : w; exit !(o > w) }'; then
        worst=$off worst_n=$n
    fi
done
printf "%b" "$table"
echo "  $n_sizes sizes; farthest from the estimate: N $worst_n, $worst %"
check "every size within 10 % of PopLibs' estimate" test "$n_sizes" -gt 150
# The cycles are the op's own: for N = 16 the estimate's worked value.
check "N = 16: the estimate is 377 cycles" test "$(estimate 16)" = 377
check "N = 2048: the estimate is 8489 cycles" test "$(estimate 2048)" = 8489
finish
