#!/usr/bin/env bash
# run_all.sh — the whole test suite: set up, build, run every test with
# ctest; then the same suite again built with AddressSanitizer and
# UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tests/setup.sh
echo "== tests (RelWithDebInfo) =="
ctest --test-dir build --output-on-failure -j"$(nproc)"

echo "== tests (AddressSanitizer + UndefinedBehaviorSanitizer) =="
BUILD_DIR=build-sanitize CMAKE_ARGS="-DIPUSIM_SANITIZE=ON" bash tests/setup.sh
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)"
