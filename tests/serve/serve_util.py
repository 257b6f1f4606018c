# SPDX-License-Identifier: MIT
"""What the ipu-serve tests share: the build's tools, model repositories
built with the project's own tools, a server on ephemeral loopback ports
that is always stopped, HTTP with Python's urllib, and the tally that
ends in "serve: N passed, N failed"."""

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("BUILD", ROOT / "build"))
if not BUILD.is_absolute():
    BUILD = ROOT / BUILD
BIN = BUILD / "bin"
# SERVE_BIN: another build of the server (e.g. ThreadSanitizer's) with this build's tools
SERVE = pathlib.Path(os.environ.get("SERVE_BIN", BIN / "ipu-serve"))


class Overdue(BaseException):
    """The test's time limit passed (not an Exception: no check swallows it,
    it unwinds through every `with Server(...)`, which kills the servers)."""


def time_limit(seconds):
    def overdue(signum, frame):
        raise Overdue(f"the test ran over its {seconds} s limit")
    signal.signal(signal.SIGALRM, overdue)
    signal.alarm(seconds)


class Tally:
    def __init__(self, prefix):
        self.prefix = prefix
        self.passed = 0
        self.failed = 0

    def check(self, name, fn, *args):
        """Run one check; an exception or a False result fails it."""
        try:
            r = fn(*args)
            if r is False:
                raise AssertionError("returned False")
            self.passed += 1
            print(f"ok - {name}", flush=True)
        except Exception:  # every failure is reported, the others still run
            self.failed += 1
            print(f"not ok - {name}", flush=True)
            traceback.print_exc(file=sys.stdout)

    def finish(self):
        print(f"{self.prefix}: {self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed or not self.passed else 0


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, timeout=300, **kw)


def build_models(d):
    """The Model Runtime's test models (affine, scale_dim1, fused) and the
    784-512-10 MLP (batch 16) of examples/mlp, as .ipuef files in d."""
    d = pathlib.Path(d)
    d.mkdir(parents=True, exist_ok=True)
    run([BUILD / "tests/modelrunner/gen_models", d])
    run([BIN / "mlp-example", "--save", d / "mlp.ipuef", "--iterations", "1"])
    return {p.stem: p for p in d.glob("*.ipuef")}


def build_cnn(d, batch=8):
    """The CNN of bench/serve_cnn.py ([B,1,28,28] -> [B,10]) compiled by
    ipu-compile with a batch of `batch`."""
    d = pathlib.Path(d)
    d.mkdir(parents=True, exist_ok=True)
    run(["/usr/bin/python3", ROOT / "bench" / "serve_cnn.py", d / "cnn.onnx"])
    run([BIN / "ipu-compile", "--input-model", d / "cnn.onnx", "--batch-size", batch, "-o", d / "cnn.ipuef"])
    return d / "cnn.ipuef"


def add_model(repo, name, ipuef, version=1, config=None):
    vdir = pathlib.Path(repo) / name / str(version)
    vdir.mkdir(parents=True, exist_ok=True)
    shutil.copy(ipuef, vdir / "model.ipuef")
    if config is not None:
        (pathlib.Path(repo) / name / "config.yaml").write_text(config)


def ipu_run(model, inputs, outputs, tmp, extra=()):
    """ipu-run's results for the given input arrays (the oracle)."""
    tmp = pathlib.Path(tmp)
    args = [BIN / "ipu-run", model, "--iterations", "0", *extra]
    for k, (name, arr) in enumerate(inputs.items()):
        p = tmp / f"in{k}.npy"
        np.save(p, arr)
        args += ["--input", f"{name}={p}"]
    for k, name in enumerate(outputs):
        args += ["--output", f"{name}={tmp / f'out{k}.npy'}"]
    run(args)
    return {name: np.load(tmp / f"out{k}.npy") for k, name in enumerate(outputs)}


