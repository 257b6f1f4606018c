#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes the seeds of build/fuzz/fuzz_serve_grpc into tests/serve/
fuzz-corpus-grpc: byte 0 picks the fuzzer's model (0 affine, 1 scale along
dim 1, 2 fused), the rest is a ModelInferRequest serialized from the
server's .proto, raw and typed.  Usage: grpc_fuzz_seeds.py [OUTDIR]."""

import pathlib
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import grpc_util as gu  # noqa: E402

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "fuzz-corpus-grpc")
out.mkdir(parents=True, exist_ok=True)
gen = pathlib.Path(tempfile.mkdtemp(prefix="grpc-seeds-"))
pb, _ = gu.load(gen)
shutil.rmtree(gen)  # imported: the generated modules are no longer read
seeds = {
    "affine_raw": (0, {"X": np.arange(6, dtype=np.float32).reshape(2, 3)}, True, ["Y"]),
    "affine_typed": (0, {"X": np.arange(3, dtype=np.float32).reshape(1, 3)}, False, []),
    "scale_raw": (1, {"X": np.ones((2, 2, 3), np.float32)}, True, []),
    "fused0_typed": (2, {"graph0/X": np.ones((1, 2), np.float32), "graph0/Y": np.ones((1, 2), np.float32)},
                     False, []),
    "fused1_raw": (2, {"graph1/X": np.ones((1, 1), np.float16)}, True, ["graph1/O"]),
}
for name, (model, ins, raw, outs) in seeds.items():
    q = gu.infer_request(pb, "m", ins, raw, outs, rid="seed")
    (out / name).write_bytes(bytes([model]) + q.SerializeToString())
print(f"{len(seeds)} seeds in {out}")
