#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Debian's Prometheus scrapes ipu-serve on loopback and the counters are
read back through Prometheus' own HTTP query API: requests, inferences and
batch executions of a dynamically batched model (executions < requests),
under Triton's names (nv_inference_*) and ours (ipu_inference_*),
and a latency quantile computed by PromQL from the histogram.  Ends with
"serve-prometheus: N passed, N failed"."""

import concurrent.futures
import atexit
import json
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_util import (Overdue, Server, Tally, add_model, build_models, decode, http,  # noqa: E402
                        infer_json, time_limit)

T = Tally("serve-prometheus")
# a hung server must not hang make check
time_limit(600)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(base, q):
    st, _, raw = http("GET", base + "/api/v1/query?" + urllib.parse.urlencode({"query": q}), timeout=10)
    j = json.loads(raw)
    assert st == 200 and j["status"] == "success", raw
    return j["data"]["result"]


def main():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="serve-prom-"))
    atexit.register(shutil.rmtree, tmp, True)
    models = build_models(tmp / "models")
    repo = tmp / "repo"
    add_model(repo, "affine", models["affine"], config=(
        "max_batch_size: 8\ndynamic_batching: { max_queue_delay_microseconds: 2000000 }\n"))
    prom = None
    with Server(repo) as s:
        port = free_port()
        (tmp / "prometheus.yml").write_text(
            "global: { scrape_interval: 1s, evaluation_interval: 1s }\n"
            "scrape_configs:\n"
            "  - job_name: ipu-serve\n"
            f"    static_configs: [ {{ targets: ['127.0.0.1:{s.metrics_port}'] }} ]\n")
        log = open(tmp / "prometheus.log", "w")
        prom = subprocess.Popen(
            ["prometheus", f"--config.file={tmp / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}",
             "--log.level=warn"], stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            def send():
                xs = [np.full((1, 3), i, np.float32) for i in range(8)]
                with concurrent.futures.ThreadPoolExecutor(8) as ex:
                    res = list(ex.map(lambda x: infer_json(s.url, "affine", {"X": x}), xs))
                for x, (st, hdr, raw) in zip(xs, res):
                    assert st == 200, raw
                    assert np.array_equal(decode(hdr, raw)[1]["Y"], x * 2 + np.array([10, 20, 30], np.float32))
            T.check("8 concurrent requests answered with their own rows", send)

            def scraped():
                deadline = time.monotonic() + 120
                want = {"ipu_inference_request_success": 8, "ipu_inference_count": 8,
                        "nv_inference_request_success": 8, "nv_inference_count": 8}
                got = {}
                while time.monotonic() < deadline:
                    if prom.poll() is not None:
                        raise AssertionError("prometheus exited:\n" + (tmp / "prometheus.log").read_text())
                    try:
                        for name in want:
                            r = query(base, f'{name}{{job="ipu-serve",model="affine",version="1"}}')
                            got[name] = float(r[0]["value"][1]) if r else None
                    except OSError:
                        pass
                    if got == want:
                        break
                    time.sleep(0.5)
                assert got == want, got
                r = query(base, 'ipu_inference_exec_count{model="affine"}')
                execs = float(r[0]["value"][1])
                assert 1 <= execs < 8, execs
                r = query(base, 'nv_inference_exec_count{model="affine",version="1"}')
                assert float(r[0]["value"][1]) == execs, r
                r = query(base, 'sum by (model) (nv_inference_request_failure{model="affine"})')
                assert float(r[0]["value"][1]) == 0, r
                r = query(base, 'nv_inference_compute_infer_duration_us{model="affine"} > 0')
                assert r, "no compute time"
                r = query(base, 'up{job="ipu-serve"}')
                assert float(r[0]["value"][1]) == 1
                print(f"   Prometheus sees 8 requests in {int(execs)} executions")
            T.check("Prometheus scrapes the counters, Triton's names and ours; its API shows executions < requests",
                    scraped)

            def quantile():
                r = query(base, 'histogram_quantile(0.5, ipu_inference_request_duration_seconds_bucket{model="affine"})')
                assert r and float(r[0]["value"][1]) > 0, r
            T.check("PromQL histogram_quantile over the latency histogram", quantile)
        finally:
            prom.send_signal(signal.SIGTERM)
            try:
                prom.wait(30)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait(10)
        rc = s.stop()
        T.check("ipu-serve exits 0", lambda: rc == 0)
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
