#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ipu-compile --precision-compare end to end on a small torch-exported CNN.

Checks that the report names every layer of the model (by ONNX node name),
that its float32 reference agrees with PyTorch, that float16 errors are
small while a deliberately ill-conditioned layer (x + 2048 - 2048, where
float16's step at 2048 is 2) shows a large error and is named as the worst,
that the calibration data's shape and name rules hold, and that the Python
API passes the options through.  Ends with "calib-cli: N passed, N failed".
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", "build")
if not os.path.isabs(BUILD):
    BUILD = os.path.join(ROOT, BUILD)
COMPILE = os.path.join(BUILD, "bin", "ipu-compile")

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok - {what}")
    else:
        failed += 1
        print(f"not ok - {what}")


class Net(torch.nn.Module):
    def __init__(self, shift):
        super().__init__()
        self.shift = shift
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.conv2(x))
        if self.shift:
            # exact in float32, coarse in float16 (step 2 at 2048)
            x = (x + 2048.0) - 2048.0
        x = torch.nn.functional.max_pool2d(x, 2)
        return torch.softmax(self.fc(x.flatten(1)), 1)


def export(work, name, shift):
    torch.manual_seed(3)
    m = Net(shift).eval()
    with torch.no_grad():
        # BatchNorm statistics that are not the identity
        m.bn1.running_mean.uniform_(-0.2, 0.2)
        m.bn1.running_var.uniform_(0.5, 2.0)
    path = os.path.join(work, name)
    torch.onnx.export(m, torch.zeros(1, 3, 8, 8), path, input_names=["image"],
                      output_names=["probs"], opset_version=13)
    return m, path


