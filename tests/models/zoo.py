#!/usr/bin/python3
"""zoo.py - real architectures from Debian's python3-torch and
python3-torchvision (random weights, fixed seeds), exported to ONNX by
torch.onnx.export, compiled by ipu-compile in fp32 and fp16, run by ipu-run
on the in-process device and compared with PyTorch.

BatchNorm statistics are calibrated on random data (a few forward passes in
training mode with a cumulative average) so that activations stay O(1), as
trained networks keep them: with the default statistics (mean 0, variance 1)
deep random networks shrink or grow their activations by orders of
magnitude, out of float16's range.

Judged: max |ipu - torch| / max |torch| <= 1e-4 in fp32, 3e-2 in fp16 (the
fp16 executable takes the input rounded to float16; torch runs on the same
rounded values in float32).  float16 storage itself costs more than 3e-2 on
some random networks at small inputs (depthwise and grouped convolutions,
little spatial averaging before the classifier): the test also runs torch
with every parameter and every module's output rounded to float16 and
accepts an fp16 error up to 1.5 times that emulation's, reported as
"pass (fp16 bound X)".  At 224 x 224 (the full set) the emulation stays
under 2e-2.  A model ipu-compile refuses is reported with
its message and counted as refused, not passed: --allow-refused lists the
models whose refusal is known (the full set); any other refusal, and every
wrong result, fails.

With --compare-no-reuse every case is also compiled with
--no-memory-reuse and its output must be bit-identical to the one with
memory reuse.

--batch N,... exports every convolutional network once per batch size
listed (default 1), --seq-batch N,... the sequence models (encoders, LSTM,
GRU; default: the --batch list); a case's name then carries its batch size
when more than one is swept or it is not 1 (resnet18@b16).

Usage: zoo.py --bin DIR --work DIR [--set quick|full] [--log FILE]
              [--batch N,...] [--seq-batch N,...] [--precision fp32,fp16]
              [--only NAME,...] [--allow-refused NAME,...] [--compare-no-reuse]
Prints one line per case and ends with "zoo: N passed, N failed".
"""
import argparse
import copy
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

try:
    import torch
    import torchvision
except ImportError as ex:
    print("# %s: install python3-torch and python3-torchvision (deps/models.txt, make deps)" % ex)
    print("zoo: 0 passed, 1 failed")
    sys.exit(1)

TOL = {"fp32": 1e-4, "fp16": 3e-2}

# name -> (constructor, input shape).  Small inputs keep make check short;
# the full set runs the networks at their usual 224 x 224.
QUICK = [
    ("resnet18", lambda: torchvision.models.resnet18(), (1, 3, 64, 64)),
    ("squeezenet1_1", lambda: torchvision.models.squeezenet1_1(), (1, 3, 64, 64)),
    ("mobilenet_v2", lambda: torchvision.models.mobilenet_v2(width_mult=0.5), (1, 3, 64, 64)),
    ("mobilenet_v3_small", lambda: torchvision.models.mobilenet_v3_small(), (1, 3, 64, 64)),
    ("shufflenet_v2_x0_5", lambda: torchvision.models.shufflenet_v2_x0_5(), (1, 3, 64, 64)),
    ("mnasnet0_5", lambda: torchvision.models.mnasnet0_5(), (1, 3, 64, 64)),
    ("googlenet", lambda: torchvision.models.googlenet(aux_logits=False, init_weights=True), (1, 3, 64, 64)),
    ("densenet121", lambda: torchvision.models.densenet121(), (1, 3, 64, 64)),
    ("regnet_x_400mf", lambda: torchvision.models.regnet_x_400mf(), (1, 3, 64, 64)),
    ("efficientnet_b0", lambda: torchvision.models.efficientnet_b0(), (1, 3, 64, 64)),
    ("resnet50", lambda: torchvision.models.resnet50(), (1, 3, 64, 64)),
    ("encoder", lambda: Encoder(64, 4, 2), (1, 16, 64)),
    ("lstm", lambda: Recurrent("LSTM", 32, 64, 2, False), (1, 16, 32)),
    ("gru", lambda: Recurrent("GRU", 32, 64, 2, True), (1, 16, 32)),
]


class Encoder(torch.nn.Module):
    """A post-LN transformer encoder (batch first) and a linear head."""

    def __init__(self, d, heads, layers):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = torch.nn.Linear(d, 10)

    def forward(self, x):
        return self.head(self.enc(x))


