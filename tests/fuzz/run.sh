#!/usr/bin/env bash
# run.sh — build the libFuzzer harnesses and run each for a set time.
#
#   bash tests/fuzz/run.sh SECONDS [TARGET...]
#
# Targets (default: all): asm elf tile code onnx debugger config set tmap
# input chip lower script cli (fuzz_targets.h says what each feeds).
#
# Environment:
#   BUILD_DIR   where to build and keep the growing corpora (default build-fuzz)
#   JOBS        harnesses run at once (default 1); each runs under `nice`
#   SKIP_BUILD=1
#               use the harnesses already in BUILD_DIR (built elsewhere and
#               carried to a machine without clang)
#   IPUSIM_FUZZ_SKIP_KNOWN=1
#               step around bugs already saved in tests/fuzz/regressions/ and
#               not yet fixed (fuzz_targets.h lists them), so that a campaign
#               finds new ones; without it a saved input that still crashes
#               stops its target at once
#
# Each target starts from its seed corpus (tests/fuzz/corpus/<target>, plus
# the saved regressions) and grows a working corpus in
# $BUILD_DIR/corpus/<target>, kept between runs.  Crashes, leaks, timeouts
# (one input running over 10 s: a hang) and out-of-memory inputs are
# written to $BUILD_DIR/artifacts/<target>/; replay one with
#   $BUILD_DIR/fuzz_<target> FILE
# and, once fixed, keep it in tests/fuzz/regressions/<target>/ so ctest
# replays it (tests/test_fuzz_regressions.c).
#
# Prints per target: the seconds it really ran (less than SECONDS when it
# stopped at a finding), executions, executions per second, coverage (cov
# and ft of libFuzzer's last status line), corpus size, and the inputs that
# crashed; exits non-zero if any did.
set -uo pipefail
cd "$(dirname "$0")/../.."

ALL_TARGETS=(asm elf tile code onnx debugger config set tmap input chip lower script cli)
SECONDS_EACH=${1:?usage: $0 SECONDS [TARGET...] (targets: ${ALL_TARGETS[*]})}
shift
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=("${ALL_TARGETS[@]}")
BUILD_DIR=${BUILD_DIR:-build-fuzz}
JOBS=${JOBS:-1}

