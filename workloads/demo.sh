#!/usr/bin/env bash
# demo.sh — the flagship: a BERT-Base encoder layer compiled once and run on
# an IPU-M2000 and a Bow-2000 (4 x GC200 at 1.325 GHz against 4 x Bow at
# 1.85 GHz, one data-parallel replica a chip), side by side; the whole
# ResNet-50 on one chip of each; then compiled programs checked against
# host references: the same layer, a ResNet-50 convolution and a
# BERT-Large-sized matmul.
#
#   bash workloads/demo.sh            (after bash tests/setup.sh)
# Output files: out/bert_base_layer.{elf,json,svg}, out/resnet50.{elf,json,svg}.
# SEQ=128 bash workloads/demo.sh for BERT's usual sequence length (about
# twice the simulation time).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
SEQ=${SEQ:-64}
ipusim="$BUILD_DIR/ipusim"
mkdir -p out

echo "== compiling one BERT-Base encoder layer ($SEQ tokens) for an IPU-M2000: a replica on each of its 4 chips =="
"$ipusim" compile "bert-base:s$SEQ" --f16-matmul --machine m2000 -o out/bert_base_layer.elf
echo
echo "== the same executable on an IPU-M2000 and a Bow-2000 (4 sequences a step, one a chip) =="
"$ipusim" compare out/bert_base_layer.elf --machines m2000,bow2000 --items 4 --item-name sequences \
    --json out/bert_base_layer.json --chart out/bert_base_layer.svg
echo
echo "  (chart: out/bert_base_layer.svg, figures with units: out/bert_base_layer.json)"
echo
echo "== the whole ResNet-50 (224 x 224 images, f16 matmuls) compiled for one chip, on both machines =="
"$ipusim" compile resnet50 --f16-matmul --machine m2000 --replicas 1 -o out/resnet50.elf
"$ipusim" compare out/resnet50.elf --machines m2000,bow2000 --items 1 --item-name images \
    --json out/resnet50.json --chart out/resnet50.svg
echo
echo "  (chart: out/resnet50.svg, figures with units: out/resnet50.json)"
echo
echo "== compiled, simulated on a GC200 and held against host references =="
for model in "bert-base:s$SEQ --f16-matmul" resnet50:res2_3x3 matmul:384x1024x4096; do
    echo "-- ipusim validate --model $model"
    # shellcheck disable=SC2086
    "$ipusim" validate --model $model | sed 's/^/   /'
done
