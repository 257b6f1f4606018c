#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ipu-serve on a model split over IPUs: the tests/models MLP (784-512-10,
16 rows) compiled with ipu-compile --num-ipus 2 for IPUs of 64 tiles x 64
KiB (one such IPU refuses it) and served over HTTP, without --device (a
group of in-process IPUs per instance) and with --device model:... (the
group opened from that spec, the shared devices left to one-IPU models);
every answer is bit for bit ipu-run's on the split model (and within 1e-5
of the model compiled for one IPU of 128 tiles), also with requests from several clients at once and
two instances.  Ends with "check-multi-serve: N passed, N failed"."""

import base64
import json
import pathlib
import sys
import tempfile
import threading

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "serve"))
import serve_util as su  # noqa: E402

T = su.Tally("check-multi-serve")


def answer(url, model, x):
    """The output y of one JSON request, as float32."""
    st, _, raw = su.infer_json(url, model, {"x": x})
    assert st == 200, (st, raw[:400])
    out = json.loads(raw)["outputs"][0]
    assert out["name"] == "y" and out["shape"] == [16, 10], out
    return np.array(out["data"], dtype=np.float32).reshape(16, 10)


def main():
    su.time_limit(600)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        su.run(["/usr/bin/python3", su.ROOT / "tests/models/make_models.py", tmp, "--only", "mlp"])
        su.run([su.BIN / "ipu-compile", "--input-model", tmp / "mlp.onnx", "--target", "tiles=128,tile-mem=64KiB",
                "-o", tmp / "one.ipuef"])
        su.run([su.BIN / "ipu-compile", "--input-model", tmp / "mlp.onnx", "--target", "tiles=64,tile-mem=64KiB",
                "--num-ipus", "2", "-o", tmp / "two.ipuef"])
        rng = np.random.default_rng(5)
        xs = [rng.standard_normal((16, 784)).astype(np.float32) for _ in range(4)]
        refs = [su.ipu_run(tmp / "two.ipuef", {"x": x}, ["y"], tmp)["y"] for x in xs]
        ones = [su.ipu_run(tmp / "one.ipuef", {"x": x}, ["y"], tmp)["y"] for x in xs]
        repo = tmp / "repo"
        su.add_model(repo, "mlp2", tmp / "two.ipuef")
        su.add_model(repo, "mlp2x", tmp / "two.ipuef", config="instance_group: [ { count: 2 } ]\n")

        def same_bits(url, model):
            for x, ref, one in zip(xs, refs, ones):
                y = answer(url, model, x)
                assert y.tobytes() == ref.tobytes(), np.abs(y - ref).max()
                # 64-tile IPUs sum the products in another order than one
                # IPU of 128 tiles
                assert np.abs(y - one).max() <= 1e-5 * np.abs(one).max(), np.abs(y - one).max()

        def clients_at_once(url, model, n=6):
            bad = []

            def client(k):
                try:
                    for i in range(3):
                        y = answer(url, model, xs[(k + i) % 4])
                        if y.tobytes() != refs[(k + i) % 4].tobytes():
                            bad.append((k, i))
                except Exception as e:  # reported below with the client's number
                    bad.append((k, repr(e)))
            th = [threading.Thread(target=client, args=(k,)) for k in range(n)]
            for t in th:
                t.start()
            for t in th:
                t.join()
            assert not bad, bad

        def ready_and_described(url):
            st, _, raw = su.http("GET", url + "/v2/models/mlp2")
            meta = json.loads(raw)
            assert st == 200 and [i["name"] for i in meta["inputs"]] == ["x"], (st, raw[:300])
            st, _, _ = su.http("GET", url + "/v2/models/mlp2/ready")
            assert st == 200, st

        def stats_count(url, model, least):
            st, _, raw = su.http("GET", url + f"/v2/models/{model}/stats")
            assert st == 200, (st, raw[:300])
            s = json.loads(raw)["model_stats"][0]["inference_stats"]["success"]["count"]
            assert s == least, (s, least)

        def binary_output(url):
            body = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [16, 784],
                                "data": xs[0].flatten().tolist()}],
                    "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}
            st, hdr, raw = su.http("POST", url + "/v2/models/mlp2/infer", body,
                                   {"Content-Type": "application/json"})
            assert st == 200, (st, raw[:300])
            n = int(hdr["Inference-Header-Content-Length"])
            y = np.frombuffer(raw[n:], dtype=np.float32).reshape(16, 10)
            assert y.tobytes() == refs[0].tobytes(), base64.b16encode(raw[n:n + 8])

        with su.Server(repo) as s:
            T.check("without --device: the split model's answers are ipu-run's bits", same_bits, s.url, "mlp2")
            T.check("the split model is ready and described", ready_and_described, s.url)
            T.check("binary output: ipu-run's bits", binary_output, s.url)
            T.check("6 clients at once, 18 requests: ipu-run's bits", clients_at_once, s.url, "mlp2")
            T.check("two instances (two groups of 2 IPUs), 6 clients at once: ipu-run's bits",
                    clients_at_once, s.url, "mlp2x")
            T.check("statistics count the split model's requests", stats_count, s.url, "mlp2", 4 + 18 + 1)
            T.check("SIGTERM: exit 0", lambda: s.stop() == 0)
        with su.Server(repo, "--device", "model:tiles=64,tile_mem=64KiB") as s:
            T.check("--device model:...: the split model on a group of that spec, ipu-run's bits", same_bits,
                    s.url, "mlp2")
            T.check("SIGTERM: exit 0", lambda: s.stop() == 0)
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
