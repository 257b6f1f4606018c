#!/bin/sh
# e2e-faults.sh - inside the VM: faults injected by the device
# (debugfs ipu/ipu0/fault) under a real client, ipu-run on /dev/accel/accel0:
# what the user sees, and that the next client gets a working device with
# the same bit-identical output as the host's in-process device.  TAP.
D=/sys/kernel/debug/ipu/ipu0
S=/sys/class/accel/accel0/device
M=/ipu/data/test_matmul_2d.ipuef
REF=/ipu/data/test_matmul_2d.c.ref.npy
fail=0
n=0

# ok N DESCRIPTION if the last command succeeded, else not ok (with logs)
report() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		sed 's/^/# /' /tmp/fault-run.log /tmp/fault-next.log 2>/dev/null
		echo "not ok $n $2"
		fail=1
	fi
}

# a clean ipu-run on accel0 whose output equals the host's reference
clean_run() {
	rm -f /tmp/fault-c.npy
	ipu-run --device /dev/accel/accel0 $M --iterations 2 --output c=/tmp/fault-c.npy \
		>/tmp/fault-next.log 2>&1 && cmp -s $REF /tmp/fault-c.npy
}

echo "TAP version 13"
echo "1..4"
if [ ! -w $D/fault ]; then
	for i in 1 2 3 4; do echo "not ok $i no $D/fault (debugfs)"; done
	exit 1
fi
old_wd=$(cat $S/watchdog_ms)

# a failed DMA: ipu-run fails naming the device, no reset, the next run is right
resets=$(cat $S/stats/resets)
echo dma:1:run >$D/fault
ipu-run --device /dev/accel/accel0 $M --iterations 2 >/tmp/fault-run.log 2>&1
rc=$?
sed -n 's/^/# /p' /tmp/fault-run.log | head -n 3
grep -q 'accel0' /tmp/fault-run.log && grep -q 'stream transfer of the program failed' /tmp/fault-run.log &&
	[ $rc -ne 0 ] && clean_run && [ "$(cat $S/stats/resets)" = "$resets" ]
report $? "failed DMA: ipu-run exits $rc naming accel0 and the failed stream transfer in words, no reset, the next ipu-run bit-identical"

# a hang: the watchdog resets, ipu-run says the run was cancelled
echo 1000 >$S/watchdog_ms
echo hang:1:run >$D/fault
ipu-run --device /dev/accel/accel0 $M --iterations 2 >/tmp/fault-run.log 2>&1
rc=$?
grep -q 'cancelled' /tmp/fault-run.log && [ $rc -ne 0 ] && clean_run &&
	[ "$(cat $S/stats/resets)" -eq $((resets + 1)) ]
report $? "hang: watchdog reset, ipu-run exits $rc (run cancelled), the next ipu-run bit-identical"
echo "$old_wd" >$S/watchdog_ms

# a corrupt completion: reset at once, same for the user
resets=$(cat $S/stats/resets)
echo corrupt-cpl:1:run >$D/fault
ipu-run --device /dev/accel/accel0 $M --iterations 2 >/tmp/fault-run.log 2>&1
rc=$?
grep -q 'cancelled' /tmp/fault-run.log && [ $rc -ne 0 ] && clean_run &&
	[ "$(cat $S/stats/resets)" -eq $((resets + 1)) ]
report $? "corrupt completion: reset, ipu-run exits $rc (run cancelled), the next ipu-run bit-identical"

# every run's completion interrupt lost: ipu-run still right, only slower
lost=$(cat $S/stats/lost_irqs)
echo drop-irq:1:run:repeat >$D/fault
clean_run
rc=$?
echo none >$D/fault
echo "# stats/lost_irqs $lost -> $(cat $S/stats/lost_irqs)"
info=$(ipu-info accel0 | grep 'recovered:')
echo "# ipu-info: $info"
[ $rc -eq 0 ] && [ "$(cat $S/stats/lost_irqs)" -gt "$lost" ] &&
	echo "$info" | grep -q "lost interrupts $(cat $S/stats/lost_irqs) "
report $? "every run's interrupt lost: ipu-run output bit-identical, completions polled, ipu-info shows the count"
exit $fail
