#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ipu.runtime.Runner.generate() and the state methods on a decoder
compiled with its cache as state (tests/gen/check-decoder.sh runs it): the
tokens, the bytes streamed per step (the device's counters: the tokens-only
program when greedy without logits), close() and a second generate() while
one runs:

  test_generate.py MODEL.ipuef TORCH_TOKENS.txt TOKENS.npy TORCH_LOGITS.npy [C_SAMPLED.txt]
"""
import sys
import threading

import numpy as np

import ipu
import ipu.runtime

JOIN_TIMEOUT = 120.0    # seconds: a hang fails the test, a slow machine does not

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
    # stream bytes per step, read from the device's counters between two
    # tokens (the device waits while Python holds one), as test_decoder
    # reads them around one step
    sizes = {t.name: t.size_in_bytes for t in r.get_execute_inputs() + r.get_execute_outputs()}
    tokens_only = sizes["input_ids"] + sizes["position_ids"] + sizes["next_token"]
    with_logits = sum(sizes.values())

    def per_step(**kw):
        def stream():
            c = r.device_counters
            return c["stream_bytes_in"] + c["stream_bytes_out"]
        got, steps = [], set()
        for item in r.generate([1, 2, 3], max_new_tokens=6, **kw):
            now = stream()
            if got:
                steps.add(now - last)
            got.append(item[0] if isinstance(item, tuple) else item)
            last = now
        return got, steps
    got, steps = per_step()
    check(f"greedy: {tokens_only} stream bytes per step (the tokens-only program)",
          steps == {tokens_only} and tokens_only == 24 and got == want[:6], f"{steps} {got}")
    got, steps = per_step(with_logits=True)
    check(f"with_logits: {with_logits} stream bytes per step (Main, the logits)",
          steps == {with_logits} and with_logits > tokens_only and got == want[:6],
          f"{steps} {got}")
    # sampled on the device: ids, position, 2 f32 params and 3 i64 keys
    # in, the token out
    on_device = sizes["input_ids"] + sizes["position_ids"] + 8 + 24 + 8
    got, steps = per_step(temperature=0.8, top_k=20, seed=7)
    check(f"sampling: {on_device} stream bytes per step (on the device)", steps == {on_device},
          repr(steps))
    dev = got
    got, steps = per_step(temperature=0.8, top_k=20, seed=7, host_sampling=True)
    check(f"host_sampling: {with_logits} stream bytes per step (Main, the logits), the same tokens",
          steps == {with_logits} and got == dev, f"{steps} {got} {dev}")
    limit = states[0].shape[-2]
    try:
        list(r.generate(list(range(limit + 1))))
        check("a prompt longer than the cache is refused", False, "no error")
    except ValueError as e:
        check("a prompt longer than the cache is refused", "prompt" in str(e), str(e))
    # one sequence at a time: a second generate() stops the first
    g1 = r.generate([1, 2, 3], max_new_tokens=40)
    first = next(g1)
    again = list(r.generate([1, 2, 3], max_new_tokens=len(want)))
    try:
        next(g1)
        check("a later generate() stops the one before", False, "it went on")
    except ipu.Error as e:
        check("a later generate() stops the one before",
              first == want[0] and again == want and e.code_name == "IPURT_E_CANCELLED",
              f"{first} {again} {e.code_name} {e}")
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



def close_in_thread(r):
    """r.close() on another thread; False if it did not return."""
    t = threading.Thread(target=r.close)
    t.start()
    t.join(JOIN_TIMEOUT)
    return not t.is_alive()


# close() while a generation waits for Python to ask for its next token
r = ipu.runtime.Runner(model)
gen = r.generate([1, 2, 3], max_new_tokens=40)
first = next(gen)
returned = close_in_thread(r)
try:
    next(gen)
    check("close() stops a generation Python holds", False, "it went on")
except ipu.RunnerClosedError as e:
    check("close() stops a generation Python holds", returned and first == want[0] and r.closed,
          f"returned {returned}, {first}, {e}")
try:
    next(r.generate([1, 2, 3]))
    check("generate() on a closed Runner is refused", False, "no error")
except ipu.RunnerClosedError:
    check("generate() on a closed Runner is refused", True)

# close() from another thread while one iterates: it stops there, or the
# generation ends first; either way the tokens are torch's and nothing hangs
r = ipu.runtime.Runner(model)
started = threading.Event()
seen, outcome = [], []


def consume():
    try:
        for tok in r.generate([1, 2, 3], max_new_tokens=len(want)):
            seen.append(tok)
            started.set()
        outcome.append("ended")
    except ipu.RunnerClosedError:
        outcome.append("closed")
    except Exception as e:  # noqa: BLE001 - reported below
        outcome.append(repr(e))
    started.set()


c = threading.Thread(target=consume)
c.start()
started.wait(JOIN_TIMEOUT)
returned = close_in_thread(r)
c.join(JOIN_TIMEOUT)
check("close() while another thread iterates: no hang, torch's tokens so far",
      returned and not c.is_alive() and outcome in (["ended"], ["closed"]) and
      seen == want[:len(seen)] and seen, f"returned {returned}, {outcome}, {seen}")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
