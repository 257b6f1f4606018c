#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Triton's statistics extension and metric names on ipu-serve: requests of
known batch sizes, sent one at a time to an undynamic model and in full
batches to a dynamically batched one, read back exactly from
GET /v2/models[/M[/versions/V]]/stats (success, fail, queue, compute_*,
batch_stats, inference_count, execution_count, last_inference) and from the
nv_inference_* series of /metrics.  Ends with "serve-stats: N passed, N failed"."""

import atexit
import concurrent.futures
import json
import pathlib
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_util import (Overdue, Server, Tally, add_model, build_models, decode, http,  # noqa: E402
                        infer_json, metric, metrics, time_limit)

T = Tally("serve-stats")
time_limit(600)

BIAS = np.array([10, 20, 30], np.float32)


def get_stats(url, path):
    st, _, raw = http("GET", url + path)
    assert st == 200, (st, raw)
    return json.loads(raw)["model_stats"]


def one(url, model, version="1"):
    s = get_stats(url, f"/v2/models/{model}/versions/{version}/stats")
    assert len(s) == 1 and s[0]["name"] == model and s[0]["version"] == version, s
    return s[0]


def send(url, model, rows, seed, version=None):
    x = np.random.default_rng(seed).standard_normal((rows, 3)).astype(np.float32)
    st, hdr, raw = infer_json(url, model, {"X": x}, version=version)
    assert st == 200, raw
    assert np.array_equal(decode(hdr, raw)[1]["Y"], x * 2 + BIAS)


def phases_sum(s):
    """Every request's phases partition its time from queued to done."""
    i = s["inference_stats"]
    return i["queue"]["ns"] + i["compute_input"]["ns"] + i["compute_infer"]["ns"] + i["compute_output"]["ns"]


