#!/usr/bin/python3
"""run_hostile.py - the tools against hostile input.

Each case runs one command and asserts its exit code, that its message names
the cause, that it finished within a deadline, and that no file other than
its intended output changed (checksums of the whole work folder before and
after, and no temporary file left behind).  Then a seeded run of generated
bad inputs (truncated, bit-flipped, overwritten and random files) goes
through ipuef-dump, ipu-run and ipu-compile with the same assertions.

  run_hostile.py --bin build/bin --tests build/tests [--generated N] [--seed S]

Ends with "N passed, N failed" (the generated run counts as one test).
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ap = argparse.ArgumentParser()
ap.add_argument("--bin", required=True)
ap.add_argument("--tests", required=True)
ap.add_argument("--generated", type=int, default=20000)
ap.add_argument("--seed", type=int, default=20261124)
args = ap.parse_args()
BIN = os.path.abspath(args.bin)
TESTS = os.path.abspath(args.tests)

passed = failed = 0
work = tempfile.mkdtemp(prefix="ipu-hostile.")
outside = tempfile.mkdtemp(prefix="ipu-hostile-outside.")


def tool(name):
    return os.path.join(BIN, name)


def snapshot(root):
    """name -> sha256 of every file under root (symlinks and FIFOs by kind)."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p):
                out[p] = "link:" + os.readlink(p)
            elif not os.path.isfile(p):
                out[p] = "special"
            else:
                with open(p, "rb") as fh:
                    out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


def report(ok, name, why=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok - {name}")
    else:
        failed += 1
        print(f"not ok - {name}: {why}")
    sys.stdout.flush()


def run(argv, deadline=20.0, stdin=None):
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                           capture_output=True, timeout=deadline)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired as e:
        return None, e.stdout or b"", e.stderr or b"", time.monotonic() - t0


def case(name, argv, rc, needles=(), deadline=20.0, outputs=(), stdin=None, check=None):
    """Runs argv; asserts exit code rc, every needle in stderr+stdout, the
    deadline, and that nothing but `outputs` changed under work/ and outside/."""
    before = {**snapshot(work), **snapshot(outside)}
    got, out, err, secs = run(argv, deadline, stdin)
    after = {**snapshot(work), **snapshot(outside)}
    text = (out + err).decode("utf-8", "replace")
    outs = {os.path.abspath(o) for o in outputs}
    changed = sorted(p for p in set(before) | set(after)
                     if before.get(p) != after.get(p) and os.path.abspath(p) not in outs)
    if got is None:
        return report(False, name, f"no answer after {deadline} s (hang)")
    if got != rc:
        return report(False, name, f"exit {got}, expected {rc}: {text.strip()[:300]}")
    for n in needles:
        if n not in text:
            return report(False, name, f"message lacks '{n}': {text.strip()[:300]}")
    if changed:
        return report(False, name, f"changed files it must not touch: {changed[:5]}")
    if check:
        why = check(out, err)
        if why:
            return report(False, name, why)
    report(True, name)


# ---------------------------------------------------------------- inputs
def sh(*argv):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


models = os.path.join(work, "models")
os.mkdir(models)
sh(os.path.join(TESTS, "modelrunner", "gen_models"), models)
affine = os.path.join(models, "affine.ipuef")
gen = os.path.join(TESTS, "hostile", "make_hostile")
for mode in ("swap", "huge", "orphan"):
    sh(gen, mode, affine, os.path.join(models, f"{mode}.ipuef"))
x_npy = os.path.join(work, "x.npy")
np.save(x_npy, np.arange(12, dtype=np.float32).reshape(4, 3))

X = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 4])
Y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4])


def save(graph, path, opset=13):
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)


add_onnx = os.path.join(work, "add.onnx")
W = numpy_helper.from_array(np.ones((1, 4), np.float32), "W")
save(helper.make_graph([helper.make_node("Add", ["X", "W"], ["Y"])], "g", [X], [Y], [W]), add_onnx)

