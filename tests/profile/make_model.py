#!/usr/bin/python3
"""A small CNN with named nodes (seeded weights) for the profile tests:
Conv -> Relu -> MaxPool -> Conv -> GlobalAveragePool -> Flatten -> Gemm
-> Softmax.  Usage: make_model.py OUT.onnx"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(15)


def const(name, shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.2, name)


inits = [const("w1", (8, 3, 3, 3)), const("b1", (8,)), const("w2", (16, 8, 3, 3)),
         const("fcw", (16, 10)), const("fcb", (10,))]
nodes = [
    helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], name="stem_conv", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"], name="stem_relu"),
    helper.make_node("MaxPool", ["r1"], ["p1"], name="stem_pool", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p1", "w2"], ["c2"], name="block_conv", pads=[1, 1, 1, 1]),
    helper.make_node("GlobalAveragePool", ["c2"], ["g"], name="head_pool"),
    helper.make_node("Flatten", ["g"], ["f"], name="head_flatten"),
    helper.make_node("Gemm", ["f", "fcw", "fcb"], ["logits"], name="classifier"),
    helper.make_node("Softmax", ["logits"], ["probs"], name="probabilities", axis=1),
]
graph = helper.make_graph(nodes, "profile_cnn",
                          [helper.make_tensor_value_info("image", TensorProto.FLOAT, [2, 3, 16, 16])],
                          [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [2, 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
