#!/bin/bash
# onnx-cli-check.sh BINDIR CASE-TOOL [SUITE:RECORD ...] - ONNX's test
# suites of Debian's libonnx-testdata through the command-line tools: every
# case compiled with ipu-compile and run with ipu-run on its input_N.pb,
# outputs compared with output_N.pb (onnx_cli_case.c), two cases at a time.
# Writes each suite's table to $LOGDIR/onnx-SUITE-cli.txt and prints pass /
# wrong / unsupported / unreadable per suite.  Fails on any wrong result and
# on a suite passing fewer cases than its record.  ONNX_CLI_FILTER=TEXT runs
# the cases whose name contains TEXT (no record then).
set -u
bindir=$1
tool=$2
shift 2
data=/usr/share/libonnx-testdata/data
LOGDIR=${LOGDIR:-build/test-logs}
mkdir -p "$LOGDIR"
filter=${ONNX_CLI_FILTER:-}
passed=0
failed=0
for spec in "$@"; do
	suite=${spec%%:*}
	record=${spec#*:}
	if [ ! -d "$data/$suite" ]; then
		echo "# $data/$suite missing: install libonnx-testdata"
		failed=$((failed + 1))
		continue
	fi
	table=$LOGDIR/onnx-$suite-cli.txt
	start=$(date +%s)
	find "$data/$suite" -mindepth 1 -maxdepth 1 -type d -name "*$filter*" | sort |
		xargs -r -P 2 -n 1 "$tool" "$bindir" | sort -k2,2 >"$table.tmp"
	mv "$table.tmp" "$table"
	secs=$(($(date +%s) - start))
	count() { grep -c "^$1 " "$table"; }
	p=$(count pass)
	w=$(count wrong)
	u=$(count unsupported)
	n=$(count no-data)
	fz=$(grep -c '^pass .*\[inputs frozen\]' "$table")
	echo "pass $p ($fz with inputs frozen), wrong $w, unsupported $u, unreadable $n" >>"$table"
	echo "# $suite through ipu-compile and ipu-run: pass $p ($fz with inputs frozen), wrong $w, unsupported $u, unreadable $n (${secs}s)"
	grep "^wrong " "$table" | sed 's/^/  /'
	if [ "$w" -ne 0 ]; then
		echo "not ok - $suite: $w wrong results"
		failed=$((failed + 1))
	else
		echo "ok - $suite: no wrong result"
		passed=$((passed + 1))
	fi
	if [ -n "$filter" ]; then
		continue
	elif [ "$p" -lt "$record" ]; then
		echo "not ok - $suite: $p passing, recorded $record"
		failed=$((failed + 1))
	else
		echo "ok - $suite: $p passing (record $record)"
		passed=$((passed + 1))
	fi
done
# --freeze refuses, naming what to change: an input the model lacks, a
# file of another element type
expect() {
	local want=$1
	shift
	if out=$("$@" 2>&1); then
		echo "not ok - $*: exit 0, expected a refusal"
		failed=$((failed + 1))
	elif [[ "$out" == *"$want"* ]]; then
		echo "ok - refused: ${out##*: --freeze }"
		passed=$((passed + 1))
	else
		echo "not ok - $*: '$out' does not say '$want'"
		failed=$((failed + 1))
	fi
}
rs=$data/node/test_reshape_extended_dims
if [ -z "$filter" ] && [ -d "$rs" ]; then
	tmp=$(mktemp -d)
	expect "no input named 'nope' (its inputs: 'data', 'shape')" \
		"$bindir/ipu-compile" -i "$rs/model.onnx" -o "$tmp/m.ipuef" --freeze "nope=$rs/test_data_set_0/input_1.pb"
	expect "input_0.pb holds float32, the input is int64" \
		"$bindir/ipu-compile" -i "$rs/model.onnx" -o "$tmp/m.ipuef" --freeze "shape=$rs/test_data_set_0/input_0.pb"
	rm -rf "$tmp"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
