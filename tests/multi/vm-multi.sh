#!/bin/sh
# vm-multi.sh - inside the test VM (tests/multi/test-multi-vm.sh): each
# split model of /ipu/data/cases (lines "NAME IPUS") on the first IPUS
# devices of the VM's ipu-link, as one device group whose links carry the
# boundary tensors device to device; its output must be the host's
# in-process group output byte for byte, and IPU 0 must have sent link
# bytes (the boundary tensors went over the device link, not the host).
# Each model of /ipu/data/refuse (lines "NAME IPUS"), compiled for bigger
# IPUs, must be refused before anything loads with the host's message
# for a device of the VM's size (NAME.refusal): a link whose receiver
# writes a tile outside the peer's memory.
d=/ipu/data
nodes() {
	devs=/dev/accel/accel0
	k=1
	while [ "$k" -lt "$1" ]; do
		devs="$devs,/dev/accel/accel$k"
		k=$((k + 1))
	done
}
while read -r name n; do
	nodes "$n"
	if ipu-run --device "$devs" "$d/$name.ipuef" --input x=$d/$name.x.npy --output y=/tmp/$name.y.npy \
		--warmup 0 --iterations 2 --inflight 4 >/tmp/$name.log 2>&1 &&
		cmp -s "$d/$name.ref.npy" /tmp/$name.y.npy &&
		grep -q '^IPU 0 (accel0): link bytes [1-9]' /tmp/$name.log; then
		echo "MULTI-VM ok $name on $devs bit-identical; $(grep -m1 '^device runs:' /tmp/$name.log);" \
			"$(grep '^IPU [0-9]* (accel[0-9]*): link bytes' /tmp/$name.log | sed 's/ modelled cycles/ cycles/' | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
	else
		sed 's/^/MULTI-VM # /' /tmp/$name.log | tail -n 20
		echo "MULTI-VM not ok $name on $devs"
	fi
done <$d/cases
[ -f $d/refuse ] || exit 0
while read -r name n; do
	nodes "$n"
	if ipu-run --device "$devs" "$d/$name.ipuef" --iterations 1 >/tmp/$name.log 2>&1; then
		echo "MULTI-VM not ok $name on $devs ran"
	elif grep -qF "$(cat $d/$name.refusal)" /tmp/$name.log; then
		echo "MULTI-VM ok $name on $devs refused: $(cat $d/$name.refusal)"
	else
		sed 's/^/MULTI-VM # /' /tmp/$name.log | tail -n 5
		echo "MULTI-VM not ok $name on $devs refused otherwise"
	fi
done <$d/refuse
