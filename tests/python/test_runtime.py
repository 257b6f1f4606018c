# SPDX-License-Identifier: MIT
"""ipu.runtime against independent oracles: numpy's float64 evaluation of
the model, the C runtime's own results (ipu-run's .npy outputs, compared
bit for bit) and the seed's fused-model example."""

import gc
import json
import subprocess
import threading

import numpy as np
import pytest

import ipu
import ipu.runtime as rt
from conftest import BIN, mlp_reference


def run_c(tools, model, inputs, outputs, tmp_path, extra=()):
    """The C runtime's results (ipu-run --input/--output .npy)."""
    args = [str(tools / "ipu-run"), str(model), "--iterations", "0", *extra]
    for name, arr in inputs.items():
        p = tmp_path / f"in-{name.replace('/', '_')}.npy"
        np.save(p, arr)
        args += ["--input", f"{name}={p}"]
    for name in outputs:
        args += ["--output", f"{name}={tmp_path / ('out-' + name.replace('/', '_') + '.npy')}"]
    subprocess.run(args, check=True, capture_output=True)
    return {n: np.load(tmp_path / f"out-{n.replace('/', '_')}.npy") for n in outputs}


def test_execute_matches_numpy_and_c_runtime(mlp, tools, tmp_path):
    path, _, weights = mlp
    x = np.random.default_rng(1).standard_normal((2, 8)).astype(np.float32)
    y = np.zeros((2, 4), np.float32)
    with rt.Runner(str(path)) as runner:
        assert runner.execute({"X": x}, {"Y": y}) is None
    np.testing.assert_allclose(y, mlp_reference(x, weights), rtol=1e-5, atol=1e-6)
    c = run_c(tools, path, {"X": x}, ["Y"], tmp_path)["Y"]
    assert c.dtype == y.dtype and c.shape == y.shape
    assert c.tobytes() == y.tobytes(), "Python and C runtimes differ"


def test_model_from_bytes_and_pathlike(mlp):
    path, _, weights = mlp
    x = np.full((2, 8), 0.5, np.float32)
    outs = []
    for src in (path, path.read_bytes(), bytearray(path.read_bytes())):
        y = np.zeros((2, 4), np.float32)
        with rt.Runner(src) as r:
            r.execute({"X": x}, {"Y": y})
        outs.append(y.tobytes())
    assert outs[0] == outs[1] == outs[2]


def test_io_description(mlp):
    path, _, _ = mlp
    with rt.Runner(path) as r:
        (i,) = r.get_execute_inputs()
        (o,) = r.get_execute_outputs()
        assert (i.name, i.shape, i.dtype, i.batch_dim, i.size_in_bytes) == ("X", (2, 8), "float32", 0, 64)
        assert (o.name, o.shape, o.dtype, o.size_in_bytes) == ("Y", (2, 4), "float32", 32)
        assert i.numpy_data_type() == np.float32
        assert r.get_execute_inputs(batch=6)[0].shape == (6, 8)
        assert r.model_info["batch_size"] == 2
        info = r.device_info
        assert info["num_tiles"] == r.model_info["num_tiles"]
        assert info["ipu_version"] == r.model_info["ipu_version"]


def test_device_counters(mlp):
    """Modelled cycles per request from Runner.device_counters equal
    ipu-run's (the CLI's own reading of the engine's counters)."""
    path, _, _ = mlp
    with rt.Runner(path) as r:
        x = np.zeros((2, 8), np.float32)
        y = np.zeros((2, 4), np.float32)
        a = r.device_counters
        for _ in range(3):
            r.execute({"X": x}, {"Y": y})
        b = r.device_counters
    d = {k: b[k] - a[k] for k in a}
    assert d["programs_run"] == 3 and d["errors"] == 0
    assert d["cycles"] == d["compute_cycles"] + d["exchange_cycles"] + d["sync_cycles"] + d["stream_cycles"]
    j = json.loads(subprocess.run([str(BIN / "ipu-run"), str(path), "--iterations", "0", "--json"],
                                  capture_output=True, text=True, check=True).stdout)
    assert d["cycles"] == 3 * j["modelled_cycles_per_request"]
    assert d["compute_cycles"] == 3 * j["modelled_breakdown_cycles"]["compute"]
    with pytest.raises(Exception):
        r.device_counters


