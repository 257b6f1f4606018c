#!/bin/bash
# The custom-operator example end to end (Documentation/compiler/custom-ops.md):
# the plugin of examples/custom-op/ built out of tree against `make install
# PREFIX=...` with pkg-config only, the torch model with a com.example
# RmsNorm node compiled with it (fp32 and fp16, --check against the
# plugin's reference), run in-process by ipu-run and compared with torch;
# the report and the profile name the op; every refusal says what is
# wrong: a plugin of another ABI version, a model whose plugin is absent
# or another build of it (hash), a plugin whose check refuses a vertex,
# a plugin whose shape inference refuses the node (named).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
top=$PWD
bin=$top/$BUILD/bin
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
ko() { fail=$((fail + 1)); echo "not ok - $1"; }
# expect NAME FILE PATTERN: FILE contains PATTERN (fixed string)
expect() { if grep -qF -- "$3" "$2"; then ok "$1"; else ko "$1: no '$3' in: $(head -c 600 "$2")"; fi; }

prefix=$tmp/prefix
if make -s BUILD="$BUILD" install PREFIX="$prefix" >"$tmp/install.log" 2>&1; then
	ok "make install PREFIX=$prefix"
else
	ko "make install: $(tail -5 "$tmp/install.log")"; echo "$pass passed, $fail failed"; exit 1
fi
[ -f "$prefix/include/ipu/custom_op.h" ] && ok "ipu/custom_op.h is installed" || ko "ipu/custom_op.h not installed"

# the plugin, out of tree: only the prefix on the include path
mkdir -p "$tmp/ex" "$tmp/abi" "$tmp/strict" "$tmp/other"
cp examples/custom-op/rmsnorm.c examples/custom-op/Makefile "$tmp/ex/"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
case "$(pkg-config --cflags libipu)" in *"$top"*) ko "pkg-config points into the source tree" ;; esac
build() { make -s -C "$tmp/ex" OUT="$1" CFLAGS="-O2 $2" >"$1/cc.log" 2>&1; }
build "$tmp/ex" "" && ok "the example plugin builds out of tree with pkg-config" ||
	{ ko "plugin build: $(cat "$tmp/ex/cc.log")"; echo "$pass passed, $fail failed"; exit 1; }
lib=$tmp/ex/librmsnorm.so
build "$tmp/abi" "-DRMSNORM_ABI=99" && build "$tmp/strict" "-DRMSNORM_MAX_COLS=16" &&
	build "$tmp/other" "-DRMSNORM_MAX_COLS=65535" && ok "three variants built (ABI 99, strict check, another hash)" ||
	ko "variant builds"

# the torch model (seeded) with the custom-domain node
if $PY examples/custom-op/make_model.py "$tmp" >"$tmp/py.log" 2>&1 &&
   $PY examples/custom-op/make_model.py "$tmp" --bad-weight >>"$tmp/py.log" 2>&1; then
	ok "torch exports the model with a com.example::RmsNorm node"
else
	ko "make_model.py: $(tail -5 "$tmp/py.log")"; echo "$pass passed, $fail failed"; exit 1
fi
$PY -c "
import onnx, sys
m = onnx.load('$tmp/rmsnorm.onnx')
sys.exit(0 if [(n.domain, n.op_type) for n in m.graph.node if n.domain] == [('com.example', 'RmsNorm')] else 1)" &&
	ok "the ONNX node is in domain com.example" || ko "no com.example node in the model"

# compile, checked against the plugin's reference
comp() { "$bin/ipu-compile" --input-model "$1" --target tiles=16,tile_mem=256k "${@:2}"; }
if comp "$tmp/rmsnorm.onnx" --custom_library_so_paths "$lib" --check --report "$tmp/r.html" \
	-o "$tmp/m.ipuef" >"$tmp/c.log" 2>&1; then
	ok "ipu-compile --custom_library_so_paths --check (fp32)"
else
	ko "ipu-compile fp32: $(tail -3 "$tmp/c.log")"
fi
expect "--check: the device matches the plugin's reference" "$tmp/c.log" "check: y: ok"
expect "the report names the custom op" "$tmp/r.html" "com.example::RmsNorm"
comp "$tmp/rmsnorm.onnx" --custom-library-so-paths "$lib" --precision fp16 --check -o "$tmp/m16.ipuef" \
	>"$tmp/c16.log" 2>&1 && ok "ipu-compile --custom-library-so-paths --precision fp16 --check" ||
	ko "ipu-compile fp16: $(tail -3 "$tmp/c16.log")"
expect "fp16: the device matches the reference" "$tmp/c16.log" "check: y: ok"
"$bin/ipuef-dump" "$tmp/m.ipuef" >"$tmp/dump.txt" 2>&1 && ok "ipuef-dump reads the model" || ko "ipuef-dump"

# run in-process and compare with torch
run() { "$bin/ipu-run" "$@" --input x="$tmp/x.npy" -n 2; }
run "$tmp/m.ipuef" --custom-ops "$lib" --output y="$tmp/y.npy" --profile "$tmp/trace.json" >"$tmp/r.log" 2>&1 &&
	ok "ipu-run --custom-ops" || ko "ipu-run: $(tail -3 "$tmp/r.log")"
