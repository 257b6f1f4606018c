#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Triton's system shared-memory extension on ipu-serve: regions of POSIX
shared-memory objects made by Python's multiprocessing.shared_memory,
registered, listed and unregistered; inputs read from them and outputs
written into them give the same bytes as the same tensors inline; every bad
request a clear 400 (unknown region, windows beyond the region or the
object, an object shrunk after registration, outputs that do not fit, names
with slashes or too long); a region unregistered while a request that writes
into it waits in the queue still gets its output; --system-shared-memory
off refuses it all.  Ends with "serve-shm: N passed, N failed"."""

import atexit
import json
import os
import pathlib
import shutil
import sys
import tempfile
import threading
import time
from multiprocessing import shared_memory

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_util import (Overdue, Server, Tally, add_model, build_models, decode, http,  # noqa: E402
                        infer_json, metric, metrics, time_limit)

T = Tally("serve-shm")
time_limit(600)

BIAS = np.array([10, 20, 30], np.float32)
SEGMENTS = []


def segment(size):
    """A new POSIX shared-memory object of size bytes; (object, key)."""
    s = shared_memory.SharedMemory(create=True, size=size)
    SEGMENTS.append(s)
    return s, "/" + s.name


def cleanup():
    for s in SEGMENTS:
        try:
            s.close()
            s.unlink()
        except (FileNotFoundError, BufferError):
            pass


atexit.register(cleanup)


def post(url, path, body=None):
    st, _, raw = http("POST", url + path, body if body is not None else {})
    return st, raw


def register(url, name, key, offset, size):
    return post(url, f"/v2/systemsharedmemory/region/{name}/register",
                {"key": key, "offset": offset, "byte_size": size})


def status(url, name=None):
    path = "/v2/systemsharedmemory" + (f"/region/{name}" if name else "") + "/status"
    st, _, raw = http("GET", url + path)
    return st, json.loads(raw)


def infer(url, model, inputs, outputs=None, version=None):
    body = {"inputs": inputs}
    if outputs is not None:
        body["outputs"] = outputs
    path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
    return http("POST", url + path, body, {"Content-Type": "application/json"})


def shm_in(name, region, rows, offset=0):
    return {"name": name, "datatype": "FP32", "shape": [rows, 3],
            "parameters": {"shared_memory_region": region, "shared_memory_offset": offset,
                           "shared_memory_byte_size": rows * 12}}


def shm_out(name, region, size, offset=0):
    return {"name": name, "parameters": {"shared_memory_region": region, "shared_memory_offset": offset,
                                         "shared_memory_byte_size": size}}


def bad(st, raw, *words):
    assert st == 400, (st, raw)
    msg = json.loads(raw)["error"]
    for w in words:
        assert w in msg, (w, msg)
    return msg


def main():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="serve-shm-"))
    atexit.register(shutil.rmtree, tmp, True)
    models = build_models(tmp / "models")
    repo = tmp / "repo"
    add_model(repo, "affine", models["affine"], config="max_batch_size: 8\n")
    add_model(repo, "dyn", models["affine"], config=(
        "max_batch_size: 8\ndynamic_batching: { max_queue_delay_microseconds: 3000000 }\n"))
    rng = np.random.default_rng(7)
    with Server(repo) as s:
        u = s.url
        seg_in, key_in = segment(4096)
        seg_out, key_out = segment(4096)

        def extension():
            st, _, raw = http("GET", u + "/v2")
            assert st == 200 and "system_shared_memory" in json.loads(raw)["extensions"], raw
        T.check("server metadata lists system_shared_memory", extension)

        def reg():
            assert register(u, "in0", key_in, 64, 1024) == (200, b"")
            assert register(u, "out0", key_out, 128, 2048)[0] == 200
            st, j = status(u)
            assert st == 200 and sorted(j, key=lambda r: r["name"]) == [
                {"name": "in0", "key": key_in, "offset": 64, "byte_size": 1024},
                {"name": "out0", "key": key_out, "offset": 128, "byte_size": 2048}], j
            st, j = status(u, "out0")
            assert st == 200 and j == [{"name": "out0", "key": key_out, "offset": 128, "byte_size": 2048}], j
        T.check("register two regions; status lists them, and one by name", reg)

        def same_bytes():
            for rows, off in ((1, 0), (5, 12), (8, 100)):
                x = rng.standard_normal((rows, 3)).astype(np.float32)
                # the inline answer, binary: the oracle
                st, hdr, raw = infer_json(u, "affine", {"X": x}, outputs=["Y"], binary_out=True)
                assert st == 200, raw
                want = decode(hdr, raw)[1]["Y"].tobytes()
                assert want == (x * 2 + BIAS).tobytes()
                seg_in.buf[64 + off:64 + off + x.nbytes] = x.tobytes()
                seg_out.buf[128 + off:128 + off + x.nbytes] = b"\xee" * x.nbytes
                st, hdr, raw = infer(u, "affine", [shm_in("X", "in0", rows, off)],
                                     [shm_out("Y", "out0", rows * 12, off)])
                assert st == 200, raw
                j = json.loads(raw)
                o = j["outputs"][0]
                assert o["name"] == "Y" and o["shape"] == [rows, 3] and "data" not in o, j
                assert o["parameters"]["shared_memory_region"] == "out0", o
                assert o["parameters"]["shared_memory_byte_size"] == rows * 12, o
                got = bytes(seg_out.buf[128 + off:128 + off + x.nbytes])
                assert got == want, (rows, off)
                # shm in, inline out; inline in, shm out
                st, hdr, raw = infer(u, "affine", [shm_in("X", "in0", rows, off)],
                                     [{"name": "Y", "parameters": {"binary_data": True}}])
                assert st == 200 and decode(hdr, raw)[1]["Y"].tobytes() == want, raw
                seg_out.buf[128:128 + x.nbytes] = b"\0" * x.nbytes
                st, hdr, raw = infer(u, "affine", [{"name": "X", "datatype": "FP32", "shape": [rows, 3],
                                                    "data": x.flatten().tolist()}],
                                     [shm_out("Y", "out0", 2048)])
                assert st == 200, raw
                assert bytes(seg_out.buf[128:128 + x.nbytes]) == want
            print("   1, 5 and 8 rows at offsets 0, 12 and 100: shared memory == inline, byte for byte")
        T.check("inputs from and outputs into regions: the same bytes as inline (3 batch sizes, offsets)",
                same_bytes)

        def bad_requests():
            x = {"name": "X", "datatype": "FP32", "shape": [1, 3], "data": [1, 2, 3]}
            cases = [
                ([shm_in("X", "nope", 1)], None, ["no shared-memory region 'nope'"]),
                ([shm_in("X", "in0", 1, 1020)], None, ["beyond region 'in0'", "1024"]),
                ([{**shm_in("X", "in0", 2), "parameters": {"shared_memory_region": "in0",
                                                           "shared_memory_byte_size": 12}}], None,
                 ["shared_memory_byte_size 12", "24 bytes"]),
                ([{**shm_in("X", "in0", 1), "data": [1, 2, 3]}], None, ["'data'"]),
                ([{**shm_in("X", "in0", 1), "parameters": {"shared_memory_region": "in0"}}], None,
                 ["go together"]),
                ([{**shm_in("X", "in0", 1), "parameters": {"shared_memory_region": 5,
                                                           "shared_memory_byte_size": 12}}], None,
                 ["must be a string"]),
                ([{**shm_in("X", "in0", 1), "parameters": {"shared_memory_region": "in0",
                                                           "shared_memory_byte_size": 12,
                                                           "shared_memory_offset": -1}}], None,
                 ["shared_memory_offset"]),
                ([x], [shm_out("Y", "out0", 8)], ["output 'Y'", "12 bytes", "8"]),
                ([x], [shm_out("Y", "out0", 12, 2040)], ["beyond region 'out0'"]),
                ([x], [shm_out("Y", "gone", 12)], ["no shared-memory region 'gone'"]),
                ([x], [{**shm_out("Y", "out0", 12), "parameters": {"shared_memory_region": "out0",
                                                                   "shared_memory_byte_size": 12,
                                                                   "binary_data": True}}],
                 ["binary_data"]),
            ]
            for inputs, outputs, words in cases:
                st, _, raw = infer(u, "affine", inputs, outputs)
                bad(st, raw, *words)
            print(f"   {len(cases)} bad infer requests: 400 each")
        T.check("bad tensor parameters: unknown region, out of bounds, wrong size, data too, "
                "output too small: 400 with the reason", bad_requests)

        def bad_registrations():
            small, key_small = segment(100)
            cases = [
                (register(u, "in0", key_in, 0, 10), ["already registered"]),
                (register(u, "r", "/ipu-serve-no-such-object", 0, 10), ["cannot open", "No such file"]),
                (register(u, "r", key_small, 0, 101), ["beyond the end", "100 bytes"]),
                (register(u, "r", key_small, 90, 11), ["beyond the end"]),
                (register(u, "r", "/a/b", 0, 10), ["directly under /dev/shm"]),
                (register(u, "r", "/..", 0, 10), ["directly under /dev/shm"]),
                (register(u, "r", "no-slash", 0, 10), ["'key' must be"]),
                (register(u, "r", "/" + "k" * 300, 0, 10), ["'key' must be"]),
                (register(u, "r", key_small, 0, 0), ["byte_size"]),
                (register(u, "r", key_small, -1, 10), ["offset"]),
                (register(u, "r", key_small, 2**63 - 1, 2**63 - 1), ["beyond the end"]),
                (post(u, "/v2/systemsharedmemory/region/r/register", {"offset": 0, "byte_size": 1}), ["'key'"]),
                (post(u, "/v2/systemsharedmemory/region/r/register", [1]), ["JSON object"]),
                (register(u, "a/b", key_small, 0, 10), ["region name"]),
                (register(u, "x" * 129, key_small, 0, 10), ["1 to 128 characters"]),
                (register(u, "sp%20ace", key_small, 0, 10), ["region name"]),
                ((lambda r: (r[0], r[2]))(http("GET", u + "/v2/systemsharedmemory/region/nope/status")),
                 ["no shared-memory region"]),
            ]
            for (st, raw), words in cases:
                bad(st, raw, *words)
            st, _, _ = http("GET", u + "/v2/systemsharedmemory/region/r/register")
            assert st == 405, st
            st, _, _ = http("POST", u + "/v2/systemsharedmemory/status", {})
            assert st == 405, st
            st, _, _ = http("POST", u + "/v2/systemsharedmemory/region/r/frob", {})
            assert st == 404, st
            # as Triton: unregistering a name not registered changes nothing and succeeds
            assert post(u, "/v2/systemsharedmemory/region/nope/unregister") == (200, b"")
            assert len(status(u)[1]) == 2
            print(f"   {len(cases)} bad registrations: 400 each, nothing registered")
        T.check("bad registrations: taken name, no such object, beyond its end, keys with slashes, "
                "long or bad names: 400 with the reason", bad_registrations)

        def shrunk():
            seg, key = segment(4096)
            assert register(u, "shrink", key, 0, 4096)[0] == 200
            os.ftruncate(seg._fd, 16)
            st, _, raw = infer(u, "affine", [shm_in("X", "shrink", 2, 100)])
            bad(st, raw, "shrunk")
            x = {"name": "X", "datatype": "FP32", "shape": [1, 3], "data": [1, 2, 3]}
            st, _, raw = infer(u, "affine", [x], [shm_out("Y", "shrink", 12, 1000)])
            bad(st, raw, "shrunk")
            assert os.fstat(seg._fd).st_size == 16  # never grown back by the server
            assert post(u, "/v2/systemsharedmemory/region/shrink/unregister") == (200, b"")
            st, _, _ = http("GET", u + "/v2/health/live")
            assert st == 200
        T.check("an object shrunk after registration: 400 for reads and writes, no SIGBUS, not regrown",
                shrunk)

        def in_flight():
            seg, key = segment(256)
            assert register(u, "late", key, 0, 256)[0] == 200
            x = rng.standard_normal((1, 3)).astype(np.float32)
            res = {}

            def client():
                res["r"] = infer(u, "dyn", [{"name": "X", "datatype": "FP32", "shape": [1, 3],
                                             "data": x.flatten().tolist()}], [shm_out("Y", "late", 12)])
            t = threading.Thread(target=client)
            t.start()
            deadline = time.monotonic() + 30
            while metric(metrics(s.metrics_url), "ipu_inference_pending_request_count", "dyn") != 1:
                assert time.monotonic() < deadline, "the request never queued"
                time.sleep(0.02)
            # the request waits for its batch (3 s): every region goes meanwhile
            assert post(u, "/v2/systemsharedmemory/unregister") == (200, b"")
            assert status(u) == (200, [])
            t.join(60)
            st, _, raw = res["r"]
            assert st == 200, raw
            assert bytes(seg.buf[:12]) == (x * 2 + BIAS).tobytes()
            st, _, raw = infer(u, "affine", [shm_in("X", "late", 1)])
            bad(st, raw, "no shared-memory region 'late'")
        T.check("every region unregistered while a request that writes into one waits: it still "
                "gets its output; later requests 400", in_flight)

        def reregister():
            assert register(u, "in0", key_in, 0, 4096)[0] == 200
            assert post(u, "/v2/systemsharedmemory/region/in0/unregister") == (200, b"")
            assert status(u) == (200, [])
        T.check("a name is free again after unregister", reregister)
        rc = s.stop()
        T.check("ipu-serve exits 0", lambda: rc == 0)

    with Server(repo, "--system-shared-memory", "off") as s:
        u = s.url

        def off():
            st, _, raw = http("GET", u + "/v2")
            assert "system_shared_memory" not in json.loads(raw)["extensions"], raw
            st, raw = register(u, "in0", key_in, 0, 12)
            assert st == 403 and "--system-shared-memory" in json.loads(raw)["error"], raw
            st, _, raw = http("GET", u + "/v2/systemsharedmemory/status")
            assert st == 403, raw
            st, _, raw = infer(u, "affine", [shm_in("X", "in0", 1)])
            bad(st, raw, "--system-shared-memory")
        T.check("--system-shared-memory off: not listed, endpoints 403, tensor parameters 400", off)
        rc = s.stop()
        T.check("ipu-serve exits 0 (off)", lambda: rc == 0)
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
