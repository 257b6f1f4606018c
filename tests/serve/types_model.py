# SPDX-License-Identifier: MIT
"""A model with an input and an output of every datatype the protocol and
the runtime share: NB = Not(B) (BOOL), I2 = I + I (INT32), L2 = L + L
(INT64), UF = float(U) (UINT8), SF = float(S) (INT8), rows along dim 0.
Usage: types_model.py OUT.onnx"""
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h

nodes = [h.make_node("Not", ["B"], ["NB"]),
         h.make_node("Add", ["I", "I"], ["I2"]),
         h.make_node("Add", ["L", "L"], ["L2"]),
         h.make_node("Cast", ["U"], ["UF"], to=T.FLOAT),
         h.make_node("Cast", ["S"], ["SF"], to=T.FLOAT)]
g = h.make_graph(nodes, "types",
    [h.make_tensor_value_info("B", T.BOOL, ["N", 3]), h.make_tensor_value_info("I", T.INT32, ["N", 3]),
     h.make_tensor_value_info("L", T.INT64, ["N", 3]), h.make_tensor_value_info("U", T.UINT8, ["N", 3]),
     h.make_tensor_value_info("S", T.INT8, ["N", 3])],
    [h.make_tensor_value_info("NB", T.BOOL, ["N", 3]), h.make_tensor_value_info("I2", T.INT32, ["N", 3]),
     h.make_tensor_value_info("L2", T.INT64, ["N", 3]), h.make_tensor_value_info("UF", T.FLOAT, ["N", 3]),
     h.make_tensor_value_info("SF", T.FLOAT, ["N", 3])])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
onnx.checker.check_model(m); onnx.save(m, sys.argv[1])
