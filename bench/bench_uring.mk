# Stream throughput through ipu.ko and io_uring, inside the VM.
#   make vm-bench     boots the VM and runs bench_uring on /dev/accel/accel0
# The program is linked statically for the VM image (selftests/vm.mk puts
# it there; VM_LDLIBS is used only inside the recipe, read later).
.PHONY: vm-bench
vm-bench:
	$(MAKE) -s vm-image
	scripts/vm-run '/ipu/bin/bench_uring /dev/accel/accel0'

VM_BENCH := $(BUILD)/vm/bin/bench_uring
$(BUILD)/bench/bench_uring.o: CPPFLAGS += -Iselftests
$(VM_BENCH): $(BUILD)/bench/bench_uring.o $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) -static -pthread -o $@ $^ $(VM_LDLIBS)
