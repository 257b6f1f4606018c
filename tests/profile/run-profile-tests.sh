#!/bin/bash
# ipu-run --profile end to end: a CNN with named nodes compiled by
# ipu-compile, run with --profile and --json, the trace validated by
# check_trace.py (format, nesting and order per track, modelled durations
# against the engine's counters and against ipu-run's own per-request
# figures, request events, ONNX node names); a model without debug
# information; refusals.  BUILD=build/san runs the sanitizer build's tools.
set -u
cd "$(dirname "$0")/../.."
BIN=${BUILD:-build}/bin
PY=/usr/bin/python3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
ko() { fail=$((fail + 1)); echo "not ok - $1"; }

$PY tests/profile/make_model.py "$dir/cnn.onnx" || { echo "0 passed, 1 failed"; exit 1; }
if ! $BIN/ipu-compile --input-model "$dir/cnn.onnx" -o "$dir/cnn.ipuef" --target tiles=16,tile-mem=256KiB >"$dir/c.log" 2>&1; then
	cat "$dir/c.log"
	echo "0 passed, 1 failed"
	exit 1
fi
$BIN/ipuef-dump "$dir/cnn.ipuef" | grep -q "Opaque .* ipu-compile/debug" &&
	ok "ipu-compile writes the debug blob" || ko "ipu-compile writes the debug blob"

# 1 + 4 requests one at a time + 4 with 3 in flight
if $BIN/ipu-run "$dir/cnn.ipuef" --iterations 4 --inflight 3 --profile "$dir/t.json" --json >"$dir/run.json" 2>"$dir/run.err" &&
	$PY tests/profile/check_trace.py "$dir/t.json" "$dir/run.json" "$dir/cnn.onnx" >"$dir/check.txt"; then
	sed 's/^/    /' "$dir/check.txt"
	ok "trace of the CNN validated"
else
	cat "$dir/run.err" "$dir/check.txt" 2>/dev/null
	ko "trace of the CNN validated"
fi
$PY -c "import json, sys; assert json.load(open(sys.argv[1]))['profile'] == sys.argv[2]" "$dir/run.json" "$dir/t.json" &&
	ok "--json names the profile" || ko "--json names the profile"

# text mode says where the trace went; 1 in flight only
if $BIN/ipu-run "$dir/cnn.ipuef" --iterations 2 --inflight 1 --profile "$dir/t1.json" >"$dir/t1.txt" 2>&1 &&
	grep -q "profile written to .*t1.json" "$dir/t1.txt" &&
	$BIN/ipu-run "$dir/cnn.ipuef" --iterations 2 --inflight 1 --json >"$dir/r1.json" 2>/dev/null &&
	$PY tests/profile/check_trace.py "$dir/t1.json" "$dir/r1.json" "$dir/cnn.onnx" >"$dir/check1.txt"; then
	ok "trace with 1 in flight validated"
else
	cat "$dir/t1.txt" "$dir/check1.txt" 2>/dev/null
	ko "trace with 1 in flight validated"
fi

# a model without the debug blob (the graph builder's own): steps by index, and a note
${BUILD:-build}/tests/modelrunner/gen_models "$dir" >/dev/null 2>&1
if $BIN/ipu-run "$dir/affine.ipuef" --iterations 2 --inflight 2 --profile "$dir/a.json" --json >"$dir/a.run" 2>"$dir/a.err" &&
	grep -q "no debug information" "$dir/a.err" &&
	$PY tests/profile/check_trace.py "$dir/a.json" "$dir/a.run" - --no-debug >"$dir/check2.txt"; then
	ok "trace of a model without debug information"
else
	cat "$dir/a.err" "$dir/check2.txt" 2>/dev/null
	ko "trace of a model without debug information"
fi

# the benchmark: --json statistics against the request times it measured
# (--export-times) and the runtime's own request events (--profile)
if $BIN/ipu-run "$dir/cnn.ipuef" --iterations 40 --warmup 3 --inflight 4 --json --export-times "$dir/times.json" \
	--profile "$dir/b.json" >"$dir/b.run" 2>"$dir/b.err" &&
	$PY tests/profile/check_bench.py "$dir/b.run" "$dir/times.json" "$dir/b.json" >"$dir/check3.txt"; then
	sed 's/^/    /' "$dir/check3.txt"
	ok "--json statistics match the measured request times"
else
	cat "$dir/b.err" "$dir/check3.txt" 2>/dev/null
	ko "--json statistics match the measured request times"
