#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A BERT-shaped encoder: LAYERS torch.nn.TransformerEncoderLayer (d 64,
4 heads, FFN 256, GELU, post-norm, batch first) on x [1, 16, 64], seeded
random weights, exported to ONNX with its input `x` and output `y`, and
torch's output for a seeded input.  --large makes it BERT-large-shaped
(d 1024, 16 heads, FFN 4096, 128 positions; 24 layers unless LAYERS).

  tiny_encoder.py DIR [LAYERS] [--large]
      writes DIR/encoder.onnx, DIR/x.npy, DIR/y.npy
"""
import sys

import numpy as np
import torch

def main():
    args = [a for a in sys.argv[1:] if a != "--large"]
    large = "--large" in sys.argv
    d, heads, ffn, seq = (1024, 16, 4096, 128) if large else (64, 4, 256, 16)
    out = args[0]
    layers = int(args[1]) if len(args) > 1 else (24 if large else 4)
    torch.manual_seed(7)
    layer = torch.nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.0, activation="gelu",
                                             batch_first=True)
    model = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()
    # the layers are copies of one: give each its own weights (the export
    # would otherwise share them)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.copy_(0.08 * (64.0 / d) ** 0.5 * torch.randn_like(p))
    x = torch.from_numpy(np.random.default_rng(11).standard_normal((1, seq, d)).astype(np.float32))
    with torch.no_grad():
        y = model(x)
    # with gradients on, torch takes the layers' plain path, which exports
    torch.onnx.export(model, (x,), out + "/encoder.onnx", input_names=["x"], output_names=["y"],
                      opset_version=13)
    np.save(out + "/x.npy", x.numpy())
    np.save(out + "/y.npy", y.numpy())


if __name__ == "__main__":
    main()
