#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ipu-serve's two transports under the same load generator: h2load
(Debian's nghttp2-client) sends one-row ModelInfer calls to the gRPC port
(HTTP/2 cleartext, the gRPC framing of a raw_input_contents request built
from the server's .proto) and the same row as an HTTP/1.1 binary-tensor
infer to the HTTP port, at 1, 8 and 64 connections (one request at a time
on each) and 64 streams on one connection (gRPC only), with and without
dynamic batching, for the MLP of examples/mlp.  Latency percentiles come
from h2load's per-request log; gRPC's status is in trailers h2load does not
read, so every point also checks the server's success counter against the
requests h2load completed.  make bench-serve-grpc; environment:
SERVE_BENCH_SECONDS (per point, default 5)."""

import atexit
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "serve"))
import grpc_util as gu  # noqa: E402
from serve_util import Server, add_model, build_models, metric, metrics  # noqa: E402

SECONDS = int(os.environ.get("SERVE_BENCH_SECONDS", "5"))
POINTS = ((1, 1), (8, 1), (64, 1), (1, 64))  # (connections, streams per connection)


def h2load(url, body, headers, conns, streams, seconds, h1, log):
    args = ["h2load", "-c", str(conns), "-m", str(streams), "-t", "1" if conns == 1 else "2",
            "-D", str(seconds), "--warm-up-time", "1", "-d", str(body), "--log-file", str(log)]
    for h in headers:
        args += ["-H", h]
    if h1:
        args.append("--h1")
    r = subprocess.run(args + [url], capture_output=True, text=True, timeout=seconds + 120, check=True)
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
                  r"(\d+) errored, (\d+) timeout", r.stdout)
    assert m, r.stdout
    done, ok = int(m.group(3)), int(m.group(4))
    # the log: start time, status, elapsed us, one request a line
    lat = sorted(int(ln.split()[2]) for ln in log.read_text().splitlines() if ln.strip())
    log.unlink()
    return {"done": done, "ok": ok, "rps": done / seconds,
            "p50_us": lat[len(lat) // 2] if lat else 0,
            "p99_us": lat[min(len(lat) - 1, len(lat) * 99 // 100)] if lat else 0}


def main():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench-serve-grpc-"))
    atexit.register(shutil.rmtree, tmp, True)
    pb, _ = gu.load(tmp / "pb")
    models = build_models(tmp / "models")
    repo = tmp / "repo"
    add_model(repo, "mlp_off", models["mlp"], config="max_batch_size: 16\n")
    add_model(repo, "mlp_on", models["mlp"], config=(
        "max_batch_size: 16\ndynamic_batching: { max_queue_delay_microseconds: 500 }\n"))
    x = np.random.default_rng(1).uniform(-1, 1, (1, 784)).astype(np.float32)
    grpc_body, http_body = {}, {}
    for model in ("mlp_off", "mlp_on"):
        msg = gu.infer_request(pb, model, {"x": x}).SerializeToString()
        p = tmp / f"{model}.grpc"
        p.write_bytes(struct.pack(">BI", 0, len(msg)) + msg)  # gRPC's length-prefixed message
        grpc_body[model] = p
    hdr = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 784],
                                  "parameters": {"binary_data_size": x.nbytes}}],
                      "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}).encode()
    http_body = tmp / "http.bin"
    http_body.write_bytes(hdr + x.tobytes())
    results = {}
    bad = 0
    with Server(repo, "--grpc-port", 0, "--max-queue-size", 4096) as s:
        gport = s.grpc_target.split(":")[1]
        for model in ("mlp_off", "mlp_on"):
            for proto in ("http", "grpc"):
                for conns, streams in POINTS:
                    if proto == "http" and streams > 1:
                        continue
                    if proto == "grpc":
                        url = f"http://127.0.0.1:{gport}/inference.GRPCInferenceService/ModelInfer"
                        hdrs = ["content-type: application/grpc", "te: trailers"]
                        body = grpc_body[model]
                    else:
                        url = f"{s.url}/v2/models/{model}/infer"
                        hdrs = [f"Inference-Header-Content-Length: {len(hdr)}"]
                        body = http_body
                    m0 = metrics(s.metrics_url)
                    r = h2load(url, body, hdrs, conns, streams, SECONDS, proto == "http", tmp / "log")
                    m1 = metrics(s.metrics_url)
                    d = {k: metric(m1, k, model) - metric(m0, k, model)
                         for k in ("ipu_inference_request_success", "ipu_inference_request_failure",
                                   "ipu_inference_count", "ipu_inference_exec_count")}
                    r["failed"] = d["ipu_inference_request_failure"] + (r["done"] - r["ok"])
                    # the warm-up second's requests are counted by the server, not by h2load
                    r["unanswered"] = max(0, r["done"] - d["ipu_inference_request_success"])
                    r["mean_batch"] = d["ipu_inference_count"] / max(d["ipu_inference_exec_count"], 1)
                    bad += r["failed"] + r["unanswered"]
                    results[(model, proto, conns, streams)] = r
                    print(f"{model:8} {proto:5} c={conns:<3} m={streams:<3} {r['rps']:8.0f} req/s  "
                          f"p50 {r['p50_us'] / 1e3:7.2f} ms  p99 {r['p99_us'] / 1e3:7.2f} ms  "
                          f"mean batch {r['mean_batch']:5.2f}  failed {r['failed']:.0f}", flush=True)
        print("\nratios gRPC / HTTP (same run, same client):")
        print("model    conns  throughput  p50     p99")
        for model in ("mlp_off", "mlp_on"):
            for conns, _ in POINTS[:3]:
                g, h = results[(model, "grpc", conns, 1)], results[(model, "http", conns, 1)]
                print(f"{model:8} {conns:5}  {g['rps'] / h['rps']:9.2f}x  "
                      f"{g['p50_us'] / max(h['p50_us'], 1):5.2f}x {g['p99_us'] / max(h['p99_us'], 1):5.2f}x")
        rc = s.stop()
        print(f"failed or unanswered over all runs: {bad:.0f}; ipu-serve exit status after SIGTERM: {rc}")
    return 0 if bad == 0 and rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
