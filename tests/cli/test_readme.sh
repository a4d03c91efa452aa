#!/usr/bin/env bash
# The example program in README.md works as the README says.
source "$(dirname "$0")/lib.sh"
README="$(dirname "$0")/../../README.md"
awk '/^```asm/{on=1; next} /^```/{if(on) exit} on' "$README" > "$WORK/double.S"
check "README has an assembly example" test -s "$WORK/double.S"
expect 0 "" -- "$IPUSIM" asm "$WORK/double.S"
check "asm wrote double.elf beside the source" test -s "$WORK/double.elf"
expect 0 "2 4 6 8 10 12 14 16" -- "$IPUSIM" run "$WORK/double.elf" --dump data:12:f32
expect 0 "18 20 22 24" -- "$IPUSIM" run "$WORK/double.elf" --dump data:12:f32

# The debugging example: its commands, typed into `ipusim debug`, give every
# line the README shows (the lines it cuts short with "..." aside).
awk '/^\$ ipusim debug mm.elf/{on=1; next} /^```/{if(on) exit} on' "$README" > "$WORK/session.txt"
check "README has a debugging example" grep -q '^(ipusim) goto superstep' "$WORK/session.txt"
"$IPUSIM" compile matmul:512x512x512 --f16-matmul -o "$WORK/mm.elf" >/dev/null 2>&1
sed -n 's/^(ipusim) //p' "$WORK/session.txt" | "$IPUSIM" debug "$WORK/mm.elf" --batch > "$WORK/got.txt" 2>&1
missing=0
while IFS= read -r line; do
    [ "$line" = "  ..." ] && continue
    grep -qxF -- "$line" "$WORK/got.txt" || { echo "  README line not in the session: $line"; missing=1; }
done < "$WORK/session.txt"
check "the debugging example's session gives every line the README shows" test "$missing" -eq 0

# The training example: the phase lines `ipusim run` prints for the small
# MLP and the first and last step lines of its validation are the README's.
awk '/^\$ ipusim compile mlp.onnx --train/{on=1; next} /^```/{if(on) exit} on' "$README" > "$WORK/train.txt"
check "README has a training example" grep -q '^forward ' "$WORK/train.txt"
python3 "$(dirname "$0")/train_models.py" "$WORK"
( cd "$WORK" && "$IPUSIM" compile mlp.onnx --train --loss softmax-ce:logits:labels --lr 0.5 --momentum 0.9 \
      -o mlp.elf && "$IPUSIM" run mlp.elf && "$IPUSIM" validate --model mlp.onnx --train \
      --loss softmax-ce:logits:labels --lr 0.5 --momentum 0.9 --steps 20 ) > "$WORK/train_got.txt" 2>&1
# A gradient's error figures are held against the host reference, whose
# last bits follow the host's BLAS kernels (OpenBLAS picks them by CPU):
# those figures are masked on both sides, the simulated values' own lines
# (phases, cycles, losses) compared as they are.
mask() { sed -E 's/max rel [^ ]+  rel L2 [^ ]+  max err\/tol [^,]+/max rel *  rel L2 *  max err\/tol */'; }
mask < "$WORK/train_got.txt" > "$WORK/train_masked.txt"
missing=0
while IFS= read -r line; do
    case "$line" in '$ '*|'  ...') continue ;; esac
    want=$(mask <<<"$line")
    grep -qxF -- "$want" "$WORK/train_masked.txt" || { echo "  README line not in the output: $line"; missing=1; }
done < "$WORK/train.txt"
check "the training example gives every line the README shows" test "$missing" -eq 0

finish
