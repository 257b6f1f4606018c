#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A BERT-shaped encoder in the packed form PopRT's BERT takes: several
sequences share a row of SEQ tokens, told apart by attention_mask, which
holds the segment id of each token (1, 2, ... ; 0 for padding), and
position_ids that restart at 0 with each segment.  The model computes its
own block-diagonal attention from the segment ids (a query sees the keys of
its own segment only, through an additive -10000 that underflows exp to an
exact 0), so a sequence gets the same hidden states wherever it sits in a
row and whatever shares the row with it.

Outputs: `hidden` [B, SEQ, D] per token, and `pooled` [B, SEGS, D], the
mean of each segment's hidden states (segment k at index k-1; zeros for
segments the row does not have).

With --additive the model takes the block-diagonal mask itself instead:
attention_mask FP32 [B, 1, SEQ, SEQ], 0 where query and key share a
sequence, -10000 elsewhere, added to the scores; its only output is
`hidden` (segments cannot be told apart from an additive mask).

  packed_bert.py OUT.onnx [--batch B] [--layers L] [--d D] [--seq T] [--segs S] [--additive]

Weights are seeded; torch 1.13's exporter, opset 13.
"""
import argparse

import torch

VOCAB = 1000


class Layer(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)
        self.ln1 = torch.nn.LayerNorm(d)
        self.ff1 = torch.nn.Linear(d, 4 * d)
        self.ff2 = torch.nn.Linear(4 * d, d)
        self.ln2 = torch.nn.LayerNorm(d)

    def forward(self, x, bias):
        b, t, d = x.shape
        dh = d // self.heads
        q, k, v = self.qkv(x).split(d, dim=-1)
        q = q.reshape(b, t, self.heads, dh).transpose(1, 2)
        k = k.reshape(b, t, self.heads, dh).transpose(1, 2)
        v = v.reshape(b, t, self.heads, dh).transpose(1, 2)
        s = torch.matmul(q, k.transpose(2, 3)) * (1.0 / dh ** 0.5) + bias
        a = torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2).reshape(b, t, d)
        x = self.ln1(x + self.out(a))
        return self.ln2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))


class PackedBert(torch.nn.Module):
    def __init__(self, layers, d, seq, segs, additive=False):
        super().__init__()
        self.segs = segs
        self.additive = additive
        # embeddings as one-hot matmuls: a Gather is not split over tiles
        self.word = torch.nn.Parameter(torch.zeros(VOCAB, d))
        self.pos = torch.nn.Parameter(torch.zeros(seq, d))
        self.ln = torch.nn.LayerNorm(d)
        self.layers = torch.nn.ModuleList([Layer(d, 4) for _ in range(layers)])

    def forward(self, input_ids, attention_mask, position_ids):
        def embed(ids, table):
            rng = torch.arange(table.shape[0], dtype=ids.dtype)
            return torch.matmul((ids.unsqueeze(-1) == rng).float(), table)
        x = self.ln(embed(input_ids, self.word) + embed(position_ids, self.pos))
        if self.additive:
            for layer in self.layers:
                x = layer(x, attention_mask)
            return x
        # [B, 1, T, T]: 0 where query and key share a segment, else -10000
        same = (attention_mask.unsqueeze(2) == attention_mask.unsqueeze(1)).float()
        bias = ((same - 1.0) * 10000.0).unsqueeze(1)
        for layer in self.layers:
            x = layer(x, bias)
        ids = torch.arange(1, self.segs + 1, dtype=attention_mask.dtype).reshape(1, self.segs, 1)
        onehot = (attention_mask.unsqueeze(1) == ids).float()              # [B, S, T]
        count = onehot.sum(dim=-1, keepdim=True)
        pooled = torch.matmul(onehot, x) / torch.clamp(count, min=1.0)
        return x, pooled


def build(layers, d, seq, segs, additive=False):
    torch.manual_seed(5)
    model = PackedBert(layers, d, seq, segs, additive).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith(("word", "pos")):
                p.copy_(torch.randn_like(p))
            elif "ln" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.copy_(0.08 * (64.0 / d) ** 0.5 * torch.randn_like(p))
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--segs", type=int, default=8)
    ap.add_argument("--additive", action="store_true")
    a = ap.parse_args()
    model = build(a.layers, a.d, a.seq, a.segs, a.additive)
    ids = torch.zeros((a.batch, a.seq), dtype=torch.int32)
    mask = torch.zeros((a.batch, 1, a.seq, a.seq)) if a.additive else ids
    torch.onnx.export(model, (ids, mask, ids), a.out,
                      input_names=["input_ids", "attention_mask", "position_ids"],
                      output_names=["hidden"] if a.additive else ["hidden", "pooled"],
                      opset_version=13)


if __name__ == "__main__":
    main()
