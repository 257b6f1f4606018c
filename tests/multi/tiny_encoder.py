#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A BERT-shaped encoder, small: LAYERS torch.nn.TransformerEncoderLayer
(d 64, 4 heads, FFN 256, GELU, post-norm, batch first) on x [1, 16, 64],
seeded random weights, exported to ONNX with its input `x` and output `y`,
and torch's output for a seeded input.

  tiny_encoder.py DIR [LAYERS]   writes DIR/encoder.onnx, DIR/x.npy, DIR/y.npy
"""
import sys

import numpy as np
import torch

D, HEADS, FFN, SEQ = 64, 4, 256, 16


def main():
    out = sys.argv[1]
    layers = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    torch.manual_seed(7)
    layer = torch.nn.TransformerEncoderLayer(D, HEADS, FFN, dropout=0.0, activation="gelu",
                                             batch_first=True)
    model = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()
    # the layers are copies of one: give each its own weights (the export
    # would otherwise share them)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.copy_(0.08 * torch.randn_like(p))
    x = torch.from_numpy(np.random.default_rng(11).standard_normal((1, SEQ, D)).astype(np.float32))
    with torch.no_grad():
        y = model(x)
    # with gradients on, torch takes the layers' plain path, which exports
    torch.onnx.export(model, (x,), out + "/encoder.onnx", input_names=["x"], output_names=["y"],
                      opset_version=13)
    np.save(out + "/x.npy", x.numpy())
    np.save(out + "/y.npy", y.numpy())


if __name__ == "__main__":
    main()
