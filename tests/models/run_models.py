#!/usr/bin/python3
# The model tests: three real architectures (make_models.py: an MLP, a
# ResNet-style CNN, a small transformer encoder), each compiled by
# ipu-compile in fp32 and fp16, run by ipu-run on the in-process device with
# .npy inputs and outputs, and compared with onnxruntime (onnxruntime-node,
# through ort_run.js) or, when it cannot run here, with np_ref.py.  numpy
# also cross-checks onnxruntime.
#
# Cases:
#   NAME fp32/fp16    the model as generated (transformer: with Gelu nodes)
#   transformer-erf   the transformer with Gelu written with Erf, as
#                     exporters below opset 20 write it (NAME.ref.onnx)
#   NAME export       ipu-compile --export-onnx of NAME.ref.onnx (folded
#                     Conv+BN, MatMul+Add -> Gemm, ...) run by the reference:
#                     the optimised model must compute the same
#   mlp batch         the MLP with a symbolic batch 'N', compiled with
#                     --batch-size 16, run by ipu-run on 48 samples (3 device
#                     runs) and with --batch-size 20 (a partial last run)
#   fused yaml        mlp (fp32), resnet (fp16) and transformer (fp32) fused
#                     by a model_fusion config; each subgraph run with
#                     ipu-run --subgraph K --no-validate
#
# Errors, per case, against the reference run on the same input values (the
# fp16 inputs are the f32 ones rounded to f16; the reference gets those
# rounded values, so only compute error is measured):
#   max abs  max |ipu - ref|
#   max rel  max |ipu - ref| / max(|ref|, 1% of max |ref|)  (the floor keeps
#            outputs near zero, e.g. after LayerNorm, from dominating)
#   norm     max abs / max |ref|: the error relative to the output's range
# Pass: norm <= 1e-4 (fp32) or 1e-2 (fp16), and every output finite.  (In
# fp16 every activation is stored in f16, whose rounding of a value of
# magnitude 4 is 2e-3: elementwise relative errors of outputs near zero are
# large by nature, so they are reported, not judged.)
#
# Usage: run_models.py --bin build/bin --work DIR --results FILE
#                      [--models mlp,resnet,transformer] [--ref auto|ort|numpy]
#                      [--san]   (the binaries are the ASan+UBSan build)
# Ends with "models: N passed, N failed".  Compiler or runtime failures are
# printed with the exact command and message; EXPECTED_FAIL lists the known
# ones (they are reported, and not counted as failures, until they pass).
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_models  # noqa: E402
import np_ref  # noqa: E402

TOL = {"fp32": 1e-4, "fp16": 1e-2}
# (case, precision) -> why it is known not to work yet.  Empty: every case
# compiles, runs and matches.
# Values: (text the failure message must contain, why).
EXPECTED_FAIL = {}
# The same under AddressSanitizer (--san: the build/san binaries).
EXPECTED_FAIL_SAN = {}
TIMEOUT = 600


