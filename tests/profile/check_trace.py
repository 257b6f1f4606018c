#!/usr/bin/python3
"""Validates an `ipu-run --profile` trace against the Chrome trace event
format's rules and against the same run's own figures.

usage: check_trace.py TRACE.json RUN.json MODEL.onnx|- [--no-debug]

A model split over IPUs (RUN.json has "group") is checked by
check_group(): one process per IPU on the group's modelled clock and the
links' transfers, against ipu-run's own group figures.

RUN.json is `ipu-run --json` of the same run (its modelled cycles per
request come from the engine's counters around one request, a path
independent of the per-step events).  MODEL.onnx gives the node names the
trace must speak in, and the nodes that must appear: every node of an op
that always computes (computing_nodes()); with --no-debug the model had no
debug blob and steps must be named by index.  Prints what it checked; exits 1 on the first
failure."""
import json
import sys
from collections import defaultdict

EPS_US = 1e-6  # float rounding of microsecond timestamps


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def nested_and_ordered(events, what):
    """X events of one track: in time order, each either inside the
    enclosing open one or after it (a proper tree)."""
    stack = []
    last_ts = -1.0
    for e in events:
        ts, end = e["ts"], e["ts"] + e["dur"]
        check(e["dur"] >= 0, f"{what}: negative duration in {e}")
        check(ts >= last_ts - EPS_US, f"{what}: {e['name']} at {ts} before the previous event ({last_ts})")
        last_ts = ts
        while stack and stack[-1] <= ts + EPS_US:
            stack.pop()
        if stack:
            check(end <= stack[-1] + EPS_US, f"{what}: {e['name']} [{ts}, {end}] overlaps its parent ending {stack[-1]}")
        stack.append(end)


def onnx_node_of(name, onnx_names):
    """The ONNX node a lowered node came from: itself, or NAME/Op... for
    the pieces of one the compiler split (ONNX names may hold '/')."""
    if name in onnx_names:
        return name
    for i in range(len(name) - 1, 0, -1):
        if name[i] == "/" and name[:i] in onnx_names:
            return name[:i]
    return None


# Ops that may run without a compute set of their own: views and copies the
# lowering resolves to exchanges or to nothing, and activations it folds
# into their producer's store (Documentation/compiler/guide.md, Lowering).
MAY_NOT_COMPUTE = {
    "Flatten", "Reshape", "Squeeze", "Unsqueeze", "Identity", "Transpose", "Concat", "Slice", "Split",
    "Gather", "Expand", "Dropout", "Cast", "Shape", "Constant", "Relu", "Clip", "Add",
}


def computing_nodes(graph):
    """The model's nodes that must own at least one compute set: every node
    not of an op the lowering may fold away (MAY_NOT_COMPUTE) and not
    computed from constants only (folded at compile time)."""
    const = {t.name for t in graph.initializer}
    want = set()
    for n in graph.node:
        if n.op_type == "Constant":
            const.update(n.output)
            continue
        if all(i in const or not i for i in n.input):
            const.update(n.output)
            continue
        if n.op_type not in MAY_NOT_COMPUTE:
            want.add(n.name)
    return want


def check_requests(evs, run):
    """Requests: queued -> running -> done, as many as ipu-run ran."""
    reqs = defaultdict(list)
    for e in evs:
        if e["ph"] in "be" and e.get("cat") == "request":
            reqs[e["id"]].append(e)
    expect_req = 1 + run["warmup"] + run["iterations"] * (2 if run["inflight"] > 1 else 1)
    check(len(reqs) == expect_req, f"{len(reqs)} requests in the trace, ipu-run ran {expect_req}")
    for rid, seq in reqs.items():
        shape = [(e["ph"], e["name"].split(" ")[0]) for e in seq]
        check(shape == [("b", "request"), ("b", "queued"), ("e", "queued"), ("b", "running"), ("e", "running"), ("e", "request")],
              f"request {rid}: events {shape}")
        ts = [e["ts"] for e in seq]
        check(ts == sorted(ts), f"request {rid}: events out of order {ts}")
        check(seq[-1]["args"]["status"] == 0, f"request {rid} failed")
    print(f"ok - {len(reqs)} requests, each queued then running then done, in time order")


