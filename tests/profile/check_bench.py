#!/usr/bin/python3
"""Checks `ipu-run --json` benchmark statistics against the request times
the same run measured.

usage: check_bench.py RUN.json TIMES.json TRACE.json

TIMES.json is --export-times (every timed request's start and latency as
ipu-run measured it); TRACE.json is --profile of the same run (the Model
Runtime's own request events and the engine's per-step host times).
numpy recomputes every statistic; the trace bounds each latency from the
inside and gives the device-run share of the host time split.  Prints what
it checked; exits 1 on the first failure."""
import json
import sys

import numpy as np


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def close(a, b, what, rel=1e-9):
    if not abs(a - b) <= rel * max(abs(a), abs(b), 1e-12):
        fail(f"{what}: {a} != {b}")


run = json.load(open(sys.argv[1]))
times = json.load(open(sys.argv[2]))
trace = json.load(open(sys.argv[3]))

lat = np.array([r["latency_us"] for r in times["requests"]])
start = np.array([r["start_us"] for r in times["requests"]])
n = len(lat)
if n != run["iterations"] or n == 0:
    fail(f"{n} exported requests, --json says {run['iterations']}")
s = run["latency_us"]
close(s["min"], lat.min(), "min")
close(s["max"], lat.max(), "max")
close(s["mean"], lat.mean(), "mean", 1e-6)
close(s["median"], float(np.median(lat)), "median")
for p in (90, 95, 99):
    close(s[f"p{p}"], float(np.percentile(lat, p, method="inverted_cdf")), f"p{p}")
close(run["latency_p50_us"], s["median"], "latency_p50_us")
close(run["latency_p99_us"], s["p99"], "latency_p99_us")
print(f"ok - min/mean/median/p90/p95/p99/max of {n} requests equal numpy's on the exported times")

elapsed = times["elapsed_us"]
close(run["elapsed_s"] * 1e6, elapsed, "elapsed")
close(run["requests_per_s_1"], n / run["elapsed_s"], "requests/s (1 in flight)")
if not (np.all(np.diff(start) >= 0) and np.all(start[:-1] + lat[:-1] <= start[1:] + 1e-3)):
    fail("requests of the latency run overlap: they must run one at a time")
if lat.sum() > elapsed + 1e-3 or start[-1] + lat[-1] > elapsed + 1e-3:
    fail("the requests take longer than the run")
spr = run["samples_per_request"]
close(run["samples_per_s_1"], run["requests_per_s_1"] * spr, "samples/s (1 in flight)")
close(run["samples_per_s_inflight"], run["requests_per_s_inflight"] * spr, "samples/s (in flight)")
print(f"ok - {n} requests one at a time inside {elapsed / 1e3:.1f} ms; requests/s = n / elapsed; samples/s = requests/s x {spr}")

# the Model Runtime's view of the same requests: queued -> done lies inside
# the caller's execute() call, so it is never longer
ev = [e for e in trace["traceEvents"] if e.get("cat") == "request" and e["name"].startswith("request ")]
span = {}
for e in ev:
    rid = int(e["id"], 16)
    span.setdefault(rid, [None, None])[0 if e["ph"] == "b" else 1] = e["ts"]
first_timed = 1 + run["warmup"]
expect = first_timed + n + (n if run["inflight"] > 1 else 0)
if len(span) != expect:
    fail(f"{len(span)} requests in the trace, expected first + {run['warmup']} warm-up + {n} + throughput run = {expect}")
for k in range(n):
    b, e = span[first_timed + k]
    if e - b > lat[k] + 1e-3:
        fail(f"request {k}: the runtime saw {e - b} us, longer than the {lat[k]} us measured around it")
print(f"ok - the runtime's queued-to-done span of each of the {n} timed requests is within its measured latency")

# host time split: device run = the engine's host time of compute, exchange
# and sync steps of those requests' programs, per request
split = run["host_time_per_request_us"]
host = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e["pid"] == 2 and e["tid"] == 1]
progs, cur = [], None
for e in host:
    if e["cat"] == "program":
        cur = {"compute": 0.0, "in": 0.0, "out": 0.0}
        progs.append(cur)
    elif e["cat"] in ("compute", "exchange", "sync"):
        cur["compute"] += e["dur"]
timed = progs[first_timed:first_timed + n]
dev = sum(p["compute"] for p in timed) / n
close(split["device_run"], dev, "device run per request (trace)", 1e-3)
parts = split["input_copy"] + split["device_run"] + split["output_copy"]
if min(split.values()) < 0:
    fail(f"negative share in {split}: the steps run inside the requests")
close(parts + split["runtime"], s["mean"], "the split adds up to the mean latency", 1e-6)
print(f"ok - host time split {split} adds up to the mean latency; device run equals the trace's step times")