expect "the profile names the op's compute set" "$tmp/trace.json" "RmsNorm"
run "$tmp/m16.ipuef" --custom-ops "$lib" --output y="$tmp/y16.npy" >"$tmp/r16.log" 2>&1 &&
	ok "ipu-run --custom-ops (fp16 model)" || ko "ipu-run fp16: $(tail -3 "$tmp/r16.log")"
$PY - "$tmp" <<'PYEOF' >"$tmp/cmp.log" 2>&1 && ok "outputs match torch: $(cat "$tmp/cmp.log")" || ko "torch comparison: $(cat "$tmp/cmp.log")"
import sys
import numpy as np
d = sys.argv[1]
t = np.load(d + "/y_torch.npy")
a = np.load(d + "/y.npy")
h = np.load(d + "/y16.npy").astype(np.float32)
e32, e16 = float(abs(a - t).max()), float(abs(h - t).max())
print("fp32 max abs err %.3g, fp16 %.3g" % (e32, e16))
sys.exit(0 if e32 < 1e-5 and e16 < 1e-2 else 1)
PYEOF

# refusals
hash=$(sha256sum "$lib" | cut -d' ' -f1)
run "$tmp/m.ipuef" >"$tmp/absent.log" 2>&1 && ko "ran without its plugin" || ok "a model whose plugin is absent is refused"
expect "... naming the op and the library hash" "$tmp/absent.log" "custom codelet com.example::RmsNorm (library sha256 $hash) is not loaded"
run "$tmp/m.ipuef" --custom-ops "$tmp/other/librmsnorm.so" >"$tmp/other.log" 2>&1 &&
	ko "ran with another build of the plugin" || ok "another build of the plugin (hash) is refused"
expect "... naming both hashes" "$tmp/other.log" "compiled with library sha256 $hash, the device loaded sha256 $(sha256sum "$tmp/other/librmsnorm.so" | cut -d' ' -f1)"
comp "$tmp/rmsnorm.onnx" --custom_library_so_paths "$tmp/abi/librmsnorm.so" -o "$tmp/x.ipuef" >"$tmp/abi.log" 2>&1 &&
	ko "compiled with a plugin of ABI 99" || ok "a plugin of another ABI version is refused"
expect "... saying both versions" "$tmp/abi.log" "plugin built for custom-op ABI version 99, this stack speaks version 2"
run "$tmp/m.ipuef" --custom-ops "$tmp/abi/librmsnorm.so" >"$tmp/abi2.log" 2>&1 &&
	ko "ran with a plugin of ABI 99" || ok "the runtime refuses the ABI 99 plugin too"
expect "... saying both versions" "$tmp/abi2.log" "ABI version 99"
comp "$tmp/rmsnorm.onnx" --custom_library_so_paths "$tmp/strict/librmsnorm.so" -o "$tmp/x.ipuef" >"$tmp/strict.log" 2>&1 &&
	ko "compiled with a plugin whose check refuses" || ok "a vertex the plugin's check refuses fails the compile"
expect "... with the check's reason" "$tmp/strict.log" "(RmsNorm) on tile"
expect "... and its message" "$tmp/strict.log" "rows of 64 elements, this build takes at most 16"
comp "$tmp/rmsnorm_bad.onnx" --custom_library_so_paths "$lib" -o "$tmp/x.ipuef" >"$tmp/bad.log" 2>&1 &&
	ko "compiled a node the plugin's shape inference refuses" || ok "the plugin's shape inference refusal fails the compile"
expect "... naming the node, with the plugin's message" "$tmp/bad.log" \
	"node '/RmsNorm' (com.example::RmsNorm, #1): com.example::RmsNorm's shape inference (plugin): W must be a vector of X's last dimension (64)"
comp "$tmp/rmsnorm.onnx" -o "$tmp/x.ipuef" >"$tmp/noplug.log" 2>&1 &&
	ko "compiled without the plugin" || ok "compiling without the plugin is refused"
expect "... naming the op and the option" "$tmp/noplug.log" "operator RmsNorm of domain 'com.example' is not loaded: give the plugin library that defines it with --custom_library_so_paths"
comp "$tmp/rmsnorm.onnx" --custom_library_so_paths librmsnorm.so -o "$tmp/x.ipuef" >"$tmp/name.log" 2>&1 &&
	ko "a bare library name was searched for" || ok "a library name without a path is refused"
expect "... saying to give a path" "$tmp/name.log" "give a path (with a '/')"
[ -e "$tmp/x.ipuef" ] && ko "a refused compile left an output" || ok "no refused compile wrote an output"

# Python (compile, Runner) and ipu-serve, bit-identical to ipu-run
BUILD=$BUILD $PY tests/custom/custom_py_serve.py "$tmp" >"$tmp/py.log" 2>&1
pyline=$(grep -E '^custom-py: [0-9]+ passed, [0-9]+ failed' "$tmp/py.log")
pp=$(echo "$pyline" | sed -nE 's/custom-py: ([0-9]+) passed.*/\1/p')
pf=$(echo "$pyline" | sed -nE 's/.* ([0-9]+) failed/\1/p')
grep -E '^(ok|not ok) - ' "$tmp/py.log"
if [ -z "$pp" ]; then
	ko "custom_py_serve.py gave no summary: $(tail -20 "$tmp/py.log")"
else
	pass=$((pass + pp)); fail=$((fail + pf))
	[ "$pf" -eq 0 ] || tail -40 "$tmp/py.log"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