for t in "${TARGETS[@]}"; do
    [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || { echo "run.sh: unknown target '$t' (${ALL_TARGETS[*]})" >&2; exit 2; }
done
[ "${SKIP_BUILD:-0}" = 1 ] || command -v clang >/dev/null ||
    { echo "run.sh: needs clang (apt-get install clang libclang-rt-14-dev libfuzzer-14-dev)" >&2; exit 2; }

mkdir -p "$BUILD_DIR"
# Absolute: the cli target runs its commands in a scratch folder of its own.
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    { cmake -S tests/fuzz -B "$BUILD_DIR" -DCMAKE_C_COMPILER=clang &&
      nice cmake --build "$BUILD_DIR" -j2 --target "${TARGETS[@]/#/fuzz_}"; } >"$BUILD_DIR/build.log" 2>&1 || {
        tail -20 "$BUILD_DIR/build.log" >&2; echo "run.sh: build failed (log: $BUILD_DIR/build.log)" >&2; exit 2; }
fi

# The assembler's dictionary: mnemonics from the instruction table, the
# directives and register names, so mutations produce statements.
dict="$BUILD_DIR/asm.dict"
{
    sed -n 's/^ISA_INSN([A-Z0-9_]*, *"\([^"]*\)".*/"\1 "/p' isa/isa.def | sort -u
    for w in .text .data .bss .section .tile .org .align .p2align .word .half .byte .float .f16 \
             .ascii .asciz .space .zero .equ .set .globl .type .size .entry .macro .endm .exitm \
             .rept .endr .if .ifdef .else .endif .error .worker .supervisor '"ax"' '"aw"' @nobits \
             @function '$m0' '$m1' '$m15' '$mzero' '$a0' '$a0:1' '$a0:3' '$azero' '$azeros' '$m0:1+=' \
             '$m2+=' '$WSR' '$FP_CTL' '$VERTEX_BASE' '1f' '1b' '0x80000' '0x4c000' '{' '}' '; ' ':' '__supervisor'; do
        printf '"%s"\n' "${w//\"/\\\"}"
    done
} > "$dict"

# The debugger's dictionary: its commands, keywords, registers and the
# fuzz program's symbols.
ddict="$BUILD_DIR/debugger.dict"
for w in run continue stepi next-superstep break watch delete info tile context print x/ disassemble where \
         stats source help quit superstep cycle all breakpoints tiles registers supersteps exchange sup w1 w6 \
         '$m0' '$a0' '$pc' '$FP_CTL' worker loop counts sbuf rbuf __supervisor 0x4c000 0x80000 '0:' '1:' \
         '[0:2]' '/4x' '/2h' '/8b' '/3f'; do
    printf '"%s"\n' "$w"
done > "$ddict"

# Machine parameter names and JSON's tokens, for config and set.
mdict="$BUILD_DIR/machine.dict"
{
    sed -n 's/^MACHINE_PARAM(\([a-z0-9_]*\),.*/"\1"/p' sim/program/machine.def
    for w in '{' '}' '[' ']' ':' ',' '"preset"' '"params"' '"gc2"' '"gc200"' '"bow"' '"m2000"' '=' '1e9' '-1' '0x10' \
             'true' 'null' 'nan' 'inf' '1e400' '4294967296'; do
        printf '"%s"\n' "${w//\"/\\\"}"
    done
} > "$mdict"

# The command line's dictionary: commands, options and the scratch files.
cdict="$BUILD_DIR/cli.dict"
for w in run debug compare compile asm disasm machines --machine --set --config --max-cycles --threads --dump \
         --input --output --supersteps --json --trace --trace-tiles --batch -x -o -I --show --tiles --replicas \
         --pipeline --f16-matmul --no-fuse --verbose --machines --items --item-name --chart prog.elf cfg.json \
         in.bin cmds.dbg small.S matmul:4x4x4 gc2 gc200 bow sbuf@1:4:f32 0=in.bin tile_clock_hz=1e9; do
    printf '"%s\\x0a"\n' "$w"
done > "$cdict"

run_one() {
    local t=$1 log="$BUILD_DIR/fuzz_$t.log"
    local work="$BUILD_DIR/corpus/$t" art="$BUILD_DIR/artifacts/$t/"
    mkdir -p "$work" "$art"
    local seeds=("tests/fuzz/corpus/$t")
    [ "$t" = tile ] && seeds+=(tests/fuzz/corpus/elf)
    [ "$t" = chip ] && seeds+=(tests/fuzz/corpus/elf)
    [ -d "tests/fuzz/regressions/$t" ] && seeds+=("tests/fuzz/regressions/$t")
    local extra=()
    [ "$t" = asm ] && extra+=(-dict="$dict")
    [ "$t" = debugger ] || [ "$t" = script ] && extra+=(-dict="$ddict")
    [ "$t" = config ] || [ "$t" = set ] && extra+=(-dict="$mdict")
    [ "$t" = cli ] && extra+=(-dict="$cdict")
    # The cli target leaves commands by longjmp, which frees nothing.
    # and its memory grows about 1 MB every thousand inputs.
    local leaks=1 rss=2048
    [ "$t" = cli ] && leaks=0 rss=4096
    local start=$SECONDS
    ASAN_OPTIONS=detect_leaks=$leaks UBSAN_OPTIONS=print_stacktrace=1 \
        nice "$BUILD_DIR/fuzz_$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=$rss \
        -print_final_stats=1 -artifact_prefix="$art" "${extra[@]}" "$work" "${seeds[@]}" >"$log" 2>&1
    echo $? > "$log.rc"
    echo $((SECONDS - start)) > "$log.time"
}

for t in "${TARGETS[@]}"; do
    run_one "$t" &
    while (($(jobs -rp | wc -l) >= JOBS)); do wait -n; done
done
wait

status=0
printf '%-8s %8s %12s %10s %7s %7s %8s  %s\n' target seconds executions exec/s cov ft corpus crashes
for t in "${TARGETS[@]}"; do
    log="$BUILD_DIR/fuzz_$t.log"
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -oE ' cov: [0-9]+' "$log" | tail -1 | tr -dc 0-9)
    ft=$(grep -oE ' ft: [0-9]+' "$log" | tail -1 | tr -dc 0-9)
    took=$(cat "$log.time")
    corpus=$(find "$BUILD_DIR/corpus/$t" -type f | wc -l)
    rc=$(cat "$log.rc")
    found=$(grep -oE "(crash|leak|timeout|oom)-[0-9a-f]+" "$log" | sort -u | tr '\n' ' ')
    if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
        status=1
        [ -n "$found" ] || found="exit $rc (see $log)"
    else
        found=none
    fi
    printf '%-8s %8s %12s %10s %7s %7s %8s  %s\n' "$t" "$took" "${runs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" \
        "$corpus" "$found"
done
((status)) && echo "inputs in $BUILD_DIR/artifacts/<target>/; logs in $BUILD_DIR/fuzz_<target>.log"
exit $status
