# A small numpy evaluator for the ops the tests/models architectures use,
# in float64: the reference when onnxruntime cannot run here, and a
# cross-check of onnxruntime when it can.  Not a general ONNX runtime:
# only the ops and attributes make_models.py writes (and the ResNet-50 of
# bench/), each checked against the ONNX operator specification.
import math

import numpy as np
from onnx import helper, numpy_helper

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _conv(x, w, b, strides, pads, dil, group):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    assert group == 1 and cg == c and dil == [1, 1]
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - kh) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - kw) // strides[1] + 1
    cols = np.empty((n, c, kh, kw, oh, ow), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + strides[0] * oh:strides[0], j:j + strides[1] * ow:strides[1]]
    y = np.einsum("nckloq,mckl->nmoq", cols, w, optimize=True)
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def _maxpool(x, k, strides, pads):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])), constant_values=-np.inf)
    oh = (h + pads[0] + pads[2] - k[0]) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - k[1]) // strides[1] + 1
    y = np.full((n, c, oh, ow), -np.inf)
    for i in range(k[0]):
        for j in range(k[1]):
            y = np.maximum(y, xp[:, :, i:i + strides[0] * oh:strides[0], j:j + strides[1] * ow:strides[1]])
    return y


def run(model, inputs):
    """Evaluate model (onnx.ModelProto) on {name: array}; float64 outputs."""
    env = {}
    for t in model.graph.initializer:
        a = numpy_helper.to_array(t)
        env[t.name] = a.astype(np.float64) if a.dtype.kind == "f" else a
    for k, v in inputs.items():
        env[k] = v.astype(np.float64) if v.dtype.kind == "f" else v
    for node in model.graph.node:
        a = _attrs(node)
        x = [env[i] if i else None for i in node.input]
        op = node.op_type
        if op == "Add":
            y = x[0] + x[1]
        elif op == "Sub":
            y = x[0] - x[1]
        elif op == "Mul":
            y = x[0] * x[1]
        elif op == "Div":
            y = x[0] / x[1]
        elif op == "MatMul":
            y = np.matmul(x[0], x[1])
        elif op == "Gemm":
            A = x[0].T if a.get("transA", 0) else x[0]
            B = x[1].T if a.get("transB", 0) else x[1]
            y = a.get("alpha", 1.0) * (A @ B)
            if len(x) > 2 and x[2] is not None:
                y = y + a.get("beta", 1.0) * x[2]
        elif op == "Identity":
            y = x[0]
        elif op == "Relu":
            y = np.maximum(x[0], 0)
        elif op == "Tanh":
            y = np.tanh(x[0])
        elif op == "Erf":
            y = _erf(x[0])
        elif op == "Gelu":
            y = 0.5 * x[0] * (1.0 + _erf(x[0] / math.sqrt(2.0)))
        elif op == "Softmax":
            ax = a.get("axis", -1)
            e = np.exp(x[0] - x[0].max(axis=ax, keepdims=True))
            y = e / e.sum(axis=ax, keepdims=True)
        elif op == "Conv":
            k = a["kernel_shape"]
            y = _conv(x[0], x[1], x[2] if len(x) > 2 else None, a.get("strides", [1] * len(k)),
                      a.get("pads", [0] * 2 * len(k)), a.get("dilations", [1] * len(k)),
                      a.get("group", 1))
        elif op == "BatchNormalization":
            s = (1, -1) + (1,) * (x[0].ndim - 2)
            g, b, mu, var = (v.reshape(s) for v in x[1:5])
            y = (x[0] - mu) / np.sqrt(var + a.get("epsilon", 1e-5)) * g + b
        elif op == "MaxPool":
            k = a["kernel_shape"]
            y = _maxpool(x[0], k, a.get("strides", [1, 1]), a.get("pads", [0, 0, 0, 0]))
        elif op == "GlobalAveragePool":
            y = x[0].mean(axis=(2, 3), keepdims=True)
        elif op == "Flatten":
            ax = a.get("axis", 1)
            y = x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)
        elif op == "Reshape":
            y = x[0].reshape([int(d) for d in x[1]])
        elif op == "Transpose":
            y = np.transpose(x[0], a["perm"])
        elif op == "Gather":
            y = np.take(x[0], x[1], axis=a.get("axis", 0))
        elif op == "LayerNormalization":
            ax = a.get("axis", -1)
            axes = tuple(range(ax % x[0].ndim, x[0].ndim))
            mu = x[0].mean(axis=axes, keepdims=True)
            var = ((x[0] - mu) ** 2).mean(axis=axes, keepdims=True)
            y = (x[0] - mu) / np.sqrt(var + a.get("epsilon", 1e-5)) * x[1]
            if len(x) > 2 and x[2] is not None:
                y = y + x[2]
        elif op in ("QuantizeLinear", "DequantizeLinear"):
            # per tensor, or per axis (opset 13): the scale along `axis`
            s = (1,) * x[0].ndim
            if x[1].size > 1:
                s = list(s)
                s[a.get("axis", 1) % x[0].ndim] = -1
            sc = x[1].reshape(s)
            zp = x[2].reshape(s).astype(np.float64) if len(x) > 2 and x[2] is not None else 0.0
            if op == "DequantizeLinear":
                y = (x[0].astype(np.float64) - zp) * sc
            else:
                dt = x[2].dtype if len(x) > 2 and x[2] is not None else np.uint8
                lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
                y = np.clip(np.rint(x[0] / sc) + zp, lo, hi).astype(dt)
        else:
            raise NotImplementedError(f"np_ref: op {op} (node {node.name})")
        env[node.output[0]] = y
    return {o.name: env[o.name] for o in model.graph.output}
