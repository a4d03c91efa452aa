#!/usr/bin/env bash
# demo.sh — the flagship: the same compiled step run on an IPU-M2000 and a
# Bow-2000 (4 x GC200 at 1.325 GHz against 4 x Bow at 1.85 GHz), side by
# side, then the AMP codelet it is built on checked against OpenBLAS.
#
#   bash workloads/demo.sh            (after bash tests/setup.sh)
# Output files: out/board_step.elf, out/board_step.json, out/board_step.svg
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
ipusim="$BUILD_DIR/ipusim"
mkdir -p out

echo "== assembling workloads/demo/board_step.S: 4 chips x 1472 tiles, AMP matmul + IPU-Link + host =="
"$ipusim" asm workloads/demo/board_step.S -o out/board_step.elf
echo
# Each tile multiplies 96 rows: a step is 96 x 4 x 1472 rows.
"$ipusim" compare out/board_step.elf --machines m2000,bow2000 --items $((96 * 4 * 1472)) --item-name rows \
    --json out/board_step.json --chart out/board_step.svg
echo
echo "  (chart: out/board_step.svg, figures with units: out/board_step.json)"
echo
echo "== the AMP codelet against its bit-exact model and cblas_sgemm =="
"$BUILD_DIR/tests/test_matmul_kernel" | grep -E "vs cblas|vs bit-exact|cycles|Test:" | sed 's/^/  /'