def test_execute_async_futures(mlp):
    path, _, weights = mlp
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((2, 8)).astype(np.float32) for _ in range(32)]
    ys = [np.zeros((2, 4), np.float32) for _ in xs]
    with rt.Runner(path) as r:
        futures = [r.execute_async({"X": x}, {"Y": y}) for x, y in zip(xs, ys)]
        for f in futures:
            assert f.wait() is None
            assert f.done()
            f.wait()        # a second wait gives the same status
    for x, y in zip(xs, ys):
        np.testing.assert_allclose(y, mlp_reference(x, weights), rtol=1e-5, atol=1e-6)


def test_dropped_future_keeps_arrays_alive(mlp):
    path, _, weights = mlp
    x = np.ones((2, 8), np.float32)
    y = np.zeros((2, 4), np.float32)
    with rt.Runner(path) as r:
        r.execute_async({"X": x}, {"Y": y})     # dropped at once: waits
        del x
        gc.collect()
    np.testing.assert_allclose(y, mlp_reference(np.ones((2, 8), np.float32), weights),
                               rtol=1e-5, atol=1e-6)


def test_many_threads_share_one_runner(mlp):
    path, _, weights = mlp
    errors = []
    with rt.Runner(path) as r:
        def worker(k):
            rng = np.random.default_rng(100 + k)
            try:
                for _ in range(40):
                    x = rng.standard_normal((2, 8)).astype(np.float32)
                    y = np.zeros((2, 4), np.float32)
                    r.execute({"X": x}, {"Y": y})
                    np.testing.assert_allclose(y, mlp_reference(x, weights), rtol=1e-5, atol=1e-6)
            except Exception as e:  # reported below, with the thread
                errors.append((k, e))
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors


@pytest.mark.parametrize("inputs, outputs, code", [
    ({"X": np.zeros((2, 8), np.float64)}, {"Y": np.zeros((2, 4), np.float32)}, "IPURT_E_DTYPE"),
    ({"X": np.zeros((2, 8), np.float16)}, {"Y": np.zeros((2, 4), np.float32)}, "IPURT_E_DTYPE"),
    ({"X": np.zeros((2, 7), np.float32)}, {"Y": np.zeros((2, 4), np.float32)}, "IPURT_E_SHAPE"),
    ({"X": np.zeros((3, 8), np.float32)}, {"Y": np.zeros((3, 4), np.float32)}, "IPURT_E_BATCH"),
    ({"X": np.zeros((2, 8), np.float32)}, {}, "IPURT_E_MISSING"),
    ({}, {"Y": np.zeros((2, 4), np.float32)}, "IPURT_E_MISSING"),
    ({"X": np.zeros((2, 8), np.float32), "Q": np.zeros(1, np.float32)},
     {"Y": np.zeros((2, 4), np.float32)}, "IPURT_E_NAME"),
    ({"X": np.zeros((2, 16), np.float32)[:, ::2]}, {"Y": np.zeros((2, 4), np.float32)}, "IPURT_E_INVAL"),
])
def test_bad_arrays_raise_value_errors_naming_the_anchor(mlp, inputs, outputs, code):
    path, _, _ = mlp
    with rt.Runner(path) as r:
        with pytest.raises(ValueError) as e:
            r.execute(inputs, outputs)
        assert isinstance(e.value, ipu.IpuValueError)
        assert e.value.code_name == code
        named = set(inputs) | set(outputs)
        assert any(f"'{n}'" in str(e.value) for n in named | {"X", "Y"}), str(e.value)
        # the runner still serves after a refused request
        y = np.zeros((2, 4), np.float32)
        r.execute({"X": np.ones((2, 8), np.float32)}, {"Y": y})
        assert np.isfinite(y).all() and y.sum() > 0


