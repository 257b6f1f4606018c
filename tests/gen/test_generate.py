#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ipu.runtime.Runner.generate() and the state methods on a decoder
compiled with its cache as state (tests/gen/check-decoder.sh runs it):

  test_generate.py MODEL.ipuef TORCH_TOKENS.txt TOKENS.npy TORCH_LOGITS.npy
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
