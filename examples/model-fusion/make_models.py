#!/usr/bin/python3
# Build model0.onnx and model1.onnx of the model-fusion example with the
# seed's own model code (compile.py's create_onnx, opset 11), in the
# current directory (or the directory given as the first argument), and
# the run.py inputs as .npy files for ipu-run.
#
# Needs Debian's python3-onnx and python3-numpy: run with /usr/bin/python3.
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compile import create_onnx  # noqa: E402  (the seed's script, beside this one)


def write_inputs():
    """The run.py inputs as .npy files for ipu-run --input NAME=FILE."""
    np.save("g0_X.npy", np.ones([1, 2], dtype=np.float32))
    np.save("g0_Y.npy", np.ones([1, 2], dtype=np.float32) * 2)
    np.save("g1_X.npy", np.zeros([1, 1], dtype=np.float16))


if __name__ == '__main__':
    if len(sys.argv) > 1 and not sys.argv[1].startswith("--"):
        os.chdir(sys.argv[1])
    create_onnx(opset=11)
    if "--no-inputs" not in sys.argv:
        write_inputs()
    print("make_models.py: wrote model0.onnx, model1.onnx (opset 11) in", os.getcwd())
