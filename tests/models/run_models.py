#!/usr/bin/python3
# The model tests: three real architectures (make_models.py: an MLP, a
# ResNet-style CNN, a small transformer encoder), each compiled by
# ipu-compile in fp32 and fp16, run by ipu-run on the in-process device with
# .npy inputs and outputs, and compared with onnxruntime (onnxruntime-node,
# through ort_run.js) or, when it cannot run here, with np_ref.py.  numpy
# also cross-checks onnxruntime.
#
# Errors, per model and precision, against the reference run on the same
# input values (the fp16 inputs are the f32 ones rounded to f16; the
# reference gets those rounded values, so only compute error is measured):
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
# (model, precision) -> why it is known not to work yet.  Empty: every
# combination compiles, runs and matches.
EXPECTED_FAIL = {}
TIMEOUT = 600


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.known = 0
        self.rows = []
        self.failures = []

    def ok(self, what):
        self.passed += 1
        print(f"ok - {what}", flush=True)

    def bad(self, what, key=None):
        if key in EXPECTED_FAIL:
            self.known += 1
            print(f"ok - {what} # KNOWN FAILURE: {EXPECTED_FAIL[key]}", flush=True)
        else:
            self.failed += 1
            print(f"not ok - {what}", flush=True)


def run(cmd, cwd, log):
    """Run cmd; return (rc, seconds, output).  The command is logged."""
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT, text=True)
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        rc, out = -1, (e.stdout or "") + f"\n(timed out after {TIMEOUT} s)"
    secs = time.monotonic() - t
    with open(log, "a") as f:
        f.write(f"$ (cd {cwd} && {shlex.join(cmd)})  # exit {rc}, {secs:.2f} s\n{out}\n")
    return rc, secs, out


def errors(got, ref):
    got = got.astype(np.float64)
    ref = ref.astype(np.float64)
    d = np.abs(got - ref)
    scale = float(np.abs(ref).max()) if ref.size else 0.0
    floor = max(0.01 * scale, 1e-30)
    return float(d.max()), float((d / np.maximum(np.abs(ref), floor)).max()), scale


