#!/usr/bin/env bash
# Training an imported inference model from the command line, as a user
# would: a small MLP and a small CNN written here as ONNX files
# (tests/cli/onnx_proto.py), `ipusim compile --train --loss ...` (the
# training step's report), `ipusim run` and `compare` of the step (cycles by
# phase), `ipusim validate --train --steps 20` (each step's loss, gradients
# and weight changes against the host evaluator, and the loss falling), and
# the options refused before any work is done.
source "$(dirname "$0")/lib.sh"

IPUSIM=$(realpath "$IPUSIM")
OUT="$WORK/out"
mkdir -p "$OUT"
cd "$WORK" || exit 1

python3 "$CLI_DIR/train_models.py" "$WORK"
check "the models were written" test -s mlp.onnx -a -s cnn.onnx

# ---- compile, run, compare -------------------------------------------------------------
expect 0 "training step: loss 'loss' \(softmax-ce:logits:labels\); 4 weights \(874 elements\) updated by sgd, lr 0.1, momentum 0.9; 4 optimizer state variables" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --lr 0.1 --momentum 0.9 -o mlp.elf
check "the training step was written" test -s mlp.elf
expect 0 "^forward +[0-9]+ +[0-9.]+ .*
backward +[0-9]+ .*
update +[0-9]+ " -- "$IPUSIM" run mlp.elf
expect 0 "^samples: 32 a step \(all replicas\), [0-9.e+]+ samples/s$" -- "$IPUSIM" run mlp.elf
# the labels a run makes up are classes of the loss (10)
expect 0 "input 'labels' not given \(--input labels=FILE\): i32, random integers 0\.\.9 \(the values it takes\)" -- \
    "$IPUSIM" run mlp.elf
# each weight's update as soon as its gradient is complete: the updates come in stretches
# between the backward pass's; --delay-updates puts them all after it, in one
expect 0 "^update( +[0-9.]+){7} +[2-9][0-9]*$" -- "$IPUSIM" run mlp.elf
"$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --lr 0.1 --momentum 0.9 --delay-updates \
    -o mlp_delayed.elf >/dev/null 2>&1
expect 0 "^backward( +[0-9.]+){7} +1$" -- "$IPUSIM" run mlp_delayed.elf
expect 0 "^update( +[0-9.]+){7} +1$" -- "$IPUSIM" run mlp_delayed.elf
expect 0 "training step, by phase" -- "$IPUSIM" compare mlp.elf --items 32 --item-name samples
# compare of a model: compiled once (the machines are alike), the step at a global batch of 4
# micro-steps of 32 samples, the time to train for --samples (100 steps)
out=$("$IPUSIM" compare mlp.onnx --train --loss softmax-ce:logits:labels --lr 0.1 --machines gc200,bow \
      --global-batch 128 --samples 12800 --json cmp.json 2>/dev/null)
check "compare MODEL compiles once" grep -q "^(the same program on both" <<<"$out"
check "compare MODEL: the step at the global batch" \
    grep -Eq "training step at global batch 128 \(32 samples a step simulated, its forward and backward phases 4 times" <<<"$out"
check "compare MODEL: samples/s per IPU" grep -Eq "^ +samples/s per IPU +[0-9.]+ +[0-9.]+ +1\.[0-9]+$" <<<"$out"
check "compare MODEL: time to train" grep -Eq "^ +time to train +[0-9.]+ (s|min|h) .*0\.[0-9]+$" <<<"$out"
check "compare MODEL: 100 steps" grep -q "(100 steps of 128 samples: 1.28e+04 samples, --samples" <<<"$out"
check "compare MODEL: the json has the step" grep -q '"time_to_train_seconds"' cmp.json
expect 2 "compile and --train options are for a MODEL; 'mlp.elf' is an executable" -- \
    "$IPUSIM" compare mlp.elf --train
expect 1 "--global-batch 100 is not a multiple of the 128 samples a step simulated" -- \
    "$IPUSIM" compare mlp.onnx --train --loss softmax-ce:logits:labels --global-batch 100
expect 1 "--epochs needs --dataset-samples N" -- \
    "$IPUSIM" compare mlp.onnx --train --loss softmax-ce:logits:labels --epochs 3
