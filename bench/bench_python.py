#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Overhead of ipu.runtime's Runner.execute over the C runtime's
ipurt_runner_execute, on the same tiny model (the affine test model: 12
floats in, 12 out) in the same run: bench_runner's C p50 first, then the
same loop from Python.  Reports both p50s, the extra microseconds per
request and the ratio (the machine is shared: compare within one run).

Usage: bench/bench_python.py [BUILD]   (make bench-python)
"""

import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build").resolve()
sys.path.insert(0, str(BUILD / "python"))
import ipu.runtime as rt  # noqa: E402

N = 20000


def python_p50(path):
    r = rt.Runner(path)
    ins = {i.name: np.linspace(0, 1, int(np.prod(i.shape)), dtype=i.numpy_data_type()).reshape(i.shape)
           for i in r.get_execute_inputs()}
    outs = {o.name: np.zeros(o.shape, o.numpy_data_type()) for o in r.get_execute_outputs()}
    execute = r.execute
    for _ in range(500):
        execute(ins, outs)
    lat = np.empty(N)
    clock = time.perf_counter_ns
    for k in range(N):
        t0 = clock()
        execute(ins, outs)
        lat[k] = clock() - t0
    r.close()
    return float(np.percentile(lat, 50)) / 1e3, float(np.percentile(lat, 99)) / 1e3


def main():
    c = subprocess.run([str(BUILD / "bench" / "bench_runner")], check=True, capture_output=True,
                       text=True).stdout
    m = re.search(r"execute latency\s+p50\s+([\d.]+) us\s+p99\s+([\d.]+) us", c)
    if not m:
        sys.exit(f"bench_python: no latency line in bench_runner's output:\n{c}")
    c50, c99 = float(m.group(1)), float(m.group(2))
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([str(BUILD / "tests" / "modelrunner" / "gen_models"), d], check=True,
                       capture_output=True)
        p50, p99 = python_p50(os.path.join(d, "affine.ipuef"))
    print("Runner.execute from Python vs the C runtime, tiny model (12 f32 in/out), in-process device")
    print(f"  C      ipurt_runner_execute  p50 {c50:7.1f} us  p99 {c99:7.1f} us")
    print(f"  Python Runner.execute        p50 {p50:7.1f} us  p99 {p99:7.1f} us")
    print(f"  extra per request from Python: {p50 - c50:.1f} us at p50 (ratio {p50 / c50:.2f})")


if __name__ == "__main__":
    main()
