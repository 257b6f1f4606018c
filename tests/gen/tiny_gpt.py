#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A GPT-2-shaped decoder (2 layers, d 64, 4 heads, vocab 96, 32 positions,
seeded random weights) as one decode step with a fixed-length key/value
cache, exported with torch.onnx under Hugging Face's names:

  inputs   input_ids [1, 1] i64, position_ids [1, 1] i64,
           past_key_values.N.key / .value [1, 4, 32, 16] f32
  outputs  logits [1, 1, 96], present.N.key / .value [1, 4, 32, 16]

The step writes the new key and value at position p of the cache through a
one-hot mask (Where on arange == p), so the cache keeps its length, and
attends to positions <= p only.

  export OUT.onnx POSITIONS         the decode step (cache length POSITIONS)
  greedy DIR POSITIONS N PROMPT...  torch's greedy loop: prints the N new
                                    token ids and writes DIR/tokens.npy (the
                                    ids fed, one per step) and
                                    DIR/torch_logits.npy (each step's logits)
  export-gpt2s, greedy-gpt2s        the same with GPT-2 small's shape (12
                                    layers, d 768, 12 heads, vocab 50257;
                                    124 M parameters)
  export OUT.onnx POSITIONS --slots S   the step of S sequences at once
                                    (inputs [S, 1], caches [S, 4, POS, 16],
                                    logits [S, 1, 96]: row s is sequence s's)
  export OUT.onnx POSITIONS --tokens T  the prefill form of the same module:
                                    T tokens a step (input_ids, position_ids
                                    [1, T], logits [1, T, 96]), token t
                                    written at position_ids[t] and seeing the
                                    positions <= it (ipu-compile
                                    --prefill-model)
"""
import sys

import numpy as np
import torch

VOCAB, D, HEADS, LAYERS = 96, 64, 4, 2
POS = 32
HD = D // HEADS
SLOTS = 1   # sequences per step: row s of every input, output and cache
TOKENS = 1  # tokens per step: 1 decodes, T > 1 is the prefill form


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(D)
        self.qkv = torch.nn.Linear(D, 3 * D)
        self.proj = torch.nn.Linear(D, D)
        self.ln2 = torch.nn.LayerNorm(D)
        self.fc = torch.nn.Linear(D, 4 * D)
        self.out = torch.nn.Linear(4 * D, D)

    def forward(self, x, onehot, visible, past_k, past_v):
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q = q.reshape(SLOTS, TOKENS, HEADS, HD).transpose(1, 2)  # [S, H, T, HD]
        k = k.reshape(SLOTS, TOKENS, HEADS, HD).transpose(1, 2)
        v = v.reshape(SLOTS, TOKENS, HEADS, HD).transpose(1, 2)
        if TOKENS > 1:
            # row t of k goes to slot position_ids[t]: a product with the
            # one-hot [1, 1, POS, T] (one term per written slot: exact)
            scatter, onehot = onehot
            k, v = torch.matmul(scatter, k), torch.matmul(scatter, v)
        k_all = torch.where(onehot, k, past_k)                   # [S, H, POS, HD]
        v_all = torch.where(onehot, v, past_v)
        # k_all @ q^T, not q @ k_all^T: the cache is not transposed every
        # step (a [POS, HD] copy per head that the IPU would have to hold)
        att = torch.matmul(k_all, q.transpose(2, 3)).transpose(2, 3) * (1.0 / HD ** 0.5)
        att = torch.where(visible, att, torch.full_like(att, -1e4))
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, v_all).transpose(1, 2).reshape(SLOTS, TOKENS, D)
        x = x + self.proj(y)
        x = x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return x, k_all, v_all


class TinyGPT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = torch.nn.Embedding(VOCAB, D)
        self.wpe = torch.nn.Embedding(POS, D)
        self.blocks = torch.nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln_f = torch.nn.LayerNorm(D)
        self.head = torch.nn.Linear(D, VOCAB, bias=False)

    def forward(self, input_ids, position_ids, *past):
        x = self.wte(input_ids) + self.wpe(position_ids)         # [S, T, D]
        slots = torch.arange(POS).reshape(1, 1, POS, 1)
        if TOKENS > 1:
            pos = position_ids.reshape(1, 1, 1, TOKENS)
            scatter = (slots == pos).float()                     # [1, 1, POS, T]
            onehot = (scatter, scatter.sum(dim=-1, keepdim=True) > 0)   # slots written
            visible = slots.reshape(1, 1, 1, POS) <= pos.reshape(1, 1, TOKENS, 1)
        else:
            onehot = slots == position_ids.reshape(SLOTS, 1, 1, 1)   # [S, 1, POS, 1]
            visible = (slots <= position_ids.reshape(SLOTS, 1, 1, 1)).reshape(SLOTS, 1, 1, POS)
        present = []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk(x, onehot, visible, past[2 * i], past[2 * i + 1])
            present += [k, v]
        logits = self.head(self.ln_f(x))
        return (logits, *present)


def gpt2_small(positions):
    """GPT-2 small's shape with a cache of `positions`."""
    global VOCAB, D, HEADS, LAYERS, HD, POS
    VOCAB, D, HEADS, LAYERS = 50257, 768, 12, 12
    HD, POS = 64, positions


def model():
    torch.manual_seed(20261127)
    m = TinyGPT()
    if POS != 32:   # the same weights, the position table grown
        torch.manual_seed(7)
        m.wpe = torch.nn.Embedding(POS, D)
    with torch.no_grad():   # larger than the default init: logits far apart
        for p in m.parameters():
            p.mul_(2.0)
    return m.eval()


def empty_cache():
    return [torch.zeros(SLOTS, HEADS, POS, HD) for _ in range(2 * LAYERS)]


def export(path):
    m = model()
    names = []
    for i in range(LAYERS):
        names += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
    outs = ["logits"]
    for i in range(LAYERS):
        outs += [f"present.{i}.key", f"present.{i}.value"]
    ids = torch.ones((SLOTS, TOKENS), dtype=torch.int64)
    pos = ids if TOKENS == 1 else torch.arange(TOKENS, dtype=torch.int64).reshape(1, TOKENS)
    torch.onnx.export(m, (ids, pos, *empty_cache()), path,
                      input_names=["input_ids", "position_ids"] + names,
                      output_names=outs, opset_version=17)


def greedy(out_dir, n, prompt):
    m = model()
    cache = empty_cache()
    fed, logits_all, new = [], [], []
    with torch.no_grad():
        t = prompt[0]
        for pos in range(min(len(prompt) + n - 1, POS)):
            fed.append(t)
            ids = torch.tensor([[t]], dtype=torch.int64)
            out = m(ids, torch.tensor([[pos]], dtype=torch.int64), *cache)
            logits_all.append(out[0].reshape(-1).numpy())
            cache = list(out[1:])
            if pos + 1 < len(prompt):
                t = prompt[pos + 1]
            else:
                t = int(out[0].reshape(-1).argmax())
                new.append(t)
    if len(new) < n:
        new.append(int(logits_all[-1].argmax()))
    np.save(f"{out_dir}/tokens.npy", np.array(fed, dtype=np.int64))
    np.save(f"{out_dir}/torch_logits.npy", np.stack(logits_all).astype(np.float32))
    print(",".join(str(t) for t in new))


if __name__ == "__main__":
    POS = int(sys.argv[3])
    if "--slots" in sys.argv:
        i = sys.argv.index("--slots")
        SLOTS = int(sys.argv[i + 1])
        del sys.argv[i:i + 2]
    if "--tokens" in sys.argv:
        i = sys.argv.index("--tokens")
        TOKENS = int(sys.argv[i + 1])
        del sys.argv[i:i + 2]
    if sys.argv[1].endswith("-gpt2s"):
        gpt2_small(POS)
    if sys.argv[1].startswith("export"):
        export(sys.argv[2])
    else:
        greedy(sys.argv[2], int(sys.argv[4]), [int(x) for x in sys.argv[5:]])
