#!/bin/sh
# vm-serve.sh - inside the test VM (tests/serve/test_serve_vm.py): ipu-serve
# on the PCIe devices /dev/accel/accel0 and /dev/accel/accel1 (two instances of one model),
# answering infer requests from busybox wget on the guest's loopback.  The
# host reads the SERVE-* lines and compares the results with its own.
ifconfig lo 127.0.0.1 up
D=/ipu/data
mkdir -p /tmp/repo/affine/1
cp $D/affine.ipuef /tmp/repo/affine/1/model.ipuef
printf 'max_batch_size: 8\ninstance_group: [ { count: 2 } ]\n' >/tmp/repo/affine/config.yaml
# dynamically linked: its libraries travel in the image next to the loader
$D/ld-linux-x86-64.so.2 --library-path $D /ipu/bin/ipu-serve --model-repository /tmp/repo \
	--device '/dev/accel/accel0;/dev/accel/accel1' --http-address 127.0.0.1 --http-port 8000 \
	--metrics-port 8002 --log-verbose 1 >/tmp/serve.log 2>&1 &
pid=$!
i=0
while ! grep -q "Started Metrics Service" /tmp/serve.log && [ $i -lt 600 ]; do
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
sed 's/^/SERVE-LOG: /' /tmp/serve.log
ready=$(wget -q -O - http://127.0.0.1:8000/v2/health/ready)
echo "SERVE-READY: $ready"
for k in 1 2 3 4; do
	wget -q -O /tmp/r$k.json --header 'Content-Type: application/json' \
		--post-file $D/serve-req$k.json http://127.0.0.1:8000/v2/models/affine/infer
	echo "SERVE-RESPONSE-$k: $(cat /tmp/r$k.json)"
done
wget -q -O - http://127.0.0.1:8002/metrics | grep -E '^ipu_(inference_request_success|inference_exec_count|device_modelled_cycles)' |
	sed 's/^/SERVE-METRIC: /'
echo "SERVE-STREAM-CMDS: accel0 $(cat /sys/class/accel/accel0/device/stats/stream_cmds) accel1 $(cat /sys/class/accel/accel1/device/stats/stream_cmds)"
kill -TERM $pid
wait $pid
rc=$?
tail -n 2 /tmp/serve.log | sed 's/^/SERVE-LOG: /'
echo "SERVE-EXIT: $rc"
[ "$rc" -eq 0 ]
