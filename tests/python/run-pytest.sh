#!/bin/bash
# The Python package's tests (tests/python, Debian's python3-pytest) on the
# module of the plain build ($BUILD/python).  A skipped test counts as
# failed: every test here must run on a machine set up by `make deps`.
# Ends with "python: N passed, N failed" (make check reads it).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) build=$BUILD ;; *) build=$root/$BUILD ;; esac
PYTHON=${PYTHON:-/usr/bin/python3}
if [ ! -d "$build/python/ipu" ]; then
	echo "not ok - $build/python/ipu is not built (make python)"
	echo "python: 0 passed, 1 failed"
	exit 1
fi
xml=$(mktemp "${TMPDIR:-/tmp}/pytest.XXXXXX.xml")
trap 'rm -f "$xml"' EXIT
cd "$root/tests/python" || exit 1
BUILD=$build PYTHONPATH="$build/python" "$PYTHON" -m pytest -q -p no:cacheprovider \
	--junitxml="$xml" "$@" .
"$PYTHON" - "$xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root)
total = sum(int(s.get("tests", 0)) for s in suites)
bad = sum(int(s.get(k, 0)) for s in suites for k in ("failures", "errors", "skipped"))
print(f"python: {total - bad} passed, {bad} failed")
sys.exit(1 if bad or not total else 0)
PY
