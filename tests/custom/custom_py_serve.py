#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The custom-operator example through Python and ipu-serve (called by
test-custom.sh with its work folder): ipu.compiler.compile with
custom_library_so_paths, Runner(..., custom_ops=[...]) and ipu-serve
--custom-ops give ipu-run's outputs bit for bit; without the plugin
the Runner and the server refuse the model, naming the operator.

usage: custom_py_serve.py DIR   (DIR: rmsnorm.onnx, m.ipuef, x.npy,
y.npy from ipu-run, ex/librmsnorm.so); ends "custom-py: N passed, N failed"
"""
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "serve"))
import serve_util as su  # noqa: E402  (the build's tools, a server that is always stopped)

sys.path.insert(0, str(su.BUILD / "python"))
import ipu  # noqa: E402
import ipu.compiler  # noqa: E402
import ipu.runtime  # noqa: E402

d = pathlib.Path(sys.argv[1])
lib = d / "ex" / "librmsnorm.so"
x = np.load(d / "x.npy")
y_run = np.load(d / "y.npy")
t = su.Tally("custom-py")
su.time_limit(600)


def compiled_in_python():
    r = ipu.compiler.compile(str(d / "rmsnorm.onnx"), custom_library_so_paths=[lib], check=True)
    assert r.executable and "check: y: ok" in r.messages, r.messages
    with ipu.runtime.Runner(r.executable, custom_ops=[lib]) as run:
        y = np.zeros_like(y_run)
        run.execute({"x": x}, {"y": y})
    # the same compiler and device: ipu-run's outputs bit for bit
    assert np.array_equal(y.view(np.uint32), y_run.view(np.uint32)), abs(y - y_run).max()


def runner_runs_the_file():
    with ipu.runtime.Runner(str(d / "m.ipuef"), custom_ops=[str(lib)]) as run:
        y = np.zeros_like(y_run)
        run.execute({"x": x}, {"y": y})
    assert np.array_equal(y.view(np.uint32), y_run.view(np.uint32))


def runner_without_plugin_refused():
    try:
        ipu.runtime.Runner(str(d / "m.ipuef"))
    except ipu.Error as e:
        assert "custom codelet com.example::RmsNorm (library sha256" in str(e), str(e)
        return
    raise AssertionError("the Runner loaded a model without its plugin")


def compile_without_plugin_refused():
    try:
        ipu.compiler.compile(str(d / "rmsnorm.onnx"))
    except ipu.compiler.CompileError as e:
        assert "operator RmsNorm of domain 'com.example' is not loaded" in str(e), str(e)
        return
    raise AssertionError("compiled without the plugin")


def bad_paths_refused():
    for bad in (["a:b.so"], [""]):
        try:
            ipu.runtime.Runner(str(d / "m.ipuef"), custom_ops=bad)
        except ValueError:
            continue
        raise AssertionError(f"custom_ops={bad!r} accepted")


def served():
    repo = d / "repo"
    su.add_model(repo, "rms", d / "m.ipuef")
    with su.Server(repo, "--custom-ops", lib) as s:
        st, hdr, raw = su.infer_json(s.url, "rms", {"x": x}, ["y"], binary_out=True)
        assert st == 200, raw[:300]
        _, out = su.decode(hdr, raw)
        assert np.array_equal(out["y"].view(np.uint32), y_run.view(np.uint32))
        assert s.stop() == 0


def served_without_plugin_refused():
    # every model loads at start: the server exits 1 saying why
    try:
        with su.Server(d / "repo"):
            pass
    except RuntimeError as e:
        assert "ipu-serve exited 1" in str(e) and \
            "failed to load 'rms'" in str(e) and \
            "custom codelet com.example::RmsNorm (library sha256" in str(e), str(e)
        return
    raise AssertionError("ipu-serve started without the model's plugin")


t.check("ipu.compiler.compile(custom_library_so_paths=...) then Runner(custom_ops=...)", compiled_in_python)
t.check("Runner(custom_ops=...) runs the .ipuef, bit-identical to ipu-run", runner_runs_the_file)
t.check("Runner without the plugin is refused, naming the op and hash", runner_without_plugin_refused)
t.check("ipu.compiler.compile without the plugin is refused", compile_without_plugin_refused)
t.check("custom_ops paths with ':' or empty are refused", bad_paths_refused)
t.check("ipu-serve --custom-ops serves it, bit-identical to ipu-run", served)
t.check("ipu-serve without the plugin refuses the model", served_without_plugin_refused)
sys.exit(t.finish())
