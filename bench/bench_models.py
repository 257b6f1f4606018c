#!/usr/bin/python3
# make bench-models: the compiler and the device on real architectures.
#
#   1. compile time (wall, best of --repeat) and peak memory (max RSS from
#      /usr/bin/time -v) of ipu-compile, fp32 and fp16, for the models of
#      tests/models (MLP, ResNet-style CNN, transformer encoder) and for
#      ResNet-50 (25.6M random weights, 1x3x224x224);
#   2. inference throughput of each model on the in-process device (ipu-run:
#      one request at a time, and --inflight requests in flight) against
#      onnxruntime-node on the CPU (sequential session.run, same thread
#      count as the device's workers) in the same run, as ratios ipu / ort,
#      in samples/s.  Each device figure is taken right after the
#      onnxruntime one for the same model, so machine load hits both alike.
#
# Usage: bench_models.py [--bin build/bin] [--work build/bench-models]
#                        [--seconds S] [--no-resnet50] [--json FILE]
# Models and inputs come from tests/models/make_models.py (fixed seeds).
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS_DIR = os.path.join(ROOT, "tests", "models")
sys.path.insert(0, MODELS_DIR)
import make_models  # noqa: E402


def sh(cmd, cwd, timeout=1800):
    t = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    return p.returncode, time.monotonic() - t, p.stdout, p.stderr


def timed_compile(bin_dir, work, model, prec, out):
    """(ok, wall s, user+sys s, max RSS KiB, last stderr line)."""
    cmd = ["/usr/bin/time", "-v", os.path.join(bin_dir, "ipu-compile"), "--input-model",
           model, "--precision", prec, "-o", out]
    rc, _, _, err = sh(cmd, work)
    def field(name):
        m = re.search(r"^\s*" + re.escape(name) + r":\s*(.+)$", err, re.M)
        return m.group(1).strip() if m else ""
    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(x) for x in wall.split(":")] if wall else [0.0]
    secs = 0.0
    for x in parts:
        secs = secs * 60 + x
    cpu = float(field("User time (seconds)") or 0) + float(field("System time (seconds)") or 0)
    rss = int(field("Maximum resident set size (kbytes)") or 0)
    lines = [ln for ln in err.splitlines() if ln.startswith("ipu-compile")]
    return rc == 0, secs, cpu, rss, (lines[-1] if lines else err.strip()[-300:]), shlex.join(cmd[2:])