expect 2 "--epochs and --samples both say how much to train" -- \
    "$IPUSIM" compare mlp.onnx --train --loss softmax-ce:logits:labels --epochs 3 --samples 5
expect 0 "variables: 8 updated in place by the optimizer's last op, 0 copied in at the end of the step" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --lr 0.1 --momentum 0.9 -o mlp.elf
# where the step's time goes, op by op: the longest op is a matmul (the backward pass's), every
# cycle of the chip is some op's (or none's), and an assembled program names no ops
expect 0 "^ops on chip 0, the 5 that took longest of 42 " -- "$IPUSIM" run mlp.elf --ops 5
expect 0 "^by type: MatMul [0-9.]+% \(5\)," -- "$IPUSIM" run mlp.elf --ops 5
"$IPUSIM" run mlp.elf --json ops.json >/dev/null 2>&1
ops_add_up() {
    python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ops = r["ops"]
named = [o for o in ops if o["op"] is not None]
assert named and named[0]["type"] == "MatMul", named[:1]
assert sum(o["cycles"] for o in ops) == r["chips"][0]["cycles"], (sum(o["cycles"] for o in ops), r["chips"][0]["cycles"])
assert all(o["cycles"] == o["compute_cycles"] + o["exchange_cycles"] + o["sync_cycles"] for o in ops)
PY
}
check "run --json: the ops' cycles add up to the chip's, the longest a MatMul" ops_add_up ops.json
printf '    .section .text.t, "ax"\n    .tile 0\n    .globl main\nmain:\n    exitz $mzero\n' > asm_ops.S
"$IPUSIM" asm asm_ops.S -o asm_ops.elf >/dev/null 2>&1
expect 0 "^ops: the executable names none" -- "$IPUSIM" run asm_ops.elf --ops 5
fails 2 "ipusim run: --ops: expected a count of ops (0: all), got 'x'" -- "$IPUSIM" run mlp.elf --ops x
# a damaged op map is refused before the run, naming the section and its line
python3 - <<'PY'
b = open('mlp.elf', 'rb').read()
at = b.index(b'superstep -1 -1\n')
open('bad_ops.elf', 'wb').write(b[:at] + b'superstep 99 -1\n' + b[at + 16:])
PY
fails_like 1 "^ipusim: bad_ops.elf: section .ipusim.ops: line [0-9]+: superstep: not -1 or one of the 42 ops: '99'$" -- \
    "$IPUSIM" run bad_ops.elf --ops 3

# compare counts a step's samples itself (the batch of x, 32, on each of m2000's 4 replicas)
"$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --lr 0.1 --machine m2000 -o mlp4.elf >/dev/null 2>&1
expect 0 "throughput \(samples/s\) +[0-9.e+]+ +[0-9.e+]+ +[0-9.]+$" -- "$IPUSIM" compare mlp4.elf
# the 4 replicas' gradients summed over the IPU-Links, a phase of its own
expect 0 "^ +all-reduce +[0-9.]+ (ns|us|ms) +[0-9.]+ (ns|us|ms) +[0-9.]+$" -- "$IPUSIM" compare mlp4.elf
expect 0 "^ +IPU-Link bytes +[1-9][0-9.e+]* " -- "$IPUSIM" compare mlp4.elf
"$IPUSIM" compare mlp4.elf --chart mlp4.svg >/dev/null 2>&1
check "the chart has the step by phase" grep -q "<title>all-reduce: " mlp4.svg
expect 0 "^samples: 128 a step \(all replicas\), [0-9.e+]+ samples/s \(the replicas' gradients summed across their chips" \
    -- "$IPUSIM" run mlp4.elf
expect 0 "^all-reduce +[0-9]+ " -- "$IPUSIM" run mlp4.elf
# two replicas of a two-stage pipeline on the board's four chips, each stage's gradients summed
expect 0 "tiles: 1472 a chip, 2 replicas \(one a pipeline of 2 chips\)" -- "$IPUSIM" compile mlp.onnx --train \
    --loss softmax-ce:logits:labels --lr 0.1 --machine m2000 --pipeline 2 --replicas 2 -o mlp22.elf
