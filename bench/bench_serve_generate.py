# SPDX-License-Identifier: MIT
"""Generation served by ipu-serve with continuous batching, beside the
runtime's own figures (make bench-serve-generate; bench/bench_serve_generate.md):

  bench_serve_generate.py [--build build] [--positions 128] [--slots 8]
                          [--new 64] [--shape tiny|gpt2s]

The decoder of tests/gen/tiny_gpt.py (its tiny shape, or GPT-2 small's with
seeded random weights) exported with --slots cache slots and compiled with
its cache as state.  For K = 1, 4 and 8 sequences at once:

  runtime  bench/bench_generate_slots: K greedy sequences started together
           through the step API (prompt k: the 8 ids k+1 .. k+8), decode
           tokens/s over all sequences;
  served   K clients each streaming /generate_stream over HTTP on loopback
           with the same prompts, started together: tokens/s over all
           streams from the first request sent to the last final event
           (prompts, HTTP and the events included), and decode tokens/s
           from the moment every stream has its first token to the end.

Every stream's tokens are checked against ipu-run --generate's for its
prompt.  Prints one JSON object."""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "serve"))
sys.path.insert(0, str(ROOT / "tests" / "gen"))


def run(cmd):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--positions", type=int, default=128)
    ap.add_argument("--slots", type=int, default=8)
    ap.add_argument("--new", type=int, default=64, help="new tokens per sequence")
    ap.add_argument("--shape", choices=("tiny", "gpt2s"), default="tiny")
    a = ap.parse_args()
    build = pathlib.Path(a.build).resolve()
    os.environ["BUILD"] = str(build)
    import serve_util  # noqa: E402 (reads BUILD)
    import test_serve_generate as tg  # noqa: E402
    import tiny_gpt  # noqa: E402

    tiny_gpt.POS = a.positions
    if a.shape == "gpt2s":
        tiny_gpt.gpt2_small(a.positions)
    tiny_gpt.SLOTS = a.slots
    res = {"shape": a.shape, "positions": a.positions, "slots": a.slots, "new_tokens_each": a.new,
           "prompt_tokens": 8, "load_average": round(os.getloadavg()[0], 1)}
    with tempfile.TemporaryDirectory(prefix="bench-serve-gen-") as d:
        d = pathlib.Path(d)
        tiny_gpt.export(str(d / "slots.onnx"))
        target = (["--target", "tiles=32,tile-mem=256KiB"] if a.shape == "tiny"
                  else ["--ipu-version", "ipu2"])
        model = d / "slots.ipuef"
        run([build / "bin" / "ipu-compile", "--input-model", d / "slots.onnx", *target, "-o", model])
        repo = d / "repo"
        serve_util.add_model(repo, "gpt", model)
        ks = sorted({1, min(4, a.slots), a.slots})
        prompts = [list(range(k + 1, k + 9)) for k in range(max(ks))]
        refs = [tg.ipu_run_generate(model, p, a.new) for p in prompts]
        for k in ks:
            o = json.loads(run([build / "bench" / "bench_generate_slots", model, k, a.new]))
            res[f"runtime_{k}_decode_tokens_per_s"] = round(o["tokens_per_s"], 1)
        ok = True
        with serve_util.Server(repo) as s:
            for k in ks:
                got, first, last = [None] * k, [0.0] * k, [0.0] * k
                go = threading.Barrier(k + 1)

                def one(i):
                    go.wait()
                    c = tg.SSE(s.port, {"input_ids": prompts[i], "parameters": {"max_tokens": a.new}})
                    ids = []
                    while (e := c.next()) is not None and not e.get("final"):
                        if not ids:
                            first[i] = time.monotonic()
                        ids += e["output_ids"]
                    last[i] = time.monotonic()
                    c.close()
                    got[i] = ids

                ts = [threading.Thread(target=one, args=(i,)) for i in range(k)]
                for t in ts:
                    t.start()
                go.wait()
                t0 = time.monotonic()
                for t in ts:
                    t.join()
                t1 = max(last)
                ok &= got == refs[:k]
                res[f"served_{k}_tokens_per_s"] = round(k * a.new / (t1 - t0), 1)
                res[f"served_{k}_decode_tokens_per_s"] = round(k * (a.new - 1) / (t1 - max(first)), 1)
            res["server_exit"] = s.stop()
        res["tokens_equal_ipu_run"] = ok
    print(json.dumps(res))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
