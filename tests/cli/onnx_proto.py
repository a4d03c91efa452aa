"""onnx_proto.py — ONNX models written with python3's standard library only,
for the command-line tests that need a model file (test_compile_bad_input.sh,
test_gather.sh, test_parser_messages.sh): the protobuf wire format and the
onnx.proto field numbers they use."""
import struct


# Protobuf wire format: varints, and length-delimited fields (wire type 2).
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


# onnx.proto field numbers (ModelProto, GraphProto, NodeProto, ...).
def value_info(name, dims, elem=1):
    """ValueInfoProto{name, type{tensor_type{elem_type, shape}}}; elem_type 1 f32, 7 i64, 9 bool."""
    shape = b''.join(ld(1, vint(1, d)) for d in dims)
    return ld(1, name) + ld(2, ld(1, vint(1, elem) + ld(2, shape)))


def attr_int(name, v):
    """AttributeProto{name, type INT, i}."""
    return ld(1, name) + vint(20, 2) + vint(3, v)


def node(op, ins, outs, name, attrs=()):
    return (b''.join(ld(1, i) for i in ins) + b''.join(ld(2, o) for o in outs) + ld(3, name) + ld(4, op)
            + b''.join(ld(5, a) for a in attrs))


def initializer(name, dims, value):
    """TensorProto{dims, data_type f32, name, raw_data}: every element `value`."""
    n = 1
    for d in dims:
        n *= d
    return b''.join(vint(1, d) for d in dims) + vint(2, 1) + ld(8, name) + ld(9, struct.pack('<f', value) * n)


def model(nodes, inputs, outputs, inits=()):
    """ModelProto of opset 13; inputs and outputs are (name, dims[, elem_type])."""
    g = (b''.join(ld(1, n) for n in nodes) + ld(2, 'g') + b''.join(ld(5, t) for t in inits)
         + b''.join(ld(11, value_info(*i)) for i in inputs) + b''.join(ld(12, value_info(*o)) for o in outputs))
    return vint(1, 8) + ld(2, 'ipusim-test') + ld(7, g) + ld(8, ld(1, '') + vint(2, 13))


def initializer_values(name, dims, values):
    """TensorProto{dims, data_type f32, name, raw_data}: the given values, row-major."""
    return b''.join(vint(1, d) for d in dims) + vint(2, 1) + ld(8, name) + ld(9, struct.pack('<%df' % len(values), *values))


def attr_ints(name, values):
    """AttributeProto{name, type INTS, ints}."""
    return ld(1, name) + vint(20, 7) + b''.join(vint(8, v) for v in values)


def uniform(n, seed, scale):
    """n values uniform in [-scale, scale) from a small LCG (the same on every host)."""
    out = []
    for _ in range(n):
        seed = (seed * 1103515245 + 12345) & 0x7fffffff
        out.append(scale * (2.0 * seed / 0x80000000 - 1.0))
    return out
