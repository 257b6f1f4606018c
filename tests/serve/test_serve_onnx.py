# SPDX-License-Identifier: MIT
"""ipu-serve compiles a repository's model.onnx when it loads the version
(ipu_compile(), in memory: nothing written to the repository): the answers
are ipu-run's on the .ipuef ipu-compile makes of the same file; model.ipuef
wins beside it; a model the compiler refuses is UNAVAILABLE with the
compiler's reason naming the node, and the other models serve."""

import json
import pathlib
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_util import BIN, Server, Tally, http, infer_json, ipu_run, run, time_limit  # noqa: E402


def mlp_onnx(path):
    """X [2, 16] -> MatMul, Add, Relu, MatMul -> Y [2, 4], seeded weights."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(11)
    w = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
         for n, s in (("w1", (16, 8)), ("b1", (8,)), ("w2", (8, 4)))]
    g = helper.make_graph([helper.make_node("MatMul", ["X", "w1"], ["m"]),
                           helper.make_node("Add", ["m", "b1"], ["a"]),
                           helper.make_node("Relu", ["a"], ["r"]),
                           helper.make_node("MatMul", ["r", "w2"], ["Y"])], "mlp",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 16])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 4])], w)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def bad_onnx(path):
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("NoSuchOperator", ["X"], ["Y"], name="odd")], "bad",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 2])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def main():
    t = Tally("serve-onnx")
    time_limit(600)
    with tempfile.TemporaryDirectory(prefix="ipu-serve-onnx-") as tmp:
        tmp = pathlib.Path(tmp)
        repo = tmp / "repo"
        onnx_file = tmp / "mlp.onnx"
        mlp_onnx(onnx_file)
        run([BIN / "ipu-compile", "--input-model", onnx_file, "-o", tmp / "cnn.ipuef"])
        (repo / "cnn" / "1").mkdir(parents=True)
        shutil.copy(onnx_file, repo / "cnn" / "1" / "model.onnx")
        # both files: the compiled one is served as it is (a marker name)
        (repo / "both" / "1").mkdir(parents=True)
        shutil.copy(onnx_file, repo / "both" / "1" / "model.onnx")
        shutil.copy(tmp / "cnn.ipuef", repo / "both" / "1" / "model.ipuef")
        (repo / "bad" / "1").mkdir(parents=True)
        bad_onnx(repo / "bad" / "1" / "model.onnx")
        before = sorted(p.name for p in repo.rglob("*"))
        x = np.random.default_rng(7).standard_normal((2, 16)).astype(np.float32)
        ref = ipu_run(tmp / "cnn.ipuef", {"X": x}, ["Y"], tmp)["Y"]
        with Server(repo, "--log-verbose", "1", "--model-control-mode", "explicit",
                    "--load-model", "cnn", "--load-model", "both") as s:
            def onnx_served():
                st, _, raw = infer_json(s.url, "cnn", {"X": x})
                assert st == 200, raw
                out = {o["name"]: o for o in json.loads(raw)["outputs"]}["Y"]
                got = np.array(out["data"], np.float32).reshape(out["shape"])
                assert np.array_equal(got, ref), np.abs(got - ref).max()
                assert "ipu-serve: compiled " in s.text() and "cnn/1/model.onnx" in s.text()
            t.check("model.onnx compiled at load answers as ipu-run on ipu-compile's .ipuef",
                    onnx_served)

            def ipuef_wins():
                st, _, raw = infer_json(s.url, "both", {"X": x})
                assert st == 200, raw
                assert "both/1/model.onnx" not in s.text()
            t.check("model.ipuef beside model.onnx is served as it is", ipuef_wins)

            def refused():
                st, _, raw = http("POST", s.url + "/v2/repository/models/bad/load", {})
                assert st == 400 and b"node 'odd' (NoSuchOperator" in raw, (st, raw)
                st, _, raw = http("POST", s.url + "/v2/repository/index", {})
                entry = {m["name"]: m for m in json.loads(raw)}["bad"]
                assert entry["state"] == "UNAVAILABLE", entry
                assert "node 'odd' (NoSuchOperator" in entry["reason"], entry
                st, _, _ = http("GET", s.url + "/v2/models/cnn/ready")
                assert st == 200
            t.check("a model the compiler refuses is UNAVAILABLE naming the node", refused)
            t.check("the repository is left as it was",
                    lambda: sorted(p.name for p in repo.rglob("*")) == before or
                    (_ for _ in ()).throw(AssertionError(sorted(p.name for p in repo.rglob("*")))))
            t.check("SIGTERM: exit 0", lambda: s.stop() == 0 or (_ for _ in ()).throw(AssertionError()))
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
