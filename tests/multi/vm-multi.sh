#!/bin/sh
# vm-multi.sh - inside the test VM (tests/multi/test-multi-vm.sh): each
# split model of /ipu/data/cases (lines "NAME IPUS") on the first IPUS
# devices of the VM's ipu-link, as one device group whose links carry the
# boundary tensors device to device; its output must be the host's
# in-process group output byte for byte, and IPU 0 must have sent link
# bytes (the boundary tensors went over the device link, not the host).
d=/ipu/data
while read -r name n; do
	devs=/dev/accel/accel0
	k=1
	while [ "$k" -lt "$n" ]; do
		devs="$devs,/dev/accel/accel$k"
		k=$((k + 1))
	done
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
