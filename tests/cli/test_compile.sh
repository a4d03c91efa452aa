#!/usr/bin/env bash
# `ipusim compile`, `ipusim run` on what it writes (inputs and outputs by
# tensor name) and `ipusim validate --model` (compiled, simulated, held
# against cblas_sgemm with the AMP's error bound).
source "$(dirname "$0")/lib.sh"

# A matmul on part of a chip: the plan's figures, an executable.
expect 0 "matmul:96x64x64 -> $WORK/mm.elf for gc200: 1 ops" -- \
    "$IPUSIM" compile matmul:96x64x64 -o "$WORK/mm.elf" --tiles 64
check "executable written" test -s "$WORK/mm.elf"
expect 0 "plan: c: 96x64x64 on a [0-9]+ x [0-9]+ x 1 grid of tiles \(M x N x K\)" -- \
    "$IPUSIM" compile matmul:96x64x64 -o "$WORK/mm2.elf" --tiles 64 --verbose
# --verbose names the runner-up too, with its estimate (not below the plan's).
out=$("$IPUSIM" compile matmul:96x64x64 -o "$WORK/mm2.elf" --tiles 64 --verbose 2>&1)
plan_est=$(sed -nE 's/^plan: c: .*estimated ([0-9]+) cycles.*/\1/p' <<<"$out")
runner_est=$(sed -nE 's/^  runner-up: a [0-9]+ x [0-9]+ x [0-9]+ grid, blocks of [0-9]+ x [0-9]+ x [0-9]+, estimated ([0-9]+) cycles$/\1/p' <<<"$out")
check "--verbose: the runner-up and its estimate ($runner_est against $plan_est)" \
    test -n "$runner_est" -a -n "$plan_est" -a "${runner_est:-0}" -ge "${plan_est:-1}"

# Run it: input a by name (96 x 64 f16 = 12288 bytes), output c by name.
head -c 12288 /dev/zero > "$WORK/a.bin"
expect 0 "1 chip x 1472 tiles" -- "$IPUSIM" run "$WORK/mm.elf" --input a="$WORK/a.bin" --output c="$WORK/c.bin"
check "output c is 96 x 64 f16" test "$(stat -c %s "$WORK/c.bin")" -eq 12288
check "zeros in, zeros out" cmp -s "$WORK/c.bin" "$WORK/a.bin"
expect 0 "input 'a' not given \\(--input a=FILE\\): f16, uniform random values" -- "$IPUSIM" run "$WORK/mm.elf"
expect 1 "input 'a': 5 bytes given, the tensor \\[96,64\\] f16 has 12288" -- \
    "$IPUSIM" run "$WORK/mm.elf" --input a=<(printf 12345)
expect 1 "has no input tensor 'nosuch'" -- "$IPUSIM" run "$WORK/mm.elf" --input nosuch="$WORK/a.bin"
expect 1 "has no tensor 'nosuch'" -- "$IPUSIM" run "$WORK/mm.elf" --output nosuch="$WORK/x.bin"
check "no output file for a refused run" test ! -e "$WORK/x.bin"

