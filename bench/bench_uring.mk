# Stream throughput through ipu.ko and io_uring, inside the VM.
#   make vm-bench     boots the VM and runs bench_uring on /dev/ipu0
# The program is built for the VM image by selftests/vm.mk (this fragment is
# read first, so the VM variables are used only inside recipes).
.PHONY: vm-bench
vm-bench:
	$(MAKE) -s vm-image
	scripts/vm-run '/ipu/bin/bench_uring /dev/ipu0'
