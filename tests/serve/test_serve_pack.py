# SPDX-License-Identifier: MIT
"""Packing of variable-length requests (config.yaml's packing: block,
server/pack.c): a BERT-shaped encoder in PopRT's packed form
(tests/serve/packed_bert.py: 4 layers, d 256, 128 tokens, segment ids as
attention_mask, positions restarting per sequence) served twice from one
.ipuef: 'bert' packs sequences of 8..128 tokens (seeded) into rows of 128,
'bert_pad' takes each padded to 128 as the reference.  Every packed
answer (per-token hidden states and the per-sequence pooled mean) is
compared with the same request padded and alone, and with torch's model
run on the sequence alone; bad requests and packing configs are refused
with messages that say what to fix."""

import json
import os
import pathlib
import sys
import tempfile
import threading

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_util import BIN, Server, Tally, add_model, decode, http, run, time_limit  # noqa: E402

T, SEGS, D, N = 128, 8, 256, 16

PACKING = """max_batch_size: 2
dynamic_batching: {{ max_queue_delay_microseconds: {delay} }}
packing:
  sequence_inputs: [input_ids]
  mask_input: {mask}
  mask_kind: segment_ids
  position_input: position_ids
  max_sequence_length: 128
  max_sequences_per_row: 8
  segment_outputs: [pooled]
"""

# the same in Triton's config.pbtxt: the ragged inputs are the sequence inputs
PBTXT = """max_batch_size: 2
input [
  { name: "input_ids" data_type: TYPE_INT32 dims: [ -1 ] allow_ragged_batch: true },
  { name: "attention_mask" data_type: TYPE_INT32 dims: [ -1 ] },
  { name: "position_ids" data_type: TYPE_INT32 dims: [ -1 ] }
]
"""
PBTXT_PARAMS = """parameters { key: "packing_mask_input" value { string_value: "attention_mask" } }
parameters { key: "packing_mask_kind" value { string_value: "segment_ids" } }
parameters { key: "packing_position_input" value { string_value: "position_ids" } }
parameters { key: "packing_max_sequence_length" value { string_value: "128" } }
parameters { key: "packing_max_sequences_per_row" value { string_value: "8" } }
parameters { key: "packing_segment_outputs" value { string_value: "pooled" } }
"""


def infer(url, model, inputs, outputs=("hidden", "pooled")):
    body = {"inputs": [{"name": k, "datatype": "INT32", "shape": list(v.shape),
                        "data": v.flatten().tolist()} for k, v in inputs.items()],
            "outputs": [{"name": o, "parameters": {"binary_data": True}} for o in outputs]}
    return http("POST", f"{url}/v2/models/{model}/infer", body,
                {"Content-Type": "application/json"}, timeout=300)


def padded(ids):
    n = len(ids)
    x = np.zeros((1, T), np.int32)
    x[0, :n] = ids
    mask = np.zeros((1, T), np.int32)
    mask[0, :n] = 1
    pos = np.zeros((1, T), np.int32)
    pos[0, :n] = np.arange(n)
    return {"input_ids": x, "attention_mask": mask, "position_ids": pos}


def torch_reference(seqs):
    import torch
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from packed_bert import build
    model = build(4, D, T, SEGS)
    out = []
    with torch.no_grad():
        for ids in seqs:
            n = len(ids)
            x = torch.from_numpy(np.asarray(ids, np.int32).reshape(1, n))
            h, p = model(x, torch.ones((1, n), dtype=torch.int32),
                         torch.arange(n, dtype=torch.int32).reshape(1, n))
            out.append((h.numpy(), p.numpy()[:, 0]))
    return out