# Compiled, simulated, held against the reference: every element within its bound.
expect 0 "PASS: 1 of 1 outputs within tolerance" -- "$IPUSIM" validate --model matmul:200x128x96 --tiles 32
expect 0 "0 of 19200 over tol" -- "$IPUSIM" validate --model matmul:200x128x96 --tiles 32
# TFLOPS of the model's multiply-adds (64 x 48 x 40 = 122880), and what the AMP issued beside them
out=$("$IPUSIM" validate --model matmul:64x48x40 --tiles 8 2>&1)
check "the model's MACs" grep -qE "^matmuls and convolutions: 1.229e\+05 MACs; on the chip [0-9.]+ TFLOPS" <<<"$out"
check "the AMP's MACs" grep -qE "^AMP: [0-9.e+]+ MACs issued \([0-9.]+x the model's" <<<"$out"
# K split over tiles: partial sums reduced across the K tiles
out=$("$IPUSIM" compile matmul:16x4096x64:f16 -o "$WORK/ksplit.elf" -v)
check "long K: the plan splits K" grep -qE "plan: c: 16x4096x64 on a [0-9]+ x [0-9]+ x ([2-9]|[1-9][0-9]+) grid" <<<"$out"
expect 0 "0 of 1024 over tol" -- "$IPUSIM" validate --model matmul:16x4096x64:f16
# K and N padded to the AMP's blocks; f32 operands only with --f16-matmul, held to
# a bound that includes their rounding to f16.
expect 0 "0 of 1200 over tol" -- "$IPUSIM" validate --model matmul:50x40x24 --tiles 16
out=$("$IPUSIM" validate --model matmul:33x20x17:f32 --f16-matmul --tiles 16 2>&1)
check "f32 in f16: bound includes the operands' rounding" grep -q "and the rounding of f32 operands to f16" <<<"$out"
check "f32 in f16: within it" grep -q "c (\[33,17\] f32): .* 0 of 561 over tol" <<<"$out"
# f32 operands on the AMP's f32 path, held against the codelet's own bound
out=$("$IPUSIM" validate --model matmul:33x20x17:f32 --tiles 16 2>&1)
check "f32 path: its bound" grep -q "the f32 path, workloads/codelets/matmul_f32.h" <<<"$out"
check "f32 path: within it" grep -q "c (\[33,17\] f32): .* 0 of 561 over tol" <<<"$out"
check "f32 path: the f32 peak" grep -q "of the chip's f32 peak" <<<"$out"
out=$("$IPUSIM" validate --model matmul:96x300x40:f32 2>&1)
check "f32 path, K not a multiple of 8: within its bound" grep -q "c (\[96,40\] f32): .* 0 of 3840 over tol" <<<"$out"
# Half partials (--partials half, Poplar's partialsType): f16v4hihov4amp sums in f16,
# twice the float partials' rate; K split over tiles, the partials exchanged as f16
# and summed in f32.  Held to the bound for f16 running sums (validation/reference.h; the f32
# partials' bound does not hold them: 384x1024x4096 errs by up to 3.3 times it).
out=$("$IPUSIM" validate --model matmul:200x3000x100 --f16-matmul --partials half 2>&1)
check "half partials: its bound" grep -q "f16 partial sums (--partials half)" <<<"$out"
check "half partials: within it" grep -q "c (\[200,100\] f16): .* 0 of 20000 over tol" <<<"$out"
out=$("$IPUSIM" compile matmul:200x3000x100 --f16-matmul --partials half --verbose -o "$WORK/h.elf" 2>&1)
check "half partials: the plan says so" grep -q "f16 AMP, f16 partials" <<<"$out"
check "half partials: K split" grep -Eq "on a [0-9]+ x [0-9]+ x ([2-9]|[1-9][0-9]+) grid of tiles" <<<"$out"
# The same product on one tile, half against float partials: the AMP's two engine
# sets (64 MACs an issue) against one (32).
half=$("$IPUSIM" validate --model matmul:96x256x64 --f16-matmul --tiles 1 --partials half 2>&1 | grep -Eo "on the chip [0-9]+ cycles" | grep -Eo "[0-9]+")
float=$("$IPUSIM" validate --model matmul:96x256x64 --f16-matmul --tiles 1 --partials float 2>&1 | grep -Eo "on the chip [0-9]+ cycles" | grep -Eo "[0-9]+")
check "half partials on one tile: $half cycles, float $float" bash -c "[ -n '$half' ] && [ -n '$float' ] && [ $half -lt $((float * 3 / 4)) ]"
out=$("$IPUSIM" validate --model bert-base:s16 --f16-matmul --partials half 2>&1)
check "BERT layer with half partials passes: $(tail -1 <<<"$out")" grep -q "PASS: 1 of 1 outputs within tolerance" <<<"$out"
expect 2 "--partials: expected half or float, got 'double'" -- "$IPUSIM" compile matmul:8x16x16 --partials double
# ResNet-50 convolutions: im2col by the exchange into the AMP matmul, the image
# and the result kept channels-last (the host reorders them), held against an
# im2col + cblas_sgemm reference element by element.
out=$("$IPUSIM" validate --model resnet50:res3_3x3s2 2>&1)
check "strided 3x3 conv passes" grep -q "PASS: 1 of 1 outputs within tolerance" <<<"$out"
check "strided 3x3 conv: reference is im2col" grep -q "reference: im2col and cblas_sgemm" <<<"$out"
check "strided 3x3 conv: every element within its bound" grep -q "0 of 100352 over tol" <<<"$out"
# ResNet-50's pools (f32, channels-last like the convolutions): exact for max,
# within the ONNX tolerance for the global average.
expect 0 "0 of 200704 over tol" -- "$IPUSIM" validate --model resnet50:maxpool
expect 0 "y \(\[1,2048,1,1\] f32\): .* 0 of 2048 over tol" -- "$IPUSIM" validate --model resnet50:avgpool
expect 0 "resnet50:res2_3x3:b1 -> .* for gc200: 1 ops" -- "$IPUSIM" compile resnet50:res2_3x3:b1 -o "$WORK/r2.elf"
# Image in by name in its own NCHW order, result out the same way: a zero image
# gives a zero result.
head -c $((64 * 56 * 56 * 2)) /dev/zero > "$WORK/x.bin"
expect 0 "1 chip x 1472 tiles" -- "$IPUSIM" run "$WORK/r2.elf" --input x="$WORK/x.bin" --output y="$WORK/y.bin"
check "result is [1,64,56,56] f16 zeros" cmp -s "$WORK/y.bin" "$WORK/x.bin"
# A BERT-Base encoder layer (16 tokens): attention with run-time operands
# packed on the tiles, softmax, layer norms, GELU; matmuls in f16.
out=$("$IPUSIM" validate --model bert-base:s16 --f16-matmul 2>&1)
check "BERT layer passes: $(tail -1 <<<"$out")" grep -q "PASS: 1 of 1 outputs within tolerance" <<<"$out"
check "BERT layer: tolerance stated" grep -q "tolerance 2^-10 sqrt(6) (|want| + rms(want)): 6 matmuls on the longest path, in f16" <<<"$out"
# The same layer on the AMP's f32 path
out=$("$IPUSIM" validate --model bert-base:s16 2>&1)
check "BERT layer in f32 passes: $(tail -1 <<<"$out")" grep -q "PASS: 1 of 1 outputs within tolerance" <<<"$out"
check "BERT layer in f32: tolerance stated" grep -q "tolerance 2^-18 sqrt(6) (|want| + rms(want)): 6 matmuls on the longest path, in f32" <<<"$out"
expect 1 "bert-base:s7: expected bert-base\[:sSEQ\]\[:lLAYERS\]" -- "$IPUSIM" compile bert-base:s7 -o "$WORK/bad.elf"
# The whole ResNet-50: BatchNorms folded, Relus fused, residual adds on
# channels-last images, pools, the classifier; on 32 x 32 images, held
# against the f64 evaluator; the 224 x 224 network compiles and fits.
out=$("$IPUSIM" validate --model resnet50:s32 --f16-matmul 2>&1)
check "ResNet-50 (32x32) passes: $(tail -1 <<<"$out")" grep -q "PASS: 1 of 1 outputs within tolerance" <<<"$out"
check "ResNet-50: 50 matmuls on the longest path" grep -q "sqrt(50) (|want| + rms(want)): 50 matmuls on the longest path" <<<"$out"
out=$("$IPUSIM" compile resnet50 --f16-matmul -o "$WORK/r50.elf" 2>&1)
check "ResNet-50 (224x224) compiles: $(tail -1 <<<"$out")" grep -q "resnet50 -> $WORK/r50.elf for gc200: 89 ops" <<<"$out"
# Weights kept in parts down each grid column, not on its first row: the
# fullest tile holds at most 80% (86.9% with whole blocks on the first row).
full=$(sed -nE 's/.*fullest tile [0-9]+ uses [0-9]+ of [0-9]+ bytes \(([0-9]+)\.[0-9]%\).*/\1/p' <<<"$out")
check "ResNet-50's fullest tile at most 80% full (got ${full:-nothing}%)" test "${full:-100}" -le 80
rm -f "$WORK/r50.elf"
# In f32 too, each tile's control program in one block (the exchange steps in
# runs, the worker records shared; the split into two blocks is tested by
# tests/test_lower_memory.c).
out=$("$IPUSIM" compile resnet50 -o "$WORK/r50f32.elf" 2>&1)
check "ResNet-50 (224x224, f32) fits one GC200: $(grep -m1 'does not fit\|fullest' <<<"$out")" \
    grep -q "resnet50 -> $WORK/r50f32.elf for gc200: 89 ops" <<<"$out"