def run(*args):
    p = subprocess.run([COMPILE, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    work = tempfile.mkdtemp(prefix="calib-cli-")
    model, path = export(work, "net.onnx", False)
    coarse_model, coarse = export(work, "shift.onnx", True)
    rng = np.random.RandomState(11)
    data = rng.randn(5, 1, 3, 8, 8).astype(np.float32)
    npz = os.path.join(work, "calib.npz")
    np.savez_compressed(npz, image=data)
    names = [n.name for n in onnx.load(path).graph.node]

    # float16 on the calibration data
    rep = os.path.join(work, "fp16.json")
    rc, out, err = run("--input-model", path, "--precision", "fp16", "--precision-compare",
                       "--calibration-with-data", npz, "--precision-compare-json", rep,
                       "-o", os.path.join(work, "net.ipuef"))
    check(rc == 0, f"fp16 compile with the report (exit {rc}: {err.strip()[:300]})")
    if rc:
        return
    r = json.load(open(rep))
    layers = {l["name"]: l for l in r["layers"]}
    check(r["samples"] == 5 and r["data"] == "calibration", "the report counts 5 calibration samples")
    # BatchNormalization is folded into the convolution before precision
    # conversion: every other node of the model is a layer of the report
    expect = [n for n in names if not n.startswith("/bn1/")]
    missing = [n for n in expect if n not in layers]
    check(not missing, f"every layer named ({len(expect)} nodes; missing {missing})")
    check(all(n in out for n in expect), "the table on stdout names every layer")
    worst = max(l["rel_err"] for l in r["layers"])
    check(0 < worst < 5e-3, f"fp16 errors are small (worst relative {worst:.3g})")
    check(all(l["dtype"] == "float16" for l in r["layers"]), "every compared tensor is float16")
    check(all(l["snr_db"] is not None and l["snr_db"] > 40 for l in r["layers"]),
          "fp16 SNR above 40 dB everywhere")
    # the float32 reference against PyTorch on the same samples
    with torch.no_grad():
        probs = np.concatenate([model(torch.from_numpy(d)).numpy() for d in data])
    soft = [l for l in r["layers"] if l["op"] == "Softmax"][0]
    check(abs(soft["max_abs_ref"] - float(np.abs(probs).max())) < 1e-5,
          f"reference max |probs| {soft['max_abs_ref']:.6f} matches torch {np.abs(probs).max():.6f}")
    check(soft["elements"] == probs.size, "the output layer compares every element of every sample")

    # fp8 weights (and activations): a coarser setting, larger errors at
    # the same layers; with every layer kept in fp16 the errors are fp16's
    fp16_worst = worst
    for prec in ("fp8_weight", "fp8"):
        rep8 = os.path.join(work, prec + ".json")
        rc, out, err = run("--input-model", path, "--precision", prec, "--calibration-with-data",
                           npz, "--precision-compare-json", rep8, "-v",
                           "-o", os.path.join(work, prec + ".ipuef"))
        check(rc == 0, f"{prec} compile with the report (exit {rc}: {err.strip()[-300:]})")
        if rc:
            continue
        r8 = json.load(open(rep8))
        names8 = {l["name"] for l in r8["layers"]}
        check(all(n in names8 for n in expect), f"{prec}: every layer named")
        w8 = max(l["rel_err"] for l in r8["layers"])
        check(w8 > 5 * fp16_worst, f"{prec}: worst relative error {w8:.3g} > 5 x fp16's {fp16_worst:.3g}")
        conv1 = [l for l in r8["layers"] if l["name"].startswith("/conv1")][0]
        check(conv1["rel_err"] > 5 * layers[conv1["name"]]["rel_err"],
              f"{prec}: the first convolution already shows it ({conv1['rel_err']:.3g})")
        check(("calibration: fp8 input scale" in err) == (prec == "fp8"),
              f"{prec}: the input scale is calibrated only where activations are fp8")
        check(err.count("calibration: layer ") == 3, f"{prec}: the three layers ranked")
        rc, out, err = run("--input-model", path, "--precision", prec, "--calibration-with-data",
                           npz, "--precision-compare-json", rep8, "--num-of-layers-keep-fp16", "3",
                           "-o", os.path.join(work, prec + ".ipuef"))
        rk = json.load(open(rep8)) if rc == 0 else {"layers": []}
        wk = max((l["rel_err"] for l in rk["layers"]), default=1)
        check(rc == 0 and wk < 2 * fp16_worst and wk * 5 < w8,
              f"{prec} with every layer kept in fp16: fp16's errors ({wk:.3g})")
    # --fp8-auto-skip: an exact target keeps every layer (within a budget
    # of the whole fp16 size), a loose one none; the list it prints, given
    # back by hand, builds the same executable
    for prec in ("fp8_weight", "fp8"):
        auto = os.path.join(work, prec + ".auto.ipuef")
        rc, out, err = run("--input-model", path, "--precision", prec, "--calibration-with-data",
                           npz, "--fp8-auto-skip", "0,1", "-o", auto)
        line = [x for x in err.splitlines() if "fp8 auto skip: --fp8-skip-op-names " in x]
        check(rc == 0 and "3 of 3 layers kept in fp16" in err and "target 0 met" in err and line,
              f"{prec} --fp8-auto-skip 0,1: every layer kept ({err.strip()[-300:]})")
        if rc or not line:
            continue
        kept = line[0].split("--fp8-skip-op-names ")[1].strip()
        rc, out, err = run("--input-model", path, "--precision", prec, "--fp8-skip-op-names", kept,
                           "-o", os.path.join(work, prec + ".byhand.ipuef"))
        check(rc == 0 and open(auto, "rb").read() == open(os.path.join(work, prec + ".byhand.ipuef"), "rb").read(),
              f"{prec}: the printed list ({kept}) builds the same executable")
        rc, out, err = run("--input-model", path, "--precision", prec, "--calibration-with-data",
                           npz, "--fp8_auto_skip", "1e6", "-o", auto)
        check(rc == 0 and "0 of 3 layers kept in fp16" in err and "target 1e+06 met" in err,
              f"{prec} --fp8-auto-skip 1e6: nothing kept ({err.strip()[-300:]})")
    rc, out, err = run("--input-model", path, "--precision", "fp8", "--fp8-auto-skip", "0.1",
                       "-o", os.path.join(work, "x.ipuef"))
    check(rc == 1 and "--calibration-with-data" in err, f"--fp8-auto-skip without data refused ({err.strip()[-200:]})")
    rc, out, err = run("--input-model", path, "--precision", "fp8", "--fp8-auto-skip", "0.1,3")
    check(rc == 2 and "BUDGET" in err, "--fp8-auto-skip with a budget above 1 refused")
    rc, out, err = run("--input-model", path, "--precision", "fp8", "--calibration-with-data", npz,
                       "--fp8_params", "F143,F143,-3", "-v", "--export-onnx", os.path.join(work, "x.onnx"))
    check(rc == 0 and "calibration: fp8 input scale" not in err,
          "an input scale given in --fp8_params is kept")

    # the deliberately coarse layer
    rep2 = os.path.join(work, "shift.json")
    rc, out, err = run("--input-model", coarse, "--precision", "fp16", "--calibration-with-data",
                       npz, "--precision-compare-json", rep2, "-o", os.path.join(work, "s.ipuef"))
    check(rc == 0, f"fp16 compile of the ill-conditioned model (exit {rc}: {err.strip()[:300]})")
    if rc:
        return
    r2 = json.load(open(rep2))
    by = {l["name"]: l for l in r2["layers"]}
    sub = [l for l in r2["layers"] if l["op"] == "Sub"]
    check(len(sub) == 1, "the Sub layer is reported")
    if sub:
        s = sub[0]
        check(s["rel_err"] > 50 * worst,
              f"x + 2048 - 2048 in fp16: relative error {s['rel_err']:.3g} against {worst:.3g}")
        check(max(r2["layers"], key=lambda l: l["rel_err"] if l["op"] != "Add" else 0)["name"] == s["name"],
              "the report names it the worst layer")
        check(by[[n for n in by if n.startswith("/conv2")][0]]["rel_err"] < 5e-3,
              "the layers before it stay accurate")
    # the same model compiled in float32: the report shows no error at all
    rc, out, err = run("--input-model", coarse, "--calibration-with-data", npz,
                       "--precision-compare-json", rep2, "-o", os.path.join(work, "s.ipuef"))
    r3 = json.load(open(rep2)) if rc == 0 else {"layers": []}
    check(rc == 0 and r3["layers"] and all(l["max_abs_err"] == 0 and l["snr_db"] is None
                                           for l in r3["layers"]),
          "in float32 every layer is exact (snr null)")

    # without data: one seeded random sample, the same report twice
    rc, out1, err = run("--input-model", path, "--precision", "fp16", "--precision-compare",
                        "--export-onnx", os.path.join(work, "x.onnx"))
    rc2, out2, _ = run("--input-model", path, "--precision", "fp16", "--precision_compare",
                       "--export-onnx", os.path.join(work, "x.onnx"))
    check(rc == 0 and rc2 == 0 and "1 random (seeded) sample" in out1 and out1 == out2,
          "without data: one seeded random sample, identical reports")

    # data errors: a misspelt name, a wrong shape, not a zip, a wrong loss
    bad = os.path.join(work, "bad.npz")
    np.savez(bad, img=data)
    rc, _, err = run("--input-model", path, "--calibration-with-data", bad, "--precision-compare",
                     "--export-onnx", os.path.join(work, "x.onnx"))
    check(rc == 1 and "array 'img' is not an input of the model" in err, f"misspelt array name refused: {err.strip()[:200]}")
    np.savez(bad, image=data[:, :, :, :4])
    rc, _, err = run("--input-model", path, "--calibration-with-data", bad, "--precision-compare",
                     "--export-onnx", os.path.join(work, "x.onnx"))
    check(rc == 1 and "has shape [5, 1, 3, 4, 8]" in err, f"wrong shape refused: {err.strip()[:200]}")
    with open(bad, "wb") as f:
        f.write(b"PK\x03\x04 this is not really a zip" * 4)
    rc, _, err = run("--input-model", path, "--calibration-with-data", bad, "--precision-compare",
                     "--export-onnx", os.path.join(work, "x.onnx"))
    check(rc == 1 and "not a readable .npz" in err, f"damaged archive refused: {err.strip()[:200]}")
    rc, _, err = run("--input-model", path, "--calibration-loss-type", "l3")
    check(rc == 2 and "mse, mae, snr, kld or cos_dist" in err, "unknown loss refused")
    # the report never overwrites an input
    rc, _, err = run("--input-model", path, "--precision-compare-json", path, "--export-onnx",
                     os.path.join(work, "x.onnx"))
    check(rc == 1 and os.path.getsize(path) > 1000, "the JSON report may not overwrite the model")

    # YAML keys
    cfg = os.path.join(work, "c.yaml")
    with open(cfg, "w") as f:
        f.write(f"input_model: net.onnx\nprecision: fp16\ncalibration_with_data: calib.npz\n"
                f"calibration_loss_type: mse\nprecision_compare_json: y.json\n"
                f"export_onnx: {os.path.join(work, 'o.onnx')}\n")
    rc, out, err = run("--config-yaml", cfg)
    check(rc == 0 and json.load(open(os.path.join(work, "y.json")))["samples"] == 5,
          f"YAML keys (exit {rc} {err.strip()[:200]})")

    # Python API
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
    code = ("import ipu.compiler, json, sys\n"
            f"r = ipu.compiler.compile({path!r}, precision='fp16', calibration_with_data={npz!r},\n"
            "    calibration_loss_type='mae', precision_compare=True)\n"
            f"a = ipu.compiler.compile({path!r}, precision='fp8_weight', calibration_with_data={npz!r},\n"
            "    fp8_auto_skip=1e6)\n"
            "print('/conv2/Conv' in r.messages and '5 calibration samples' in r.messages and\n"
            "      '0 of 3 layers kept in fp16' in a.messages)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    check(p.returncode == 0 and p.stdout.strip() == "True",
          f"ipu.compiler.compile(precision_compare=True, fp8_auto_skip=1e6) ({p.stderr.strip()[-300:]})")


if __name__ == "__main__":
    main()
    print(f"calib-cli: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
