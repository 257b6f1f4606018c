# SPDX-License-Identifier: MIT
"""ipu-serve over a Triton model repository written as Triton and its
Poplar backend lay it out: <model>/config.pbtxt and <model>/1/<executable>,
with backend "poplar", dynamic batching, KIND_CPU instance groups and the
backend's parameters (synchronous_execution, timeout_ns).  Served over
HTTP on loopback, results equal to ipu-run's; refusals at start-up name
file, line and field; then --model-control-mode=poll with clients sending
all the while: models added, given a new version, reconfigured and
removed, and no request fails but those to the removed model."""

import atexit
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_util import (SERVE, Overdue, Server, Tally, build_models, decode, http,  # noqa: E402
                        infer_json, ipu_run, time_limit)

T = Tally("serve-pbtxt")

# Laid out as the Poplar backend's model repositories are (Triton's layout):
# the model folder, config.pbtxt beside the version folder 1/.
MLP_PBTXT = """\
name: "mlp"
backend: "poplar"
max_batch_size: 16
input [
  {
    name: "x"
    data_type: TYPE_FP32
    dims: [ 784 ]
  }
]
output [
  {
    name: "y"
    data_type: TYPE_FP32
    dims: [ 10 ]
  }
]
dynamic_batching {
  preferred_batch_size: [ 8, 16 ]
  max_queue_delay_microseconds: 2000
}
instance_group [
  {
    count: 2
    kind: KIND_CPU
  }
]
parameters [
  {
    key: "synchronous_execution"
    value: { string_value: "1" }
  },
  {
    key: "timeout_ns"
    value: { string_value: "20000000000" }
  }
]
"""

AFFINE_PBTXT = """\
name: "affine"
backend: "poplar"
max_batch_size: 4
default_model_filename: "executable.ipuef"
input { name: "X" data_type: TYPE_FP32 dims: [ 3 ] }
output { name: "Y" data_type: TYPE_FP32 dims: [ -1 ] }
instance_group { kind: KIND_CPU }
"""


def put(repo, name, ipuef, version=1, config=None, filename="model.ipuef"):
    """A model folder; files written whole and renamed into place, as a
    deployment tool would, so that a poll never sees half a file."""
    mdir = pathlib.Path(repo) / name
    vdir = mdir / str(version)
    vdir.mkdir(parents=True, exist_ok=True)
    tmp = vdir / ("." + filename + ".tmp")
    shutil.copy(ipuef, tmp)
    tmp.rename(vdir / filename)
    if config is not None:
        t = mdir / ".config.tmp"
        t.write_text(config)
        t.rename(mdir / "config.pbtxt")


def affine_ref(x):
    return (x * 2 + np.array([10, 20, 30], np.float32)).astype(np.float32)


def start_fails(repo, *words):
    r = subprocess.run([str(SERVE), "--model-repository", str(repo), "--http-port", "0",
                        "--metrics-port", "0", "--http-address", "127.0.0.1"],
                       capture_output=True, timeout=120)
    err = r.stderr.decode(errors="replace")
    assert r.returncode == 1, (r.returncode, err)
    for w in words:
        assert w in err, (w, err)


def wait_for(fn, what, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout} s")


