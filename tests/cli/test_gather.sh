#!/usr/bin/env bash
# Gather with indices computed at run time (frontends/lower_gather.c): an
# embedding lookup of BERT-Base's size (a 30522 x 768 f32 constant table,
# 128 i64 token ids as the graph's input) compiled for gc200 and run with
# known ids, the rows compared bit for bit with the table's; negative ids
# count from the end (ONNX); an id out of range stops the run with the
# codelet's trap (exit status 3) naming the tile and the pc.  The same
# lookup of an f16 table (30522 x 1024, BERT-Large's width) splits the
# table's rows too, and sums the partials in f32 (vtx_reduce_partials_f16):
# rows of f16 values of every kind but -0, infinities and NaNs (normal,
# denormal, the largest) come out bit for bit.  The ONNX model
# is written here with tests/cli/onnx_proto.py (python3's standard
# library only).
source "$(dirname "$0")/lib.sh"

IPUSIM=$(realpath "$IPUSIM")
cd "$WORK" || exit 1

PYTHONPATH="$CLI_DIR" python3 - "$WORK" <<'EOF'
import struct, sys

from onnx_proto import *

V, D, N = 30522, 768, 128
# Table value (r, c): distinct in every row and column, exact in f32, never
# -0 or a denormal (the sum of partials would change those, lower_gather.c).
def value(r, c):
    return float(r) + (c + 1) / 1024.0 if r % 2 else -(float(r) + (c + 1) / 1024.0)
table = b''.join(struct.pack('<%df' % D, *[value(r, c) for c in range(D)]) for r in range(V))
init = vint(1, V) + vint(1, D) + vint(2, 1) + ld(8, 'word_embeddings') + ld(9, table)
m = model([node('Gather', ['word_embeddings', 'ids'], ['emb'], 'embedding')],
          [('ids', [N], 7)], [('emb', [N, D], 1)], [init])
w = sys.argv[1]
open(w + '/embedding.onnx', 'wb').write(m)
ids = [0, V - 1, 1, 2, 101, 102, 7592, 2088, 1012, 29999, 15000, 15001, -1, -V, 511, 512]
ids += [(i * 7919 + 13) % V for i in range(N - len(ids))]
open(w + '/ids.bin', 'wb').write(struct.pack('<%dq' % N, *ids))
want = b''.join(table[(i % V) * D * 4:(i % V + 1) * D * 4] for i in ids)
open(w + '/want.bin', 'wb').write(want)
bad = list(ids)
bad[77] = V                      # one past the end
open(w + '/bad_ids.bin', 'wb').write(struct.pack('<%dq' % N, *bad))

# f16: bit patterns of finite values other than -0 (0x8000), denormals
# (exponent 0) and the largest magnitudes (0x7bff, 0xfbff) among them.
D16 = 1024
def bits(r, c):
    b = (r * 40503 + c * 2654435761) % 0xf800
    if b >= 0x7c00:
        b += 0x400               # past the infinities and NaNs: 0x8000 ..
    return 0x0001 if b == 0x8000 else b
table16 = b''.join(struct.pack('<%dH' % D16, *[bits(r, c) for c in range(D16)]) for r in range(V))
init16 = vint(1, V) + vint(1, D16) + vint(2, 10) + ld(8, 'word_embeddings') + ld(9, table16)
m16 = model([node('Gather', ['word_embeddings', 'ids'], ['emb'], 'embedding')],
            [('ids', [N], 7)], [('emb', [N, D16], 10)], [init16])
open(w + '/embedding16.onnx', 'wb').write(m16)
open(w + '/want16.bin', 'wb').write(b''.join(table16[(i % V) * D16 * 2:(i % V + 1) * D16 * 2] for i in ids))
EOF
check "the model was written" test -s "$WORK/embedding.onnx"

expect 0 "" -- "$IPUSIM" compile "$WORK/embedding.onnx" -o "$WORK/emb.elf"
check "the executable" test -s "$WORK/emb.elf"

# Known ids (negative ones among them): every row exactly the table's.
expect 0 "" -- "$IPUSIM" run "$WORK/emb.elf" --input ids="$WORK/ids.bin" --output emb="$WORK/got.bin"
check "the looked-up rows are the table's rows" cmp -s "$WORK/got.bin" "$WORK/want.bin"

# An id out of range: the gather codelet's trap 0x49 on a table tile.
expect 3 "simulated exception: tile [0-9]+, worker [0-5], pc 0x[0-9a-f]+ \(in vtx_gather_range\+0x[0-9a-f]+\): breakpoint: trap 73" -- "$IPUSIM" run "$WORK/emb.elf" \
    --input ids="$WORK/bad_ids.bin" --output emb="$WORK/bad.bin"

# f16: the table's rows split over tiles, the partials summed.
expect 0 "" -- "$IPUSIM" compile "$WORK/embedding16.onnx" -o "$WORK/emb16.elf"
printf 'break vtx_reduce_partials_f16\nrun\nquit\n' >"$WORK/sums.gdb"
expect 0 "Breakpoint 1, tile [0-9]+, worker [0-5], pc 0x[0-9a-f]+ <vtx_reduce_partials_f16>" -- \
    "$IPUSIM" debug "$WORK/emb16.elf" --batch -x "$WORK/sums.gdb" </dev/null
expect 0 "" -- "$IPUSIM" run "$WORK/emb16.elf" --input ids="$WORK/ids.bin" --output emb="$WORK/got16.bin"
check "the f16 rows are the table's rows, bit for bit" cmp -s "$WORK/got16.bin" "$WORK/want16.bin"

finish
