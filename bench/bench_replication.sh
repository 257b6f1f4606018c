#!/bin/sh
# bench_replication.sh - inside the VM (make vm-bench-replication): one
# model served by ipu-run on /dev/accel/accel0 alone and replicated over /dev/accel/accel0
# and /dev/accel/accel1, requests/s with N in flight, and the ratio two/one of
# figures measured in the same boot, alternating one and two devices.
# Usage: bench_replication.sh [ITERATIONS] [INFLIGHT] [ROUNDS]
iters=${1:-200}
inflight=${2:-16}
rounds=${3:-2}
rps() {	# ipu-run's --json: requests/s with N in flight
	sed -n 's/.*"requests_per_s_inflight": *\([0-9.e+-]*\).*/\1/p' "$1"
}
status=0
for model in /ipu/data/test_gemm_default_matrix_bias.ipuef /ipu/data/test_conv_with_strides_padding.ipuef; do
	name=$(basename "$model" .ipuef)
	r=1
	while [ $r -le "$rounds" ]; do
		for dev in /dev/accel/accel0 /dev/accel/accel0,/dev/accel/accel1; do
			out=/tmp/bench-$r-$(echo $dev | tr -c 'a-z0-9\n' _).json
			if ! ipu-run --device "$dev" "$model" --warmup 4 --iterations "$iters" \
				--inflight "$inflight" --json >"$out" 2>/tmp/bench.err; then
				cat /tmp/bench.err
				status=1
			fi
		done
		one=$(rps /tmp/bench-$r-_dev_accel_accel0.json)
		two=$(rps /tmp/bench-$r-_dev_accel_accel0__dev_accel_accel1.json)
		# one line: busybox awk drops a printf continued over lines
		awk -v m="$name" -v r="$r" -v a="$one" -v b="$two" -v n="$inflight" 'BEGIN { x = a > 0 ? b / a : 0; printf "%s round %d, %d in flight: /dev/accel/accel0 %.0f req/s, /dev/accel/accel0,/dev/accel/accel1 %.0f req/s, ratio %.2f\n", m, r, n, a, b, x }'
		r=$((r + 1))
	done
	sed -n 's/.*"devices": *\(\[[^]]*\]\).*/  devices (last two-device run): \1/p' \
		/tmp/bench-$rounds-_dev_accel_accel0__dev_accel_accel1.json
done
exit $status