def main():
    time_limit(900)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="serve-pbtxt-"))
    atexit.register(shutil.rmtree, tmp, True)
    models = build_models(tmp / "models")
    repo = tmp / "repo"
    put(repo, "mlp", models["mlp"], config=MLP_PBTXT)
    put(repo, "affine", models["affine"], config=AFFINE_PBTXT, filename="executable.ipuef")

    rng = np.random.default_rng(7)
    x16 = rng.uniform(-1, 1, (16, 784)).astype(np.float32)
    ref16 = ipu_run(models["mlp"], {"x": x16}, ["y"], tmp)["y"]

    with Server(repo, "--log-verbose", 1) as s:
        u = s.url

        def index():
            st, _, raw = http("POST", u + "/v2/repository/index", b"{}")
            assert st == 200, raw
            got = {(m["name"], m.get("version"), m["state"]) for m in json.loads(raw)}
            assert got == {("mlp", "1", "READY"), ("affine", "1", "READY")}, got
        T.check("the Poplar backend's repository loads unchanged: both models READY", index)

        def config():
            st, _, raw = http("GET", u + "/v2/models/mlp/config")
            assert st == 200, raw
            c = json.loads(raw)
            assert c["max_batch_size"] == 16 and c["instance_group"][0]["count"] == 2, c
            assert c["dynamic_batching"]["preferred_batch_size"] == [8, 16], c
            assert c["dynamic_batching"]["max_queue_delay_microseconds"] == 2000, c
            st, _, raw = http("GET", u + "/v2/models/affine/config")
            c = json.loads(raw)
            assert st == 200 and c["max_batch_size"] == 4 and c["instance_group"][0]["count"] == 1, c
        T.check("config.pbtxt's batching and instance groups acted on (model config endpoint)", config)

        def infer_mlp():
            st, hdr, raw = infer_json(u, "mlp", {"x": x16})
            assert st == 200, raw
            j, out = decode(hdr, raw)
            assert j["model_version"] == "1" and np.array_equal(out["y"], ref16), j
        T.check("infer on the Poplar-layout model: bit-identical to ipu-run", infer_mlp)

        def batched_rows():
            # 16 one-row requests at once: each its own row of ipu-run's answer
            res = [None] * 16

            def one(i):
                st, hdr, raw = infer_json(u, "mlp", {"x": x16[i:i + 1]})
                res[i] = (st, decode(hdr, raw)[1]["y"] if st == 200 else raw)
            th = [threading.Thread(target=one, args=(i,)) for i in range(16)]
            for t in th:
                t.start()
            for t in th:
                t.join()
            for i, (st, y) in enumerate(res):
                assert st == 200, y
                assert np.array_equal(y, ref16[i:i + 1]), i
        T.check("16 concurrent one-row requests under dynamic batching: each its own row", batched_rows)

        def infer_affine():
            x = rng.uniform(-4, 4, (3, 3)).astype(np.float32)
            st, hdr, raw = infer_json(u, "affine", {"X": x})
            assert st == 200, raw
            assert np.array_equal(decode(hdr, raw)[1]["Y"], affine_ref(x))
        T.check("default_model_filename: 1/executable.ipuef served", infer_affine)

        def load_refused():
            st, _, raw = http("POST", u + "/v2/repository/models/mlp/unload", b"{}")
            assert st == 403 and b"model control is off" in raw, (st, raw)
        T.check("mode none: load/unload still refused", load_refused)
        rc = s.stop()
    T.check("exit 0 on SIGTERM", lambda: rc == 0)

    def refusals():
        bad = tmp / "bad1"
        put(bad, "m", models["affine"], config="name: \"m\"\nmax_batch_size: 4\n\n"
            "optimization { execution_accelerators { cpu_execution_accelerator [ { name: \"openvino\" } ] } }\n")
        start_fails(bad, "m/config.pbtxt: line 4: optimization is a field of Triton's ModelConfig "
                    "that ipu-serve does not act on")
        bad = tmp / "bad2"
        put(bad, "m", models["affine"], config="max_batch_size: 4\ninstance_group [ { count: \"two\" } ]\n")
        start_fails(bad, "m/config.pbtxt: line 2 column ", "Expected integer")
        bad = tmp / "bad3"
        put(bad, "m", models["affine"], config="max_batch_size: 4\n")
        (bad / "m" / "config.yaml").write_text("max_batch_size: 4\n")
        start_fails(bad, "has both config.pbtxt and config.yaml")
        bad = tmp / "bad4"
        put(bad, "m", models["affine"], config="max_batch_size: 4\n"
            "input { name: \"X\" data_type: TYPE_INT32 dims: [ 3 ] }\n")
        start_fails(bad, "input 'X': data_type TYPE_INT32, the model's is TYPE_FP32")
        bad = tmp / "bad5"
        put(bad, "m", models["affine"], config="max_batch_size: 4\n"
            "parameters { key: \"timeout_ns\" value: { string_value: \"soon\" } }\n")
        start_fails(bad, "timeout_ns: string_value 'soon' is not a whole number")
    T.check("start-up refusals: field not acted on (path, line), wrong type, both files, dtype, "
            "a Poplar parameter's value", refusals)

    poll(tmp, models)
    shutil.rmtree(tmp, ignore_errors=True)
    return T.finish()


class Client(threading.Thread):
    """Sends one-row requests to a model until stopped, recording each
    (status, version served)."""

    def __init__(self, url, model, x, name, out):
        super().__init__(daemon=True)
        self.url, self.model, self.x, self.name, self.out = url, model, x, name, out
        self.results = []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            st, hdr, raw = infer_json(self.url, self.model, {self.name: self.x})
            if st == 200:
                j, out = decode(hdr, raw)
                ok = np.array_equal(out[self.out], affine_ref(self.x)) if self.out == "Y" else True
                self.results.append((200 if ok else -1, j["model_version"]))
            else:
                self.results.append((st, raw[:200]))

    def since(self, n):
        return self.results[n:]


