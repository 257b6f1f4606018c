#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ipu.runtime.Runner.generate() and the state methods on a decoder
compiled with its cache as state (tests/gen/check-decoder.sh runs it):

  test_generate.py MODEL.ipuef TORCH_TOKENS.txt TOKENS.npy TORCH_LOGITS.npy [C_SAMPLED.txt]
"""
import sys

import numpy as np

import ipu.runtime

model, torch_tokens, fed_path, logits_path = sys.argv[1:5]
want = [int(t) for t in open(torch_tokens).read().split(",")]
fed = np.load(fed_path)
ref = np.load(logits_path)
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    print(("ok - " if ok else "not ok - ") + name + ("" if ok else ": " + detail))
    passed += bool(ok)
    failed += not ok


with ipu.runtime.Runner(model) as r:
    states = r.get_states()
    check("get_states lists the cache", len(states) == 4 and
          states[0].name == "past_key_values.0.key", repr(states))
    got = list(r.generate([1, 2, 3], max_new_tokens=len(want)))
    check("generate yields torch's greedy tokens", got == want, f"{got} != {want}")
    # with the logits: the step after the prompt's last token is step 2
    worst = 0.0
    for i, (tok, logits) in enumerate(r.generate([1, 2, 3], max_new_tokens=5, with_logits=True)):
        worst = max(worst, float(np.abs(logits - ref[2 + i]).max()))
    check("with_logits gives torch's logits", worst <= 1e-4, f"max diff {worst}")
    got = list(r.generate([1, 2, 3], max_new_tokens=40, stop_ids=[want[4]]))
    check("a stop id ends it, yielded", got[-1] == want[4] and len(got) <= 5, repr(got))
    gen = r.generate([1, 2, 3], max_new_tokens=40)
    first = [next(gen), next(gen)]
    gen.close()
    check("leaving early stops", first == want[:2], repr(first))
    # sampling: seeded, within the top k; top_k 1 is greedy
    kw = dict(max_new_tokens=16, temperature=0.8, top_k=20, top_p=0.9)
    a = list(r.generate([1, 2, 3], seed=7, **kw))
    b = list(r.generate([1, 2, 3], seed=7, **kw))
    c = list(r.generate([1, 2, 3], seed=8, **kw))
    check("sampling: the same seed, the same tokens; another, others",
          a == b and a != c and len(a) == 16, f"{a} {b} {c}")
    inside = all(int((lg > lg[t]).sum()) < 20
                 for t, lg in r.generate([1, 2, 3], seed=9, with_logits=True, **kw))
    check("sampling: every token among the top 20", inside)
    g1 = list(r.generate([1, 2, 3], max_new_tokens=len(want), temperature=1.0, top_k=1))
    check("sampling with top_k 1 is greedy", g1 == want, f"{g1} != {want}")
    if len(sys.argv) > 5:   # ipu-run --generate's tokens for seed 7 (the same sampler)
        c_tokens = [int(t) for t in open(sys.argv[5]).read().split(",")]
        py_tokens = list(r.generate([1, 2, 3], seed=7, **dict(kw, max_new_tokens=len(c_tokens))))
        check("sampling: the same tokens as ipu-run for the same seed", py_tokens == c_tokens,
              f"{py_tokens} != {c_tokens}")
    # the cache after 3 steps: positions 0..2 written, the rest zeros
    list(r.generate([1, 2, 3], max_new_tokens=1))
    k = r.read_state("past_key_values.0.key")
    written = np.abs(k).reshape(k.shape[1], k.shape[2], -1).max(axis=(0, 2)) > 0
    check("read_state: the cache holds the 3 prompt steps",
          list(np.nonzero(written)[0]) == [0, 1, 2], repr(written))
    r.write_state("past_key_values.0.key", np.ones_like(k))
    check("write_state then read_state", bool((r.read_state("past_key_values.0.key") == 1).all()))
    r.reset_state()
    check("reset_state zeros it", not r.read_state("past_key_values.0.key").any())
    try:
        r.read_state("nope")
        check("an unknown state is refused", False, "no error")
    except ValueError as e:
        check("an unknown state is refused", "nope" in str(e), str(e))

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
