#!/bin/sh
# vm-gpt2.sh - inside the test VM (tests/gen/check-gpt2-vm.sh): GPT-2
# small's shape (gpt2s.ipuef, compiled on the host by check-gpt2.sh)
# generates on /dev/accel/accel0 through the driver, 64 greedy tokens after
# the prompt 1..8 as the host's in-process run does.  The host reads the
# GPT2-VM-* lines and compares them with torch's and the in-process tokens.
D=/ipu/data
echo "GPT2-VM-MEM: $(grep -E '^MemTotal' /proc/meminfo | tr -s ' ')"
if ipu-run $D/gpt2s.ipuef --device /dev/accel/accel0 --generate --prompt-ids 1,2,3,4,5,6,7,8 \
	--max-new-tokens 64 --json >/tmp/gen.json 2>/tmp/gen.log; then
	echo "GPT2-VM-JSON: $(tr -d '\n' </tmp/gen.json)"
else
	sed 's/^/GPT2-VM-LOG: /' /tmp/gen.log
	echo "GPT2-VM-JSON: none"
fi
# ipu-serve, when the image has it: the same prompt through the generate
# extension (one JSON answer, then server-sent events) from busybox wget
if [ -x /ipu/bin/ipu-serve ]; then
	ifconfig lo 127.0.0.1 up
	mkdir -p /tmp/repo/gpt2/1
	# a link: a copy would cost the guest another 340 MB
	ln -s $D/gpt2s.ipuef /tmp/repo/gpt2/1/model.ipuef
	# dynamically linked: its libraries travel in the image next to the loader
	$D/ld-linux-x86-64.so.2 --library-path $D /ipu/bin/ipu-serve --model-repository /tmp/repo \
		--device /dev/accel/accel0 --http-address 127.0.0.1 --http-port 8000 \
		--metrics-port 8002 >/tmp/serve.log 2>&1 &
	pid=$!
	i=0
	while ! grep -q "Started Metrics Service" /tmp/serve.log && [ $i -lt 3000 ]; do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	echo '{"id":"vm","input_ids":[1,2,3,4,5,6,7,8],"parameters":{"max_tokens":64}}' >/tmp/req.json
	wget -q -O /tmp/serve.json --header 'Content-Type: application/json' --post-file /tmp/req.json \
		http://127.0.0.1:8000/v2/models/gpt2/generate
	echo "GPT2-VM-SERVE: $(tr -d '\n' </tmp/serve.json)"
	wget -q -O /tmp/stream.txt --header 'Content-Type: application/json' --post-file /tmp/req.json \
		http://127.0.0.1:8000/v2/models/gpt2/generate_stream
	grep '^data:' /tmp/stream.txt | sed 's/^/GPT2-VM-SSE: /'
	kill -TERM $pid
	wait $pid
	echo "GPT2-VM-SERVE-EXIT: $?"
	tail -n 3 /tmp/serve.log | sed 's/^/GPT2-VM-LOG: /'
fi
# what the device moved while it generated: the executable's load, the
# state's zeros and the streams
for c in stream_cmds stream_bytes programs_run; do
	f=/sys/class/accel/accel0/device/stats/$c
	[ -r $f ] && echo "GPT2-VM-STAT: $c $(cat $f)"
done
true