def poll(tmp, models):
    repo = tmp / "pollrepo"
    cfg = "backend: \"poplar\"\nmax_batch_size: 4\ninstance_group [ { count: 1 kind: KIND_CPU } ]\n"
    put(repo, "stay", models["affine"], config=cfg)
    put(repo, "grow", models["affine"], config=cfg)
    put(repo, "leave", models["affine"], config=cfg)
    x = np.array([[1, 2, 3]], np.float32)
    with Server(repo, "--model-control-mode=poll", "--repository-poll-secs", 1, "--log-verbose", 1) as s:
        u = s.url
        clients = {m: Client(u, m, x, "X", "Y") for m in ("stay", "grow", "leave")}
        for c in clients.values():
            c.start()
        try:
            wait_for(lambda: all(len(c.results) > 20 for c in clients.values()), "clients running")

            def added():
                put(repo, "fresh", models["affine"], config=cfg)
                wait_for(lambda: infer_json(u, "fresh", {"X": x})[0] == 200, "the added model served")
            T.check("poll: a model folder added is loaded and served", added)

            def new_version():
                put(repo, "grow", models["affine"], version=2)
                wait_for(lambda: any(v == "2" for st, v in clients["grow"].since(0) if st == 200),
                         "version 2 served")
                n = len(clients["grow"].results)
                wait_for(lambda: len(clients["grow"].results) > n + 20, "more requests")
                assert all(v == "2" for st, v in clients["grow"].since(n)), clients["grow"].since(n)[:5]
            T.check("poll: a new version folder replaces the served one (latest policy)", new_version)

            def changed_config():
                n = len(clients["grow"].results)
                t = repo / "grow" / ".c"
                t.write_text(cfg.replace("count: 1", "count: 2") + "version_policy { all {} }\n")
                t.rename(repo / "grow" / "config.pbtxt")

                def reloaded():
                    st, _, raw = http("GET", u + "/v2/models/grow/config")
                    return st == 200 and json.loads(raw)["instance_group"][0]["count"] == 2
                wait_for(reloaded, "the changed config acted on")
                st, _, raw = http("GET", u + "/v2/models/grow")
                assert json.loads(raw)["versions"] == ["1", "2"], raw
                wait_for(lambda: len(clients["grow"].results) > n + 20, "more requests")
            T.check("poll: a changed config.pbtxt reloads the model (instances, version policy)",
                    changed_config)

            def bad_change_keeps_serving():
                n = len(clients["stay"].results)
                t = repo / "stay" / ".c"
                t.write_text(cfg + "model_warmup [ { name: \"w\" } ]\n")
                t.rename(repo / "stay" / "config.pbtxt")
                wait_for(lambda: "model_warmup is a field" in s.text(), "the refusal logged")
                wait_for(lambda: len(clients["stay"].results) > n + 20, "more requests")
                st, _, raw = http("POST", u + "/v2/repository/index", b"{}")
                assert {"name": "stay", "version": "1", "state": "READY", "reason": ""} in json.loads(raw)
            T.check("poll: a refused config change is logged, the old version keeps serving",
                    bad_change_keeps_serving)

            def removed():
                n = len(clients["leave"].results)
                shutil.rmtree(repo / "leave")
                wait_for(lambda: any(st == 400 or st == 404 for st, _ in clients["leave"].since(n)),
                         "the removed model refused")
                later = clients["leave"].since(n)
                first = next(i for i, (st, _) in enumerate(later) if st != 200)
                # once refused, always refused: unloaded for good
                assert all(st != 200 for st, _ in later[first:]), later[first:]
                st, _, raw = http("POST", u + "/v2/repository/index", b"{}")
                assert not any(m["name"] == "leave" for m in json.loads(raw)), raw
            T.check("poll: a model folder removed is unloaded", removed)

            def api_refused():
                st, _, raw = http("POST", u + "/v2/repository/models/stay/unload", b"{}")
                assert st == 403, (st, raw)
            T.check("poll: the repository API's load/unload refused (the folder decides)", api_refused)
        finally:
            for c in clients.values():
                c.stop.set()
            for c in clients.values():
                c.join(60)

        def no_failures():
            for m in ("stay", "grow"):
                bad = [r for r in clients[m].results if r[0] != 200]
                assert not bad, (m, bad[:5])
            n = sum(len(clients[m].results) for m in ("stay", "grow"))
            print(f"# {n} requests to the models kept, all answered 200 with the right values")
            assert n > 100, n
            bad = [r for r in clients["leave"].results if r[0] not in (200, 400, 404)]
            assert not bad, bad[:5]
        T.check("poll: no request failed while models were added, changed, reloaded and removed "
                "(only the removed model's, after its removal)", no_failures)
        rc = s.stop()
    T.check("poll mode exits 0 on SIGTERM", lambda: rc == 0)


if __name__ == "__main__":
    try:
        rc = main()
    except (Exception, Overdue):
        import traceback
        traceback.print_exc()
        T.failed += 1
        rc = T.finish()
    sys.exit(rc)
