#!/bin/bash
# The harness `make check` is read by (scripts/run-tests), checked against
# commands whose summaries are known: a named summary whose name holds a
# digit counts, a crash or a missing summary counts as one failure, and a
# failure's log end reaches the harness's own output.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check() {
	if [ "$2" = "$3" ]; then
		pass=$((pass + 1))
		echo "ok - $1"
	else
		fail=$((fail + 1))
		echo "not ok - $1: got '$2', want '$3'"
	fi
}
last() { LOGDIR=$tmp/logs scripts/run-tests "$@" 2>&1 | tail -n 1; }

check "a plain summary" "$(last "echo '5 passed, 0 failed'")" "5 passed, 0 failed"
check "a named summary" "$(last "echo 'suite: 5 passed, 0 failed'")" "5 passed, 0 failed"
check "a name with digits" "$(last "echo 'zoo-fp8: 12 passed, 0 failed'")" "12 passed, 0 failed"
check "a name with a dot and underscore" "$(last "echo 'a_b.c: 2 passed, 1 failed'")" "2 passed, 1 failed"
check "the last summary counts" "$(last "echo '1 passed, 1 failed'; echo '3 passed, 0 failed'")" "3 passed, 0 failed"
check "no summary is one failure" "$(last "echo hello")" "0 passed, 1 failed"
check "a crash after a clean summary" "$(last "echo '4 passed, 0 failed'; exit 3")" "4 passed, 1 failed"
check "a failing command's summary stands" "$(last "echo '4 passed, 2 failed'; exit 1")" "4 passed, 2 failed"
check "summaries add up" "$(last "echo '2 passed, 0 failed'" "echo 'x: 3 passed, 1 failed'" "true")" "5 passed, 2 failed"
check "a summary inside a line does not count" "$(last "echo 'said 9 passed, 0 failed'")" "0 passed, 1 failed"
out=$(LOGDIR=$tmp/logs scripts/run-tests "echo 'Traceback: ValueError: bad shape'; exit 1" 2>&1)
case "$out" in
*"ValueError: bad shape"*) check "a failure's log end is shown" yes yes ;;
*) check "a failure's log end is shown" no yes ;;
esac
LOGDIR=$tmp/logs scripts/run-tests "true" >/dev/null 2>&1
check "exit status on failure" "$?" "1"
LOGDIR=$tmp/logs scripts/run-tests "echo '1 passed, 0 failed'" >/dev/null 2>&1
check "exit status on success" "$?" "0"
echo "run-tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