def main():
    t = Tally("serve-pack")
    time_limit(1500)
    rng = np.random.default_rng(2024)
    lengths = rng.integers(8, T + 1, N)
    seqs = [rng.integers(1, 1000, n).astype(np.int32) for n in lengths]
    with tempfile.TemporaryDirectory(prefix="ipu-serve-pack-") as tmp:
        tmp = pathlib.Path(tmp)
        repo = tmp / "repo"
        run(["/usr/bin/python3", pathlib.Path(__file__).resolve().parent / "packed_bert.py",
             tmp / "bert.onnx", "--batch", "2"])
        run([BIN / "ipu-compile", "--input-model", tmp / "bert.onnx", "-o", tmp / "bert.ipuef"])
        add_model(repo, "bert", tmp / "bert.ipuef",
                  config=PACKING.format(delay=3000000, mask="attention_mask"))
        add_model(repo, "bert_pad", tmp / "bert.ipuef", config="max_batch_size: 2\n")
        # the same weights taking the block-diagonal additive mask itself
        run(["/usr/bin/python3", pathlib.Path(__file__).resolve().parent / "packed_bert.py",
             tmp / "add.onnx", "--batch", "2", "--additive"])
        run([BIN / "ipu-compile", "--input-model", tmp / "add.onnx", "-o", tmp / "add.ipuef"])
        add_model(repo, "bert_add", tmp / "add.ipuef",
                  config=PACKING.format(delay=3000000, mask="attention_mask").replace(
                      "segment_ids", "additive").replace("  segment_outputs: [pooled]\n", ""))
        add_model(repo, "bad_mask", tmp / "bert.ipuef",
                  config=PACKING.format(delay=0, mask="segment_ids"))
        add_model(repo, "bad_field", tmp / "bert.ipuef",
                  config=PACKING.format(delay=0, mask="attention_mask") + "  pad_to: 128\n")
        add_model(repo, "bad_out", tmp / "bert.ipuef",
                  config=PACKING.format(delay=0, mask="attention_mask").replace(
                      "segment_outputs: [pooled]", "segment_outputs: []"))
        for name, extra in (("bert_pbtxt", PBTXT_PARAMS), ("bad_pbtxt", "")):
            (repo / name / "1").mkdir(parents=True)
            (repo / name / "1" / "model.ipuef").symlink_to(tmp / "bert.ipuef")
            (repo / name / "config.pbtxt").write_text(PBTXT + extra)
        # SERVE_NO_GRPC: a server built with ThreadSanitizer, whose reports
        # inside Debian's uninstrumented libgrpc say nothing of ours
        # (Documentation/serve/grpc.md): the HTTP checks only
        use_grpc = not os.environ.get("SERVE_NO_GRPC")
        if use_grpc:
            import grpc
            import grpc_util
            pb, pbg = grpc_util.load(tmp / "pb")
        with Server(repo, *(("--grpc-port", 0) if use_grpc else ()), "--model-control-mode", "explicit", "--load-model", "bert",
                    "--load-model", "bert_pad", "--load-model", "bert_pbtxt", "--load-model", "bert_add") as s:
            ref = []
            for ids in seqs:
                st, hdr, raw = infer(s.url, "bert_pad", padded(ids))
                assert st == 200, raw
                _, o = decode(hdr, raw)
                ref.append((o["hidden"][:, :len(ids)], o["pooled"][:, 0]))
            def concurrently(model, outputs):
                got, errs = [None] * N, []

                def client(i):
                    try:
                        st, hdr, raw = infer(s.url, model, {"input_ids": seqs[i].reshape(1, -1)},
                                             outputs)
                        assert st == 200, raw
                        got[i] = decode(hdr, raw)[1]
                    except Exception as e:  # reported by the checks
                        errs.append(e)
                threads = [threading.Thread(target=client, args=(i,)) for i in range(N)]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join()
                return got, errs
            got, errs = concurrently("bert", ("hidden", "pooled"))

            def shapes():
                assert not errs, errs
                for i, ids in enumerate(seqs):
                    assert got[i]["hidden"].shape == (1, len(ids), D), got[i]["hidden"].shape
                    assert got[i]["pooled"].shape == (1, D), got[i]["pooled"].shape
            t.check(f"{N} requests of {min(lengths)}..{max(lengths)} tokens packed: each gets "
                    "[1, L, 256] per token and [1, 256] pooled", shapes)

            def packed():
                st, _, raw = http("GET", s.url + "/v2/models/bert/stats")
                st_ = json.loads(raw)["model_stats"][0]
                execs, infs = st_["execution_count"], st_["inference_count"]
                print(f"# {N} requests, {int(lengths.sum())} tokens in {execs} executions "
                      f"of up to 2 rows of {T} (padding: {N} rows)")
                assert infs == N and execs <= (N + 1) // 2, (infs, execs)
            t.check("several sequences share a row (fewer executions than padded rows / 2)", packed)

            def same_as_padded():
                hd = max(float(np.abs(got[i]["hidden"] - ref[i][0]).max()) for i in range(N))
                pd = max(float(np.abs(got[i]["pooled"] - ref[i][1]).max()) for i in range(N))
                same = sum(np.array_equal(got[i]["hidden"], ref[i][0]) and
                           np.array_equal(got[i]["pooled"], ref[i][1]) for i in range(N))
                print(f"# packed vs padded alone: {same} of {N} bit-identical, max |diff| "
                      f"hidden {hd:.3g}, pooled {pd:.3g}")
                # the other sequences' keys add exact zeros (exp(-10000) underflows)
                # to the softmax and pooling sums, and the device's sums keep their
                # order wherever a sequence sits: bit-identical
                assert same == N, (hd, pd)
            t.check("every packed answer is bit-identical to the padded one alone", same_as_padded)

            def same_as_torch():
                tr = torch_reference(seqs)
                hd = max(float(np.abs(got[i]["hidden"] - tr[i][0]).max()) for i in range(N))
                pd = max(float(np.abs(got[i]["pooled"] - tr[i][1]).max()) for i in range(N))
                print(f"# packed vs torch on each sequence alone: max |diff| hidden {hd:.3g}, "
                      f"pooled {pd:.3g}")
                assert hd <= 1e-3 and pd <= 1e-3, (hd, pd)
            t.check("every packed answer equals torch's on the sequence alone (within 1e-3)",
                    same_as_torch)

            def additive():
                add, errs_a = concurrently("bert_add", ("hidden",))
                assert not errs_a, errs_a
                same = sum(np.array_equal(add[i]["hidden"], ref[i][0]) for i in range(N))
                hd = max(float(np.abs(add[i]["hidden"] - ref[i][0]).max()) for i in range(N))
                st, _, raw = http("GET", s.url + "/v2/models/bert_add/stats")
                execs = json.loads(raw)["model_stats"][0]["execution_count"]
                print(f"# additive mask: {N} requests in {execs} executions, {same} of {N} "
                      f"bit-identical to the segment-id model padded alone, max |diff| {hd:.3g}")
                assert same == N and execs <= (N + 1) // 2, (same, hd, execs)
            t.check("mask_kind additive: the server's block-diagonal mask gives the same answers",
                    additive)

            def over_grpc():
                stub = pbg.GRPCInferenceServiceStub(grpc.insecure_channel(s.grpc_target))
                res, errs_g = [None] * 4, []

                def call(i):
                    try:
                        q = grpc_util.infer_request(pb, "bert", {"input_ids": seqs[i].reshape(1, -1)})
                        res[i] = grpc_util.outputs_of(stub.ModelInfer(q, timeout=300))[0]
                    except Exception as e:  # reported below
                        errs_g.append(e)
                threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join()
                assert not errs_g, errs_g
                for i in range(4):
                    assert np.array_equal(res[i]["hidden"], ref[i][0]), i
                    assert np.array_equal(res[i]["pooled"], ref[i][1]), i
                q = grpc_util.infer_request(pb, "bert", {"input_ids": np.ones((1, T + 1), np.int32)})
                try:
                    stub.ModelInfer(q, timeout=60)
                    raise AssertionError("a 129-token sequence was answered")
                except grpc.RpcError as e:
                    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e.code()
                    assert "longer than max_sequence_length 128" in e.details(), e.details()
            if use_grpc:
                t.check("gRPC ModelInfer packs alike (4 at once, bit-identical); 129 tokens: "
                        "INVALID_ARGUMENT", over_grpc)

            def metadata():
                st, _, raw = http("GET", s.url + "/v2/models/bert")
                assert st == 200, (st, raw)
                meta = json.loads(raw)
                ins = {x["name"]: x["shape"] for x in meta["inputs"]}
                outs = {x["name"]: x["shape"] for x in meta["outputs"]}
                assert ins == {"input_ids": [1, -1]}, ins
                assert outs == {"hidden": [1, -1, D], "pooled": [1, D]}, outs
                st, _, raw = http("GET", s.url + "/v2/models/bert/config")
                assert st == 200 and b"attention_mask" in raw, (st, raw)
                if use_grpc:
                    stub = pbg.GRPCInferenceServiceStub(grpc.insecure_channel(s.grpc_target))
                    m = stub.ModelMetadata(pb.ModelMetadataRequest(name="bert"), timeout=30)
                    assert {x.name: list(x.shape) for x in m.inputs} == ins, m.inputs
                    assert {x.name: list(x.shape) for x in m.outputs} == outs, m.outputs
            t.check("metadata (HTTP and gRPC) gives a request's view: input_ids [1, -1], no mask "
                    "or positions, hidden [1, -1, 256], pooled [1, 256]; config the model's own",
                    metadata)

            def refused(inputs, needle):
                st, _, raw = infer(s.url, "bert", inputs)
                assert st == 400 and needle in raw, (st, raw)
            long_ids = np.ones((1, T + 1), np.int32)
            t.check("a sequence longer than max_sequence_length: 400", refused,
                    {"input_ids": long_ids}, b"a sequence of 129 tokens is longer than "
                    b"max_sequence_length 128")
            t.check("an empty sequence: 400", refused, {"input_ids": np.zeros((1, 0), np.int32)},
                    b"an empty sequence")
            t.check("two sequences in one request: 400", refused,
                    {"input_ids": np.ones((2, 8), np.int32)}, b"'shape' must be [1, L]")
            t.check("the mask sent by the client: 400", refused,
                    {"input_ids": np.ones((1, 8), np.int32),
                     "attention_mask": np.ones((1, 8), np.int32)},
                    b"input 'attention_mask' is made by the server")

            def bad_config(model, needle):
                st, _, raw = http("POST", f"{s.url}/v2/repository/models/{model}/load", {})
                assert st == 400 and needle in raw, (st, raw)
            t.check("a packing config naming an input the model lacks: not loaded", bad_config,
                    "bad_mask", b"packing: mask_input 'segment_ids' is not one of the model's "
                    b"('input_ids', 'attention_mask', 'position_ids')")
            t.check("an unknown packing field: not loaded", bad_config, "bad_field",
                    b"packing: unknown field 'pad_to'")
            t.check("a per-sequence output not named in segment_outputs: not loaded", bad_config,
                    "bad_out", b"output 'pooled' must be [batch, 128, ...]")
            def pbtxt():
                st, hdr, raw = infer(s.url, "bert_pbtxt", {"input_ids": seqs[0].reshape(1, -1)})
                assert st == 200, raw
                o = decode(hdr, raw)[1]
                assert np.array_equal(o["hidden"], ref[0][0]) and np.array_equal(o["pooled"], ref[0][1])
            t.check("config.pbtxt: allow_ragged_batch and packing_* parameters pack alike", pbtxt)
            t.check("config.pbtxt: allow_ragged_batch without the packing parameters: not loaded",
                    bad_config, "bad_pbtxt", b"allow_ragged_batch packs sequences: parameters "
                    b"packing_mask_input, packing_max_sequence_length and "
                    b"packing_max_sequences_per_row are needed")
            t.check("SIGTERM: exit 0", lambda: s.stop() == 0 or (_ for _ in ()).throw(AssertionError()))
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
