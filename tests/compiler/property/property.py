#!/usr/bin/python3
"""The compiler's property test: random graphs, tiny to larger than the device.

Every graph (gen_graphs.py: seeded, the same graphs every run) is compiled
by ipu-compile for the default target (ipu2: 1472 tiles x 624 KiB) and
either
  - compiles, runs on the in-process device (ipu-run) and matches the
    reference: onnxruntime-node (CPU, tests/models/ort_run.js) on the fp32
    form of the graph, fed the same values (fp16 graphs: inputs and
    weights rounded to fp16 once, so only compute error is measured);
    error = max |ipu - ref| / max |ref| <= 1e-4 (fp32) or 3e-2 (fp16);
    fp32 times sqrt(L / 1024), at most 10, when the longest reduction L of
    the graph is longer (rounding error of a sum grows with its length); or
  - is refused with a message that names the memory needed and what the
    device (or a tile) has: REFUSAL_RE must match it.
A refusal of a graph that clearly fits counts as a failure: every tensor
of the graph at once under 25% of the device's memory and every op's
minimal working set (one output's receptive field and weights) under a
quarter of a tile (a MatMul/Gemm: 2 K elements, as its output rows are
computed in chunks when its blocks do not fit at once).  A crash, a timeout, a run failure or a wrong result is
a failure in any case.

The regression graphs in regress/ (graphs this test found wrong, fixed
since) are replayed first: each must compile and match.

Usage: property.py --bin build/bin --work DIR [--count N] [--seed S]
                   [--classes tiny,small,...] [--keep-failing DIR]
                   [--ref auto|ort|numpy] [--only I,J]
Ends with "property: N passed, N failed".
"""
import argparse
import glob
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
import gen_graphs as G  # noqa: E402

TOL = {"fp32": 1e-4, "fp16": 3e-2}
FIT_FRACTION = 0.25
# make check's classes: "device" (1/16 to 1/3 of the device) is left to
# make property-long, its compiles and refusals take up to minutes each
CHECK_CLASSES = "tiny,small,medium,large,huge"
TIMEOUT = 600
# The memory it needs ("needs 322614 bytes", "'x' (6829280640 bytes) does
# not fit", "774400 bytes on tile 637 exceed") and what the device or a
# tile has ("1472 tiles of 638976 bytes", "tile has 638976", "the 319488
# bytes a tile gives one op"), as numbers.
REFUSAL_NEED = re.compile(
    r"needs?\D{0,80}?\d+ bytes|\d+ bytes\)?[^.;]{0,60}?(does not fit|exceed|needed|more than)")
REFUSAL_HAVE = re.compile(
    r"\d+ tiles (of|x) \d+|tile has \d+|tile memory \(\d+\)|\d+ bytes a tile|budget \d+"
    r"|device has \d+")


def refusal_names_memory(msg):
    return bool(REFUSAL_NEED.search(msg)) and bool(REFUSAL_HAVE.search(msg))


def reduction_tol(prec, length):
    """fp16 error is storage rounding (sums accumulate in f32); an fp32
    sum's rounding error grows with its length, bounded at 10x."""
    if prec == "fp16":
        return TOL[prec]
    return TOL[prec] * min(10.0, max(1.0, math.sqrt(length / 1024.0)))


def to_fp32_model(m):
    """The fp32 form of a (possibly fp16) model: the reference's input."""
    r = onnx.ModelProto()
    r.CopyFrom(m)
    for t in r.graph.initializer:
        if t.data_type == TensorProto.FLOAT16:
            a = numpy_helper.to_array(t).astype(np.float32)
            t.CopyFrom(numpy_helper.from_array(a, t.name))
    for v in list(r.graph.input) + list(r.graph.output) + list(r.graph.value_info):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT16:
            v.type.tensor_type.elem_type = TensorProto.FLOAT
    return r


