#!/usr/bin/python3
# A QDQ-quantized ResNet-18 end to end: torchvision's resnet18 (random
# weights, fixed seed, BatchNorm statistics calibrated as zoo.py does,
# exported to ONNX, where BatchNorm folds into the convolutions) turned into
# the QDQ form onnxruntime's quantize_static writes (qdq.py's converter
# generalised to any graph of Conv, Gemm and activations):
#   * every Conv and Gemm weight int8 per output channel (symmetric, zero
#     point 0) stored quantized behind a DequantizeLinear (axis 0), its bias
#     int32 at scale input scale x weight scale behind another;
#   * activations uint8 per tensor, calibrated (min/max) on a seeded batch:
#     a QuantizeLinear -> DequantizeLinear pair after the graph input, after
#     every Relu, Add, MaxPool, GlobalAveragePool and Flatten whose output
#     is not only read by a Relu, after every Conv whose output is not only
#     read by a Relu, and after the classifier's Gemm.
# ipu-compile in fp32 and fp16 must fold every weight's and bias's QDQ at
# compile time and say so, and ipu-run's outputs must match the reference
# (onnxruntime-node on the QDQ model when it runs here, numpy float64
# otherwise), counted in output steps.
#
# qdq.py's judgement (at most 1 output in 50 a step off in fp32) holds for
# its two quantized layers, not for 20: a value within rounding of a step's
# edge in an early layer lands on either side on two correct
# implementations, and the step it moves is carried and amplified by every
# later layer.  Two correct references show the size of it: onnxruntime
# (float32) and numpy (float64) disagree on 13 % of the outputs, by up to 3
# steps (mean 0.15).  The deep judgement therefore bounds the mean and the
# 99th percentile of the difference in steps and asks for the same top
# class: fp32 mean <= 1 step, 99 % within 4 steps, every top-1 the
# reference's (today 0.75, 3.0, all); fp16, whose activations are rounded
# to float16 between the quantizers (a relative 5e-4 that moves many
# values across a step's edge), mean <= 2.5, 99 % within 8, top-1 on 3 of
# 4 (today 1.9, 6.0, 3 of 4).  The float model (QDQ nodes dropped) must
# fail the fp32 judgement (today mean 2.65 steps, 99 % within 8.6); in
# fp16 it is printed, not judged: float16's own noise is as large as the
# quantization's there (mean 2.6 against the device's 1.9).
# Where the device's difference comes from (measured on the models cut
# after each activation QDQ pair, against numpy float64, seeded inputs,
# batch 4): the QuantizeLinear after conv1 agrees on all 262144 values of
# normal inputs (on uniform ones like --check's, 1 differs, 4e-6 of a step
# from a rounding edge); layer1.0's first differs on 1 value in 65536, 8e-6
# of a step from an edge: the float32 sums of the device's convolutions
# against float64's.  The later differences grow from these (14 values
# after layer1.0's residual Add, 138 one layer later); none was found far
# from an edge in the layer where it first appears, so QuantizeLinear's
# rounding (half to even), its saturation and the dequantisation's order
# agree with ONNX's.  onnxruntime presumably runs the QDQ convolutions as
# integer ones (exact sums), which would put float64 numpy closer to it.
# The test checks those first two quantizers value by value (edge_check:
# on its input, 0 of 262144 and 3 of 65536 differ, each within 1e-4 of a
# step from an edge), which the output judgement is too loose to do.
# --precision fp8_weight must compile and say that the model's scales do
# not map onto fp8's (its error is printed, not judged).
#
# Usage: qdq_resnet.py --bin build/bin --work DIR [--ref auto|ort|numpy]
#                      [--hw 64] [--batch 4]
# Ends with "qdq-resnet: N passed, N failed".
import argparse
import os
import sys

import numpy as np
import onnx
import onnx.utils
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import np_ref  # noqa: E402
import qdq  # noqa: E402

OPSET = 13
# precision: (largest mean difference, largest 99th percentile, in output
# steps; the least share of inputs whose top class is the reference's)
DEEP_RULES = {"fp32": (1.0, 4.0, 1.0), "fp16": (2.5, 8.0, 0.75)}