class Recurrent(torch.nn.Module):
    """A stacked LSTM or GRU (batch first) and a linear head on every step;
    the GRU starts from a learned initial state (an initial_h input)."""

    def __init__(self, kind, inp, hidden, layers, bidirectional):
        super().__init__()
        self.rnn = getattr(torch.nn, kind)(inp, hidden, layers, batch_first=True,
                                           bidirectional=bidirectional)
        dirs = 2 if bidirectional else 1
        self.h0 = torch.nn.Parameter(torch.randn(layers * dirs, 1, hidden) * 0.5) if kind == "GRU" else None
        self.head = torch.nn.Linear(dirs * hidden, 10)

    def forward(self, x):
        if self.h0 is None:
            y, _ = self.rnn(x)
        else:
            y, _ = self.rnn(x, self.h0.expand(-1, x.shape[0], -1).contiguous())
        return self.head(y)


class Segmentation(torch.nn.Module):
    """A torchvision segmentation network's "out" map (its forward returns
    a dict, one entry per head)."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]


FULL = [
    ("resnet18", lambda: torchvision.models.resnet18(), (1, 3, 224, 224)),
    ("resnet50", lambda: torchvision.models.resnet50(), (1, 3, 224, 224)),
    ("resnext50_32x4d", lambda: torchvision.models.resnext50_32x4d(), (1, 3, 224, 224)),
    ("wide_resnet50_2", lambda: torchvision.models.wide_resnet50_2(), (1, 3, 224, 224)),
    ("alexnet", lambda: torchvision.models.alexnet(), (1, 3, 224, 224)),
    ("vgg11", lambda: torchvision.models.vgg11(), (1, 3, 224, 224)),
    ("squeezenet1_0", lambda: torchvision.models.squeezenet1_0(), (1, 3, 224, 224)),
    ("densenet121", lambda: torchvision.models.densenet121(), (1, 3, 224, 224)),
    ("googlenet", lambda: torchvision.models.googlenet(aux_logits=False, init_weights=True), (1, 3, 224, 224)),
    ("inception_v3", lambda: torchvision.models.inception_v3(aux_logits=False, init_weights=True), (1, 3, 299, 299)),
    ("mobilenet_v2", lambda: torchvision.models.mobilenet_v2(), (1, 3, 224, 224)),
    ("mobilenet_v3_small", lambda: torchvision.models.mobilenet_v3_small(), (1, 3, 224, 224)),
    ("shufflenet_v2_x1_0", lambda: torchvision.models.shufflenet_v2_x1_0(), (1, 3, 224, 224)),
    ("mnasnet0_5", lambda: torchvision.models.mnasnet0_5(), (1, 3, 224, 224)),
    ("efficientnet_b0", lambda: torchvision.models.efficientnet_b0(), (1, 3, 224, 224)),
    ("regnet_x_400mf", lambda: torchvision.models.regnet_x_400mf(), (1, 3, 224, 224)),
    ("convnext_tiny", lambda: torchvision.models.convnext_tiny(), (1, 3, 224, 224)),
    ("vit_b_16", lambda: torchvision.models.vit_b_16(), (1, 3, 224, 224)),
    ("lraspp_mobilenet_v3_large", lambda: Segmentation(torchvision.models.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None)), (1, 3, 224, 224)),
    ("deeplabv3_mobilenet_v3_large", lambda: Segmentation(torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, aux_loss=False)), (1, 3, 224, 224)),
    ("swin_t", lambda: torchvision.models.swin_t(), (1, 3, 224, 224)),
    ("encoder_d256_seq128", lambda: Encoder(256, 4, 4), (1, 128, 256)),
    ("encoder_bert_base", lambda: Encoder(768, 12, 12), (1, 128, 768)),
    ("lstm", lambda: Recurrent("LSTM", 128, 256, 2, False), (1, 32, 128)),
    ("gru", lambda: Recurrent("GRU", 128, 256, 2, True), (1, 32, 128)),
]


def is_sequence_model(name):
    return name.startswith(("encoder", "lstm", "gru"))


def batch_list(text):
    try:
        sizes = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("expected batch sizes such as 1,4,16, got '%s'" % text)
    return sizes


def calibrate(m, shape, seed):
    """Running BatchNorm statistics from random data (cumulative average)."""
    bns = [x for x in m.modules() if isinstance(x, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    g = torch.Generator().manual_seed(seed + 1)
    for b in bns:
        b.reset_running_stats()
        b.momentum = None
    m.train()
    with torch.no_grad():
        for _ in range(4):
            m(torch.randn((4,) + tuple(shape[1:]), generator=g))


def nonzero_heads(m, seed):
    """torchvision zero-initialises some classifier heads (ViT's): every
    output would be 0 whatever the network computed before, and the
    comparison with torch would prove nothing.  Such a Linear gets
    PyTorch's default uniform initialisation instead."""
    g = torch.Generator().manual_seed(seed + 3)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.Linear) and not mod.weight.any():
                bound = 1.0 / mod.in_features ** 0.5
                mod.weight.copy_((torch.rand(mod.weight.shape, generator=g) * 2 - 1) * bound)