def check_group(evs, names, tracks, other, run):
    """A split model: one track per IPU whose steps add up to the engines'
    counters, link slices whose bytes and count are ipu-run's link figures,
    each starting as its sender's run ends and ending before its receiver's
    run starts, a timeline ending at ipu-run's pipelined modelled cycles,
    and stages that overlap when several requests were in flight."""
    g, og = run["group"], other["group"]
    ctr = other["engine_counters"]
    ghz = other["clock_ghz"]
    us = lambda c: c / (ghz * 1e3)
    n = g["ipus"]
    ipu_pids = sorted(pid for (pid, tid), nm in names.items() if tid == 0 and nm.startswith("IPU ") and " of " in nm)
    check(len(ipu_pids) == n, f"{len(ipu_pids)} IPU processes, the group has {n}")
    check(og["ipus"] == n, f"otherData says {og['ipus']} IPUs")
    runs = {}
    by_cat = defaultdict(int)
    prog_cycles = ncs = xbytes = 0
    for k, pid in enumerate(ipu_pids):
        check(names[(pid, 0)].startswith(f"IPU {k} of {n}"), f"process {pid} is {names[(pid, 0)]}, not IPU {k}")
        tev = tracks[(pid, 1)]
        programs = [e for e in tev if e["cat"] == "program"]
        check(len(programs) == g["requests"], f"IPU {k}: {len(programs)} runs, ipu-run says {g['requests']} requests")
        end = -1.0
        for e in tev:
            c = e["args"]["cycles"]
            if e["cat"] == "program":
                end = e["ts"] + e["dur"]
                prog_cycles += c
                check(abs(e["dur"] - us(c - e["args"]["link_cycles"])) < 1e-6 * max(1.0, e["dur"]), f"IPU {k} {e['name']}: duration is not its cycles without its link copies")
                continue
            check(e["ts"] + e["dur"] <= end + EPS_US, f"IPU {k}: step {e['name']} outside any program run")
            by_cat[e["cat"]] += c
            want = 0 if "link" in e["args"] else us(c)
            check(abs(e["dur"] - want) < 1e-6 * max(1.0, e["dur"]), f"IPU {k} {e['name']}: duration {e['dur']} us is not {want}")
            ncs += e["cat"] == "compute"
            xbytes += e["args"]["bytes"] if e["cat"] == "exchange" else 0
        runs[k] = programs
    for cat in ("compute", "exchange", "stream", "sync"):
        check(by_cat[cat] == ctr[f"{cat}_cycles"], f"{cat}: {by_cat[cat]} cycles over the IPUs, the counters say {ctr[cat + '_cycles']}")
    check(prog_cycles == ctr["cycles"], f"program cycles {prog_cycles} != the counters' {ctr['cycles']}")
    check(ncs == ctr["compute_sets"] and xbytes == ctr["exchange_bytes"], "compute sets or exchange bytes do not match the counters")
    print(f"ok - {n} IPU tracks of {g['requests']} runs each; their steps add up to the engines' counters ({by_cat['compute']} compute cycles)")

    links = [e for e in evs if e["ph"] == "X" and e.get("cat") == "link"]
    check(links, "no link slices")
    lbytes = sum(e["args"]["bytes"] for e in links)
    check(lbytes == g["link_bytes"] == og["link_bytes"], f"link slices carry {lbytes} bytes, ipu-run --json says {g['link_bytes']}")
    check(len(links) == g["link_transfers"], f"{len(links)} link slices, ipu-run says {g['link_transfers']} transfers")
    for e in links:
        a = e["args"]
        check(a["cycles"] == 2000 + -(-a["bytes"] // 240), f"{e['name']}: {a['cycles']} cycles for {a['bytes']} bytes")
        check(abs(e["dur"] - us(a["cycles"])) < 1e-6 * max(1.0, e["dur"]), f"{e['name']}: duration is not its cycles")
        src, dst = runs[a["src_ipu"]][a["run"]], runs[a["dst_ipu"]][a["run"]]
        check(abs(e["ts"] - (src["ts"] + src["dur"])) < 1e-6 * max(1.0, e["ts"]), f"{e['name']} run {a['run']} does not start as IPU {a['src_ipu']}'s run ends")
        check(dst["ts"] >= e["ts"] + e["dur"] - 1e-6 * max(1.0, dst["ts"]), f"IPU {a['dst_ipu']}'s run {a['run']} starts before its link data arrived")
    print(f"ok - {len(links)} link slices carry {lbytes} bytes = ipu-run --json's link bytes, each from its sender's run end to before its receiver's run")

    last = max(p["ts"] + p["dur"] for ps in runs.values() for p in ps)
    check(abs(last - us(g["modelled_cycles_pipelined"])) < 1e-3, f"the timeline ends at {last} us, ipu-run's pipelined clock at {us(g['modelled_cycles_pipelined'])}")
    check(other["modelled_cycles"] == og["modelled_cycles_pipelined"] == g["modelled_cycles_pipelined"], "modelled cycles differ from ipu-run's pipelined clock")
    overlaps = sum(1 for k in runs for j in runs if k < j for a in runs[k] for b in runs[j]
                   if min(a["ts"] + a["dur"], b["ts"] + b["dur"]) - max(a["ts"], b["ts"]) > EPS_US)
    if run["inflight"] > 1:
        check(overlaps > 0, "several requests in flight but no two IPUs' runs overlap")
    print(f"ok - the timeline ends at ipu-run's pipelined {g['modelled_cycles_pipelined']} cycles; {overlaps} pairs of stage runs overlap")
    check_requests(evs, run)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    no_debug = "--no-debug" in sys.argv
    trace_path, run_path, model_path = args
    with open(trace_path) as f:
        trace = json.load(f)  # well-formed, or this raises
    run = json.load(open(run_path))
    check(isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list), "no traceEvents list")
    evs = trace["traceEvents"]
    other = trace["otherData"]
    ctr = other["engine_counters"]
    print(f"ok - well-formed JSON, {len(evs)} events")

    for e in evs:
        check(e.get("ph") in ("M", "X", "b", "e"), f"unexpected phase in {e}")
        check(isinstance(e.get("pid"), int), f"no pid in {e}")
        if e["ph"] != "M":
            check(isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0, f"bad ts in {e}")
            check(isinstance(e.get("name"), str) and e["name"], f"no name in {e}")
        if e["ph"] == "X":
            check(isinstance(e.get("tid"), int) and isinstance(e.get("dur"), (int, float)), f"bad X event {e}")
    names = {(e["pid"], e.get("tid", 0)): e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"].endswith("_name")}
    check(any("modelled" in n for n in names.values()), "no modelled device track named")
    print("ok - every event has the fields its phase needs; tracks named:", sorted(names.values()))

    tracks = defaultdict(list)
    for e in evs:
        if e["ph"] == "X":
            tracks[(e["pid"], e["tid"])].append(e)
    for key, tev in tracks.items():
        nested_and_ordered(tev, f"track {names.get(key, key)}")
    print(f"ok - {len(tracks)} tracks of complete events in time order and properly nested")
    if "group" in run:
        check("group" in other, "ipu-run ran a group but the trace has no group tracks")
        check_group(evs, names, tracks, other, run)
        return

    dev = tracks[(1, 1)]
    host = tracks[(2, 1)]
    programs = [e for e in dev if e["cat"] == "program"]
    steps = [e for e in dev if e["cat"] != "program"]
    check(programs and steps, "no programs or steps on the modelled device track")
    check(len(programs) == ctr["programs_run"], f"{len(programs)} program events, counters say {ctr['programs_run']}")
    check(len(host) == len(dev), f"host track has {len(host)} events, device track {len(dev)}")
    # every step lies inside a program run, on both tracks
    for tev in (dev, host):
        end = -1.0
        for e in tev:
            if e["cat"] == "program":
                end = e["ts"] + e["dur"]
            else:
                check(e["ts"] + e["dur"] <= end + EPS_US, f"step {e['name']} outside any program run")
    print(f"ok - {len(programs)} program runs enclose all {len(steps)} steps, on both tracks")

    ghz = other["clock_ghz"]
    by_cat = defaultdict(int)
    for e in steps:
        c = e["args"]["cycles"]
        by_cat[e["cat"]] += c
        check(abs(e["dur"] - c / (ghz * 1e3)) < 1e-6 * max(1.0, e["dur"]), f"{e['name']}: duration {e['dur']} us is not {c} cycles at {ghz} GHz")
    check(by_cat["compute"] == ctr["compute_cycles"], f"compute sets sum to {by_cat['compute']} cycles, the counters say {ctr['compute_cycles']}")
    check(by_cat["exchange"] == ctr["exchange_cycles"], f"exchanges: {by_cat['exchange']} vs {ctr['exchange_cycles']}")
    check(by_cat["stream"] == ctr["stream_cycles"], f"stream copies: {by_cat['stream']} vs {ctr['stream_cycles']}")
    check(by_cat["sync"] == ctr["sync_cycles"], f"syncs: {by_cat['sync']} vs {ctr['sync_cycles']}")
    check(sum(p["args"]["cycles"] for p in programs) == ctr["cycles"], "program cycles do not add up to the counters")
    ncs = sum(1 for e in steps if e["cat"] == "compute")
    check(ncs == ctr["compute_sets"], f"{ncs} compute-set events, counters say {ctr['compute_sets']}")
    xbytes = sum(e["args"]["bytes"] for e in steps if e["cat"] == "exchange")
    check(xbytes == ctr["exchange_bytes"], f"exchange bytes {xbytes} vs {ctr['exchange_bytes']}")
    print(f"ok - modelled compute sets sum to {by_cat['compute']} cycles = the engine's counters (and exchange, stream, sync, bytes)")

    # an independent path: ipu-run's per-request figures (counters around one request)
    per_req = run["modelled_breakdown_cycles"]
    nreq = ctr["programs_run"]
    check(by_cat["compute"] == per_req["compute"] * nreq, f"{nreq} requests x {per_req['compute']} compute cycles != {by_cat['compute']}")
    check(ctr["cycles"] == run["modelled_cycles_per_request"] * nreq, "total cycles != requests x modelled cycles per request")
    last = programs[-1]
    check(abs(last["ts"] + last["dur"] - nreq * run["modelled_us_per_request"]) < 1e-3, "modelled timeline does not end at requests x modelled us per request")
    print(f"ok - {nreq} requests x ipu-run's modelled {per_req['compute']} compute cycles per request = the trace's sum")

    check_requests(evs, run)

    computes = [e for e in steps if e["cat"] == "compute"]
    if no_debug:
        check(all(e["name"].startswith("compute set ") and "node" not in e["args"] for e in computes), "steps of a model without debug info must be named by index")
        check(not other["debug_info"], "debug_info claimed without a debug blob")
        print("ok - without debug information the steps are named by index")
        return
    import onnx
    onnx_names = {n.name for n in onnx.load(model_path).graph.node}
    check(other["debug_info"], "the trace says the model had no debug information")
    seen = set()
    for e in computes:
        node = e["args"].get("node")
        check(node is not None and e["name"] == node, f"compute set {e['args']['compute_set']} has no node name")
        base = onnx_node_of(node, onnx_names)
        check(base, f"node '{node}' is not a node of the ONNX model")
        seen.add(base)
    for e in steps:
        if e["cat"] == "exchange" and "node" in e["args"]:
            check(onnx_node_of(e["args"]["node"], onnx_names), f"exchange node {e['args']['node']} unknown")
    want = computing_nodes(onnx.load(model_path).graph)
    check(want, "the model has no node that must compute")
    missing = want - seen
    check(not missing, f"compute nodes missing from the trace: {sorted(missing)}")
    print(f"ok - every compute set named by its ONNX node ({len(seen)} of {len(onnx_names)} nodes have compute sets: {sorted(seen)})")


if __name__ == "__main__":
    main()
