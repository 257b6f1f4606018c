# SPDX-License-Identifier: MIT
"""ipu-serve's generate extension on the tiny GPT of tests/gen (exported by
torch with its key/value cache, compiled with the cache as device state):
/generate gives torch's greedy tokens and ipu-run --generate's; the
/generate_stream events, read by curl -N and by a Python client event by
event, carry the same tokens one per event and a final event; stop tokens,
seeded sampling, several requests at once, bad input refused with 400, a
model that is not a decoder refused, and a client that goes away in the
middle of a stream."""

import http.client as httpc
import json
import pathlib
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from serve_util import (BIN, ROOT, Server, Tally, add_model, http, metric, metrics, run,  # noqa: E402
                        time_limit)

PY = "/usr/bin/python3"
TINY = ROOT / "tests" / "gen" / "tiny_gpt.py"
POS, VOCAB = 32, 96
PROMPT, NEW = [1, 2, 3], 17


def build(tmp):
    """The decoder (.ipuef), torch's greedy tokens, and a model that is not a decoder."""
    run([PY, TINY, "export", tmp / "tiny_gpt.onnx", POS])
    run([BIN / "ipu-compile", "--input-model", tmp / "tiny_gpt.onnx",
         "--target", "tiles=16,tile-mem=256KiB", "-o", tmp / "tiny_gpt.ipuef"])
    out = run([PY, TINY, "greedy", tmp, POS, NEW, *PROMPT]).stdout.decode()
    torch_tokens = [int(t) for t in out.split(",")]
    run([BIN / "mlp-example", "--save", tmp / "mlp.ipuef", "--iterations", "1"])
    return tmp / "tiny_gpt.ipuef", torch_tokens, tmp / "mlp.ipuef"


def ipu_run_generate(model, prompt, new, *extra):
    out = run([BIN / "ipu-run", model, "--generate", "--prompt-ids", ",".join(map(str, prompt)),
               "--max-new-tokens", new, "--json", *extra]).stdout
    return json.loads(out)["tokens"]


def post(url, path, body):
    st, hdr, raw = http("POST", url + path, body, {"Content-Type": "application/json"})
    return st, hdr, json.loads(raw) if raw else None


def sse_events(lines):
    """The data of each event ('data: ' lines), comments skipped."""
    out = []
    for line in lines:
        if line.startswith("data: "):
            out.append(json.loads(line[6:]))
        else:
            assert line == "" or line.startswith(":"), line
    return out


def check_generate(url, want):
    st, hdr, j = post(url, "/v2/models/gpt/generate",
                      {"input_ids": PROMPT, "parameters": {"max_tokens": NEW}, "id": "r1"})
    assert st == 200, (st, j)
    assert hdr["Content-Type"] == "application/json", hdr
    assert j["output_ids"] == want, (j, want)
    assert j["model_name"] == "gpt" and j["model_version"] == "1" and j["id"] == "r1", j
    assert j["prompt_tokens"] == 3 and j["completion_tokens"] == NEW, j
    assert j["finish_reason"] == "length", j
    # the version in the path, max_new_tokens as the limit's other name
    st, _, j = post(url, "/v2/models/gpt/versions/1/generate",
                    {"input_ids": PROMPT, "parameters": {"max_new_tokens": 5}})
    assert st == 200 and j["output_ids"] == want[:5], (st, j)


def check_default_and_cache(url, want):
    # no limit given: 16 new tokens
    st, _, j = post(url, "/v2/models/gpt/generate", {"input_ids": PROMPT})
    assert st == 200 and j["output_ids"] == want[:16], (st, j)
    # the whole cache: 3 prompt positions, then 30 new tokens (the last needs no step)
    st, _, j = post(url, "/v2/models/gpt/generate",
                    {"input_ids": PROMPT, "parameters": {"max_tokens": POS - 3 + 1}})
    assert st == 200 and len(j["output_ids"]) == 30 and j["output_ids"][:NEW] == want, (st, j)
    # a prompt that fills the cache leaves room for one token
    st, _, j = post(url, "/v2/models/gpt/generate", {"input_ids": [5] * POS})
    assert st == 200 and len(j["output_ids"]) == 1, (st, j)


