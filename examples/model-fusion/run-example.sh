#!/bin/bash
# The model-fusion example, end to end, in a temporary directory:
#
#   1. make_models.py writes model0.onnx (f32 Add + Reshape) and model1.onnx
#      (f16 Concat with a constant), opset 11, as the seed's compile.py, and
#      the run.py inputs as .npy files;
#   2. ipu-compile --config-yaml config.yaml (the seed's config, verbatim)
#      fuses them into executable.ipuef (output_dir './');
#   3. run-fusion (the seed's run.py in C, ModelRunner API) checks
#      graph0/O == [3, 3] and graph1/O == [0, 1.5, 2] (f16);
#   4. ipu-run checks the same with --input NAME=FILE.npy / --output;
#   5. the seed's compile.py and run.py themselves (Python: ipu-compile for
#      poprt, `from ipu.runtime import ...`), run in their own folder.
#
# Usage: examples/model-fusion/run-example.sh [--keep]   (from anywhere)
# Environment: BUILD (default build), PYTHON (default /usr/bin/python3, which
# has Debian's python3-onnx), DEVICE (default none, as the seed's run.py:
# the in-process device is then made to match the model, an ipu21).
# Ends with "N passed, N failed" (make check reads it).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) bin=$BUILD/bin ;; *) bin=$root/$BUILD/bin ;; esac
PYTHON=${PYTHON:-/usr/bin/python3}
DEVICE=${DEVICE:-}
keep=0
[ "${1:-}" = "--keep" ] && keep=1

passed=0
failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
notok() { echo "not ok - $*"; failed=$((failed + 1)); }
finish() {
	echo "model-fusion: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit $?
}

pydir=$(dirname "$bin")/python
for p in ipu-compile ipu-run ipuef-dump run-fusion; do
	if [ ! -x "$bin/$p" ]; then
		notok "$bin/$p is not built (make)"
		finish
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/model-fusion.XXXXXX")
if [ $keep -eq 1 ]; then
	echo "# working directory: $work (kept)"
else
	trap 'rm -rf "$work"' EXIT
fi
cp "$here/config.yaml" "$work/"

# 1. the models (and the run.py inputs as .npy)
if (cd "$work" && "$PYTHON" "$here/make_models.py"); then
	ok "make_models.py: model0.onnx, model1.onnx"
else
	notok "make_models.py failed (needs python3-onnx, python3-numpy: make deps)"
	finish
fi

# 2. compile, as `poprt --config_yaml config.yaml` in the seed (run from
# another directory: paths in the config are relative to the config file)
if (cd / && "$bin/ipu-compile" --config-yaml "$work/config.yaml") >"$work/compile.log" 2>&1; then
	ok "ipu-compile --config-yaml config.yaml"
else
	notok "ipu-compile --config-yaml config.yaml (exit $?): $(cat "$work/compile.log")"
	finish
fi
sed 's/^/# /' "$work/compile.log"
if [ -s "$work/executable.ipuef" ]; then
	ok "executable.ipuef written into output_dir"
else
	notok "no executable.ipuef in output_dir ($(ls "$work"))"
	finish
fi
if [ -s "$work/model_fusion.graph0.onnx" ] && [ -s "$work/model_fusion.graph1.onnx" ]; then
	ok "output_model: model_fusion.graph0.onnx, model_fusion.graph1.onnx"
else
	notok "output_model files missing ($(ls "$work"))"
fi

# the anchors, as popef_dump shows them in the seed
"$bin/ipuef-dump" "$work/executable.ipuef" >"$work/dump.txt" 2>&1
sed -n '/^Anchors:/,/^Opaque:/p' "$work/dump.txt" | sed 's/^/# /'
want_anchors="index graph0/X graph0/Y graph0/O graph1/X graph1/O"
missing=""
for a in $want_anchors; do
	grep -qE "^  $a\$" "$work/dump.txt" || missing="$missing $a"
done
if [ -z "$missing" ] && grep -A1 -E '^  index$' "$work/dump.txt" | grep -q 'index, stream'; then
	ok "anchors: $want_anchors (index of kind index)"
else
	notok "anchors missing:$missing"
fi

# 3. the C program (ModelRunner: timeout_ns 0, validate_io_params off)
if "$bin/run-fusion" "$work/executable.ipuef" "$DEVICE" >"$work/run-fusion.log" 2>&1; then
	ok "run-fusion (ModelRunner): graph0/O == [3, 3], graph1/O == [0, 1.5, 2]"
else
	notok "run-fusion failed"
fi
sed 's/^/# /' "$work/run-fusion.log"

# 4. ipu-run with .npy inputs and outputs, one subgraph per call
run() {
	(cd "$work" && "$bin/ipu-run" executable.ipuef ${DEVICE:+--device "$DEVICE"} --no-validate \
		--iterations 20 "$@") >>"$work/ipu-run.log" 2>&1
}
if run --subgraph 0 --input graph0/X=g0_X.npy --input graph0/Y=g0_Y.npy \
	--output graph0/O=g0_O.npy &&
	run --subgraph 1 --input graph1/X=g1_X.npy --output graph1/O=g1_O.npy; then
	ok "ipu-run --subgraph 0 / 1 with .npy inputs"
else
	notok "ipu-run failed: $(tail -n 3 "$work/ipu-run.log")"
fi
sed 's/^/# /' "$work/ipu-run.log"
if (cd "$work" && "$PYTHON" - <<'PY'
import numpy as np
import numpy.testing as npt
g0_O = np.load("g0_O.npy")
g1_O = np.load("g1_O.npy")
assert g0_O.dtype == np.float32 and g0_O.shape == (2,), (g0_O.dtype, g0_O.shape)
assert g1_O.dtype == np.float16 and g1_O.shape == (1, 3), (g1_O.dtype, g1_O.shape)
npt.assert_array_equal(g0_O, np.ones([2], dtype=np.float32) * 3)
npt.assert_array_equal(g1_O, np.array([[0.0, 1.5, 2.0]], dtype=np.float16))
print("# ipu-run outputs: graph0/O =", g0_O.tolist(), " graph1/O =", g1_O.tolist())
PY
); then
	ok "ipu-run outputs: graph0/O == [3, 3] (f32), graph1/O == [0, 1.5, 2] (f16)"
else
	notok "ipu-run outputs differ from the seed's asserts"
fi

# 5. the seed's scripts, as a user runs them: python3 compile.py, then
# python3 run.py, from the folder they are in
mkdir "$work/seed"
cp "$here/config.yaml" "$here/compile.py" "$here/run.py" "$work/seed/"
if (cd "$work/seed" && PATH="$bin:$PATH" "$PYTHON" compile.py) >"$work/seed.log" 2>&1 &&
	[ -s "$work/seed/executable.ipuef" ]; then
	ok "compile.py (the seed's, ipu-compile for poprt): executable.ipuef"
else
	notok "compile.py: $(tail -n 5 "$work/seed.log")"
fi
if [ ! -d "$pydir/ipu" ]; then
	notok "the Python package is not built ($pydir/ipu: make python)"
elif (cd "$work/seed" && PYTHONPATH="$pydir" "$PYTHON" run.py) >>"$work/seed.log" 2>&1; then
	ok "run.py (the seed's, from ipu.runtime import Runner, RuntimeConfig): its asserts pass"
else
	notok "run.py: $(tail -n 5 "$work/seed.log")"
fi
finish
