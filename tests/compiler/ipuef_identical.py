#!/usr/bin/python3
"""ipuef_identical.py - proves that a change to the compiler leaves every
executable as it was: compiles the model tests' models
(tests/models/make_models.py), the zoo's quick set (tests/models/zoo.py)
and the quick benchmark models (bench/bench_models.py: the MLP at batch 64,
ResNet-18 and MobileNetV2 at 224 x 224) in fp32 and fp16 with the
ipu-compile of a base commit and with the one of this tree, and compares
the two .ipuef files byte for byte.

The base compiler is built from `git archive BASE` in a scratch folder
(the shared compiler cache makes that fast) and kept per commit; the models
are generated once (fixed seeds) and kept too.

Usage: BASE=<commit> tests/compiler/ipuef_identical.py [--bin build/bin]
           [--work build/ipuef-identical] [--only NAME,...] [--big]
           [--precision fp32,fp16]
BASE defaults to main.  --bin is this tree's build (make build/bin/ipu-compile
first); --big adds ResNet-50 and the BERT-base-shaped encoder at batch 1
(minutes).  Prints one line per case and ends with "N passed, N failed";
exits 1 if any executable differs or a compile fails on one side only.
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
sys.path.insert(0, os.path.join(ROOT, "bench"))


def sh(cmd, cwd=None, env=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def base_compiler(base, work):
    """ipu-compile built at commit `base`, cached under work/base-bin/<hash>."""
    rc, out = sh(["git", "-C", ROOT, "rev-parse", "--verify", base + "^{commit}"])
    if rc:
        sys.exit("ipuef_identical: BASE=%s is not a commit: %s" % (base, out.strip()))
    commit = out.strip()
    exe = os.path.join(work, "base-bin", commit, "ipu-compile")
    if os.path.exists(exe):
        return commit, exe
    src = tempfile.mkdtemp(prefix="base-src-", dir=work)
    try:
        archive = subprocess.Popen(["git", "-C", ROOT, "archive", commit], stdout=subprocess.PIPE)
        rc = subprocess.call(["tar", "-x", "-C", src], stdin=archive.stdout)
        if archive.wait() or rc:
            sys.exit("ipuef_identical: git archive %s failed" % commit)
        env = dict(os.environ)
        env.setdefault("CCACHE_BASEDIR", os.path.dirname(ROOT))
        env.setdefault("CCACHE_NOHASHDIR", "1")
        cc = "ccache gcc" if shutil.which("ccache") else "gcc"
        print("# building ipu-compile at %s" % commit[:12], flush=True)
        rc, out = sh(["nice", "make", "-j2", "CC=" + cc, "build/bin/ipu-compile"], cwd=src, env=env)
        if rc:
            sys.exit("ipuef_identical: building the base compiler failed:\n" + out[-3000:])
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        shutil.copy2(os.path.join(src, "build", "bin", "ipu-compile"), exe)
    finally:
        shutil.rmtree(src, ignore_errors=True)
    return commit, exe


def generate(models, big):
    """name -> .onnx path, generating what is missing (fixed seeds)."""
    import make_models

    os.makedirs(models, exist_ok=True)
    meta = {}
    small = {"mlp": make_models.make_mlp, "resnet": make_models.make_resnet,
             "transformer": make_models.make_transformer,
             "mlp_b64": lambda: make_models.make_mlp(batch=64)}
    if big:
        import bench_models
        small["resnet50"] = make_models.make_resnet50
        small["bert_b1"] = lambda: make_models.make_transformer(batch=1, **bench_models.BERT)
    paths = {}
    for name, maker in small.items():
        path = os.path.join(models, name + ".onnx")
        if not os.path.exists(path):
            m, ins = maker()
            make_models.save(models, name, m, ins, meta)
        paths[name] = path
    torch_models = [("bench_resnet18", "resnet18", 18), ("bench_mobilenet_v2", "mobilenet_v2", 2)]
    try:
        import zoo
    except SystemExit:
        print("# python3-torch missing: the zoo's and torchvision's models are left out")
        return paths
    for i, (name, ctor, shape) in enumerate(zoo.QUICK):
        path = os.path.join(models, "zoo_" + name + ".onnx")
        if not os.path.exists(path):
            # the seeds zoo.py uses, so these are the zoo's own models
            built = zoo.build(name, ctor, shape, models, 1000 + i)[0]
            os.replace(built, path)
        paths["zoo_" + name] = path
    for name, arch, seed in torch_models:
        path = os.path.join(models, name + ".onnx")
        if not os.path.exists(path):
            import bench_models
            m, _ = bench_models.make_torchvision(arch, seed)
            with open(path + ".tmp", "wb") as f:
                f.write(m.SerializeToString())
            os.replace(path + ".tmp", path)
        paths[name] = path
    return paths


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "ipuef-identical"))
    ap.add_argument("--only", default="")
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--precision", default="fp32,fp16")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    head = os.path.join(a.bin, "ipu-compile")
    if not os.access(head, os.X_OK):
        sys.exit("ipuef_identical: %s missing: make build/bin/ipu-compile first" % head)
    commit, base = base_compiler(os.environ.get("BASE", "main"), a.work)
    paths = generate(os.path.join(a.work, "models"), a.big)
    only = set(filter(None, a.only.split(",")))
    out = os.path.join(a.work, "out")
    os.makedirs(out, exist_ok=True)
    passed = failed = total_bytes = 0
    print("# base %s, head %s" % (commit[:12], head))
    for name in sorted(paths):
        if only and name not in only:
            continue
        for prec in a.precision.split(","):
            exes = []
            logs = []
            for side, exe in (("base", base), ("head", head)):
                dst = os.path.join(out, "%s.%s.%s.ipuef" % (name, prec, side))
                if os.path.exists(dst):
                    os.unlink(dst)
                wide = []
                if name in ("resnet50", "bert_b1"):
                    import bench_models
                    wide = bench_models.WIDE_TARGET
                rc, log = sh([exe, paths[name], "--precision", prec, "-o", dst] + wide)
                exes.append(dst if rc == 0 else None)
                logs.append(log.strip().splitlines()[-1:] if rc else [])
            if exes[0] is None and exes[1] is None:
                # refused alike: the same answer on both sides
                print("same    %-28s %s refused by both: %s" % (name, prec, logs[1]))
                passed += 1
                continue
            if exes[0] is None or exes[1] is None:
                side = "base" if exes[0] is None else "head"
                print("DIFFERS %-28s %s only %s refused it: %s" % (name, prec, side, logs[0] or logs[1]))
                failed += 1
                continue
            with open(exes[0], "rb") as f:
                b0 = f.read()
            with open(exes[1], "rb") as f:
                b1 = f.read()
            if b0 == b1:
                print("same    %-28s %s %9d bytes sha256 %s" % (name, prec, len(b1), digest(exes[1])))
                passed += 1
                total_bytes += len(b1)
                for x in exes:
                    os.unlink(x)
            else:
                at = next((i for i in range(min(len(b0), len(b1))) if b0[i] != b1[i]), min(len(b0), len(b1)))
                print("DIFFERS %-28s %s base %d bytes, head %d, first difference at byte %d (kept in %s)"
                      % (name, prec, len(b0), len(b1), at, out))
                failed += 1
    print("# %d executables, %d bytes, byte-identical to %s" % (passed, total_bytes, commit[:12]))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