def check_curl_stream(url, want):
    p = subprocess.run(["curl", "-sS", "-N", "-D", "-", "-H", "Content-Type: application/json",
                        "--data", json.dumps({"input_ids": PROMPT, "parameters": {"max_tokens": NEW}}),
                        url + "/v2/models/gpt/generate_stream"],
                       capture_output=True, timeout=120, check=True)
    head, _, body = p.stdout.decode().partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 200"), head
    assert "content-type: text/event-stream" in head.lower(), head
    assert "transfer-encoding: chunked" in head.lower(), head
    ev = sse_events(body.split("\n"))
    assert len(ev) == NEW + 1, ev
    assert [e["output_ids"][0] for e in ev[:-1]] == want, ev
    assert [e["index"] for e in ev[:-1]] == list(range(NEW)), ev
    assert all(len(e["output_ids"]) == 1 and e["model_name"] == "gpt" for e in ev[:-1]), ev
    fin = ev[-1]
    assert fin["final"] and fin["output_ids"] == [] and fin["completion_tokens"] == NEW, fin
    assert fin["finish_reason"] == "length", fin


class SSE:
    """A Python client reading the event stream event by event."""

    def __init__(self, port, body, path="/v2/models/gpt/generate_stream"):
        self.c = httpc.HTTPConnection("127.0.0.1", port, timeout=60)
        self.c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        self.r = self.c.getresponse()

    def next(self):
        """The next event's data, or None at the end of the stream."""
        while True:
            line = self.r.readline()
            if not line:
                return None
            line = line.decode().rstrip("\n")
            if line.startswith("data: "):
                data = json.loads(line[6:])
                assert self.r.readline() == b"\n"
                return data
            assert line == "" or line.startswith(":"), line

    def close(self):
        self.c.close()


def check_python_stream(port, want):
    s = SSE(port, {"input_ids": PROMPT, "parameters": {"max_tokens": NEW}})
    assert s.r.status == 200, s.r.status
    assert s.r.getheader("Content-Type").startswith("text/event-stream"), s.r.getheaders()
    got = []
    for k in range(NEW):
        e = s.next()
        assert e is not None and e["index"] == k and len(e["output_ids"]) == 1, e
        got += e["output_ids"]
    fin = s.next()
    assert fin["final"] and fin["completion_tokens"] == NEW, fin
    assert s.next() is None
    s.close()
    assert got == want, (got, want)


def check_stop(url, want):
    stop = want[4]
    k = want.index(stop)
    for params in ({"stop_token_ids": [stop, 95]}, {"stop": stop}, {"stop": [stop]}):
        params["max_tokens"] = NEW
        st, _, j = post(url, "/v2/models/gpt/generate", {"input_ids": PROMPT, "parameters": params})
        assert st == 200, (st, j)
        assert j["output_ids"] == want[:k + 1] and j["finish_reason"] == "stop", (params, j)


def check_sampling(url, model, want):
    # sampling that can only pick the most likely token is greedy
    st, _, j = post(url, "/v2/models/gpt/generate", {"input_ids": PROMPT, "parameters": {
        "max_tokens": NEW, "temperature": 0.7, "top_k": 1, "seed": 3}})
    assert st == 200 and j["output_ids"] == want, (st, j)
    # seeded: ipu-run's tokens for the same seed, twice
    ref = ipu_run_generate(model, PROMPT, NEW, "--temperature", "1.5", "--top-p", "0.9", "--seed", "11")
    body = {"input_ids": PROMPT, "parameters": {"max_tokens": NEW, "temperature": 1.5,
                                                "top_p": 0.9, "seed": 11}}
    for _ in range(2):
        st, _, j = post(url, "/v2/models/gpt/generate", body)
        assert st == 200 and j["output_ids"] == ref, (st, j, ref)
    assert ref != want  # the check above could tell sampling from greedy


