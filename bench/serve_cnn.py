# SPDX-License-Identifier: MIT
"""A small CNN for the serving benchmark (seeded weights): x[B,1,28,28] ->
Conv 3x3 (8) -> Relu -> MaxPool 2 -> Conv 3x3 (16) -> Relu -> MaxPool 2 ->
Flatten -> Gemm (10).  Usage: serve_cnn.py OUT.onnx"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(5)


def w(*shape):
    return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


inits = [numpy_helper.from_array(w(8, 1, 3, 3), "c1w"), numpy_helper.from_array(w(8) * 0.1, "c1b"),
         numpy_helper.from_array(w(16, 8, 3, 3), "c2w"), numpy_helper.from_array(w(16) * 0.1, "c2b"),
         numpy_helper.from_array(w(16 * 5 * 5, 10), "fw"), numpy_helper.from_array(w(10) * 0.1, "fb")]
nodes = [
    helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], kernel_shape=[3, 3]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p1", "c2w", "c2b"], ["c2"], kernel_shape=[3, 3]),
    helper.make_node("Relu", ["c2"], ["r2"]),
    helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Flatten", ["p2"], ["f"], axis=1),
    helper.make_node("Gemm", ["f", "fw", "fb"], ["y"]),
]
g = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 1, 28, 28])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 10])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