expect 0 "^all-reduce +[0-9]+ " -- "$IPUSIM" run mlp22.elf
# a pipeline of two stages, four micro-batches overlapped, on two replicas: its cycles shown as the
# pipeline phase, the same schedule one stage at a time slower; the global batch made of more
# micro-batches through the pipeline
expect 0 "4 micro-batches accumulated, a pipeline of 2 stages in 6 cycles" -- "$IPUSIM" compile mlp.onnx --train \
    --loss softmax-ce:logits:labels --machine m2000 --pipeline 2 --replicas 2 --accumulate 4 -o mlp224.elf
expect 0 "^pipeline +[0-9]+ " -- "$IPUSIM" run mlp224.elf
expect 0 "^ops on chips 0-1 \(a pipeline's stages, each chip's cycles given to its own ops\)" -- \
    "$IPUSIM" run mlp224.elf --ops 5
cycles_of() { "$IPUSIM" run "$1" 2>/dev/null | awk '$1 == "0" { print $4 }'; }
control_kb() { sed -n 's/^control programs: \([0-9.]*\) KB a tile.*/\1/p' "$1"; }
"$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --machine m2000 --pipeline 2 --replicas 2 \
    --accumulate 4 --serial-pipeline -o mlp224s.elf >/dev/null
check "the serial pipeline is slower than the overlapped one" \
    awk -v a="$(cycles_of mlp224.elf)" -v b="$(cycles_of mlp224s.elf)" 'BEGIN { exit !(a > 0 && b > a) }'
expect 0 "^backward +[0-9]+ " -- "$IPUSIM" run mlp224s.elf
expect 0 "its pipeline run for 8 micro-batches, 10 cycles as long as the simulated ones" -- \
    "$IPUSIM" compare mlp224.elf --global-batch 512
# IPU-POD128 / Bow Pod128: one POD64 simulated; the gradients' all-reduce across the two POD64s, a
# ring over the GW-Links after each POD64's reduce-scatter, estimated and added; samples for both
"$IPUSIM" compare mlp.onnx --train --loss softmax-ce:logits:labels --machines ipu-pod128,bow-pod128 \
    --json pod128.json > pod128.txt 2>&1
check "pod128: the GW-Links' estimate shown" grep -q "^    GW-Links (estimated) " pod128.txt
check "pod128: a step of both POD64s' samples" grep -q "(4096 samples a step simulated)" pod128.txt
check "pod128: the estimate's arithmetic (3496 gradient bytes a chip, 64 replicas a POD64, a board's 25 GB/s shared by 4)" \
    python3 -c '
import json, sys
a = json.load(open("pod128.json"))["a"]
e = a["estimate"]
want = (2 * 1 / 2 * 3496 / 64) / (2.5e10 / 4) + 2 * 1 * 5e-6
ok = abs(e["gateway_all_reduce_seconds"] - want) < 1e-12 and e["chips_in_all"] == 128 and e["ipu_link_domains"] == 2
t = a["training_step"]
ok = ok and abs(t["samples_per_second_per_ipu"] * 128 - t["samples_per_second"]) < 1e-6 * t["samples_per_second"]
sys.exit(0 if ok else 1)'
fails 1 "ipusim: mlp.onnx: ipu-pod64 has 1 IPU-Link domain and ipu-pod128 2: a training step is compared on systems of as many domains (POD64s)" -- \
    "$IPUSIM" compare mlp.onnx --train --loss softmax-ce:logits:labels --machines ipu-pod64,ipu-pod128
expect 0 "2 such IPU-Link domains joined by the gateways' GW-Links \(25 GB/s a board each way\), 128 chips in all" -- \
    "$IPUSIM" machines --show ipu-pod128
# recomputation: the stages' forward ops made again in their backward passes, the step held
# against the host reference, and a little longer than without
expect 0 "a pipeline of 2 stages in 6 cycles \(the stages' forward passes recomputed in their backward passes\)" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --machine m2000 --pipeline 2 --replicas 2 \
    --accumulate 4 --recompute -o mlp224r.elf
