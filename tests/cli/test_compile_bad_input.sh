#!/usr/bin/env bash
# Bad inputs to `ipusim compile` (tests/BAD_INPUTS.md, "Compiling a model"):
# each ends in one clear message naming the file (and the node, the tile),
# a non-zero exit status (1: bad input, 2: bad command line), no panic, and
# no executable left behind, not even a temporary.  The ONNX models are
# written here with tests/cli/onnx_proto.py (python3's standard
# library only), so every one is exactly the defect it is named after.
source "$(dirname "$0")/lib.sh"

IPUSIM=$(realpath "$IPUSIM")
OUT="$WORK/out"      # every executable a failing compile is asked for goes here
mkdir -p "$OUT"
cd "$WORK" || exit 1

# refused STATUS REGEX -- COMMAND...: exit status STATUS; the first line of
# stdout+stderr matches the extended regex REGEX; no panic; nothing in $OUT
# and no .elf (or temporary) in the working folder, where a compile without
# -o would write.
refused() {
    local status=$1 regex=$2
    shift 3
    local out rc first left
    out=$("$@" 2>&1)
    rc=$?
    first=$(head -n 1 <<<"$out")
    left=$(ls -A "$OUT"; ls -A "$WORK" | grep -v -E '^(out|models)$')
    if [ "$rc" -ne "$status" ] || ! grep -Eq -- "$regex" <<<"$first" || grep -q "panic" <<<"$out" || [ -n "$left" ]; then
        echo "FAIL: $*"
        echo "  exit $rc (expected $status)"
        echo "  got:      $first"
        echo "  expected: /$regex/"
        [ -z "$left" ] || echo "  left behind: $left"
        FAILED=$((FAILED + 1))
        rm -rf "${OUT:?}"/* "$OUT"/.[!.]* 2>/dev/null
        return
    fi
    PASSED=$((PASSED + 1))
}

# ---- the models ---------------------------------------------------------------------
M="$WORK/models"
mkdir -p "$M"
PYTHONPATH="$CLI_DIR" python3 - "$M" <<'EOF'
import struct, sys

from onnx_proto import *

def write(name, data):
    with open(sys.argv[1] + '/' + name, 'wb') as f:
        f.write(data)

good = model([node('MatMul', ['a', 'b'], ['c'], 'mm')], [('a', [3, 4])], [('c', [3, 6])],
             [initializer('b', [4, 6], 0.25)])
write('good.onnx', good)
# a 4 MiB table looked up on one tile: its blocks do not fit, and the message names the op
write('big_gather.onnx', model([node('Gather', ['W', 'ix'], ['y'], 'lookup')], [('ix', [64], 7)], [('y', [64, 256])],
                               [initializer('W', [4096, 256], 0.5)]))
write('truncated.onnx', good[:len(good) // 2])
write('not_onnx.onnx', b'this is not an ONNX model\n')
write('cycle.onnx', model([node('Add', ['x', 't2'], ['t1'], 'add1'), node('Relu', ['t1'], ['t2'], 'relu1')],
                          [('x', [2, 2])], [('t2', [2, 2])]))
write('unknown_op.onnx', model([node('FooBar', ['x'], ['y'], 'foo1')], [('x', [2, 2])], [('y', [2, 2])]))
write('shapes.onnx', model([node('MatMul', ['a', 'b'], ['c'], 'mm_bad')], [('a', [3, 4])], [('c', [3, 6])],
                           [initializer('b', [5, 6], 0.25)]))
write('undefined.onnx', model([node('MatMul', ['a', 'w'], ['c'], 'mm_w')], [('a', [3, 4])], [('c', [3, 6])]))
write('too_large.onnx', model([node('MatMul', ['a', 'b'], ['c'], 'mm_big')], [('a', [100000, 2000])],
                              [('c', [100000, 64])], [initializer('b', [2000, 64], 0.5)]))
write('two_activations.onnx', model([node('MatMul', ['a', 'b'], ['c'], 'mm_act')], [('a', [2, 3, 4]), ('b', [4, 6])],
                                    [('c', [2, 3, 6])]))
write('gemm_trans_a.onnx', model([node('Gemm', ['a', 'b'], ['c'], 'gemm_ta', [attr_int('transA', 1)])],
                                 [('a', [4, 3])], [('c', [3, 6])], [initializer('b', [4, 6], 0.25)]))
# f16 operands: A given transposed is turned on the tile in f32, widened first
b16 = b''.join(vint(1, d) for d in (4, 6)) + vint(2, 10) + ld(8, 'b') + ld(9, struct.pack('<e', 0.25) * 24)
write('gemm_trans_a_f16.onnx', model([node('Gemm', ['a', 'b'], ['c'], 'gemm_ta16', [attr_int('transA', 1)])],
                                     [('a', [4, 3], 10)], [('c', [3, 6], 10)], [b16]))
write('conv_group.onnx', model([node('Conv', ['x', 'w'], ['y'], 'conv_g2', [attr_int('group', 2)])],
                               [('x', [1, 4, 8, 8])], [('y', [1, 4, 8, 8])], [initializer('w', [4, 2, 1, 1], 0.5)]))
EOF
check "the models were written" test -s "$M/conv_group.onnx"

# The encoder is right: the good model compiles (its f32 MatMul in f16).
expect 0 "good.onnx -> $OUT/good.elf" -- "$IPUSIM" compile "$M/good.onnx" -o "$OUT/good.elf" --f16-matmul --tiles 4
check "the good model's executable" test -s "$OUT/good.elf"
rm -f "$OUT/good.elf"
expect 0 "good.onnx -> $OUT/good.elf" -- "$IPUSIM" compile "$M/good.onnx" -o "$OUT/good.elf" --tiles 4
rm -f "$OUT/good.elf"
expect 0 "gemm_trans_a.onnx -> $OUT/ta.elf" -- "$IPUSIM" compile "$M/gemm_trans_a.onnx" -o "$OUT/ta.elf" --tiles 4
rm -f "$OUT/ta.elf"

# ---- bad files ---------------------------------------------------------------------
refused 1 "^ipusim: .*/truncated\.onnx: not a valid ONNX model \(protobuf parse failed\)$" -- \
    "$IPUSIM" compile "$M/truncated.onnx" -o "$OUT/x.elf"
refused 1 "^ipusim: .*/not_onnx\.onnx: not a valid ONNX model \(protobuf parse failed\)$" -- \
    "$IPUSIM" compile "$M/not_onnx.onnx" -o "$OUT/x.elf"
refused 1 "^ipusim: nosuch\.onnx: cannot open: No such file or directory$" -- \
    "$IPUSIM" compile nosuch.onnx -o "$OUT/x.elf"
refused 1 "^ipusim: .*/truncated\.onnx: not a valid ONNX model" -- \
    "$IPUSIM" compile "$M/truncated.onnx"                      # default output: none written here

# ---- bad graphs ---------------------------------------------------------------------
refused 1 "^ipusim: .*/cycle\.onnx: graph has a cycle: node 'relu1' \(Relu\) -> node 'add1' \(Add\) -> node 'relu1' \(Relu\)$" -- \
    "$IPUSIM" compile "$M/cycle.onnx" -o "$OUT/x.elf"
refused 1 "^ipusim: .*/unknown_op\.onnx: unsupported op 'FooBar' in node 'foo1'$" -- \
    "$IPUSIM" compile "$M/unknown_op.onnx" -o "$OUT/x.elf"
refused 1 "^ipusim: .*/shapes\.onnx: node 'mm_bad' \(MatMul\): inner dimensions differ: \[3,4\] x \[5,6\]$" -- \
    "$IPUSIM" compile "$M/shapes.onnx" -o "$OUT/x.elf" --f16-matmul
refused 1 "^ipusim: .*/undefined\.onnx: node 'mm_w' \(MatMul\): input 'w' is missing$" -- \
    "$IPUSIM" compile "$M/undefined.onnx" -o "$OUT/x.elf"

# ---- what the lowering refuses --------------------------------------------------------
refused 1 "^ipusim: .*/conv_group\.onnx: node 'conv_g2' \(Conv\): grouped convolutions are not yet supported$" -- \
    "$IPUSIM" compile "$M/conv_group.onnx" -o "$OUT/x.elf"
refused 1 "^ipusim: .*/two_activations\.onnx: node 'mm_act' \(MatMul\): operands computed at run time need the same rank, at least 2" -- \
    "$IPUSIM" compile "$M/two_activations.onnx" -o "$OUT/x.elf" --f16-matmul
expect 0 "gemm_trans_a.onnx -> $OUT/ta.elf" -- "$IPUSIM" compile "$M/gemm_trans_a.onnx" -o "$OUT/ta.elf" --tiles 4 \
    --f16-matmul
rm -f "$OUT/ta.elf"
refused 1 "^ipusim: .*/gemm_trans_a_f16\.onnx: node 'gemm_ta16' \(Gemm\): transA=1 of f16 operands is lowered on the f32 path only \(compile without --f16-matmul\)" -- \
    "$IPUSIM" compile "$M/gemm_trans_a_f16.onnx" -o "$OUT/x.elf" --f16-matmul

# ---- does not fit in tile memory: the tile and the bytes ------------------------------
refused 1 "^ipusim: .*/too_large\.onnx: does not fit: tile 0 has no room for a block of [0-9]+ bytes for input 'a' in region 0 or 1 \(largest free block [0-9]+ bytes, in region 1; [0-9]+ bytes free in all, [0-9]+ bytes are the kernel library\) \(on a machine of several chips, --pipeline N spreads the layers over them\)$" -- \
    "$IPUSIM" compile "$M/too_large.onnx" -o "$OUT/x.elf" --f16-matmul
refused 1 "^ipusim: bert-large:l1: node 'layer0\.attention\.key' \(FusedMatMul\): does not fit: a tile needs at least [0-9]+ bytes for the blocks of the grid needing least \([0-9]+ x [0-9]+ x [0-9]+ tiles, M x N x K, blocks of [0-9]+ x [0-9]+ x [0-9]+\) with the library, a tile has 638976, of which the fullest, tile [0-9]+, holds [0-9]+ already \(tensors, records and control program; [0-9]+ bytes kept for the run, [0-9]+ the ops' scratch; live tensors hold [0-9]+ bytes there, the most 'x' [0-9]+, 'layer0\.attention\.query' [0-9]+\) \(--f16-matmul halves the matmuls' weights and operands; --pipeline N spreads the layers over N chips\)$" -- \
    "$IPUSIM" compile bert-large:l1 --machine m2000 --tiles 24 -o "$OUT/x.elf"
# A's rows beyond what region 0 holds: serialised by rows (before, refused as "its rows of A
# need at least 271740 bytes a tile ... in its 196608 bytes of region 0"); twice as many rows
# do not fit as an input at all
expect 0 "^serialised: 1 matmuls no grid fit at once computed in 2 parts one after another" -- \
    "$IPUSIM" compile matmul:100000x2000x64 -o "$OUT/x.elf"
rm -f "$OUT/x.elf"
refused 1 "^ipusim: matmul:200000x2000x64: does not fit: tile 0 has no room for a block of 568064 bytes for input 'a' in region 0 or 1 " -- \
    "$IPUSIM" compile matmul:200000x2000x64 -o "$OUT/x.elf"

# a block an op takes that does not fit names the op where the block's own name does not
refused 1 "^ipusim: .*/big_gather\.onnx: does not fit: tile 0 has no room for a block of [0-9]+ bytes for constant 'W' \(op 'lookup', Gather\) in region 0 or 1 \(largest free block " -- \
    "$IPUSIM" compile "$M/big_gather.onnx" --tiles 1 -o "$OUT/x.elf"

# the AMP's packed weights must be in region 1 (ld128putcs): 256 KiB tiles with GC200's 208 KiB
# of region 0 leave 32 KiB of interleaved region 1 (once this compiled and then trapped, then it
# was refused as "no room ... in region 1, where the AMP reads its packed weights"); the planner
# now holds the packed block to region 1 and finds a grid whose blocks fit there, computed in
# parts, and the result is right.  On gc2's own map, 128 KiB of each, it fits at once.
expect 0 "^serialised: 1 matmuls no grid fit at once computed in [0-9]+ parts one after another" -- \
    "$IPUSIM" compile matmul:1280x1280x1280:f32 --machine gc2 --set tile_region0_bytes=212992 -o "$OUT/x.elf"
rm -f "$OUT/x.elf"
expect 0 "^PASS: 1 of 1 outputs within tolerance" -- \
    "$IPUSIM" validate --model matmul:256x1280x1280:f32 --machine gc2 --set tile_region0_bytes=212992
"$IPUSIM" compile matmul:1280x1280x1280:f32 --machine gc2 -o "$WORK/gc2.elf" >/dev/null 2>&1 ||
    { echo "FAIL: matmul:1280x1280x1280:f32 does not compile for gc2"; FAILED=$((FAILED + 1)); }
rm -f "$WORK/gc2.elf"

# ---- bad built-in specs and options ------------------------------------------------------
refused 1 "^ipusim: matmul:0x4x4: expected matmul:MxKxN\[:f16\|:f32\] with M, K, N positive$" -- \
    "$IPUSIM" compile matmul:0x4x4 -o "$OUT/x.elf"
refused 1 "^ipusim: matmul:axb: expected matmul:MxKxN\[:f16\|:f32\] with M, K, N positive$" -- \
    "$IPUSIM" compile matmul:axb -o "$OUT/x.elf"
refused 2 "^ipusim compile: unknown option '--bogus'$" -- \
    "$IPUSIM" compile matmul:4x4x4 --bogus -o "$OUT/x.elf"
refused 2 "^ipusim compile: --tiles: '0' is not a tile count$" -- \
    "$IPUSIM" compile matmul:4x4x4 --tiles 0 -o "$OUT/x.elf"
refused 2 "^ipusim compile: no model given$" -- \
    "$IPUSIM" compile -o "$OUT/x.elf"
refused 2 "^ipusim compile: unexpected argument 'matmul:8x8x8'$" -- \
    "$IPUSIM" compile matmul:4x4x4 matmul:8x8x8 -o "$OUT/x.elf"

finish