def test_read_only_output_and_non_array(mlp):
    path, _, _ = mlp
    y = np.zeros((2, 4), np.float32)
    y.setflags(write=False)
    with rt.Runner(path) as r:
        with pytest.raises(ipu.IpuValueError, match="'Y'.*writable"):
            r.execute({"X": np.ones((2, 8), np.float32)}, {"Y": y})
        with pytest.raises(TypeError, match="'X'"):
            r.execute({"X": [[1.0] * 8] * 2}, {"Y": np.zeros((2, 4), np.float32)})
        with pytest.raises(TypeError):
            r.execute([("X", np.ones((2, 8), np.float32))], {})


def test_dynamic_batch(mlp, tools, tmp_path):
    path, _, weights = mlp
    cfg = rt.RuntimeConfig(batching_dim=0)
    x = np.random.default_rng(3).standard_normal((5, 8)).astype(np.float32)
    y = np.zeros((5, 4), np.float32)
    with rt.Runner(path, cfg) as r:
        assert r.get_execute_inputs(batch=5)[0].shape == (5, 8)
        r.execute({"X": x}, {"Y": y})
    np.testing.assert_allclose(y, mlp_reference(x, weights), rtol=1e-5, atol=1e-6)
    c = run_c(tools, path, {"X": x}, ["Y"], tmp_path, extra=["--batch-size", "5"])["Y"]
    assert c.tobytes() == y.tobytes()
    # without batching_dim only multiples of the compiled batch are taken
    with rt.Runner(path) as r:
        with pytest.raises(ipu.IpuValueError):
            r.execute({"X": x}, {"Y": y})
        x4, y4 = np.ones((4, 8), np.float32), np.zeros((4, 4), np.float32)
        r.execute({"X": x4}, {"Y": y4})
        np.testing.assert_allclose(y4, mlp_reference(x4, weights), rtol=1e-5, atol=1e-6)


def test_fused_model_as_the_seed(fused, tools, tmp_path):
    cfg = rt.RuntimeConfig()
    cfg.timeout_ns = 0
    cfg.validate_io_params = False
    with rt.Runner(fused, cfg) as r:
        names = {i.name for i in r.get_execute_inputs()}
        assert names == {"graph0/X", "graph0/Y", "graph1/X"}
        assert [i.name for i in r.get_execute_inputs(subgraph=1)] == ["graph1/X"]
        assert r.model_info["ipu_version"] == "ipu21"
        assert r.device_info["ipu_version"] == "ipu21"  # the device follows the model
        for _ in range(2):  # switching subgraphs back and forth
            o0 = np.zeros([2], np.float32)
            r.execute({"graph0/X": np.ones([1, 2], np.float32),
                       "graph0/Y": np.ones([1, 2], np.float32) * 2}, {"graph0/O": o0})
            np.testing.assert_array_equal(o0, [3, 3])
            o1 = np.zeros([1, 3], np.float16)
            r.execute({"graph1/X": np.zeros([1, 1], np.float16)}, {"graph1/O": o1})
            np.testing.assert_array_equal(o1, [[0, 1.5, 2]])
    x = np.array([[0.25]], np.float16)
    o1 = np.zeros([1, 3], np.float16)
    with rt.Runner(fused, cfg) as r:
        r.execute({"graph1/X": x}, {"graph1/O": o1})
    c = run_c(tools, fused, {"graph1/X": x}, ["graph1/O"], tmp_path,
              extra=["--subgraph", "1", "--no-validate"])["graph1/O"]
    assert c.tobytes() == o1.tobytes()


def test_timeout_recovers_and_runner_serves_again(fused):
    # graph0's request without graph0/Y: the device waits for data that
    # never comes, the timeout cancels it and resets the queue
    cfg = rt.RuntimeConfig(timeout_ns=300_000_000, validate_io_params=False)
    with rt.Runner(fused, cfg) as r:
        with pytest.raises(TimeoutError) as e:
            r.execute({"graph0/X": np.ones([1, 2], np.float32)},
                      {"graph0/O": np.zeros([2], np.float32)})
        assert isinstance(e.value, ipu.IpuTimeoutError)
        assert e.value.code_name == "IPURT_E_TIMEOUT"
        o0 = np.zeros([2], np.float32)
        r.execute({"graph0/X": np.ones([1, 2], np.float32),
                   "graph0/Y": np.ones([1, 2], np.float32)}, {"graph0/O": o0})
        np.testing.assert_array_equal(o0, [2, 2])


