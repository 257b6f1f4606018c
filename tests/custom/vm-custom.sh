#!/bin/sh
# vm-custom.sh - inside the test VM (tests/custom/test-custom-vm.sh): the
# RmsNorm model on /dev/accel/accel0, whose QEMU device loaded the plugin
# (custom-ops=), must give the host's in-process output byte for byte;
# /dev/accel/accel1 has no plugin and must refuse the model naming the operator.
d=/ipu/data
if ipu-run --device /dev/accel/accel0 $d/m.ipuef --input x=$d/x.npy --output y=/tmp/y.npy \
	--iterations 2 >/tmp/run0.log 2>&1 && cmp -s $d/y.ref.npy /tmp/y.npy; then
	echo "CUSTOM-VM ok ipu0 bit-identical"
else
	sed 's/^/CUSTOM-VM # /' /tmp/run0.log
	echo "CUSTOM-VM not ok ipu0"
fi
if ipu-run --device /dev/accel/accel1 $d/m.ipuef --input x=$d/x.npy --iterations 0 >/tmp/run1.log 2>&1; then
	echo "CUSTOM-VM not ok ipu1 ran without the plugin"
elif grep -q "custom codelet com.example::RmsNorm (library sha256" /tmp/run1.log; then
	echo "CUSTOM-VM ok ipu1 refused: $(grep -o 'custom codelet com.example::RmsNorm (library sha256 [0-9a-f]*)' /tmp/run1.log)"
else
	sed 's/^/CUSTOM-VM # /' /tmp/run1.log
	echo "CUSTOM-VM not ok ipu1 refused without naming the op"
fi