check "control programs in one block" bash -c '! grep -q "^control programs in two blocks" <<<"$1"' _ "$out"
rm -f "$WORK/r50f32.elf"
# The whole BERT-Base encoder (12 layers, f16 matmuls) on one GC200: a
# tensor's memory goes back to its tiles after its last reader.
out=$("$IPUSIM" compile bert-base:l12 --f16-matmul -o "$WORK/bert12.elf" 2>&1)
check "BERT-Base, 12 layers, fits one GC200: $(grep -m1 'does not fit\|fullest' <<<"$out")" \
    grep -q "bert-base:l12 -> $WORK/bert12.elf for gc200" <<<"$out"
check "tensor storage reused" grep -Eq "^tensor storage: [1-9][0-9.]* MB a chip placed where dead tensors were" <<<"$out"
rm -f "$WORK/bert12.elf"
expect 1 "resnet50:s31: expected resnet50\[:bN\]\[:sSIZE\]" -- "$IPUSIM" compile resnet50:s31 -o "$WORK/bad.elf"
# On a 4-chip machine: one replica a chip, tensors replicaR/NAME, every
# replica's output by name.
expect 0 "4 replicas \(one a chip\)" -- "$IPUSIM" compile matmul:64x64x64 --machine m2000 --tiles 16 -o "$WORK/r4.elf"
head -c 8192 /dev/zero > "$WORK/a64.bin"
expect 0 "4 chips x 1472 tiles" -- "$IPUSIM" run "$WORK/r4.elf" --machine m2000 --input replica3/a="$WORK/a64.bin" \
    --output replica3/c="$WORK/c3.bin" --output c="$WORK/c0.bin"