check "recomputation makes the step longer" \
    awk -v a="$(cycles_of mlp224.elf)" -v b="$(cycles_of mlp224r.elf)" 'BEGIN { exit !(a > 0 && b > a) }'
"$IPUSIM" validate --model mlp.onnx --train --loss softmax-ce:logits:labels --machine m2000 --pipeline 2 \
    --accumulate 4 --recompute --steps 2 > mlp_recompute.txt 2>&1
check "mlp, pipeline with recomputation: 2 steps within tolerance" \
    grep -q "^PASS: 2 steps of mlp.onnx within tolerance" mlp_recompute.txt
# shared programs (an overlapped pipeline's default): the later micro-batches' sections call the
# first's steps, on both replicas; the step held against the host reference; --no-share-programs
# gives each micro-batch's sections steps of their own, the same values
"$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --machine m2000 --pipeline 2 --replicas 2 \
    --accumulate 4 --recompute -o mlp224rs.elf > mlp224rs.txt 2>&1
check "shared programs by default: 12 sections share" \
    grep -Eq "^shared programs: 12 sections ran an earlier alike section's control program on [0-9]+ of their tiles" mlp224rs.txt
expect 0 "^all-reduce +[0-9]+ " -- "$IPUSIM" run mlp224rs.elf --output loss=loss_shared.bin
"$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --machine m2000 --pipeline 2 --replicas 2 \
    --accumulate 4 --recompute --no-share-programs -o mlp224ru.elf > mlp224ru.txt 2>&1
check "--no-share-programs: no section shares" bash -c '! grep -q "^shared programs" mlp224ru.txt && grep -q "a pipeline of 2 stages" mlp224ru.txt'
"$IPUSIM" run mlp224ru.elf --output loss=loss_own.bin > /dev/null 2>&1
check "shared and own programs: the same loss, bit for bit" cmp -s loss_shared.bin loss_own.bin
check "own programs: more control program a tile" \
    awk -v a="$(control_kb mlp224rs.txt)" -v b="$(control_kb mlp224ru.txt)" 'BEGIN { exit !(a > 0 && b > a) }'
"$IPUSIM" validate --model mlp.onnx --train --loss softmax-ce:logits:labels --machine m2000 --pipeline 2 \
    --accumulate 4 --recompute --share-programs --steps 2 > mlp_shared.txt 2>&1
check "mlp, pipeline with shared programs: 2 steps within tolerance" \
    grep -q "^PASS: 2 steps of mlp.onnx within tolerance" mlp_shared.txt
fails 1 "ipusim: mlp.onnx: --share-programs is of a pipelined training step's overlapped micro-batches: it needs --train and --pipeline N (without --serial-pipeline)" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --share-programs -o bad.elf
fails 1 "ipusim: mlp.onnx: --no-share-programs is of a pipelined training step's overlapped micro-batches: it needs --train and --pipeline N (without --serial-pipeline)" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --machine m2000 --pipeline 2 --serial-pipeline --no-share-programs -o bad.elf
fails 1 "ipusim: mlp.onnx: --share-programs and --no-share-programs: give one" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --machine m2000 --pipeline 2 --share-programs --no-share-programs -o bad.elf
fails 1 "ipusim: mlp.onnx: --recompute is of a pipelined training step: it needs --train and --pipeline N" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --recompute -o bad.elf
fails 1 "ipusim: mlp.onnx: --serial-pipeline is of a pipelined training step: it needs --train and --pipeline N" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --serial-pipeline -o bad.elf
fails 2 "ipusim compile: --accumulate: '0' is not a count of micro-batches (1..4096)" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --accumulate 0 -o bad.elf
# validate holds one replica's step against the host: not a step of several
expect 1 "validate --train holds one replica's step against the host reference; --replicas 4 would sum" -- \
    "$IPUSIM" validate --model mlp.onnx --train --loss softmax-ce:logits:labels --machine m2000 --replicas 4
expect 0 "updated by adam, lr 0.001" -- "$IPUSIM" compile cnn.onnx --train --loss softmax-ce:logits:labels --optimizer adam --lr 0.001 -o cnn.elf

