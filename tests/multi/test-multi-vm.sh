#!/bin/bash
# A model split over IPUs through the driver: ipu-compile --num-ipus N on
# the host, the host's ipu-run on a group of N in-process devices (the
# reference), then in the test VM (scripts/vm-run with IPU_VM_IPUS=4: four
# devices on one ipu-link) the static ipu-run on /dev/accel/accel0,... as
# one device group (GROUP_ATTACH, LINK_STREAM): its output must be the
# in-process group's byte for byte, and that within 1e-3 of torch's output
# scale.  With mlp, the MLP compiled for IPUs of 32 tiles over 2 is refused
# on the VM's 16-tile devices before anything loads, with the host's
# message for such a device: the link's receiver writes tile 16, outside
# the peer's memory.
#
#   test-multi-vm.sh mlp    the 4-layer 256-wide MLP (tests/multi/mlp_wide.py,
#                           32-row micro-batches of a 128-row request) over 2
#                           IPUs and, pipelined, over 4; the VM's default
#                           devices (16 tiles of 256 KiB); about a minute
#   test-multi-vm.sh bert   BERT-large-shaped encoder layers
#                           (tests/multi/tiny_encoder.py --large: d 1024, 16
#                           heads, FFN 4096, 128 positions): one layer over
#                           2 IPUs, two layers over 4, on devices of 192 tiles
#                           of 624 KiB, 2 GiB of guest RAM; a few minutes
#   test-multi-vm.sh bert-large   the whole BERT-large-shaped encoder (24
#                           layers, 1.2 GB of fp32 weights) over 4 full-size
#                           IPUs (1,472 tiles of 624 KiB each, as ipu2):
#                           about 10 GB of host memory (6 GiB of guest RAM,
#                           3.5 GiB of device memory), 10-20 minutes
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
what=${1:-mlp}
bin=$BUILD/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
ko() { fail=$((fail + 1)); echo "not ok - $1"; }
done_() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }
py=/usr/bin/python3
data=$tmp/data
mkdir -p "$data"
: >"$data/cases"

# case NAME IPUS SRC_DIR TARGET [COMPILE_ARGS...]: compile, the in-process
# reference, torch's output
case_() {
	local name=$1 n=$2 src=$3 target=$4 e
	shift 4
	if ! "$bin/ipu-compile" --input-model "$src/model.onnx" --target "$target" --num-ipus "$n" "$@" \
		-o "$data/$name.ipuef" >"$tmp/$name.c.log" 2>&1; then
		ko "$name: ipu-compile --num-ipus $n: $(tail -c 600 "$tmp/$name.c.log")"
		return
	fi
	cp "$src/x.npy" "$data/$name.x.npy"
	if ! "$bin/ipu-run" "$data/$name.ipuef" --input x="$src/x.npy" --output y="$data/$name.ref.npy" \
		--warmup 0 --iterations 2 --inflight 4 >"$tmp/$name.r.log" 2>&1; then
		ko "$name: in-process group run: $(tail -5 "$tmp/$name.r.log")"
		return
	fi
	if e=$($py -c 'import sys, numpy as np; y = np.load(sys.argv[1]); r = np.load(sys.argv[2]); e = float(np.abs(y - r).max() / np.abs(r).max()); print("%.3g" % e); sys.exit(not (y.shape == r.shape and e < 1e-3))' \
		"$data/$name.ref.npy" "$src/y.npy"); then
		ok "$name: $n IPUs in-process, $e of torch's output scale"
		echo "$name $n" >>"$data/cases"
	else
		ko "$name: in-process group output $e of torch's output scale (>= 1e-3)"
	fi
}

vmenv=()
case "$what" in
mlp)
	mkdir -p "$tmp/mlp"
	$py tests/multi/mlp_wide.py "$tmp/mlp" 32 128 >"$tmp/gen.log" 2>&1 &&
		mv "$tmp/mlp/mlp.onnx" "$tmp/mlp/model.onnx" || { ko "mlp_wide.py: $(tail -3 "$tmp/gen.log")"; done_; }
	case_ mlp2 2 "$tmp/mlp" tiles=16,tile-mem=256KiB
	case_ mlp4 4 "$tmp/mlp" tiles=16,tile-mem=256KiB --enable-pipelining
	if "$bin/ipu-compile" --input-model "$tmp/mlp/model.onnx" --target tiles=32,tile-mem=256KiB \
		--num-ipus 2 -o "$data/big2.ipuef" >"$tmp/big.c.log" 2>&1 &&
		! "$bin/ipu-run" --device model:tiles=16,tile_mem=256k "$data/big2.ipuef" --iterations 1 \
			>"$tmp/big.r.log" 2>&1 &&
		grep -o "link 0 '[^']*': the receiver, IPU 1, writes tile 16 .*" "$tmp/big.r.log" \
			>"$data/big2.refusal"; then
		ok "big2: 2 IPUs of 32 tiles refused in-process on 16: $(cat "$data/big2.refusal")"
		echo "big2 2" >"$data/refuse"
	else
		ko "big2: not refused in-process on 16 tiles as expected: $(tail -3 "$tmp/big.c.log" "$tmp/big.r.log")"
	fi
	;;
