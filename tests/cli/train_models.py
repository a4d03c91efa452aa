"""The small models the training tests write as ONNX files (with
onnx_proto.py beside this file): mlp.onnx, a two-layer perceptron on
[32, 16] inputs with 10 classes, and cnn.onnx, two 3x3 convolutions, a
global average pool and a classifier of 5 on [4, 4, 8, 8] images.  Usage:
python3 train_models.py DIR (both written into DIR)."""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_proto import *  # noqa: E402
w = sys.argv[1]
mlp = model([node('MatMul', ['x', 'w1'], ['h0'], 'fc1'), node('Add', ['h0', 'b1'], ['h1'], 'bias1'),
             node('Relu', ['h1'], ['h'], 'relu1'), node('MatMul', ['h', 'w2'], ['l0'], 'fc2'),
             node('Add', ['l0', 'b2'], ['logits'], 'bias2')],
            [('x', [32, 16])], [('logits', [32, 10])],
            [initializer_values('w1', [16, 32], uniform(512, 1, 1 / math.sqrt(16))),
             initializer_values('b1', [32], [0.0] * 32),
             initializer_values('w2', [32, 10], uniform(320, 2, 1 / math.sqrt(32))),
             initializer_values('b2', [10], [0.0] * 10)])
open(w + '/mlp.onnx', 'wb').write(mlp)
conv = lambda name, x, wt, y, pads, strides: node('Conv', [x, wt], [y], name,
                                                  [attr_ints('pads', pads), attr_ints('strides', strides)])
cnn = model([conv('conv1', 'x', 'k1', 'c1', [1, 1, 1, 1], [1, 1]), node('Relu', ['c1'], ['r1'], 'relu1'),
             conv('conv2', 'r1', 'k2', 'c2', [1, 1, 1, 1], [2, 2]), node('Relu', ['c2'], ['r2'], 'relu2'),
             node('GlobalAveragePool', ['r2'], ['p'], 'pool'), node('Flatten', ['p'], ['f'], 'flatten'),
             node('Gemm', ['f', 'wf', 'bf'], ['logits'], 'fc')],
            [('x', [4, 4, 8, 8])], [('logits', [4, 5])],
            [initializer_values('k1', [8, 4, 3, 3], uniform(288, 3, 1 / math.sqrt(36))),
             initializer_values('k2', [16, 8, 3, 3], uniform(1152, 4, 1 / math.sqrt(72))),
             initializer_values('wf', [16, 5], uniform(80, 5, 0.25)),
             initializer_values('bf', [5], [0.0] * 5)])
open(w + '/cnn.onnx', 'wb').write(cnn)
