#!/bin/bash
# ipu-run end to end: .npy inputs written by numpy, outputs read back by
# numpy and compared with a numpy reference; generated inputs announced;
# --json parses; bad arguments give a clear error and exit 1/2.
set -u
cd "$(dirname "$0")/../.."
BIN=build/bin
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
ko() { fail=$((fail + 1)); echo "not ok - $1"; }
PY=/usr/bin/python3

build/tests/modelrunner/gen_models "$dir" || { echo "0 passed, 1 failed"; exit 1; }

# affine: Y = X * 2 + [10, 20, 30], batch 8 = 2 x compiled
$PY -c "import numpy as np; np.save('$dir/x.npy', (np.arange(24, dtype=np.float32).reshape(8, 3) - 5) / 4)"
if $BIN/ipu-run "$dir/affine.ipuef" --input X="$dir/x.npy" --output Y="$dir/y.npy" --iterations 3 >"$dir/out.txt" 2>&1 &&
	$PY -c "
import numpy as np
x = np.load('$dir/x.npy'); y = np.load('$dir/y.npy')
assert y.dtype == np.float32 and y.shape == (8, 3), (y.dtype, y.shape)
assert np.array_equal(y, x * 2 + np.array([10, 20, 30], np.float32)), y
"; then ok "affine from .npy matches numpy"; else ko "affine from .npy matches numpy"; cat "$dir/out.txt"; fi
grep -q "(from file)" "$dir/out.txt" && grep -q "^latency over 3 requests" "$dir/out.txt" && ok "text report" || ko "text report"

# generated inputs are announced
$BIN/ipu-run "$dir/affine.ipuef" --iterations 0 >"$dir/gen.txt" 2>&1
grep -q "generated: seeded random" "$dir/gen.txt" && ok "generated inputs announced" || ko "generated inputs announced"

# --json is valid JSON with the fields
if $BIN/ipu-run "$dir/affine.ipuef" --json --iterations 5 >"$dir/j.json" 2>/dev/null &&
	$PY -c "
import json; j = json.load(open('$dir/j.json'))
assert j['outputs'][0]['name'] == 'Y' and j['latency_p50_us'] > 0 and j['requests_per_s_1'] > 0
"; then ok "json output"; else ko "json output"; fi

# modelled device time: the breakdown adds up, and a request of 8 rows (two
# device runs of the compiled batch of 4) costs exactly twice one of 4
if $BIN/ipu-run "$dir/affine.ipuef" --json --iterations 0 >"$dir/m4.json" 2>/dev/null &&
	$BIN/ipu-run "$dir/affine.ipuef" --json --iterations 0 --input X="$dir/x.npy" >"$dir/m8.json" 2>/dev/null &&
	$PY -c "
import json
a = json.load(open('$dir/m4.json')); b = json.load(open('$dir/m8.json'))
for j in (a, b):
    assert j['modelled_cycles_per_request'] > 0
    assert sum(j['modelled_breakdown_cycles'].values()) == j['modelled_cycles_per_request'], j
    assert abs(j['modelled_us_per_request'] - j['modelled_cycles_per_request'] / 1330.0) < 1e-6, j
assert b['modelled_cycles_per_request'] == 2 * a['modelled_cycles_per_request'], (a, b)
"; then ok "modelled device time per request"; else ko "modelled device time per request"; fi
$BIN/ipu-run "$dir/affine.ipuef" --iterations 1 2>/dev/null | grep -q "modelled device time .* cycles = .* us per request at 1.33 GHz" &&
	ok "modelled time in the text report" || ko "modelled time in the text report"

# replicated over two in-process devices: numpy's answer, the modelled time
# of one device (the counters of both added up), both devices used
if $BIN/ipu-run "$dir/affine.ipuef" --device model,model --input X="$dir/x.npy" --output Y="$dir/y2.npy" \
	--iterations 6 --json >"$dir/r2.json" 2>&1 &&
	$BIN/ipu-run "$dir/affine.ipuef" --device model,model --iterations 2 >"$dir/r2.txt" 2>&1 &&
	$PY -c "