fi
# a duration: at least that long, at least --iterations requests; alone: at least one
if $BIN/ipu-run "$dir/cnn.ipuef" --duration 0.2 --iterations 5 --inflight 1 --json >"$dir/d.run" 2>/dev/null &&
	$BIN/ipu-run "$dir/cnn.ipuef" --duration 0.05 --warmup 0 --json >"$dir/d2.run" 2>/dev/null &&
	$PY -c "
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a['elapsed_s'] >= 0.2 and a['iterations'] >= 5 and a['duration_s'] == 0.2, a
assert a['requests_per_s_inflight'] == a['requests_per_s_1'], a
assert b['elapsed_s'] >= 0.05 and b['iterations'] >= 1 and b['warmup'] == 0, b
assert isinstance(a['inputs'][0]['shape'], list) and a['inputs'][0]['shape'] == [2, 3, 16, 16], a['inputs']
" "$dir/d.run" "$dir/d2.run"; then ok "--duration runs at least that long"; else ko "--duration runs at least that long"; fi
# text: one throughput line, units that scale; no timing with --iterations 0
$BIN/ipu-run "$dir/cnn.ipuef" --iterations 20 --inflight 1 >"$dir/t1x.txt" 2>&1
[ "$(grep -c "^throughput" "$dir/t1x.txt")" -eq 1 ] && ! grep -q "in flight), .*in flight)" "$dir/t1x.txt" &&
	grep -Eq "^latency over 20 requests .*min [0-9.]+ (ns|us|ms|s), mean .*p99 [0-9.]+ (ns|us|ms|s), max" "$dir/t1x.txt" &&
	grep -Eq "^throughput [0-9]+ req/s = [0-9]+ samples/s \(1 in flight\); 2 samples per request" "$dir/t1x.txt" &&
	grep -q "^host time per request: input copy" "$dir/t1x.txt" &&
	ok "text report with --inflight 1" || { cat "$dir/t1x.txt"; ko "text report with --inflight 1"; }
$BIN/ipu-run "$dir/cnn.ipuef" --iterations 0 --json >"$dir/z.run" 2>/dev/null &&
	$PY -c "import json, sys; j = json.load(open(sys.argv[1])); assert j['latency_us'] is None and j['iterations'] == 0, j" "$dir/z.run" &&
	ok "--iterations 0 times nothing" || ko "--iterations 0 times nothing"
bad=0
for a in "--duration 0" "--duration 1e9" "--duration x" "--warmup -1" "--warmup 1000001"; do
	$BIN/ipu-run "$dir/cnn.ipuef" $a >/dev/null 2>"$dir/e0"; rc=$?
	[ $rc -eq 2 ] && [ -s "$dir/e0" ] || { bad=1; echo "    '$a' gave $rc"; }
done
[ $bad -eq 0 ] && ok "bad --duration / --warmup values exit 2 with a message" || ko "bad --duration / --warmup values"

# ipu-compile --json: the target the .ipuef records, the --check result, an error field
$BIN/ipu-compile --input-model "$dir/cnn.onnx" -o "$dir/j1.ipuef" --json --check --target tiles=16,tile-mem=256KiB >"$dir/j1" 2>/dev/null
$BIN/ipu-compile --input-model "$dir/cnn.onnx" -o "$dir/j2.ipuef" --json --target tiles=1,tile-mem=1KiB >"$dir/j2" 2>/dev/null; rc2=$?
$BIN/ipu-compile --input-model "$dir/none.onnx" --json >"$dir/j3" 2>/dev/null; rc3=$?
if [ $rc2 -eq 1 ] && [ $rc3 -eq 1 ] && $PY -c "
import json, sys
a, b, c = (json.load(open(p)) for p in sys.argv[1:4])
assert a['target'] == {'ipu_version': 'ipu2', 'tiles': 16, 'tile_mem': 262144, 'custom': True}, a['target']
assert a['check'] is True and a['executable'].endswith('j1.ipuef') and 'error' not in a, a
assert b['executable'] is None and b['error'].startswith('graph input') and '(6144 bytes) is more than the 512 bytes' in b['error'], b
assert c['executable'] is None and 'none.onnx' in c['error'] and c['target']['custom'] is False, c
import subprocess
out = subprocess.run([sys.argv[4], sys.argv[5] + '/j1.ipuef'], capture_output=True, text=True).stdout
assert 'Target:            ipu2, 16 tiles' in out, out
" "$dir/j1" "$dir/j2" "$dir/j3" "$BIN/ipuef-dump" "$dir"; then
	ok "ipu-compile --json: target as recorded, check result, error field"
else
	cat "$dir/j1" "$dir/j2" "$dir/j3"
	ko "ipu-compile --json: target as recorded, check result, error field"
fi

# inputs of another element type: converted when no value changes or when
# only one meaning is possible (float32 to a float16 anchor), with a note
$PY -c "import numpy as np; np.save('$dir/x16.npy', ((np.arange(12) - 5) / 4).astype(np.float16).reshape(4, 3))"
if $BIN/ipu-run "$dir/affine.ipuef" --input X="$dir/x16.npy" --output Y="$dir/y16.npy" --iterations 0 >/dev/null 2>"$dir/cv1" &&
	grep -q "x16.npy is f16, input 'X' is f32: converted (no value changed)" "$dir/cv1" &&
	$PY -c "
