#!/bin/sh
# e2e-ipu-run.sh - inside the VM: every compiled model in /ipu/data
# (NAME.ipuef with its host reference NAME.OUT.ref.npy, made by the
# in-process model device on the host) run with
#   ipu-run --device /dev/accel/accel0 NAME.ipuef --output OUT=...
# and compared byte for byte; then the same replicated over both devices
# (--device /dev/accel/accel0,/dev/accel/accel1).  TAP output.
n=0
fail=0
set -- /ipu/data/*.ref.npy
echo "TAP version 13"
echo "1..$(($# * 2))"
for ref in "$@"; do
	base=${ref%.ref.npy}
	out=${base##*.}
	model=${base%.*}.ipuef
	name=$(basename "${base%.*}")
	n=$((n + 1))
	before=$(cat /sys/class/accel/accel0/device/stats/stream_cmds)
	if ipu-run --device /dev/accel/accel0 "$model" --iterations 4 --output "$out=/tmp/$name.npy" \
		>/tmp/$name.log 2>&1 && cmp -s "$ref" "/tmp/$name.npy"; then
		after=$(cat /sys/class/accel/accel0/device/stats/stream_cmds)
		echo "# $name: output $out bit-identical to the host's in-process device; stats/stream_cmds $before -> $after"
		echo "ok $n ipu-run.$name"
	else
		sed 's/^/# /' /tmp/$name.log
		echo "not ok $n ipu-run.$name"
		fail=1
	fi
done
for ref in "$@"; do
	base=${ref%.ref.npy}
	out=${base##*.}
	model=${base%.*}.ipuef
	name=$(basename "${base%.*}")
	n=$((n + 1))
	if ipu-run --device /dev/accel/accel0,/dev/accel/accel1 "$model" --iterations 8 --output "$out=/tmp/$name.2.npy" \
		>/tmp/$name.2.log 2>&1 && cmp -s "$ref" "/tmp/$name.2.npy" &&
		grep -q '^device runs: /dev/accel/accel0 [1-9][0-9]*, /dev/accel/accel1 [1-9]' /tmp/$name.2.log; then
		echo "# $name: $(grep '^device runs' /tmp/$name.2.log)"
		echo "ok $n ipu-run.replicated.$name"
	else
		sed 's/^/# /' /tmp/$name.2.log
		echo "not ok $n ipu-run.replicated.$name"
		fail=1
	fi
done
exit $fail
