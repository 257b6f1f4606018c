# The test VM and the driver selftests.
#
#   make vm          build the initramfs and boot it: the selftests run,
#                    the VM powers off (console on this terminal)
#   make vm-image    only the initramfs (build/vm/initramfs.cpio.gz)
#   make vm-check    boot, run the selftests, "vm: N passed, N failed"
#   scripts/vm-run 'COMMAND'   boot and run COMMAND with ipu.ko loaded
#
# Programs for the VM are linked statically (no libraries in the image).
# kselftest_harness.h comes from Debian's linux-source of the VM's kernel
# (6.12, bookworm-backports), extracted into $(KSRC_DIR) at build time.
VM_DIR := $(BUILD)/vm
VM_IMAGE := $(VM_DIR)/initramfs.cpio.gz
KSFT_INC := $(KSRC_DIR)/tools/testing/selftests
NL_CFLAGS := -I/usr/include/libnl3
VM_LDLIBS := $(LIBIPU_LDLIBS) -lnl-genl-3 -lnl-3 -lm -lpthread

VM_SELFTESTS := $(VM_DIR)/bin/ipu_selftest $(VM_DIR)/bin/ipu_gem $(VM_DIR)/bin/ipu_e2e \
	$(VM_DIR)/bin/ipu_fault $(VM_DIR)/bin/ipu_replication $(VM_DIR)/bin/ipu_group
VM_TOOLS := $(VM_DIR)/bin/ipu-info $(VM_DIR)/bin/ipu-reset $(VM_DIR)/bin/ipu-monitor \
	$(VM_DIR)/bin/ipu-run
VM_BENCH := $(VM_DIR)/bin/bench_uring
VM_PROGRAMS := $(VM_SELFTESTS) $(VM_TOOLS) $(VM_BENCH)

# -Wno-clobbered: 6.12's harness keeps its child's pid in a local across
# the setjmp() of every TEST_F wrapper, which -Wextra flags at -O2.
$(BUILD)/selftests/%.o: selftests/%.c $(KSRC_DIR)/.extracted
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) -Iselftests -Itests/lib -I$(KSFT_INC) $(NL_CFLAGS) $(DRM_CFLAGS) -std=gnu11 -g -O2 -Wall -Wextra -Werror -Wno-misleading-indentation -Wno-sign-compare \
		-Wno-unused-parameter -Wno-clobbered -pthread -MMD -MP -c -o $@ $<

$(VM_DIR)/bin/ipu_selftest: $(BUILD)/selftests/ipu_selftest.o $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ $(VM_LDLIBS) 2>$@.log || { cat $@.log; exit 1; }

$(VM_DIR)/bin/ipu_gem: $(BUILD)/selftests/ipu_gem.o $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ $(VM_LDLIBS) 2>$@.log || { cat $@.log; exit 1; }

$(VM_DIR)/bin/ipu_fault: $(BUILD)/selftests/ipu_fault.o $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ $(VM_LDLIBS) 2>$@.log || { cat $@.log; exit 1; }

$(VM_DIR)/bin/ipu_group: $(BUILD)/selftests/ipu_group.o $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ $(VM_LDLIBS) 2>$@.log || { cat $@.log; exit 1; }

$(BUILD)/selftests/ipu_e2e.o: CPPFLAGS += -Iexamples/mlp
$(VM_DIR)/bin/ipu_e2e: $(BUILD)/selftests/ipu_e2e.o $(MLP_MODEL_OBJ) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ $(VM_LDLIBS)

