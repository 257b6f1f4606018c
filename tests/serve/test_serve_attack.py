#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The attacks an outside trial ran on ipu-serve, replayed over loopback
with raw sockets against a live server, each asserting what the server
does now (Documentation/serving.md, "What an attack finds"):

  1. four JSON bodies of --max-body-size at once: every one refused (413 or
     503), peak RSS (VmHWM) within the documented budget, the memory given
     back afterwards (twice: all four bodies received, or two at most with
     a smaller --max-body-memory);
  2. clients trickling a request at one byte a second: normal requests are
     served while 150 such connections try to fill --max-connections, and
     every trickling connection is cut at --request-timeout;
  3. requests sent on open keep-alive connections 0-60 ms after SIGTERM,
     and on connections waiting in the listener's backlog: each answered
     200 or 503;
  4. malformed framing (Content-Length 2^64+1, -1, +N, twice; Transfer-
     Encoding gzip, chunked; both headers): one answer, 400 or 501, then
     the connection closed;
  5. model names with %ff, %00, %0a, ESC: 400, and no raw control byte in
     the log;
  6. finite floats that overflow FP32 or FP16: 400 naming input and element;
  7. the system shared-memory extension's doors: a key that is a symbolic
     link in /dev/shm to a file, a FIFO there, keys walking out of /dev/shm,
     a NUL in a key, names of 10000 characters, windows of 2^62 bytes, and
     registering until the limit: each 400 (or 414), no descriptor left
     open once the regions are unregistered.

