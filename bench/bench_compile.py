#!/usr/bin/python3
"""bench_compile.py - compile time and peak memory of ipu-compile on the
model zoo's networks at their usual sizes (tests/models/zoo.py's full set:
same constructors, seeds and BatchNorm calibration), per batch size and
precision.

For each case: wall seconds, user+sys CPU seconds and the compiler's
maximum resident set size, all from /usr/bin/time -v, and the per-tile
peak memory ipu-compile -v reports.  Timings are one run on whatever the
machine is doing; compare figures of one run only.

Usage: bench_compile.py [--bin build/bin] [--work build/bench-compile]
                        [--models resnet50,...] [--batch 1,4]
                        [--precision fp32,fp16] [--timeout S] [--json FILE]
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))


def export(zoo, name, batch, work):
    """The zoo's ONNX file of `name` at `batch` (built once)."""
    for i, (model, ctor, shape) in enumerate(zoo.FULL):
        if model != name:
            continue
        tag = "%s@b%d" % (name, batch)
        path = os.path.join(work, tag + ".onnx")
        if not os.path.exists(path):
            zoo.build(tag, ctor, (batch,) + tuple(shape[1:]), work, 1000 + i)
        return path
    raise SystemExit("bench_compile: no model '%s' in the zoo's full set (tests/models/zoo.py)" % name)


def measure(ipu_compile, path, prec, timeout):
    cmd = ["/usr/bin/time", "-v", ipu_compile, path, "--precision", prec, "-v",
           "-o", path + "." + prec + ".ipuef"]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout after %d s" % timeout}

    def field(label, conv=float):
        m = re.search(re.escape(label) + r":\s*(\S+)", p.stdout)
        return conv(m.group(1)) if m else None

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)", str)
    secs = None
    if wall:
        secs = 0.0
        for part in wall.split(":"):
            secs = secs * 60 + float(part)
    peak = re.search(r"memory per tile max (\d+)", p.stdout)
    r = {"status": "ok" if p.returncode == 0 else "failed",
         "wall_s": secs,
         "cpu_s": round((field("User time (seconds)") or 0) + (field("System time (seconds)") or 0), 2),
         "max_rss_kib": field("Maximum resident set size (kbytes)", int),
         "peak_tile_bytes": int(peak.group(1)) if peak else None}
    if p.returncode:
        errs = [l for l in p.stdout.splitlines() if "error" in l]
        r["message"] = errs[-1] if errs else p.stdout.strip()[-300:]
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench-compile"))
    ap.add_argument("--models", default="resnet50")
    ap.add_argument("--batch", default="1,4")
    ap.add_argument("--precision", default="fp32,fp16")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    if not os.path.exists("/usr/bin/time"):
        raise SystemExit("bench_compile: /usr/bin/time is missing (Debian package 'time')")
    import torch
    import zoo

    torch.set_num_threads(1)
    os.makedirs(a.work, exist_ok=True)
    results = []
    print("%-20s %5s %5s %8s %8s %9s %12s  %s" % ("model", "batch", "prec", "wall s", "cpu s",
                                                  "RSS MiB", "peak tile B", "result"))
    for name in a.models.split(","):
        for batch in (int(b) for b in a.batch.split(",")):
            path = export(zoo, name, batch, a.work)
            for prec in a.precision.split(","):
                r = measure(os.path.join(a.bin, "ipu-compile"), path, prec, a.timeout)
                r.update(model=name, batch=batch, precision=prec)
                results.append(r)
                print("%-20s %5d %5s %8s %8s %9s %12s  %s" % (
                    name, batch, prec, r.get("wall_s", "-"), r.get("cpu_s", "-"),
                    "%.1f" % (r["max_rss_kib"] / 1024) if r.get("max_rss_kib") else "-",
                    r.get("peak_tile_bytes") or "-", r["status"] + (": " + r["message"] if "message" in r else "")),
                    flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(r["status"] == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
