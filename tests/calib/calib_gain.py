#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""calib_gain.py - what calibration buys: zoo networks (tests/models/zoo.py,
random weights, BatchNorm statistics calibrated) compiled in fp16 and in the
fp8 precisions without data, with --num-of-layers-keep-fp16 N alone (the
pass's own ranking), with --calibration-with-data and with both, run on the in-process device on held-out
inputs (not the calibration samples) and compared with PyTorch in float32:
max |ipu - torch| / max |torch| over the inputs, and how many inputs keep
torch's top-5 classes (as a set).

Not a test (it asserts nothing): the figures for the documentation.

Usage: calib_gain.py --bin DIR --work DIR [--models resnet18,mobilenet_v2]
                     [--samples 8] [--inputs 4] [--keep 3] [--loss kld]
                     [--precisions fp16,fp8_weight,fp8]
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import zoo  # noqa: E402


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--models", default="resnet18,mobilenet_v2")
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--inputs", type=int, default=4)
    ap.add_argument("--keep", type=int, default=3)
    ap.add_argument("--loss", default="kld")
    ap.add_argument("--precisions", default="fp16,fp8_weight,fp8")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    table = {n: (c, s) for n, c, s in zoo.QUICK}
    print("| model | precision | calibration | max rel err | top-5 kept | executable bytes |")
    print("|---|---|---|---|---|---|")
    for name in a.models.split(","):
        ctor, shape = table[name]
        path, _, _, _ = zoo.build(name, ctor, shape, a.work, 0)
        torch.manual_seed(0)
        m = ctor()
        zoo.calibrate(m, shape, 0)
        m.eval()
        g = torch.Generator().manual_seed(1000)
        calib = torch.randn((a.samples,) + tuple(shape), generator=g).numpy()
        npz = os.path.join(a.work, name + ".calib.npz")
        np.savez(npz, x=calib)
        tests = torch.randn((a.inputs,) + tuple(shape), generator=g).numpy()
        with torch.no_grad():
            refs = [m(torch.from_numpy(t)).numpy().astype(np.float64) for t in tests]
        for prec in a.precisions.split(","):
            configs = [("none", [])]
            if prec.startswith("fp8"):
                configs += [("keep %d fp16, no data" % a.keep,
                             ["--num-of-layers-keep-fp16", str(a.keep)]),
                            ("data", ["--calibration-with-data", npz,
                                      "--calibration-loss-type", a.loss]),
                            ("data + keep %d fp16" % a.keep,
                             ["--calibration-with-data", npz, "--calibration-loss-type", a.loss,
                              "--num-of-layers-keep-fp16", str(a.keep)])]
            for label, extra in configs:
                exe = os.path.join(a.work, "%s.%s.ipuef" % (name, prec))
                rc, log = run([os.path.join(a.bin, "ipu-compile"), path, "--precision", prec,
                               "-o", exe] + extra)
                if rc:
                    print("| %s | %s | %s | refused: %s | | |" % (name, prec, label,
                                                               log.strip().splitlines()[-1][:120]))
                    continue
                errs, kept = [], 0
                for i, (t, ref) in enumerate(zip(tests, refs)):
                    x = os.path.join(a.work, "%s.t%d.npy" % (name, i))
                    y = os.path.join(a.work, "%s.y.npy" % name)
                    np.save(x, t.astype(np.float16) if prec != "fp32" else t)
                    rc, log = run([os.path.join(a.bin, "ipu-run"), exe, "--input", "x=" + x,
                                   "--output", "y=" + y, "--iterations", "0"])
                    if rc:
                        errs.append(float("nan"))
                        continue
                    got = np.load(y).astype(np.float64)
                    errs.append(float(np.abs(got - ref).max() / np.abs(ref).max()))
                    kept += set(np.argsort(-got[0])[:5]) == set(np.argsort(-ref[0])[:5])
                print("| %s | %s | %s | %.3g | %d/%d | %d |" % (name, prec, label, max(errs), kept,
                                                            len(tests), os.path.getsize(exe)))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
