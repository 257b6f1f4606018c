#!/usr/bin/python3
# Generate the test architectures as ONNX models with fixed seeds, plus
# their inputs as .npy files (numpy's RandomState, so the same bytes on
# every machine):
#
#   mlp          x f32[16,784] -> MatMul+Add (784x512), Relu, Gemm(transB,
#                512->256), Tanh, Gemm (256->10), Softmax -> y f32[16,10]
#   resnet       x f32[4,3,32,32] -> Conv+BatchNorm+Relu, MaxPool, basic
#                blocks of 16, 32, 64 channels (identity shortcut, then two
#                downsampling ones with a 1x1 conv shortcut), residual Adds,
#                GlobalAveragePool, Flatten, Gemm -> y f32[4,10]
#   transformer  tokens i64[2,32] (vocabulary 1000, d 128, 4 heads, ff 512)
#                -> Gather (token embedding) + positions,
#                2 post-LN encoder layers (MatMul q/k/v, Reshape/Transpose
#                heads, MatMul, scale, Softmax, MatMul, out-projection,
#                residual Add, LayerNormalization, MatMul+Gelu+MatMul) ->
#                y f32[2,32,128]
#   resnet50     (--resnet50 only, for bench/) ResNet-50's topology
#                (bottleneck blocks 3-4-6-3, 25.6M parameters) with random
#                weights, x f32[N,3,H,W]
#
# Gelu is an opset-20 operator (ONNX 1.12 and onnxruntime's opset-17 models
# do not have it); ipu-compile accepts it in any opset.  For the reference
# each model also gets NAME.ref.onnx in which Gelu is written as exporters
# write it below opset 20: x * 0.5 * (1 + Erf(x / sqrt(2))).
#
# Usage: make_models.py OUTDIR [--resnet50[=N,H,W]] [--only a,b]
# Needs Debian's python3-onnx and python3-numpy (/usr/bin/python3).
import argparse
import json
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class Builder:
    def __init__(self, name, seed):
        self.name = name
        self.rng = np.random.RandomState(seed)
        self.nodes = []
        self.inits = []
        self.n = 0

    def uniq(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, base, arr):
        name = self.uniq(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def weight(self, base, shape, fan_in, gain=1.0):
        w = self.rng.standard_normal(shape) * (gain / math.sqrt(fan_in))
        return self.const(base, w.astype(np.float32))

    def node(self, op, inputs, base=None, **attrs):
        out = self.uniq(base or op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=self.uniq(op), **attrs))
        return out

    def rename_output(self, old, new):
        for n in self.nodes:
            n.output[:] = [new if o == old else o for o in n.output]

    def model(self, inputs, outputs):
        g = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="ipu-stack tests/models")
        m.ir_version = 8
        return m

    # layers --------------------------------------------------------
    def conv_bn(self, x, cin, cout, k, stride=1, relu=True, gamma_scale=1.0):
        w = self.weight("conv_w", (cout, cin, k, k), cin * k * k, gain=math.sqrt(2.0))
        y = self.node("Conv", [x, w], "conv", kernel_shape=[k, k], strides=[stride, stride],
                      pads=[k // 2] * 4)
        gamma = self.const("bn_gamma", (gamma_scale * (0.5 + self.rng.rand(cout))).astype(np.float32))
        beta = self.const("bn_beta", (0.1 * self.rng.standard_normal(cout)).astype(np.float32))
        mean = self.const("bn_mean", (0.1 * self.rng.standard_normal(cout)).astype(np.float32))
        var = self.const("bn_var", (0.5 + self.rng.rand(cout)).astype(np.float32))
        y = self.node("BatchNormalization", [y, gamma, beta, mean, var], "bn", epsilon=1e-5)
        if relu:
            y = self.node("Relu", [y], "relu")
        return y

    def linear(self, x, cin, cout, gain=1.0):
        w = self.weight("w", (cin, cout), cin, gain)
        b = self.const("b", (0.05 * self.rng.standard_normal(cout)).astype(np.float32))
        return self.node("Add", [self.node("MatMul", [x, w], "mm"), b], "lin")


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def make_mlp(seed=1, batch=16, din=784):
    b = Builder("mlp", seed)
    h = b.node("Relu", [b.linear("x", din, 512, gain=math.sqrt(2.0))])
    w2 = b.weight("w2", (256, 512), 512)  # Gemm with transB: [N, K]
    b2 = b.const("b2", (0.05 * b.rng.standard_normal(256)).astype(np.float32))
    h = b.node("Tanh", [b.node("Gemm", [h, w2, b2], "gemm", transB=1)])
    w3 = b.weight("w3", (256, 10), 256, gain=2.0)
    b3 = b.const("b3", (0.05 * b.rng.standard_normal(10)).astype(np.float32))
    y = b.node("Softmax", [b.node("Gemm", [h, w3, b3], "logits")], axis=-1)
    b.rename_output(y, "y")
    m = b.model([vi("x", TensorProto.FLOAT, [batch, din])], [vi("y", TensorProto.FLOAT, [batch, 10])])
    rng = np.random.RandomState(seed + 1000)
    return m, {"x": rng.standard_normal((batch, din)).astype(np.float32)}


def make_resnet(seed=2, batch=4, hw=32):
    b = Builder("resnet", seed)
    h = b.conv_bn("x", 3, 16, 3)
    h = b.node("MaxPool", [h], "pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    # basic block, identity shortcut
    r = b.conv_bn(h, 16, 16, 3)
    r = b.conv_bn(r, 16, 16, 3, relu=False)
    h = b.node("Relu", [b.node("Add", [h, r], "res")])
    # downsampling blocks, projection shortcuts
    for cin, cout in ((16, 32), (32, 64)):
        r = b.conv_bn(h, cin, cout, 3, stride=2)
        r = b.conv_bn(r, cout, cout, 3, relu=False)
        s = b.conv_bn(h, cin, cout, 1, stride=2, relu=False)
        h = b.node("Relu", [b.node("Add", [s, r], "res")])
    h = b.node("Flatten", [b.node("GlobalAveragePool", [h], "gap")], "flat", axis=1)
    w = b.weight("fc_w", (64, 10), 64, gain=2.0)
    bias = b.const("fc_b", (0.05 * b.rng.standard_normal(10)).astype(np.float32))
    y = b.node("Gemm", [h, w, bias], "fc")
    b.rename_output(y, "y")
    m = b.model([vi("x", TensorProto.FLOAT, [batch, 3, hw, hw])],
                [vi("y", TensorProto.FLOAT, [batch, 10])])
    rng = np.random.RandomState(seed + 1000)
    return m, {"x": rng.standard_normal((batch, 3, hw, hw)).astype(np.float32)}


def make_transformer(seed=3, batch=2, seq=32, vocab=1000, d=128, heads=4, ff=512, layers=2):
    b = Builder("transformer", seed)
    dh = d // heads
    emb = b.const("tok_emb", (0.5 * b.rng.standard_normal((vocab, d))).astype(np.float32))
    pos = b.const("pos_emb", (0.5 * b.rng.standard_normal((seq, d))).astype(np.float32))
    x = b.node("Add", [b.node("Gather", [emb, "tokens"], "emb", axis=0), pos], "x")
    shape_heads = b.const("shape_heads", np.array([batch, seq, heads, dh], dtype=np.int64))
    shape_model = b.const("shape_model", np.array([batch, seq, d], dtype=np.int64))
    scale = b.const("scale", np.array(1.0 / math.sqrt(dh), dtype=np.float32))

    def layer_norm(v):
        g = b.const("ln_g", (1.0 + 0.1 * b.rng.standard_normal(d)).astype(np.float32))
        be = b.const("ln_b", (0.1 * b.rng.standard_normal(d)).astype(np.float32))
        return b.node("LayerNormalization", [v, g, be], "ln", axis=-1, epsilon=1e-5)

    for _ in range(layers):
        def heads_of(v, perm):
            return b.node("Transpose", [b.node("Reshape", [v, shape_heads], "rs")], "tr", perm=perm)
        q = heads_of(b.linear(x, d, d), [0, 2, 1, 3])   # [B,H,S,dh]
        k = heads_of(b.linear(x, d, d), [0, 2, 3, 1])   # [B,H,dh,S]
        v = heads_of(b.linear(x, d, d), [0, 2, 1, 3])   # [B,H,S,dh]
        s = b.node("Mul", [b.node("MatMul", [q, k], "qk"), scale], "scaled")
        p = b.node("Softmax", [s], "attn", axis=-1)
        a = b.node("MatMul", [p, v], "av")
        a = b.node("Reshape", [b.node("Transpose", [a], "tr", perm=[0, 2, 1, 3]), shape_model], "rs")
        x = layer_norm(b.node("Add", [x, b.linear(a, d, d)], "res"))
        f = b.node("Gelu", [b.linear(x, d, ff, gain=math.sqrt(2.0))], "gelu")
        x = layer_norm(b.node("Add", [x, b.linear(f, ff, d)], "res"))
    b.rename_output(x, "y")
    m = b.model([vi("tokens", TensorProto.INT64, [batch, seq])],
                [vi("y", TensorProto.FLOAT, [batch, seq, d])])
    rng = np.random.RandomState(seed + 1000)
    return m, {"tokens": rng.randint(0, vocab, size=(batch, seq)).astype(np.int64)}


def make_resnet50(seed=50, batch=1, hw=224):
    """ResNet-50 v1.5 topology (torchvision), random weights, BN kept."""
    b = Builder("resnet50", seed)
    h = b.conv_bn("x", 3, 64, 7, stride=2)
    h = b.node("MaxPool", [h], "pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            st = stride if i == 0 else 1
            cout = width * 4
            r = b.conv_bn(h, cin, width, 1)
            r = b.conv_bn(r, width, width, 3, stride=st)
            # small last-BN scales (as torchvision's zero_init_residual, but
            # not zero): activations stay O(1) over the 16 blocks, so the
            # fp16 executable does not overflow
            r = b.conv_bn(r, width, cout, 1, relu=False, gamma_scale=0.2)
            s = h if (i > 0) else b.conv_bn(h, cin, cout, 1, stride=st, relu=False,
                                             gamma_scale=0.5)
            h = b.node("Relu", [b.node("Add", [s, r], "res")])
            cin = cout
    h = b.node("Flatten", [b.node("GlobalAveragePool", [h], "gap")], "flat", axis=1)
    w = b.weight("fc_w", (2048, 1000), 2048)
    bias = b.const("fc_b", np.zeros(1000, dtype=np.float32))
    y = b.node("Gemm", [h, w, bias], "fc")
    b.rename_output(y, "y")
    m = b.model([vi("x", TensorProto.FLOAT, [batch, 3, hw, hw])],
                [vi("y", TensorProto.FLOAT, [batch, 1000])])
    rng = np.random.RandomState(seed + 1000)
    return m, {"x": rng.standard_normal((batch, 3, hw, hw)).astype(np.float32)}


def gelu_as_erf(m):
    """Copy of m with every Gelu node written with Erf (opset < 20 form)."""
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    g = m2.graph
    new_nodes = []
    consts = {"gelu_rsqrt2": 1.0 / math.sqrt(2.0), "gelu_one": 1.0, "gelu_half": 0.5}
    used = False
    for n in g.node:
        if n.op_type != "Gelu":
            new_nodes.append(n)
            continue
        used = True
        x, y, p = n.input[0], n.output[0], n.name
        new_nodes += [
            helper.make_node("Mul", [x, "gelu_rsqrt2"], [p + "_s"], name=p + "_mul0"),
            helper.make_node("Erf", [p + "_s"], [p + "_e"], name=p + "_erf"),
            helper.make_node("Add", [p + "_e", "gelu_one"], [p + "_a"], name=p + "_add"),
            helper.make_node("Mul", [x, p + "_a"], [p + "_m"], name=p + "_mul1"),
            helper.make_node("Mul", [p + "_m", "gelu_half"], [y], name=p + "_mul2"),
        ]
    del g.node[:]
    g.node.extend(new_nodes)
    if used:
        for k, v in consts.items():
            g.initializer.append(numpy_helper.from_array(np.array(v, dtype=np.float32), k))
    onnx.checker.check_model(m2)
    return m2


def save(outdir, name, model, inputs, meta):
    path = os.path.join(outdir, name + ".onnx")
    onnx.save(model, path)
    onnx.save(gelu_as_erf(model), os.path.join(outdir, name + ".ref.onnx"))
    shapes = []
    for k, v in inputs.items():
        np.save(os.path.join(outdir, f"{name}.in.{k}.npy"), v)
        # the fp16 executable takes float16 inputs (integer ones unchanged)
        v16 = v.astype(np.float16) if v.dtype == np.float32 else v
        np.save(os.path.join(outdir, f"{name}.in16.{k}.npy"), v16)
        shapes.append(f"{k}=" + ",".join(str(d) for d in v.shape))
    params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
    meta[name] = {
        "inputs": list(inputs.keys()),
        "input_shapes": shapes,
        "outputs": [o.name for o in model.graph.output],
        "nodes": len(model.graph.node),
        "params": params,
    }
    print(f"make_models.py: {name}: {len(model.graph.node)} nodes, {params} parameters, "
          f"inputs {' '.join(shapes)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--only", default="mlp,resnet,transformer")
    ap.add_argument("--resnet50", nargs="?", const="1,224,224", default=None,
                    help="also ResNet-50 at N,H,W (default 1,224,224)")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    meta = {}
    makers = {"mlp": make_mlp, "resnet": make_resnet, "transformer": make_transformer}
    for name in [s for s in a.only.split(",") if s]:
        m, ins = makers[name]()
        save(a.outdir, name, m, ins, meta)
    if a.resnet50:
        n, h, w = (int(v) for v in a.resnet50.split(","))
        assert h == w
        m, ins = make_resnet50(batch=n, hw=h)
        tag = "resnet50" if (n, h) == (1, 224) else f"resnet50_{n}x{h}"
        save(a.outdir, tag, m, ins, meta)
    path = os.path.join(a.outdir, "models.json")
    old = {}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
    old.update(meta)
    with open(path, "w") as f:
        json.dump(old, f, indent=1)


if __name__ == "__main__":
    main()