bert)
	for l in 1 2; do
		mkdir -p "$tmp/bert$l"
		$py tests/multi/tiny_encoder.py "$tmp/bert$l" $l --large >"$tmp/gen.log" 2>&1 &&
			mv "$tmp/bert$l/encoder.onnx" "$tmp/bert$l/model.onnx" ||
			{ ko "tiny_encoder.py: $(tail -3 "$tmp/gen.log")"; done_; }
	done
	case_ bert1x2 2 "$tmp/bert1" tiles=192,tile-mem=638976
	case_ bert2x4 4 "$tmp/bert2" tiles=192,tile-mem=638976
	rm -rf "$tmp/bert1" "$tmp/bert2"
	vmenv=(IPU_VM_IPU0_SHAPE=tiles=192,tile-mem=638976 IPU_VM_IPUN_SHAPE=tiles=192,tile-mem=638976
	       IPU_VM_MEM=2G IPU_VM_TIMEOUT=1200)
	;;
bert-large)
	mkdir -p "$tmp/bertL"
	$py tests/multi/tiny_encoder.py "$tmp/bertL" 24 --large >"$tmp/gen.log" 2>&1 &&
		mv "$tmp/bertL/encoder.onnx" "$tmp/bertL/model.onnx" ||
		{ ko "tiny_encoder.py: $(tail -3 "$tmp/gen.log")"; done_; }
	case_ bertLx4 4 "$tmp/bertL" tiles=1472,tile-mem=638976
	rm -rf "$tmp/bertL"
	vmenv=(IPU_VM_IPU0_SHAPE=tiles=1472,tile-mem=638976 IPU_VM_IPUN_SHAPE=tiles=1472,tile-mem=638976
	       IPU_VM_MEM=6G IPU_VM_TIMEOUT=3600)
	;;
*)
	echo "usage: $0 mlp|bert|bert-large"; exit 2 ;;
esac
[ -s "$data/cases" ] || done_
make -s BUILD="$BUILD" module "$BUILD/vm/bin/ipu-run" >"$tmp/mk.log" 2>&1 ||
	{ ko "driver and static ipu-run: $(tail -5 "$tmp/mk.log")"; done_; }
kmod=$(make -s BUILD="$BUILD" print-KMOD)
cp tests/multi/vm-multi.sh "$tmp/"
sh selftests/mkinitramfs.sh "$tmp/img.cpio.gz" "$kmod" "$BUILD/vm/bin/ipu-run" "$data"/* \
	"$tmp/vm-multi.sh" >"$tmp/img.log" 2>&1 || { ko "initramfs: $(tail -3 "$tmp/img.log")"; done_; }
ncases=$(cat "$data/cases" "$data/refuse" 2>/dev/null | wc -l)
rm -rf "$data"
env IPU_VM_IPUS=4 "${vmenv[@]}" scripts/vm-run --image "$tmp/img.cpio.gz" "sh /ipu/vm-multi.sh" \
	>"$tmp/vm.log" 2>&1
grep -E '^vm-run:' "$tmp/vm.log"
while read -r line; do
	case "$line" in
	"MULTI-VM ok "*) ok "in the VM: ${line#MULTI-VM ok }" ;;
	"MULTI-VM not ok "*) ko "in the VM: ${line#MULTI-VM not ok }: $(grep '^MULTI-VM #' "$tmp/vm.log" | tail -n 8)" ;;
	esac
done < <(grep -E '^MULTI-VM (ok|not ok) ' "$tmp/vm.log")
n=$(grep -cE '^MULTI-VM (ok|not ok) ' "$tmp/vm.log")
[ "$n" -eq "$ncases" ] || ko "the VM reported $n of $ncases cases: $(tail -20 "$tmp/vm.log")"
done_
