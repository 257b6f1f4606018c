#!/bin/bash
# make install into a temporary prefix, then use it as a user would: a C
# program built with only `pkg-config --cflags --libs libipurt` runs a model
# through the shared libraries; the libraries export only their API; the
# tools run from the prefix and have man pages.  The same program is built
# shared and static against the build tree, the prefix and a DESTDIR stage
# with the commands Documentation/runtime/model-runtime.md gives, word for
# word, and `make -n install` on the built tree compiles nothing.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
top=$PWD
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
ko() { fail=$((fail + 1)); echo "not ok - $1"; }

# a built tree is up to date for install: nothing to compile (a flags
# stamp remade on every run once made it list every object)
compiles=$(make -n BUILD="$BUILD" install PREFIX=/nonexistent 2>&1 | grep -c -- ' -c -o ')
[ "$compiles" -eq 0 ] && ok "make -n install on the built tree compiles nothing" ||
	ko "make -n install on the built tree lists $compiles compiles"

if make -s BUILD="$BUILD" install PREFIX="$prefix" >"$prefix.log" 2>&1; then
	ok "make install PREFIX=$prefix"
else
	ko "make install"; cat "$prefix.log"; echo "$pass passed, $((fail + 1)) failed"; exit 1
fi
rm -f "$prefix.log"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
flags=$(pkg-config --cflags --libs libipurt 2>&1) && ok "pkg-config --cflags --libs libipurt: $flags" ||
	ko "pkg-config libipurt: $flags"
case "$flags" in *"$PWD"*) ko "pkg-config points into the source tree" ;; esac
# nothing of the source tree on the include path: the compiler sees the prefix only
if cc -std=c11 -Wall -Werror -o "$prefix/hello" tests/install/hello_runtime.c $flags 2>"$prefix/cc.log"; then
	ok "a program builds against the installed headers and libipurt.so"
else
	ko "build against the installed headers: $(cat "$prefix/cc.log")"
fi
# the public headers of libipu and libipurt stand alone: nothing of the
# engine's (ipu/engine.h, ipu/ipux.h, ...) is reached from them, in the tree
# (no engine folder on the include path) and in the prefix
for h in ipu/ipu.h ipu/runtime.h; do
	if echo "#include <$h>" | cc -std=c11 -Wall -Werror -fsyntax-only -x c \
		-Iutil/include -Ilibipu/include -Iruntime/include - 2>"$prefix/cc.log"; then
		ok "<$h> compiles without the engine's folder on the include path"
	else
		ko "<$h> needs more than util/, libipu/ and runtime/ includes: $(head -3 "$prefix/cc.log")"
	fi
	reached=$(echo "#include <$h>" | cc -std=c11 -H -fsyntax-only -x c -I"$prefix/include" - 2>&1 |
		sed -n 's|^\.* ||p' | sed -n 's|.*/include/ipu/||p' | sort -u | tr '\n' ' ')
	case " $reached" in
	*" engine.h "* | *" ipux.h "* | *" codelet.h "* | *" thread.h "*)
		ko "installed <$h> reaches the engine's headers: $reached" ;;
	*) ok "installed <$h> reaches only: $reached" ;;
	esac
done
flags=$(pkg-config --cflags --libs libipu 2>&1)
if cc -std=c11 -Wall -Werror -o "$prefix/hello_libipu" tests/install/hello_libipu.c $flags 2>"$prefix/cc.log"; then
	out=$(LD_LIBRARY_PATH=$prefix/lib "$prefix/hello_libipu" 2>&1) && ok "libipu program: $out" ||
		ko "libipu program: $out"
else
	ko "build against the installed libipu: $(cat "$prefix/cc.log")"
fi
"$BUILD"/tests/modelrunner/gen_models "$prefix" >/dev/null
out=$(LD_LIBRARY_PATH=$prefix/lib "$prefix/hello" "$prefix/affine.ipuef" 2>&1) && ok "it runs a model: $out" ||
	ko "run: $out"
LD_LIBRARY_PATH=$prefix/lib ldd "$prefix/hello" | grep -q "libipurt.so.0 => $prefix/lib" &&
	ok "linked to libipurt.so.0 (soname)" || ko "not linked to the installed libipurt.so.0"