def main():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="serve-stats-"))
    atexit.register(shutil.rmtree, tmp, True)
    models = build_models(tmp / "models")
    repo = tmp / "repo"
    # no dynamic batching: every request is one execution of its own rows
    add_model(repo, "plain", models["affine"], version=1,
              config="max_batch_size: 8\nversion_policy: { all: {} }\n")
    add_model(repo, "plain", models["affine"], version=2)
    # a long delay: a batch runs when its 8 rows are there, never on the timer
    add_model(repo, "dyn", models["affine"], config=(
        "max_batch_size: 8\ndynamic_batching: { max_queue_delay_microseconds: 30000000 }\n"))
    # a queue of one: a third request is refused (REJECTED) while two wait
    add_model(repo, "q1", models["affine"], config=(
        "max_batch_size: 4\ndynamic_batching:\n  max_queue_delay_microseconds: 3000000\n"
        "  default_queue_policy: { max_queue_size: 1 }\n"))
    with Server(repo) as s:
        u = s.url

        def extension():
            st, _, raw = http("GET", u + "/v2")
            assert st == 200 and "statistics" in json.loads(raw)["extensions"], raw
        T.check("server metadata lists the statistics extension", extension)

        def fresh():
            for m in ("plain", "dyn"):
                x = one(u, m)
                assert x["inference_count"] == 0 and x["execution_count"] == 0, x
                assert x["last_inference"] == 0 and x["batch_stats"] == [], x
                for k, d in x["inference_stats"].items():
                    assert d == {"count": 0, "ns": 0}, (k, d)
        T.check("a model nothing was sent to: every count 0, no batch_stats", fresh)

        rows = [1, 3, 3, 8, 2, 1]
        t_before = time.time() * 1000

        def sequential():
            for k, r in enumerate(rows):
                send(u, "plain", r, k, version=1)
            send(u, "plain", 5, 99)  # the highest version: 2
            x = one(u, "plain")
            i = x["inference_stats"]
            assert i["success"]["count"] == len(rows), i
            assert x["inference_count"] == sum(rows), x
            assert x["execution_count"] == len(rows), x
            for k in ("queue", "compute_input", "compute_infer", "compute_output"):
                assert i[k]["count"] == len(rows), (k, i)
            assert i["fail"] == {"count": 0, "ns": 0}, i
            assert i["compute_infer"]["ns"] > 0 and i["success"]["ns"] == phases_sum(x), i
            # Triton's schema has the response cache's counts: no cache here, always 0
            assert i["cache_hit"] == i["cache_miss"] == {"count": 0, "ns": 0}, i
            got = {b["batch_size"]: b for b in x["batch_stats"]}
            want = {r: rows.count(r) for r in rows}
            assert sorted(got) == sorted(want), x["batch_stats"]
            for size, b in got.items():
                for k in ("compute_input", "compute_infer", "compute_output"):
                    assert b[k]["count"] == want[size], (size, b)
            assert sum(b["batch_size"] * b["compute_infer"]["count"] for b in x["batch_stats"]) == sum(rows)
            assert t_before - 1000 <= x["last_inference"] <= time.time() * 1000 + 1000, x
            v2 = one(u, "plain", "2")
            assert v2["inference_stats"]["success"]["count"] == 1 and v2["inference_count"] == 5, v2
            print(f"   {len(rows)} requests of {rows} rows: {x['execution_count']} executions, "
                  f"{x['inference_count']} inferences, batch sizes {sorted(got)}")
        T.check("6 requests one at a time: success 6, inferences = sum of rows, one execution each, "
                "batch_stats by size", sequential)

        def failures():
            bad = [
                {"inputs": [{"name": "X", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]}]},
                {"inputs": [{"name": "X", "datatype": "INT32", "shape": [1, 3], "data": [1, 2, 3]}]},
                {"inputs": [{"name": "nope", "datatype": "FP32", "shape": [1, 3], "data": [1, 2, 3]}]},
                {"inputs": [{"name": "X", "datatype": "FP32", "shape": [9, 3], "data": [0] * 27}]},
            ]
            for b in bad:
                st, _, raw = http("POST", u + "/v2/models/plain/versions/1/infer", b)
                assert st == 400, (st, raw)
            x = one(u, "plain")
            i = x["inference_stats"]
            assert i["fail"]["count"] == len(bad), i
            assert i["success"]["count"] == len(rows) and x["execution_count"] == len(rows), x
            ms = metrics(s.metrics_url)
            assert metric(ms, "nv_inference_request_failure", "plain", reason="OTHER") == len(bad)
            for r in ("REJECTED", "CANCELED", "BACKEND"):
                assert metric(ms, "nv_inference_request_failure", "plain", reason=r) == 0, r
        T.check("4 invalid requests: fail 4 (nv_inference_request_failure reason OTHER), the rest unchanged",
                failures)

        groups = 3

        def batched():
            sizes = [1, 2, 2, 3]
            with concurrent.futures.ThreadPoolExecutor(len(sizes)) as ex:
                for g in range(groups):
                    list(ex.map(lambda a: send(u, "dyn", a[1], 100 + 10 * g + a[0]), enumerate(sizes)))
            x = one(u, "dyn")
            i = x["inference_stats"]
            assert i["success"]["count"] == groups * len(sizes), i
            assert x["inference_count"] == groups * 8, x
            assert x["execution_count"] == groups, x
            assert len(x["batch_stats"]) == 1 and x["batch_stats"][0]["batch_size"] == 8, x
            assert x["batch_stats"][0]["compute_infer"]["count"] == groups, x
            # each request waited in the queue for the rest of its batch
            assert i["queue"]["count"] == groups * len(sizes) and i["queue"]["ns"] > 0, i
            assert i["success"]["ns"] == phases_sum(x), i
            print(f"   {groups * len(sizes)} concurrent requests of {sizes} rows: "
                  f"{x['execution_count']} executions of 8")
        T.check("3 x 4 concurrent requests of 1+2+2+3 rows: 12 successes, 24 inferences, 3 executions "
                "of batch_size 8", batched)

        def rejected():
            def pending(n):
                deadline = time.monotonic() + 60
                while metric(metrics(s.metrics_url), "nv_inference_pending_request_count", "q1") != n:
                    assert time.monotonic() < deadline, f"pending never reached {n}"
                    time.sleep(0.02)
            with concurrent.futures.ThreadPoolExecutor(2) as ex:
                # A (1 row) waits 3 s for company, B (4 rows) cannot join it: queued; C: 503
                fa = ex.submit(send, u, "q1", 1, 200)
                pending(1)
                fb = ex.submit(send, u, "q1", 4, 201)
                pending(2)
                x = np.zeros((1, 3), np.float32)
                st, _, raw = infer_json(u, "q1", {"X": x})
                assert st == 503 and "queue is full" in json.loads(raw)["error"], raw
                fa.result(60)
                fb.result(60)
            x = one(u, "q1")
            i = x["inference_stats"]
            assert i["success"]["count"] == 2 and i["fail"]["count"] == 1, i
            assert x["inference_count"] == 5 and x["execution_count"] == 2, x
            assert [b["batch_size"] for b in x["batch_stats"]] == [1, 4], x
            # A waited its 3 s in the queue (forming its batch), B behind it
            assert i["queue"]["ns"] >= 3_000_000_000, i
            ms = metrics(s.metrics_url)
            assert metric(ms, "nv_inference_request_failure", "q1", reason="REJECTED") == 1
            assert metric(ms, "nv_inference_request_failure", "q1", reason="OTHER") == 0
            assert metric(ms, "ipu_inference_request_failure", "q1") == 0  # ours: after queueing only
        T.check("a full queue: the refused request is a failure with reason REJECTED, the two queued "
                "ones 2 executions of 1 and 4", rejected)

        def listing():
            all_ = get_stats(u, "/v2/models/stats")
            assert sorted((m["name"], m["version"]) for m in all_) == [
                ("dyn", "1"), ("plain", "1"), ("plain", "2"), ("q1", "1")]
            per = get_stats(u, "/v2/models/plain/stats")
            assert [m["version"] for m in per] == ["1", "2"], per
            for path, want in (("/v2/models/nope/stats", 404), ("/v2/models/plain/versions/7/stats", 404),
                               ("/v2/models/plain/versions/x/stats", 400)):
                st, _, raw = http("GET", u + path)
                assert st == want and "error" in json.loads(raw), (path, st, raw)
            st, _, _ = http("POST", u + "/v2/models/stats", {})
            assert st == 405, st
            st, _, _ = http("POST", u + "/v2/models/plain/stats", {})
            assert st == 405, st
        T.check("every model, a model's versions, one version; unknown model or version 404", listing)

        def nv_metrics():
            ms = metrics(s.metrics_url)
            for m in ("plain", "dyn", "q1"):
                x = one(u, m)
                i = x["inference_stats"]
                want = {
                    "nv_inference_request_success": i["success"]["count"],
                    "nv_inference_count": x["inference_count"],
                    "nv_inference_exec_count": x["execution_count"],
                    "nv_inference_request_duration_us": i["success"]["ns"] // 1000,
                    "nv_inference_queue_duration_us": i["queue"]["ns"] // 1000,
                    "nv_inference_compute_input_duration_us": i["compute_input"]["ns"] // 1000,
                    "nv_inference_compute_infer_duration_us": i["compute_infer"]["ns"] // 1000,
                    "nv_inference_compute_output_duration_us": i["compute_output"]["ns"] // 1000,
                }
                for name, v in want.items():
                    assert metric(ms, name, m) == v, (m, name, metric(ms, name, m), v)
                fails = sum(metric(ms, "nv_inference_request_failure", m, reason=r)
                            for r in ("REJECTED", "CANCELED", "BACKEND", "OTHER"))
                assert fails == i["fail"]["count"], (m, fails)
                assert metric(ms, "nv_inference_pending_request_count", m) == 0
                # our own names stay, as aliases of the counts
                assert metric(ms, "ipu_inference_count", m) == x["inference_count"]
                assert metric(ms, "ipu_inference_exec_count", m) == x["execution_count"]
            assert metric(ms, "nv_inference_request_success", "plain", "2") == 1
        T.check("/metrics: the nv_inference_* series equal the statistics (model and version labels)",
                nv_metrics)
        rc = s.stop()
        T.check("ipu-serve exits 0", lambda: rc == 0)
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