def judge(got, ref, step, prec):
    """(passes, mean, 99th percentile in steps, top-1 agreement)."""
    mean_max, p99_max, top1_min = DEEP_RULES[prec]
    d = np.abs(got.astype(np.float64) - ref) / step
    mean, p99 = float(d.mean()), float(np.percentile(d, 99))
    top1 = float(np.mean(got.argmax(axis=1) == ref.argmax(axis=1)))
    return (bool(np.isfinite(got).all()) and mean <= mean_max and p99 <= p99_max
            and top1 >= top1_min), mean, p99, top1
# outputs that get an activation QDQ pair unless a Relu alone reads them
ACT_OPS = ("Conv", "Relu", "Add", "MaxPool", "GlobalAveragePool", "Flatten", "Gemm")


def float_resnet(work, hw, batch, seed=18):
    """torchvision resnet18 exported to ONNX (BatchNorm folded)."""
    import torch
    import torchvision
    import zoo
    torch.manual_seed(seed)
    m = torchvision.models.resnet18()
    shape = (batch, 3, hw, hw)
    zoo.calibrate(m, shape, seed)
    m.eval()
    path = os.path.join(work, "resnet18_float.onnx")
    torch.onnx.export(m, torch.randn(shape, generator=torch.Generator().manual_seed(seed + 2)),
                      path, opset_version=OPSET, input_names=["x"], output_names=["y"])
    return onnx.load(path)


def consumers(g):
    c = {}
    for n in g.node:
        for i in n.input:
            c.setdefault(i, []).append(n)
    return c


def act_tensors(g):
    """The tensors that get a QDQ pair: the input and the activations."""
    cons = consumers(g)
    outs = {o.name for o in g.output}
    names = [g.input[0].name]
    for n in g.node:
        if n.op_type not in ACT_OPS:
            continue
        t = n.output[0]
        readers = cons.get(t, [])
        if t not in outs and readers and all(r.op_type == "Relu" for r in readers):
            continue    # the Relu's output carries the pair
        names.append(t)
    return names


def calibrate(m, names, x):
    """uint8 (scale, zero point) per tensor from min/max on x."""
    mm = onnx.ModelProto()
    mm.CopyFrom(m)
    have = {o.name for o in mm.graph.output}
    mm.graph.output.extend([helper.make_tensor_value_info(v, TensorProto.FLOAT, None)
                            for v in names if v not in have and v != mm.graph.input[0].name])
    outs = np_ref.run(mm, {mm.graph.input[0].name: x})
    outs[mm.graph.input[0].name] = x
    act = {}
    for v in names:
        lo, hi = min(float(outs[v].min()), 0.0), max(float(outs[v].max()), 0.0)
        s = (hi - lo) / 255.0 if hi > lo else 1.0
        act[v] = (np.float32(s), int(np.clip(np.rint(-lo / s), 0, 255)))
    return act


def float_output(m):
    """m with its output computed as NAME_f and copied to NAME by an
    Identity, so that a QDQ pair can sit between the two."""
    g = m.graph
    name = g.output[0].name
    for n in g.node:
        for k, o in enumerate(n.output):
            if o == name:
                n.output[k] = name + "_f"
        for k, i in enumerate(n.input):
            if i == name:
                n.input[k] = name + "_f"
    g.node.append(helper.make_node("Identity", [name + "_f"], [name], name="output"))
    return m


