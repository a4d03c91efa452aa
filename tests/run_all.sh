#!/usr/bin/env bash
# run_all.sh — the whole test suite: set up, build, run every test with
# ctest; then the same suite again built with AddressSanitizer and
# UndefinedBehaviorSanitizer; then a short run of every fuzz harness
# (clang's libFuzzer: tests/fuzz/smoke.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/setup.sh
echo "== tests (RelWithDebInfo) =="
ctest --test-dir build --output-on-failure -j"$(nproc)"

echo "== tests (AddressSanitizer + UndefinedBehaviorSanitizer) =="
BUILD_DIR=build-sanitize CMAKE_ARGS="-DIPUSIM_SANITIZE=ON" bash tests/setup.sh
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)"

echo "== fuzz smoke (libFuzzer, every harness from its seeds and saved regressions) =="
fuzz_packages=(clang libclang-rt-14-dev libfuzzer-14-dev)
missing=()
for p in "${fuzz_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
bash tests/fuzz/smoke.sh "${FUZZ_SMOKE_SECONDS:-5}"
