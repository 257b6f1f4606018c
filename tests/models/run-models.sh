#!/bin/bash
# The model tests (make check): make sure onnxruntime-node is installed
# (deps/npm.txt, into $IPU_NPM_DIR, default ~/.cache/ipu-stack/npm, with
# --ignore-scripts; idempotent: nothing is fetched when the pinned version
# is there), then run run_models.py: an MLP, a ResNet-style CNN and a small
# transformer encoder, generated with fixed seeds, compiled by ipu-compile
# in fp32 and fp16, run by ipu-run on the in-process device and compared
# with onnxruntime (numpy when onnxruntime cannot run here).
#
# Usage: tests/models/run-models.sh [run_models.py options]
#        tests/models/run-models.sh --san [run_models.py options]
#                 (with the ASan+UBSan ipu-compile and ipu-run of build/san)
#        tests/models/run-models.sh --install-npm-only
# Environment: BUILD (default build), LOGDIR (default build/test-logs: the
# results go to $LOGDIR/models-results.txt and .json), PYTHON (default
# /usr/bin/python3, with Debian's python3-onnx), IPU_NPM_DIR,
# IPU_NO_NPM_INSTALL=1 (never fetch; use what is there or numpy).
# Ends with "models: N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 1
BUILD=${BUILD:-build}
LOGDIR=${LOGDIR:-build/test-logs}
PYTHON=${PYTHON:-/usr/bin/python3}
export IPU_NPM_DIR=${IPU_NPM_DIR:-${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}/.cache/ipu-stack/npm}

# Install the npm packages of deps/npm.txt that are missing (exact
# versions).  Never fatal: run_models.py says which reference it used.
ensure_npm() {
	local p n v have missing=""
	[ -s deps/npm.txt ] || return 0
	for p in $(sed 's/#.*//' deps/npm.txt); do
		n=${p%@*}
		v=${p##*@}
		have=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$IPU_NPM_DIR/node_modules/$n/package.json" 2>/dev/null)
		[ "$have" = "$v" ] || missing="$missing $p"
	done
	if [ -z "$missing" ]; then
		echo "# npm: deps/npm.txt present in $IPU_NPM_DIR"
		return 0
	fi
	if [ "${IPU_NO_NPM_INSTALL:-0}" = 1 ] || ! command -v npm >/dev/null 2>&1; then
		echo "# npm: not installing$missing (npm missing or IPU_NO_NPM_INSTALL=1)"
		return 0
	fi
	echo "# npm: installing$missing into $IPU_NPM_DIR"
	mkdir -p "$IPU_NPM_DIR" &&
		# shellcheck disable=SC2086
		(cd "$IPU_NPM_DIR" && timeout 300 npm install --ignore-scripts --no-audit --no-fund \
			--fetch-retries=1 --fetch-timeout=60000 --loglevel=error $missing 2>&1 |
			grep -v 'Unknown user config' | sed 's/^/# npm: /') ||
		echo "# npm: install failed; the reference will be numpy"
}

ensure_npm
# (bench/models.mk installs the reference this way, then runs the bench)
[ "${1:-}" = "--install-npm-only" ] && exit 0
if [ "${1:-}" = "--san" ]; then
	# the same tests with ipu-compile and ipu-run built with ASan+UBSan
	# (build/san, as make check's unit tests)
	shift
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
	# (retried: another make in the same tree may be rewriting an archive)
	built=0
	for try in 1 2 3; do
		if make -s BUILD=build/san SANITIZE=1 build/san/bin/ipu-compile build/san/bin/ipu-run \
			>"$LOGDIR/models-san-build.log" 2>&1; then
			built=1
			break
		fi
		echo "# make BUILD=build/san ... failed (try $try), retrying"
		sleep $((try * 10))
	done
	if [ $built -eq 0 ]; then
		tail -n 20 "$LOGDIR/models-san-build.log"
		echo "not ok - make BUILD=build/san SANITIZE=1 build/san/bin/ipu-compile build/san/bin/ipu-run"
		echo "models-asan: 0 passed, 1 failed"
		exit 1
	fi
	work="$BUILD/models-test-san.$$"
	"$PYTHON" "$here/run_models.py" --san --bin build/san/bin --work "$work" \
		--results "$LOGDIR/models-results-asan.txt" "$@"
	rc=$?
	# a private work directory (concurrent runs), kept when something failed
	[ $rc -eq 0 ] && rm -rf "$work"
	exit $rc
fi
for p in ipu-compile ipu-run; do
	if [ ! -x "$BUILD/bin/$p" ]; then
		echo "not ok - $BUILD/bin/$p is not built (make)"
		echo "models: 0 passed, 1 failed"
		exit 1
	fi
done
work="$BUILD/models-test.$$"
"$PYTHON" "$here/run_models.py" --bin "$BUILD/bin" --work "$work" \
	--results "$LOGDIR/models-results.txt" "$@"
rc=$?
[ $rc -eq 0 ] && rm -rf "$work"
exit $rc
