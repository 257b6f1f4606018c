#!/bin/bash
# The compiler's property test (property.py): random graphs from tiny to
# larger than the device, each compiled by ipu-compile and either matching
# onnxruntime on the in-process device or refused with a message naming
# the memory it needs and what the device has.  Installs onnxruntime-node
# first the way the model tests do (tests/models/run-models.sh).
#
# Usage: tests/compiler/property/run-property.sh [property.py options]
# Environment: BUILD (default build), PYTHON (default /usr/bin/python3).
# Ends with "property: N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root" || exit 1
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
for p in ipu-compile ipu-run; do
	if [ ! -x "$BUILD/bin/$p" ]; then
		echo "not ok - $BUILD/bin/$p is not built (make)"
		echo "property: 0 passed, 1 failed"
		exit 1
	fi
done
tests/models/run-models.sh --install-npm-only
work="$BUILD/property.$$"
nice "$PYTHON" "$here/property.py" --bin "$BUILD/bin" --work "$work" "$@"
rc=$?
# a private work directory (concurrent runs), kept when something failed
[ $rc -eq 0 ] && rm -rf "$work"
exit $rc