# external data: a tensor whose location is a symlink out of the folder, a
# FIFO, an absolute path, a '..' path
secret = os.path.join(outside, "secret.bin")
with open(secret, "wb") as f:
    f.write(np.full((1, 4), 7, np.float32).tobytes())
ext = {}
for kind in ("symlink", "fifo", "absolute", "dotdot", "inside"):
    d = os.path.join(work, "ext-" + kind)
    os.mkdir(d)
    loc = {"symlink": "w.bin", "fifo": "w.bin", "absolute": secret,
           "dotdot": "../../" + os.path.basename(outside) + "/secret.bin", "inside": "w.bin"}[kind]
    if kind == "symlink":
        os.symlink(secret, os.path.join(d, "w.bin"))
    elif kind == "fifo":
        os.mkfifo(os.path.join(d, "w.bin"))
    elif kind == "inside":
        shutil.copy(secret, os.path.join(d, "w.bin"))
    t = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[1, 4])
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value=loc)
    p = os.path.join(d, "model.onnx")
    save(helper.make_graph([helper.make_node("Add", ["X", "W"], ["Y"])], "g", [X], [Y], [t]), p)
    ext[kind] = p

bad_attr = os.path.join(work, "bad_attr.onnx")
P = helper.make_tensor_value_info("P", TensorProto.FLOAT, [1, 1, 4, 4])
Q = helper.make_tensor_value_info("Q", TensorProto.FLOAT, [1, 1, 2, 2])
save(helper.make_graph([helper.make_node("MaxPool", ["P"], ["Q"], name="pool1", kernel_shape=[2, 2],
                                         strides=[2.0, 2.0])], "g", [P], [Q]), bad_attr)
bad_decl = os.path.join(work, "bad_decl.onnx")
save(helper.make_graph([helper.make_node("Add", ["X", "W"], ["Y"])], "g", [X],
                       [helper.make_tensor_value_info("Y", TensorProto.INT32, [1, 4])], [W]), bad_decl)
bad_shape = os.path.join(work, "bad_shape.onnx")
save(helper.make_graph([helper.make_node("Add", ["X", "W"], ["Y"])], "g", [X],
                       [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 5])], [W]), bad_shape)

# names that try to break JSON (the .ipuef format refuses control
# characters in names; ONNX does not, and messages quote its node names)
evil = 'in"\\q\u00e9\u2028'
evil_onnx = os.path.join(work, "evil.onnx")
EX = helper.make_tensor_value_info(evil, TensorProto.FLOAT, [1, 4])
save(helper.make_graph([helper.make_node("Relu", [evil], ["out\\"])], "g", [EX],
                       [helper.make_tensor_value_info("out\\", TensorProto.FLOAT, [1, 4])]), evil_onnx)
evil_ipuef = os.path.join(models, "evil.ipuef")
sh(tool("ipu-compile"), "--input-model", evil_onnx, "--target", "tiles=4,tile-mem=64KiB", "-o", evil_ipuef)
esc_onnx = os.path.join(work, "esc.onnx")
save(helper.make_graph([helper.make_node("MaxPool", ["P"], ["Q"], name="p\x1b]0;owned\x07\x1b[2J",
                                         kernel_shape=[2, 2], strides=[2.0, 2.0])], "g", [P], [Q]), esc_onnx)

# a model large enough that writing it takes a while (kill tests)
big_onnx = os.path.join(work, "big.onnx")
BW = numpy_helper.from_array(np.random.default_rng(1).standard_normal((2048, 2048)).astype(np.float32), "BW")
save(helper.make_graph([helper.make_node("MatMul", ["A", "BW"], ["B"])], "g",
                       [helper.make_tensor_value_info("A", TensorProto.FLOAT, [1, 2048])],
                       [helper.make_tensor_value_info("B", TensorProto.FLOAT, [1, 2048])], [BW]), big_onnx)

