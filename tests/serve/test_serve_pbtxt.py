# SPDX-License-Identifier: MIT
"""ipu-serve over a Triton model repository written as Triton and its
Poplar backend lay it out: <model>/config.pbtxt and <model>/1/<executable>,
with backend "poplar", dynamic batching, KIND_CPU instance groups and the
backend's parameters (synchronous_execution, timeout_ns).  Served over
HTTP on loopback, results equal to ipu-run's; refusals at start-up name
file, line and field."""

import atexit
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading

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
