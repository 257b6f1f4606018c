#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ipu-serve's KServe v2 gRPC endpoint (--grpc-port) with a client built
at run time from the server's .proto by Debian's python3-grpc-tools:
health, server and model metadata (equal to the HTTP endpoints'),
ModelInfer with raw and typed tensors bit-identical to HTTP's binary
answers for the same request (MLP, CNN, affine, a batch on dim 1, a fused
model with FP16, every integer and BOOL type; several batch sizes), errors
with Triton's status codes and the HTTP path's messages (malformed bytes,
a message over --max-body-size, unknown model, shape, datatype, sizes),
clients gone mid-call, 64 concurrent streams batched together, calls over
--max-connections, metrics shared with HTTP, and the SIGTERM drain; the
server keeps serving throughout.  Ends with "serve-grpc: N passed, N failed"."""

import atexit
import concurrent.futures
import json
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import grpc  # noqa: E402  (deps/serve.txt: python3-grpcio)

import grpc_util as gu  # noqa: E402
from serve_util import (BIN, Overdue, Server, Tally, add_model, build_cnn, build_models, decode, http,  # noqa: E402
                        metric, metrics, run, time_limit)

T = Tally("serve-grpc")
time_limit(900)


def http_infer(url, model, inputs, outputs=None, version=None):
    """The HTTP binary answer for the same tensors: (status, outputs or error text)."""
    hdr = {"inputs": [{"name": k, "datatype": gu.DT[v.dtype.type], "shape": list(v.shape),
                       "parameters": {"binary_data_size": v.nbytes}} for k, v in inputs.items()],
           "parameters": {"binary_data_output": True}}
    if outputs:
        hdr["outputs"] = [{"name": o, "parameters": {"binary_data": True}} for o in outputs]
    h = json.dumps(hdr).encode()
    path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
    st, rh, raw = http("POST", url + path, h + b"".join(np.ascontiguousarray(v).tobytes()
                                                          for v in inputs.values()),
                       {"Inference-Header-Content-Length": str(len(h))})
    if st != 200:
        return st, json.loads(raw)["error"]
    return st, decode(rh, raw)[1]


def rpc_error(fn, *args, **kw):
    """(code, details) of a call that must fail."""
    try:
        fn(*args, **kw)
    except grpc.RpcError as e:
        return e.code(), e.details()
    raise AssertionError("the call succeeded")


def main():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="serve-grpc-"))
    atexit.register(shutil.rmtree, tmp, True)
    pb, pbg = gu.load(tmp / "pb")
    models = build_models(tmp / "models")
    repo = tmp / "repo"
    add_model(repo, "mlp", models["mlp"])
    add_model(repo, "mlp_batched", models["mlp"], config=(
        "max_batch_size: 16\ndynamic_batching:\n  max_queue_delay_microseconds: 20000\n"))
    add_model(repo, "affine", models["affine"], config="max_batch_size: 8\n")
    add_model(repo, "affine", models["affine"], version=2)
    add_model(repo, "scale", models["scale_dim1"], config="max_batch_size: 12\n")
    add_model(repo, "fused", models["fused"])
    types_onnx = tmp / "types.onnx"
    run(["/usr/bin/python3", pathlib.Path(__file__).resolve().parent / "types_model.py", types_onnx])
    run([BIN / "ipu-compile", "--input-model", types_onnx, "--batch-size", "4", "-o", tmp / "types.ipuef"])
    add_model(repo, "types", tmp / "types.ipuef")
    add_model(repo, "cnn", build_cnn(tmp / "cnn"), config="max_batch_size: 8\n")
    add_model(repo, "drain", models["affine"], config=(
        "max_batch_size: 8\ndynamic_batching:\n  max_queue_delay_microseconds: 3000000\n"
        "  preferred_batch_size: [8]\n"))
    add_model(repo, "slow", models["affine"], config=(
        "max_batch_size: 8\ndynamic_batching:\n  max_queue_delay_microseconds: 3000000\n"
        "  preferred_batch_size: [8]\n"))

    rng = np.random.default_rng(7)
    opts = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]

    with Server(repo, "--grpc-port", 0, "--max-body-size", 1 << 20, "--log-verbose", 1) as s:
        assert s.grpc_target, s.text()
        u = s.url
        ch = grpc.insecure_channel(s.grpc_target, options=opts)
        stub = pbg.GRPCInferenceServiceStub(ch)

        def health():
            assert stub.ServerLive(pb.ServerLiveRequest(), timeout=30).live
            assert stub.ServerReady(pb.ServerReadyRequest(), timeout=30).ready
            assert stub.ModelReady(pb.ModelReadyRequest(name="mlp"), timeout=30).ready
            assert stub.ModelReady(pb.ModelReadyRequest(name="affine", version="2"), timeout=30).ready
            assert not stub.ModelReady(pb.ModelReadyRequest(name="affine", version="1"), timeout=30).ready
            assert not stub.ModelReady(pb.ModelReadyRequest(name="nosuch"), timeout=30).ready
            code, _ = rpc_error(stub.ModelReady, pb.ModelReadyRequest(name="mlp", version="x"), timeout=30)
            assert code == grpc.StatusCode.INVALID_ARGUMENT, code
        T.check("ServerLive, ServerReady, ModelReady (versions, unknown model: not ready)", health)

        def server_meta():
            m = stub.ServerMetadata(pb.ServerMetadataRequest(), timeout=30)
            st, _, raw = http("GET", u + "/v2")
            j = json.loads(raw)
            assert st == 200 and m.name == j["name"] and m.version == j["version"], (m, j)
            # shared memory is an HTTP extension only (no gRPC region RPCs)
            assert list(m.extensions) == [e for e in j["extensions"] if e != "system_shared_memory"], (m, j)
        T.check("ServerMetadata equals GET /v2 (but system_shared_memory)", server_meta)

        def model_meta():
            for name in ("mlp", "affine", "types", "fused", "cnn", "scale"):
                m = stub.ModelMetadata(pb.ModelMetadataRequest(name=name), timeout=30)
                st, _, raw = http("GET", u + f"/v2/models/{name}")
                j = json.loads(raw)
                assert st == 200 and m.name == j["name"] and list(m.versions) == j["versions"], (m, j)
                assert m.platform == j["platform"], (m, j)
                for mine, theirs in ((m.inputs, j["inputs"]), (m.outputs, j["outputs"])):
                    assert [(t.name, t.datatype, list(t.shape)) for t in mine] == \
                        [(t["name"], t["datatype"], t["shape"]) for t in theirs], (name, m, j)
            code, det = rpc_error(stub.ModelMetadata, pb.ModelMetadataRequest(name="nosuch"), timeout=30)
            assert code == grpc.StatusCode.NOT_FOUND and "nosuch" in det, (code, det)
        T.check("ModelMetadata equals GET /v2/models/M (6 models); unknown: NOT_FOUND", model_meta)

        def model_config():
            cp, call = gu.config_call(ch)
            mc = __import__("model_config_pb2")
            for name, ver in (("mlp", ""), ("mlp_batched", ""), ("affine", ""), ("affine", "2"),
                              ("scale", ""), ("types", ""), ("fused", ""), ("cnn", "")):
                c = call(cp.ModelConfigRequest(name=name, version=ver), timeout=30).config
                st, _, raw = http("GET", u + f"/v2/models/{name}" + (f"/versions/{ver}" if ver else "") + "/config")
                j = json.loads(raw)
                assert st == 200 and c.name == j["name"] and c.platform == j["platform"], (c, j)
                assert c.max_batch_size == j["max_batch_size"], (c, j)
                assert [g.count for g in c.instance_group] == [g["count"] for g in j["instance_group"]], (c, j)
                assert c.instance_group[0].kind == mc.ModelInstanceGroup.KIND_MODEL
                pol = c.version_policy.WhichOneof("policy_choice")
                assert pol in j["version_policy"], (pol, j)
                if pol == "latest":
                    assert c.version_policy.latest.num_versions == j["version_policy"]["latest"]["num_versions"]
                if "dynamic_batching" in j:
                    d, jd = c.dynamic_batching, j["dynamic_batching"]
                    assert list(d.preferred_batch_size) == jd["preferred_batch_size"], (d, jd)
                    assert d.max_queue_delay_microseconds == jd["max_queue_delay_microseconds"], (d, jd)
                    assert d.default_queue_policy.max_queue_size == jd["default_queue_policy"]["max_queue_size"]
                else:
                    assert c.WhichOneof("scheduling_choice") is None, c
                for mine, theirs in ((c.input, j["input"]), (c.output, j["output"])):
                    want = []
                    for t in theirs:
                        shape = list(t["shape"])
                        # Triton's dims leave out a leading batch dimension
                        if j["max_batch_size"] and shape and shape[0] == -1:
                            shape = shape[1:]
                        want.append((t["name"], "TYPE_" + t["datatype"], shape))
                    assert [(t.name, mc.DataType.Name(t.data_type), list(t.dims)) for t in mine] == want, \
                        (name, mine, theirs)
            c, _ = rpc_error(call, cp.ModelConfigRequest(name="nosuch"), timeout=30)
            assert c == grpc.StatusCode.NOT_FOUND, c
            c, _ = rpc_error(call, cp.ModelConfigRequest(name="mlp", version="1x"), timeout=30)
            assert c == grpc.StatusCode.INVALID_ARGUMENT, c
        T.check("ModelConfig (Triton's model_config.proto) equals GET .../config (8 requests)", model_config)

        fused_x = {"graph0/X": np.array([[1.5, -2.25]], np.float32),
                   "graph0/Y": np.array([[0.5, 4.0]], np.float32)}
        types_in = {"B": np.array([[True, False, True], [False, False, True]]),
                    "I": np.array([[1, -2, 2**30 - 1], [-2**30, 7, 0]], np.int32),
                    "L": np.array([[2**40 + 1, -3, 5], [-2**33, 9, 2**40]], np.int64),
                    "U": np.array([[0, 255, 7], [128, 1, 2]], np.uint8),
                    "S": np.array([[-128, 127, 0], [-1, 1, 5]], np.int8)}
        cases = [
            ("mlp", {"x": rng.uniform(-1, 1, (16, 784)).astype(np.float32)}, None, ""),
            ("mlp", {"x": rng.uniform(-1, 1, (5, 784)).astype(np.float32)}, None, ""),
            ("mlp", {"x": rng.uniform(-1, 1, (1, 784)).astype(np.float32)}, None, ""),
            ("cnn", {"input": rng.uniform(0, 1, (8, 1, 28, 28)).astype(np.float32)}, None, ""),
            ("cnn", {"input": rng.uniform(0, 1, (3, 1, 28, 28)).astype(np.float32)}, None, ""),
            ("affine", {"X": rng.uniform(-8, 8, (3, 3)).astype(np.float32)}, None, "2"),
            ("affine", {"X": rng.uniform(-8, 8, (8, 3)).astype(np.float32)}, ["Y"], ""),
            ("scale", {"X": rng.uniform(-4, 4, (2, 7, 3)).astype(np.float32)}, None, ""),
            ("fused", fused_x, None, ""),
            ("types", types_in, None, ""),
            ("types", {k: v[:1] for k, v in types_in.items()}, ["I2", "NB"], ""),
        ]

        def fix_inputs():
            # the CNN's and the scale model's input names and shapes come from the metadata
            for i, (model, ins, outs, ver) in enumerate(cases):
                m = stub.ModelMetadata(pb.ModelMetadataRequest(name=model), timeout=30)
                if model in ("cnn", "scale"):
                    (arr,) = ins.values()
                    t = m.inputs[0]
                    if model == "scale":
                        shape = [d if d >= 0 else 7 for d in t.shape]
                        arr = rng.uniform(-4, 4, shape).astype(np.float32)
                    cases[i] = (model, {t.name: arr}, outs, ver)
        T.check("the models' input names from ModelMetadata", fix_inputs)

        def bit_identical():
            n = 0
            for model, ins, outs, ver in cases:
                st, want = http_infer(u, model, ins, outs, ver or None)
                assert st == 200, (model, want)
                for raw in (True, False):
                    r = stub.ModelInfer(gu.infer_request(pb, model, ins, raw, outs, ver, rid=f"r{n}"),
                                        timeout=60)
                    got, was_raw = gu.outputs_of(r)
                    assert r.id == f"r{n}" and r.model_name == model, r
                    assert was_raw == raw, (model, raw)
                    assert list(got) == list(want), (model, list(got), list(want))
                    for k in want:
                        assert got[k].dtype == want[k].dtype and got[k].shape == want[k].shape, (model, k)
                        assert got[k].tobytes() == want[k].tobytes(), (model, k, raw)
                    n += 1
            assert n == 2 * len(cases)
        T.check(f"ModelInfer raw and typed == HTTP binary, bit for bit ({len(cases)} requests: "
                "MLP 16/5/1 rows, CNN 8/3, affine v2, dim-1 batch, fused, every type)", bit_identical)

        def fp16():
            ins = {"graph1/X": np.array([[0.75]], np.float16)}
            st, want = http_infer(u, "fused", ins)
            assert st == 200, want
            r = stub.ModelInfer(gu.infer_request(pb, "fused", ins, raw=True), timeout=60)
            got, was_raw = gu.outputs_of(r)
            assert was_raw and got["graph1/O"].dtype == np.float16
            assert got["graph1/O"].tobytes() == want["graph1/O"].tobytes()
            # typed FP16 has no field in the protocol: refused with a way out
            q = pb.ModelInferRequest(model_name="fused")
            q.inputs.add(name="graph1/X", datatype="FP16", shape=[1, 1]).contents.fp32_contents.append(0.75)
            code, det = rpc_error(stub.ModelInfer, q, timeout=60)
            assert code == grpc.StatusCode.INVALID_ARGUMENT and "raw_input_contents" in det, (code, det)
        T.check("FP16: raw in and out equal HTTP's; typed FP16 refused naming raw_input_contents", fp16)

        def bad_inputs():
            X = np.array([[1, 2, 3]], np.float32)
            inv = grpc.StatusCode.INVALID_ARGUMENT
            checks = [
                # (request, code, HTTP request giving the same message or None, text)
                (gu.infer_request(pb, "affine", {"X": X.astype(np.int32)}), inv,
                 ("affine", {"X": X.astype(np.int32)}), "datatype INT32, the model needs FP32"),
                (gu.infer_request(pb, "affine", {"X": np.zeros((1, 4), np.float32)}), inv,
                 ("affine", {"X": np.zeros((1, 4), np.float32)}), "shape [1,4]"),
                (gu.infer_request(pb, "affine", {"Q": X}), inv, ("affine", {"Q": X}), "no input 'Q'"),
                (gu.infer_request(pb, "affine", {"X": X}, outputs=["Z"]), inv,
                 ("affine", {"X": X}, ["Z"]), "no output 'Z'"),
                (gu.infer_request(pb, "affine", {"X": np.zeros((9, 3), np.float32)}), inv,
                 ("affine", {"X": np.zeros((9, 3), np.float32)}), "exceeds max_batch_size 8"),
                (gu.infer_request(pb, "nosuch", {"X": X}), grpc.StatusCode.NOT_FOUND,
                 ("nosuch", {"X": X}), "unknown model 'nosuch'"),
                (gu.infer_request(pb, "affine", {"X": X}, version="1"), grpc.StatusCode.NOT_FOUND,
                 None, "affine"),
                (gu.infer_request(pb, "affine", {"X": X}, version="v1"), inv, None, "whole number"),
            ]
            for q, code, same, text in checks:
                c, det = rpc_error(stub.ModelInfer, q, timeout=60)
                assert c == code and text in det, (c, det, text)
                if same:
                    st, msg = http_infer(u, *same)
                    assert st != 200 and msg == det, (st, msg, det)
            # sizes and encodings only gRPC has
            q = gu.infer_request(pb, "affine", {"X": X})
            q.raw_input_contents[0] = q.raw_input_contents[0][:8]
            c, det = rpc_error(stub.ModelInfer, q, timeout=60)
            assert c == inv and "raw_input_contents size 8, but FP32[1,3] is 12 bytes" in det, det
            q = gu.infer_request(pb, "affine", {"X": X})
            q.raw_input_contents.append(b"1234")
            c, det = rpc_error(stub.ModelInfer, q, timeout=60)
            assert c == inv and "2 raw_input_contents for 1 inputs" in det, det
            q = gu.infer_request(pb, "affine", {"X": X}, raw=False)
            q.inputs[0].contents.fp32_contents.append(4.0)
            c, det = rpc_error(stub.ModelInfer, q, timeout=60)
            assert c == inv and "4 elements in contents.fp32_contents, its shape holds 3" in det, det
            q = gu.infer_request(pb, "affine", {"X": X}, raw=False)
            q.raw_input_contents.append(X.tobytes())
            c, det = rpc_error(stub.ModelInfer, q, timeout=60)
            assert c == inv and "send every input one way" in det, det
            q = pb.ModelInferRequest(model_name="affine")
            q.inputs.add(name="X", datatype="FP32", shape=[1, 3])
            c, det = rpc_error(stub.ModelInfer, q, timeout=60)
            assert c == inv and "no contents" in det, det
            q = gu.infer_request(pb, "types", {k: v[:1] for k, v in types_in.items()}, raw=False)
            q.inputs[4].contents.int_contents[0] = 300
            c, det = rpc_error(stub.ModelInfer, q, timeout=60)
            assert c == inv and "out of range for INT8" in det, det
            q = gu.infer_request(pb, "types", {k: v[:1] for k, v in types_in.items()}, raw=True)
            q.raw_input_contents[0] = b"\x00\x02\x01"
            c, det = rpc_error(stub.ModelInfer, q, timeout=60)
            assert c == inv and "BOOL element 1 is 2" in det, det
            c, det = rpc_error(stub.ModelInfer, pb.ModelInferRequest(model_name="affine"), timeout=60)
            assert c == inv and "non-empty" in det, det
        T.check("bad input: INVALID_ARGUMENT / NOT_FOUND with the HTTP path's messages", bad_inputs)

        def malformed():
            for method in ("ModelInfer", "ModelMetadata", "ModelReady", "ServerLive"):
                call = ch.unary_unary(gu.SERVICE + method)
                for junk in (b"\xff\xff\xff\xff", b"\x0a\x05ab", b"\x12\xff\xff\xff\xff\x0f"):
                    c, det = rpc_error(call, junk, timeout=30)
                    assert c == grpc.StatusCode.INVALID_ARGUMENT and "protobuf" in det, (method, c, det)
            c, det = rpc_error(ch.unary_unary(gu.SERVICE + "ModelConfigX"), b"", timeout=30)
            assert c == grpc.StatusCode.UNIMPLEMENTED, (c, det)
            c, det = rpc_error(ch.unary_unary("/other.Service/Call"), b"", timeout=30)
            assert c == grpc.StatusCode.UNIMPLEMENTED, (c, det)
        T.check("malformed protobuf bytes: INVALID_ARGUMENT; unknown methods: UNIMPLEMENTED", malformed)

        def too_large():
            big = np.zeros((8, 40000), np.float32)  # 1.28 MB over --max-body-size 1 MiB
            q = pb.ModelInferRequest(model_name="affine")
            q.inputs.add(name="X", datatype="FP32", shape=[8, 40000])
            q.raw_input_contents.append(big.tobytes())
            c, det = rpc_error(stub.ModelInfer, q, timeout=60)
            assert c == grpc.StatusCode.RESOURCE_EXHAUSTED, (c, det)
        T.check("a message over --max-body-size: RESOURCE_EXHAUSTED", too_large)

        def gone_mid_call():
            X = np.array([[1, 2, 3]], np.float32)
            # a deadline shorter than the model's 3 s batching wait
            c, _ = rpc_error(stub.ModelInfer, gu.infer_request(pb, "slow", {"X": X}), timeout=0.3)
            assert c == grpc.StatusCode.DEADLINE_EXCEEDED, c
            # a call cancelled by its client, and a client process killed mid-call
            f = stub.ModelInfer.future(gu.infer_request(pb, "slow", {"X": X}), timeout=60)
            time.sleep(0.3)
            assert f.cancel()
            code = (f"import sys, grpc; sys.path.insert(0, {str(tmp / 'pb')!r}); "
                    "import grpc_predict_v2_pb2 as pb, grpc_predict_v2_pb2_grpc as g; "
                    f"ch = grpc.insecure_channel({s.grpc_target!r}); "
                    "q = pb.ModelInferRequest(model_name='slow'); "
                    "q.inputs.add(name='X', datatype='FP32', shape=[1, 3]).contents.fp32_contents.extend([1, 2, 3]); "
                    "print('sent', flush=True); g.GRPCInferenceServiceStub(ch).ModelInfer(q)")
            p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
            assert p.stdout.readline().strip() == b"sent"
            time.sleep(0.5)
            p.kill()
            p.wait(30)
            # the server keeps serving, each answer its own
            r = stub.ModelInfer(gu.infer_request(pb, "affine", {"X": X}), timeout=60)
            got, _ = gu.outputs_of(r)
            assert np.array_equal(got["Y"], X * 2 + np.array([10, 20, 30], np.float32)), got
        T.check("clients gone mid-call (deadline, cancel, killed): the server keeps serving", gone_mid_call)

        def concurrent_streams():
            before = metrics(s.metrics_url)
            xs = [rng.uniform(-1, 1, (int(rng.integers(1, 4)), 784)).astype(np.float32) for _ in range(64)]
            wants = [http_infer(u, "mlp", {"x": x})[1]["y"] for x in xs]
            mid = metrics(s.metrics_url)

            def one(i):
                r = stub.ModelInfer(gu.infer_request(pb, "mlp_batched", {"x": xs[i]}, raw=bool(i % 2),
                                                     rid=str(i)), timeout=120)
                return r.id, gu.outputs_of(r)[0]["y"]
            with concurrent.futures.ThreadPoolExecutor(64) as ex:
                res = list(ex.map(one, range(64)))
            for i, (rid, y) in enumerate(res):
                assert rid == str(i) and y.tobytes() == wants[i].tobytes(), i
            after = metrics(s.metrics_url)
            ok = metric(after, "ipu_inference_request_success", "mlp_batched") - \
                metric(mid, "ipu_inference_request_success", "mlp_batched")
            execs = metric(after, "ipu_inference_exec_count", "mlp_batched") - \
                metric(mid, "ipu_inference_exec_count", "mlp_batched")
            assert ok == 64, ok
            assert execs < 64, execs  # batched with each other
            assert metric(mid, "ipu_inference_request_success", "mlp") - \
                metric(before, "ipu_inference_request_success", "mlp") == 64
            print(f"# 64 concurrent gRPC calls on one channel: {int(execs)} executions", flush=True)
        T.check("64 concurrent streams on one channel: each its own answer, batched, counted", concurrent_streams)

        def statistics():
            sp = gu.load_stats()
            call = gu.statistics_call(ch)

            def same(mine, theirs):
                assert mine.name == theirs["name"] and mine.version == theirs["version"], (mine, theirs)
                for k in ("last_inference", "inference_count", "execution_count"):
                    assert getattr(mine, k) == theirs[k], (k, mine, theirs)
                for k in ("success", "fail", "queue", "compute_input", "compute_infer", "compute_output"):
                    d = getattr(mine.inference_stats, k)
                    assert (d.count, d.ns) == (theirs["inference_stats"][k]["count"],
                                               theirs["inference_stats"][k]["ns"]), (k, mine, theirs)
                assert [(b.batch_size, b.compute_infer.count, b.compute_infer.ns) for b in mine.batch_stats] == \
                    [(b["batch_size"], b["compute_infer"]["count"], b["compute_infer"]["ns"])
                     for b in theirs["batch_stats"]], (mine, theirs)
            # nothing runs meanwhile: both read the same counters
            for name, ver, path in (("mlp_batched", "", "/v2/models/mlp_batched/stats"),
                                    ("affine", "2", "/v2/models/affine/versions/2/stats"),
                                    ("", "", "/v2/models/stats")):
                r = call(sp.ModelStatisticsRequest(name=name, version=ver), timeout=30)
                st, _, raw = http("GET", u + path)
                j = json.loads(raw)["model_stats"]
                assert st == 200 and len(r.model_stats) == len(j), (path, len(r.model_stats), len(j))
                for mine, theirs in zip(r.model_stats, j):
                    same(mine, theirs)
            r = call(sp.ModelStatisticsRequest(name="mlp_batched"), timeout=30)
            assert r.model_stats[0].inference_count >= 64 and r.model_stats[0].execution_count < 64, r
            c, _ = rpc_error(call, sp.ModelStatisticsRequest(name="nosuch"), timeout=30)
            assert c == grpc.StatusCode.NOT_FOUND, c
            c, _ = rpc_error(call, sp.ModelStatisticsRequest(name="mlp", version="x"), timeout=30)
            assert c == grpc.StatusCode.INVALID_ARGUMENT, c
        T.check("ModelStatistics (Triton's) equals GET .../stats: one model, one version, all", statistics)

        def still_alive():
            model, ins, outs, ver = cases[0]
            st, want = http_infer(u, model, ins)
            r = stub.ModelInfer(gu.infer_request(pb, model, ins), timeout=60)
            assert gu.outputs_of(r)[0]["y"].tobytes() == want["y"].tobytes()
            assert s.proc.poll() is None
        T.check("still serving bit-identical results after everything above", still_alive)

        def drain():
            X = np.array([[7, 8, 9]], np.float32)
            f = stub.ModelInfer.future(gu.infer_request(pb, "drain", {"X": X}), timeout=60)
            deadline = time.monotonic() + 30
            while (n := metric(metrics(s.metrics_url), "ipu_inference_pending_request_count", "drain")) != 1:
                assert time.monotonic() < deadline and not f.done(), f"the call never queued ({n} pending)"
                time.sleep(0.02)
            s.proc.send_signal(signal.SIGTERM)
            r = f.result(timeout=60)
            assert np.array_equal(gu.outputs_of(r)[0]["Y"], X * 2 + np.array([10, 20, 30], np.float32))
            rc = s.stop()
            assert rc == 0, (rc, s.text()[-2000:])
            c, _ = rpc_error(stub.ServerLive, pb.ServerLiveRequest(), timeout=5)
            assert c == grpc.StatusCode.UNAVAILABLE, c
        T.check("SIGTERM: the call in flight is answered, exit 0, then UNAVAILABLE", drain)
        ch.close()

    with Server(repo, "--grpc-port", 0, "--max-connections", 2, "--request-timeout", 2) as s:
        def max_calls():
            ch2 = grpc.insecure_channel(s.grpc_target, options=opts)
            st2 = pbg.GRPCInferenceServiceStub(ch2)
            X = np.array([[1, 2, 3]], np.float32)
            fs = [st2.ModelInfer.future(gu.infer_request(pb, "slow", {"X": X}), timeout=60) for _ in range(4)]
            codes = []
            for f in fs:
                try:
                    f.result()
                    codes.append("OK")
                except grpc.RpcError as e:
                    codes.append(e.code().name)
            assert sorted(codes) == ["OK", "OK", "RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED"], codes
            assert st2.ServerLive(pb.ServerLiveRequest(), timeout=30).live
            ch2.close()
        T.check("calls over --max-connections: RESOURCE_EXHAUSTED, the others answered", max_calls)

        def stalled():
            # a call whose request message never comes holds its place until --request-timeout
            ch3 = grpc.insecure_channel(s.grpc_target, options=opts)
            call = ch3.stream_unary(gu.SERVICE + "ModelInfer")
            release = threading.Event()

            def never():
                release.wait(60)
                return
                yield b""  # a generator that sends nothing
            t0 = time.monotonic()
            c, det = rpc_error(call, never(), timeout=30)
            took = time.monotonic() - t0
            release.set()
            assert c == grpc.StatusCode.DEADLINE_EXCEEDED and "--request-timeout" in det, (c, det)
            assert took < 10, took
            # its place is free again: two calls at once still fit in --max-connections 2
            st3 = pbg.GRPCInferenceServiceStub(ch3)
            X = np.array([[1, 2, 3]], np.float32)
            fs = [st3.ModelInfer.future(gu.infer_request(pb, "affine", {"X": X}), timeout=60) for _ in range(2)]
            for f in fs:
                assert np.array_equal(gu.outputs_of(f.result())[0]["Y"], X * 2 + np.array([10, 20, 30], np.float32))
            ch3.close()
        T.check("a call whose message never comes: DEADLINE_EXCEEDED after --request-timeout", stalled)
        rc = s.stop()
        T.check("exit 0", lambda: rc == 0)


if __name__ == "__main__":
    try:
        main()
    except Overdue as e:
        print(f"not ok - {e}")
        T.failed += 1
    sys.exit(T.finish())
