# SPDX-License-Identifier: MIT
"""ipu.compiler: the same executable as the ipu-compile command for the
same options, the options' effects, and refusals as CompileError."""

import subprocess
import sys

import numpy as np
import onnx
import pytest

import ipu
import ipu.compiler
import ipu.ipuef
import ipu.runtime as rt
from conftest import ROOT, mlp_model, mlp_reference


def test_same_bytes_as_the_command(tools, tmp_path):
    m, _ = mlp_model()
    onnx.save(m, tmp_path / "m.onnx")
    subprocess.run([str(tools / "ipu-compile"), str(tmp_path / "m.onnx"), "-o",
                    str(tmp_path / "cli.ipuef"), "--precision", "fp16"], check=True,
                   capture_output=True)
    for src in (m, m.SerializeToString(), tmp_path / "m.onnx", str(tmp_path / "m.onnx")):
        res = ipu.compiler.compile(src, precision="fp16")
        assert res.executable == (tmp_path / "cli.ipuef").read_bytes()
        assert res.path is None


def test_resnet18_same_bytes_as_the_command(tools, tmp_path):
    """ResNet-18 as the benchmarks build it (torchvision, seeded weights,
    224 x 224): the library, called with an options struct and the model's
    bytes, gives the command's executable byte for byte."""
    sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests" / "models")]
    import bench_models

    m, _ = bench_models.make_torchvision("resnet18", 18)
    onnx.save(m, tmp_path / "resnet18.onnx")
    for prec in ("fp32", "fp16"):
        cli = tmp_path / f"cli.{prec}.ipuef"
        subprocess.run([str(tools / "ipu-compile"), str(tmp_path / "resnet18.onnx"), "-o", str(cli),
                        "--precision", prec], check=True, capture_output=True)
        res = ipu.compiler.compile(m.SerializeToString(), precision=prec)
        assert len(res.executable) > 10 << 20
        assert res.executable == cli.read_bytes(), prec


def test_summary_and_output_file(tmp_path):
    m, weights = mlp_model(batch="N")     # a symbolic batch dimension
    with pytest.raises(ipu.CompileError, match="folder .*out.*No such file"):
        ipu.compiler.compile(m, tmp_path / "out" / "m.ipuef", batch_size=4)
    (tmp_path / "out").mkdir()
    res = ipu.compiler.compile(m, tmp_path / "out" / "m.ipuef", batch_size=4)
    assert res.executable is None and res.path.endswith("m.ipuef")
    s = res.summary
    assert s["models"][0]["inputs"][0]["name"] == "X"
    assert ipu.ipuef.anchors(res.path)[0]["shape"] == [4, 8]
    assert s["summary"]["tiles_used"] >= 1 and s["summary"]["mem_max"] > 0
    x = np.random.default_rng(4).standard_normal((4, 8)).astype(np.float32)
    y = np.zeros((4, 4), np.float32)
    with rt.Runner(res.path) as r:
        r.execute({"X": x}, {"Y": y})
    np.testing.assert_allclose(y, mlp_reference(x, weights), rtol=1e-5, atol=1e-6)


def test_options_reach_the_compiler(tmp_path):
    m, _ = mlp_model(batch=2)
    res = ipu.compiler.compile(m, precision="fp16", ipu_version="ipu21", check=True,
                               verbose=True)
    meta = ipu.ipuef.read(res.executable)["metadata"]
    assert meta["ipu_version"] == "ipu21"
    assert [a["dtype"] for a in meta["anchors"] if a["kind"] == "user"] == ["f16", "f16"]
    assert "check:" in res.messages
    res = ipu.compiler.compile(m, tiles=64, tile_mem="256KiB", input_shape={"X": [6, 8]})
    meta = ipu.ipuef.read(res.executable)["metadata"]
    assert (meta["num_tiles"], meta["tile_mem"]) == (64, 262144)
    assert meta["anchors"][0]["shape"] == [6, 8]
    res = ipu.compiler.compile(m, export_onnx=tmp_path / "opt.onnx", fusion=False)
    assert onnx.load(tmp_path / "opt.onnx").graph.node


def test_refusals(tmp_path):
    m, _ = mlp_model()
    with pytest.raises(ipu.CompileError, match="not a valid ONNX model"):
        ipu.compiler.compile(b"\x01\x02junk")
    with pytest.raises(ipu.CompileError, match="precision"):
        ipu.compiler.compile(m, precision="fp7")
    with pytest.raises(ipu.CompileError):
        ipu.compiler.compile(tmp_path / "missing.onnx")
    bad = onnx.helper.make_model(onnx.helper.make_graph(
        [onnx.helper.make_node("MaxUnpool", ["X", "I"], ["Y"], kernel_shape=[2, 2]), ],
        "g", [onnx.helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, (1, 2, 3, 3)),
              onnx.helper.make_tensor_value_info("I", onnx.TensorProto.INT64, (1, 2, 3, 3))],
        [onnx.helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, (1, 2, 6, 6))]),
        opset_imports=[onnx.helper.make_opsetid("", 13)])
    with pytest.raises(ipu.CompileError) as e:
        ipu.compiler.compile(bad)
    assert "MaxUnpool" in str(e.value)
    with pytest.raises(ValueError, match="tiles and tile_mem"):
        ipu.compiler.compile(m, tiles=4)
    with pytest.raises(TypeError):
        ipu.compiler.compile(3.5)
    # a refused output leaves the existing file alone
    keep = tmp_path / "keep.ipuef"
    keep.write_bytes(b"precious")
    with pytest.raises(ipu.CompileError):
        ipu.compiler.compile(b"junk", keep)
    assert keep.read_bytes() == b"precious"


