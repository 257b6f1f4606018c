#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ipu-serve end to end over loopback HTTP with clients nobody on the
project wrote (curl, Python's urllib and requests): every endpoint, JSON
and binary tensors compared bit for bit with ipu-run's results on the same
inputs, fused models, dynamic batching (metrics show fewer executions than
requests, and no request gets another's rows), bad input (4xx JSON errors,
the server keeps serving), a full queue (503), repository load/unload and
the SIGTERM drain.  Models are built by the project's own tools.  Ends
with "serve: N passed, N failed"."""

import concurrent.futures
import atexit
import json
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_util import (BIN, Overdue, Server, Tally, add_model, build_cnn, build_models,  # noqa: E402
                        decode, http, infer_json, ipu_run, metric, metrics, run, time_limit)

try:
    import requests
except ImportError:  # deps/serve.txt installs python3-requests
    requests = None

T = Tally("serve")
# a hung server must not hang make check
time_limit(900)

AFFINE_W = np.array([10, 20, 30], np.float32)


def affine_ref(x):
    return x * np.float32(2) + AFFINE_W


def curl(*args):
    r = subprocess.run(["curl", "-sS", "--max-time", "60", *args], capture_output=True, timeout=90)
    return r.returncode, r.stdout


def wait_pending(url, model, n, timeout=60):
    """Poll the metrics until `n` requests of model wait for a device."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if metric(metrics(url), "ipu_inference_pending_request_count", model) == n:
            return
        time.sleep(0.02)
    raise AssertionError(f"{model}: pending never reached {n}")


def main():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="serve-test-"))
    atexit.register(shutil.rmtree, tmp, True)
    models = build_models(tmp / "models")
    repo = tmp / "repo"
    add_model(repo, "mlp", models["mlp"])  # no config: derived from the .ipuef
    add_model(repo, "mlp_batched", models["mlp"], config=(
        "name: mlp_batched\nmax_batch_size: 16\n"
        "dynamic_batching:\n  max_queue_delay_microseconds: 2000000\n"))
    add_model(repo, "affine", models["affine"], config="max_batch_size: 8\n")
    add_model(repo, "affine", models["affine"], version=2)
    add_model(repo, "scale", models["scale_dim1"], config=(
        "max_batch_size: 12\ndynamic_batching: { max_queue_delay_microseconds: 2000000 }\n"))
    add_model(repo, "fused", models["fused"])
    types_onnx = tmp / "types.onnx"
    run(["/usr/bin/python3", pathlib.Path(__file__).resolve().parent / "types_model.py", types_onnx])
    run([BIN / "ipu-compile", "--input-model", types_onnx, "--batch-size", "4", "-o", tmp / "types.ipuef"])
    add_model(repo, "types", tmp / "types.ipuef")
    cnn = build_cnn(tmp / "cnn")
    add_model(repo, "cnn", cnn, config=(
        "max_batch_size: 8\ndynamic_batching:\n  max_queue_delay_microseconds: 2000000\n"
        "  preferred_batch_size: [8]\n"))
    add_model(repo, "queue1", models["affine"], config=(
        "max_batch_size: 4\n"
        "dynamic_batching:\n  max_queue_delay_microseconds: 3000000\n"
        "  default_queue_policy: { max_queue_size: 1 }\n"))

    rng = np.random.default_rng(16)
    x16 = rng.uniform(-1, 1, (16, 784)).astype(np.float32)
    ref16 = ipu_run(models["mlp"], {"x": x16}, ["y"], tmp)["y"]
    x5 = x16[3:8].copy()
    ref5 = ipu_run(models["mlp"], {"x": x5}, ["y"], tmp, ["--batch-size", "5"])["y"]

    with Server(repo, "--max-body-size", 1 << 20, "--log-verbose", 1) as s:
        u = s.url

        def health():
            rc, out = curl("-f", u + "/v2/health/live")
            assert rc == 0 and json.loads(out) == {"live": True}, (rc, out)
            rc, out = curl("-f", u + "/v2/health/ready")
            assert rc == 0 and json.loads(out) == {"ready": True}, (rc, out)
        T.check("health live and ready (curl)", health)

        def server_meta():
            st, _, raw = http("GET", u + "/v2")
            j = json.loads(raw)
            assert st == 200 and j["name"] == "ipu-serve", j
            assert set(j["extensions"]) == {"binary_tensor_data", "model_repository", "generate", "statistics",
                                        "system_shared_memory"}, j
        T.check("server metadata GET /v2", server_meta)

        def model_meta():
            st, _, raw = http("GET", u + "/v2/models/mlp")
            j = json.loads(raw)
            assert st == 200, raw
            assert j["name"] == "mlp" and j["versions"] == ["1"] and j["platform"] == "ipu_ipuef"
            assert j["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 784]}], j
            assert j["outputs"] == [{"name": "y", "datatype": "FP32", "shape": [-1, 10]}], j
            st, _, raw = http("GET", u + "/v2/models/affine")
            assert json.loads(raw)["versions"] == ["2"], raw  # latest policy: one version
            st, _, raw = http("GET", u + "/v2/models/affine/versions/2")
            assert st == 200
            st, _, raw = http("GET", u + "/v2/models/affine/versions/1")
            assert st == 404 and "no version 1" in json.loads(raw)["error"], raw
            st, _, raw = http("GET", u + "/v2/models/fused")
            names = {t["name"] for t in json.loads(raw)["inputs"]}
            assert names == {"graph0/X", "graph0/Y", "graph1/X"}, names
        T.check("model metadata (versions, shapes with -1 batch, fused anchors)", model_meta)

        def model_config():
            st, _, raw = http("GET", u + "/v2/models/mlp_batched/config")
            j = json.loads(raw)
            assert st == 200 and j["max_batch_size"] == 16, j
            assert j["dynamic_batching"]["max_queue_delay_microseconds"] == 2000000, j
            j = json.loads(http("GET", u + "/v2/models/mlp/config")[2])
            assert j["max_batch_size"] == 16 and "dynamic_batching" not in j, j
        T.check("model config (from config.yaml, or derived from the .ipuef)", model_config)

        def ready():
            st, _, raw = http("GET", u + "/v2/models/mlp/ready")
            assert st == 200 and json.loads(raw)["ready"] is True, raw
            st, _, _ = http("GET", u + "/v2/models/mlp/versions/1/ready")
            assert st == 200
            st, _, raw = http("GET", u + "/v2/models/nosuch/ready")
            assert st == 400 and "error" in json.loads(raw)
        T.check("model ready", ready)

        def json_infer():
            st, hdr, raw = infer_json(u, "mlp", {"x": x16}, rid="req-7")
            assert st == 200, raw
            j, out = decode(hdr, raw)
            assert j["id"] == "req-7" and j["model_name"] == "mlp" and j["model_version"] == "1", j
            assert out["y"].shape == (16, 10) and np.array_equal(out["y"], ref16)
        T.check("JSON infer, 16 rows: bit-identical to ipu-run", json_infer)

        def json_infer_rows():
            st, hdr, raw = infer_json(u, "mlp", {"x": x5})
            assert st == 200, raw
            assert np.array_equal(decode(hdr, raw)[1]["y"], ref5)
        T.check("JSON infer, 5 rows: bit-identical to ipu-run --batch-size 5", json_infer_rows)

        def curl_infer():
            body = tmp / "req.json"
            body.write_text(json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [16, 784],
                                                    "data": x16.tolist()}]}))  # nested data
            rc, out = curl("-f", "-H", "Content-Type: application/json", "--data-binary", f"@{body}",
                           u + "/v2/models/mlp/infer")
            assert rc == 0, out
            y = np.array(json.loads(out)["outputs"][0]["data"], np.float32).reshape(16, 10)
            assert np.array_equal(y, ref16)
        T.check("curl infer with nested JSON data: bit-identical to ipu-run", curl_infer)

        def binary_infer():
            hdr = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [16, 784],
                                          "parameters": {"binary_data_size": x16.nbytes}}],
                              "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}).encode()
            body = hdr + x16.tobytes()
            headers = {"Inference-Header-Content-Length": str(len(hdr)),
                       "Content-Type": "application/octet-stream"}
            if requests:
                r = requests.post(u + "/v2/models/mlp/infer", data=body, headers=headers, timeout=60)
                st, rh, raw = r.status_code, dict(r.headers), r.content
            else:
                st, rh, raw = http("POST", u + "/v2/models/mlp/infer", body, headers)
            assert st == 200, raw
            j, out = decode(rh, raw)
            assert j["outputs"][0]["parameters"]["binary_data_size"] == 640, j
            assert np.array_equal(out["y"], ref16)
            # binary in, JSON out; and JSON in, binary out (binary_data_output)
            headers.pop("Content-Type")
            hdr2 = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [16, 784],
                                           "parameters": {"binary_data_size": x16.nbytes}}]}).encode()
            headers["Inference-Header-Content-Length"] = str(len(hdr2))
            st, rh, raw = http("POST", u + "/v2/models/mlp/infer", hdr2 + x16.tobytes(), headers)
            assert st == 200 and np.array_equal(decode(rh, raw)[1]["y"], ref16)
            body3 = {"parameters": {"binary_data_output": True},
                     "inputs": [{"name": "x", "datatype": "FP32", "shape": [5, 784], "data": x5.ravel().tolist()}]}
            st, rh, raw = http("POST", u + "/v2/models/mlp/infer", body3)
            assert st == 200 and "Inference-Header-Content-Length" in rh, rh
            assert np.array_equal(decode(rh, raw)[1]["y"], ref5)
        T.check("binary tensor data extension (requests): bit-identical to ipu-run", binary_infer)

        def versions_infer():
            x = rng.uniform(-8, 8, (3, 3)).astype(np.float32)
            for v in (None, 2):
                st, hdr, raw = infer_json(u, "affine", {"X": x}, version=v)
                assert st == 200, raw
                j, out = decode(hdr, raw)
                assert j["model_version"] == "2" and np.array_equal(out["Y"], affine_ref(x)), j
            st, _, raw = infer_json(u, "affine", {"X": x}, version=1)
            assert st == 404, raw
        T.check("infer on a version; unserved version is 404", versions_infer)

        def fused_infer():
            g0x = np.array([[1.5, -2.25]], np.float32)
            g0y = np.array([[0.5, 4.0]], np.float32)
            g1x = np.array([[0.75]], np.float16)
            ref0 = ipu_run(models["fused"], {"graph0/X": g0x, "graph0/Y": g0y}, ["graph0/O"], tmp)
            ref1 = ipu_run(models["fused"], {"graph1/X": g1x}, ["graph1/O"], tmp)
            st, hdr, raw = infer_json(u, "fused", {"graph0/X": g0x, "graph0/Y": g0y})
            assert st == 200, raw
            j, out = decode(hdr, raw)
            assert [o["name"] for o in j["outputs"]] == ["graph0/O"], j
            assert np.array_equal(out["graph0/O"], ref0["graph0/O"])
            st, hdr, raw = infer_json(u, "fused", {"graph1/X": g1x})
            assert st == 200, raw
            out = decode(hdr, raw)[1]
            assert out["graph1/O"].dtype == np.float16
            assert np.array_equal(out["graph1/O"], ref1["graph1/O"])
            st, _, raw = infer_json(u, "fused", {"graph1/X": g1x, "graph0/X": g0x})
            assert st == 400 and "no input 'graph0/X' in this subgraph" in json.loads(raw)["error"], raw
        T.check("fused model: the subgraph chosen by its inputs, results equal ipu-run's", fused_infer)

        def datatypes():
            # every datatype in JSON and as binary data, against numpy and ipu-run
            ins = {"B": np.array([[True, False, True], [False, False, True]]),
                   "I": np.array([[1, -2, 2**30 - 1], [-2**30, 7, 0]], np.int32),
                   "L": np.array([[2**61 + 1, -3, 5], [-2**61, 9, 2**40]], np.int64),
                   "U": np.array([[0, 255, 7], [128, 1, 2]], np.uint8),
                   "S": np.array([[-128, 127, 0], [-1, 1, 5]], np.int8)}
            want = {"NB": ~ins["B"], "I2": ins["I"] * 2, "L2": ins["L"] * 2,
                    "UF": ins["U"].astype(np.float32), "SF": ins["S"].astype(np.float32)}
            ref = ipu_run(tmp / "types.ipuef", ins, list(want), tmp, ["--batch-size", "2"])
            st, hdr, raw = infer_json(u, "types", ins)
            assert st == 200, raw
            j, out = decode(hdr, raw)
            assert [o["datatype"] for o in j["outputs"]] == ["BOOL", "INT32", "INT64", "FP32", "FP32"], j
            for k, v in want.items():
                assert out[k].dtype == v.dtype and np.array_equal(out[k], ref[k]), k
                # the device computes int64 in 32 bits (compiler's wide-types pass):
                # ipu-run is the oracle there, numpy for the rest
                assert k == "L2" or np.array_equal(out[k], v), k
            # all binary, both ways
            dt = {"B": "BOOL", "I": "INT32", "L": "INT64", "U": "UINT8", "S": "INT8"}
            hdrj = json.dumps({"inputs": [{"name": k, "datatype": dt[k], "shape": [2, 3],
                                           "parameters": {"binary_data_size": v.nbytes}} for k, v in ins.items()],
                               "parameters": {"binary_data_output": True}}).encode()
            body = hdrj + b"".join(v.tobytes() for v in ins.values())
            st, rh, raw = http("POST", u + "/v2/models/types/infer", body,
                               {"Inference-Header-Content-Length": str(len(hdrj))})
            assert st == 200, raw
            out = decode(rh, raw)[1]
            for k, v in want.items():
                assert np.array_equal(out[k], ref[k]), k
            # a BOOL byte that is neither 0 nor 1
            bad = bytearray(body)
            bad[len(hdrj) + 1] = 2
            st, _, raw = http("POST", u + "/v2/models/types/infer", bytes(bad),
                              {"Inference-Header-Content-Length": str(len(hdrj))})
            assert st == 400 and "BOOL element 1 is 2" in json.loads(raw)["error"], raw
            # JSON values out of range or of the wrong kind
            base = {k: {"name": k, "datatype": dt[k], "shape": [2, 3], "data": v.ravel().tolist()}
                    for k, v in ins.items()}
            for k, val, msg in (("S", 128, "out of range for INT8"), ("U", -1, "out of range for UINT8"),
                                ("I", 2**31, "out of range for INT32"), ("B", 1, "not true or false"),
                                ("I", 1.5, "not a whole number")):
                t = dict(base)
                t[k] = dict(base[k], data=[val] + base[k]["data"][1:])
                st, _, raw = http("POST", u + "/v2/models/types/infer", {"inputs": list(t.values())})
                assert st == 400 and msg in json.loads(raw)["error"], (k, raw)
        T.check("every datatype (BOOL, INT8/32/64, UINT8) in JSON and binary; range checks", datatypes)

        def requested_outputs():
            st, _, raw = http("POST", u + "/v2/models/fused/infer", {
                "inputs": [{"name": "graph1/X", "datatype": "FP16", "shape": [1, 1], "data": [1.0]}],
                "outputs": [{"name": "graph1/O"}]})
            assert st == 200 and len(json.loads(raw)["outputs"]) == 1, raw
        T.check("requested outputs", requested_outputs)

        def batching():
            before = metrics(s.metrics_url)
            # 16 one-row requests at once, each with its own row of x16
            with concurrent.futures.ThreadPoolExecutor(16) as ex:
                futs = [ex.submit(infer_json, u, "mlp_batched", {"x": x16[i:i + 1]}, None, None,
                                  f"row-{i}") for i in range(16)]
                res = [f.result(timeout=120) for f in futs]
            for i, (st, hdr, raw) in enumerate(res):
                assert st == 200, raw
                j, out = decode(hdr, raw)
                assert j["id"] == f"row-{i}", j
                # exactly its own row, as ipu-run computes it in the batch of 16
                assert np.array_equal(out["y"], ref16[i:i + 1]), i
            after = metrics(s.metrics_url)
            d = {k: metric(after, k, "mlp_batched") - metric(before, k, "mlp_batched")
                 for k in ("ipu_inference_request_success", "ipu_inference_count",
                           "ipu_inference_exec_count")}
            assert d["ipu_inference_request_success"] == 16 and d["ipu_inference_count"] == 16, d
            assert 1 <= d["ipu_inference_exec_count"] < 16, d
            print(f"   16 requests ran in {int(d['ipu_inference_exec_count'])} executions")
        T.check("dynamic batching: executions < requests, each gets its own rows bit-exactly", batching)

        def batching_cnn():
            # a CNN compiled by ipu-compile: eight one-image requests merged
            imgs = rng.uniform(-1, 1, (8, 1, 28, 28)).astype(np.float32)
            ref = ipu_run(cnn, {"x": imgs}, ["y"], tmp)["y"]
            with concurrent.futures.ThreadPoolExecutor(8) as ex:
                res = list(ex.map(lambda i: infer_json(u, "cnn", {"x": imgs[i:i + 1]}), range(8)))
            for i, (st, hdr, raw) in enumerate(res):
                assert st == 200, raw
                assert np.array_equal(decode(hdr, raw)[1]["y"], ref[i:i + 1]), i
            m = metrics(s.metrics_url)
            assert metric(m, "ipu_inference_count", "cnn") == 8
            assert metric(m, "ipu_inference_exec_count", "cnn") < 8
        T.check("CNN (ipu-compile), batched one-image requests: bit-identical to ipu-run", batching_cnn)

        def batching_dim1():
            # batch along dim 1 of [2, B, 3]: merged rows interleave inside each outer slice
            xs = [rng.uniform(-4, 4, (2, b, 3)).astype(np.float32) for b in (1, 2, 3, 1, 2, 3)]
            with concurrent.futures.ThreadPoolExecutor(6) as ex:
                res = list(ex.map(lambda x: infer_json(u, "scale", {"X": x}), xs))
            for x, (st, hdr, raw) in zip(xs, res):
                assert st == 200, raw
                assert np.array_equal(decode(hdr, raw)[1]["Y"], x * np.float32(2))
            m = metrics(s.metrics_url)
            assert metric(m, "ipu_inference_count", "scale") == 12
            assert metric(m, "ipu_inference_exec_count", "scale") < 6
        T.check("dynamic batching along a non-outer batch dimension", batching_dim1)

        def bad_inputs():
            X = {"name": "X", "datatype": "FP32", "shape": [1, 3], "data": [1, 2, 3]}
            cases = [
                (b"{not json", 400, "malformed JSON"),
                (b"[1, 2]", 400, "JSON object"),
                ({"inputs": []}, 400, "non-empty array"),
                ({"inputs": [dict(X, datatype="INT32")]}, 400, "datatype INT32, the model needs FP32"),
                ({"inputs": [dict(X, shape=[1, 4])]}, 400, "shape [1,4]"),
                ({"inputs": [dict(X, data=[1, 2])]}, 400, "2 data elements, its shape holds 3"),
                ({"inputs": [dict(X, data=[1, 2, 3, 4])]}, 400, "more data elements"),
                ({"inputs": [dict(X, data=[1, "a", 3])]}, 400, "not a number"),
                ({"inputs": [dict(X, name="Q")]}, 400, "no input 'Q'"),
                ({"inputs": [X, X]}, 400, "given twice"),
                ({"inputs": [X], "outputs": [{"name": "Z"}]}, 400, "no output 'Z'"),
                ({"inputs": [dict(X, shape=[9, 3], data=[0] * 27)]}, 400, "exceeds max_batch_size 8"),
                ({"inputs": [{k: v for k, v in X.items() if k != "data"} |
                             {"parameters": {"binary_data_size": 12}}]}, 400, "binary data ends"),
                ({"inputs": [dict(X, parameters={"binary_data_size": 8})]}, 400, "binary_data_size 8"),
                ({"id": 5, "inputs": [X]}, 400, "'id' must be a string"),
            ]
            for body, want, msg in cases:
                st, hdr, raw = http("POST", u + "/v2/models/affine/infer", body)
                err = json.loads(raw).get("error", "")
                assert st == want and msg in err, (body, st, raw)
                assert hdr.get("Content-Type") == "application/json", hdr
            st, _, raw = http("POST", u + "/v2/models/nosuch/infer", {"inputs": [X]})
            assert st == 404 and "unknown model 'nosuch'" in json.loads(raw)["error"], raw
            st, _, raw = http("POST", u + "/v2/models/affine/versions/x/infer", {"inputs": [X]})
            assert st == 400, raw
            st, _, raw = http("POST", u + "/v2/models/affine/infer", json.dumps({"inputs": [X]}).encode(),
                              {"Inference-Header-Content-Length": "99999"})
            assert st == 400 and "Inference-Header-Content-Length" in json.loads(raw)["error"], raw
            st, _, raw = http("GET", u + "/v2/models/affine/infer")
            assert st == 405, raw
            st, _, raw = http("GET", u + "/v3/nothing")
            assert st == 404 and "error" in json.loads(raw), raw
            # the server keeps serving, with the right data
            x = np.array([[1, 2, 3]], np.float32)
            st, hdr, raw = infer_json(u, "affine", {"X": x})
            assert st == 200 and np.array_equal(decode(hdr, raw)[1]["Y"], affine_ref(x)), raw
        T.check("bad input: 4xx with a JSON error naming the problem, server keeps serving", bad_inputs)

        def too_large():
            big = json.dumps({"inputs": [{"name": "X", "datatype": "FP32", "shape": [1, 3],
                                          "data": [0.0] * 300000}]}).encode()
            assert len(big) > 1 << 20
            # refused on Content-Length, before the body is read
            import socket
            c = socket.create_connection(("127.0.0.1", s.port), timeout=30)
            c.sendall(b"POST /v2/models/affine/infer HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(big))
            reply = b""
            while b"}" not in reply:
                chunk = c.recv(4096)
                if not chunk:
                    break
                reply += chunk
            c.close()
            assert reply.startswith(b"HTTP/1.1 413 ") and b"exceeds the limit" in reply, reply
            # curl sends Expect: 100-continue for a large body and gets 413 instead of 100
            p = tmp / "big.json"
            p.write_bytes(big)
            rc, out = curl("--data-binary", f"@{p}", u + "/v2/models/affine/infer")
            assert rc == 0 and "exceeds the limit" in json.loads(out)["error"], out
            # chunked upload without Content-Length, through curl
            rc, out = curl("-H", "Transfer-Encoding: chunked", "--data-binary", f"@{p}",
                           u + "/v2/models/affine/infer")
            assert rc == 0 and "exceeds the limit" in json.loads(out)["error"], out
            st, _, _ = http("GET", u + "/v2/health/live")
            assert st == 200
        T.check("body over --max-body-size: 413, also chunked", too_large)

        def slow_client():
            import socket
            c = socket.create_connection(("127.0.0.1", s.port), timeout=30)
            c.sendall(b"POST /v2/models/affine/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"in")
            # while it stalls, others are served
            x = np.array([[4, 5, 6]], np.float32)
            st, hdr, raw = infer_json(u, "affine", {"X": x})
            c.close()
            assert st == 200 and np.array_equal(decode(hdr, raw)[1]["Y"], affine_ref(x)), raw
        T.check("a stalled client does not hold up the others", slow_client)

        def queue_full():
            # A (1 row) waits 3 s for company; B (4 rows) cannot join it and waits in the
            # queue of size 1; C finds the queue full
            xa = np.array([[1, 1, 1]], np.float32)
            xb = np.arange(12, dtype=np.float32).reshape(4, 3)
            with concurrent.futures.ThreadPoolExecutor(2) as ex:
                fa = ex.submit(infer_json, u, "queue1", {"X": xa})
                wait_pending(s.metrics_url, "queue1", 1)
                fb = ex.submit(infer_json, u, "queue1", {"X": xb})
                wait_pending(s.metrics_url, "queue1", 2)
                t0 = time.monotonic()
                st, _, raw = infer_json(u, "queue1", {"X": xa})
                assert st == 503 and "queue is full" in json.loads(raw)["error"], raw
                assert time.monotonic() - t0 < 2.5, "503 should not wait for the batch"
                for f, x in ((fa, xa), (fb, xb)):
                    st, hdr, raw = f.result(timeout=60)
                    assert st == 200 and np.array_equal(decode(hdr, raw)[1]["Y"], affine_ref(x)), raw
        T.check("queue full: 503 at once, the queued requests still answered", queue_full)

        def load_refused():
            st, _, raw = http("POST", u + "/v2/repository/models/mlp/unload")
            assert st == 403 and "explicit" in json.loads(raw)["error"], raw
        T.check("load/unload refused without --model-control-mode=explicit", load_refused)

        def metrics_page():
            m = metrics(s.metrics_url)
            assert metric(m, "ipu_inference_request_success", "mlp") == 6, m
            assert metric(m, "ipu_inference_count", "mlp") == 16 * 4 + 5 * 2
            assert metric(m, "ipu_inference_exec_count", "mlp") == 6
            assert metric(m, "ipu_inference_request_failure", "mlp") == 0
            assert metric(m, "ipu_device_modelled_cycles", "mlp") > 0
            assert metric(m, "ipu_inference_request_duration_seconds_count", "mlp") == 6
            assert metric(m, "ipu_inference_request_duration_seconds_bucket", "mlp", le="+Inf") == 6
            assert metric(m, "ipu_inference_pending_request_count", "mlp") == 0
            assert metric(m, "ipu_inference_request_success", "affine", "2") >= 3
        T.check("metrics: Prometheus text with exact per-model counters", metrics_page)

        def still_alive():
            st, hdr, raw = infer_json(u, "mlp", {"x": x16})
            assert st == 200 and np.array_equal(decode(hdr, raw)[1]["y"], ref16)
        T.check("still serving bit-identical results after everything above", still_alive)

        def drain():
            xa = np.array([[7, 8, 9]], np.float32)
            with concurrent.futures.ThreadPoolExecutor(1) as ex:
                fa = ex.submit(infer_json, u, "queue1", {"X": xa})  # waits 3 s for a batch
                wait_pending(s.metrics_url, "queue1", 1)
                s.proc.send_signal(signal.SIGTERM)
                st, hdr, raw = fa.result(timeout=60)
            assert st == 200 and np.array_equal(decode(hdr, raw)[1]["Y"], affine_ref(xa)), raw
            rc = s.stop()
            assert rc == 0, (rc, s.text()[-2000:])
            assert "SIGTERM: draining 1 requests in flight" in s.text(), s.text()[-2000:]
            try:
                st, _, _ = http("GET", u + "/v2/health/live", timeout=5)
                raise AssertionError(f"still answering after exit: {st}")
            except OSError:
                pass
        T.check("SIGTERM: the request in flight is answered, exit 0", drain)

    # the model repository extension
    with Server(repo, "--model-control-mode=explicit", "--load-model", "mlp") as s:
        u = s.url

        def index():
            st, _, raw = http("POST", u + "/v2/repository/index", b"")
            idx = {e["name"]: e for e in json.loads(raw)}
            assert st == 200 and idx["mlp"]["state"] == "READY" and idx["mlp"]["version"] == "1", idx
            assert idx["affine"]["state"] == "UNAVAILABLE" and "version" not in idx["affine"], idx
            assert set(idx) == {"mlp", "mlp_batched", "affine", "scale", "fused", "queue1", "cnn",
                                "types"}, idx
            st, _, raw = http("POST", u + "/v2/repository/index", {"ready": True})
            assert [e["name"] for e in json.loads(raw)] == ["mlp"], raw
        T.check("repository index", index)

        def load_unload():
            x = np.array([[1, 2, 3]], np.float32)
            assert infer_json(u, "affine", {"X": x})[0] == 404
            st, _, raw = http("POST", u + "/v2/repository/models/affine/load")
            assert st == 200, raw
            st, hdr, raw = infer_json(u, "affine", {"X": x})
            assert st == 200 and np.array_equal(decode(hdr, raw)[1]["Y"], affine_ref(x)), raw
            # a new version appears on reload (latest policy), without a restart
            add_model(repo, "affine", models["affine"], version=3)
            st, _, raw = http("POST", u + "/v2/repository/models/affine/load", {})
            assert st == 200, raw
            st, hdr, raw = infer_json(u, "affine", {"X": x})
            assert st == 200 and decode(hdr, raw)[0]["model_version"] == "3", raw
            st, _, raw = http("POST", u + "/v2/repository/models/affine/unload")
            assert st == 200, raw
            st, _, raw = infer_json(u, "affine", {"X": x})
            assert st == 404 and "not loaded (unloaded)" in json.loads(raw)["error"], raw
            idx = {e["name"]: e for e in json.loads(http("POST", u + "/v2/repository/index")[2])}
            assert idx["affine"] == {"name": "affine", "state": "UNAVAILABLE", "reason": "unloaded"}, idx
            st, _, raw = http("POST", u + "/v2/repository/models/nosuch/load")
            assert st == 404, raw
            st, _, raw = http("POST", u + "/v2/repository/models/affine/unload")
            assert st == 400, raw
        T.check("load, reload with a new version, unload, without a restart", load_unload)

        def bad_config():
            add_model(repo, "broken", models["affine"], config="max_batch_size: 4\ndynamic_batchin: {}\n")
            st, _, raw = http("POST", u + "/v2/repository/models/broken/load")
            err = json.loads(raw)["error"]
            assert st == 400 and "unknown field 'dynamic_batchin'" in err and "line 2" in err, raw
            idx = {e["name"]: e for e in json.loads(http("POST", u + "/v2/repository/index")[2])}
            assert idx["broken"]["state"] == "UNAVAILABLE" and "dynamic_batchin" in idx["broken"]["reason"]
            st, _, raw = http("POST", u + "/v2/repository/models/..%2fetc/load")
            assert st in (400, 404), raw
            assert http("GET", u + "/v2/health/ready")[0] == 200
        T.check("a model with a bad config.yaml is refused with the field and line", bad_config)

        def unload_in_flight():
            # a request holding a version finishes on it while the version is unloaded
            http("POST", u + "/v2/repository/models/queue1/load")
            xa = np.array([[3, 2, 1]], np.float32)
            with concurrent.futures.ThreadPoolExecutor(1) as ex:
                fa = ex.submit(infer_json, u, "queue1", {"X": xa})
                wait_pending(s.metrics_url, "queue1", 1)
                st, _, raw = http("POST", u + "/v2/repository/models/queue1/unload")
                assert st == 200, raw
                st, hdr, raw = fa.result(timeout=60)
            assert st == 200 and np.array_equal(decode(hdr, raw)[1]["Y"], affine_ref(xa)), raw
        T.check("unload while a request is in flight: it is still answered", unload_in_flight)
        rc = s.stop()
        T.check("explicit-mode server exits 0 on SIGTERM", lambda: rc == 0)

    # several instances on the devices named by --device
    repo2 = tmp / "repo2"
    add_model(repo2, "affine", models["affine"], config=(
        "max_batch_size: 8\ninstance_group: [ { count: 1 }, { count: 1, kind: KIND_IPU } ]\n"))
    two = "model:tiles=16,tile_mem=256k;model:tiles=16,tile_mem=256k"
    with Server(repo2, "--device", two, "--connection-timeout", "1", "--log-verbose", "2") as s:
        u = s.url

        def instances():
            j = json.loads(http("GET", u + "/v2/models/affine/config")[2])
            assert j["instance_group"] == [{"count": 2, "kind": "KIND_IPU"}], j
            xs = [rng.uniform(-50, 50, (1 + i % 8, 3)).astype(np.float32) for i in range(24)]
            with concurrent.futures.ThreadPoolExecutor(12) as ex:
                res = list(ex.map(lambda x: infer_json(u, "affine", {"X": x}), xs))
            for x, (st, hdr, raw) in zip(xs, res):
                assert st == 200 and np.array_equal(decode(hdr, raw)[1]["Y"], affine_ref(x)), raw
            m = metrics(s.metrics_url)
            assert metric(m, "ipu_inference_exec_count", "affine") == 24
            assert metric(m, "ipu_inference_count", "affine") == sum(len(x) for x in xs)
        T.check("two instances on two --device devices: 24 concurrent requests, each its own answer",
                instances)

        def connection_limit():
            with Server(repo2, "--max-connections", "2") as s2:
                limited(s2, s2.url)
            # the port is ours alone: a second server on it is refused
            r = subprocess.run([str(Server.__init__.__globals__["SERVE"]), "--model-repository", str(repo2),
                                "--http-address", "127.0.0.1", "--http-port", str(s.port),
                                "--metrics-port", "0", "--device", two], capture_output=True, timeout=120)
            assert r.returncode == 1 and b"cannot listen on 127.0.0.1:%d" % s.port in r.stderr, r.stderr

        def limited(s, u):
            import socket
            busy = []
            for _ in range(2):
                c = socket.create_connection(("127.0.0.1", s.port), timeout=30)
                c.sendall(b"GET /v2 HTTP/1.1\r\nHost: x\r\n")  # held open
                busy.append(c)
            time.sleep(0.2)
            try:
                st, _, _ = http("GET", u + "/v2/health/live", timeout=10)
                raise AssertionError(f"a third connection was served: {st}")
            except OSError:
                pass
            for c in busy:
                c.close()
            deadline = time.monotonic() + 30
            while True:
                try:
                    assert http("GET", u + "/v2/health/live", timeout=10)[0] == 200
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
        T.check("--max-connections: a connection over the limit is closed at once; the port is not shared",
                connection_limit)

        def idle_timeout():
            import socket
            c = socket.create_connection(("127.0.0.1", s.port), timeout=30)
            c.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n")  # never finished
            t0 = time.monotonic()
            assert c.recv(4096) == b"", "a stalled request must be dropped, not answered"
            c.close()
            assert time.monotonic() - t0 < 25
        T.check("--connection-timeout closes a stalled connection", idle_timeout)
        rc = s.stop()
        T.check("exit 0 after serving on named devices", lambda: rc == 0)

    # start-up refusals
    def startup_errors():
        bad = tmp / "badrepo"
        add_model(bad, "m", models["affine"], config="max_batch_size: many\n")
        r = subprocess.run([str(Server.__init__.__globals__["SERVE"]), "--model-repository", str(bad),
                            "--http-port", "0"], capture_output=True, timeout=60)
        assert r.returncode == 1 and b"max_batch_size must be a whole number" in r.stderr, r.stderr
        r = subprocess.run([str(Server.__init__.__globals__["SERVE"]), "--http-port", "0"],
                           capture_output=True, timeout=60)
        assert r.returncode == 2 and b"--model-repository" in r.stderr, r.stderr
        few = tmp / "fewrepo"
        add_model(few, "m", models["affine"], config="instance_group: [ { count: 3 } ]\n")
        r = subprocess.run([str(Server.__init__.__globals__["SERVE"]), "--model-repository", str(few),
                            "--http-port", "0", "--device", two], capture_output=True, timeout=60)
        assert r.returncode == 1 and b"instance 3 of 3" in r.stderr and b"fewer free devices" in r.stderr, \
            r.stderr
    T.check("start-up: bad config exits 1 naming the field, too few devices exit 1, no repository exits 2",
            startup_errors)

    shutil.rmtree(tmp, ignore_errors=True)
    return T.finish()


if __name__ == "__main__":
    try:
        rc = main()
    except (Exception, Overdue):
        import traceback
        traceback.print_exc()
        T.failed += 1
        rc = T.finish()
    sys.exit(rc)
