#!/bin/bash
# ipu-compile --report end to end: the page of a small CNN and of ResNet-50
# (torchvision, random weights, 64 x 64 to keep it quick) checked by
# check_report.py: self-contained, figures equal to ipu-run's engine
# counters and the ONNX model's nodes, rendered by headless chromium with no
# script error, charts drawn, nothing wider than 1400 px, distinct bar
# labels, the precision shown, screenshot not blank.  A page with a script
# error must be caught; --report onto the model is refused.
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
if ! command -v chromium >/dev/null; then
	echo "not ok - chromium is not installed (deps/profile.txt, make deps)"
	echo "0 passed, 1 failed"
	exit 1
fi

report() {	# NAME MODEL.onnx PRECISION COMPILE-ARGS...
	local name=$1 model=$2 prec=$3
	shift 3
	if $BIN/ipu-compile --input-model "$model" -o "$dir/$name.ipuef" --report "$dir/$name.html" --json \
		--precision "$prec" "$@" >"$dir/$name.cjson" 2>"$dir/$name.clog" &&
		$BIN/ipu-run "$dir/$name.ipuef" --iterations 0 --json >"$dir/$name.run" 2>>"$dir/$name.clog" &&
		$PY tests/profile/check_report.py "$dir/$name.html" "$dir/$name.run" "$model" "$dir/$name.png" "$prec" >"$dir/$name.check"; then
		sed 's/^/    /' "$dir/$name.check"
		ok "report of $name"
	else
		cat "$dir/$name.clog" "$dir/$name.check" 2>/dev/null
		ko "report of $name"
	fi
}

$PY tests/profile/make_model.py "$dir/cnn.onnx"
report cnn "$dir/cnn.onnx" fp32 --target tiles=16,tile-mem=256KiB
$PY -c "import json, sys; j = json.load(open(sys.argv[1])); assert j['report'].endswith('cnn.html'), j" "$dir/cnn.cjson" &&
	ok "--json names the report" || ko "--json names the report"

if $PY tests/profile/make_resnet50.py "$dir/resnet50.onnx" 64 >"$dir/r50.log" 2>&1; then
	report resnet50 "$dir/resnet50.onnx" fp16
else
	cat "$dir/r50.log"
	ko "export ResNet-50"
fi

# without --json, the compiler says where the report went
if $BIN/ipu-compile --input-model "$dir/cnn.onnx" -o "$dir/t.ipuef" --report "$dir/t.html" \
	--target tiles=16,tile-mem=256KiB >/dev/null 2>"$dir/t.log" && [ -s "$dir/t.html" ] &&
	grep -q "^ipu-compile: wrote the report $dir/t.html\$" "$dir/t.log"; then
	ok "ipu-compile says where it wrote the report"
else
	cat "$dir/t.log"
	ko "ipu-compile says where it wrote the report"
fi

# the checker catches a page whose script fails
sed 's/function heatmap(d) {/function heatmap(d) { d.no.such.field;/' "$dir/cnn.html" >"$dir/broken.html"
if $PY tests/profile/check_report.py "$dir/broken.html" "$dir/cnn.run" "$dir/cnn.onnx" "$dir/broken.png" fp32 >"$dir/broken.check" 2>&1; then
	ko "a script error in the page is caught"
else
	grep -q "script errors" "$dir/broken.check" && ok "a script error in the page is caught ($(grep FAIL "$dir/broken.check" | head -c 120))" ||
		{ cat "$dir/broken.check"; ko "a script error in the page is caught"; }
fi

cp "$dir/cnn.onnx" "$dir/keep.onnx"
$BIN/ipu-compile --input-model "$dir/cnn.onnx" --report "$dir/cnn.onnx" >/dev/null 2>"$dir/e1"; rc=$?
[ $rc -eq 1 ] && cmp -s "$dir/cnn.onnx" "$dir/keep.onnx" && ok "--report onto the model refused" || ko "--report onto the model refused (rc $rc)"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
