# Generation with a GPT-2-small-shaped decoder whose key/value cache is
# device-resident state, against the same decoder with its cache streamed
# (bench/bench_generate.py, bench/bench_generate.md);
# BENCH_GENERATE_ARGS='--positions 256 --new 32' for other sizes.
.PHONY: bench-generate
bench: bench-generate
bench-generate: $$(IPU_COMPILE) $(BUILD)/bin/ipu-run $(BUILD)/bin/ipuef-dump
	nice /usr/bin/python3 bench/bench_generate.py --build $(BUILD) $(BENCH_GENERATE_ARGS)