class Server:
    """ipu-serve on 127.0.0.1 with ephemeral ports; stop() sends SIGTERM."""

    def __init__(self, repo, *args):
        self.log = tempfile.NamedTemporaryFile(prefix="ipu-serve-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            [str(SERVE), "--model-repository", str(repo), "--http-port", "0", "--metrics-port", "0",
             "--http-address", "127.0.0.1", *map(str, args)],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.port = self.metrics_port = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            text = self.text()
            m = re.search(r"HTTPService at [0-9.]+:(\d+)", text)
            mm = re.search(r"Metrics Service at [0-9.]+:(\d+)", text)
            if m and mm:
                self.port, self.metrics_port = int(m.group(1)), int(mm.group(1))
                break
            if self.proc.poll() is not None:
                raise RuntimeError(f"ipu-serve exited {self.proc.returncode}:\n{text}")
            time.sleep(0.05)
        else:
            self.kill()
            raise RuntimeError("ipu-serve did not start in 120 s:\n" + self.text())
        self.url = f"http://127.0.0.1:{self.port}"
        # with --grpc-port: logged before the HTTP service
        g = re.search(r"GRPCInferenceService at [0-9.]+:(\d+)", self.text())
        self.grpc_target = f"127.0.0.1:{g.group(1)}" if g else None
        self.metrics_url = f"http://127.0.0.1:{self.metrics_port}/metrics"

    def text(self):
        return pathlib.Path(self.log.name).read_text(errors="replace")

    def stop(self, timeout=60):
        """SIGTERM and the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        died = self.proc.poll()
        self.kill()
        if died not in (None, 0):
            # a sanitizer's report or a crash is in the log: show it
            print(f"ipu-serve exited {died}; the end of its log:")
            print("\n".join(self.text().splitlines()[-60:]), flush=True)
        os.unlink(self.log.name)


def http(method, url, body=None, headers=None, timeout=60):
    """(status, headers, body bytes) with urllib; HTTP errors are results."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    req = urllib.request.Request(url, data=body, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def infer_json(url, model, inputs, outputs=None, version=None, rid=None, binary_out=False):
    """POST a JSON infer request of numpy arrays; (status, parsed body)."""
    dt = {np.float32: "FP32", np.float16: "FP16", np.int32: "INT32", np.int64: "INT64",
          np.uint8: "UINT8", np.int8: "INT8", np.bool_: "BOOL"}
    body = {"inputs": [{"name": k, "datatype": dt[v.dtype.type], "shape": list(v.shape),
                        "data": v.flatten().tolist()} for k, v in inputs.items()]}
    if outputs:
        body["outputs"] = [{"name": o, "parameters": {"binary_data": binary_out}} for o in outputs]
    if rid is not None:
        body["id"] = rid
    path = f"/v2/models/{model}" + (f"/versions/{version}" if version else "") + "/infer"
    st, hdr, raw = http("POST", url + path, body, {"Content-Type": "application/json"})
    return st, hdr, raw


NP_OF = {"FP32": np.float32, "FP16": np.float16, "INT32": np.int32, "INT64": np.int64,
         "UINT8": np.uint8, "INT8": np.int8, "BOOL": np.bool_}


def decode(hdr, raw):
    """The response's outputs as numpy arrays (JSON or binary)."""
    hl = {k.lower(): v for k, v in hdr.items()}.get("inference-header-content-length")
    jlen = int(hl) if hl is not None else len(raw)
    j = json.loads(raw[:jlen])
    out, at = {}, jlen
    for o in j["outputs"]:
        dt = NP_OF[o["datatype"]]
        size = o.get("parameters", {}).get("binary_data_size")
        if size is not None:
            out[o["name"]] = np.frombuffer(raw[at:at + size], dtype=dt).reshape(o["shape"])
            at += size
        else:
            out[o["name"]] = np.array(o["data"], dtype=dt).reshape(o["shape"])
    assert at == len(raw), (at, len(raw))
    return j, out


def metrics(url):
    """Prometheus text parsed strictly: {(name, labels...): value}."""
    st, _, raw = http("GET", url)
    assert st == 200, st
    line_re = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? (\S+)$')
    label_re = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
    out = {}
    for line in raw.decode().splitlines():
        if not line or line.startswith("#"):
            assert line.startswith("# HELP ") or line.startswith("# TYPE ") or not line, line
            continue
        m = line_re.match(line)
        assert m, f"not Prometheus text: {line!r}"
        labels = tuple(sorted(label_re.findall(m.group(3) or "")))
        out[(m.group(1),) + labels] = float(m.group(4))
    return out


def metric(ms, name, model, version="1", **extra):
    labels = dict(model=model, version=version, **extra)
    return ms[(name,) + tuple(sorted(labels.items()))]
