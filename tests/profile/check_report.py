#!/usr/bin/python3
"""Checks an `ipu-compile --report` page: self-contained (nothing fetched),
its figures against `ipu-run --json` of the same executable (the engine's
counters over a real request) and against the ONNX model, and rendered by
headless Chromium (Debian's chromium) in a 1400 px wide window: no script
error, the charts drawn (the DOM after the scripts ran), nothing wider than
the window (no sideways scrolling, of the page or of a table's box), every
bar label distinct, the precision shown, no tensor row repeated, a
screenshot that is not blank.

usage: check_report.py REPORT.html RUN.json MODEL.onnx SHOT.png PRECISION
Prints what it checked; exits 1 on the first failure."""
import json
import os
import re
from html import unescape as html_unescape
import subprocess
import sys

import onnx
from PIL import Image


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--enable-logging=stderr", "--v=0", "--user-data-dir=%s"]


def chromium(args, profile_dir):
    cmd = [a % profile_dir if "%s" in a else a for a in CHROMIUM] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    return p


def onnx_node_of(name, onnx_nodes):
    """The ONNX node a lowered node came from: itself, or NAME/Op... for
    the pieces of one the compiler split (ONNX names may hold '/')."""
    if name in onnx_nodes:
        return name
    for i in range(len(name) - 1, 0, -1):
        if name[i] == "/" and name[:i] in onnx_nodes:
            return name[:i]
    return None