out_ipuef = os.path.join(work, "out.ipuef")

# ---------------------------------------------------------------- cases
# hangs
case("anchors on each other's streams: refused at load, both named",
     [tool("ipu-run"), os.path.join(models, "swap.ipuef"), "--iterations", "1"], 1,
     ["anchor 'X'", "stream"], deadline=15)
case("a stream no anchor feeds: refused at load, not a wait forever",
     [tool("ipu-run"), os.path.join(models, "orphan.ipuef"), "--iterations", "1"], 1,
     ["stream", "no anchor"], deadline=15)
case("anchor larger than its stream: refused before allocating it",
     [tool("ipu-run"), os.path.join(models, "huge.ipuef"), "--iterations", "1"], 1,
     ["anchor 'X'", "does not match stream"], deadline=15)
case("--timeout-ms bounds a whole run", [tool("ipu-run"), affine, "--timeout-ms", "60000",
                                         "--iterations", "2"], 0, ["latency"], deadline=60)

# lost data
case("ipu-compile -o the input model", [tool("ipu-compile"), "--input-model", add_onnx, "-o", add_onnx],
     1, ["is the input"])
case("ipu-compile -o a character device", [tool("ipu-compile"), "--input-model", add_onnx,
                                           "-o", "/dev/null"], 1, ["not a regular file"],
     check=lambda o, e: None if os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
     else "/dev/null was replaced")
case("ipu-compile -o into a missing folder: refused before the work",
     [tool("ipu-compile"), "--input-model", big_onnx, "-o", os.path.join(work, "nope", "m.ipuef")], 1,
     ["cannot write", "nope"], deadline=5)
case("ipu-compile --export-onnx over the input", [tool("ipu-compile"), "--input-model", add_onnx,
                                                  "--export-onnx", add_onnx, "-o", out_ipuef], 1,
     ["is the input"])
case("ipu-compile -o a directory", [tool("ipu-compile"), "--input-model", add_onnx, "-o", models], 1,
     ["not a regular file"])
case("ipu-run --output over a directory", [tool("ipu-run"), affine, "--iterations", "0",
                                           "--output", "Y=" + models], 1, ["not a regular file"])
case("ipu-run --output over its own input .npy", [tool("ipu-run"), affine, "--iterations", "0",
                                                  "--input", "X=" + x_npy, "--output", "Y=" + x_npy],
     1, ["is the input"])


