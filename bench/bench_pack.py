#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Packing against padding for one stream of variable-length requests
(make bench-pack): the packed BERT-shaped encoder of
tests/serve/packed_bert.py (4 layers, d 256, 128 tokens, compiled batch 2)
served by one ipu-serve as 'bert' (packing: sequences of several requests
share a row of 128) and as 'bert_pad' (each request padded to 128, one row,
dynamic batching), both with max_batch_size 2 and a 1 ms queue delay.  The
same seeded requests (lengths uniform in 8..128) are sent by CONNS
HTTP/1.1 keep-alive clients (http.client, one thread each) to each model in
turn, in ROUNDS rounds of alternating order (the machine's cores are
shared: a neighbour's load falls on both modes alike); requests/s,
tokens/s, p50/p99 latency and the executions the statistics extension
counts, per round.

  bench_pack.py [--requests N] [--conns C] [--rounds R]
"""
import argparse
import http.client
import json
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "serve"))
from serve_util import BIN, Server, add_model, run  # noqa: E402

T = 128
CONFIG = {
    "bert": """max_batch_size: 2
dynamic_batching: { max_queue_delay_microseconds: 1000 }
packing:
  sequence_inputs: [input_ids]
  mask_input: attention_mask
  mask_kind: segment_ids
  position_input: position_ids
  max_sequence_length: 128
  max_sequences_per_row: 8
  segment_outputs: [pooled]
""",
    "bert_pad": "max_batch_size: 2\ndynamic_batching: { max_queue_delay_microseconds: 1000 }\n",
}


def body(model, ids):
    n = len(ids)
    if model == "bert":
        inputs = {"input_ids": ids}
    else:
        x = np.zeros(T, np.int32)
        x[:n] = ids
        mask = np.zeros(T, np.int32)
        mask[:n] = 1
        pos = np.zeros(T, np.int32)
        pos[:n] = np.arange(n)
        inputs = {"input_ids": x, "attention_mask": mask, "position_ids": pos}
    return json.dumps({
        "inputs": [{"name": k, "datatype": "INT32", "shape": [1, len(v)], "data": v.tolist()}
                   for k, v in inputs.items()],
        "outputs": [{"name": "hidden", "parameters": {"binary_data": True}},
                    {"name": "pooled", "parameters": {"binary_data": True}}]}).encode()


def stream(url_port, model, seqs, conns):
    """Send every request through conns keep-alive clients; latencies (s), wall (s)."""
    bodies = [body(model, s) for s in seqs]
    lat = [0.0] * len(seqs)
    nxt = [0]
    lock = threading.Lock()
    errors = []

    def client():
        c = http.client.HTTPConnection("127.0.0.1", url_port, timeout=600)
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= len(bodies):
                break
            t0 = time.monotonic()
            c.request("POST", f"/v2/models/{model}/infer", bodies[i],
                      {"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            lat[i] = time.monotonic() - t0
            if r.status != 200:
                errors.append(r.status)
        c.close()
    threads = [threading.Thread(target=client) for _ in range(conns)]
    t0 = time.monotonic()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return lat, time.monotonic() - t0, errors


def executions(port, model):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("GET", f"/v2/models/{model}/stats")
    st = json.loads(c.getresponse().read())["model_stats"][0]
    c.close()
    return st["execution_count"], st["inference_count"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=96)
    ap.add_argument("--conns", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    rng = np.random.default_rng(7)
    lengths = rng.integers(8, T + 1, a.requests)
    seqs = [rng.integers(1, 1000, n).astype(np.int32) for n in lengths]
    warm = [rng.integers(1, 1000, n).astype(np.int32) for n in rng.integers(8, T + 1, 4)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-pack-") as tmp:
        tmp = pathlib.Path(tmp)
        run(["/usr/bin/python3", ROOT / "tests" / "serve" / "packed_bert.py", tmp / "bert.onnx",
             "--batch", "2"])
        run([BIN / "ipu-compile", "--input-model", tmp / "bert.onnx", "-o", tmp / "bert.ipuef"])
        for name, cfg in CONFIG.items():
            add_model(tmp / "repo", name, tmp / "bert.ipuef", config=cfg)
        with Server(tmp / "repo") as s:
            for model in ("bert_pad", "bert"):
                stream(s.port, model, warm, 4)
            order = []
            for r in range(a.rounds):
                order += [(r + 1, m) for m in (("bert_pad", "bert") if r % 2 == 0 else ("bert", "bert_pad"))]
            for rnd, model in order:
                e0, _ = executions(s.port, model)
                lat, wall, errors = stream(s.port, model, seqs, a.conns)
                e1, _ = executions(s.port, model)
                lat = np.array(lat) * 1e3
                rows.append((rnd, model, a.requests / wall, lengths.sum() / wall,
                             float(np.percentile(lat, 50)), float(np.percentile(lat, 99)),
                             e1 - e0, len(errors)))
            s.stop()
    useful = lengths.sum() / (a.requests * T)
    print(f"{a.requests} requests, {lengths.sum()} tokens (lengths {lengths.min()}..{lengths.max()}, "
          f"mean {lengths.mean():.1f}; padding to {T} leaves {useful:.0%} of the tokens useful), "
          f"{a.conns} connections")
    print("| round | model | mode | req/s | tokens/s | p50 ms | p99 ms | executions | req/execution | errors |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for rnd, model, rps, tps, p50, p99, ex, err in rows:
        mode = "packed" if model == "bert" else "padded to 128"
        print(f"| {rnd} | {model} | {mode} | {rps:.2f} | {tps:.0f} | {p50:.0f} | {p99:.0f} | {ex} | "
              f"{a.requests / max(ex, 1):.2f} | {err} |")
    for rnd in range(1, a.rounds + 1):
        rps = {r[1]: r[2] for r in rows if r[0] == rnd}
        print(f"round {rnd}: packed / padded {rps['bert'] / rps['bert_pad']:.2f}x requests/s")
    tot = {m: a.rounds * a.requests / sum(a.requests / r[2] for r in rows if r[1] == m)
           for m in ("bert", "bert_pad")}
    print(f"all rounds: packed {tot['bert']:.2f} req/s, padded {tot['bert_pad']:.2f} req/s: "
          f"{tot['bert'] / tot['bert_pad']:.2f}x")
    return 1 if any(r[7] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