def test_future_wait_with_a_deadline(fused):
    cfg = rt.RuntimeConfig(validate_io_params=False)
    r = rt.Runner(fused, cfg)
    f = r.execute_async({"graph0/X": np.ones([1, 2], np.float32)},
                        {"graph0/O": np.zeros([2], np.float32)})
    with pytest.raises(ipu.IpuTimeoutError, match="still running"):
        f.wait(timeout=0.05)
    assert not f.done()
    r.close()          # cancels the stuck request
    with pytest.raises(ipu.Error) as e:
        f.wait()
    assert e.value.code_name == "IPURT_E_CANCELLED"
    assert f.done()


def test_close_and_errors_after(mlp):
    path, _, _ = mlp
    r = rt.Runner(path)
    r.close()
    r.close()
    assert r.closed
    with pytest.raises(ipu.Error, match="closed"):
        r.execute({"X": np.ones((2, 8), np.float32)}, {"Y": np.zeros((2, 4), np.float32)})
    assert "closed" in repr(r)


def test_config_checks(mlp):
    path, _, _ = mlp
    with pytest.raises(ValueError, match="check_package_hash"):
        rt.Runner(path, rt.RuntimeConfig(check_package_hash=False))
    with pytest.raises(ValueError, match="ring_buffer_size_multiplier"):
        rt.Runner(path, rt.RuntimeConfig(ring_buffer_size_multiplier=0))
    with pytest.raises(ipu.IpuValueError, match="batching_dim"):
        rt.Runner(path, rt.RuntimeConfig(batching_dim=9))
    with pytest.raises(TypeError, match="RuntimeConfig"):
        rt.Runner(path, {"timeout_ns": 0})
    # PopRT's defaults
    c = rt.RuntimeConfig()
    assert (c.timeout_ns, c.validate_io_params, c.batching_dim, c.thread_safe) == \
        (0, True, rt.NO_BATCHING_DIM, True)


def test_bad_model_files(tmp_path, mlp):
    path, _, _ = mlp
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    with pytest.raises(ipu.IpuefError) as e:
        rt.Runner(bytes(data))
    assert e.value.code_name.startswith("IPUEF_E_")
    with pytest.raises(ipu.IpuefError):
        rt.Runner(b"")
    with pytest.raises(ipu.Error, match="no-such"):
        rt.Runner(tmp_path / "no-such.ipuef")
    with pytest.raises(TypeError):
        rt.Runner(12)


def test_named_device_is_checked(mlp):
    path, _, _ = mlp
    with pytest.raises(ipu.Error) as e:
        rt.Runner(path, rt.RuntimeConfig(device="model:tiles=4"))
    assert e.value.code_name == "IPURT_E_NO_DEVICE"
    assert "tiles" in str(e.value)


def test_device_manager(mlp):
    path, _, weights = mlp
    dm = rt.DeviceManager("model:tiles=1472;model:tiles=1472,version=ipu21")
    assert dm.get_num_devices() >= 2
    assert dm.get_device_specs()[:2] == ["model:tiles=1472", "model:tiles=1472,version=ipu21"]
    with dm.acquire(num_tiles=16, ipu_version="ipu21") as d:
        assert d.info["ipu_version"] == "ipu21"
        # the ipu2 device is still free: a Runner of an ipu2 model takes it
        with rt.Runner(path, rt.RuntimeConfig(device_manager=dm)) as r:
            assert r.device_info["ipu_version"] == "ipu2"
            y = np.zeros((2, 4), np.float32)
            r.execute({"X": np.ones((2, 8), np.float32)}, {"Y": y})
            with pytest.raises(ipu.Error) as e:
                dm.acquire(num_tiles=16)
            assert e.value.code_name in ("IPURT_E_BUSY", "IPURT_E_NO_DEVICE")
    with pytest.raises(ipu.Error) as e:
        dm.acquire(num_tiles=100000)
    assert e.value.code_name == "IPURT_E_NO_DEVICE"
