#!/usr/bin/python3
"""control_flow.py - ONNX If, Loop and Scan through ipu-compile and ipu-run
against numpy in float64: an If on a run-time condition (both values of
it) reading outer values, an If on a constant condition whose branches
differ in shape, an RNN-style Loop over a static range whose body gathers
its step's input by the iteration number, a Loop with an If on the
iteration number inside, Scans forwards and backwards along axis 1 with a
stacked output, a Scan stacking along axis -1, an opset-8 Scan (batch axis, input scanned
backwards), a while loop on constants
folded by the reference evaluator, a while loop on run-time data with a
static bound, fp32 and fp16; an If on a run-time
condition whose branches differ in shape is refused naming the output, a
Loop too long to unroll is refused by the lowering.  Seeded.

Usage: control_flow.py BIN_DIR WORK_DIR
Ends with "control-flow: N passed, N failed".
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

TOL = {"fp32": 1e-5, "fp16": 3e-3}
EL = {np.dtype(np.float32): T.FLOAT, np.dtype(np.bool_): T.BOOL, np.dtype(np.int64): T.INT64}


class Runner:
    def __init__(self, bindir, work):
        self.bin, self.work = bindir, work
        self.npass = self.nfail = 0
        self.rng = np.random.RandomState(42)

    def result(self, name, ok, detail):
        print("%s - %s: %s" % ("ok" if ok else "not ok", name, detail), flush=True)
        self.npass += ok
        self.nfail += not ok

    def save(self, name, nodes, inputs, outputs, inits, opset=13):
        vi = h.make_tensor_value_info
        g = h.make_graph(nodes, name, [vi(k, EL[v.dtype], list(v.shape)) for k, v in inputs.items()],
                         [vi(k, T.FLOAT, None) for k in outputs],
                         [nh.from_array(v, k) for k, v in inits.items()])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
        m.ir_version = 8
        path = os.path.join(self.work, name + ".onnx")
        onnx.save(m, path)
        return path

    def compile(self, path, out, precision):
        return subprocess.run([os.path.join(self.bin, "ipu-compile"), path, "-o", out, "--precision", precision],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)

    def case(self, name, nodes, inputs, refs, inits=None, precision="fp32", expect=None, opset=13):
        """inputs: {name: array}; refs: {output name: float64 array};
        expect: a line ipu-compile must print about the lowering."""
        name = "%s_%s" % (name, precision)
        path = self.save(name, nodes, inputs, refs, inits or {}, opset)
        base = os.path.join(self.work, name)
        p = self.compile(path, base + ".ipuef", precision)
        if p.returncode:
            return self.result(name, False, "refused: " + p.stdout.strip()[-300:])
        if expect and expect not in p.stdout:
            return self.result(name, False, "ipu-compile does not say '%s': %s" % (expect, p.stdout[-300:]))
        cmd = [os.path.join(self.bin, "ipu-run"), base + ".ipuef", "--iterations", "0"]
        for k, v in inputs.items():
            np.save("%s.%s.npy" % (base, k), v)
            cmd += ["--input", "%s=%s.%s.npy" % (k, base, k)]
        for k in refs:
            cmd += ["--output", "%s=%s.out.%s.npy" % (k, base, k)]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        if p.returncode:
            return self.result(name, False, "ipu-run failed: " + p.stdout.strip()[-300:])
        worst = 0.0
        for k, ref in refs.items():
            got = np.load("%s.out.%s.npy" % (base, k)).astype(np.float64)
            if got.shape != ref.shape:
                return self.result(name, False, "%s has shape %s, expected %s" % (k, got.shape, ref.shape))
            worst = max(worst, float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)))
        tol = TOL[precision]
        self.result(name, worst <= tol, "error %.2e of max |ref| (tolerance %g)%s" %
                    (worst, tol, "; " + expect if expect else ""))

    def refused(self, name, nodes, inputs, outputs, want):
        path = self.save(name, nodes, inputs, outputs, {})
        p = self.compile(path, os.path.join(self.work, name + ".ipuef"), "fp32")
        ok = p.returncode != 0 and want in p.stdout
        self.result(name, ok, "refused: " + p.stdout.strip()[-200:] if ok else
                    "expected a refusal saying '%s', got: %s" % (want, p.stdout.strip()[-300:]))


def branch(name, nodes, outs):
    return h.make_graph(nodes, name, [], [h.make_tensor_value_info(o, T.UNDEFINED, None) for o in outs])


def if_runtime(r, prec):
    x = r.rng.randn(3, 4).astype(np.float32)
    then_g = branch("then", [h.make_node("Tanh", ["x"], ["t0"]), h.make_node("Mul", ["t0", "x"], ["t1"])], ["t1"])
    else_g = branch("else", [h.make_node("Sigmoid", ["x"], ["e0"])], ["e0"])
    nodes = [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             h.make_node("Greater", ["s", "zero"], ["c"]),
             h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    for sign in (1, -1):
        xs = (np.abs(x) * sign).astype(np.float32)
        xd = xs.astype(np.float64)
        ref = np.tanh(xd) * xd if xd.sum() > 0 else 1 / (1 + np.exp(-xd))
        r.case("if_runtime_%s" % ("true" if sign > 0 else "false"), nodes, {"x": xs}, {"y": ref},
               {"zero": np.zeros((), np.float32)}, prec,
               "both branches computed")


def if_constant(r, prec):
    x = r.rng.randn(2, 6).astype(np.float32)
    then_g = branch("then", [h.make_node("Reshape", ["x", "shp"], ["t0"])], ["t0"])
    else_g = branch("else", [h.make_node("Neg", ["x"], ["e0"])], ["e0"])
    nodes = [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    inits = {"c": np.array(True), "shp": np.array([3, 4], np.int64)}
    r.case("if_constant", nodes, {"x": x}, {"y": x.astype(np.float64).reshape(3, 4)}, inits, prec,
           "the taken branch inlined")


def if_shapes_differ(r):
    then_g = branch("then", [h.make_node("Reshape", ["x", "shp"], ["t0"])], ["t0"])
    else_g = branch("else", [h.make_node("Neg", ["x"], ["e0"])], ["e0"])
    shp = h.make_node("Constant", [], ["shp"], value=nh.from_array(np.array([3, 4], np.int64)))
    nodes = [shp, h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    r.refused("if_shapes_differ", nodes, {"c": np.array(True), "x": np.zeros((2, 6), np.float32)}, {"y": 0},
              "output 0 is float32[3,4] in then_branch but float32[2,6] in else_branch")


def rnn_loop(r, prec, steps=8, hidden=16, feat=8):
    """h = tanh(W h + U x[i]), every h stacked: torch.jit.script's form of
    `for i in range(steps)` (trip count constant, condition passed)."""
    x = r.rng.randn(steps, feat).astype(np.float32)
    w = (r.rng.randn(hidden, hidden) * 0.3).astype(np.float32)
    u = (r.rng.randn(hidden, feat) * 0.3).astype(np.float32)
    h0 = r.rng.randn(hidden).astype(np.float32)
    body = h.make_graph(
        [h.make_node("Gather", ["x", "i"], ["xi"], axis=0),
         h.make_node("MatMul", ["w", "h_in"], ["wh"]),
         h.make_node("MatMul", ["u", "xi"], ["ux"]),
         h.make_node("Add", ["wh", "ux"], ["pre"]),
         h.make_node("Tanh", ["pre"], ["h_out"]),
         h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Identity", ["h_out"], ["h_scan"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("h_in", T.FLOAT, [hidden])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("h_out", T.FLOAT, [hidden]),
         h.make_tensor_value_info("h_scan", T.FLOAT, [hidden])])
    nodes = [h.make_node("Loop", ["n", "", "h0"], ["h_last", "hs"], body=body)]
    hd, hs = h0.astype(np.float64), []
    for i in range(steps):
        hd = np.tanh(w.astype(np.float64) @ hd + u.astype(np.float64) @ x[i].astype(np.float64))
        hs.append(hd)
    r.case("rnn_loop", nodes, {"x": x, "h0": h0}, {"h_last": hd, "hs": np.stack(hs)},
           {"n": np.array(steps, np.int64), "w": w, "u": u}, prec, "unrolled, %d iterations" % steps)


def loop_with_if(r, prec, steps=6):
    """An If on the iteration number's parity inside the body: each
    unrolled copy sees a constant condition."""
    x = r.rng.randn(5).astype(np.float32)
    then_g = branch("even", [h.make_node("Mul", ["acc_in", "x"], ["a0"])], ["a0"])
    else_g = branch("odd", [h.make_node("Add", ["acc_in", "x"], ["a1"])], ["a1"])
    body = h.make_graph(
        [h.make_node("Mod", ["i", "two"], ["par"]),
         h.make_node("Equal", ["par", "zero"], ["even"]),
         h.make_node("If", ["even"], ["acc_out"], then_branch=then_g, else_branch=else_g),
         h.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("acc_in", T.FLOAT, [5])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, [5])])
    nodes = [h.make_node("Loop", ["n", "t", "acc0"], ["acc"], body=body)]
    acc = np.ones(5)
    for i in range(steps):
        acc = acc * x if i % 2 == 0 else acc + x
    r.case("loop_with_if", nodes, {"x": x, "acc0": np.ones(5, np.float32)}, {"acc": acc},
           {"n": np.array(steps, np.int64), "t": np.array(True), "two": np.array(2, np.int64),
            "zero": np.array(0, np.int64)}, prec, "unrolled, %d iterations" % steps)


def scan(r, prec, reverse):
    """Cumulative sum along axis 1 of x [2, 5, 3], forwards or backwards,
    each partial sum stacked along axis 1 of the output."""
    x = r.rng.randn(2, 5, 3).astype(np.float32)
    body = h.make_graph(
        [h.make_node("Add", ["s_in", "xt"], ["s_out"]), h.make_node("Mul", ["s_out", "k"], ["y"])],
        "body",
        [h.make_tensor_value_info("s_in", T.FLOAT, [2, 3]), h.make_tensor_value_info("xt", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("s_out", T.FLOAT, [2, 3]), h.make_tensor_value_info("y", T.FLOAT, [2, 3])])
    nodes = [h.make_node("Scan", ["s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1,
                         scan_input_axes=[1], scan_input_directions=[int(reverse)], scan_output_axes=[1])]
    s, ys = np.zeros((2, 3)), []
    k = 0.5
    for t in (range(4, -1, -1) if reverse else range(5)):
        s = s + x[:, t, :].astype(np.float64)
        ys.append(s * k)
    r.case("scan_%s" % ("reverse" if reverse else "forward"), nodes,
           {"s0": np.zeros((2, 3), np.float32), "x": x}, {"s": s, "ys": np.stack(ys, axis=1)},
           {"k": np.array(k, np.float32)}, prec, "Scan 'Scan_0': unrolled")


def while_folded(r, prec):
    """A while loop on constants (the body computes its own condition):
    run by the reference evaluator at compile time, its result folded."""
    body = h.make_graph(
        [h.make_node("Mul", ["v_in", "two"], ["v_out"]),
         h.make_node("ReduceMax", ["v_out"], ["top"], keepdims=0),
         h.make_node("Less", ["top", "limit"], ["cond_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("v_in", T.FLOAT, [3])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("v_out", T.FLOAT, [3])])
    nodes = [h.make_node("Loop", ["", "t", "v0"], ["v"], body=body), h.make_node("Add", ["v", "x"], ["y"])]
    v0 = np.array([1.0, 3.0, 0.5], np.float32)
    v = v0.astype(np.float64)
    while True:
        v = v * 2
        if not v.max() < 100:
            break
    x = r.rng.randn(3).astype(np.float32)
    r.case("while_folded", nodes, {"x": x}, {"y": v + x},
           {"t": np.array(True), "v0": v0, "two": np.array(2, np.float32), "limit": np.array(100, np.float32)},
           prec)


def while_runtime(r, prec, limit=10):
    """`while` on run-time data with a static bound (the form
    torch.jit.script gives `for i in range(n): if cond: break`): each
    unrolled copy's result is kept only while the condition held."""
    body = h.make_graph(
        [h.make_node("Mul", ["v_in", "k"], ["v_out"]),
         h.make_node("ReduceSum", ["v_out"], ["tot"], keepdims=0),
         h.make_node("Less", ["tot", "cap"], ["cond_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("v_in", T.FLOAT, [4])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("v_out", T.FLOAT, [4])])
    nodes = [h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             h.make_node("Less", ["s", "cap"], ["c"]),
             h.make_node("Loop", ["n", "c", "x"], ["v"], body=body)]
    # sums stay clear of the cap at every step (fp16 compares them too)
    for scale in (0.01, 1.0, 1000.0):
        x = (np.array([0.5, 1.0, 1.5, 2.0]) * scale).astype(np.float32)
        v = x.astype(np.float64)
        it = 0
        cond = v.sum() < 50
        while it < limit and cond:
            v = v * 1.5
            cond = v.sum() < 50
            it += 1
        r.case("while_runtime_%g" % scale, nodes, {"x": x}, {"v": v},
               {"n": np.array(limit, np.int64), "k": np.array(1.5, np.float32), "cap": np.array(50, np.float32)},
               prec, "each guarded by the run-time condition")


def scan_negative_axis(r, prec):
    """A scan output stacked along axis -1 (known once the body is
    inferred: expanded after the node's inference)."""
    x = r.rng.randn(4, 3).astype(np.float32)
    body = h.make_graph([h.make_node("Relu", ["xt"], ["y"])], "body",
                        [h.make_tensor_value_info("xt", T.FLOAT, [3])],
                        [h.make_tensor_value_info("y", T.FLOAT, [3])])
    nodes = [h.make_node("Scan", ["x"], ["ys"], body=body, num_scan_inputs=1, scan_output_axes=[-1])]
    r.case("scan_negative_axis", nodes, {"x": x}, {"ys": np.maximum(x.astype(np.float64), 0).T}, {}, prec,
           "Scan 'Scan_0': unrolled")


def scan_opset8(r, prec):
    """Opset 8's Scan: a batch axis 0 on states, scan inputs and outputs,
    steps along axis 1, the input scanned backwards (`directions`)."""
    x = r.rng.randn(2, 3, 4).astype(np.float32)
    body = h.make_graph(
        [h.make_node("Add", ["s_in", "xt"], ["s_out"]), h.make_node("Tanh", ["s_out"], ["y"])], "body",
        [h.make_tensor_value_info("s_in", T.FLOAT, [4]), h.make_tensor_value_info("xt", T.FLOAT, [4])],
        [h.make_tensor_value_info("s_out", T.FLOAT, [4]), h.make_tensor_value_info("y", T.FLOAT, [4])])
    nodes = [h.make_node("Scan", ["", "s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1, directions=[1])]
    s0 = r.rng.randn(2, 4).astype(np.float32)
    s, ys = s0.astype(np.float64), []
    for t in (2, 1, 0):
        s = s + x[:, t, :].astype(np.float64)
        ys.append(np.tanh(s))
    r.case("scan_opset8", nodes, {"s0": s0, "x": x}, {"s": s, "ys": np.stack(ys, axis=1)}, {}, prec,
           "Scan 'Scan_0': unrolled", opset=8)


def long_loop_refused(r):
    """1000 iterations of a 5-node body are more than the unrolling takes:
    the Loop stays one node, which the lowering does not take yet."""
    body = h.make_graph(
        [h.make_node("Add", ["v_in", "x"], ["v_out"]), h.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("v_in", T.FLOAT, [2])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("v_out", T.FLOAT, [2])])
    n = h.make_node("Constant", [], ["n"], value=nh.from_array(np.array(5000, np.int64)))
    nodes = [n, h.make_node("Loop", ["n", "", "x"], ["v"], body=body)]
    r.refused("long_loop_refused", nodes, {"x": np.zeros(2, np.float32)}, {"v": 0},
              "operator Loop is not lowered to tiles yet")
    # nor written back as ONNX: the subgraph is not encoded
    path = os.path.join(r.work, "long_loop_refused.onnx")
    p = subprocess.run([os.path.join(r.bin, "ipu-compile"), path, "--export-onnx", path + ".out", "-o",
                        path + ".ipuef"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    want = "control flow that stays a node (subgraph 'body') cannot be exported"
    r.result("long_loop_export_refused", p.returncode != 0 and want in p.stdout, p.stdout.strip()[-200:])


def exported(r):
    """An unrolled Loop written back as ONNX (--export-onnx) is a plain
    model onnx's checker accepts."""
    path = os.path.join(r.work, "rnn_loop_fp32.onnx")
    out = path + ".exported.onnx"
    p = subprocess.run([os.path.join(r.bin, "ipu-compile"), path, "--export-onnx", out, "-o", path + ".x.ipuef"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    if p.returncode:
        return r.result("rnn_loop_exported", False, p.stdout.strip()[-300:])
    m = onnx.load(out)
    onnx.checker.check_model(m)
    ops = sorted({n.op_type for n in m.graph.node})
    r.result("rnn_loop_exported", "Loop" not in ops, "%d nodes, ops %s" % (len(m.graph.node), ", ".join(ops)))


def main():
    bindir, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    r = Runner(bindir, work)
    for prec in ("fp32", "fp16"):
        if_runtime(r, prec)
        if_constant(r, prec)
        rnn_loop(r, prec)
        loop_with_if(r, prec)
        scan(r, prec, False)
        scan(r, prec, True)
        while_folded(r, prec)
        while_runtime(r, prec)
        scan_negative_axis(r, prec)
        scan_opset8(r, prec)
    if_shapes_differ(r)
    long_loop_refused(r)
    exported(r)
    print("control-flow: %d passed, %d failed" % (r.npass, r.nfail))
    return 1 if r.nfail else 0


if __name__ == "__main__":
    sys.exit(main())