def build(name, ctor, shape, work, seed):
    torch.manual_seed(seed)
    m = ctor()
    nonzero_heads(m, seed)
    calibrate(m, shape, seed)
    m.eval()
    x = torch.randn(shape, generator=torch.Generator().manual_seed(seed + 2))
    path = os.path.join(work, name + ".onnx")
    torch.onnx.export(m, x, path, opset_version=13, input_names=["x"], output_names=["y"])
    x16 = x.numpy().astype(np.float16)
    np.save(os.path.join(work, name + ".x.npy"), x.numpy())
    np.save(os.path.join(work, name + ".x16.npy"), x16)
    with torch.no_grad():
        ref = m(x).numpy().astype(np.float64)
        ref16 = m(torch.from_numpy(x16.astype(np.float32))).numpy().astype(np.float64)
        emu = fp16_storage(m)(torch.from_numpy(x16.astype(np.float32))).numpy().astype(np.float64)
    bound = float(np.abs(emu - ref16).max() / max(np.abs(ref16).max(), 1e-30))
    return path, ref, ref16, bound


def fp16_storage(m):
    """A copy of m whose parameters and module outputs are rounded to float16."""
    e = copy.deepcopy(m)
    with torch.no_grad():
        for p in e.parameters():
            p.copy_(p.half().float())
    for mod in e.modules():
        if not list(mod.children()):
            mod.register_forward_hook(
                lambda _m, _i, out: out.half().float() if torch.is_tensor(out) else out)
    return e


def run(cmd, timeout):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout


