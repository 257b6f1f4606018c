#!/bin/bash
# The custom-operator example in the VM through the driver: the QEMU
# device loads the plugin (-device ipu,custom-ops=PATH, chosen on the
# host's command line, IPU_VM_IPU0_OPTS of scripts/vm-run), the guest's
# ipu-run runs the model on /dev/accel/accel0 and gets the host's in-process
# output byte for byte; /dev/accel/accel1, started without the plugin, refuses
# the model naming the operator and the library hash.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
top=$PWD
bin=$top/$BUILD/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
ko() { fail=$((fail + 1)); echo "not ok - $1"; }
done_() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }

export PKG_CONFIG_PATH=$top/$BUILD/pkgconfig
make -s -C examples/custom-op OUT="$tmp" >"$tmp/cc.log" 2>&1 && ok "plugin built" ||
	{ ko "plugin build: $(cat "$tmp/cc.log")"; done_; }
lib=$tmp/librmsnorm.so
/usr/bin/python3 examples/custom-op/make_model.py "$tmp" >"$tmp/py.log" 2>&1 ||
	{ ko "make_model.py: $(tail -3 "$tmp/py.log")"; done_; }
# the VM's devices: 16 tiles of 256 KiB
"$bin/ipu-compile" --input-model "$tmp/rmsnorm.onnx" --target tiles=16,tile-mem=256KiB \
	--custom-library-so-paths "$lib" -o "$tmp/m.ipuef" >"$tmp/c.log" 2>&1 &&
	"$bin/ipu-run" --device model:tiles=16,tile_mem=256k --custom-ops "$lib" "$tmp/m.ipuef" \
		--input x="$tmp/x.npy" --output y="$tmp/y.ref.npy" --iterations 0 >"$tmp/r.log" 2>&1 &&
	ok "compiled and run in-process (the reference)" ||
	{ ko "host compile/run: $(tail -3 "$tmp/c.log" "$tmp/r.log")"; done_; }
make -s BUILD="$BUILD" module "$BUILD/vm/bin/ipu-run" >"$tmp/mk.log" 2>&1 ||
	{ ko "driver and static ipu-run: $(tail -5 "$tmp/mk.log")"; done_; }
kmod=$(make -s BUILD="$BUILD" print-KMOD)
cp tests/custom/vm-custom.sh "$tmp/"
sh selftests/mkinitramfs.sh "$tmp/img.cpio.gz" "$kmod" "$BUILD/vm/bin/ipu-run" "$tmp/m.ipuef" \
	"$tmp/x.npy" "$tmp/y.ref.npy" "$tmp/vm-custom.sh" >"$tmp/img.log" 2>&1 ||
	{ ko "initramfs: $(tail -3 "$tmp/img.log")"; done_; }
IPU_VM_IPU0_OPTS=",custom-ops=$lib" scripts/vm-run --image "$tmp/img.cpio.gz" \
	"sh /ipu/vm-custom.sh" >"$tmp/vm.log" 2>&1
grep -E '^CUSTOM-VM|^vm-run:' "$tmp/vm.log"
grep -q '^CUSTOM-VM ok ipu0 bit-identical' "$tmp/vm.log" &&
	ok "in the VM, /dev/accel/accel0 (custom-ops=) gives the in-process output byte for byte" ||
	ko "VM run on ipu0: $(tail -20 "$tmp/vm.log")"
grep -q "^CUSTOM-VM ok ipu1 refused: custom codelet com.example::RmsNorm (library sha256 $(sha256sum "$lib" | cut -d' ' -f1))" "$tmp/vm.log" &&
	ok "/dev/accel/accel1 (no plugin) refuses the model naming the op and the hash" ||
	ko "VM ipu1 refusal: $(grep CUSTOM-VM "$tmp/vm.log")"
# QEMU refuses a plugin of another ABI at start, saying why
mkdir -p "$tmp/abi"
make -s -C examples/custom-op OUT="$tmp/abi" CFLAGS="-O2 -DRMSNORM_ABI=99" >/dev/null 2>&1
qemu=$(qemu-device/build-qemu.sh --path 2>/dev/null)
if [ -x "$qemu" ]; then
	timeout 120 "$qemu" -L /usr/share/seabios -L /usr/share/qemu -machine q35 -accel tcg -nographic \
		-nodefaults -S -device "ipu,custom-ops=$tmp/abi/librmsnorm.so" -qmp stdio </dev/null \
		>"$tmp/q.log" 2>&1
	grep -q "plugin built for custom-op ABI version 99, this stack speaks version 2" "$tmp/q.log" &&
		ok "QEMU refuses a plugin of another ABI version: $(grep -o 'ipu: .*' "$tmp/q.log" | head -1)" ||
		ko "QEMU with an ABI 99 plugin: $(head -5 "$tmp/q.log")"
else
	ko "no QEMU built from the current sources (make qemu)"
fi
done_
