#!/usr/bin/env bash
# Messages of the ONNX path that name what they are about (tests/BAD_INPUTS.md,
# "Parsers: assembly and ONNX"): a comparison of an unsupported type names
# the type; a run-time Gather index out of range stops with the embedding
# codelet's trap, named with its meaning.  The ONNX models are written here
# from a few lines of protobuf encoding, as in test_compile_bad_input.sh.
source "$(dirname "$0")/lib.sh"

IPUSIM=$(realpath "$IPUSIM")
cd "$WORK" || exit 1

python3 - "$WORK" <<'EOF'
import struct, sys

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b, n = n & 0x7f, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)

def vint(field, n):
    return varint(field << 3) + varint(n)

def ld(field, b):
    b = b.encode() if isinstance(b, str) else b
    return varint(field << 3 | 2) + varint(len(b)) + b

# onnx.proto: ValueInfoProto{name, type{tensor_type{elem_type, shape}}}; elem_type 1 f32, 7 i64, 9 bool.
def value_info(name, dims, elem):
    shape = b''.join(ld(1, vint(1, d)) for d in dims)
    return ld(1, name) + ld(2, ld(1, vint(1, elem) + ld(2, shape)))

def node(op, ins, outs, name):
    return b''.join(ld(1, i) for i in ins) + b''.join(ld(2, o) for o in outs) + ld(3, name) + ld(4, op)

def model(nodes, inputs, outputs, inits=()):
    g = (b''.join(ld(1, n) for n in nodes) + ld(2, 'g') + b''.join(ld(5, t) for t in inits)
         + b''.join(ld(11, value_info(*i)) for i in inputs) + b''.join(ld(12, value_info(*o)) for o in outputs))
    return vint(1, 8) + ld(2, 'ipusim-test') + ld(7, g) + ld(8, ld(1, '') + vint(2, 13))

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
