# The QEMU device: `make qemu` builds qemu-system-x86_64 with the
# `ipu` device from Debian's QEMU source of bookworm-backports (10.0),
# cached outside the clone
# (qemu-device/build-qemu.sh; $IPU_QEMU_CACHE, default /var/cache/ipu-qemu)
# and links it as build/qemu/qemu-system-x86_64.  A warm cache does nothing.
#
# Run it with $(QEMU_FW) so that it finds Debian's firmware, e.g.
#   $(QEMU_BIN) $(QEMU_FW) -machine q35 -accel tcg -device ipu,tiles=16 ...
QEMU_BIN := build/qemu/qemu-system-x86_64
QEMU_FW := -L /usr/share/seabios -L /usr/share/qemu

.PHONY: qemu qemu-path
qemu:
	@qemu-device/build-qemu.sh

qemu-path:
	@qemu-device/build-qemu.sh --path

# The qtest suite against an AddressSanitizer build of QEMU (not part of
# `make check`: a cold ASan build of QEMU takes ~25 minutes on 2 cores).
.PHONY: check-qemu-asan
check-qemu-asan: $(BUILD)/tests/qemu/test_qemu_ipu
	@IPU_QEMU_ASAN=1 qemu-device/build-qemu.sh
	IPU_QEMU=build/qemu-asan/qemu-system-x86_64 $(BUILD)/tests/qemu/test_qemu_ipu

# The driver's copy of the device contract (driver/ipu_hw.h) must match
# qemu-device/ipu_regs.h and the executable format, define by define.
.PHONY: check-hw-contract
check-hw-contract:
	scripts/check-hw-contract
CHECKS += ;make -s check-hw-contract;