class Runner:
    def __init__(self, a):
        self.a = a
        self.bin = os.path.abspath(a.bin)
        self.work = os.path.abspath(a.work)
        self.log = os.path.join(self.work, "commands.log")
        self.keep = os.path.abspath(a.keep_failing) if a.keep_failing else None
        self.passed = self.failed = 0
        self.stats = {}   # class -> [compiled+matched, refused ok, failed]
        self.node = shutil.which("node")
        self.ref_name = None

    # -- outcome --------------------------------------------------------
    def ok(self, cls, what, refused=False):
        self.passed += 1
        self.stats.setdefault(cls, [0, 0, 0])[1 if refused else 0] += 1
        print(f"ok - {what}", flush=True)

    def bad(self, cls, what, files=()):
        self.failed += 1
        self.stats.setdefault(cls, [0, 0, 0])[2] += 1
        print(f"not ok - {what}", flush=True)
        if self.keep:
            os.makedirs(self.keep, exist_ok=True)
            for f in files:
                src = os.path.join(self.work, f)
                if os.path.exists(src):
                    shutil.copy(src, self.keep)
            if files:
                with open(os.path.join(self.keep, files[0] + ".txt"), "w") as f:
                    f.write(what + "\n")

    def run(self, cmd, timeout=TIMEOUT):
        t = time.monotonic()
        try:
            p = subprocess.run(cmd, cwd=self.work, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout, text=True)
            rc, out = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, out = -1000, out + f"\n(timed out after {timeout} s)"
        secs = time.monotonic() - t
        with open(self.log, "a") as f:
            f.write(f"$ (cd {self.work} && {shlex.join(cmd)})  # exit {rc}, {secs:.2f} s\n{out}\n")
        return rc, secs, out

    # -- reference --------------------------------------------------------
    def setup_ref(self):
        if self.a.ref == "numpy":
            sys.exit("property: --ref numpy: the numpy evaluator does not cover grouped/dilated "
                     "Conv, pooling with pads or Concat; use onnxruntime-node")
        if not self.node:
            return "node not found"
        code = ("const p=require('path'),os=require('os');"
                "const d=process.env.IPU_NPM_DIR||p.join(os.homedir(),'.cache','ipu-stack','npm');"
                "let o;try{o=require(p.join(d,'node_modules','onnxruntime-node'))}"
                "catch(e){o=require('onnxruntime-node')}"
                "console.log((o.env.versions||{}).node||'?')")
        p = subprocess.run([self.node, "-e", code], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        lines = p.stdout.strip().splitlines()
        if p.returncode:
            return lines[0] if lines else "cannot load onnxruntime-node"
        self.ref_name = f"onnxruntime-node {lines[-1]} (CPU, fp32)"
        return None

    def reference(self, stem, ref_model, ins, outs):
        cmd = [self.node, os.path.join(ROOT, "tests", "models", "ort_run.js"), ref_model]
        for k, f in ins.items():
            cmd += ["--input", f"{k}={f}"]
        files = {o: f"{stem}.ref.{o}.npy" for o in outs}
        for o, f in files.items():
            cmd += ["--output", f"{o}={f}"]
        rc, _, out = self.run(cmd)
        if rc:
            return None, f"onnxruntime failed: {out.strip()[-300:]}"
        return {o: np.load(os.path.join(self.work, f)) for o, f in files.items()}, None

    # -- one graph --------------------------------------------------------
    def one(self, stem, cls, label, model, prec, flags, fits, max_reduce, values):
        """model: the ONNX given to ipu-compile; values(): {input: array}, made
        only for graphs that compiled."""
        src = f"{stem}.onnx"
        onnx.save(model, os.path.join(self.work, src))
        keep = [src]
        exe = f"{stem}.ipuef"
        cmd = [os.path.join(self.bin, "ipu-compile"), "--input-model", src, "-o", exe] + flags
        rc, csecs, out = self.run(cmd)
        tag = f"{stem} [{cls} {prec}{' ' + ' '.join(flags) if flags else ''}] {label}"
        lines = [ln for ln in out.strip().splitlines() if ln.strip()]
        if rc:
            errs = [ln for ln in lines if "error" in ln or "SUMMARY" in ln or "runtime error" in ln]
            msg = errs[-1] if errs else (lines[-1] if lines else f"exit {rc}")
            if rc < 0 or rc > 1 or "Sanitizer" in out or "runtime error" in out:
                self.bad(cls, f"{tag}: ipu-compile crashed (exit {rc}) after {csecs:.1f} s: {msg}", keep)
            elif fits:
                self.bad(cls, f"{tag}: refused although it fits the device: {shlex.join(cmd)}: {msg}", keep)
            elif not refusal_names_memory(msg):
                self.bad(cls, f"{tag}: refused without naming the memory needed and what the "
                              f"device has: {msg}", keep)
            else:
                self.ok(cls, f"{tag}: refused in {csecs:.1f} s: {msg}", refused=True)
            return
        files = {}
        ref_in = {}
        np_dt = np.float16 if prec == "fp16" else np.float32
        for k, v in values().items():
            files[k] = f"{stem}.in.{k}.npy"
            ref_in[k] = f"{stem}.refin.{k}.npy"
            dt = np.float16 if model_input_is_fp16(model, k) else np.float32
            np.save(os.path.join(self.work, files[k]), v.astype(dt))
            np.save(os.path.join(self.work, ref_in[k]), v.astype(np_dt).astype(np.float32))
        keep += [files[k] for k in files]
        outs = [o.name for o in model.graph.output]
        got_f = {o: f"{stem}.ipu.{o}.npy" for o in outs}
        rcmd = [os.path.join(self.bin, "ipu-run"), exe, "--iterations", "0"]
        for k, f in files.items():
            rcmd += ["--input", f"{k}={f}"]
        for o, f in got_f.items():
            rcmd += ["--output", f"{o}={f}"]
        rc, rsecs, out = self.run(rcmd)
        if rc:
            lines = [ln for ln in out.strip().splitlines() if ln.strip()]
            self.bad(cls, f"{tag}: compiled, but ipu-run failed: {shlex.join(rcmd)}: "
                          f"{lines[-1] if lines else rc}", keep)
            return
        ref_model = f"{stem}.ref.onnx"
        onnx.save(to_fp32_model(model), os.path.join(self.work, ref_model))
        ref, why = self.reference(stem, ref_model, ref_in, outs)
        if ref is None:
            self.bad(cls, f"{tag}: no reference: {why}", keep)
            return
        tol = reduction_tol(prec, max_reduce)
        for o in outs:
            got = np.load(os.path.join(self.work, got_f[o])).astype(np.float64)
            r = ref[o].astype(np.float64)
            if got.shape != r.shape:
                self.bad(cls, f"{tag}: output {o} is {list(got.shape)}, reference {list(r.shape)}", keep)
                continue
            scale = float(np.abs(r).max()) if r.size else 0.0
            err = float(np.abs(got - r).max()) if r.size else 0.0
            norm = err / scale if scale > 0 else err
            what = (f"{tag}: {list(got.shape)} compiled in {csecs:.1f} s, ran in {rsecs:.1f} s: "
                    f"error {norm:.3g} of max |ref| {scale:.3g} (tolerance {tol:.3g}, "
                    f"longest reduction {max_reduce})")
            if prec == "fp16" and scale > 65504:
                self.bad(cls, f"{tag}: the reference's max |ref| {scale:.3g} is beyond float16's "
                              "range: the generator must keep fp16 graphs' values in range", keep)
            elif np.isfinite(got).all() and norm <= tol:
                self.ok(cls, what)
            else:
                self.bad(cls, what + " WRONG", keep)

    def generated(self, i):
        classes = self.a.classes.split(",")
        cls = classes[i % len(classes)]
        case = G.make_case(self.a.seed, i, cls)
        dut, _ = G.build_models(case)
        G.check(case, dut)
        g = case["graph"]
        flags = []
        if case["prec"] == "fp16" and g.rng.rand() < 0.5:
            # an fp32 graph compiled with --precision fp16
            dut = G.build_models({**case, "prec": "fp32"})[0]
            flags = ["--precision", "fp16"]
        total = g.total_bytes()
        fits = total <= FIT_FRACTION * G.DEVICE_BYTES and g.working <= G.TILE_MEM // 4
        def values():
            return {k: np.random.RandomState([self.a.seed, i, j + 1]).standard_normal(
                g.shape[k]).astype(np.float32) for j, k in enumerate(g.inputs)}
        label = (f"{'x'.join(map(str, g.shape[g.inputs[0]]))} {'-'.join(g.ops)}: "
                 f"{total / 1e6:.3g} MB of tensors ({100 * total / G.DEVICE_BYTES:.2g}% of the "
                 f"device){', must compile' if fits else ''}")
        self.one(f"g{i:03d}", cls, label, dut, case["prec"], flags, fits, g.max_reduce, values)

    def regression(self, path):
        """A graph kept in regress/: must compile and match."""
        m = onnx.load(path)
        stem = "regress." + os.path.splitext(os.path.basename(path))[0]
        side = os.path.splitext(path)[0] + ".json"
        meta = json.load(open(side)) if os.path.exists(side) else {}
        fp16 = any(model_input_is_fp16(m, i.name) for i in m.graph.input) or \
            "fp16" in meta.get("flags", [])
        inits = {t.name for t in m.graph.initializer}
        rng = np.random.RandomState(meta.get("seed", 0))
        def values():
            return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
                    for i in m.graph.input if i.name not in inits}
        self.one(stem, "regress", meta.get("what", ""), m, "fp16" if fp16 else "fp32",
                 meta.get("flags", []), True, meta.get("max_reduce", 1024), values)


