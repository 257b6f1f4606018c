#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Generation with a GPT-2-small-shaped decoder (12 layers, d 768, 12
heads, vocab 50257; seeded random weights, tests/gen/tiny_gpt.py's
architecture) whose key/value cache is device-resident state, on the
in-process device (ipu2: 1472 tiles x 624 KiB):

  bench/bench_generate.py [--build build] [--positions 128] [--new 16]
                          [--precision fp32|fp16] [--threads N] [--slots 8]
                          [--prefill 32]

Exports the decode step with torch, compiles it twice (cache as state, and
--state none: the cache streamed; a model that does not fit is reported
as such), generates with ipu-run --generate (greedy without logits: the
tokens-only program main_tokens), runs the same greedy loop on
onnxruntime-node (CPU, the exported step in fp32, the caller passing the
caches from step to step) with as many intra-op threads as the device has
workers, checks both against torch's tokens, and times one decode step of
each model with ipu-run's benchmark (Main, which streams the logits too:
host median and modelled device time).  Then the same decoder exported
with --slots cache slots, compiled, and run with 1, 4 and 8 (up to
--slots) sequences at once through the step API
(bench/bench_generate_slots.c): decode tokens/s over all sequences.
Then (--prefill T, 0: none) the same module exported with T tokens a step,
compiled with the decode step as its prefill program, and a prompt of T
tokens generated three ways in the same run: the prefill program, token
steps (the model without it), onnxruntime's loop: the prompt's time per
token of each (the first new token included) and their ratios.
Prints one JSON object.
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

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "gen"))
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
    ap.add_argument("--precision", default="fp32", choices=("fp32", "fp16"))
    ap.add_argument("--slots", type=int, default=8, help="cache slots (0: no several-sequence run)")
    ap.add_argument("--prefill", type=int, default=32,
                    help="tokens of the prefill program (0: no prefill run)")
    ap.add_argument("--threads", type=int, default=0,
                    help="device workers = onnxruntime intra-op threads (default: CPUs)")
    a = ap.parse_args()
    tiny_gpt.gpt2_small(a.positions)
    threads = a.threads or os.cpu_count() or 1
    device = ["--device", f"model:workers={threads}"]
    b = os.path.join(a.build, "bin")
    prompt = [1, 2, 3, 4, 5, 6, 7, 8]
    with tempfile.TemporaryDirectory() as d:
        onnx = os.path.join(d, "gpt2s.onnx")
        tiny_gpt.export(onnx)
        res = {"shape": "layers 12, d 768, heads 12, vocab 50257",
               "positions": a.positions, "precision": a.precision, "prompt_tokens": len(prompt),
               "threads": threads, "load_average": round(os.getloadavg()[0], 1)}
        fits = {}
        for name, extra in (("state", []), ("streamed", ["--state", "none"])):
            try:
                _, secs = run([f"{b}/ipu-compile", "--input-model", onnx, "--ipu-version", "ipu2",
                               "--precision", a.precision,
                               "-o", os.path.join(d, name + ".ipuef")] + extra)
                res[f"compile_s_{name}"] = round(secs, 1)
                fits[name] = True
            except subprocess.CalledProcessError as e:
                if name == "state":
                    raise
                res[f"compile_s_{name}"] = None
                res[f"streamed_error"] = e.stderr.strip().splitlines()[-1][:200]
                fits[name] = False
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            tiny_gpt.greedy(d, a.new, prompt)
        want = [int(t) for t in printed.getvalue().strip().split(",")]
        # onnxruntime first, then the device: machine load hits both alike
        ort, _ = run(["node", os.path.join(ROOT, "bench", "ort_generate.js"), onnx,
                      "--prompt-ids", ",".join(map(str, prompt)),
                      "--max-new-tokens", str(a.new), "--threads", str(threads)])
        o = json.loads(ort)
        gen, _ = run([f"{b}/ipu-run", os.path.join(d, "state.ipuef"), "--generate",
                      "--prompt-ids", ",".join(map(str, prompt)),
                      "--max-new-tokens", str(a.new), "--json"] + device)
        g = json.loads(gen)
        res.update({"tokens": g["tokens"], "torch_tokens_equal": g["tokens"] == want,
                    "tokens_per_s": g["tokens_per_s"],
                    "decode_ms_per_step": round(g["decode_ms"] / max(1, g["new_tokens"] - 1), 2),
                    "prompt_ms_per_token": round(g["prompt_ms"] / len(prompt), 2),
                    "stream_bytes_per_step_measured": g["stream_bytes_per_step"],
                    "device_argmax": g["device_argmax"],
                    "ort_torch_tokens_equal": o["tokens"] == want,
                    "ort_tokens_per_s": o["tokens_per_s"],
                    "ort_decode_ms_per_step": round(o["decode_ms"] / max(1, len(o["tokens"]) - 1), 2),
                    "ort_prompt_ms_per_token": round(o["prompt_ms"] / len(prompt), 2)})
        import numpy
        for n, v in (("input_ids", 1), ("position_ids", 0)):
            numpy.save(os.path.join(d, n + ".npy"), numpy.full((1, 1), v, numpy.int64))
        # one decode step of each, timed the same way (the caches of the
        # streamed model are random: the cost does not depend on them)
        for name in ("state", "streamed"):
            if not fits[name]:
                continue
            model = os.path.join(d, name + ".ipuef")
            out, _ = run([f"{b}/ipu-run", model, "--iterations", "10", "--warmup", "2",
                          "--inflight", "1", "--json",
                          "--input", "input_ids=" + os.path.join(d, "input_ids.npy"),
                          "--input", "position_ids=" + os.path.join(d, "position_ids.npy")]
                         + device)
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
        if a.slots:
            tiny_gpt.SLOTS = a.slots
            slots_onnx = os.path.join(d, "slots.onnx")
            tiny_gpt.export(slots_onnx)
            tiny_gpt.SLOTS = 1
            slots = os.path.join(d, "slots.ipuef")
            try:
                _, secs = run([f"{b}/ipu-compile", "--input-model", slots_onnx, "--ipu-version",
                               "ipu2", "--precision", a.precision, "-o", slots])
            except subprocess.CalledProcessError as e:
                secs = None
                res["slots_error"] = e.stderr.strip().splitlines()[-1][:300]
            os.unlink(slots_onnx)
            res["compile_s_slots"] = secs and round(secs, 1)
            res["slots"] = a.slots
            for k in sorted({1, min(4, a.slots), a.slots}) if secs else ():
                out, _ = run([os.path.join(a.build, "bench", "bench_generate_slots"), slots,
                              str(k), str(a.new), device[1]])
                o = json.loads(out)
                res[f"slots_{k}_tokens_per_s"] = round(o["tokens_per_s"], 2)
                res[f"slots_{k}_decode_ms_per_step"] = o["decode_ms_per_step"]
                res[f"slots_{k}_stream_bytes_per_step"] = o["stream_bytes_per_step"]
        if a.prefill:
            prefill(a, b, d, onnx, device, threads, res)
    print(json.dumps(res))