def to_qdq(m, act):
    """m in QDQ form: weights and biases quantized behind DequantizeLinear,
    a QuantizeLinear -> DequantizeLinear pair after every tensor of act.
    Returns it and the number of weight and bias DequantizeLinear."""
    g = m.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    keep = [t for t in g.initializer]
    nodes = []
    rename = {}     # tensor -> its dequantized name, for the readers

    def add_init(name, a):
        keep.append(numpy_helper.from_array(a, name))
        return name

    def pair(t):
        s, z = act[t]
        add_init(t + "_s", np.array(s, np.float32))
        add_init(t + "_z", np.array(z, np.uint8))
        nodes.append(helper.make_node("QuantizeLinear", [t, t + "_s", t + "_z"], [t + "_q"],
                                      name=t + "/QuantizeLinear"))
        nodes.append(helper.make_node("DequantizeLinear", [t + "_q", t + "_s", t + "_z"],
                                      [t + "_dq"], name=t + "/DequantizeLinear"))
        rename[t] = t + "_dq"

    def weight(name, w):
        red = tuple(range(1, w.ndim))
        s = (np.abs(w).max(axis=red) / 127.0).astype(np.float32)
        s[s == 0] = 1.0
        q = np.clip(np.rint(w / s.reshape((-1,) + (1,) * (w.ndim - 1))), -127, 127).astype(np.int8)
        add_init(name + "_q", q)
        add_init(name + "_ws", s)
        add_init(name + "_wz", np.zeros(s.shape, np.int8))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_ws", name + "_wz"],
                                      [name + "_wdq"], axis=0, name=name + "/DequantizeLinear"))
        return name + "_wdq", s

    def bias(name, b, xs, ws):
        s = (np.float32(xs) * ws).astype(np.float32)
        add_init(name + "_q", np.rint(b / s).astype(np.int32))
        add_init(name + "_bs", s)
        add_init(name + "_bz", np.zeros(s.shape, np.int32))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_q", name + "_bs", name + "_bz"],
                                      [name + "_bdq"], axis=0, name=name + "/DequantizeLinear"))
        return name + "_bdq"

    used = set()
    if g.input[0].name in act:
        pair(g.input[0].name)
    for n in g.node:
        ins = [rename.get(i, i) for i in n.input]
        if n.op_type in ("Conv", "Gemm") and len(n.input) > 1 and n.input[1] in inits:
            assert n.op_type == "Conv" or any(a.name == "transB" and a.i == 1 for a in n.attribute)
            src = n.input[0]
            xs = act[src][0]
            ins[1], ws = weight(n.input[1], inits[n.input[1]])
            used.add(n.input[1])
            if len(n.input) > 2 and n.input[2] in inits:
                ins[2] = bias(n.input[2], inits[n.input[2]], xs, ws)
                used.add(n.input[2])
        nn = helper.make_node(n.op_type, ins, list(n.output), name=n.name)
        nn.attribute.extend(n.attribute)
        nodes.append(nn)
        if n.output[0] in act:
            pair(n.output[0])
    inits_kept = [t for t in keep if t.name not in used]
    gq = helper.make_graph(nodes, "resnet18_qdq", list(g.input), list(g.output), inits_kept)
    q = helper.make_model(gq, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="tests/models/qdq_resnet.py")
    onnx.checker.check_model(q)
    return q, len(used)


# the layers whose quantizers are checked value by value (activation QDQ
# pairs in graph order: conv1's Relu, layer1.0's first Relu; the next ones
# read values these already moved) and how near a rounding edge a value
# may differ
EDGE_CUTS = (1, 3)
EDGE_TOL = 1e-4