def ort_available(node):
    if not node:
        return False, "node not found"
    # load onnxruntime-node the way ort_run.js does
    code = ("const p=require('path'),os=require('os');"
            "const d=process.env.IPU_NPM_DIR||p.join(os.homedir(),'.cache','ipu-stack','npm');"
            "let o;try{o=require(p.join(d,'node_modules','onnxruntime-node'))}"
            "catch(e){o=require('onnxruntime-node')}"
            "console.log((o.env.versions||{}).node||'?')")
    p = subprocess.run([node, "-e", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        return False, p.stdout.strip().splitlines()[0] if p.stdout.strip() else "cannot load"
    return True, p.stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--work", default="build/models-test")
    ap.add_argument("--results", default="build/test-logs/models-results.txt")
    ap.add_argument("--models", default="mlp,resnet,transformer")
    ap.add_argument("--precisions", default="fp32,fp16")
    ap.add_argument("--ref", default="auto", choices=["auto", "ort", "numpy"])
    a = ap.parse_args()

    bin_dir = os.path.abspath(a.bin)
    compile_bin = os.path.join(bin_dir, "ipu-compile")
    run_bin = os.path.join(bin_dir, "ipu-run")
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    log = os.path.join(work, "commands.log")
    res = Results()
    models = [m for m in a.models.split(",") if m]
    precs = [p for p in a.precisions.split(",") if p]

    node = shutil.which("node")
    use_ort, ort_info = (False, "not asked") if a.ref == "numpy" else ort_available(node)
    if a.ref == "ort" and not use_ort:
        res.bad(f"onnxruntime-node cannot run: {ort_info}")
    ref_name = f"onnxruntime-node {ort_info} (CPU)" if use_ort else "numpy (np_ref.py, float64)"
    print(f"# reference: {ref_name}" + ("" if use_ort else f"; onnxruntime: {ort_info}"))

    makers = {"mlp": make_models.make_mlp, "resnet": make_models.make_resnet,
              "transformer": make_models.make_transformer}
    meta = {}
    table = []
    for name in models:
        model, inputs = makers[name]()
        make_models.save(work, name, model, inputs, meta)
        ref_model = onnx.load(os.path.join(work, name + ".ref.onnx"))
        out_names = meta[name]["outputs"]
        for prec in precs:
            key = (name, prec)
            tag = f"{name} {prec}"
            # the reference, on the values the executable gets
            ins = {}
            for k, v in inputs.items():
                if prec == "fp16" and v.dtype == np.float32:
                    v = v.astype(np.float16).astype(np.float32)
                ins[k] = v
                np.save(os.path.join(work, f"{name}.{prec}.ref_in.{k}.npy"), v)
            ref = {}
            t = time.monotonic()
            npr = np_ref.run(ref_model, ins)
            np_secs = time.monotonic() - t
            if use_ort:
                cmd = [node, os.path.join(HERE, "ort_run.js"), name + ".ref.onnx"]
                for k in ins:
                    cmd += ["--input", f"{k}={name}.{prec}.ref_in.{k}.npy"]
                for o in out_names:
                    cmd += ["--output", f"{o}={name}.{prec}.ort.{o}.npy"]
                rc, _, out = run(cmd, work, log)
                if rc:
                    res.bad(f"{tag}: onnxruntime failed: {shlex.join(cmd)}: {out.strip()[-300:]}")
                    continue
                for o in out_names:
                    ref[o] = np.load(os.path.join(work, f"{name}.{prec}.ort.{o}.npy"))
                    e_abs, _, scale = errors(ref[o], npr[o])
                    print(f"# {tag}: onnxruntime vs numpy float64 ({np_secs:.2f} s): "
                          f"max abs {e_abs:.3g} (output max |ref| {scale:.3g})")
            else:
                ref = npr
            # compile
            exe = f"{name}.{prec}.ipuef"
            cmd = [compile_bin, "--input-model", name + ".onnx", "--precision", prec, "-o", exe]
            rc, csecs, out = run(cmd, work, log)
            if rc:
                msg = out.strip().splitlines()[-1] if out.strip() else f"exit {rc}"
                res.bad(f"{tag}: compile: {shlex.join(cmd)}: {msg}", key)
                table.append({"model": name, "precision": prec, "status": "compile failed",
                              "command": shlex.join(cmd), "message": msg})
                continue
            summary = out.strip().splitlines()[-1] if out.strip() else ""
            res.ok(f"{tag}: compiled in {csecs:.2f} s: {summary}")
            # run
            cmd = [run_bin, exe, "--iterations", "0"]
            for k in inputs:
                fname = f"{name}.in16.{k}.npy" if prec == "fp16" else f"{name}.in.{k}.npy"
                cmd += ["--input", f"{k}={fname}"]
            for o in out_names:
                cmd += ["--output", f"{o}={name}.{prec}.ipu.{o}.npy"]
            rc, rsecs, out = run(cmd, work, log)
            if rc:
                msg = out.strip().splitlines()[-1] if out.strip() else f"exit {rc}"
                res.bad(f"{tag}: run: {shlex.join(cmd)}: {msg}", key)
                table.append({"model": name, "precision": prec, "status": "run failed",
                              "command": shlex.join(cmd), "message": msg})
                continue
            # compare
            for o in out_names:
                got = np.load(os.path.join(work, f"{name}.{prec}.ipu.{o}.npy"))
                want_dt = np.float16 if prec == "fp16" else np.float32
                r = ref[o]
                row = {"model": name, "precision": prec, "output": o, "shape": list(got.shape),
                       "dtype": str(got.dtype), "compile_s": round(csecs, 3),
                       "run_s": round(rsecs, 3), "reference": ref_name}
                if got.shape != tuple(r.shape) or got.dtype != want_dt:
                    row["status"] = "wrong shape/dtype"
                    table.append(row)
                    res.bad(f"{tag}: {o}: got {got.dtype}{list(got.shape)}, want "
                            f"{np.dtype(want_dt)}{list(r.shape)}", key)
                    continue
                e_abs, e_rel, scale = errors(got, r)
                norm = e_abs / scale if scale > 0 else e_abs
                good = bool(np.isfinite(got).all()) and norm <= TOL[prec]
                row.update(max_abs=e_abs, max_rel=e_rel, norm=norm, max_abs_ref=scale,
                           tol_norm=TOL[prec], status="pass" if good else "wrong")
                table.append(row)
                what = (f"{tag}: {o} {got.dtype}{list(got.shape)} vs reference: max abs "
                        f"{e_abs:.3g}, max rel {e_rel:.3g}, norm {norm:.3g} (tolerance "
                        f"{TOL[prec]:g}; max |ref| {scale:.3g})")
                if good:
                    res.ok(what)
                else:
                    res.bad(what, key)
            if key in EXPECTED_FAIL and all(r.get("status") == "pass" for r in table
                                            if r["model"] == name and r["precision"] == prec):
                print(f"# {tag}: passes now: remove it from EXPECTED_FAIL in {__file__}")

    # results file
    os.makedirs(os.path.dirname(os.path.abspath(a.results)), exist_ok=True)
    with open(a.results, "w") as f:
        f.write(f"# tests/models: ipu-compile + ipu-run (in-process device) vs {ref_name}\n")
        f.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; max rel = "
                "max |d| / max(|ref|, 1% of max |ref|), norm = max |d| / max |ref|; pass: norm "
                f"<= {TOL['fp32']:g} (fp32), {TOL['fp16']:g} (fp16)\n")
        f.write(f"{'model':<12} {'prec':<5} {'output':<7} {'shape':<14} {'max abs':>10} "
                f"{'max rel':>10} {'norm':>10} {'max|ref|':>9} {'compile s':>9} {'status'}\n")
        for r in table:
            if "max_abs" in r:
                f.write(f"{r['model']:<12} {r['precision']:<5} {r['output']:<7} "
                        f"{'x'.join(map(str, r['shape'])):<14} {r['max_abs']:>10.3g} "
                        f"{r['max_rel']:>10.3g} {r['norm']:>10.3g} {r['max_abs_ref']:>9.3g} "
                        f"{r['compile_s']:>9.2f} "
                        f"{r['status']}\n")
            else:
                f.write(f"{r['model']:<12} {r['precision']:<5} {r.get('status')}: "
                        f"{r.get('command', '')}: {r.get('message', '')}\n")
    with open(os.path.splitext(a.results)[0] + ".json", "w") as f:
        json.dump({"reference": ref_name, "models": meta, "results": table}, f, indent=1)
    with open(a.results) as f:
        sys.stdout.write("".join("# " + line for line in f))
    print(f"# results: {a.results} (and .json); commands and their output: {log}")
    if res.known:
        print(f"# {res.known} known failures (EXPECTED_FAIL)")
    print(f"models: {res.passed} passed, {res.failed} failed")
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
