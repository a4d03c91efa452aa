#!/usr/bin/env bash
# demo.sh — the flagship: a ResNet-50 training step on an IPU-M2000 and a
# Bow-2000 (4 x GC200 at 1.325 GHz against 4 x Bow at 1.85 GHz), one
# data-parallel replica a chip, the gradients all-reduced over the
# IPU-Links, side by side with MLPerf's view (global batch, samples/s,
# time to train) and why the ratio is what it is; then a BERT-Base
# pre-training step as a two-stage pipeline with overlapped micro-batches
# on both; then compiled programs checked against host references: a
# BERT-Base encoder layer, a ResNet-50 convolution and a BERT-Large-sized
# matmul.
#
#   bash workloads/demo.sh            (after bash tests/setup.sh)
# Output files: out/resnet50_train.{json,svg}, out/bert_train.{json,svg}.
# SEQ=128 bash workloads/demo.sh for BERT's usual sequence length in the
# checks (about twice their simulation time); MACHINES=ipu-pod16,bow-pod16 for the training
# step on IPU-POD16 and Bow Pod16 (16 replicas: about four times as long).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
SEQ=${SEQ:-64}
MACHINES=${MACHINES:-m2000,bow2000}
ipusim="$BUILD_DIR/ipusim"
mkdir -p out

echo "== a ResNet-50 training step on $MACHINES: a replica a chip, one image each, the gradients =="
echo "== all-reduced over the IPU-Links; shown at MLPerf's global batch 1632 (gradient accumulation) =="
echo "   (the whole network on 32 x 32 images instead of 224 x 224, for the simulation's time)"
"$ipusim" compare resnet50:b1:s32 --train --machines "$MACHINES" --global-batch 1632 \
    --json out/resnet50_train.json --chart out/resnet50_train.svg
echo
echo "  (chart: out/resnet50_train.svg, figures with units: out/resnet50_train.json)"
echo
echo "== a BERT-Base pre-training step as a pipeline on an IPU-M2000 and a Bow-2000: 2 stages on 2 chips, =="
echo "== 2 micro-batches overlapped (stage 1 runs micro-batch 0's forward pass while stage 0 runs =="
echo "== micro-batch 1's), the masked-LM decoder on chip 0 with the word table; MLPerf's global batch 256 =="
echo "   (2 encoder layers of 16 tokens, one sequence a micro-batch, for the simulation's time)"
"$ipusim" compare bert-base:s16:l2:b1 --train --pipeline 2 --accumulate 2 --machines m2000,bow2000 \
    --global-batch 256 --json out/bert_train.json --chart out/bert_train.svg
echo
echo "  (chart: out/bert_train.svg, figures with units: out/bert_train.json)"
echo
echo "== compiled, simulated on a GC200 and held against host references =="
for model in "bert-base:s$SEQ --f16-matmul" resnet50:res2_3x3 matmul:384x1024x4096; do
    echo "-- ipusim validate --model $model"
    # shellcheck disable=SC2086
    "$ipusim" validate --model $model | sed 's/^/   /'
done