def edge_check(t, a, qm, x):
    """Each QuantizeLinear of the first layers on the device (fp32) against
    numpy float64, value by value: a value may differ only by one step and
    only where float64's quotient lies within EDGE_TOL of a rounding edge
    (the float32 sums' noise), which a wrong rounding mode, saturation or
    dequantisation order does not; later layers carry such values on."""
    g = qm.graph
    inits = {i.name for i in g.initializer}
    dq = [n for n in g.node if n.op_type == "DequantizeLinear" and n.input[0] not in inits]
    for k in EDGE_CUTS:
        name = f"cut{k}"
        path = os.path.join(a.work, name + ".onnx")
        onnx.utils.extract_model(os.path.join(a.work, "qdq.onnx"), path, ["x"], [dq[k].output[0]])
        rc, log = t.run([os.path.join(a.bin, "ipu-compile"), "--input-model", name + ".onnx",
                         "--precision", "fp32", "-o", name + ".ipuef"])
        if not rc:
            rc, log = t.run([os.path.join(a.bin, "ipu-run"), name + ".ipuef", "--iterations", "0",
                             "--input", "x=x.fp32.npy", "--output", f"{dq[k].output[0]}={name}.y.npy"])
        if rc:
            t.bad(f"fp32: {dq[k].output[0]}: {log.strip()[-300:]}")
            continue
        m = onnx.load(path)
        qn = [n for n in m.graph.node if n.op_type == "QuantizeLinear"][-1]
        m.graph.output.append(helper.make_tensor_value_info(qn.input[0], TensorProto.FLOAT, None))
        o = np_ref.run(m, {"x": x})
        sc = float(numpy_helper.to_array([i for i in m.graph.initializer if i.name == qn.input[1]][0]))
        got = np.load(os.path.join(a.work, name + ".y.npy")).astype(np.float64)
        ref = o[dq[k].output[0]].reshape(got.shape)
        quot = o[qn.input[0]].reshape(got.shape) / sc
        d = np.abs(got - ref) / sc
        off = d > 0.5
        edge = np.abs(quot - np.floor(quot) - 0.5)
        far = off & ((edge > EDGE_TOL) | (d > 1.5))
        what = (f"fp32: {dq[k].output[0]}: {int(off.sum())} of {d.size} values differ from numpy "
                f"float64, {int(far.sum())} by more than a step or farther than {EDGE_TOL} of a step "
                f"from a rounding edge")
        if far.any():
            t.bad(what)
        else:
            t.ok(what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--work", default="build/qdq-resnet")
    ap.add_argument("--ref", default="auto", choices=["auto", "ort", "numpy"])
    ap.add_argument("--hw", type=int, default=64)
    ap.add_argument("--batch", type=int, default=4)
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    os.makedirs(a.work, exist_ok=True)
    t = qdq.Test(a)
    fm = float_output(float_resnet(a.work, a.hw, a.batch))
    names = act_tensors(fm.graph)
    shape = (a.batch, 3, a.hw, a.hw)
    xcal = np.random.RandomState(21).standard_normal(shape).astype(np.float32)
    act = calibrate(fm, names, xcal)
    qm, nw = to_qdq(fm, act)
    onnx.save(qm, os.path.join(a.work, "qdq.onnx"))
    x = np.random.RandomState(7).standard_normal(shape).astype(np.float32)
    out = fm.graph.output[0].name
    step = float(act[out + "_f"][0])
    npy = np_ref.run(qm, {"x": x})[out]
    fl = np_ref.run(fm, {"x": x})[out]
    ref, ref_name = npy, "numpy float64"
    if a.ref != "numpy":
        o = t.ort("qdq.onnx", x)
        if o is not None:
            ref, ref_name = o, "onnxruntime-node"
            d = np.abs(o - npy) / step
            print(f"# onnxruntime vs numpy float64: {np.mean(d > 1e-3):.3f} of the outputs differ, "
                  f"mean {d.mean():.2f}, max {d.max():.2f} output steps")
        elif a.ref == "ort":
            t.bad("onnxruntime-node cannot run")
    nq = sum(n.op_type == "QuantizeLinear" for n in qm.graph.node)
    ndq = sum(n.op_type == "DequantizeLinear" for n in qm.graph.node)
    print(f"# {len(names)} activation QDQ pairs, {nw} weight and bias DequantizeLinear; "
          f"reference {ref_name}; output step {step:.4g}; the float model differs from the "
          f"QDQ model by up to {np.abs(fl - npy).max() / step:.1f} steps")
    want = f"QDQ model: {nw} of {ndq} DequantizeLinear and 0 of {nq} QuantizeLinear folded"
    for prec in ("fp32", "fp16"):
        exe = f"qdq.{prec}.ipuef"
        rc, log = t.run([os.path.join(a.bin, "ipu-compile"), "--input-model", "qdq.onnx",
                         "--precision", prec, "-o", exe])
        if rc:
            t.bad(f"{prec}: ipu-compile failed: {log.strip()[-300:]}")
            continue
        line = [ln for ln in log.splitlines() if "QDQ model" in ln]
        if line and want in line[0] and \
                f"{ndq - nw} DequantizeLinear and {nq} QuantizeLinear (activations)" in line[0]:
            t.ok(f"{prec}: the compile summary says the weights' QDQ was folded: {line[0]}")
        else:
            t.bad(f"{prec}: no or wrong QDQ summary (want '{want}'): {line}")
        xin = x.astype(np.float16) if prec == "fp16" else x
        np.save(os.path.join(a.work, f"x.{prec}.npy"), xin)
        rc, log = t.run([os.path.join(a.bin, "ipu-run"), exe, "--iterations", "0",
                         "--input", f"x=x.{prec}.npy", "--output", f"{out}=y.{prec}.npy"])
        if rc:
            t.bad(f"{prec}: ipu-run failed: {log.strip()[-300:]}")
            continue
        got = np.load(os.path.join(a.work, f"y.{prec}.npy")).astype(np.float64)
        if prec == "fp32":
            r = ref
        elif ref_name.startswith("numpy"):
            r = np_ref.run(qm, {"x": xin.astype(np.float32)})[out]
        else:
            r = t.ort("qdq.onnx", xin.astype(np.float32))
        mean_max, p99_max, top1_min = DEEP_RULES[prec]
        good, mean, p99, top1 = judge(got, r, step, prec) if got.shape == r.shape else (False, 0, 0, 0)
        what = (f"{prec}: y {list(got.shape)} vs {ref_name}: mean {mean:.2f} steps of {step:.4g}, "
                f"99 % within {p99:.2f}, top-1 {top1:.2f} (allowed: {mean_max}, {p99_max}, "
                f"at least {top1_min})")
        if good:
            t.ok(what)
        else:
            t.bad(what)
        fl_prec = fl.astype(np.float16).astype(np.float64) if prec == "fp16" else fl
        good, mean, p99, top1 = judge(fl_prec, r, step, prec)
        what = (f"{prec}: the float model's outputs vs the same reference: mean {mean:.2f} steps, "
                f"99 % within {p99:.2f}, top-1 {top1:.2f}")
        if prec == "fp16":
            print(f"# {what} (not judged in fp16)")
        elif good:
            t.bad(f"{what}: the judgement cannot tell the QDQ model from the float one")
        else:
            t.ok(f"{what}: they fail the judgement")
    # fp8_weight: the model's int8 scales do not map onto fp8's powers of
    # two; the weights dequantized at compile time are rounded to fp8 with
    # fp8's own scales, and the summary must say so.  Its error is printed.
    rc, log = t.run([os.path.join(a.bin, "ipu-compile"), "--input-model", "qdq.onnx",
                     "--precision", "fp8_weight", "-o", "qdq.fp8_weight.ipuef"])
    line = [ln for ln in log.splitlines() if "QDQ model" in ln]
    if rc:
        t.bad(f"fp8_weight: ipu-compile failed: {log.strip()[-300:]}")
    elif line and want in line[0] and "the model's do not map" in line[0]:
        t.ok("fp8_weight: the summary says the model's scales do not map onto fp8's")
        rc, log = t.run([os.path.join(a.bin, "ipu-run"), "qdq.fp8_weight.ipuef", "--iterations", "0",
                         "--input", "x=x.fp16.npy", "--output", f"{out}=y.fp8.npy"])
        if rc:
            t.bad(f"fp8_weight: ipu-run failed: {log.strip()[-300:]}")
        else:
            got = np.load(os.path.join(a.work, "y.fp8.npy")).astype(np.float64)
            r = np_ref.run(qm, {"x": x.astype(np.float16).astype(np.float32)})[out]
            _, mean, p99, top1 = judge(got, r, step, "fp16")
            print(f"# fp8_weight vs numpy float64 on the fp16 input: mean {mean:.2f} steps, 99 % "
                  f"within {p99:.2f}, top-1 {top1:.2f} (not judged: fp8 rounds the int8 weights "
                  f"again)")
    else:
        t.bad(f"fp8_weight: no or wrong QDQ summary: {line}")
    edge_check(t, a, qm, x)
    print(f"qdq-resnet: {t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