def check_concurrent(url, port, model, name="gpt"):
    """Eight generations and streams at once, each its own sequence."""
    prompts = [[i + 1, (7 * i) % VOCAB, 40 + i] for i in range(8)]
    refs = [ipu_run_generate(model, p, 12) for p in prompts]
    got = [None] * len(prompts)

    def one(i):
        if i % 2:
            s = SSE(port, {"input_ids": prompts[i], "parameters": {"max_tokens": 12}},
                    f"/v2/models/{name}/generate_stream")
            ids = []
            while (e := s.next()) is not None and not e.get("final"):
                ids += e["output_ids"]
            s.close()
            got[i] = ids
        else:
            st, _, j = post(url, f"/v2/models/{name}/generate",
                            {"input_ids": prompts[i], "parameters": {"max_tokens": 12}})
            got[i] = j["output_ids"] if st == 200 else (st, j)

    ts = [threading.Thread(target=one, args=(i,)) for i in range(len(prompts))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert got == refs, (got, refs)
    assert len({tuple(r) for r in refs}) > 1  # different sequences, not one answer repeated


def check_bad_input(url):
    cases = [
        ("not JSON", b"{", "JSON"),
        ("a list", [1, 2], "JSON object"),
        ("no input_ids", {"parameters": {}}, "no input_ids"),
        ("text_input", {"text_input": "hello"}, "tokenizer"),
        ("unknown field", {"input_ids": [1], "prompt": "x"}, "unknown field 'prompt'"),
        ("input_ids a string", {"input_ids": "1 2 3"}, "list of token ids"),
        ("input_ids of strings", {"input_ids": ["1"]}, "input_ids[0] must be an integer"),
        ("input_ids of floats", {"input_ids": [1, 2.5]}, "input_ids[1] must be an integer"),
        ("input_ids of bools", {"input_ids": [True]}, "must be an integer"),
        ("empty prompt", {"input_ids": []}, "empty"),
        ("negative id", {"input_ids": [1, -1]}, "input_ids[1] is -1, must be within 0..95"),
        ("id past the vocabulary", {"input_ids": [96]}, "within 0..95"),
        ("prompt longer than the cache", {"input_ids": [1] * (POS + 1)},
         "the prompt has 33 tokens, the model's cache holds 32 positions"),
        ("max_tokens past the cache", {"input_ids": PROMPT, "parameters": {"max_tokens": 31}},
         "at most 30 new tokens"),
        ("max_tokens 0", {"input_ids": PROMPT, "parameters": {"max_tokens": 0}}, "within 1.."),
        ("max_tokens a string", {"input_ids": PROMPT, "parameters": {"max_tokens": "5"}},
         "max_tokens must be an integer"),
        ("both limits", {"input_ids": PROMPT, "parameters": {"max_tokens": 5, "max_new_tokens": 5}},
         "give one of"),
        ("negative temperature", {"input_ids": PROMPT, "parameters": {"temperature": -1}},
         "temperature is -1"),
        ("top_p past 1", {"input_ids": PROMPT, "parameters": {"top_p": 1.5}}, "top_p is 1.5"),
        ("stop strings", {"input_ids": PROMPT, "parameters": {"stop": ["</s>"]}}, "must be an integer"),
        ("unknown parameter", {"input_ids": PROMPT, "parameters": {"beam_width": 2}},
         "unknown parameter 'beam_width'"),
        ("parameters not an object", {"input_ids": PROMPT, "parameters": [1]}, "JSON object"),
    ]
    for name, body, want in cases:
        for ep in ("generate", "generate_stream"):
            st, hdr, raw = http("POST", url + "/v2/models/gpt/" + ep, body,
                                {"Content-Type": "application/json"})
            assert st == 400, (name, ep, st, raw)
            assert hdr["Content-Type"] == "application/json", (name, ep, hdr)
            assert want in json.loads(raw)["error"], (name, ep, raw)
    st, _, raw = http("GET", url + "/v2/models/gpt/generate")
    assert st == 405, (st, raw)
    st, _, raw = http("POST", url + "/v2/models/nope/generate", {"input_ids": [1]})
    assert st == 404, (st, raw)


def check_not_decoder(url):
    for ep in ("generate", "generate_stream"):
        st, _, j = post(url, "/v2/models/mlp/" + ep, {"input_ids": [1]})
        assert st == 400 and "is not a decoder" in j["error"], (ep, st, j)
    # its infer path is as before
    st, _, j = post(url, "/v2/models/mlp/infer", {"inputs": [
        {"name": "x", "datatype": "FP32", "shape": [16, 784], "data": [0.5] * (16 * 784)}]})
    assert st == 200 and j["outputs"][0]["shape"] == [16, 10], (st, j)


def check_disconnect(url, port, want):
    """Clients that go away after two events, and one before any: the
    server stays up, answers the next requests right and (under ASan) leaks
    nothing at its exit."""
    for _ in range(3):
        s = SSE(port, {"input_ids": PROMPT, "parameters": {"max_tokens": POS - 2}})
        assert s.next()["output_ids"] == want[:1]
        assert s.next()["output_ids"] == want[1:2]
        s.close()
    for _ in range(3):
        c = httpc.HTTPConnection("127.0.0.1", port, timeout=60)
        c.request("POST", "/v2/models/gpt/generate_stream",
                  json.dumps({"input_ids": PROMPT, "parameters": {"max_tokens": POS - 2}}),
                  {"Content-Type": "application/json"})
        c.close()
    check_python_stream(port, want)
    st, _, j = post(url, "/v2/models/gpt/generate", {"input_ids": PROMPT, "parameters": {"max_tokens": NEW}})
    assert st == 200 and j["output_ids"] == want, (st, j)


def check_metrics(s, want):
    """One generation: one more request and execution, its tokens counted."""
    m0 = metrics(s.metrics_url)
    st, _, j = post(s.url, "/v2/models/gpt/generate", {"input_ids": PROMPT, "parameters": {"max_tokens": 9}})
    assert st == 200 and j["output_ids"] == want[:9], (st, j)
    m1 = metrics(s.metrics_url)
    for name, d in (("ipu_generate_tokens", 9), ("ipu_inference_request_success", 1),
                    ("ipu_inference_exec_count", 1), ("ipu_inference_count", 1)):
        assert metric(m1, name, "gpt") - metric(m0, name, "gpt") == d, (name, m0, m1)
    assert metric(m1, "ipu_generate_tokens", "mlp") == 0
    assert metric(m1, "ipu_inference_inflight_request_count", "gpt") == 0


def check_metadata(url):
    st, _, raw = http("GET", url + "/v2")
    assert st == 200 and "generate" in json.loads(raw)["extensions"], raw
    st, _, raw = http("GET", url + "/v2/models/gpt")
    j = json.loads(raw)
    assert st == 200 and [i["name"] for i in j["inputs"]] == ["input_ids", "position_ids"], j


def main():
    t = Tally("serve-generate")
    time_limit(900)
    with tempfile.TemporaryDirectory(prefix="ipu-serve-gen-") as tmp:
        tmp = pathlib.Path(tmp)
        model, torch_tokens, mlp = build(tmp)
        repo = tmp / "repo"
        add_model(repo, "gpt", model)
        add_model(repo, "mlp", mlp)
        # two instances, each on its own device with its own cache: two sequences at once
        add_model(repo, "gpt2", model, config="instance_group: [ { count: 2 } ]\n")
        ref = ipu_run_generate(model, PROMPT, NEW)
        t.check("ipu-run --generate gives torch's greedy tokens", lambda: ref == torch_tokens)
        with Server(repo, "--log-verbose", "1") as s:
            t.check("/generate: torch's and ipu-run's greedy tokens", check_generate, s.url, torch_tokens)
            t.check("/generate: the default limit and the whole cache", check_default_and_cache,
                    s.url, torch_tokens)
            t.check("/generate_stream read by curl -N", check_curl_stream, s.url, torch_tokens)
            t.check("/generate_stream read event by event in Python", check_python_stream, s.port,
                    torch_tokens)
            t.check("stop tokens", check_stop, s.url, torch_tokens)
            t.check("sampling: top_k 1 is greedy, a seed gives ipu-run's tokens", check_sampling,
                    s.url, model, torch_tokens)
            t.check("eight generations at once", check_concurrent, s.url, s.port, model)
            t.check("eight generations at once on two instances", check_concurrent, s.url, s.port,
                    model, "gpt2")
            t.check("bad input: 400 with the reason", check_bad_input, s.url)
            t.check("a model that is not a decoder: 400, its infer unchanged", check_not_decoder, s.url)
            t.check("clients that go away mid-stream", check_disconnect, s.url, s.port, torch_tokens)
            t.check("/v2 lists the generate extension", check_metadata, s.url)
            t.check("metrics: a generation's request, execution and tokens", check_metrics, s,
                    torch_tokens)
            t.check("SIGTERM: exit 0", lambda: s.stop() == 0)
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