# the Model Runtime replicated over both devices
$(VM_DIR)/bin/ipu_replication: $(BUILD)/selftests/ipu_replication.o $(RUNTIME_LIB) $(RUNTIME_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $< $(RUNTIME_LINK) $(VM_LDLIBS) 2>$@.log || { cat $@.log; exit 1; }

# the tools and ipu-run, static for the VM
$(VM_DIR)/bin/ipu-reset: $(VM_DIR)/bin/%: $(BUILD)/tools/%.o $(CLI_LIB)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ $(VM_LDLIBS)

$(VM_DIR)/bin/ipu-info: $$(IPU_INFO_OBJS) $(CLI_LIB) $(LIBIPU_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ -ljansson $(VM_LDLIBS)

$(VM_DIR)/bin/ipu-monitor: $(BUILD)/tools/ipu-monitor.o $(BUILD)/tools/ipu_top.o $(BUILD)/tools/ipu_devices.o $(CLI_LIB)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ $(VM_LDLIBS) 2>$@.log || { cat $@.log; exit 1; }

# ipu-run reads and writes ONNX tensors with the compiler's decoder: the
# compiler's libraries and protobuf-c (the parts of COMPILER_LDLIBS its
# objects need; Debian ships no libzip.a)
$(VM_DIR)/bin/ipu-run: $(BUILD)/runtime/tools/ipu-run.o $(TOOL_OBJS_ipu-run) $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $< $(TOOL_OBJS_ipu-run) -Wl,--start-group $(COMPILER_LIB) $(COMPILER_DEPLIBS) \
		-Wl,--end-group -lprotobuf-c -ljansson $(VM_LDLIBS)

# End-to-end data, made on the host: the graph-builder MLP with the
# in-process device's outputs (e2e_ref), and ONNX node-test models compiled
# by ipu-compile with the outputs ipu-run gives on the in-process device.
E2E_REF := $(BUILD)/selftests/e2e_ref
E2E_DIR := $(VM_DIR)/data
E2E_ONNX_DIR := /usr/share/libonnx-testdata/data/node
# model:output pairs
E2E_ONNX := test_matmul_2d:c test_conv_with_strides_padding:y \
	test_gemm_default_matrix_bias:y test_softmax_axis_1:y
E2E_TARGET := --target tiles=16,tile-mem=256KiB
E2E_MODEL := model:tiles=16,tile_mem=256k

$(E2E_REF): $(BUILD)/selftests/e2e_ref.o $(MLP_MODEL_OBJ) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $^ $(LDLIBS_BASE)
$(BUILD)/selftests/e2e_ref.o: CPPFLAGS += -Iexamples/mlp

$(E2E_DIR)/.stamp: $(E2E_REF) $(IPU_COMPILE) $(BUILD)/bin/ipu-run selftests/vm.mk
	@rm -rf $(E2E_DIR)
	@mkdir -p $(E2E_DIR)
	$(E2E_REF) $(E2E_DIR)
	@for mo in $(E2E_ONNX); do \
		m=$${mo%%:*}; o=$${mo#*:}; \
		$(IPU_COMPILE) --input-model $(E2E_ONNX_DIR)/$$m/model.onnx $(E2E_TARGET) \
			-o $(E2E_DIR)/$$m.ipuef >/dev/null || exit 1; \
		$(BUILD)/bin/ipu-run --device $(E2E_MODEL) $(E2E_DIR)/$$m.ipuef --iterations 0 \
			--output $$o=$(E2E_DIR)/$$m.$$o.ref.npy >/dev/null || exit 1; \
	done
	touch $@

VM_IMAGE_INPUTS = $(KMOD) $(VM_PROGRAMS) $(E2E_DIR)/.stamp selftests/init \
	selftests/run-selftests selftests/e2e-ipu-run.sh selftests/e2e-faults.sh \
	selftests/mkinitramfs.sh

$(VM_IMAGE): $(VM_IMAGE_INPUTS)
	selftests/mkinitramfs.sh $@ $(KMOD) $(VM_PROGRAMS) $$(ls $(E2E_DIR)/*) \
		selftests/run-selftests selftests/e2e-ipu-run.sh selftests/e2e-faults.sh

.PHONY: vm vm-image vm-check
vm-image: $(VM_IMAGE)

vm: $(VM_IMAGE)
	scripts/vm-run --image $(VM_IMAGE)

vm-check: $(VM_IMAGE)
	scripts/vm-run --image $(VM_IMAGE) --check

CHECKS += ;make -s vm-check;

# The selftests on a kernel with lockdep (scripts/vm-kernel: Debian's
# linux-source of the VM's kernel, tinyconfig + scripts/vm-kernel.config,
# cached in /var/cache/ipu-kernel), ipu.ko built against it, the same image
# otherwise.  Fails on a failed selftest, on any lockdep report (the VM's
# /init turns every WARNING/BUG in dmesg into a failure) and when lockdep
# is not on or has switched itself off by the end (debug_locks 0).  Not in
# `make check`: a cold kernel build is long (Documentation/driver/README.md).
LOCKDEP_IMAGE := $(VM_DIR)/initramfs-lockdep.cpio.gz
LOCKDEP_CMD := /ipu/run-selftests; rc=$$?; \
	if grep -Eq "debug_locks: +1$$" /proc/lockdep_stats 2>/dev/null; then \
	echo "ok 1 lockdep on to the end (debug_locks 1)"; \
	else echo "not ok 1 lockdep on to the end"; grep debug_locks /proc/lockdep_stats; rc=1; fi; \
	grep -E "dependency chains|lock-classes" /proc/lockdep_stats | sed "s/^/\# /"; exit $$rc

.PHONY: vm-check-lockdep
vm-check-lockdep:
	@kdir=$$(scripts/vm-kernel) && \
	$(MAKE) -s KDIR=$$kdir KMOD_DIR=$(BUILD)/kmod-lockdep/$$(basename $$kdir) \
		VM_IMAGE=$(LOCKDEP_IMAGE) $(LOCKDEP_IMAGE) && \
	IPU_VM_KERNEL=$$kdir/arch/x86/boot/bzImage IPU_VM_TIMEOUT=$${IPU_VM_TIMEOUT:-1800} \
		scripts/vm-run --image $(LOCKDEP_IMAGE) \
		--check '$(LOCKDEP_CMD)'
