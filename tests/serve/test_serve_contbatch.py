# SPDX-License-Identifier: MIT
"""Continuous batching of generations in ipu-serve: the tiny GPT of
tests/gen exported with 2 cache slots and 1024 positions (a long
generation lasts about 1000 device steps), served by /generate and
/generate_stream.  A request that starts while another is mid-generation
joins it at the next step and finishes first; both give the tokens a run
alone gives (ipu-run --generate, itself torch's greedy tokens); eight
requests over the 2 slots are all right; a client that goes away frees its
slot for a queued request at once; a full queue answers 503."""

import json
import pathlib
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_util import BIN, ROOT, Server, Tally, add_model, metric, metrics, run, time_limit  # noqa: E402
from test_serve_generate import SSE, ipu_run_generate, post, sse_events  # noqa: E402

PY = "/usr/bin/python3"
TINY = ROOT / "tests" / "gen" / "tiny_gpt.py"
POS, SLOTS = 1024, 2
PROMPT, NEW = [1, 2, 3], 17
LONG = 1000          # new tokens of a long generation: about 1000 steps
SHORT_PROMPT, SHORT = [4, 5, 6], 5


def build(tmp):
    """The 2-slot decoder and torch's greedy tokens for PROMPT."""
    run([PY, TINY, "export", tmp / "gpt_s2.onnx", POS, "--slots", SLOTS])
    run([BIN / "ipu-compile", "--input-model", tmp / "gpt_s2.onnx",
         "--target", "tiles=32,tile-mem=256KiB", "-o", tmp / "gpt_s2.ipuef"])
    out = run([PY, TINY, "greedy", tmp, POS, NEW, *PROMPT]).stdout.decode()
    return tmp / "gpt_s2.ipuef", [int(t) for t in out.split(",")]


def inflight(s):
    return metric(metrics(s.metrics_url), "ipu_inference_inflight_request_count", "gpt")


def read_all(sse):
    """The tokens of a stream to its end, and its final event."""
    ids = []
    while (e := sse.next()) is not None:
        if e.get("final"):
            assert sse.next() is None
            return ids, e
        assert "error" not in e, e
        ids += e["output_ids"]
    raise AssertionError(f"the stream ended without a final event after {len(ids)} tokens")


def check_curl(url, want):
    p = subprocess.run(["curl", "-sS", "-N", "-H", "Content-Type: application/json",
                        "--data", json.dumps({"input_ids": PROMPT, "parameters": {"max_tokens": NEW}}),
                        url + "/v2/models/gpt/generate_stream"],
                       capture_output=True, timeout=120, check=True)
    ev = sse_events(p.stdout.decode().split("\n"))
    assert [e["output_ids"][0] for e in ev[:-1]] == want, ev
    assert ev[-1]["final"] and ev[-1]["completion_tokens"] == NEW, ev[-1]


def check_python(port, want):
    s = SSE(port, {"input_ids": PROMPT, "parameters": {"max_tokens": NEW}})
    assert s.r.status == 200, s.r.status
    ids, fin = read_all(s)
    s.close()
    assert ids == want and fin["finish_reason"] == "length", (ids, want, fin)


def check_join(s, ref_long, ref_short):
    """A long stream is mid-generation; a short one starts, joins it,
    finishes first (the long one is still running then), and both carry
    the tokens of a run alone."""
    m0 = metrics(s.metrics_url)
    a = SSE(s.port, {"input_ids": PROMPT, "parameters": {"max_tokens": LONG}})
    first = [a.next()["output_ids"][0], a.next()["output_ids"][0]]
    assert first == ref_long[:2], first
    b = SSE(s.port, {"input_ids": SHORT_PROMPT, "parameters": {"max_tokens": SHORT}})
    ids_b, fin_b = read_all(b)
    b.close()
    running = inflight(s)
    ids_a, fin_a = read_all(a)
    a.close()
    assert ids_b == ref_short and fin_b["completion_tokens"] == SHORT, (ids_b, ref_short)
    assert running == 1, f"{running} generations in flight when the short one ended (want the long one)"
    assert first + ids_a == ref_long and fin_a["completion_tokens"] == LONG, fin_a
    assert inflight(s) == 0
    # the short one's 7 steps were the long one's: its 3 prompt steps and 999 after
    m1 = metrics(s.metrics_url)
    steps = metric(m1, "ipu_generate_steps", "gpt") - metric(m0, "ipu_generate_steps", "gpt")
    tokens = metric(m1, "ipu_generate_tokens", "gpt") - metric(m0, "ipu_generate_tokens", "gpt")
    assert (steps, tokens) == (len(PROMPT) + LONG - 1, LONG + SHORT), (steps, tokens)


