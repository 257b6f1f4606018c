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