# Every installed header compiles alone under plain C11; the functions
# they declare (what follows an ipu*_ name and "(" once comments and macros
# are gone) are exactly what the shared libraries export: an export no
# header declares is an internal function that leaked, a declared function
# no library exports is an undefined reference in a user's program.
hbad=
for h in "$prefix"/include/ipu/*.h; do
	echo "#include <ipu/${h##*/}>" | cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -x c \
		-I"$prefix/include" - 2>"$prefix/cc.log" || hbad="$hbad ${h##*/}: $(grep -m1 error "$prefix/cc.log")"
done
[ -z "$hbad" ] && ok "every installed header ($(ls "$prefix"/include/ipu/*.h | wc -l)) compiles alone with -std=c11" ||
	ko "installed headers that do not compile alone:$hbad"
# a header that says extern "C" is meant for C++ too: it compiles alone there
hbad= hcxx=0
for h in $(grep -l 'extern "C"' "$prefix"/include/ipu/*.h); do
	hcxx=$((hcxx + 1))
	echo "#include <ipu/${h##*/}>" | c++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only -x c++ \
		-I"$prefix/include" - 2>"$prefix/cc.log" || hbad="$hbad ${h##*/}: $(grep -m1 error "$prefix/cc.log")"
done
[ "$hcxx" -gt 0 ] && [ -z "$hbad" ] && ok "every installed header saying extern \"C\" ($hcxx) compiles alone as C++11" ||
	ko "C++: $hcxx headers say extern \"C\";$hbad"
# only the public API is installed: the engine's own interface and the
# libraries' thread helper stay in the tree
leaked=$(cd "$prefix/include/ipu" && ls engine.h thread.h 2>/dev/null | tr '\n' ' ')
[ -z "$leaked" ] && ok "installed headers: $(cd "$prefix/include/ipu" && ls | tr '\n' ' ')" ||
	ko "internal headers installed: $leaked"
for h in "$prefix"/include/ipu/*.h; do echo "#include <ipu/${h##*/}>"; done |
	cc -std=c11 -E -P -x c -I"$prefix/include" - | grep -o '\bipu[a-z]*_[A-Za-z0-9_]*[[:space:]]*(' |
	sed 's/[[:space:]]*($//' | sort -u >"$prefix/declared"
for so in libipu.so libipurt.so libipucompiler.so; do
	nm -D --defined-only "$prefix/lib/$so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$prefix/$so.syms"
	bad=$(comm -23 "$prefix/$so.syms" "$prefix/declared" | head -5 | tr '\n' ' ')
	[ -s "$prefix/$so.syms" ] && [ -z "$bad" ] &&
		ok "$so exports $(wc -l <"$prefix/$so.syms") functions, each declared in an installed header" ||
		ko "$so exports what no installed header declares: $bad"
done
# the version scripts name every export (no pattern but the local catch-all)
bad=$(grep -HE '^[[:space:]]*[A-Za-z_]*[*?[][A-Za-z_*?]*;' libipu/libipu.map runtime/libipurt.map \
	compiler/libipucompiler.map | grep -v ':[[:space:]]*\*;$')
[ -z "$bad" ] && ok "libipu.map, libipurt.map and libipucompiler.map list their exports by name" ||
	ko "version script patterns: $bad"
# every declared function links from a program (a static inline one takes
# its own address; the others must come from libipurt.so or libipu.so)
{
	for h in "$prefix"/include/ipu/*.h; do echo "#include <ipu/${h##*/}>"; done
	echo "typedef void (*fnp)(void);"
	echo "fnp all[] = {"
	sed 's/.*/\t(fnp)\&&,/' "$prefix/declared"
	echo "};"
	echo "int main(void) { return all[0] == 0; }"
} >"$prefix/every.c"
if cc -std=c11 -o "$prefix/every" "$prefix/every.c" $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs libipurt libipucompiler) \
	-Wl,--no-as-needed 2>"$prefix/cc.log"; then
	ok "all $(wc -l <"$prefix/declared") functions the installed headers declare link against libipurt.so, libipu.so and libipucompiler.so"
