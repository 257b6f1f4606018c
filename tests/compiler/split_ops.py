#!/usr/bin/python3
"""split_ops.py - ops too large for one tile, split over tiles by the
compiler, against numpy in float64: Gather at run-time indices (outputs,
constant tables and run-time data larger than a tile, axes longer than a
tile), Softmax, LogSoftmax, LayerNormalization, InstanceNormalization,
ReduceSum/Mean/Max/Min, CumSum and TopK over rows longer than a tile, and Pad whose one padded row
is larger than a tile (compiler/lower/lower_gather_split.c,
prepare_gather.c, prepare_rows.c, prepare_pad.c).  Each case is
compiled by ipu-compile, run by ipu-run on the in-process device and
judged: gathers, pads and TopK exactly equal, the others within 1e-5 (fp32) or
2e-3 (fp16) of max |ref| (float16 rows are computed in float32).  Seeded.

Usage: split_ops.py BIN_DIR WORK_DIR
Ends with "split-ops: N passed, N failed".
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

TOL = {np.float32: 1e-5, np.float16: 2e-3}


class Runner:
    def __init__(self, bindir, work):
        self.bin, self.work = bindir, work
        self.npass = self.nfail = 0
        self.rng = np.random.RandomState(37)

    def result(self, name, ok, detail):
        print("%s - %s: %s" % ("ok" if ok else "not ok", name, detail), flush=True)
        self.npass += ok
        self.nfail += not ok

    def case(self, name, nodes, inputs, outputs, inits, refs, exact, tol=0.0, opset=13):
        """inputs: {name: array}; outputs: {name: (elem type, shape)};
        refs: {name: float64 array}."""
        vi = h.make_tensor_value_info
        el = {np.dtype(np.float32): T.FLOAT, np.dtype(np.float16): T.FLOAT16,
              np.dtype(np.int64): T.INT64}
        g = h.make_graph(nodes, name, [vi(k, el[v.dtype], list(v.shape)) for k, v in inputs.items()],
                         [vi(k, t, list(s)) for k, (t, s) in outputs.items()], inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
        m.ir_version = 8
        base = os.path.join(self.work, name)
        onnx.save(m, base + ".onnx")
        cmd = [os.path.join(self.bin, "ipu-run"), base + ".ipuef", "--iterations", "0"]
        for k, v in inputs.items():
            np.save("%s.%s.npy" % (base, k), v)
            cmd += ["--input", "%s=%s.%s.npy" % (k, base, k)]
        for k in outputs:
            cmd += ["--output", "%s=%s.out.%s.npy" % (k, base, k)]
        p = subprocess.run([os.path.join(self.bin, "ipu-compile"), base + ".onnx", "-o", base + ".ipuef"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        if p.returncode:
            return self.result(name, False, "refused: " + p.stdout.strip()[-300:])
        summary = p.stdout.strip().splitlines()[-1]
        summary = summary[summary.find("memory per tile"):]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        if p.returncode:
            return self.result(name, False, "ipu-run failed: " + p.stdout.strip()[-300:])
        worst = 0.0
        for k, ref in refs.items():
            got = np.load("%s.out.%s.npy" % (base, k)).astype(np.float64)
            if got.shape != ref.shape:
                return self.result(name, False, "%s has shape %s, expected %s" % (k, got.shape, ref.shape))
            if exact:
                if not np.array_equal(got, ref):
                    return self.result(name, False, "%s: %d elements differ" % (k, int((got != ref).sum())))
            else:
                worst = max(worst, float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)))
        if not exact and not worst <= tol:
            return self.result(name, False, "error %.2e of max |ref|, tolerance %g" % (worst, tol))
        self.result(name, True, ("exact" if exact else "error %.2e" % worst) + "; " + summary)

    def gather(self, name, xshape, axis, ishape, const_x, dt=np.float32):
        x = self.rng.standard_normal(xshape).astype(dt)
        L = xshape[axis]
        i = self.rng.randint(-L, L, size=ishape).astype(np.int64)
        ref = np.take(x.astype(np.float64), np.where(i < 0, i + L, i), axis=axis)
        el = T.FLOAT16 if dt == np.float16 else T.FLOAT
        ins, inits = {"i": i}, []
        if const_x:
            inits.append(nh.from_array(x, "x"))
        else:
            ins = {"x": x, "i": i}
        self.case(name, [h.make_node("Gather", ["x", "i"], ["y"], axis=axis)], ins,
                  {"y": (el, ref.shape)}, inits, {"y": ref}, True)

    def rows(self, name, node, xshape, ref_fn, inits=(), dt=np.float32, opset=17):
        x = self.rng.standard_normal(xshape).astype(dt)
        ref = ref_fn(x.astype(np.float64))
        el = T.FLOAT16 if dt == np.float16 else T.FLOAT
        self.case(name, [node], {"x": x}, {"y": (el, ref.shape)}, list(inits), {"y": ref}, False,
                  TOL[dt], opset)

    def pad(self, name, shape, pads, mode, value=0.0, dt=np.float32):
        x = self.rng.standard_normal(shape).astype(dt)
        ref = pad_ref(x.astype(np.float64), pads, mode, value)
        el = T.FLOAT16 if dt == np.float16 else T.FLOAT
        inits = [nh.from_array(np.array(pads, np.int64), "p")]
        ins = ["x", "p"]
        if mode == "constant":
            inits.append(nh.from_array(np.array(value, dt), "v"))
            ins.append("v")
        self.case(name, [h.make_node("Pad", ins, ["y"], mode=mode)], {"x": x},
                  {"y": (el, ref.shape)}, inits, {"y": ref}, True)

    def topk(self, name, shape, k, largest, dt=np.float32, ties=False):
        x = self.rng.standard_normal(shape).astype(dt)
        if ties:
            x = np.round(x * 4).astype(dt)
        xs = x.astype(np.float64)
        order = np.argsort(-xs if largest else xs, axis=-1, kind="stable")[..., :k]
        oshape = list(shape[:-1]) + [k]
        el = T.FLOAT16 if dt == np.float16 else T.FLOAT
        self.case(name, [h.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1, largest=largest)],
                  {"x": x}, {"v": (el, oshape), "i": (T.INT64, oshape)},
                  [nh.from_array(np.array([k], np.int64), "k")],
                  {"v": np.take_along_axis(xs, order, -1), "i": order.astype(np.float64)}, True)


def pad_ref(x, pads, mode, value):
    """np.pad with ONNX's pads [begin..., end...]; negative ones crop."""
    r = x.ndim
    sl = tuple(slice(max(-pads[i], 0), x.shape[i] - max(-pads[i + r], 0)) for i in range(r))
    x = x[sl]
    width = [(max(pads[i], 0), max(pads[i + r], 0)) for i in range(r)]
    if mode == "constant":
        return np.pad(x, width, mode="constant", constant_values=value)
    return np.pad(x, width, mode=mode)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def cumsum(x, excl, rev):
    if rev:
        x = np.flip(x, -1)
    c = np.cumsum(x, axis=-1)
    if excl:
        c = c - x
    return np.flip(c, -1) if rev else c


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[-2])
        return 2
    os.makedirs(sys.argv[2], exist_ok=True)
    r = Runner(sys.argv[1], sys.argv[2])
    # gathers: an output, a constant table, run-time data beyond a tile
    r.gather("gather_small_table_many_ids", (2, 768), 0, (16, 512), True)
    r.gather("gather_const_axis1", (400, 1000), 1, (300,), True)
    r.gather("gather_runtime_axis1", (40, 3000), 1, (7, 300), False)
    r.gather("gather_runtime_wide_rows", (3000, 200), 0, (5000,), False)
    r.gather("gather_runtime_f16", (64, 64, 64), 2, (3000,), False, np.float16)
    r.gather("gather_runtime_columns", (2, 20000, 37), 1, (1000,), False)
    r.gather("gather_fits_one_tile", (5, 6), 0, (3,), False)
    # axes too long for a tile: chunks of the axis
    r.gather("gather_vocab_250k", (250000, 64), 0, (1, 128), True)
    r.gather("gather_runtime_long_axis", (300000, 3), 0, (2000,), False)
    r.gather("gather_runtime_long_axis1_f16", (3, 400000), 1, (50,), False, np.float16)
    N = 200000
    for dt in (np.float32, np.float16):
        s = "fp16" if dt == np.float16 else "fp32"
        r.rows("softmax_%s" % s, h.make_node("Softmax", ["x"], ["y"], axis=-1), (2, N), softmax, dt=dt)
        r.rows("logsoftmax_%s" % s, h.make_node("LogSoftmax", ["x"], ["y"], axis=1), (3, N + 7),
               lambda x: np.log(softmax(x)), dt=dt)
        sc = (r.rng.rand(N) + 0.5).astype(dt)
        bi = r.rng.standard_normal(N).astype(dt)
        r.rows("layernorm_%s" % s, h.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1),
               (2, N), lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
               * sc.astype(np.float64) + bi.astype(np.float64),
               [nh.from_array(sc, "s"), nh.from_array(bi, "b")], dt)
        r.rows("reducesum_two_axes_%s" % s, h.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=1),
               (2, 400, 501), lambda x: x.sum(axis=(1, 2), keepdims=True),
               [nh.from_array(np.array([1, 2], np.int64), "a")], dt, opset=13)
        r.rows("reducemean_%s" % s, h.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0),
               (3, N), lambda x: x.mean(axis=1), dt=dt, opset=13)
        r.rows("reducemax_all_%s" % s, h.make_node("ReduceMax", ["x"], ["y"], keepdims=0),
               (3, 100003), lambda x: x.max(), dt=dt, opset=13)
        r.rows("reducemin_%s" % s, h.make_node("ReduceMin", ["x"], ["y"], axes=[-1], keepdims=1),
               (2, 100003), lambda x: x.min(axis=-1, keepdims=True), dt=dt, opset=13)
        sc = (r.rng.rand(64) + 0.5).astype(dt)
        bi = r.rng.standard_normal(64).astype(dt)
        r.rows("instancenorm_64ch_%s" % s, h.make_node("InstanceNormalization", ["x", "s", "b"], ["y"]),
               (2, 64, 64, 64), lambda x: (x - x.mean((2, 3), keepdims=True)) /
               np.sqrt(x.var((2, 3), keepdims=True) + 1e-5) * sc.astype(np.float64)[:, None, None] +
               bi.astype(np.float64)[:, None, None],
               [nh.from_array(sc, "s"), nh.from_array(bi, "b")], dt, opset=13)
        for ex in (0, 1):
            for rv in (0, 1):
                r.rows("cumsum_%s_exclusive%d_reverse%d" % (s, ex, rv),
                       h.make_node("CumSum", ["x", "a"], ["y"], exclusive=ex, reverse=rv), (2, 100003),
                       lambda x, ex=ex, rv=rv: cumsum(x, ex, rv),
                       [nh.from_array(np.array(1, np.int64), "a")], dt, opset=13)
    r.rows("instancenorm_fits_one_tile", h.make_node("InstanceNormalization", ["x", "s", "b"], ["y"]),
           (1, 8, 32, 32), lambda x: (x - x.mean((2, 3), keepdims=True)) /
           np.sqrt(x.var((2, 3), keepdims=True) + 1e-5),
           [nh.from_array(np.ones(8, np.float32), "s"), nh.from_array(np.zeros(8, np.float32), "b")],
           opset=13)
    r.rows("softmax_fits_one_tile", h.make_node("Softmax", ["x"], ["y"], axis=-1), (64, 1000), softmax)
    # a padded row (a whole channel) larger than a tile: axis by axis
    r.pad("pad_constant_image", (1, 3, 400, 300), [0, 0, 2, 3, 0, 0, 1, 4], "constant", 0.5)
    r.pad("pad_edge_image", (1, 2, 300, 400), [0, 0, 1, 2, 0, 0, 3, 1], "edge")
    r.pad("pad_reflect_image_fp16", (1, 2, 350, 300), [0, 0, 3, 2, 0, 0, 1, 5], "reflect", dt=np.float16)
    r.pad("pad_crop_and_pad", (2, 300, 400), [0, -2, 3, 1, 4, -5], "constant", -1.0)
    r.pad("pad_fits_one_tile", (4, 10, 10), [0, 1, 1, 0, 1, 1], "reflect")
    # one column of a channel: blocks of rows read spans a stride apart
    x = r.rng.standard_normal((2, 303, 400)).astype(np.float32)
    consts = [nh.from_array(np.array(v, np.int64), k) for k, v in
              (("s", [399]), ("e", [400]), ("a", [2]))]
    r.case("slice_one_column", [h.make_node("Slice", ["x", "s", "e", "a"], ["y"])], {"x": x},
           {"y": (T.FLOAT, (2, 303, 1))}, consts, {"y": x[:, :, 399:400].astype(np.float64)}, True)
    r.topk("topk_largest", (2, 200000), 5, 1)
    r.topk("topk_smallest", (3, 100003), 17, 0)
    r.topk("topk_fp16", (2, 150001), 10, 1, np.float16)
    r.topk("topk_ties", (2, 100000), 50, 1, ties=True)
    r.topk("topk_ties_smallest_fp16", (2, 100000), 7, 0, np.float16, ties=True)
    r.topk("topk_fits_one_tile", (4, 1000), 5, 1)
    print("split-ops: %d passed, %d failed" % (r.npass, r.nfail))
    return 1 if r.nfail else 0


if __name__ == "__main__":
    sys.exit(main())