# ---- values: each step against the evaluator, the loss falling ----------------------------
# loss_of STEP FILE: the simulated loss of that step
loss_of() { sed -n "s/^step $1: loss \([^ ]*\) .*/\1/p" "$2"; }
falls() { awk -v a="$(loss_of 1 "$1")" -v b="$(loss_of 20 "$1")" 'BEGIN { exit !(b < 0.5 * a) }'; }
"$IPUSIM" validate --model mlp.onnx --train --loss softmax-ce:logits:labels --lr 0.5 --momentum 0.9 --steps 20 > mlp.txt 2>&1
check "mlp: 20 steps within tolerance" grep -q "^PASS: 20 steps of mlp.onnx within tolerance" mlp.txt
check "mlp: the loss falls to under half in 20 steps" falls mlp.txt
check "mlp: each gradient compared" grep -q "Gradient___w1: max abs" mlp.txt
"$IPUSIM" validate --model cnn.onnx --train --loss softmax-ce:logits:labels --optimizer sgd --lr 0.2 --momentum 0.9 \
    --steps 20 > cnn.txt 2>&1
check "cnn: 20 steps within tolerance" grep -q "^PASS: 20 steps of cnn.onnx within tolerance" cnn.txt
check "cnn: the loss falls to under half in 20 steps" falls cnn.txt
check "cnn: the conv weights' changes compared" grep -q "change of k1: max abs" cnn.txt
# f16 weights updated with stochastic rounding: each new weight within one f16 gap of the
# reference's unrounded update, and the loss still falls
expect 0 "f16 weights \(updated in f32, rounded stochastically\)" -- \
    "$IPUSIM" compile cnn.onnx --train --loss softmax-ce:logits:labels --lr 0.2 --momentum 0.9 --f16-weights -o cnn16.elf
expect 0 "; [1-9][0-9]* f16 weights read as they are by their matmuls and convolutions \(no f32 copy\)" -- \
    "$IPUSIM" compile cnn.onnx --train --loss softmax-ce:logits:labels --lr 0.2 --momentum 0.9 --f16-weights -o cnn16.elf
"$IPUSIM" validate --model cnn.onnx --train --loss softmax-ce:logits:labels --optimizer sgd --lr 0.2 --momentum 0.9 \
    --f16-weights --steps 20 > cnn16.txt 2>&1
check "cnn, f16 weights: 20 steps within tolerance" grep -q "^PASS: 20 steps of cnn.onnx within tolerance" cnn16.txt
check "cnn, f16 weights: the loss falls to under half in 20 steps" falls cnn16.txt
# --f16-matmul: the reference rounds the matmuls' operands to f16 as the AMP takes them
"$IPUSIM" validate --model cnn.onnx --train --loss softmax-ce:logits:labels --optimizer sgd --lr 0.2 --momentum 0.9 \
    --f16-matmul --steps 20 > cnn_f16mm.txt 2>&1
check "cnn, f16 matmuls: 20 steps within tolerance" grep -q "^PASS: 20 steps of cnn.onnx within tolerance" cnn_f16mm.txt
# --partials half: the matmuls sum in f16; the reference's Monte Carlo runs perturb each
# matmul's result by the K / 16 roundings of its running sum
"$IPUSIM" validate --model mlp.onnx --train --loss softmax-ce:logits:labels --lr 0.5 --momentum 0.9 \
    --f16-matmul --partials half --steps 20 > mlp_half.txt 2>&1
check "mlp, half partials: 20 steps within tolerance" grep -q "^PASS: 20 steps of mlp.onnx within tolerance" mlp_half.txt
check "mlp, half partials: the tolerance says so" grep -q "in f16 with f16 partial sums (--partials half)" mlp_half.txt
check "mlp, half partials: the loss falls to under half in 20 steps" falls mlp_half.txt
check "cnn, f16 weights: the roundings' mean error stated" \
    grep -q "^stochastic rounding of the f16 weights: every new weight within one f16 gap" cnn16.txt
# the optimizer's state in streaming memory (an M2000's gateway DDR): loaded for each
# weight's update and stored back; 5 LAMB steps held against the host reference
expect 0 "streaming memory: 8 optimizer state variables, 0.012 MB a replica" -- \
    "$IPUSIM" compile cnn.onnx --train --loss softmax-ce:logits:labels --optimizer lamb --optimizer-state-offchip \
    --machine m2000 -o cnn_offchip.elf