else
	ko "declared but not exported: $(grep -o "undefined reference to \`[^']*'" "$prefix/cc.log" | sort -u | head -5 | tr '\n' ' ')"
fi
[ "$(readelf -d "$prefix/lib/libipu.so.0" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')" = libipu.so.0 ] &&
	ok "libipu.so soname libipu.so.0" || ko "libipu.so soname"
[ "$(readelf -d "$prefix/lib/libipucompiler.so.0" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')" = libipucompiler.so.0 ] &&
	ok "libipucompiler.so soname libipucompiler.so.0" || ko "libipucompiler.so soname"

# The compiler as a library: a program built with nothing but the installed
# headers and `pkg-config libipucompiler libipurt` compiles an ONNX model
# from memory (Y = 2 X + [10, 20, 30]) and runs it through libipurt, against
# the installed prefix and against the build tree's pkgconfig.
onnx_model=$prefix/hello.onnx
/usr/bin/python3 - "$onnx_model" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper, save
g = helper.make_graph(
    [helper.make_node("Mul", ["X", "two"], ["T"]), helper.make_node("Add", ["T", "bias"], ["Y"])],
    "hello", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 3])],
    [numpy_helper.from_array(np.array([2], np.float32), "two"),
     numpy_helper.from_array(np.array([10, 20, 30], np.float32), "bias")])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
for where in prefix "build tree"; do
	[ "$where" = prefix ] && pc=$prefix/lib/pkgconfig || pc=$top/$BUILD/pkgconfig
	flags=$(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs libipucompiler libipurt 2>&1)
	case "$flags" in *"$top/compiler"* | *"$top/runtime"*) ko "$where: pkg-config points into the sources: $flags" ;; esac
	if cc -std=c11 -Wall -Wextra -Werror -o "$prefix/hello_compiler" tests/install/hello_compiler.c $flags \
		2>"$prefix/cc.log"; then
		[ "$where" = prefix ] && run_env=LD_LIBRARY_PATH=$prefix/lib || run_env=IPU_UNUSED=1
		out=$(cd / && env -u LD_LIBRARY_PATH $run_env "$prefix/hello_compiler" "$onnx_model" 2>&1)
		case "$out" in
		*" bytes compiled ("*"tiles used); Y[0..2] = 12 22 32") ok "$where: hello_compiler compiles from memory and runs: $out" ;;
		*) ko "$where: hello_compiler: $out" ;;
		esac
	else
		ko "$where: hello_compiler does not build with pkg-config libipucompiler libipurt: $(head -5 "$prefix/cc.log")"
	fi
done
[ "$(pkg-config --modversion libipucompiler 2>&1)" = "$(pkg-config --modversion libipurt)" ] &&
	ok "libipucompiler.pc $(pkg-config --modversion libipucompiler)" || ko "libipucompiler.pc: $(pkg-config --modversion libipucompiler 2>&1)"
for t in ipu-run ipuef-dump ipu-compile ipu-info ipu-reset ipu-monitor; do
	if "$prefix/bin/$t" --version | grep -q "ipu-stack" && [ -s "$prefix/share/man/man1/$t.1" ]; then
		ok "$t --version and man page"
	else
		ko "$t --version or man page"
	fi
done

# ipu-info (installed) lists the in-process device whether or not the
# driver is loaded, and exits 0 when it lists any device
info=$("$prefix/bin/ipu-info" 2>&1)
rc=$?
model=$(echo "$info" | sed -n '/^model: in-process device/,/^[^ ]/p')
case "$model" in
*"libipu backend 'model'"*"tiles 1472 x 624 KiB (897.0 MiB), version ipu2"*"select: --device model "*)
	[ $rc -eq 0 ] && ok "ipu-info lists the in-process device (exit 0)" ||
		ko "ipu-info lists the in-process device but exits $rc" ;;
*) ko "ipu-info (exit $rc): $info" ;;
esac
if [ -d /sys/bus/pci/drivers/ipu ]; then
	echo "$info" | grep -q "no IPU driver" && ko "ipu-info says no driver with /sys/bus/pci/drivers/ipu present" ||
		ok "ipu-info with the driver loaded"
else
	echo "$info" | grep -q "^no kernel devices: no IPU driver" && ok "ipu-info says the driver is missing" ||
		ko "ipu-info without the driver: $info"
fi
info=$("$prefix/bin/ipu-info" model:tiles=16,tile_mem=64k,workers=1 2>&1) &&
	echo "$info" | grep -q "^  tiles 16 x 64 KiB (1.0 MiB), version ipu2, serial " &&
	! echo "$info" | grep -q "kernel devices" && ok "ipu-info model:tiles=16,tile_mem=64k,workers=1 shows that device alone" ||
	ko "ipu-info model:tiles=16,...: $info"
out=$("$prefix/bin/ipu-info" --json 2>&1 | /usr/bin/python3 -c '
import json, sys
arr = json.load(sys.stdin)
m = arr[0]
assert (m["name"], m["backend"], m["tiles"], m["tile_mem"], m["memory"], m["version_name"]) == \
    ("model", "model", 1472, 624 * 1024, 1472 * 624 * 1024, "ipu2"), m
assert all(d.get("backend") == "kernel" for d in arr[1:]), arr
print(len(arr))' 2>&1) && ok "ipu-info --json: the in-process device first, then $((out - 1)) kernel devices" ||
	ko "ipu-info --json: $out"
out=$("$prefix/bin/ipu-info" model:tiles=nope 2>&1)
[ $? -eq 1 ] && case "$out" in *"model:tiles=nope: device option tiles"*) true ;; *) false ;; esac &&
	ok "ipu-info model:tiles=nope: exit 1, libipu's message" || ko "ipu-info model:tiles=nope: $out"

# the Python package: from the prefix, and pip-installed into a venv
PYTHON=${PYTHON:-/usr/bin/python3}
site=$("$PYTHON" -c 'import sys; print("lib/python%d.%d/dist-packages" % sys.version_info[:2])')
pyrun='
import sys, numpy as np, ipu.runtime as rt
r = rt.Runner(sys.argv[1])
ins = {i.name: np.ones(i.shape, i.numpy_data_type()) for i in r.get_execute_inputs()}
outs = {o.name: np.zeros(o.shape, o.numpy_data_type()) for o in r.get_execute_outputs()}
r.execute(ins, outs)
assert all(np.isfinite(v).all() for v in outs.values())
print(__import__("ipu").__file__)
'
# the installed extension module exports its init function alone (the
# libraries inside it are linked in, hidden)
ext=$(ls "$prefix/$site"/ipu/_ipu*.so 2>/dev/null | head -1)
syms=$([ -n "$ext" ] && nm -D --defined-only "$ext" | awk '$2 != "A" { print $3 }' | tr '\n' ' ')
[ "$syms" = "PyInit__ipu " ] && ok "${ext##*/} exports PyInit__ipu alone" ||
	ko "the installed extension module ${ext:-(none)} exports: $syms"
out=$(cd / && PYTHONPATH=$prefix/$site "$PYTHON" -c "$pyrun" "$prefix/affine.ipuef" 2>&1)
case "$out" in
"$prefix/$site/ipu/__init__.py") ok "import ipu.runtime from $prefix/$site runs a model" ;;
*) ko "the installed Python package: $out" ;;
esac
if "$PYTHON" -m venv --system-site-packages "$prefix/venv" >"$prefix/venv.log" 2>&1 &&
	IPU_BUILD=$(cd "$BUILD" && pwd) "$prefix/venv/bin/pip" install --no-build-isolation --no-index ./python >>"$prefix/venv.log" 2>&1; then
	out=$(cd / && "$prefix/venv/bin/python" -c "$pyrun" "$prefix/affine.ipuef" 2>&1)
	case "$out" in
	"$prefix/venv/"*/ipu/__init__.py) ok "pip install --no-build-isolation ./python into a venv runs a model" ;;
	*) ko "the pip-installed package: $out" ;;
	esac
else
	ko "pip install into a venv: $(tail -n 5 "$prefix/venv.log")"
fi
# The page's program and commands, as the page gives them.
doc=Documentation/runtime/model-runtime.md
cc_shared='cc -o hello hello.c $(pkg-config --cflags --libs libipurt)'
cc_static='cc -static -o hello-static hello.c $(pkg-config --static --cflags --libs libipurt)'
for c in "$cc_shared" "$cc_static" 'export PKG_CONFIG_PATH=$PWD/build/pkgconfig' \
	'export PKG_CONFIG_PATH=/opt/ipu/lib/pkgconfig LD_LIBRARY_PATH=/opt/ipu/lib' \
	'make install DESTDIR=/tmp/stage PREFIX=/usr' 'PKG_CONFIG_SYSROOT_DIR=/tmp/stage'; do
	grep -qF -- "$c" "$doc" && ok "$doc gives: $c" || ko "$doc no longer gives: $c"
done
if awk '/<!-- hello.c: tests\/install\/hello.c -->/ { f = 1; next }
	f && /^```c$/ { g = 1; next } g && /^```$/ { exit } g' "$doc" |
	diff -u tests/install/hello.c - >"$prefix/doc.diff"; then
	ok "$doc shows tests/install/hello.c as it is"
else
	ko "$doc's program differs from tests/install/hello.c: $(head -20 "$prefix/doc.diff")"
fi

# build_run WHERE ENV...: in a fresh folder holding hello.c, the shared and
# the static build of the page, each run on the affine model (Y = X * 2 +
# [10, 20, 30] with X all ones), under `env ENV...`; sets $built to the
# shared program.
build_run() {
	local where=$1 dir out kind cmd prog
	shift
	dir=$(mktemp -d "$prefix/hello.XXXX")
	cp tests/install/hello.c "$dir/"
	built=
	for kind in shared static; do
		[ $kind = shared ] && cmd=$cc_shared prog=$dir/hello || cmd=$cc_static prog=$dir/hello-static
		if ! (cd "$dir" && env "$@" bash -c "$cmd") >"$dir/cc.log" 2>&1; then
			ko "$where: $kind build failed: $(head -5 "$dir/cc.log")"
			continue
		fi
		out=$(env "$@" "$prog" "$prefix/affine.ipuef" 2>&1)
		[ "$out" = "Y[0..2] = 12 22 32" ] && ok "$where: $kind build runs the model: $out" ||
			ko "$where: $kind build: $out"
	done
	if [ -x "$dir/hello-static" ] && readelf -d "$dir/hello-static" | grep -q NEEDED; then
		ko "$where: hello-static needs shared libraries: $(readelf -d "$dir/hello-static" | grep NEEDED | head -3)"
	fi
	[ -x "$dir/hello" ] && built=$dir/hello
}

# the build tree as a prefix: nothing but PKG_CONFIG_PATH, and the program
# runs where it was built (rpath into the tree; libipurt finds libipu)
build_run "build tree" -u LD_LIBRARY_PATH PKG_CONFIG_PATH="$top/$BUILD/pkgconfig"
needs=$([ -n "$built" ] && env -u LD_LIBRARY_PATH ldd "$built" 2>&1 | grep 'libipu' | tr -s ' \t' ' ')
case "$needs" in
*"libipurt.so.0 => $top/$BUILD/libipurt.so.0"*) ;;
*) needs="not $needs" ;;
esac
case "$needs" in
"not "*) ko "the build tree's program loads: ${needs#not }" ;;
*"libipu.so.0 => $top/$BUILD/libipu.so.0"*)
	ok "the build tree's program loads $BUILD/libipurt.so.0 and libipu.so.0" ;;
*) ko "the build tree's program loads: $needs" ;;
esac
for f in include/ipu/runtime.h include/ipu/ipu.h libipu.so libipurt.so libipu.so.0 libipurt.so.0 \
	pkgconfig/libipu.pc pkgconfig/libipurt.pc; do
	[ -e "$BUILD/$f" ] || ko "the build tree has no $BUILD/$f"
done
# the installed prefix, as the page says for a prefix outside the
# loader's and pkg-config's paths
build_run "prefix" PKG_CONFIG_PATH="$prefix/lib/pkgconfig" LD_LIBRARY_PATH="$prefix/lib"
# every .pc is complete for a static link on its own: libipu's too
if PKG_CONFIG_PATH=$prefix/lib/pkgconfig cc -static -o "$prefix/hello_libipu_static" \
	tests/install/hello_libipu.c $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --static --cflags --libs libipu) \
	2>"$prefix/cc.log"; then
	out=$("$prefix/hello_libipu_static" 2>&1) && ok "static libipu program (pkg-config --static libipu): $out" ||
		ko "static libipu program: $out"
else
	ko "static link with pkg-config --static libipu: $(head -5 "$prefix/cc.log")"
fi
# a DESTDIR stage, as a package build uses it
stage=$prefix/stage
if make -s BUILD="$BUILD" install DESTDIR="$stage" PREFIX=/usr >"$prefix/stage.log" 2>&1; then
	ok "make install DESTDIR=$stage PREFIX=/usr"
	grep -q "^prefix=/usr$" "$stage/usr/lib/pkgconfig/libipurt.pc" &&
		ok "the staged libipurt.pc says prefix=/usr" || ko "the staged libipurt.pc: $(head -3 "$stage/usr/lib/pkgconfig/libipurt.pc")"
	build_run "DESTDIR stage" PKG_CONFIG_SYSROOT_DIR="$stage" PKG_CONFIG_PATH="$stage/usr/lib/pkgconfig" \
		LD_LIBRARY_PATH="$stage/usr/lib"
else
	ko "make install DESTDIR: $(tail -5 "$prefix/stage.log")"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
