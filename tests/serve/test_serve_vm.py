#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ipu-serve inside the test VM on the emulated PCIe devices: the image is
built from the driver module, ipu-serve with its shared libraries, the
affine test model and four JSON requests; the guest (tests/serve/
vm-serve.sh) serves the model with two instances on /dev/accel/accel0 and
/dev/accel/accel1 and asks it with busybox wget.  The answers must equal numpy's
and the host's in-process ipu-run bit for bit.  Usage: test_serve_vm.py
KMOD.  Ends with "serve-vm: N passed, N failed"."""

import atexit
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_util import BIN, ROOT, Tally, build_models, ipu_run  # noqa: E402

T = Tally("serve-vm")


def main():
    kmod = pathlib.Path(sys.argv[1])
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="serve-vm-"))
    atexit.register(shutil.rmtree, tmp, True)
    models = build_models(tmp / "models")
    stage = tmp / "stage"
    (stage / "bin").mkdir(parents=True)
    shutil.copy(BIN / "ipu-serve", stage / "bin" / "ipu-serve")
    files = [stage / "bin" / "ipu-serve", ROOT / "tests/serve/vm-serve.sh", models["affine"]]
    # the shared libraries and the loader, as ldd resolves them on the host
    for line in subprocess.run(["ldd", str(BIN / "ipu-serve")], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        m = re.search(r"(/\S+)", line.split("=>")[-1])
        if m:
            files.append(pathlib.Path(m.group(1)).resolve(strict=True))
            dst = stage / pathlib.Path(m.group(1)).name
            shutil.copy(files[-1], dst)
            files[-1] = dst
    rng = np.random.default_rng(4)
    xs = [rng.uniform(-100, 100, (r, 3)).astype(np.float32) for r in (1, 4, 7, 8)]
    for k, x in enumerate(xs, 1):
        p = stage / f"serve-req{k}.json"
        p.write_text(json.dumps({"id": f"vm{k}", "inputs": [
            {"name": "X", "datatype": "FP32", "shape": list(x.shape), "data": x.ravel().tolist()}]}))
        files.append(p)
    image = tmp / "serve-initramfs.cpio.gz"
    subprocess.run(["sh", str(ROOT / "selftests/mkinitramfs.sh"), str(image), str(kmod),
                    *map(str, files)], check=True, timeout=300)
    r = subprocess.run([str(ROOT / "scripts/vm-run"), "--image", str(image), "sh /ipu/vm-serve.sh"],
                       capture_output=True, text=True, timeout=3600, cwd=ROOT)
    out = r.stdout
    print("\n".join(ln for ln in out.splitlines() + r.stderr.splitlines()
                    if ln.startswith(("SERVE-", "vm-run:"))))

    def ready():
        assert '{"ready":true}' in out, out[-3000:]
    T.check("ipu-serve starts in the VM on /dev/accel/accel0 and /dev/accel/accel1", ready)

    def results():
        for k, x in enumerate(xs, 1):
            m = re.search(rf"^SERVE-RESPONSE-{k}: (.*)$", out, re.M)
            assert m, f"no response {k}"
            j = json.loads(m.group(1))
            assert j["id"] == f"vm{k}", j
            y = np.array(j["outputs"][0]["data"], np.float32).reshape(j["outputs"][0]["shape"])
            assert np.array_equal(y, x * np.float32(2) + np.array([10, 20, 30], np.float32)), k
            host = ipu_run(models["affine"], {"X": x}, ["Y"], tmp, ["--batch-size", str(len(x))])["Y"]
            assert np.array_equal(y, host), k
    T.check("infer answers from the guest equal numpy's and the host's ipu-run", results)

    def counters():
        m = re.search(r'SERVE-METRIC: ipu_inference_request_success\{model="affine",version="1"\} (\d+)', out)
        assert m and int(m.group(1)) == 4, out[-3000:]
        m = re.search(r"SERVE-STREAM-CMDS: accel0 (\d+) accel1 (\d+)", out)
        assert m and int(m.group(1)) > 0, out[-3000:]
    T.check("metrics count the requests; the PCIe device's stream commands moved", counters)

    def exit0():
        # vm-run exits with the guest script's status; the init script turns a
        # kernel warning into a failure
        assert re.search(r"^SERVE-EXIT: 0$", out, re.M), out[-3000:]
        assert r.returncode == 0 and "kernel problems" not in out, (r.returncode, r.stderr[-2000:])
    T.check("SIGTERM in the guest: exit 0, no kernel warning", exit0)
    shutil.rmtree(tmp, ignore_errors=True)
    return T.finish()


if __name__ == "__main__":
    try:
        rc = main()
    except Exception:
        import traceback
        traceback.print_exc()
        T.failed += 1
        rc = T.finish()
    sys.exit(rc)
