#!/usr/bin/env bash
# File sizes, signals and host resources (tests/BAD_INPUTS.md): host thread
# counts from the environment, files read whole within a limit per kind of
# file, and output temporaries removed when a signal ends the run.
source "$(dirname "$0")/lib.sh"

IPUSIM=$(realpath "$IPUSIM")
OUT="$WORK/out"      # every output a failing command is asked for goes here
mkdir -p "$OUT"
cd "$WORK" || exit 1

# fails STATUS MESSAGE -- COMMAND...: exit status STATUS; the first line of
# stdout+stderr is exactly MESSAGE; no panic; $OUT is still empty.
fails() {
    local status=$1 message=$2
    shift 3
    local out rc first left
    out=$("$@" 2>&1)
    rc=$?
    first=$(head -n 1 <<<"$out")
    left=$(ls -A "$OUT")
    if [ "$rc" -ne "$status" ] || [ "$first" != "$message" ] || grep -q "panic" <<<"$out" || [ -n "$left" ]; then
        echo "FAIL: $*"
        echo "  exit $rc (expected $status)"
        echo "  got:      $first"
        echo "  expected: $message"
        [ -z "$left" ] || echo "  left in $OUT: $left"
        FAILED=$((FAILED + 1))
        rm -rf "${OUT:?}"/* "$OUT"/.[!.]* 2>/dev/null
        return
    fi
    PASSED=$((PASSED + 1))
}

strip_host() { grep -Ev 'host_seconds|per_host_second|host_threads|tile_batches' "$1"; }

# ------------------------------------------------------------ host threads
# OMP_NUM_THREADS is capped like --threads (1..1024); the results do not
# depend on the thread count.
expect 0 "" -- "$IPUSIM" compile matmul:64x64x64 -o mm.elf
expect 0 "\(1024 host threads, " -- env OMP_NUM_THREADS=100000 "$IPUSIM" run mm.elf --json t_many.json
expect 0 "\(1 host thread, " -- "$IPUSIM" run mm.elf --threads 1 --json t_one.json
check "OMP_NUM_THREADS=100000 and --threads 1 give the same report" \
    diff -q <(strip_host t_many.json) <(strip_host t_one.json)
printf 'run\nquit\n' > run.gdb
expect 0 "The program ended: [0-9]+ cycles" -- env OMP_NUM_THREADS=100000 "$IPUSIM" debug mm.elf -x run.gdb --batch

finish
