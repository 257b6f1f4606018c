#!/bin/bash
# check-qemu-flags-identity.sh DUMP: DUMP and DUMP-qemu-flags (the same
# vertex runner linked with the engine built by this tree's flags and by
# QEMU's) must write byte-identical outputs.  Exits 0 when they do; ends
# with the "N passed, N failed" line make check adds up.
set -u
dump=$1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! "$dump" >"$tmp/tree.bin" || ! "$dump-qemu-flags" >"$tmp/qemu.bin"; then
	echo "identity: a vertex runner failed"
	echo "0 passed, 1 failed"
	exit 1
fi
n=$(stat -c %s "$tmp/tree.bin")
if [ "$n" -eq 0 ]; then
	echo "identity: no output"
	echo "0 passed, 1 failed"
	exit 1
fi
if ! cmp "$tmp/tree.bin" "$tmp/qemu.bin"; then
	echo "identity: the engine built with QEMU's flags gives different results"
	echo "  (first differing byte above; outputs in order: MATMUL and CONV2D per"
	echo "  kernel variant, then BINARY, SOFTMAX, NORM, REDUCE, POOL2D, UNARY ops)"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "identity: $n bytes of MATMUL/CONV2D (every kernel variant), BINARY, SOFTMAX, NORM, REDUCE, POOL2D, SAMPLE and UNARY outputs identical with QEMU's build flags"
echo "1 passed, 0 failed"
