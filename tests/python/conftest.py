# SPDX-License-Identifier: MIT
"""Fixtures of the Python package's tests: small ONNX models built with
onnx.helper (seeded weights), compiled once per session with
ipu.compiler, and the build's command-line tools (the C oracle)."""

import os
import pathlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ipu.compiler

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BUILD", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
BIN = BUILD / "bin"


def mlp_model(batch=2, features=8, hidden=16, classes=4, seed=0):
    """X[batch, features] -> MatMul+Add -> Relu -> MatMul+Add -> Softmax."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((features, hidden)).astype(np.float32) / np.sqrt(features)
    b1 = rng.standard_normal(hidden).astype(np.float32) * 0.1
    w2 = rng.standard_normal((hidden, classes)).astype(np.float32) / np.sqrt(hidden)
    b2 = rng.standard_normal(classes).astype(np.float32) * 0.1
    nodes = [
        helper.make_node("MatMul", ["X", "W1"], ["h0"]),
        helper.make_node("Add", ["h0", "B1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h2"]),
        helper.make_node("MatMul", ["h2", "W2"], ["h3"]),
        helper.make_node("Add", ["h3", "B2"], ["h4"]),
        helper.make_node("Softmax", ["h4"], ["Y"], axis=-1),
    ]
    g = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, (batch, features))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, (batch, classes))],
        [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(b1, "B1"),
         numpy_helper.from_array(w2, "W2"), numpy_helper.from_array(b2, "B2")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    return m, (w1, b1, w2, b2)


def mlp_reference(x, weights):
    w1, b1, w2, b2 = weights
    h = np.maximum(x.astype(np.float64) @ w1 + b1, 0) @ w2 + b2
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.fixture(scope="session")
def tools():
    for t in ("ipu-compile", "ipu-run", "ipuef-dump"):
        assert (BIN / t).exists(), f"{BIN / t} is not built (make)"
    return BIN


@pytest.fixture(scope="session")
def mlp(tmp_path_factory):
    """(path of the compiled MLP, its ONNX model, its weights)."""
    d = tmp_path_factory.mktemp("mlp")
    m, weights = mlp_model()
    onnx.save(m, d / "mlp.onnx")
    res = ipu.compiler.compile(m, d / "mlp.ipuef")
    assert res.path == str(d / "mlp.ipuef")
    return d / "mlp.ipuef", d / "mlp.onnx", weights


@pytest.fixture(scope="session")
def add_model(tmp_path_factory):
    """Z = X + Y over [2, 3] floats, compiled."""
    d = tmp_path_factory.mktemp("add")
    g = helper.make_graph(
        [helper.make_node("Add", ["X", "Y"], ["Z"])], "add",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, (2, 3)),
         helper.make_tensor_value_info("Y", TensorProto.FLOAT, (2, 3))],
        [helper.make_tensor_value_info("Z", TensorProto.FLOAT, (2, 3))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    ipu.compiler.compile(m, d / "add.ipuef")
    return d / "add.ipuef"


@pytest.fixture(scope="session")
def fused(tmp_path_factory, tools):
    """The seed's model-fusion example compiled from its config.yaml."""
    import subprocess
    import sys
    d = tmp_path_factory.mktemp("fusion")
    example = ROOT / "examples" / "model-fusion"
    for f in ("config.yaml", "compile.py"):
        (d / f).write_bytes((example / f).read_bytes())
    env = dict(os.environ, PATH=f"{BIN}:{os.environ.get('PATH', '')}")
    subprocess.run([sys.executable, "compile.py"], cwd=d, env=env, check=True,
                   capture_output=True)
    assert (d / "executable.ipuef").exists()
    return d / "executable.ipuef"
