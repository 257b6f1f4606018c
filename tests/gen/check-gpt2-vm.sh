#!/bin/sh
# SPDX-License-Identifier: MIT
# GPT-2 small's shape generating in the test VM through the driver: the
# fp16 executables at 128 and 1,024 positions that tests/gen/check-gpt2.sh
# compiled (and checked in-process against torch) boot with the static
# ipu-run and ipu.ko in the VM, whose first device is an ipu2 (1,472 tiles
# of 624 KiB); tests/gen/vm-gpt2.sh generates 64 greedy tokens after the
# prompt 1..8 on /dev/accel/accel0.  They must be torch's and the in-process
# run's, at the same 24 stream bytes per decode step (the device's counters)
# at both cache lengths.  At 128 positions ipu-serve in the guest gives the
# same tokens through /generate and /generate_stream.  Usage:
# tests/gen/check-gpt2-vm.sh BUILD_DIR (after check-gpt2.sh BUILD_DIR; make
# check-gen-gpt2-vm runs both).
set -u
build=${1:-build}
work=$build/gen-gpt2
vm=$build/gen-gpt2-vm
py=/usr/bin/python3
pass=0
fail=0
ko() { fail=$((fail + 1)); echo "not ok - $1"; }
kmod=$(make -s BUILD="$build" print-KMOD)
for f in "$kmod" "$build/vm/bin/ipu-run"; do
	[ -r "$f" ] || { ko "$f missing (make module $build/vm/bin/ipu-run)"; echo "$pass passed, $fail failed"; exit 1; }
done
rm -rf "$vm"
mkdir -p "$vm/stage/bin"
# ipu-serve for the guest (128 positions only: one more load of the
# executable), with its shared libraries and the loader as ldd finds them
serve=
if [ -x "$build/bin/ipu-serve" ]; then
	cp "$build/bin/ipu-serve" "$vm/stage/bin/"
	serve=$vm/stage/bin/ipu-serve
	for lib in $(ldd "$build/bin/ipu-serve" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'); do
		cp -L "$lib" "$vm/stage/$(basename "$lib")"
		serve="$serve $vm/stage/$(basename "$lib")"
	done
fi
for n in ${GPT2_VM_POSITIONS:-128 1024}; do
	d=$work/p$n
	if [ ! -r "$d/gpt2s.ipuef" ] || [ ! -s "$d/gen.json" ] || [ ! -s "$d/torch_tokens.txt" ]; then
		ko "$n positions: no executable and in-process tokens in $d (run tests/gen/check-gpt2.sh $build first)"
		continue
	fi
	img=$vm/p$n.cpio.gz
	extra=
	[ "$n" = 128 ] && extra=$serve
	# shellcheck disable=SC2086 # extra: a list of files
	if ! sh selftests/mkinitramfs.sh "$img" "$kmod" "$build/vm/bin/ipu-run" "$d/gpt2s.ipuef" \
		tests/gen/vm-gpt2.sh $extra >"$vm/img$n.log" 2>&1; then
		ko "$n positions: initramfs: $(tail -3 "$vm/img$n.log")"
		continue
	fi
	# guest RAM: the image, its unpacked executable, ipu-run's copy and
	# the driver's copy for the device, about 340 MB each
	IPU_VM_MEM=2G IPU_VM_IPU0_SHAPE=tiles=1472,tile-mem=638976 IPU_VM_TIMEOUT=${IPU_VM_TIMEOUT:-1200} \
		scripts/vm-run --image "$img" "sh /ipu/vm-gpt2.sh" >"$vm/vm$n.log" 2>&1
	vrc=$?
	rm -f "$img"
	grep -E '^GPT2-VM-(MEM|STAT|LOG|SERVE-EXIT)|^IPU-VM|^vm-run:' "$vm/vm$n.log" | sed "s/^/# $n: /"
	if $py - "$vm/vm$n.log" "$d/gen.json" "$d/torch_tokens.txt" $n $vrc <<'PY'
import json, re, sys
log = open(sys.argv[1], errors="replace").read()
m = re.search(r"^GPT2-VM-JSON: (\{.*\})$", log, re.M)
if not m or sys.argv[5] != "0":
    print("not ok - %s positions in the VM: %s (vm-run exit %s)"
          % (sys.argv[4], "ipu-run gave tokens" if m else "no JSON from the guest's ipu-run", sys.argv[5]))
    sys.exit(1)
got = json.loads(m.group(1))
host = json.load(open(sys.argv[2]))
want = [int(t) for t in open(sys.argv[3]).read().split(",")]
same = sum(a == b for a, b in zip(got["tokens"], want))
ok = (got["tokens"] == want and got["tokens"] == host["tokens"] and got["device_argmax"]
      and got["stream_bytes_per_step"] == 24)
print("%s - %s positions in the VM: %d of torch's %d greedy tokens (in-process: %s), "
      "%d stream bytes per step, %.1f tokens/s (in-process %.1f), prompt %.0f ms"
      % ("ok" if ok else "not ok", sys.argv[4], same, len(want),
         "the same" if got["tokens"] == host["tokens"] else "different",
         got["stream_bytes_per_step"], got["tokens_per_s"] or 0, host["tokens_per_s"] or 0,
         got["prompt_ms"]))
sys.exit(0 if ok else 1)
PY
	then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	[ "$n" = 128 ] && [ -n "$serve" ] || continue
	if $py - "$vm/vm$n.log" "$d/torch_tokens.txt" <<'PY'
import json, re, sys
log = open(sys.argv[1], errors="replace").read()
want = [int(t) for t in open(sys.argv[2]).read().split(",")]
m = re.search(r"^GPT2-VM-SERVE: (.*)$", log, re.M)
try:
    one = json.loads(m.group(1))["output_ids"] if m else None
except (ValueError, KeyError):
    one = None
events = [json.loads(x) for x in re.findall(r"^GPT2-VM-SSE: data: (.*)$", log, re.M)]
streamed = [t for e in events if not e.get("final") for t in e.get("output_ids", [])]
final = events[-1] if events else {}
ok = (one == want and streamed == want and final.get("final")
      and final.get("completion_tokens") == 64 and "GPT2-VM-SERVE-EXIT: 0" in log)
print("%s - 128 positions, ipu-serve in the VM: /generate gives %s of torch's 64 tokens, "
      "/generate_stream %d events with %s, server exit %s"
      % ("ok" if ok else "not ok", "all" if one == want else "not all", len(events),
         "all 64" if streamed == want else "not all", "0" if "GPT2-VM-SERVE-EXIT: 0" in log else "not 0"))
sys.exit(0 if ok else 1)
PY
	then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