def check_many(s, n=8):
    """n requests at once over the 2 slots, streams and whole answers."""
    prompts = [[i + 1, (7 * i) % 96, 40 + i] for i in range(n)]
    lens = [3 + 2 * i for i in range(n)]
    refs = [ipu_run_generate(s.model, p, k) for p, k in zip(prompts, lens)]
    got = [None] * n

    def one(i):
        body = {"input_ids": prompts[i], "parameters": {"max_tokens": lens[i]}}
        if i % 2:
            c = SSE(s.port, body)
            got[i] = read_all(c)[0]
            c.close()
        else:
            st, _, j = post(s.url, "/v2/models/gpt/generate", body)
            got[i] = j["output_ids"] if st == 200 else (st, j)

    m0 = metrics(s.metrics_url)
    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(300)
    assert got == refs, (got, refs)
    assert len({tuple(r) for r in refs}) == n
    m1 = metrics(s.metrics_url)
    d = metric(m1, "ipu_generate_tokens", "gpt") - metric(m0, "ipu_generate_tokens", "gpt")
    assert d == sum(lens), (d, sum(lens))


def check_disconnect(s, ref_short):
    """Both slots hold long streams; a request queues; one long stream's
    client goes away: the queued request gets its slot and ends while the
    other long one still runs."""
    a1 = SSE(s.port, {"input_ids": PROMPT, "parameters": {"max_tokens": LONG}})
    assert "index" in a1.next()  # in a slot, not queued
    a2 = SSE(s.port, {"input_ids": [7, 8, 9], "parameters": {"max_tokens": LONG}})
    assert "index" in a2.next()
    out = {}

    def queued():
        out["c"] = post(s.url, "/v2/models/gpt/generate",
                        {"input_ids": SHORT_PROMPT, "parameters": {"max_tokens": SHORT}})
        out["inflight"] = inflight(s)

    t = threading.Thread(target=queued)
    t.start()
    a1.close()
    t.join(120)
    st, _, j = out["c"]
    running = out["inflight"]
    a2.close()
    assert st == 200 and j["output_ids"] == ref_short, (st, j)
    assert running == 1, f"{running} generations in flight when the queued one ended (want 1)"
    log = s.text()
    assert "went away during the generation" in log, log[-2000:]


def check_queue_full(model, repo, ref_short):
    """--max-queue-size 1: both slots busy, one request queued, the next 503."""
    with Server(repo, "--max-queue-size", "1") as s2:
        a1 = SSE(s2.port, {"input_ids": PROMPT, "parameters": {"max_tokens": LONG}})
        assert "index" in a1.next()  # in a slot, not queued
        a2 = SSE(s2.port, {"input_ids": [7, 8, 9], "parameters": {"max_tokens": LONG}})
        assert "index" in a2.next()
        q = SSE(s2.port, {"input_ids": SHORT_PROMPT, "parameters": {"max_tokens": SHORT}})
        assert q.r.status == 200
        st, _, j = post(s2.url, "/v2/models/gpt/generate",
                        {"input_ids": SHORT_PROMPT, "parameters": {"max_tokens": SHORT}})
        a1.close()
        ids, _ = read_all(q)
        q.close()
        a2.close()
        assert st == 503 and "the queue is full" in j["error"], (st, j)
        assert ids == ref_short, ids
        st, _, j = post(s2.url, "/v2/models/gpt/generate",
                        {"input_ids": SHORT_PROMPT, "parameters": {"max_tokens": SHORT}})
        assert st == 200 and j["output_ids"] == ref_short, (st, j)
        assert s2.stop() == 0


def main():
    t = Tally("serve-contbatch")
    time_limit(900)
    with tempfile.TemporaryDirectory(prefix="ipu-serve-cb-") as tmp:
        tmp = pathlib.Path(tmp)
        model, torch_tokens = build(tmp)
        repo = tmp / "repo"
        add_model(repo, "gpt", model)
        ref_long = ipu_run_generate(model, PROMPT, LONG)
        ref_short = ipu_run_generate(model, SHORT_PROMPT, SHORT)
        t.check("ipu-run --generate on the 2-slot decoder gives torch's greedy tokens",
                lambda: ref_long[:NEW] == torch_tokens)
        with Server(repo, "--log-verbose", "2", "--max-queue-size", "8") as s:
            s.model = model
            t.check("/generate_stream read by curl -N: torch's tokens", check_curl, s.url, torch_tokens)
            t.check("/generate_stream read in Python: torch's tokens", check_python, s.port,
                    torch_tokens)
            t.check("a short request joins a long one mid-generation and finishes first",
                    check_join, s, ref_long, ref_short)
            t.check("8 requests over 2 slots: each its run-alone tokens", check_many, s)
            t.check("a client gone mid-stream frees its slot for a queued request",
                    check_disconnect, s, ref_short)
            t.check("SIGTERM: exit 0", lambda: s.stop() == 0)
        t.check("a full queue: 503, then served again", check_queue_full, model, repo, ref_short)
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
