#!/usr/bin/python3
# make bench-models: the compiler and the device on real architectures.
#
#   1. compile time (wall, best of --repeat) and peak memory (max RSS from
#      /usr/bin/time -v) of ipu-compile, fp32 and fp16, for the models of
#      tests/models (MLP, ResNet-style CNN, transformer encoder) and for
#      ResNet-50 (25.6M random weights, 1x3x224x224) and a BERT-base-shaped
#      encoder (12 layers, d 768, 12 heads, ff 3072, 128 tokens, batch 1
#      and 8; a model that does not fit the default target is compiled and
#      run with 1 MiB tiles, and said so);
#   2. inference throughput of each model on the in-process device (ipu-run:
#      one request at a time, and --inflight requests in flight) against
#      onnxruntime-node on the CPU (sequential session.run, same thread
#      count as the device's workers) in the same run, as ratios ipu / ort,
#      in samples/s.  Each device figure is taken right after the
#      onnxruntime one for the same model, so machine load hits both alike;
#      best of --rounds such pairs.  The first request's output is compared
#      with onnxruntime's (norm = max |ipu - ort| / max |ort|).
#
# Usage: bench_models.py [--bin build/bin] [--work build/bench-models]
#                        [--seconds S] [--rounds R] [--threads N] [--no-resnet50]
#                        [--no-resnet18] [--no-mobilenet] [--no-bert]
#                        [--json FILE]
# make bench-models BENCH_MODELS_ARGS='--threads 1' passes options.
# Models and inputs come from tests/models/make_models.py (fixed seeds).
import argparse
import hashlib
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


# The models the geometric mean is taken over (the others are printed too).
SCORED = ("mlp_b64", "resnet18", "resnet50", "mobilenet_v2", "bert_b1", "bert_b8")

# BERT-base's shape (tests/models/make_models.py's encoder: post-LN layers,
# Gelu, token embedding + positions), random weights; 108.6M parameters.
BERT = dict(seed=12, seq=128, vocab=30522, d=768, heads=12, ff=3072, layers=12)
BIG = ("resnet50", "bert_b1", "bert_b8")

# The target a model too large for the default one is compiled for, and
# the in-process device it then runs on.
WIDE_TARGET = ["--target", "tiles=1472,tile-mem=1MiB"]
WIDE_DEVICE = "tiles=1472,tile_mem=1MiB,"


def make_torchvision(arch, seed):
    """A torchvision classifier (random weights, BN statistics calibrated as
    tests/models/zoo.py does), batch 1, 224 x 224, exported by torch.onnx."""
    import io

    import onnx
    import torch
    import torchvision
    import zoo

    torch.manual_seed(seed)
    m = getattr(torchvision.models, arch)()
    zoo.calibrate(m, (1, 3, 224, 224), seed)
    m.eval()
    x = torch.randn((1, 3, 224, 224), generator=torch.Generator().manual_seed(seed + 2))
    buf = io.BytesIO()
    torch.onnx.export(m, x, buf, opset_version=13, input_names=["x"], output_names=["y"])
    return onnx.load_from_string(buf.getvalue()), {"x": x.numpy()}


def sh(cmd, cwd, timeout=1800):
    t = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    return p.returncode, time.monotonic() - t, p.stdout, p.stderr