check "replica 3's output from zeros is zeros" cmp -s "$WORK/c3.bin" <(head -c 8192 /dev/zero)
check "replica 0's output (random input) is not" test "$(cmp -s "$WORK/c0.bin" "$WORK/c3.bin"; echo $?)" -ne 0
# The same input on every replica gives the same output on every chip.
head -c 8192 /dev/urandom | tr '\000-\377' '\000-\077' > "$WORK/a_rand.bin"
"$IPUSIM" run "$WORK/r4.elf" --machine m2000 --input a="$WORK/a_rand.bin" --input replica1/a="$WORK/a_rand.bin" \
    --input replica2/a="$WORK/a_rand.bin" --input replica3/a="$WORK/a_rand.bin" --output c="$WORK/r0.bin" \
    --output replica1/c="$WORK/r1.bin" --output replica2/c="$WORK/r2.bin" --output replica3/c="$WORK/r3.bin" >/dev/null 2>&1
for r in 1 2 3; do
    check "replica $r computes what replica 0 does" cmp -s "$WORK/r0.bin" "$WORK/r$r.bin"
done
expect 0 "bow2000 is [0-9.]+x as fast as m2000" -- "$IPUSIM" compare "$WORK/r4.elf" --machines m2000,bow2000
expect 1 "5 replicas on a machine of 4 chips" -- "$IPUSIM" compile matmul:64x64x64 --machine m2000 --replicas 5 -o "$WORK/bad.elf"
# Pipeline stages (layers per IPU): the ops cut into runs of equal estimated
# work, one a chip, tensors crossing a cut over the IPU-Links, system syncs.
out=$("$IPUSIM" validate --model bert-base:s16:l2 --f16-matmul --machine m2000 --pipeline 2 2>&1)
check "2-stage pipeline of 2 BERT layers passes: $(tail -1 <<<"$out")" grep -q "PASS: 1 of 1 outputs within tolerance" <<<"$out"
check "the outputs' transfer timed on the last stage's chip: $(grep -o 'outputs to the host [0-9]* cycles' <<<"$out")" \
    grep -Eq "outputs to the host [0-9]{3,} cycles" <<<"$out"
expect 0 "pipeline: 4 stages, one a chip" -- "$IPUSIM" compile bert-base:s16:l4 --f16-matmul --machine m2000 \
    --pipeline 4 -o "$WORK/p4.elf"
expect 1 "5 pipeline stages on a machine of 4 chips" -- "$IPUSIM" compile matmul:64x64x64 --machine m2000 \
    --pipeline 5 -o "$WORK/bad.elf"

# Deterministic: the same compiled program gives the same outputs and cycles
# on one host thread and on two.
"$IPUSIM" compile bert-base:s16:l1 --f16-matmul --tiles 256 -o "$WORK/b16.elf" >/dev/null
for t in 1 2; do
    "$IPUSIM" run "$WORK/b16.elf" --threads "$t" --output layer0.output.layernorm="$WORK/b16_$t.bin" \
        --json "$WORK/b16_$t.json" >/dev/null 2>&1
done
check "BERT layer: same outputs on 1 and 2 threads" cmp -s "$WORK/b16_1.bin" "$WORK/b16_2.bin"
check "BERT layer: same cycles on 1 and 2 threads" \
    test "$(grep -o '"max_tile_cycles":[[:space:]]*[0-9][0-9]*' "$WORK/b16_1.json")" = "$(grep -o '"max_tile_cycles":[[:space:]]*[0-9][0-9]*' "$WORK/b16_2.json")"
# An activation whose memory later tensors take is not read at the end of
# the run: refused up front, nothing written; the debugger says so.
expect 1 "^ipusim: --output layer0.attention.probs: the program gives its tile memory to later tensors after its last reader" -- \
    "$IPUSIM" run "$WORK/b16.elf" --output layer0.attention.probs="$WORK/probs.bin"
check "no file for a refused --output" test ! -e "$WORK/probs.bin"
expect 0 "layer0.attention.probs: f32 \[12,16,16\] activation \(transient\)" -- \
    "$IPUSIM" debug "$WORK/b16.elf" --batch -x <(printf 'info tensors\n')
expect 1 "unknown ResNet-50 layer" -- "$IPUSIM" compile resnet50:res9 -o "$WORK/bad.elf"
expect 1 "expected matmul:MxKxN" -- "$IPUSIM" compile matmul:0x4x4 -o "$WORK/bad.elf"
check "no executable for a bad model" test ! -e "$WORK/bad.elf"

finish
