#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ipu-serve under load with wrk (Debian) on loopback: throughput and
p50/p99 at 1, 8 and 64 connections, with and without dynamic batching, for
the MLP of examples/mlp (784-512-10, batch 16) and a small CNN (bench/
serve_cnn.py, batch 8, compiled by ipu-compile).  Each request is one row
as binary tensor data.  Then 60 s at 64 connections with the server's RSS
sampled every 5 s.  Speed is reported as ratios batching on / off measured
in the same run (the machine is shared).  make bench-serve; environment:
SERVE_BENCH_SECONDS (per point, default 5), SERVE_BENCH_RSS_SECONDS (60)."""

import atexit
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "serve"))
from serve_util import BIN, Server, add_model, build_models, metric, metrics, run  # noqa: E402

SECONDS = int(os.environ.get("SERVE_BENCH_SECONDS", "5"))
RSS_SECONDS = int(os.environ.get("SERVE_BENCH_RSS_SECONDS", "60"))
CONNS = (1, 8, 64)


def body(tmp, name, x):
    hdr = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": list(x.shape),
                                  "parameters": {"binary_data_size": x.nbytes}}],
                      "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}).encode()
    p = tmp / f"{name}.bin"
    p.write_bytes(hdr + x.tobytes())
    return p, len(hdr)


def wrk(url, bodyfile, hlen, conns, seconds):
    env = dict(os.environ, SERVE_BODY=str(bodyfile), SERVE_HEADER_LEN=str(hlen))
    r = subprocess.run(["wrk", f"-t{1 if conns == 1 else 2}", f"-c{conns}", f"-d{seconds}s",
                        "--timeout", "10s", "-s", str(ROOT / "bench" / "serve.lua"), url],
                       env=env, capture_output=True, text=True, timeout=seconds + 60, check=True)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("{")][-1]
    j = json.loads(line)
    j["rps"] = j["requests"] / (j["duration_us"] / 1e6)
    return j


def rss_kib(pid):
    for ln in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if ln.startswith("VmRSS:"):
            return int(ln.split()[1])
    return 0


def main():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-serve-"))
    atexit.register(shutil.rmtree, tmp, True)
    models = build_models(tmp / "models")
    run(["/usr/bin/python3", ROOT / "bench" / "serve_cnn.py", tmp / "cnn.onnx"])
    run([BIN / "ipu-compile", "--input-model", tmp / "cnn.onnx", "--batch-size", "8",
         "-o", tmp / "cnn.ipuef"])
    repo = tmp / "repo"
    for name, path, mb in (("mlp", models["mlp"], 16), ("cnn", tmp / "cnn.ipuef", 8)):
        add_model(repo, f"{name}_off", path, config=f"max_batch_size: {mb}\n")
        add_model(repo, f"{name}_on", path, config=(
            f"max_batch_size: {mb}\ndynamic_batching: {{ max_queue_delay_microseconds: 500 }}\n"))
    rng = np.random.default_rng(1)
    bodies = {"mlp": body(tmp, "mlp", rng.uniform(-1, 1, (1, 784)).astype(np.float32)),
              "cnn": body(tmp, "cnn", rng.uniform(-1, 1, (1, 1, 28, 28)).astype(np.float32))}
    results = {}
    with Server(repo, "--max-queue-size", "4096") as s:
        for name in ("mlp", "cnn"):
            for mode in ("off", "on"):
                model = f"{name}_{mode}"
                url = f"{s.url}/v2/models/{model}/infer"
                wrk(url, *bodies[name], 8, 1)  # warm-up
                for c in CONNS:
                    m0 = metrics(s.metrics_url)
                    r = wrk(url, *bodies[name], c, SECONDS)
                    m1 = metrics(s.metrics_url)
                    d = {k: metric(m1, k, model) - metric(m0, k, model)
                         for k in ("ipu_inference_count", "ipu_inference_exec_count")}
                    r["mean_batch"] = d["ipu_inference_count"] / max(d["ipu_inference_exec_count"], 1)
                    results[(name, mode, c)] = r
                    print(f"{model:8} c={c:<3} {r['rps']:8.0f} req/s  p50 {r['p50_us'] / 1e3:7.2f} ms  "
                          f"p99 {r['p99_us'] / 1e3:7.2f} ms  mean batch {r['mean_batch']:5.2f}  "
                          f"errors {r['socket_errors'] + r['http_errors']}", flush=True)
        print("\nratios batching on / off (same run):")
        print("model  conns  throughput  p50     p99")
        for name in ("mlp", "cnn"):
            for c in CONNS:
                on, off = results[(name, "on", c)], results[(name, "off", c)]
                print(f"{name:6} {c:5}  {on['rps'] / off['rps']:9.2f}x  {on['p50_us'] / max(off['p50_us'], 1):5.2f}x "
                      f"{on['p99_us'] / max(off['p99_us'], 1):5.2f}x")
        errors = sum(r["socket_errors"] + r["http_errors"] for r in results.values())
        print(f"errors over all runs: {errors}")
        # RSS over a long run
        url = f"{s.url}/v2/models/mlp_on/infer"
        env = dict(os.environ, SERVE_BODY=str(bodies["mlp"][0]), SERVE_HEADER_LEN=str(bodies["mlp"][1]))
        p = subprocess.Popen(["wrk", "-t2", "-c64", f"-d{RSS_SECONDS}s", "--timeout", "10s", "-s",
                              str(ROOT / "bench" / "serve.lua"), url], env=env,
                             stdout=subprocess.PIPE, text=True)
        samples = []
        t0 = time.monotonic()
        while p.poll() is None:
            samples.append((time.monotonic() - t0, rss_kib(s.proc.pid)))
            time.sleep(5)
        out = [ln for ln in p.stdout.read().splitlines() if ln.startswith("{")][-1]
        j = json.loads(out)
        print(f"\n{RSS_SECONDS} s at 64 connections (mlp_on): {j['requests']} requests, "
              f"{j['socket_errors'] + j['http_errors']} errors")
        print("RSS MiB over time: " + ", ".join(f"{t:.0f}s {k / 1024:.1f}" for t, k in samples))
        steady = [k for t, k in samples if t >= 10]
        if len(steady) >= 2:
            print(f"RSS from 10 s to the end: {steady[0] / 1024:.1f} -> {steady[-1] / 1024:.1f} MiB "
                  f"({(steady[-1] - steady[0]) / steady[0] * 100:+.1f}%)")
        rc = s.stop()
        print(f"ipu-serve exit status after SIGTERM: {rc}")
    return 0 if errors == 0 and j["socket_errors"] + j["http_errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