def kill_mid_write(delay):
    for f in os.listdir(work):
        if f.startswith("killed.ipuef"):
            os.unlink(os.path.join(work, f))
    dst = os.path.join(work, "killed.ipuef")
    p = subprocess.Popen([tool("ipu-compile"), "--input-model", big_onnx, "-o", dst],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(20)
    except subprocess.TimeoutExpired:
        p.kill()
        return "did not stop within 20 s of SIGTERM"
    left = [f for f in os.listdir(work) if ".tmp." in f]
    if left:
        return f"temporary files left: {left}"
    if os.path.exists(dst):
        r, _, e, _ = run([tool("ipuef-dump"), dst])
        if r != 0:
            return f"half-written {dst}: {e.decode()[:200]}"
    return None


for delay in (0.05, 0.2, 0.4, 0.6, 0.8, 1.0, 1.5, 2.0):
    why = kill_mid_write(delay)
    report(why is None, f"SIGTERM {delay} s into ipu-compile: no temporary file, no half file", why or "")
for f in os.listdir(work):
    if f.startswith("killed.ipuef"):
        os.unlink(os.path.join(work, f))

# reading outside the model
case("external data through a symlink out of the folder", [tool("ipu-compile"), "--input-model",
                                                           ext["symlink"], "-o", out_ipuef], 1,
     ["outside the model's folder"])
case("external data that is a FIFO: refused, not blocked", [tool("ipu-compile"), "--input-model",
                                                            ext["fifo"], "-o", out_ipuef], 1,
     ["not a regular file"], deadline=10)
case("external data at an absolute path", [tool("ipu-compile"), "--input-model", ext["absolute"],
                                           "-o", out_ipuef], 1, ["relative path inside"])
case("external data with ..", [tool("ipu-compile"), "--input-model", ext["dotdot"], "-o", out_ipuef], 1,
     ["relative path inside"])
case("external data inside the folder still works", [tool("ipu-compile"), "--input-model", ext["inside"],
                                                     "-o", out_ipuef], 0, [], outputs=[out_ipuef])

# unbounded work before a check
case("ipu-run /dev/zero is refused at once", [tool("ipu-run"), "/dev/zero"], 1, ["not an .ipuef"],
     deadline=5)
case("ipuef-dump /dev/zero is refused at once", [tool("ipuef-dump"), "/dev/zero"], 1, ["not an .ipuef"],
     deadline=5)
case("ipuef-dump /dev/urandom", [tool("ipuef-dump"), "/dev/urandom"], 1, ["not an .ipuef"], deadline=5)
fifo = os.path.join(work, "fifo.onnx")
os.mkfifo(fifo)
case("ipu-compile of a FIFO: refused, not blocked", [tool("ipu-compile"), "--input-model", fifo,
                                                     "-o", out_ipuef], 1, ["not a regular file"], deadline=10)
case("ipu-compile of /dev/zero", [tool("ipu-compile"), "--input-model", "/dev/zero", "-o", out_ipuef], 1,
     ["not a regular file"], deadline=5)
case("ipu-compile --config-yaml of a FIFO", [tool("ipu-compile"), "--config-yaml", fifo], 2,
     ["not a regular file"], deadline=10)
case("an .npy input that is a device", [tool("ipu-run"), affine, "--input", "X=/dev/zero"], 1,
     ["not a regular file"], deadline=5)
case("an .npy input that is not an .npy", [tool("ipu-run"), affine, "--input", "X=" + add_onnx], 1,
     ["not a .npy file"])

# silently accepted nonsense
case("an attribute of the wrong type", [tool("ipu-compile"), "--input-model", bad_attr, "-o", out_ipuef], 1,
     ["pool1", "strides", "INTS"])
case("a declared output type the model does not compute",
     [tool("ipu-compile"), "--input-model", bad_decl, "-o", out_ipuef], 1, ["'Y'", "declared int32"])
case("a declared output shape the model does not compute",
     [tool("ipu-compile"), "--input-model", bad_shape, "-o", out_ipuef], 1, ["'Y'", "dimension 1"])
for opt, val, rng in (("--inflight", "-1", "1 to 4096"), ("--inflight", "0", "1 to 4096"),
                      ("--iterations", "12abc", "0 to"), ("--timeout-ms", "1e3", "0 to"),
                      ("--batch-size", "99999999999", "1 to"), ("--seed", "-5", "0 to"),
                      ("--subgraph", "", "0 to")):
    case(f"ipu-run {opt} '{val}': usage error naming the option and its range",
         [tool("ipu-run"), affine, opt, val], 2, [opt + ":", rng])
case("ipu-compile --batch-size 0", [tool("ipu-compile"), "--input-model", add_onnx, "--batch-size", "0"], 2,
     ["--batch-size", "1 to"])
case("a model device's settings are not split into two devices",
     [tool("ipu-run"), affine, "--device", "model:tiles=16,tile_mem=64KiB", "--iterations", "1"], 0,
     ["latency"])
case("a device size that is not a size", [tool("ipu-run"), affine, "--device", "model:tile_mem=64KB"], 1,
     ["tile_mem", "not a number"])
case("a PopRT flag ipu-compile lacks", [tool("ipu-compile"), "--input_model", add_onnx, "--quantize", "1"],
     2, ["--quantize is not supported"])
case("an unknown option", [tool("ipu-run"), affine, "--frobnicate"], 2, ["unknown option"])


# output that cannot be hijacked
def json_names(o, e):
    try:
        j = json.loads(o.decode("utf-8"))
    except ValueError as ex:
        return f"invalid JSON: {ex}: {o[:200]!r}"
    names = {t["name"] for t in j["inputs"] + j["outputs"]}
    if evil not in names:
        return f"names did not survive: {names}"
    return None


case("--json with quotes, backslashes and escapes in names",
     [tool("ipu-run"), evil_ipuef, "--json", "--iterations", "1"], 0, [], check=json_names)
case("ipuef-dump --json with the same names", [tool("ipuef-dump"), "--json", evil_ipuef], 0, [],
     check=lambda o, e: None if evil in [a["name"] for a in json.loads(o.decode())["metadata"]["anchors"]]
     else "names lost")
case("ipu-compile: no terminal escape from a node's name reaches the screen",
     [tool("ipu-compile"), "--input-model", esc_onnx, "-o", out_ipuef], 1, ["\\x1b", "strides"],
     check=lambda o, e: "raw ESC or BEL printed" if b"\x1b" in o + e or b"\x07" in o + e else None)
case("ipu-run: a name with a quote and a backslash prints as it is",
     [tool("ipu-run"), evil_ipuef, "--iterations", "1"], 0, [evil])
with open(affine, "rb") as fh:
    case("ipu-run reads the model from a pipe ('-')", [tool("ipu-run"), "-", "--iterations", "1"], 0,
         ["latency"], stdin=fh)
with open(affine, "rb") as fh:
    case("ipu-run /dev/stdin", [tool("ipu-run"), "/dev/stdin", "--iterations", "1"], 0, ["latency"],
         stdin=fh)
for t in ("ipu-run", "ipuef-dump", "ipu-compile", "ipu-info", "ipu-reset", "ipu-monitor"):
    case(f"{t} --help", [tool(t), "--help"], 0, ["Exit status"])
    case(f"{t} --version", [tool(t), "--version"], 0, ["ipu-stack"])


def json_names(out, err):
    """ipu-info --json: valid JSON whose first entry names the device as given."""
    try:
        arr = json.loads(out)
    except ValueError as e:
        return f"invalid JSON ({e}): {out[:200]!r}"
    return None if arr and arr[0].get("name") == 'x"y\\z' and "error" in arr[0] else \
        f"unexpected entries: {arr!r}"[:300]


case("ipu-info --json with a quote and a backslash in a device name: valid JSON",
     [tool("ipu-info"), "--json", 'x"y\\z'], 1, [], check=json_names)
case("ipu-info: an over-long device name is a usage error", [tool("ipu-info"), "x" * 64], 2,
     ["not a device name"])
case("ipu-monitor --top with --count is a usage error", [tool("ipu-monitor"), "--top", "--count", "1"],
     2, ["without --top"])
case("ipu-monitor --top --interval 0 is out of range", [tool("ipu-monitor"), "--top", "--interval", "0"],
     2, ["interval"])


# ---------------------------------------------------------------- generated
def mutate(rng, data):
    data = bytearray(data)
    k = rng.randrange(6)
    if k == 0 and data:                       # truncate
        return bytes(data[:rng.randrange(len(data))])
    if k == 1 and data:                       # flip bits
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        return bytes(data)
    if k == 2 and data:                       # overwrite a range
        i = rng.randrange(len(data))
        n = rng.randint(1, 64)
        data[i:i + n] = bytes(rng.randrange(256) for _ in range(min(n, len(data) - i)))
        return bytes(data)
    if k == 3:                                # insert bytes
        i = rng.randrange(len(data) + 1)
        return bytes(data[:i] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 32))) + data[i:])
    if k == 4:                                # random junk
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))
    return bytes(data[:rng.randrange(64)] if data else b"")   # header only, or empty


