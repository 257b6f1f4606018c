# SPDX-License-Identifier: MIT
"""Runner.close() against threads that keep using the runner: once close()
starts, new requests are refused with ipu.RunnerClosedError, the requests
already in flight finish (or, queued by execute_async, are cancelled) and
close() returns.  The loops are bounded; the only timing is a generous join
timeout that turns a close() that never returns into a failure."""

import threading

import numpy as np
import pytest

import ipu
import ipu.runtime as rt
from conftest import mlp_reference

JOIN_TIMEOUT = 120.0      # seconds: a hang fails the test, a slow machine does not
LOOPS = 200_000           # per submitter: far more than run before close() starts


def submitter(r, weights, k, use_async, progress, record):
    """Submits until refused (or LOOPS); records what happened."""
    rng = np.random.default_rng(1000 + k)
    x = rng.standard_normal((2, 8)).astype(np.float32)
    want = mlp_reference(x, weights)
    done = 0
    futures = []
    try:
        for _ in range(LOOPS):
            y = np.zeros((2, 4), np.float32)
            if use_async:
                futures.append((r.execute_async({"X": x}, {"Y": y}), y))
            else:
                r.execute({"X": x}, {"Y": y})
                np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
            done += 1
            progress.release()
        record[k] = ("exhausted", done, futures, want)
    except ipu.RunnerClosedError as e:
        record[k] = ("refused", done, futures, want, str(e))
    except Exception as e:  # noqa: BLE001 - reported by the test
        record[k] = ("error", done, futures, want, repr(e))


def test_close_wins_against_threads_that_keep_submitting(mlp):
    path, _, weights = mlp
    r = rt.Runner(path)
    progress = threading.Semaphore(0)
    record = {}
    threads = [threading.Thread(target=submitter,
                                args=(r, weights, k, k % 2 == 1, progress, record))
               for k in range(6)]
    for t in threads:
        t.start()
    for _ in range(60):   # every kind of call is under way before close() starts
        assert progress.acquire(timeout=JOIN_TIMEOUT), "the submitters made no progress"
    closer_error = []

    def closer():
        try:
            r.close()
        except Exception as e:  # noqa: BLE001 - reported below
            closer_error.append(e)

    c = threading.Thread(target=closer)
    c.start()
    c.join(JOIN_TIMEOUT)
    assert not c.is_alive(), "close() did not return while other threads kept submitting"
    assert not closer_error, closer_error
    assert r.closed
    for t in threads:
        t.join(JOIN_TIMEOUT)
        assert not t.is_alive(), "a submitter still runs after close() returned"

    outcomes = {k: v[0] for k, v in record.items()}
    assert sorted(record) == list(range(6)), record.keys()
    assert all(o == "refused" for o in outcomes.values()), \
        {k: v[:2] + v[4:] for k, v in record.items()}
    for k, (_, done, futures, want, msg) in record.items():
        assert "close" in msg, msg
        finished = cancelled = 0
        for f, y in futures:
            try:
                f.wait()
                np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
                finished += 1
            except ipu.Error as e:
                assert e.code_name == "IPURT_E_CANCELLED", e
                cancelled += 1
        assert finished + cancelled == len(futures)

    # and after it, every call says why
    with pytest.raises(ipu.RunnerClosedError, match="closed"):
        r.execute({"X": np.ones((2, 8), np.float32)}, {"Y": np.zeros((2, 4), np.float32)})
    with pytest.raises(RuntimeError):
        r.execute_async({"X": np.ones((2, 8), np.float32)}, {"Y": np.zeros((2, 4), np.float32)})
    r.close()


def test_close_from_several_threads_returns_in_each(mlp):
    path, _, _ = mlp
    r = rt.Runner(path)
    errors = []

    def close():
        try:
            r.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        if not r.closed:
            errors.append("close() returned before the runner was closed")

    threads = [threading.Thread(target=close) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
        assert not t.is_alive(), "a close() never returned"
    assert not errors, errors


def test_close_cancels_a_request_another_thread_waits_for(fused):
    # graph0's request without graph0/Y never finishes on its own (no
    # timeout_ns): close() must not wait for the thread waiting on it
    r = rt.Runner(fused, rt.RuntimeConfig(validate_io_params=False))
    f = r.execute_async({"graph0/X": np.ones([1, 2], np.float32)},
                        {"graph0/O": np.zeros([2], np.float32)})
    result = []
    waiting = threading.Event()

    def waiter():
        waiting.set()
        try:
            f.wait()
            result.append("finished")
        except ipu.Error as e:
            result.append(e.code_name)

    w = threading.Thread(target=waiter)
    w.start()
    assert waiting.wait(JOIN_TIMEOUT)
    c = threading.Thread(target=r.close)
    c.start()
    c.join(JOIN_TIMEOUT)
    assert not c.is_alive(), "close() waited for a request that cannot finish"
    w.join(JOIN_TIMEOUT)
    assert not w.is_alive()
    assert result == ["IPURT_E_CANCELLED"], result
