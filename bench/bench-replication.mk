# One device vs two (ModelRunner replication) inside the VM:
#   make vm-bench-replication   boots the VM and runs bench_replication.sh
.PHONY: vm-bench-replication
vm-bench-replication:
	$(MAKE) -s vm-image
	scripts/vm-run "$$(cat bench/bench_replication.sh)"