def generated(n, seed):
    rng = random.Random(seed)
    gdir = os.path.join(work, "gen")
    os.mkdir(gdir)
    with open(affine, "rb") as f:
        ipuef = f.read()
    with open(os.path.join(models, "fused.ipuef"), "rb") as f:
        fused = f.read()
    with open(add_onnx, "rb") as f:
        onnx_b = f.read()
    with open(bad_attr, "rb") as f:
        onnx_b2 = f.read()
    with open(x_npy, "rb") as f:
        npy = f.read()
    guard = snapshot(work)
    stats = {"cases": 0, "exit0": 0, "exit1": 0, "crashes": 0, "hangs": 0, "bad_exit": 0}
    bad = []
    procs = []
    kinds = ("dump", "run", "npy", "compile")

    def finish(p, what, start):
        try:
            rc = p.wait(max(0.1, 20 - (time.monotonic() - start)))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            stats["hangs"] += 1
            bad.append(f"hang: {what}")
            return
        stats["cases"] += 1
        if rc < 0:
            stats["crashes"] += 1
            bad.append(f"signal {-rc}: {what}")
        elif rc in (0, 1):
            stats[f"exit{rc}"] += 1
        else:
            stats["bad_exit"] += 1
            bad.append(f"exit {rc}: {what}")

    for i in range(n):
        kind = kinds[i % 4]
        path = os.path.join(gdir, f"c{i % 64}")
        if kind in ("dump", "run"):
            data = mutate(rng, ipuef if rng.random() < 0.7 else fused)
            path += ".ipuef"
            argv = [tool("ipuef-dump"), path] if kind == "dump" else \
                [tool("ipu-run"), path, "--iterations", "0"]
        elif kind == "npy":
            data = mutate(rng, npy)
            path += ".npy"
            argv = [tool("ipu-run"), affine, "--iterations", "0", "--input", "X=" + path]
        else:
            data = mutate(rng, onnx_b if rng.random() < 0.7 else onnx_b2)
            path += ".onnx"
            argv = [tool("ipu-compile"), "--input-model", path, "-o", os.path.join(gdir, "out.ipuef"),
                    "--target", "tiles=4,tile-mem=64KiB"]
        while len(procs) >= 2 or any(p[2] == path for p in procs):
            p, what, _, start = procs.pop(0)
            finish(p, what, start)
        with open(path, "wb") as f:
            f.write(data)
        procs.append((subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL), " ".join(argv), path, time.monotonic()))
    for p, what, _, start in procs:
        finish(p, what, start)
    # nothing outside gen/ changed, no temporary files anywhere
    after = snapshot(work)
    changed = [p for p in guard if not p.startswith(gdir + os.sep) and guard[p] != after.get(p)]
    left = [p for p in after if ".tmp." in os.path.basename(p)]
    extra = [p for p in after if p not in guard and not p.startswith(gdir + os.sep)]
    outs = [p for p in after if p.startswith(gdir + os.sep) and not os.path.basename(p).startswith(("c", "out.ipuef"))]
    print(f"# generated: {stats['cases']} bad inputs (seed {seed}): {stats['exit1']} refused (exit 1), "
          f"{stats['exit0']} accepted (exit 0), {stats['crashes']} crashes, {stats['hangs']} hangs, "
          f"{stats['bad_exit']} other exits; {len(changed)} files changed, {len(left)} temporary files left, "
          f"{len(extra) + len(outs)} unexpected files")
    for b in bad[:10]:
        print("#   " + b)
    why = None
    if bad or changed or left or extra or outs or stats["cases"] != n:
        why = f"{len(bad)} bad runs, changed {changed[:3]}, left {left[:3]}, unexpected {(extra + outs)[:3]}"
    report(why is None, f"{n} generated bad inputs across ipuef-dump, ipu-run and ipu-compile", why or "")


if args.generated:
    generated(args.generated, args.seed)

shutil.rmtree(work, ignore_errors=True)
shutil.rmtree(outside, ignore_errors=True)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