def ort_ok(node):
    if not node:
        return None
    code = ("const p=require('path'),os=require('os');"
            "const d=process.env.IPU_NPM_DIR||p.join(os.homedir(),'.cache','ipu-stack','npm');"
            "let o;try{o=require(p.join(d,'node_modules','onnxruntime-node'))}"
            "catch(e){o=require('onnxruntime-node')}"
            "console.log((o.env.versions||{}).node||'?')")
    p = subprocess.run([node, "-e", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--work", default="build/bench-models")
    ap.add_argument("--seconds", type=float, default=2.0, help="per throughput figure")
    ap.add_argument("--repeat", type=int, default=3, help="compiles per small model (best wall)")
    ap.add_argument("--no-resnet50", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    bin_dir = os.path.abspath(a.bin)
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    threads = os.cpu_count() or 1
    node = shutil.which("node")
    ort_ver = ort_ok(node)

    meta = {}
    small = ["mlp", "resnet", "transformer"]
    makers = {"mlp": make_models.make_mlp, "resnet": make_models.make_resnet,
              "transformer": make_models.make_transformer}
    for name in small:
        m, ins = makers[name]()
        make_models.save(work, name, m, ins, meta)
    names = list(small)
    if not a.no_resnet50:
        # ResNet-50's 100 MB is only written once
        if not os.path.exists(os.path.join(work, "resnet50.onnx")) or \
                not os.path.exists(os.path.join(work, "resnet50.json")):
            m, ins = make_models.make_resnet50()
            make_models.save(work, "resnet50", m, ins, meta)
            del m
            with open(os.path.join(work, "resnet50.json"), "w") as f:
                json.dump(meta["resnet50"], f)
        else:
            with open(os.path.join(work, "resnet50.json")) as f:
                meta["resnet50"] = json.load(f)
        names.append("resnet50")

    print(f"# bench-models: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, "
          f"{threads} CPUs, load average {os.getloadavg()[0]:.1f}")
    print("# compile: ipu-compile for the default target (ipu2: 1472 tiles x 624 KiB); "
          f"wall time best of {a.repeat} (ResNet-50: 1), peak RSS from /usr/bin/time -v")
    print(f"{'model':<12} {'nodes':>5} {'params':>9} {'prec':<5} {'wall s':>7} {'cpu s':>7} "
          f"{'RSS MiB':>8}  result")
    out = {"compile": [], "throughput": [], "threads": threads, "ort": ort_ver}
    for name in names:
        for prec in ("fp32", "fp16"):
            reps = 1 if name == "resnet50" else a.repeat
            best = None
            for _ in range(reps):
                r = timed_compile(bin_dir, work, name + ".onnx", prec, f"{name}.{prec}.ipuef")
                if best is None or r[1] < best[1]:
                    best = r
                if not r[0]:
                    break
            ok, wall, cpu, rss, msg, cmd = best
            mm = meta[name]
            summ = msg
            mt = re.search(r"\): (.*)$", msg)
            if ok and mt:
                summ = mt.group(1)
            print(f"{name:<12} {mm['nodes']:>5} {mm['params']:>9} {prec:<5} {wall:>7.2f} {cpu:>7.2f} "
                  f"{rss / 1024:>8.1f}  {'ok: ' + summ if ok else 'FAILED: ' + cmd + ': ' + msg}",
                  flush=True)
            out["compile"].append({"model": name, "precision": prec, "ok": ok, "wall_s": wall,
                                   "cpu_s": cpu, "max_rss_kib": rss, "message": msg,
                                   "command": cmd})

    print()
    print(f"# throughput, samples/s (batch x requests/s): onnxruntime-node "
          f"{ort_ver or 'unavailable'} (CPU, {threads} intra-op threads, sequential runs) against "
          f"the in-process device ({threads} workers; 1 request at a time, and 16 in flight)")
    print(f"{'model':<12} {'prec':<5} {'batch':>5} {'ort':>10} {'ipu 1':>10} {'ipu 16':>10} "
          f"{'ratio 1':>8} {'ratio 16':>8}  ipu p50 / ort p50")
    ort_cache = {}
    for name in names:
        mm = meta[name]
        batch = int(mm["input_shapes"][0].split("=")[1].split(",")[0])
        for prec in ("fp32", "fp16"):
            exe = os.path.join(work, f"{name}.{prec}.ipuef")
            if not any(c["ok"] for c in out["compile"] if c["model"] == name and c["precision"] == prec):
                print(f"{name:<12} {prec:<5} {batch:>5}  (not compiled)")
                continue
            secs = a.seconds if name != "resnet50" else max(a.seconds, 3.0)
            # onnxruntime on the fp32 reference model (the same graph; ORT
            # has no fp16 conversion here, so fp16 is compared with ORT fp32)
            ort = None
            if ort_ver:
                if name not in ort_cache or prec == "fp32":
                    cmd = [node, os.path.join(MODELS_DIR, "ort_run.js"), name + ".ref.onnx",
                           "--bench", str(secs), "--threads", str(threads), "--json"]
                    for k in mm["inputs"]:
                        cmd += ["--input", f"{k}={name}.in.{k}.npy"]
                    rc, _, so, se = sh(cmd, work)
                    ort_cache[name] = json.loads(so) if rc == 0 else None
                    if rc:
                        print(f"# onnxruntime failed on {name}: {se.strip()[-300:]}")
                ort = ort_cache[name]
            # the device: calibrate the number of requests on a short run
            ins = []
            for k in mm["inputs"]:
                ins += ["--input", f"{k}={name}.{'in16' if prec == 'fp16' else 'in'}.{k}.npy"]
            cmd = [os.path.join(bin_dir, "ipu-run"), exe, "--iterations", "2", "--inflight", "2",
                   "--json"] + ins
            rc, t0, so, se = sh(cmd, work)
            if rc:
                print(f"{name:<12} {prec:<5} {batch:>5}  ipu-run FAILED: {shlex.join(cmd)}: "
                      f"{se.strip()[-300:]}")
                continue
            cal = json.loads(so)
            per = max(cal["latency_p50_us"] / 1e6, 1e-5)
            n = int(max(3, min(5000, secs / per)))
            cmd = [os.path.join(bin_dir, "ipu-run"), exe, "--iterations", str(n), "--inflight", "16",
                   "--json"] + ins
            rc, _, so, se = sh(cmd, work)
            if rc:
                print(f"{name:<12} {prec:<5} {batch:>5}  ipu-run FAILED: {shlex.join(cmd)}: "
                      f"{se.strip()[-300:]}")
                continue
            r = json.loads(so)
            ipu1 = r["requests_per_s_1"] * batch
            ipu16 = r["requests_per_s_inflight"] * batch
            row = {"model": name, "precision": prec, "batch": batch, "ipu_requests": n,
                   "ipu_samples_per_s_1": ipu1, "ipu_samples_per_s_16": ipu16,
                   "ipu_p50_us": r["latency_p50_us"]}
            if ort:
                o = ort["req_per_s"] * batch
                row.update(ort_samples_per_s=o, ort_p50_us=ort["p50_us"], ratio_1=ipu1 / o,
                           ratio_16=ipu16 / o)
                print(f"{name:<12} {prec:<5} {batch:>5} {o:>10.1f} {ipu1:>10.1f} {ipu16:>10.1f} "
                      f"{ipu1 / o:>8.3f} {ipu16 / o:>8.3f}  {r['latency_p50_us'] / 1e3:.2f} ms / "
                      f"{ort['p50_us'] / 1e3:.2f} ms", flush=True)
            else:
                print(f"{name:<12} {prec:<5} {batch:>5} {'-':>10} {ipu1:>10.1f} {ipu16:>10.1f} "
                      f"{'-':>8} {'-':>8}", flush=True)
            out["throughput"].append(row)
    path = a.json or os.path.join(work, "bench-models.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"# figures: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
