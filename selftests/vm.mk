# The test VM and the driver selftests (issue 6).
#
#   make vm          build the initramfs and boot it: the selftests run,
#                    the VM powers off (console on this terminal)
#   make vm-image    only the initramfs (build/vm/initramfs.cpio.gz)
#   make vm-check    boot, run the selftests, "vm: N passed, N failed"
#   scripts/vm-run 'COMMAND'   boot and run COMMAND with ipu.ko loaded
#
# Programs for the VM are linked statically (no libraries in the image).
# kselftest_harness.h comes from Debian's linux-source-6.1, extracted into
# $(KSRC_DIR) at build time.
VM_DIR := $(BUILD)/vm
VM_IMAGE := $(VM_DIR)/initramfs.cpio.gz
KSFT_INC := $(KSRC_DIR)/tools/testing/selftests
NL_CFLAGS := -I/usr/include/libnl3
VM_LDLIBS := -luring -lnl-genl-3 -lnl-3 -lm -lpthread

VM_SELFTESTS := $(VM_DIR)/bin/ipu_selftest
VM_PROGRAMS := $(VM_SELFTESTS)

$(BUILD)/selftests/%.o: selftests/%.c $(KSRC_DIR)/.extracted
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) -Iselftests -I$(KSFT_INC) $(NL_CFLAGS) -std=gnu11 -g -O2 -Wall -Wextra -Werror -Wno-misleading-indentation -Wno-sign-compare \
		-Wno-unused-parameter -pthread -MMD -MP -c -o $@ $<

$(VM_DIR)/bin/ipu_selftest: $(BUILD)/selftests/ipu_selftest.o $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ $(VM_LDLIBS)

VM_DATA :=
VM_IMAGE_INPUTS = $(KMOD) $(VM_PROGRAMS) $(VM_DATA) selftests/init selftests/run-selftests \
	selftests/mkinitramfs.sh

$(VM_IMAGE): $(VM_IMAGE_INPUTS)
	selftests/mkinitramfs.sh $@ $(KMOD) $(VM_PROGRAMS) $(VM_DATA) selftests/run-selftests

.PHONY: vm vm-image vm-check
vm-image: $(VM_IMAGE)

vm: $(VM_IMAGE)
	scripts/vm-run --image $(VM_IMAGE)

vm-check: $(VM_IMAGE)
	scripts/vm-run --image $(VM_IMAGE) --check

CHECKS += ;make -s vm-check;
