#!/usr/bin/python3
"""ResNet-50 from Debian's python3-torchvision, random weights (seeded),
exported to ONNX by torch.onnx.export (opset 13, input "x", output "y").
usage: make_resnet50.py OUT.onnx [SIZE [BATCH]]   (SIZE default 224)"""
import sys

import torch
import torchvision

size = int(sys.argv[2]) if len(sys.argv) > 2 else 224
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 1
torch.manual_seed(50)
m = torchvision.models.resnet50().eval()
x = torch.randn((batch, 3, size, size), generator=torch.Generator().manual_seed(51))
with torch.no_grad():
    torch.onnx.export(m, x, sys.argv[1], opset_version=13, input_names=["x"], output_names=["y"])
