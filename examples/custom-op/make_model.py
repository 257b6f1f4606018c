#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A small torch model with a custom-domain node: Linear -> RmsNorm
(com.example, the plugin of rmsnorm.c) -> Linear, exported to ONNX with
torch.onnx's symbolic of an autograd Function.  Writes the model, a seeded
input and torch's output (.npy).

usage: make_model.py OUT_DIR [--bad-weight]
  --bad-weight  export RmsNorm with a weight of the wrong length (shape
                inference of the plugin refuses it)
"""
import os
import sys

import numpy as np
import torch

D = 64


class RmsNormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, eps):
        # (w[:D]: the --bad-weight model still traces; its node keeps all of w)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w[:x.shape[-1]]

    @staticmethod
    def symbolic(g, x, w, eps):
        return g.op("com.example::RmsNorm", x, w, epsilon_f=eps)


class Model(torch.nn.Module):
    def __init__(self, bad):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, D)
        self.w = torch.nn.Parameter(torch.rand(D + (1 if bad else 0)) + 0.5)
        self.fc2 = torch.nn.Linear(D, 16)

    def forward(self, x):
        return self.fc2(RmsNormFn.apply(self.fc1(x), self.w, 1e-5))


def main():
    out = sys.argv[1]
    bad = "--bad-weight" in sys.argv
    torch.manual_seed(7)
    m = Model(bad).eval()
    x = torch.randn(8, 32, generator=torch.Generator().manual_seed(11))
    os.makedirs(out, exist_ok=True)
    name = "rmsnorm_bad.onnx" if bad else "rmsnorm.onnx"
    torch.onnx.export(m, (x,), os.path.join(out, name), input_names=["x"],
                      output_names=["y"], opset_version=13,
                      custom_opsets={"com.example": 1})
    if not bad:
        with torch.no_grad():
            y = m(x)
        np.save(os.path.join(out, "x.npy"), x.numpy())
        np.save(os.path.join(out, "y_torch.npy"), y.numpy())


if __name__ == "__main__":
    main()
