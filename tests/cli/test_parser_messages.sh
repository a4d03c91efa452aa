#!/usr/bin/env bash
# Messages of the ONNX path that name what they are about (tests/BAD_INPUTS.md,
# "Parsers: assembly and ONNX"): a comparison of an unsupported type names
# the type; a run-time Gather index out of range stops with the embedding
# codelet's trap, named with its meaning.  The ONNX models are written here
# with tests/cli/onnx_proto.py.
source "$(dirname "$0")/lib.sh"

IPUSIM=$(realpath "$IPUSIM")
cd "$WORK" || exit 1

PYTHONPATH="$CLI_DIR" python3 - "$WORK" <<'EOF'
import struct, sys

from onnx_proto import *

w = sys.argv[1]
open(w + '/equal_i64.onnx', 'wb').write(model([node('Equal', ['a', 'b'], ['c'], 'eq')],
                                              [('a', [4, 8], 7), ('b', [4, 8], 7)], [('c', [4, 8], 9)]))
V, D, N = 1000, 16, 8
table = b''.join(struct.pack('<%df' % D, *[r + c / 32.0 for c in range(D)]) for r in range(V))
init = vint(1, V) + vint(1, D) + vint(2, 1) + ld(8, 'table') + ld(9, table)
open(w + '/gather.onnx', 'wb').write(model([node('Gather', ['table', 'ids'], ['rows'], 'embedding')],
                                           [('ids', [N], 7)], [('rows', [N, D], 1)], [init]))
open(w + '/bad_ids.bin', 'wb').write(struct.pack('<%dq' % N, 0, 1, 2, V, 4, 5, 6, 7))
EOF
check "the models were written" test -s "$WORK/gather.onnx"

# A comparison of i64 names the type it refuses.
expect 1 "^ipusim: .*/equal_i64\.onnx: node 'eq' \(Equal\): comparisons of i64 are not supported \(f32 and i32 are\)$" -- \
    "$IPUSIM" compile "$WORK/equal_i64.onnx" -o "$WORK/eq.elf"
check "no executable for the refused model" test ! -e "$WORK/eq.elf"

# An index past the table: the embedding codelet's trap, with what it checks.
expect 0 "" -- "$IPUSIM" compile "$WORK/gather.onnx" -o "$WORK/gather.elf"
expect 3 "simulated exception: tile [0-9]+, worker [0-5], pc 0x[0-9a-f]+ \(in vtx_gather_range\+0x[0-9a-f]+\): breakpoint: trap 73: gather index out of range of the table \(workloads/codelets/embedding\.S\)$" -- \
    "$IPUSIM" run "$WORK/gather.elf" --input ids="$WORK/bad_ids.bin" --output rows="$WORK/rows.bin"

finish