def timed_compile(bin_dir, work, model, prec, out, extra=()):
    """(ok, wall s, user+sys s, max RSS KiB, last stderr line, command)."""
    cmd = ["/usr/bin/time", "-v", os.path.join(bin_dir, "ipu-compile"), "--input-model",
           model, "--precision", prec, "-o", out] + list(extra)
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
    ap.add_argument("--seconds", type=float, default=1.5, help="per throughput figure")
    ap.add_argument("--rounds", type=int, default=2,
                    help="onnxruntime/device pairs per model (best of each is kept)")
    ap.add_argument("--repeat", type=int, default=3, help="compiles per small model (best wall)")
    ap.add_argument("--no-resnet50", action="store_true")
    ap.add_argument("--no-resnet18", action="store_true",
                    help="skip torchvision's ResNet-18 (batch 1, 224 x 224)")
    ap.add_argument("--no-mobilenet", action="store_true",
                    help="skip torchvision's MobileNetV2 (batch 1, 224 x 224)")
    ap.add_argument("--no-bert", action="store_true",
                    help="skip the BERT-base-shaped encoder (batch 1 and 8)")
    ap.add_argument("--threads", type=int, default=0,
                    help="onnxruntime intra-op threads = device workers (default: CPUs)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    bin_dir = os.path.abspath(a.bin)
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    threads = a.threads or os.cpu_count() or 1
    def device(wide):
        return ["--device", f"model:{WIDE_DEVICE if wide else ''}workers={threads}"]
    node = shutil.which("node")
    ort_ver = ort_ok(node)

    meta = {}
    small = ["mlp", "resnet", "transformer", "mlp_b64"]
    makers = {"mlp": make_models.make_mlp, "resnet": make_models.make_resnet,
              "transformer": make_models.make_transformer,
              "mlp_b64": lambda: make_models.make_mlp(batch=64)}
    for name in small:
        m, ins = makers[name]()
        make_models.save(work, name, m, ins, meta)
    names = list(small)
    tv = [] if a.no_resnet18 else [("resnet18", 18)]
    if not a.no_mobilenet:
        tv.append(("mobilenet_v2", 2))
    for arch, seed in tv:
        try:
            m, ins = make_torchvision(arch, seed)
        except ImportError as ex:
            print(f"# {arch} skipped: {ex} (python3-torch, python3-torchvision: make deps)")
        else:
            make_models.save(work, arch, m, ins, meta)
            names.append(arch)
    big = []
    if not a.no_resnet50:
        big.append(("resnet50", make_models.make_resnet50))
    if not a.no_bert:
        for b in (1, 8):
            big.append((f"bert_b{b}", lambda b=b: make_models.make_transformer(batch=b, **BERT)))
    with open(make_models.__file__, "rb") as f:
        gen = hashlib.sha256(f.read() + repr(BERT).encode()).hexdigest()
    for name, maker in big:
        # the large models (100 to 430 MB) are only written again when
        # their generator changed
        jpath = os.path.join(work, name + ".json")
        cached = None
        if os.path.exists(os.path.join(work, name + ".onnx")) and os.path.exists(jpath):
            with open(jpath) as f:
                cached = json.load(f)
        if cached and cached.get("generator") == gen:
            meta[name] = cached
        else:
            m, ins = maker()
            make_models.save(work, name, m, ins, meta)
            del m
            meta[name]["generator"] = gen
            with open(jpath, "w") as f:
                json.dump(meta[name], f)
        names.append(name)

    load0 = os.getloadavg()[0]
    print(f"# bench-models: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, "
          f"{threads} CPUs, load average {load0:.1f}")
    print("# compile: ipu-compile for the default target (ipu2: 1472 tiles x 624 KiB); "
          f"wall time best of {a.repeat} (ResNet-50, BERT: 1), peak RSS from /usr/bin/time -v")
    print(f"{'model':<12} {'nodes':>5} {'params':>9} {'prec':<5} {'wall s':>7} {'cpu s':>7} "
          f"{'RSS MiB':>8}  result")
    out = {"compile": [], "throughput": [], "threads": threads, "ort": ort_ver}
    for name in names:
        for prec in ("fp32", "fp16"):
            reps = 1 if name in BIG else a.repeat
            best = None
            for _ in range(reps):
                if os.path.exists(os.path.join(work, f"{name}.{prec}.ipuef")):
                    os.remove(os.path.join(work, f"{name}.{prec}.ipuef"))
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
            if not ok and name in BIG:
                # how far it is from fitting: the same model with 1 MiB
                # tiles, which the throughput part then runs
                ok2, wall2, cpu2, rss2, msg2, cmd2 = timed_compile(
                    bin_dir, work, name + ".onnx", prec, f"{name}.{prec}.1mib.ipuef", WIDE_TARGET)
                mt2 = re.search(r"\): (.*)$", msg2)
                summ2 = mt2.group(1) if ok2 and mt2 else msg2
                print(f"{name + '*':<12} {mm['nodes']:>5} {mm['params']:>9} {prec:<5} "
                      f"{wall2:>7.2f} {cpu2:>7.2f} {rss2 / 1024:>8.1f}  "
                      f"{'ok' if ok2 else 'FAILED'} (*: --target tiles=1472,tile-mem=1MiB): {summ2}", flush=True)
                out["compile"].append({"model": name, "precision": prec, "target": "1MiB tiles",
                                       "ok": ok2, "wall_s": wall2, "cpu_s": cpu2,
                                       "max_rss_kib": rss2, "message": msg2, "command": cmd2})

    print()
    print(f"# throughput, samples/s (batch x requests/s): onnxruntime-node "
          f"{ort_ver or 'unavailable'} (CPU, {threads} intra-op threads, sequential runs) against "
          f"the in-process device ({threads} workers; 1 request at a time, and 16 in flight)")
    print(f"# best of {a.rounds} rounds of about {a.seconds:g} s each; error: norm = max |ipu - ort| "
          "/ max |ort| on the first request (fp16: the device got the inputs rounded to f16)")
    print(f"{'model':<12} {'prec':<5} {'batch':>5} {'ort':>10} {'ipu 1':>10} {'ipu 16':>10} "
          f"{'ratio 1':>8} {'ratio 16':>8} {'norm err':>9}  ipu p50 / ort p50")
    for name in names:
        mm = meta[name]
        batch = int(mm["input_shapes"][0].split("=")[1].split(",")[0])
        for prec in ("fp32", "fp16"):
            exe = os.path.join(work, f"{name}.{prec}.ipuef")
            wide = False
            if not any(c["ok"] for c in out["compile"]
                       if c["model"] == name and c["precision"] == prec and "target" not in c):
                if not any(c["ok"] for c in out["compile"]
                           if c["model"] == name and c["precision"] == prec):
                    print(f"{name:<12} {prec:<5} {batch:>5}  (not compiled)")
                    continue
                exe = os.path.join(work, f"{name}.{prec}.1mib.ipuef")
                wide = True
            secs = a.seconds if name not in BIG else max(a.seconds, 3.0)
            rounds = a.rounds if name not in BIG else 1
            # the large models' requests take 0.1 to 10 s: one warm-up
            warm = ["--warmup", "1"] if name in BIG else []
            ins = []
            for k in mm["inputs"]:
                ins += ["--input", f"{k}={name}.{'in16' if prec == 'fp16' else 'in'}.{k}.npy"]
            ort = None
            best = None
            failed = False
            for rnd in range(rounds):
                # onnxruntime on the fp32 reference model (the same graph; ORT
                # has no fp16 conversion here, so fp16 is compared with ORT fp32)
                if ort_ver:
                    cmd = [node, os.path.join(MODELS_DIR, "ort_run.js"), name + ".ref.onnx",
                           "--bench", str(secs), "--threads", str(threads), "--json",
                           "--output", f"y={name}.ort.y.npy"]
                    for k in mm["inputs"]:
                        cmd += ["--input", f"{k}={name}.in.{k}.npy"]
                    rc, _, so, se = sh(cmd, work)
                    if rc:
                        print(f"# onnxruntime failed on {name}: {se.strip()[-300:]}")
                    else:
                        o = json.loads(so)
                        if ort is None or o["req_per_s"] > ort["req_per_s"]:
                            ort = o
                # the device: calibrate the number of requests on a short run
                if rnd == 0:
                    cmd = [os.path.join(bin_dir, "ipu-run"), exe, "--iterations", "2",
                           "--inflight", "2", "--json"] + warm + device(wide) + ins
                    rc, _, so, se = sh(cmd, work)
                    if rc:
                        print(f"{name:<12} {prec:<5} {batch:>5}  ipu-run FAILED: {shlex.join(cmd)}: "
                              f"{se.strip()[-300:]}")
                        failed = True
                        break
                    per = max(json.loads(so)["latency_p50_us"] / 1e6, 1e-5)
                    n = int(max(3, min(5000, secs / per)))
                cmd = [os.path.join(bin_dir, "ipu-run"), exe, "--iterations", str(n), "--inflight",
                       "16", "--json", "--output", f"y={name}.{prec}.ipu.y.npy"] + warm + \
                    device(wide) + ins
                rc, _, so, se = sh(cmd, work)
                if rc:
                    print(f"{name:<12} {prec:<5} {batch:>5}  ipu-run FAILED: {shlex.join(cmd)}: "
                          f"{se.strip()[-300:]}")
                    failed = True
                    break
                r = json.loads(so)
                if best is None:
                    best = dict(r)
                else:
                    for k in ("requests_per_s_1", "requests_per_s_inflight"):
                        best[k] = max(best[k], r[k])
                    best["latency_p50_us"] = min(best["latency_p50_us"], r["latency_p50_us"])
            if failed or best is None:
                continue
            r = best
            err = None
            if ort:
                y = np.load(os.path.join(work, f"{name}.{prec}.ipu.y.npy")).astype(np.float64)
                yr = np.load(os.path.join(work, f"{name}.ort.y.npy")).astype(np.float64)
                err = float(np.abs(y - yr).max() / max(np.abs(yr).max(), 1e-30))
            # as tests/models; MobileNetV2's fp16 storage alone moves it by
            # about 1.2e-2 (tests/models/zoo.py measures that bound per model)
            tol = 1e-4 if prec == "fp32" else 3e-2 if name == "mobilenet_v2" else 1e-2
            errs = f"{err:>9.2g}" if err is not None else f"{'-':>9}"
            if err is not None and not err <= tol:
                errs += " WRONG"
                out.setdefault("wrong", []).append(f"{name} {prec}")
            ipu1 = r["requests_per_s_1"] * batch
            ipu16 = r["requests_per_s_inflight"] * batch
            row = {"model": name, "precision": prec, "batch": batch, "ipu_requests": n,
                   "target": "1 MiB tiles" if wide else "default",
                   "ipu_samples_per_s_1": ipu1, "ipu_samples_per_s_16": ipu16,
                   "ipu_p50_us": r["latency_p50_us"], "norm_err_vs_ort": err}
            if ort:
                o = ort["req_per_s"] * batch
                row.update(ort_samples_per_s=o, ort_p50_us=ort["p50_us"], ratio_1=ipu1 / o,
                           ratio_16=ipu16 / o)
                print(f"{name:<12} {prec:<5} {batch:>5} {o:>10.1f} {ipu1:>10.1f} {ipu16:>10.1f} "
                      f"{ipu1 / o:>8.3f} {ipu16 / o:>8.3f} {errs}  {r['latency_p50_us'] / 1e3:.2f} ms / "
                      f"{ort['p50_us'] / 1e3:.2f} ms{' (1 MiB tiles)' if wide else ''}", flush=True)
            else:
                print(f"{name:<12} {prec:<5} {batch:>5} {'-':>10} {ipu1:>10.1f} {ipu16:>10.1f} "
                      f"{'-':>8} {'-':>8} {errs}", flush=True)
            out["throughput"].append(row)
    for prec in ("fp32", "fp16"):
        rows = [t for t in out["throughput"] if t["precision"] == prec and "ratio_1" in t]
        for label, key, sel in (("the scored models", "", [t for t in rows if t["model"] in SCORED]),
                                ("all models", "_all", rows)):
            if not sel:
                continue
            gm = float(np.exp(np.mean(np.log([t["ratio_1"] for t in sel]))))
            out[f"geomean_ratio_1_{prec}{key}"] = gm
            missing = [m for m in SCORED if m in names and not any(t["model"] == m for t in sel)]
            print(f"# geometric mean of the ratios (1 request at a time), {prec}, {label}: "
                  f"{gm:.3f} over {len(sel)} ({', '.join(t['model'] for t in sel)})"
                  + (f"; without {', '.join(missing)} (no figure)" if key == "" and missing else ""))
    # fp16 moves half the bytes of fp32: it should be at least as fast
    sp = []
    for t16 in out["throughput"]:
        t32 = [t for t in out["throughput"]
               if t["model"] == t16["model"] and t["precision"] == "fp32"]
        if t16["precision"] == "fp16" and t32:
            r = t16["ipu_samples_per_s_1"] / t32[0]["ipu_samples_per_s_1"]
            out.setdefault("fp16_over_fp32_1", {})[t16["model"]] = r
            sp.append(f"{t16['model']} {r:.2f}")
    if sp:
        print(f"# device fp16 / fp32 samples/s (1 request at a time): {', '.join(sp)}")
    # onnxruntime's threads meet at a barrier per operator and lose far
    # more than the device's workers when other jobs hold the CPUs: on a
    # loaded machine the ratios come out inflated (0.91 at load 5 against
    # 0.53 idle on the same build), so say so next to them.  The load of
    # the start counts: during the run the benchmark itself loads the CPUs.
    cpus = os.cpu_count() or 1
    out["load_average_start"] = load0
    if load0 > cpus:
        print(f"# warning: load average {load0:.1f} on {cpus} CPUs at the start: other jobs shared "
              "the CPUs, which slows onnxruntime more than the device; the ratios above "
              "overstate the device, take the figures of an idle machine")
    path = a.json or os.path.join(work, "bench-models.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"# figures: {path}")
    if out.get("wrong"):
        print(f"# WRONG outputs (norm err above 1e-4 fp32 / 1e-2 fp16, MobileNetV2 3e-2): "
              f"{', '.join(out['wrong'])}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