import numpy as np
x = np.load('$dir/x16.npy').astype(np.float32); y = np.load('$dir/y16.npy')
assert np.array_equal(y, x * 2 + np.array([10, 20, 30], np.float32)), y
"; then ok "float16 .npy into a float32 input"; else cat "$dir/cv1"; ko "float16 .npy into a float32 input"; fi
$PY -c "import numpy as np; np.save('$dir/g1x32.npy', np.array([[0.1]], np.float32))"
if $BIN/ipu-run "$dir/fused.ipuef" --input graph1/X="$dir/g1x32.npy" --output graph1/O="$dir/g1o.npy" --iterations 0 >/dev/null 2>"$dir/cv2" &&
	grep -q "is f32, input 'graph1/X' is f16: converted (rounded to nearest)" "$dir/cv2" &&
	$PY -c "
import numpy as np
o = np.load('$dir/g1o.npy'); assert o.dtype == np.float16
assert np.array_equal(o, np.array([[np.float16(0.1), 1.5, 2]], np.float16)), o
"; then ok "float32 .npy into a float16 input, rounded"; else cat "$dir/cv2"; ko "float32 .npy into a float16 input, rounded"; fi
$PY -c "
import numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
c = numpy_helper.from_array(np.array([1, 2, 3], np.int32), 'C')
g = helper.make_graph([helper.make_node('Add', ['X', 'C'], ['Y'], name='add')], 'ints',
                      [helper.make_tensor_value_info('X', TensorProto.INT32, [3])],
                      [helper.make_tensor_value_info('Y', TensorProto.INT32, [3])], [c])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), '$dir/ints.onnx')
np.save('$dir/i64.npy', np.array([5, -7, 2**31 - 4], np.int64))
np.save('$dir/i64big.npy', np.array([5, 2**31, 0], np.int64))
np.save('$dir/i8.npy', np.array([-1, 0, 1], np.int8))"
$BIN/ipu-compile --input-model "$dir/ints.onnx" -o "$dir/ints.ipuef" --target tiles=4,tile-mem=64KiB >/dev/null 2>&1
if $BIN/ipu-run "$dir/ints.ipuef" --input X="$dir/i64.npy" --output Y="$dir/yi.npy" --iterations 0 >/dev/null 2>"$dir/cv3" &&
	grep -q "i64.npy is i64, input 'X' is i32: converted (no value changed)" "$dir/cv3" &&
	$BIN/ipu-run "$dir/ints.ipuef" --input X="$dir/i8.npy" --output Y="$dir/yi8.npy" --iterations 0 >/dev/null 2>&1 &&
	$PY -c "
import numpy as np
y = np.load('$dir/yi.npy'); assert y.dtype == np.int32 and y.tolist() == [6, -5, 2**31 - 1], y
assert np.load('$dir/yi8.npy').tolist() == [0, 2, 4]
"; then ok "int64 and int8 .npy into an int32 input"; else cat "$dir/cv3"; ko "int64 and int8 .npy into an int32 input"; fi
$BIN/ipu-run "$dir/ints.ipuef" --input X="$dir/i64big.npy" --iterations 0 >/dev/null 2>"$dir/cv4"; rc=$?
[ $rc -eq 1 ] && grep -q "element 1 is 2147483648, out of the range of input 'X' (i32)" "$dir/cv4" &&
	ok "an int64 value beyond int32 refused, named" || { cat "$dir/cv4"; ko "an int64 value beyond int32 refused (rc $rc)"; }

# refusals: the profile may not replace the model; a missing value
cp "$dir/cnn.ipuef" "$dir/keep.ipuef"
$BIN/ipu-run "$dir/cnn.ipuef" --iterations 0 --profile "$dir/cnn.ipuef" >/dev/null 2>"$dir/e1"; rc=$?
[ $rc -eq 1 ] && cmp -s "$dir/cnn.ipuef" "$dir/keep.ipuef" && ok "--profile onto the model refused ($(head -c 100 "$dir/e1"))" ||
	ko "--profile onto the model refused (rc $rc)"
$BIN/ipu-run "$dir/cnn.ipuef" --profile >/dev/null 2>"$dir/e2"; rc=$?
[ $rc -eq 2 ] && grep -q "needs a value" "$dir/e2" && ok "--profile without a file" || ko "--profile without a file (rc $rc)"
$BIN/ipu-run "$dir/cnn.ipuef" --iterations 0 --profile "$dir/no/such/dir/t.json" >/dev/null 2>"$dir/e3"; rc=$?
[ $rc -eq 1 ] && grep -q "t.json" "$dir/e3" && ok "unwritable profile path named" || ko "unwritable profile path (rc $rc: $(cat "$dir/e3"))"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
