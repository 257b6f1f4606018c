# ipu-serve packing against padding to 128: one seeded stream of
# variable-length requests (8..128 tokens) from keep-alive HTTP clients to a
# BERT-shaped encoder served both ways (bench/bench_pack.py, make bench).
.PHONY: bench-pack
bench: bench-pack
bench-pack: $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-compile
	BUILD=$(BUILD) /usr/bin/python3 bench/bench_pack.py