Ends with "serve-attack: N passed, N failed"."""

import atexit
import json
import os
import pathlib
import re
import select
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_util import (Overdue, Server, Tally, add_model, build_models, decode, http,  # noqa: E402
                        infer_json, time_limit)

T = Tally("serve-attack")
# a hung server must not hang make check
time_limit(240)

MiB = 1 << 20
AFFINE_W = np.array([10, 20, 30], np.float32)


def proc_status(pid):
    """VmHWM and VmRSS of a process in bytes."""
    out = {}
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        if k in ("VmHWM", "VmRSS"):
            out[k] = int(v.split()[0]) * 1024
    return out


def read_all(c, timeout=20):
    """Everything the server sends until it closes the connection."""
    c.settimeout(timeout)
    out = b""
    while True:
        try:
            d = c.recv(65536)
        except ConnectionResetError:
            break
        if not d:
            break
        out += d
    return out


def exchange(port, data, timeout=20):
    c = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        c.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    out = read_all(c, timeout)
    c.close()
    return out


def read_response(c, timeout=20):
    """One HTTP response (status, headers, body) from a keep-alive socket;
    raises if the connection ends first."""
    c.settimeout(timeout)
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d:
            raise AssertionError(f"connection closed before an answer (got {buf!r})")
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin1").split("\r\n")
    status = int(lines[0].split()[1])
    hdr = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    n = int(hdr.get("content-length", "0"))
    while len(rest) < n:
        d = c.recv(65536)
        if not d:
            raise AssertionError("connection closed inside an answer")
        rest += d
    return status, hdr, rest[:n]


def statuses(raw):
    """The status codes of every response in a byte stream."""
    return [int(m.group(1)) for m in re.finditer(rb"(?m)^HTTP/1\.[01] (\d{3}) ", raw)]


def infer_body(name, dtype, shape, data):
    return json.dumps({"inputs": [{"name": name, "datatype": dtype, "shape": shape,
                                   "data": data}]}).encode()


def post(path, body, extra=b""):
    return (b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n%s\r\n" % (path, len(body), extra)
            + body)


def memory(repo):
    """Four JSON bodies of exactly --max-body-size at once (64 MiB; 256 MiB
    for parses): the trial's 62 MB body took the server from 16 MB to
    1.29 GB, four 5.1 GB with 3.9 GB kept.  Once with the default
    --max-body-memory (1 GiB: all four are received), once with 128 MiB
    (two at most: the others 503 at once)."""
    max_body, max_json = 64 * MiB, 256 * MiB
    head = b'{"inputs":[{"name":"X","datatype":"FP32","shape":[1,3],"data":['
    tail = b'0.0]}]}'
    body = head + b"0.0," * ((max_body - len(head) - len(tail)) // 4)
    body += b" " * (max_body - len(body) - len(tail)) + tail
    assert len(body) == max_body
    request = post(b"/v2/models/affine/infer", body, b"Connection: close\r\n")
    for body_memory in (None, 128 * MiB):
        args = ("--max-body-memory", body_memory) if body_memory else ()
        with Server(repo, *args) as s:
            before = proc_status(s.proc.pid)
            answers = [None] * 4

            def one(i):
                answers[i] = exchange(s.port, request, timeout=120)
            ts = [threading.Thread(target=one, args=(i,)) for i in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            peak = proc_status(s.proc.pid)["VmHWM"]
            # the documented worst case: the bodies being received, the parse
            # budget, and 32 MiB for threads, connection pools and tensors
            budget = before["VmHWM"] + min(4 * max_body, body_memory or 1 << 30) + max_json + 32 * MiB
            for a in answers:
                st = statuses(a)
                assert len(st) == 1 and st[0] in (413, 503), a[:300]
                assert b"--max-json-memory" in a or (body_memory and b"--max-body-memory" in a), a[:300]
            if body_memory:
                assert any(b"--max-body-memory" in a for a in answers), answers
            assert peak <= budget, (peak, budget)
            deadline = time.monotonic() + 10
            while proc_status(s.proc.pid)["VmRSS"] > before["VmRSS"] + 64 * MiB:
                if time.monotonic() > deadline:
                    raise AssertionError(f"memory kept: {proc_status(s.proc.pid)}")
                time.sleep(0.1)
            after = proc_status(s.proc.pid)["VmRSS"]
            x = np.array([[1, 2, 3]], np.float32)
            st, hdr, raw = infer_json(s.url, "affine", {"X": x})
            assert st == 200 and np.array_equal(decode(hdr, raw)[1]["Y"], x * 2 + AFFINE_W), raw
            why = ["body" if b"--max-body-memory" in a else "json" for a in answers]
            print(f"   4 x {max_body // MiB} MiB JSON at once, --max-body-memory "
                  f"{(body_memory or 1 << 30) // MiB} MiB: answers {[statuses(a)[0] for a in answers]} "
                  f"({', '.join(why)}), VmHWM {before['VmHWM'] // MiB} -> {peak // MiB} MiB "
                  f"(budget {budget // MiB}), VmRSS after {after // MiB} MiB", flush=True)


class Tricklers:
    """n connections sending a request one byte a second, from the given
    source addresses; records when the server closes each."""

    REQ = b"POST /v2/models/affine/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{}{}{"

    def __init__(self, port, sources):
        self.socks, self.opened, self.closed, self.sent = [], [], [], []
        for src in sources:
            c = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(src, 0))
            c.setblocking(False)
            self.socks.append(c)
            self.opened.append(time.monotonic())
            self.closed.append(None)
            self.sent.append(0)

    def open_count(self):
        return sum(1 for t in self.closed if t is None)

    def step(self):
        """Send the next byte on every open connection, note the closed ones."""
        now = time.monotonic()
        for i, c in enumerate(self.socks):
            if self.closed[i] is not None:
                continue
            r, _, _ = select.select([c], [], [], 0)
            try:
                if r and not c.recv(4096):
                    raise ConnectionResetError
                c.send(self.REQ[self.sent[i]:self.sent[i] + 1])
                self.sent[i] = min(self.sent[i] + 1, len(self.REQ) - 1)
            except (ConnectionResetError, BrokenPipeError, OSError):
                self.closed[i] = now

    def run(self, seconds, during=None):
        """Trickle for `seconds` (a byte per connection per second); call
        `during` once after the first second."""
        end = time.monotonic() + seconds
        called = False
        while time.monotonic() < end and self.open_count():
            self.step()
            if during and not called and time.monotonic() > end - seconds + 1:
                called = True
                during()
            time.sleep(max(0, min(1.0, end - time.monotonic())))
        self.step()

    def close(self):
        for c in self.socks:
            c.close()


def trickle(repo):
    """--connection-timeout 5 restarts on each byte: one byte a second held
    a connection forever and 150 of them filled --max-connections."""
    timeout = 4
    with Server(repo, "--max-connections", 150, "--connection-timeout", 5,
                "--request-timeout", timeout) as s:
        x = np.array([[4, 5, 6]], np.float32)
        served = []

        def normal_requests():
            for _ in range(5):
                st, hdr, raw = infer_json(s.url, "affine", {"X": x})
                served.append(st == 200 and np.array_equal(decode(hdr, raw)[1]["Y"], x * 2 + AFFINE_W))
            served.append(tr.open_count())

        # 150 from one client address: at most half of --max-connections are its
        tr = Tricklers(s.port, ["127.0.0.2"] * 150)
        try:
            tr.run(timeout + 4, normal_requests)
            open_then = served.pop()
            assert served == [True] * 5, served
            assert 0 < open_then <= 75, open_then
            assert tr.open_count() == 0, f"{tr.open_count()} trickling connections outlived --request-timeout"
            lived = [c - o for c, o in zip(tr.closed, tr.opened)]
            assert max(lived) < timeout + 3, max(lived)
            assert sum(1 for t in lived if t > timeout - 1) == open_then, (open_then, sorted(lived)[-5:])
        finally:
            tr.close()
        print(f"   150 trickling from one address: {open_then} held, {150 - open_then} refused at once, "
              f"5/5 normal requests served meanwhile, all cut after {max(lived):.1f} s", flush=True)
        # 150 from 150 addresses fill every slot: the deadline frees them
        tr = Tricklers(s.port, [f"127.0.1.{i}" for i in range(1, 151)])
        try:
            full = tr.open_count()
            tr.run(timeout + 4)
            assert tr.open_count() == 0, f"{tr.open_count()} trickling connections outlived --request-timeout"
            lived = [c - o for c, o in zip(tr.closed, tr.opened)]
            assert max(lived) < timeout + 3, max(lived)
        finally:
            tr.close()
        st, hdr, raw = infer_json(s.url, "affine", {"X": x})
        assert st == 200, raw
        print(f"   150 trickling from 150 addresses: {full} open, all cut after {max(lived):.1f} s, "
              "then served", flush=True)


def drain(repo):
    """Requests sent 7-33 ms after SIGTERM on open keep-alive connections
    got no answer (52 of them)."""
    with Server(repo) as s:
        conns = []
        for _ in range(60):
            c = socket.create_connection(("127.0.0.1", s.port), timeout=20)
            c.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
            assert read_response(c)[0] == 200
            conns.append(c)
        body = infer_body("X", "FP32", [1, 3], [1, 2, 3])
        reqs = [b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n", post(b"/v2/models/affine/infer", body),
                b"GET /v2/models/affine HTTP/1.1\r\nHost: x\r\n\r\n"]
        # 20 more connect and send while the server is stopped: they wait in the
        # listener's backlog when SIGTERM comes
        s.proc.send_signal(signal.SIGSTOP)
        waiting = []
        for i in range(20):
            c = socket.create_connection(("127.0.0.1", s.port), timeout=20)
            c.sendall(reqs[i % 3])
            waiting.append(c)
        s.proc.send_signal(signal.SIGTERM)
        s.proc.send_signal(signal.SIGCONT)
        t0 = time.monotonic()
        for i, c in enumerate(conns):
            while time.monotonic() < t0 + i / 1000:
                pass
            c.sendall(reqs[i % 3])
        sent_by = time.monotonic() - t0
        got = []
        for i, c in enumerate(conns):
            st, hdr, _ = read_response(c)
            got.append(st)
            # answered before the signal was handled: 200, the connection kept;
            # after it: infer 503, the rest 200, and the connection closed
            assert st in (200, 503), (i, st)
            assert st == 200 or hdr.get("connection", "").lower() == "close", hdr
            c.close()
        backlog = []
        for i, c in enumerate(waiting):
            st, hdr, _ = read_response(c)
            backlog.append(st)
            assert st in (200, 503), (i, st)
            c.close()
        rc = s.proc.wait(60)
        assert rc == 0, (rc, s.text()[-2000:])
        print(f"   60 requests sent 0-{sent_by * 1000:.0f} ms after SIGTERM on keep-alive connections: "
              f"{got.count(200)} x 200, {got.count(503)} x 503, none unanswered; 20 in the listener's "
              f"backlog: {backlog.count(200)} x 200, {backlog.count(503)} x 503; exit 0", flush=True)


def framing_and_names(repo):
    with Server(repo, "--log-verbose", 1) as s:
        body = infer_body("X", "FP32", [1, 3], [1, 2, 3])
        P = b"POST /v2/models/affine/infer HTTP/1.1\r\nHost: x\r\n"
        cases = [
            ("Content-Length 2^64+1", P + b"Content-Length: 18446744073709551617\r\n\r\n" + body, 400),
            ("Content-Length -1", P + b"Content-Length: -1\r\n\r\n" + body, 400),
            ("Content-Length +N", P + b"Content-Length: +%d\r\n\r\n" % len(body) + body, 400),
            ("two different Content-Length", P + b"Content-Length: %d\r\nContent-Length: 5\r\n\r\n" % len(body)
             + body, 400),
            ("two equal Content-Length", P + b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n"
             % (len(body), len(body)) + body, 400),
            ("Transfer-Encoding: gzip, chunked", P + b"Transfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
             501),
            ("Transfer-Encoding and Content-Length", P + b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
             b"5\r\nhello\r\n0\r\n\r\n", 400),
            ("whitespace before a header's colon", b"POST /v2/models/affine/infer HTTP/1.1\r\nHost: x\r\n"
             b"Content-Length : %d\r\n\r\n" % len(body) + body, 400),
        ]
        names = [
            ("model name %ff (not UTF-8)", b"GET /v2/models/%ff HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("model name affine%00zzz", b"GET /v2/models/affine%00zzz HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("infer on affine%00", post(b"/v2/models/affine%00/infer", body)),
            ("model name with %0a and ESC", b"GET /v2/models/x%0aipu-serve:%20forged%1b[31m HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("version %00", b"GET /v2/models/affine/versions/1%00 HTTP/1.1\r\nHost: x\r\n\r\n"),
            ("load of %c3%28 (bad UTF-8)", b"POST /v2/repository/models/%c3%28/load HTTP/1.1\r\nHost: x\r\n"
             b"Content-Length: 0\r\n\r\n"),
            ("surrogate %ed%a0%80", b"GET /v2/models/%ed%a0%80 HTTP/1.1\r\nHost: x\r\n\r\n"),
        ]
        for name, req, want in cases + [(n, r, 400) for n, r in names]:
            def one(req=req, want=want):
                raw = exchange(s.port, req)
                st = statuses(raw)
                assert st == [want], (st, raw[:400])
                assert raw.count(b"\r\n\r\n") == 1, raw  # one header block
                j = json.loads(raw.partition(b"\r\n\r\n")[2])
                assert "error" in j, j
            T.check(f"{name}: one {want} answer, connection closed", one)

        def log_clean():
            log = pathlib.Path(s.log.name).read_bytes()
            assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", log), \
                re.search(rb".{0,40}[\x00-\x08\x0b-\x1f\x7f].{0,40}", log)
            assert not re.search(rb"(?m)^ipu-serve: forged", log), log[-2000:]
            assert b"\\x0a" in log and b"\\x1b" in log, log[-2000:]  # written, escaped
            assert b"loaded model 'esc\\x1b[31mname'" in log, log[:2000]
        T.check("the log holds no raw control bytes (no forged line)", log_clean)

        def overflow():
            u = s.url + "/v2/models/affine/infer"
            for v, at in ((3.5e38, 1), (-3.5e38, 2), (1e39, 0)):
                data = [1.0, 2.0, 3.0]
                data[at] = v
                st, _, raw = http("POST", u, {"inputs": [{"name": "X", "datatype": "FP32", "shape": [1, 3],
                                                          "data": data}]})
                err = json.loads(raw)["error"]
                assert st == 400 and f"input 'X': element {at}" in err and "out of range for FP32" in err, raw
            st, _, raw = http("POST", u, {"inputs": [{"name": "X", "datatype": "FP32", "shape": [1, 3],
                                                      "data": [1e38, -1e38, 3.4e38 / 4]}]})
            assert st == 200, raw
            uf = s.url + "/v2/models/fused/infer"
            st, _, raw = http("POST", uf, {"inputs": [{"name": "graph1/X", "datatype": "FP16", "shape": [1, 1],
                                                       "data": [70000.0]}]})
            err = json.loads(raw)["error"]
            assert st == 400 and "input 'graph1/X': element 0" in err and "out of range for FP16" in err, raw
            st, _, raw = http("POST", uf, {"inputs": [{"name": "graph1/X", "datatype": "FP16", "shape": [1, 1],
                                                       "data": [1.5]}]})
            assert st == 200, raw
        T.check("finite floats overflowing FP32 / FP16: 400 naming input and element", overflow)

        def still_serving():
            x = np.array([[1, 2, 3]], np.float32)
            st, hdr, raw = infer_json(s.url, "affine", {"X": x})
            assert st == 200 and np.array_equal(decode(hdr, raw)[1]["Y"], x * 2 + AFFINE_W), raw
        T.check("still serving after every attack above", still_serving)


def open_fds(pid):
    """The process's descriptors of shared-memory objects (its sockets come and go)."""
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            n += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/dev/shm/")
        except OSError:
            pass
    return n


