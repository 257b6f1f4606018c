#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Generation with a GPT-2-small-shaped decoder (12 layers, d 768, 12
heads, vocab 50257; seeded random weights, tests/gen/tiny_gpt.py's
architecture) whose key/value cache is device-resident state, on the
in-process device (ipu2: 1472 tiles x 624 KiB):

  bench/bench_generate.py [--build build] [--positions 128] [--new 16]

Exports the decode step with torch, compiles it twice (cache as state, and
--state none: the cache streamed), generates with ipu-run --generate,
checks the tokens against torch's greedy loop (greedy without logits: the
tokens-only program main_tokens), and times one decode step of each model
with ipu-run's benchmark (Main, which streams the logits too: host median
and modelled device time).  Prints one JSON object.
"""
import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gen"))
import tiny_gpt  # noqa: E402


def run(cmd):
    t0 = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return out, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--positions", type=int, default=128)
    ap.add_argument("--new", type=int, default=16)
    a = ap.parse_args()
    tiny_gpt.VOCAB, tiny_gpt.D, tiny_gpt.HEADS, tiny_gpt.LAYERS = 50257, 768, 12, 12
    tiny_gpt.HD, tiny_gpt.POS = 64, a.positions
    b = os.path.join(a.build, "bin")
    prompt = [1, 2, 3, 4, 5, 6, 7, 8]
    with tempfile.TemporaryDirectory() as d:
        onnx = os.path.join(d, "gpt2s.onnx")
        tiny_gpt.export(onnx)
        res = {"shape": "layers 12, d 768, heads 12, vocab 50257",
               "positions": a.positions, "prompt_tokens": len(prompt)}
        for name, extra in (("state", []), ("streamed", ["--state", "none"])):
            _, secs = run([f"{b}/ipu-compile", "--input-model", onnx, "--ipu-version", "ipu2",
                           "-o", os.path.join(d, name + ".ipuef")] + extra)
            res[f"compile_s_{name}"] = round(secs, 1)
        gen, _ = run([f"{b}/ipu-run", os.path.join(d, "state.ipuef"), "--generate",
                      "--prompt-ids", ",".join(map(str, prompt)),
                      "--max-new-tokens", str(a.new), "--json"])
        g = json.loads(gen)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            tiny_gpt.greedy(d, a.new, prompt)
        want = [int(t) for t in printed.getvalue().strip().split(",")]
        res.update({"tokens": g["tokens"], "torch_tokens_equal": g["tokens"] == want,
                    "tokens_per_s": g["tokens_per_s"],
                    "decode_ms_per_step": round(g["decode_ms"] / max(1, g["new_tokens"] - 1), 2),
                    "stream_bytes_per_step_measured": g["stream_bytes_per_step"],
                    "device_argmax": g["device_argmax"]})
        import numpy
        for n, v in (("input_ids", 1), ("position_ids", 0)):
            numpy.save(os.path.join(d, n + ".npy"), numpy.full((1, 1), v, numpy.int64))
        # one decode step of each, timed the same way (the caches of the
        # streamed model are random: the cost does not depend on them)
        for name in ("state", "streamed"):
            model = os.path.join(d, name + ".ipuef")
            out, _ = run([f"{b}/ipu-run", model, "--iterations", "10", "--warmup", "2",
                          "--inflight", "1", "--json",
                          "--input", "input_ids=" + os.path.join(d, "input_ids.npy"),
                          "--input", "position_ids=" + os.path.join(d, "position_ids.npy")])
            s = json.loads(out)
            res[f"step_ms_median_{name}"] = round(s["latency_us"]["median"] / 1000, 2)
            res[f"step_modelled_us_{name}"] = round(s["modelled_us_per_request"], 1)
            anchors = json.loads(run([f"{b}/ipuef-dump", "--json", model])[0])["metadata"]["anchors"]
            res[f"stream_bytes_per_step_{name}"] = sum(
                t["bytes"] for t in anchors if t["kind"] == "user")
            if name == "state":
                # what the tokens-only program (main_tokens) streams
                res["stream_bytes_per_step_tokens_only"] = sum(
                    t["bytes"] for t in anchors
                    if t["kind"] == "user" and "main_tokens" in t.get("programs", []))
    print(json.dumps(res))


if __name__ == "__main__":
    main()
