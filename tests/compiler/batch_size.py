#!/usr/bin/python3
"""ipu-compile --batch-size on models torch.onnx.export wrote at a static
batch 1 (no dynamic_axes), against PyTorch run on the same samples.

* a CNN (Conv, Relu, Flatten, Linear) at batch 1 and --batch-size 4: the
  executable, its anchors and the metadata say 4, and ipu-run's outputs
  for 4 samples equal PyTorch's;
* the same model without --batch-size stays at batch 1;
* a model that fixes its batch inside (x.view(1, -1)) is refused with
  --batch-size 4, naming the output and its shape, and writes nothing;
* an input fixed at batch 2 is refused, naming the input and its shape;
* an --input-shape that gives another batch than --batch-size is refused.

usage: batch_size.py BIN_DIR  (prints "N passed, N failed" last)"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

BIN = sys.argv[1] if len(sys.argv) > 1 else "build/bin"
TARGET = ["--target", "tiles=16,tile-mem=256KiB"]
passed = failed = 0


def result(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok - " + what)
    else:
        failed += 1
        print("not ok - " + what + (": " + detail if detail else ""))


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=600)


def compile_(model, out, *extra):
    return run(os.path.join(BIN, "ipu-compile"), "--input-model", model, "-o", out, *TARGET, *extra)


def dump(path):
    p = run(os.path.join(BIN, "ipuef-dump"), "--json", path)
    return json.loads(p.stdout) if p.returncode == 0 else None


def main():
    try:
        import torch
    except ImportError as ex:
        print("not ok - python3-torch: %s (deps/models.txt, make deps)" % ex)
        print("0 passed, 1 failed")
        return 1
    torch.manual_seed(3)

    class Cnn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.fc = torch.nn.Linear(8 * 8 * 8, 10)

        def forward(self, x):
            return self.fc(torch.flatten(torch.relu(self.conv(x)), 1))

    class Fixed(Cnn):
        def forward(self, x):  # the traced batch 1 is written into the Reshape
            return self.fc(torch.relu(self.conv(x)).view(1, -1)[:, :512])

    work = tempfile.mkdtemp(prefix="batch-size-")
    cnn, fixed, two = (os.path.join(work, n) for n in ("cnn.onnx", "fixed.onnx", "two.onnx"))
    m = Cnn().eval()
    with torch.no_grad():
        torch.onnx.export(m, torch.randn(1, 3, 8, 8), cnn, input_names=["x"], output_names=["y"], opset_version=13)
        torch.onnx.export(Fixed().eval(), torch.randn(1, 3, 8, 8), fixed, input_names=["x"], output_names=["y"],
                          opset_version=13)
        torch.onnx.export(m, torch.randn(2, 3, 8, 8), two, input_names=["x"], output_names=["y"], opset_version=13)

    import onnx
    dims = [d.dim_value for d in onnx.load(cnn).graph.input[0].type.tensor_type.shape.dim]
    result(dims == [1, 3, 8, 8], "torch exported the CNN at a static batch 1", str(dims))

    x4 = np.random.default_rng(7).standard_normal((4, 3, 8, 8)).astype(np.float32)
    np.save(os.path.join(work, "x4.npy"), x4)
    np.save(os.path.join(work, "x1.npy"), x4[:1])
    with torch.no_grad():
        ref = m(torch.from_numpy(x4)).numpy()

    for batch, extra in ((4, ["--batch-size", "4"]), (4, ["--batch_size=4"]), (1, [])):
        exe = os.path.join(work, "cnn%d.ipuef" % batch)
        what = "--batch-size %d%s" % (batch, " (PopRT spelling)" if "--batch_size=4" in extra else "") if extra else "no --batch-size"
        c = compile_(cnn, exe, *extra)
        d = dump(exe) if c.returncode == 0 else None
        if not d:
            result(False, what + ": compiled", c.stderr[-800:])
            continue
        md = d["metadata"]
        shapes = {a["name"]: a["shape"] for a in md["anchors"]}
        result(md["batch_size"] == batch and shapes == {"x": [batch, 3, 8, 8], "y": [batch, 10]},
               "%s: metadata batch %d and anchors x %s, y %s" % (what, md["batch_size"], shapes.get("x"), shapes.get("y")),
               json.dumps(md))
        out = os.path.join(work, "y%d.npy" % batch)
        r = run(os.path.join(BIN, "ipu-run"), exe, "--input", "x=" + os.path.join(work, "x%d.npy" % batch),
                "--output", "y=" + out, "--iterations", "0")
        if r.returncode != 0:
            result(False, what + ": ipu-run", r.stderr[-800:])
            continue
        y = np.load(out)
        err = float(np.max(np.abs(y - ref[:batch]))) if y.shape == ref[:batch].shape else float("inf")
        result(err <= 1e-4 * max(1.0, float(np.max(np.abs(ref)))),
               "%s: ipu-run on %d samples = PyTorch (max |d| %.2g)" % (what, batch, err), "shape %s" % (y.shape,))

    exe = os.path.join(work, "fixed.ipuef")
    c = compile_(fixed, exe, "--batch-size", "4")
    result(c.returncode == 1 and "output 'y' comes out as [1, 10]" in c.stderr and not os.path.exists(exe),
           "a batch fixed inside the model is refused (%s)" % c.stderr.strip()[:150], "rc %d: %s" % (c.returncode, c.stderr))
    c = compile_(two, os.path.join(work, "two.ipuef"), "--batch-size", "4")
    result(c.returncode == 1 and "input 'x' has the static shape [2, 3, 8, 8]" in c.stderr,
           "an input fixed at batch 2 is refused, named with its shape", "rc %d: %s" % (c.returncode, c.stderr))
    c = compile_(cnn, os.path.join(work, "both.ipuef"), "--batch-size", "4", "--input-shape", "x=2,3,8,8")
    result(c.returncode == 1 and "--input-shape x gives dimension 0 as 2" in c.stderr,
           "--input-shape with another batch than --batch-size is refused", "rc %d: %s" % (c.returncode, c.stderr))
    c = compile_(cnn, os.path.join(work, "same.ipuef"), "--batch-size", "4", "--input-shape", "x=4,3,8,8")
    d = dump(os.path.join(work, "same.ipuef")) if c.returncode == 0 else None
    result(d is not None and d["metadata"]["batch_size"] == 4, "--input-shape and --batch-size that agree", c.stderr[-400:])

    print("%d passed, %d failed" % (passed, failed))
    subprocess.run(["rm", "-rf", work])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