class Tester:
    def __init__(self, a):
        self.passed = self.failed = self.known = 0
        self.table = []
        self.bin = os.path.abspath(a.bin)
        self.work = os.path.abspath(a.work)
        self.log = os.path.join(self.work, "commands.log")
        self.node = shutil.which("node")
        self.use_ort = False
        self.ort_info = "not asked"
        self.ref_name = "numpy (np_ref.py, float64)"
        self.refs = {}  # (case, precision) -> reference outputs
        self.expected = EXPECTED_FAIL_SAN if a.san else EXPECTED_FAIL
        self.tested = set()  # keys that reached a verdict

    # -- outcome --------------------------------------------------------
    def ok(self, what):
        self.passed += 1
        print(f"ok - {what}", flush=True)

    def bad(self, what, key=None):
        if key in self.expected and self.expected[key][0] in what:
            self.known += 1
            self.tested.add(key)
            print(f"ok - {what} # KNOWN FAILURE: {self.expected[key][1]}", flush=True)
        else:
            self.failed += 1
            print(f"not ok - {what}", flush=True)

    # -- tools ----------------------------------------------------------
    def run(self, cmd):
        """Run cmd in the work dir; return (rc, seconds, output), logged."""
        t = time.monotonic()
        try:
            p = subprocess.run(cmd, cwd=self.work, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=TIMEOUT, text=True)
            rc, out = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            rc, out = -1, str(e.stdout or "") + f"\n(timed out after {TIMEOUT} s)"
        secs = time.monotonic() - t
        with open(self.log, "a") as f:
            f.write(f"$ (cd {self.work} && {shlex.join(cmd)})  # exit {rc}, {secs:.2f} s\n{out}\n")
        return rc, secs, out

    def load(self, fname):
        return np.load(os.path.join(self.work, fname))

    def setup_ort(self, mode):
        if mode == "numpy":
            return
        if not self.node:
            self.ort_info = "node not found"
        else:
            # load onnxruntime-node the way ort_run.js does
            code = ("const p=require('path'),os=require('os');"
                    "const d=process.env.IPU_NPM_DIR||p.join(os.homedir(),'.cache','ipu-stack','npm');"
                    "let o;try{o=require(p.join(d,'node_modules','onnxruntime-node'))}"
                    "catch(e){o=require('onnxruntime-node')}"
                    "console.log((o.env.versions||{}).node||'?')")
            p = subprocess.run([self.node, "-e", code], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            lines = p.stdout.strip().splitlines()
            if p.returncode == 0:
                self.use_ort, self.ort_info = True, lines[-1]
                self.ref_name = f"onnxruntime-node {self.ort_info} (CPU)"
            else:
                self.ort_info = lines[0] if lines else "cannot load"
        if mode == "ort" and not self.use_ort:
            self.bad(f"onnxruntime-node cannot run: {self.ort_info}")

    def reference(self, tag, model_file, ins, out_names):
        """Outputs of the reference on ins (f32/int arrays), or None."""
        t = time.monotonic()
        npr = np_ref.run(onnx.load(os.path.join(self.work, model_file)), ins)
        np_secs = time.monotonic() - t
        if not self.use_ort:
            return npr
        stem = tag.replace(" ", ".")
        cmd = [self.node, os.path.join(HERE, "ort_run.js"), model_file]
        for k, v in ins.items():
            np.save(os.path.join(self.work, f"{stem}.ref_in.{k}.npy"), v)
            cmd += ["--input", f"{k}={stem}.ref_in.{k}.npy"]
        for o in out_names:
            cmd += ["--output", f"{o}={stem}.ort.{o}.npy"]
        rc, _, out = self.run(cmd)
        if rc:
            print(f"# {tag}: onnxruntime failed: {shlex.join(cmd)}: {out.strip()[-300:]}")
            return None
        ref = {o: self.load(f"{stem}.ort.{o}.npy") for o in out_names}
        for o in out_names:
            e_abs, _, scale = errors(ref[o], npr[o])
            print(f"# {tag}: onnxruntime vs numpy float64 ({np_secs:.2f} s): max abs "
                  f"{e_abs:.3g} (output max |ref| {scale:.3g})")
        return ref

    def compare(self, key, tag, got, r, prec, extra):
        want_dt = np.float16 if prec == "fp16" else np.float32
        row = {"model": key[0], "precision": key[1], "shape": list(got.shape),
               "dtype": str(got.dtype), "reference": self.ref_name}
        row.update(extra)
        if got.shape != tuple(r.shape) or got.dtype != want_dt:
            row["status"] = "wrong shape/dtype"
            self.table.append(row)
            self.bad(f"{tag}: got {got.dtype}{list(got.shape)}, want "
                     f"{np.dtype(want_dt)}{list(r.shape)}", key)
            return False
        e_abs, e_rel, scale = errors(got, r)
        norm = e_abs / scale if scale > 0 else e_abs
        good = bool(np.isfinite(got).all()) and norm <= TOL[prec]
        row.update(max_abs=e_abs, max_rel=e_rel, norm=norm, max_abs_ref=scale,
                   tol_norm=TOL[prec], status="pass" if good else "wrong")
        self.table.append(row)
        what = (f"{tag}: {got.dtype}{list(got.shape)} vs reference: max abs {e_abs:.3g}, "
                f"max rel {e_rel:.3g}, norm {norm:.3g} (tolerance {TOL[prec]:g}; "
                f"max |ref| {scale:.3g})")
        if good:
            self.ok(what)
        else:
            self.bad(what, key)
        return good

    def failed_step(self, key, tag, step, cmd, rc, out):
        lines = [ln for ln in out.strip().splitlines() if ln.strip()]
        summary = [ln for ln in lines if ln.startswith("SUMMARY: ") or "runtime error:" in ln]
        msg = summary[0] if summary else lines[-1] if lines else f"exit {rc}"
        self.bad(f"{tag}: {step} failed: {shlex.join(cmd)}: {msg}", key)
        self.table.append({"model": key[0], "precision": key[1], "status": f"{step} failed",
                           "command": shlex.join(cmd), "message": msg})

    def compile(self, key, tag, src, out, extra_args=()):
        cmd = [os.path.join(self.bin, "ipu-compile"), "--input-model", src] + list(extra_args)
        cmd += ["-o", out] if out.endswith(".ipuef") else ["--export-onnx", out]
        rc, secs, text = self.run(cmd)
        if rc:
            self.failed_step(key, tag, "compile", cmd, rc, text)
            return None
        lines = text.strip().splitlines()
        self.ok(f"{tag}: compiled in {secs:.2f} s: {lines[-1] if lines else ''}")
        return secs

    def device_run(self, key, tag, exe, inputs, outputs, extra_args=()):
        cmd = [os.path.join(self.bin, "ipu-run"), exe, "--iterations", "0"] + list(extra_args)
        for k, f in inputs.items():
            cmd += ["--input", f"{k}={f}"]
        for k, f in outputs.items():
            cmd += ["--output", f"{k}={f}"]
        rc, secs, text = self.run(cmd)
        if rc:
            self.failed_step(key, tag, "run", cmd, rc, text)
            return None
        return secs

    # -- the cases ------------------------------------------------------
    def model_case(self, label, src, inputs, out_names, prec):
        key = (label, prec)
        tag = f"{label} {prec}"
        ins = {k: (v.astype(np.float16).astype(np.float32)
                   if prec == "fp16" and v.dtype == np.float32 else v)
               for k, v in inputs.items()}
        ref = self.reference(tag, src.replace(".onnx", ".ref.onnx")
                             if not src.endswith(".ref.onnx") else src, ins, out_names)
        if ref is None:
            self.bad(f"{tag}: no reference", key)
            return
        self.refs[key] = ref
        exe = f"{label}.{prec}.ipuef"
        csecs = self.compile(key, tag, src, exe, ["--precision", prec])
        if csecs is None:
            return
        files = {}
        for k, v in inputs.items():
            files[k] = f"{label}.{prec}.in.{k}.npy"
            np.save(os.path.join(self.work, files[k]),
                    v.astype(np.float16) if prec == "fp16" and v.dtype == np.float32 else v)
        outs = {o: f"{label}.{prec}.ipu.{o}.npy" for o in out_names}
        rsecs = self.device_run(key, tag, exe, files, outs)
        if rsecs is None:
            return
        for o in out_names:
            self.compare(key, f"{tag}: {o}", self.load(outs[o]), ref[o], prec,
                         {"output": o, "compile_s": round(csecs, 3), "run_s": round(rsecs, 3)})

    def export_case(self, name, inputs, out_names, ref):
        key = (name, "export")
        tag = f"{name} export"
        opt = f"{name}.opt.onnx"
        if self.compile(key, tag, name + ".ref.onnx", opt) is None:
            return
        got = self.reference(tag, opt, inputs, out_names)
        if got is None:
            self.bad(f"{tag}: the reference cannot run the exported model {opt} "
                     "(see the message above)", key)
            return
        for o in out_names:
            g = got[o].astype(np.float32)
            self.compare(key, f"{tag}: {o} of the optimised ONNX", g, ref[o], "fp32", {"output": o})

    def batch_case(self, model, inputs):
        key = ("mlp", "batch")
        tag = "mlp batch"
        m = onnx.ModelProto()
        m.CopyFrom(model)
        for v in (m.graph.input[0], m.graph.output[0]):
            v.type.tensor_type.shape.dim[0].dim_param = "N"
        onnx.save(m, os.path.join(self.work, "mlp_dyn.onnx"))
        onnx.save(m, os.path.join(self.work, "mlp_dyn.ref.onnx"))
        x = np.random.RandomState(7).standard_normal((48,) + inputs["x"].shape[1:]).astype(np.float32)
        ref = self.reference(tag, "mlp_dyn.ref.onnx", {"x": x}, ["y"])
        if ref is None:
            self.bad(f"{tag}: no reference", key)
            return
        exe = "mlp_dyn.ipuef"
        if self.compile(key, tag, "mlp_dyn.onnx", exe, ["--batch-size", "16"]) is None:
            return
        np.save(os.path.join(self.work, "mlp_dyn.x48.npy"), x)
        np.save(os.path.join(self.work, "mlp_dyn.x20.npy"), x[:20])
        if self.device_run(key, tag, exe, {"x": "mlp_dyn.x48.npy"}, {"y": "mlp_dyn.y48.npy"}) is not None:
            self.compare(key, f"{tag}: 48 samples on a batch-16 executable (3 runs)",
                         self.load("mlp_dyn.y48.npy"), ref["y"], "fp32", {"output": "y[48]"})
        if self.device_run(key, tag, exe, {"x": "mlp_dyn.x20.npy"}, {"y": "mlp_dyn.y20.npy"},
                           ["--batch-size", "20"]) is not None:
            self.compare(key, f"{tag}: --batch-size 20 (16 + a padded run of 4)",
                         self.load("mlp_dyn.y20.npy"), ref["y"][:20], "fp32", {"output": "y[20]"})


    def fusion_case(self, parts, inputs, outs):
        """parts: [(model, precision)]; one executable, subgraph K each."""
        key = ("fused", "yaml")
        tag = "fused " + "+".join(f"{m}/{p}" for m, p in parts)
        with open(os.path.join(self.work, "fuse.yaml"), "w") as f:
            f.write("output_dir: './fused'\nipu_version: 'ipu2'\nmodel_fusion:\n")
            for m, p in parts:
                f.write(f"  - input_model: '{m}.onnx'\n    precision: '{p}'\n")
        # ipu-compile does not create output_dir (PopRT does): made here
        os.makedirs(os.path.join(self.work, "fused"), exist_ok=True)
        cmd = [os.path.join(self.bin, "ipu-compile"), "--config-yaml", "fuse.yaml"]
        rc, secs, text = self.run(cmd)
        if rc:
            self.failed_step(key, tag, "compile", cmd, rc, text)
            return
        lines = text.strip().splitlines()
        self.ok(f"{tag}: compiled in {secs:.2f} s: {lines[-1] if lines else ''}")
        for k, (m, p) in enumerate(parts):
            if (m, p) not in self.refs:
                continue
            files = {f"graph{k}/{i}": f"{m}.{p}.in.{i}.npy" for i in inputs[m]}
            of = {f"graph{k}/{o}": f"fused.graph{k}.{o}.npy" for o in outs[m]}
            if self.device_run(key, tag, "fused/executable.ipuef", files, of,
                               ["--no-validate", "--subgraph", str(k)]) is None:
                continue
            for o in outs[m]:
                self.compare(key, f"{tag}: graph{k}/{o} ({m} {p})",
                             self.load(f"fused.graph{k}.{o}.npy"), self.refs[(m, p)][o], p,
                             {"output": f"g{k}/{o}"})


def errors(got, ref):
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    d = np.abs(got - ref)
    scale = float(np.abs(ref).max()) if ref.size else 0.0
    floor = max(0.01 * scale, 1e-30)
    return float(d.max()), float((d / np.maximum(np.abs(ref), floor)).max()), scale


def write_results(t, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(f"# tests/models: ipu-compile + ipu-run (in-process device) vs {t.ref_name}\n")
        f.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; max rel = "
                "max |d| / max(|ref|, 1% of max |ref|), norm = max |d| / max |ref|; pass: norm "
                f"<= {TOL['fp32']:g} (fp32), {TOL['fp16']:g} (fp16)\n")
        f.write(f"{'case':<16} {'prec':<6} {'output':<7} {'shape':<14} {'max abs':>10} "
                f"{'max rel':>10} {'norm':>10} {'max|ref|':>9} {'compile s':>9} status\n")
        for r in t.table:
            if "max_abs" in r:
                cs = f"{r['compile_s']:.2f}" if "compile_s" in r else "-"
                f.write(f"{r['model']:<16} {r['precision']:<6} {r.get('output', ''):<7} "
                        f"{'x'.join(map(str, r['shape'])):<14} {r['max_abs']:>10.3g} "
                        f"{r['max_rel']:>10.3g} {r['norm']:>10.3g} {r['max_abs_ref']:>9.3g} "
                        f"{cs:>9} {r['status']}\n")
            else:
                f.write(f"{r['model']:<16} {r['precision']:<6} {r.get('status')}: "
                        f"{r.get('command', '')}: {r.get('message', '')}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--work", default="build/models-test")
    ap.add_argument("--results", default="build/test-logs/models-results.txt")
    ap.add_argument("--models", default="mlp,resnet,transformer")
    ap.add_argument("--precisions", default="fp32,fp16")
    ap.add_argument("--ref", default="auto", choices=["auto", "ort", "numpy"])
    ap.add_argument("--no-extra", action="store_true", help="skip the export and batch cases")
    ap.add_argument("--san", action="store_true",
                    help="the binaries are the ASan+UBSan build: use EXPECTED_FAIL_SAN")
    a = ap.parse_args()

    t = Tester(a)
    shutil.rmtree(t.work, ignore_errors=True)
    os.makedirs(t.work)
    t.setup_ort(a.ref)
    print(f"# reference: {t.ref_name}" + ("" if t.use_ort else f"; onnxruntime: {t.ort_info}"))
    models = [m for m in a.models.split(",") if m]
    precs = [p for p in a.precisions.split(",") if p]
    makers = {"mlp": make_models.make_mlp, "resnet": make_models.make_resnet,
              "transformer": make_models.make_transformer}
    meta = {}
    all_inputs, all_outs = {}, {}
    for name in models:
        model, inputs = makers[name]()
        make_models.save(t.work, name, model, inputs, meta)
        out_names = meta[name]["outputs"]
        variants = [(name, name + ".onnx")]
        if name == "transformer":
            variants.append(("transformer-erf", name + ".ref.onnx"))
        for label, src in variants:
            for prec in precs:
                t.model_case(label, src, inputs, out_names, prec)
        if not a.no_extra:
            ref = t.reference(f"{name} fp32-ref", name + ".ref.onnx", inputs, out_names)
            if ref is not None:
                t.export_case(name, inputs, out_names, ref)
            if name == "mlp":
                t.batch_case(model, inputs)
        all_inputs[name] = list(inputs)
        all_outs[name] = out_names
    # the three models fused into one executable by a model_fusion config
    parts = [(m, p) for m, p in (("mlp", "fp32"), ("resnet", "fp16"), ("transformer", "fp32"))
             if m in models and p in precs]
    if not a.no_extra and len(parts) > 1:
        t.fusion_case(parts, all_inputs, all_outs)

    write_results(t, a.results)
    with open(os.path.splitext(a.results)[0] + ".json", "w") as f:
        json.dump({"reference": t.ref_name, "models": meta, "results": t.table}, f, indent=1)
    with open(a.results) as f:
        sys.stdout.write("".join("# " + line for line in f))
    print(f"# results: {a.results} (and .json); commands and their output: {t.log}")
    if t.known:
        print(f"# {t.known} known failures ({'EXPECTED_FAIL_SAN' if a.san else 'EXPECTED_FAIL'})")
    for key in t.expected:
        rows = [r for r in t.table if (r["model"], r["precision"]) == key]
        if key not in t.tested and rows and all(r.get("status") == "pass" for r in rows):
            print(f"# {key[0]} {key[1]} passes now: remove it from "
                  f"{'EXPECTED_FAIL_SAN' if a.san else 'EXPECTED_FAIL'} in {__file__}")
    print(f"models{'-asan' if a.san else ''}: {t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