def shared_memory(repo, tmp):
    secret = tmp / "secret.txt"
    secret.write_text("not for clients\n" * 100)
    tag = f"ipu-serve-attack-{os.getpid()}"
    link, fifo, obj = (pathlib.Path("/dev/shm") / f"{tag}-{k}" for k in ("link", "fifo", "obj"))
    for f in (link, fifo, obj):
        atexit.register(lambda f=f: f.unlink(missing_ok=True))
    link.symlink_to(secret)
    os.mkfifo(fifo)
    obj.write_bytes(b"\0" * 4096)
    with Server(repo) as s:
        u = s.url + "/v2/systemsharedmemory"

        def reg(name, key, offset=0, size=16):
            st, _, raw = http("POST", f"{u}/region/{name}/register",
                              {"key": key, "offset": offset, "byte_size": size}, timeout=20)
            return st, (json.loads(raw)["error"] if raw else "")

        def refused():
            base = open_fds(s.proc.pid)
            cases = [
                (reg("l", f"/{tag}-link"), "symbolic link"),
                (reg("f", f"/{tag}-fifo"), "not a regular file"),
                (reg("t", "/../../etc/passwd"), "directly under /dev/shm"),
                (reg("t", "/%2e%2e"), "No such file"),
                (reg("n", f"/{tag}-obj\u0000x"), "NUL"),
                (reg("x" * 10000, f"/{tag}-obj"), ""),
                (reg("big", f"/{tag}-obj", 1 << 62, 1 << 62), "beyond the end"),
            ]
            for (st, err), words in cases:
                assert st in (400, 414) and words in err, (st, err, words)
            assert open_fds(s.proc.pid) == base, (open_fds(s.proc.pid), base)
            assert reg("ok", f"/{tag}-obj")[0] == 200
            st, _, raw = http("POST", s.url + "/v2/models/affine/infer", {"inputs": [{
                "name": "X", "datatype": "FP32", "shape": [1, 3], "parameters": {
                    "shared_memory_region": "ok", "shared_memory_offset": 1 << 62,
                    "shared_memory_byte_size": 12}}]})
            assert st == 400 and "beyond region 'ok'" in json.loads(raw)["error"], raw
        T.check("shared memory: a symlink or FIFO in /dev/shm, keys out of it, NUL, 10000-character "
                "names, 2^62-byte windows: 400, no descriptor kept", refused)

        def limit():
            base = open_fds(s.proc.pid)
            n = 1
            while True:
                st, err = reg(f"r{n}", f"/{tag}-obj")
                if st != 200:
                    break
                n += 1
            assert st == 400 and "1024 regions" in err, (n, st, err)
            assert n == 1024, n
            assert open_fds(s.proc.pid) == base + 1023
            st, _, _ = http("POST", u + "/unregister", {})
            assert st == 200
            assert open_fds(s.proc.pid) == base - 1 == 0, (open_fds(s.proc.pid), base)
            print(f"   {n} regions registered, the next refused; all descriptors closed by unregister")
        T.check("registering until the limit (1024): the next 400, unregister closes every descriptor", limit)


def main():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="serve-attack-"))
    atexit.register(shutil.rmtree, tmp, True)
    models = build_models(tmp / "models")
    repo = tmp / "repo"
    add_model(repo, "affine", models["affine"], config="max_batch_size: 8\n")
    add_model(repo, "fused", models["fused"])
    # a folder whose name holds ESC: its "loaded model" line must not carry it raw
    add_model(repo, "esc\x1b[31mname", models["affine"])
    framing_and_names(repo)
    shared_memory(repo, tmp)
    T.check("four JSON bodies at --max-body-size at once: refused, peak RSS within the budget, "
            "memory given back", memory, repo)
    T.check("150 trickling connections: normal requests served, every trickler cut at "
            "--request-timeout", trickle, repo)
    T.check("requests on keep-alive connections just after SIGTERM and in the backlog: each answered "
            "200 or 503",
            drain, repo)
    return T.finish()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    try:
        rc = main()
    except (Exception, Overdue):
        import traceback
        traceback.print_exc()
        T.failed += 1
        rc = T.finish()
    sys.exit(rc)