def case(a, name, path, prec, ref, bound):
    exe = os.path.join(a.work, "%s.%s.ipuef" % (name, prec))
    out = os.path.join(a.work, "%s.%s.y.npy" % (name, prec))
    x = os.path.join(a.work, name + (".x16.npy" if prec == "fp16" else ".x.npy"))
    t0 = time.monotonic()
    rc, log = run([os.path.join(a.bin, "ipu-compile"), path, "--precision", prec, "-o", exe],
                  a.timeout)
    ct = time.monotonic() - t0
    r = {"model": name, "precision": prec, "compile_s": round(ct, 2)}
    if rc:
        msg = [l for l in log.splitlines() if "error" in l]
        r.update(status="refused", message=(msg[-1] if msg else log.strip()[-300:]))
        return r
    mem = re.search(r"memory per tile max (\d+)", log)
    r["peak_tile_bytes"] = int(mem.group(1)) if mem else None
    mem = re.search(r"without: max (\d+)", log)
    r["peak_tile_bytes_no_reuse"] = int(mem.group(1)) if mem else None
    mem = re.search(r"(\d+) vertices, (\d+) exchanges moving (\d+) bytes", log)
    if mem:
        r["vertices"], r["exchange_bytes"] = int(mem.group(1)), int(mem.group(3))
    rc, log = run([os.path.join(a.bin, "ipu-run"), exe, "--input", "x=" + x, "--output",
                   "y=" + out, "--iterations", "0"], a.timeout)
    if rc:
        r.update(status="wrong", message="ipu-run failed: " + log.strip()[-300:])
        return r
    if a.compare_no_reuse:
        # memory reuse must not change a single bit of the result
        exe2, out2 = exe + ".no-reuse", out + ".no-reuse.npy"
        rc, log = run([os.path.join(a.bin, "ipu-compile"), path, "--precision", prec, "-o", exe2,
                       "--no-memory-reuse"], a.timeout)
        mem = re.search(r"memory per tile max (\d+)", log)
        if mem:
            # the peak of the executable without reuse (temporaries in a
            # per-tile scratch), rather than this one's tensors unshared
            r["peak_tile_bytes_no_reuse"] = int(mem.group(1))
        if not rc:
            rc, log = run([os.path.join(a.bin, "ipu-run"), exe2, "--input", "x=" + x,
                           "--output", "y=" + out2, "--iterations", "0"], a.timeout)
        if rc:
            r["same_without_reuse"] = "not compiled/run without reuse: " + log.strip()[-200:]
        else:
            r["same_without_reuse"] = bool(np.load(out).tobytes() == np.load(out2).tobytes())
            os.unlink(exe2)
            if not r["same_without_reuse"]:
                r.update(status="wrong", message="the output differs from the one compiled with --no-memory-reuse")
                return r
    got = np.load(out).astype(np.float64)
    if got.shape != ref.shape:
        r.update(status="wrong", message="shape %s, torch %s" % (got.shape, ref.shape))
        return r
    if not np.abs(ref).max() > 0:
        r.update(status="wrong", message="torch's output is all zeros: the comparison would prove nothing")
        return r
    err = float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))
    r["err"] = err
    tol = TOL[prec]
    if prec == "fp16":
        r["fp16_bound"] = bound
        tol = max(tol, 1.5 * bound)
    r["status"] = "pass" if np.isfinite(err) and err <= tol else "wrong"
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--set", choices=("quick", "full"), default="quick")
    ap.add_argument("--only", default="")
    ap.add_argument("--allow-refused", default="",
                    help="comma-separated model names whose refusal is known")
    ap.add_argument("--log", default="")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--batch", type=batch_list, default=[1],
                    help="comma-separated batch sizes of the convolutional networks' input")
    ap.add_argument("--seq-batch", type=batch_list, default=None,
                    help="comma-separated batch sizes of the sequence models (default: --batch)")
    ap.add_argument("--precision", default="fp32,fp16",
                    help="comma-separated precisions to compile (fp32, fp16)")
    ap.add_argument("--compare-no-reuse", action="store_true",
                    help="also compile with --no-memory-reuse and require a bit-identical output")
    a = ap.parse_args()
    precisions = [p for p in a.precision.split(",") if p]
    if not precisions or set(precisions) - set(TOL):
        ap.error("--precision takes fp32 and/or fp16, got '%s'" % a.precision)
    os.makedirs(a.work, exist_ok=True)
    torch.set_num_threads(1)
    allowed = set(filter(None, a.allow_refused.split(",")))
    seq_batch = a.seq_batch or a.batch
    swept = len(a.batch) > 1 or len(seq_batch) > 1
    results, npass, nfail = [], 0, 0
    for i, (model, ctor, shape) in enumerate(QUICK if a.set == "quick" else FULL):
        if a.only and model not in a.only.split(","):
            continue
        for batch in (seq_batch if is_sequence_model(model) else a.batch):
            name = model if batch == 1 and not swept else "%s@b%d" % (model, batch)
            shp = (batch,) + tuple(shape[1:])
            path, ref, ref16, bound = build(name, ctor, shp, a.work, 1000 + i)
            for prec in precisions:
                r = case(a, name, path, prec, ref if prec == "fp32" else ref16, bound)
                r["batch"] = batch
                results.append(r)
                ok = r["status"] == "pass" or (r["status"] == "refused" and model in allowed)
                npass += ok
                nfail += not ok
                detail = ("err %.2e (tolerance %g%s), compile %.2f s, peak tile %s bytes (%s without reuse), %s vertices, %s bytes exchanged%s" %
                          (r["err"], TOL[prec],
                           "; fp16 storage in torch: %.2e" % r["fp16_bound"] if "fp16_bound" in r else "",
                           r["compile_s"], r["peak_tile_bytes"], r["peak_tile_bytes_no_reuse"],
                           r.get("vertices", "?"), r.get("exchange_bytes", "?"),
                           ", bit-identical without reuse" if r.get("same_without_reuse") is True else
                           (", without reuse: %s" % r["same_without_reuse"]) if "same_without_reuse" in r else "")
                          if "err" in r else r.get("message", ""))
                print("%s - %s %s: %s: %s" % ("ok" if ok else "not ok", name, prec, r["status"], detail),
                      flush=True)
    if a.log:
        with open(a.log, "w") as f:
            f.write("# model zoo (%s set, batch %s, sequence models batch %s): ipu-compile + ipu-run vs PyTorch %s, torchvision %s\n"
                    % (a.set, ",".join(map(str, a.batch)), ",".join(map(str, seq_batch)),
                       torch.__version__, torchvision.__version__))
            f.write("# %-26s %-5s %-8s %10s %12s %12s %9s %13s %10s %10s\n" % (
                "model", "prec", "status", "compile s", "peak tile B", "no reuse B", "vertices",
                "exchange B", "err", "fp16 emu"))
            for r in results:
                f.write("%-28s %-5s %-8s %10s %12s %12s %9s %13s %10s %10s %s\n" % (
                    r["model"], r["precision"], r["status"], r["compile_s"],
                    r.get("peak_tile_bytes") or "-", r.get("peak_tile_bytes_no_reuse") or "-",
                    r.get("vertices", "-"), r.get("exchange_bytes", "-"),
                    "%.2e" % r["err"] if "err" in r else "-",
                    "%.2e" % r["fp16_bound"] if "fp16_bound" in r else "-",
                    r.get("message", "") if r["status"] != "pass" else ""))
        with open(a.log.rsplit(".", 1)[0] + ".json", "w") as f:
            json.dump(results, f, indent=1)
    print("zoo: %d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