def main():
    path, run_path, model_path, shot, precision = sys.argv[1:6]
    html = open(path, encoding="utf-8").read()
    run = json.load(open(run_path))

    # self-contained: no element loads anything, no CSS import or url()
    for pat, what in ((r"<link\b", "a <link>"), (r"\bsrc\s*=", "a src attribute"), (r"@import", "a CSS @import"),
                      (r"url\(", "a CSS url()"), (r"\bfetch\(|XMLHttpRequest", "a network call")):
        check(not re.search(pat, html), f"the page has {what}")
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html)) - {"http://www.w3.org/2000/svg"}
    check(not urls, f"the page names URLs {urls}")
    print(f"ok - self-contained: {len(html)} bytes, no external resource")

    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    check(m, "no embedded report data")
    d = json.loads(m.group(1))
    c = d["cycles"]
    bd = run["modelled_breakdown_cycles"]
    check(c["total"] == run["modelled_cycles_per_request"],
          f"report: {c['total']} cycles per request, ipu-run measured {run['modelled_cycles_per_request']}")
    check((c["compute"], c["exchange"], c["stream"], c["sync"]) == (bd["compute"], bd["exchange"], bd["stream_io"], bd["sync"]),
          f"breakdown {c} vs ipu-run's {bd}")
    print(f"ok - modelled {c['total']} cycles per request (compute {c['compute']}, exchange {c['exchange']}, stream {c['stream']}) = ipu-run's engine counters")

    nodes = d["nodes"]
    check(sum(n["compute_cycles"] for n in nodes) == c["compute"], "node compute cycles do not add up")
    check(sum(n["exchange_cycles"] for n in nodes) == c["exchange"], "node exchange cycles do not add up")
    check(sum(n["exchange_bytes"] for n in nodes) == d["summary"]["exchange_bytes"], "node exchange bytes do not add up")
    ops = d["ops"]
    check(sum(o["compute_cycles"] for o in ops.values()) == c["compute"], "op compute cycles do not add up")
    check(sum(o["nodes"] for o in ops.values()) == len(nodes), "op node counts do not add up")
    onnx_nodes = {n.name: n.op_type for n in onnx.load(model_path, load_external_data=False).graph.node}
    named = [n for n in nodes if n["op"] != "-"]
    for n in named:
        check(onnx_node_of(n["name"], onnx_nodes), f"node {n['name']} is not in the ONNX model")
    check(len(named) >= len(onnx_nodes) // 3, f"only {len(named)} of {len(onnx_nodes)} nodes in the report")
    print(f"ok - {len(named)} nodes (names from the ONNX model), {len(ops)} op types; cycles and exchange bytes add up")

    tiles = d["tile_memory"]
    s = d["summary"]
    check(len(tiles) == d["target"]["tiles"], "one heat-map value per tile")
    check(max(tiles) == s["mem_max"] and tiles.index(max(tiles)) == s["mem_max_tile"], "heat map max != the compile summary's")
    check(sum(tiles) == s["mem_total"] and all(0 <= t <= d["target"]["tile_mem"] for t in tiles), "tile memory does not add up")
    check(sum(1 for t in tiles if t) == s["tiles_used"], "tiles used")
    ts = d["tensors"]
    check(ts and all(ts[i]["bytes"] >= ts[i + 1]["bytes"] for i in range(len(ts) - 1)), "tensors not biggest first")
    check(all(t["first_tile"] <= t["last_tile"] < d["target"]["tiles"] and t["tiles"] >= 1 for t in ts), "tensor tiles")
    check(d["precision"] == precision, f"the data says precision {d['precision']}, the model was compiled in {precision}")
    rows = [(t["name"], t["count"]) for t in ts]
    check(len({r[0] for r in rows}) == len(rows), "a tensor name is listed more than once")
    check(all(t["count"] >= 1 and t["elems"] >= t["count"] for t in ts), "tensor counts")
    tl = d["memory_timeline"]
    if s["memory_reuse"]:
        check(tl and max(tl["bytes"]) <= s["mem_total_no_reuse"], "memory over time above the no-reuse total")
    print(f"ok - heat map of {len(tiles)} tiles matches the summary (max {s['mem_max']} B on tile {s['mem_max_tile']}); {len(ts)} biggest tensors")

    # rendered: the DOM after the scripts ran, then a screenshot
    import tempfile
    # the page as a 1400 px wide browser lays it out: the widths the scripts
    # see are written into the DOM that --dump-dom prints
    measure = ('<script>(function () { var inner = 0, who = "";'
               'document.querySelectorAll("*").forEach(function (e) {'
               '  var s = getComputedStyle(e).overflowX;'
               '  if ((s === "auto" || s === "scroll") && e.scrollWidth - e.clientWidth > inner) {'
               '    inner = e.scrollWidth - e.clientWidth; who = e.id || e.className; } });'
               'document.body.setAttribute("data-widths", document.documentElement.scrollWidth + " " +'
               '  window.innerWidth + " " + inner + " " + who); })();</script></body>')
    with tempfile.TemporaryDirectory() as prof:
        wide = os.path.join(prof, "measured.html")
        with open(wide, "w", encoding="utf-8") as f:
            f.write(html.replace("</body>", measure, 1))
        p = chromium(["--window-size=1400,3000", "--dump-dom", "file://" + wide], prof)
        dom = p.stdout
        check("<body" in dom, f"chromium printed no DOM (exit {p.returncode}): {p.stderr[-500:]}")
        body = re.search(r"<body([^>]*)>", dom).group(1)
        check("data-errors" not in body, "the page reported script errors: " +
              (re.search(r'id="errors"[^>]*>([^<]*)', dom) or [None, "?"])[1])
        check(not re.search(r"Uncaught|SyntaxError|TypeError", p.stderr), "console errors: " +
              "\n".join(l for l in p.stderr.splitlines() if "Uncaught" in l or "Error" in l)[:800])
        widths = re.search(r'data-widths="(\d+) (\d+) (\d+) ?([^"]*)"', body)
        check(widths, f"the width probe did not run: {body}")
        page_w, win_w, inner, who = int(widths.group(1)), int(widths.group(2)), int(widths.group(3)), widths.group(4)
        check(win_w == 1400, f"window {win_w} px wide, not 1400")
        check(page_w <= 1400, f"the page is {page_w} px wide in a 1400 px window: sideways scrolling")
        check(inner == 0, f"box '{who}' scrolls sideways by {inner} px at 1400 px")
        print(f"ok - at 1400 px nothing scrolls sideways (page {page_w} px wide, every table box fits)")
        sub = re.search(r'id="subtitle"[^>]*>([^<]*)<', dom).group(1)
        check(("precision " + precision) in sub, f"the heading does not say the precision {precision}: '{sub}'")
        for chart in ("node-chart", "op-chart", "exchange-chart"):
            part = dom.split(f'id="{chart}"')[1].split("</svg>")[0]
            labels = [html_unescape(x) for x in re.findall(r'class="label"[^>]*>([^<]*)<', part)]
            check(labels, f"{chart}: no bar labels")
            check(len(set(labels)) == len(labels), f"{chart}: labels repeat: {sorted(l for l in labels if labels.count(l) > 1)[:4]}")
        print(f"ok - precision '{precision}' in the heading; bar labels distinct in the node, op and exchange charts")
        rendered = re.search(r'data-rendered="(\d+)"', body)
        check(rendered and int(rendered.group(1)) >= 4, f"charts drawn: {body}")
        ntile = len(re.findall(r'class="tile"', dom))
        check(ntile == len(tiles), f"{ntile} tiles drawn, {len(tiles)} in the data")
        nbar = len(re.findall(r'class="bar"', dom))
        check(nbar >= min(30, len(nodes)), f"only {nbar} bars drawn")
        rows = len(re.findall(r"<tr>", dom.split('id="node-table"')[1].split("</table>")[0]))
        check(rows == len(nodes) + 1, f"node table has {rows} rows for {len(nodes)} nodes")
        check('class="curve"' in dom or not s["memory_reuse"], "no memory curve")
        print(f"ok - chromium ran the page: no script error, {rendered.group(1)} charts, {ntile} tiles, {nbar} bars, {rows - 1} node rows")
        p = chromium(["--window-size=1400,2400", "--screenshot=" + shot, "file://" + path], prof)
        check(p.returncode == 0, f"screenshot failed: {p.stderr[-500:]}")
        im = Image.open(shot).convert("RGB")
        check(im.size == (1400, 2400), f"screenshot size {im.size}")
        colors = im.getcolors(maxcolors=1 << 20)
        check(colors and len(colors) > 50, f"screenshot has {len(colors or [])} colours: blank?")
        # the heat map and bar colours are there, not just text
        blue = sum(n for n, (r, g, b) in colors if b > 150 and r < 120)
        orange = sum(n for n, (r, g, b) in colors if r > 200 and 110 < g < 170 and b < 90)
        check(blue > 2000 and orange > 500, f"chart colours missing (blue {blue}, orange {orange} pixels)")
        print(f"ok - screenshot {im.size[0]}x{im.size[1]}, {len(colors)} colours, {blue} blue and {orange} orange chart pixels")


if __name__ == "__main__":
    main()
