#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A 4-layer MLP (256 x 256 fp32 Linear, no bias, ReLU between) exported
by torch at ROWS rows (the micro-batch), with a seeded input of BATCH rows
and torch's output for it.

  mlp_wide.py DIR ROWS BATCH
      writes DIR/mlp.onnx, DIR/x.npy [BATCH, 256], DIR/y.npy
"""
import sys

import numpy as np
import torch


def main():
    out, rows, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.manual_seed(3)
    mods = []
    for i in range(4):
        mods.append(torch.nn.Linear(256, 256, bias=False))
        if i < 3:
            mods.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*mods).eval()
    x = torch.from_numpy(np.random.default_rng(9).standard_normal((batch, 256)).astype(np.float32))
    with torch.no_grad():
        y = model(x)
    torch.onnx.export(model, (x[:rows],), out + "/mlp.onnx", input_names=["x"], output_names=["y"],
                      opset_version=13, dynamic_axes=None)
    np.save(out + "/x.npy", x.numpy())
    np.save(out + "/y.npy", y.numpy())


if __name__ == "__main__":
    main()