def prefill(a, b, d, onnx, device, threads, res):
    """A prompt of a.prefill tokens through the prefill program, through
    token steps and through onnxruntime's loop, in this order (the same
    load for all three)."""
    T = a.prefill
    pre_onnx = os.path.join(d, "prefill.onnx")
    tiny_gpt.TOKENS = T
    tiny_gpt.export(pre_onnx)
    tiny_gpt.TOKENS = 1
    model = os.path.join(d, "with_prefill.ipuef")
    try:
        out, secs = run([f"{b}/ipu-compile", "--input-model", onnx, "--prefill-model", pre_onnx,
                         "--ipu-version", "ipu2", "--precision", a.precision, "-v", "-o", model])
    except subprocess.CalledProcessError as e:
        res["prefill_error"] = e.stderr.strip().splitlines()[-1][:300]
        return
    os.unlink(pre_onnx)
    res["prefill_tokens"] = T
    res["compile_s_prefill"] = round(secs, 1)
    prompt = ",".join(str(1 + i % 97) for i in range(T))
    got = {}
    for name, m in (("prefill", model), ("steps", os.path.join(d, "state.ipuef"))):
        out, _ = run([f"{b}/ipu-run", m, "--generate", "--prompt-ids", prompt,
                      "--max-new-tokens", "2", "--json"] + device)
        got[name] = json.loads(out)
        res[f"prompt_ms_per_token_{name}"] = round(got[name]["prompt_ms"] / T, 2)
        res[f"prompt_modelled_us_per_token_{name}"] = round(
            got[name]["prompt_modelled_ms"] * 1000 / T, 1)
    res["prefill_runs"] = got["prefill"]["prefill_runs"]
    res["prefill_tokens_equal_steps"] = got["prefill"]["tokens"] == got["steps"]["tokens"]
    out, _ = run(["node", os.path.join(ROOT, "bench", "ort_generate.js"), onnx,
                  "--prompt-ids", prompt, "--max-new-tokens", "2", "--threads", str(threads)])
    o = json.loads(out)
    res["ort_prompt_ms_per_token_long"] = round(o["prompt_ms"] / T, 2)
    res["prefill_speedup_over_steps"] = round(res["prompt_ms_per_token_steps"] /
                                              res["prompt_ms_per_token_prefill"], 2)
    res["prefill_speedup_over_ort"] = round(res["ort_prompt_ms_per_token_long"] /
                                            res["prompt_ms_per_token_prefill"], 2)
    res["prefill_modelled_speedup_over_steps"] = round(
        res["prompt_modelled_us_per_token_steps"] / res["prompt_modelled_us_per_token_prefill"], 2)


if __name__ == "__main__":
    main()
