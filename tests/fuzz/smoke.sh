#!/usr/bin/env bash
# smoke.sh — a short run of every libFuzzer harness, for CI where clang is
# present: each target replays its seeds and the saved regressions, then
# fuzzes for SECONDS (default 10) or 200,000 inputs, whichever comes first,
# on one core, from a fixed seed (FUZZ_SEED, default 1) so that a CI run is
# the same run every time.  The corpora it grows are thrown away.
#
#   bash tests/fuzz/smoke.sh [SECONDS]
#
# Builds the harnesses in $BUILD_DIR (default build-fuzz) as run.sh does.
# Exits 0 when no target found anything, 1 when one did (its log and input
# are named), 2 when clang or the build is missing.  About 15 s a target
# (14 targets) once built; the first build takes some minutes more.
set -uo pipefail
cd "$(dirname "$0")/../.."

SECONDS_EACH=${1:-10}
FUZZ_SEED=${FUZZ_SEED:-1}
BUILD_DIR=${BUILD_DIR:-build-fuzz}
TARGETS=(asm elf tile code onnx debugger config set tmap input chip lower script cli)
command -v clang >/dev/null || { echo "smoke.sh: needs clang (apt-get install clang libclang-rt-14-dev libfuzzer-14-dev)" >&2; exit 2; }

mkdir -p "$BUILD_DIR"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
{ cmake -S tests/fuzz -B "$BUILD_DIR" -DCMAKE_C_COMPILER=clang &&
  cmake --build "$BUILD_DIR" -j2 --target "${TARGETS[@]/#/fuzz_}"; } >"$BUILD_DIR/build.log" 2>&1 || {
    tail -20 "$BUILD_DIR/build.log" >&2; echo "smoke.sh: build failed (log: $BUILD_DIR/build.log)" >&2; exit 2; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
begin=$SECONDS
for t in "${TARGETS[@]}"; do
    seeds=("tests/fuzz/corpus/$t")
    [ -d "tests/fuzz/regressions/$t" ] && seeds+=("tests/fuzz/regressions/$t")
    mkdir -p "$scratch/$t"
    leaks=1
    [ "$t" = cli ] && leaks=0
    log="$BUILD_DIR/smoke_$t.log"
    start=$SECONDS
    ASAN_OPTIONS=detect_leaks=$leaks "$BUILD_DIR/fuzz_$t" -seed="$FUZZ_SEED" -max_total_time="$SECONDS_EACH" -runs=200000 -timeout=10 \
        -rss_limit_mb=2048 -artifact_prefix="$scratch/crash-$t-" "$scratch/$t" "${seeds[@]}" >"$log" 2>&1
    rc=$?
    runs=$(grep -oE '^Done [0-9]+ runs' "$log" | tr -dc 0-9)
    if [ $rc -ne 0 ]; then
        status=1
        cp "$scratch"/crash-"$t"-* "$BUILD_DIR/" 2>/dev/null
        printf '%-8s FAILED after %ss (exit %s): log %s, input in %s\n' "$t" $((SECONDS - start)) $rc "$log" "$BUILD_DIR"
    else
        printf '%-8s ok  %3ss %8s inputs\n' "$t" $((SECONDS - start)) "${runs:-?}"
    fi
done
echo "smoke: $((SECONDS - begin)) s"
exit $status