import json, numpy as np
x = np.load('$dir/x.npy'); y = np.load('$dir/y2.npy')
assert np.array_equal(y, x * 2 + np.array([10, 20, 30], np.float32)), y
j = json.load(open('$dir/r2.json')); m = json.load(open('$dir/m8.json'))
d = j['devices']
assert len(d) == 2 and all(e['runs'] > 0 and e['in_rotation'] for e in d), d
assert j['modelled_cycles_per_request'] == m['modelled_cycles_per_request'], (j, m)
" && grep -q '^device runs: model [1-9][0-9]*, model [1-9]' "$dir/r2.txt"; then
	ok "--device model,model: replicated, same outputs and modelled time"
else
	ko "--device model,model: replicated, same outputs and modelled time"; cat "$dir/r2.json" "$dir/r2.txt"
fi

# fused model: subgraph 1 from an f16 .npy (the model-fusion example's graph1)
$PY -c "import numpy as np; np.save('$dir/g1x.npy', np.zeros((1, 1), np.float16))"
if $BIN/ipu-run "$dir/fused.ipuef" --input graph1/X="$dir/g1x.npy" --output graph1/O="$dir/g1o.npy" --iterations 2 >/dev/null 2>&1 &&
	$PY -c "
import numpy as np
o = np.load('$dir/g1o.npy'); assert o.dtype == np.float16
assert np.array_equal(o, np.array([[0, 1.5, 2]], np.float16)), o
"; then ok "fused subgraph 1 (f16)"; else ko "fused subgraph 1 (f16)"; fi

# dynamic batch along dim 1
if $BIN/ipu-run "$dir/scale_dim1.ipuef" --batch-size 7 --output Y="$dir/s.npy" --iterations 1 >/dev/null 2>&1 &&
	$PY -c "
import numpy as np; y = np.load('$dir/s.npy'); assert y.shape == (2, 7, 3), y.shape
"; then ok "batch size 7 along dim 1"; else ko "batch size 7 along dim 1"; fi

# errors: wrong dtype file, unknown anchor, missing file, bad option
$PY -c "import numpy as np; np.save('$dir/x64.npy', np.zeros((4, 3), np.float64))"
$BIN/ipu-run "$dir/affine.ipuef" --input X="$dir/x64.npy" >/dev/null 2>"$dir/e1"; rc=$?
[ $rc -eq 1 ] && grep -q "float64" "$dir/e1" && ok "float64 input refused with a hint" || ko "float64 input refused ($rc: $(cat "$dir/e1"))"
$BIN/ipu-run "$dir/affine.ipuef" --input Q="$dir/x.npy" >/dev/null 2>"$dir/e2"; rc=$?
[ $rc -eq 1 ] && grep -q "no input named 'Q'" "$dir/e2" && ok "unknown input named" || ko "unknown input ($rc: $(cat "$dir/e2"))"
$PY -c "import numpy as np; np.save('$dir/x5.npy', np.zeros((5, 3), np.float32))"
$BIN/ipu-run "$dir/affine.ipuef" --input X="$dir/x5.npy" >/dev/null 2>"$dir/e3"; rc=$?
[ $rc -eq 1 ] && grep -q "multiple of 4" "$dir/e3" && ok "batch not a multiple refused" || ko "batch 5 ($rc: $(cat "$dir/e3"))"
$BIN/ipu-run "$dir/nope.ipuef" >/dev/null 2>"$dir/e4"; rc=$?
[ $rc -eq 1 ] && grep -q "nope.ipuef" "$dir/e4" && ok "missing model file" || ko "missing model ($rc)"
$BIN/ipu-run --frobnicate >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok "bad option exits 2" || ko "bad option ($rc)"
$BIN/ipu-run --help | grep -q -- "--batch-size" && ok "--help" || ko "--help"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