def model_input_is_fp16(m, name):
    for i in m.graph.input:
        if i.name == name:
            return i.type.tensor_type.elem_type == TensorProto.FLOAT16
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--work", default="build/property")
    ap.add_argument("--count", type=int, default=30, help="random graphs (default 30)")
    ap.add_argument("--seed", type=int, default=12, help="generator seed (default 12)")
    ap.add_argument("--classes", default=CHECK_CLASSES,
                    help=f"size classes, taken in turn (default {CHECK_CLASSES}): " + ", ".join(
                        f"{k} ({lo}..{hi} elements)" for k, (lo, hi) in G.SIZE_CLASSES.items()))
    ap.add_argument("--only", default="", help="only these graph indices (comma list)")
    ap.add_argument("--keep-failing", default="", metavar="DIR",
                    help="copy failing graphs (.onnx, inputs, message) to DIR")
    ap.add_argument("--no-regress", action="store_true", help="skip the regress/ graphs")
    ap.add_argument("--ref", default="auto", choices=["auto", "ort", "numpy"])
    a = ap.parse_args()

    r = Runner(a)
    shutil.rmtree(r.work, ignore_errors=True)
    os.makedirs(r.work)
    why = r.setup_ref()
    if why:
        print(f"not ok - onnxruntime-node, the reference, cannot run here: {why} "
              "(tests/models/run-models.sh --install-npm-only installs it)")
        print("property: 0 passed, 1 failed")
        return 1
    print(f"# reference: {r.ref_name}; device: {G.TILES} tiles x {G.TILE_MEM} bytes = "
          f"{G.DEVICE_BYTES} bytes; seed {a.seed}, {a.count} graphs; classes {a.classes}")
    t0 = time.monotonic()
    if not a.no_regress and not a.only:
        for p in sorted(glob.glob(os.path.join(HERE, "regress", "*.onnx"))):
            r.regression(p)
    only = {int(x) for x in a.only.split(",") if x}
    for i in range(a.count):
        if not only or i in only:
            r.generated(i)
    print(f"# {time.monotonic() - t0:.0f} s; per size class: compiled and matched / refused "
          "with a message naming the memory / failed")
    for cls, (p, rf, f) in r.stats.items():
        print(f"#   {cls:<8} {p:3d} matched {rf:3d} refused {f:3d} failed")
    print(f"# commands and their output: {r.log}")
    print(f"property: {r.passed} passed, {r.failed} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