def test_compile_args_is_the_command_line(tmp_path):
    m, _ = mlp_model()
    onnx.save(m, tmp_path / "m.onnx")
    status, out, err = ipu.compiler.compile_args(["--list-ops"])
    assert status == 0 and "MatMul" in out
    status, out, err = ipu.compiler.compile_args(["--input_model", str(tmp_path / "m.onnx"),
                                                  "--output_dir", str(tmp_path / "o"),
                                                  "--export_popef"])
    assert status == 0, err
    assert (tmp_path / "o" / "executable.ipuef").exists()
    with pytest.raises(ipu.CompileError, match="unknown option|not supported"):
        ipu.compiler.compile_args(["--no-such-flag"])


def test_fp8_options(tmp_path):
    """fp8 weights shrink the executable; layers kept in fp16 give the fp16
    one; fp8 with fp8_params runs close to the reference; a bad
    fp8_params is refused with the compiler's reason."""
    m, weights = mlp_model(batch=2)
    f16 = ipu.compiler.compile(m, precision="fp16").executable
    f8 = ipu.compiler.compile(m, precision="fp8_weight").executable
    # weights large enough that their bytes, not the per-channel scales
    # and the alignment, set the size
    big, _ = mlp_model(batch=2, features=64, hidden=128)
    assert len(ipu.compiler.compile(big, precision="fp8_weight").executable) < \
        len(ipu.compiler.compile(big, precision="fp16").executable)
    # every layer kept in fp16: the fp16 executable
    assert ipu.compiler.compile(m, precision="fp8_weight",
                                num_of_layers_keep_fp16=100).executable == f16
    assert ipu.compiler.compile(m, precision="fp8_weight",
                                fp8_skip_op_names=["nothing_by_this_name"]).executable == f8
    full = ipu.compiler.compile(m, precision="fp8", fp8_params="F143,F152,-1,auto")
    x = np.random.default_rng(5).standard_normal((2, 8)).astype(np.float16)
    y = np.zeros((2, 4), np.float16)
    with rt.Runner(full.executable) as r:
        r.execute({"X": x}, {"Y": y})
    ref = mlp_reference(x.astype(np.float32), weights)
    assert np.abs(y - ref).max() <= 0.15 * np.abs(ref).max()
    with pytest.raises(ipu.CompileError, match="F143"):
        ipu.compiler.compile(m, precision="fp8", fp8_params="F144")


def test_library_result_progress_and_threads():
    """compile() is ipu_compile(): the passes reported as they run, the
    refusal's errno class and node, threads compiling at once get the
    serial bytes."""
    import errno
    import threading
    m, _ = mlp_model(batch=2)
    seen = []
    res = ipu.compiler.compile(m, precision="fp16",
                               progress=lambda k, name, rw, nodes: seen.append((k, name)))
    assert seen[0] == (0, "load") and (0, "normalize") in seen and (-1, "lower") in seen
    assert res.diagnostics == [] and res.summary["summary"]["image_bytes"] < len(res.executable)
    assert res.summary["file_bytes"] == len(res.executable)
    bad = onnx.helper.make_model(onnx.helper.make_graph(
        [onnx.helper.make_node("NoSuchOperator", ["X"], ["Y"], name="odd")],
        "g", [onnx.helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, (1, 2))],
        [onnx.helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, (1, 2))]),
        opset_imports=[onnx.helper.make_opsetid("", 13)])
    with pytest.raises(ipu.CompileError) as e:
        ipu.compiler.compile(bad)
    assert (e.value.status, e.value.node, e.value.op) == (-errno.ENOTSUP, "odd", "NoSuchOperator")
    with pytest.raises(ipu.CompileError) as e:
        ipu.compiler.compile(m, precision="fp7")
    assert e.value.status == -errno.EINVAL and e.value.node is None
    got = [None] * 6

    def work(i):
        got[i] = ipu.compiler.compile(m, precision="fp16").executable

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [res.executable] * 6


def test_check_takes_equal_infinities():
    # atanh(1) is +inf on the device and in the reference evaluator alike:
    # --check must call that a match (inf - inf is NaN, no tolerance holds it)
    h = onnx.helper
    x = h.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [2, 8])
    y = h.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [2, 8])
    one = [h.make_tensor(n, onnx.TensorProto.FLOAT, [], [1.0]) for n in ("lo", "hi")]
    g = h.make_graph([h.make_node("Clip", ["X", "lo", "hi"], ["c"]),
                      h.make_node("Atanh", ["c"], ["Y"])], "atanh_one", [x], [y], one)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    res = ipu.compiler.compile(m, check=True)
    assert "check: Y: ok" in res.messages