"$IPUSIM" validate --model cnn.onnx --train --loss softmax-ce:logits:labels --optimizer lamb --lr 0.05 \
    --optimizer-state-offchip --machine m2000 --steps 5 > cnn_offchip.txt 2>&1
check "cnn, LAMB state in streaming memory: 5 steps within tolerance" \
    grep -q "^PASS: 5 steps of cnn.onnx within tolerance" cnn_offchip.txt
check "cnn, LAMB state in streaming memory: the moments compared" grep -q "change of k2/second_moment" cnn_offchip.txt
# ... and kept in f16 there (pieces of an odd count padded to whole words)
"$IPUSIM" validate --model cnn.onnx --train --loss softmax-ce:logits:labels --optimizer lamb --lr 0.05 \
    --f16-optimizer-state --optimizer-state-offchip --machine m2000 --steps 5 > cnn_offchip16.txt 2>&1
check "cnn, LAMB state in f16 in streaming memory: 5 steps within tolerance" \
    grep -q "^PASS: 5 steps of cnn.onnx within tolerance" cnn_offchip16.txt

# ---- refused before any work ----------------------------------------------------------
fails 2 "ipusim compile: --optimizer: 'rmsprop' is not sgd, adam, lamb or lars" -- \
    "$IPUSIM" compile mlp.onnx --train --optimizer rmsprop -o "$OUT/x.elf"
fails 2 "ipusim compile: --lr: '-1' is not a positive number" -- "$IPUSIM" compile mlp.onnx --train --lr -1 -o "$OUT/x.elf"
fails 2 "ipusim compile: --momentum: '1.5' is not below 1" -- "$IPUSIM" compile mlp.onnx --train --momentum 1.5 -o "$OUT/x.elf"
fails 1 "ipusim: mlp.onnx: --loss, --optimizer, --lr, --momentum, --weight-decay, --loss-scale, --delay-updates, --accumulate, --f16-weights, --no-stochastic-rounding, --f16-optimizer-state, --optimizer-state-offchip and --recompute need --train" -- \
    "$IPUSIM" compile mlp.onnx --lr 0.1 -o "$OUT/x.elf"
fails 1 "ipusim: mlp.onnx: --no-stochastic-rounding is of the f16 weights' update: it needs --f16-weights" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --no-stochastic-rounding -o "$OUT/x.elf"
fails 1 "ipusim: mlp.onnx: --train needs --loss KIND:OUTPUT:LABELS (softmax-ce, nll) or mse:OUTPUT:TARGET: the model's first output 'logits' is not a scalar loss" -- \
    "$IPUSIM" compile mlp.onnx --train -o "$OUT/x.elf"
fails 1 "ipusim: mlp.onnx: loss 'softmax-ce:nope:labels': the model has no tensor 'nope'" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:nope:labels -o "$OUT/x.elf"
fails 1 "ipusim: mlp.onnx: loss: 'x' is f32[32,16], the loss needs i32[32]" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:x -o "$OUT/x.elf"
fails 1 "ipusim: mlp.onnx: the optimizer state is to be kept in streaming memory, and machine gc200 has none (streaming_memory_bytes = 0)" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --optimizer adam --optimizer-state-offchip -o "$OUT/x.elf"
check "the refused compile wrote nothing" test ! -e "$OUT/x.elf"
fails 1 "ipusim: mlp.onnx: the optimizer state kept in streaming memory takes 13984 bytes (2 replicas), more than machine m2000 (modified) has (streaming_memory_bytes = 4096)" -- \
    "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --optimizer adam --optimizer-state-offchip \
    --machine m2000 --replicas 2 --set streaming_memory_bytes=4096 -o "$OUT/x.elf"
fails 1 "ipusim: mlp.onnx: --steps needs --train" -- "$IPUSIM" validate --model mlp.onnx --steps 3
fails 2 "ipusim validate: --steps: '0' is not a step count (1..1000)" -- \
    "$IPUSIM" validate --model mlp.onnx --train --steps 0
finish
