# Generation with a GPT-2-small-shaped decoder whose key/value cache is
# device-resident state, against the same decoder with its cache streamed
# and against onnxruntime's loop over the same step, and with 1, 4 and 8
# sequences at once in a decoder of 8 cache slots, and a 32-token prompt
# through a prefill program against token steps and onnxruntime
# (bench/bench_generate.py, bench/bench_generate.md);
# BENCH_GENERATE_ARGS='--positions 1024 --precision fp16' for other sizes.
BENCH_GENERATE_SLOTS := $(BUILD)/bench/bench_generate_slots
$(BENCH_GENERATE_SLOTS): $(BUILD)/bench/bench_generate_slots.o $$(RUNTIME_LIB) $$(RUNTIME_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(RUNTIME_LINK) $(LDLIBS_BASE)
PROGRAMS += $(BENCH_GENERATE_SLOTS)

.PHONY: bench-generate
bench: bench-generate
bench-generate: $$(IPU_COMPILE) $(BUILD)/bin/ipu-run $(BUILD)/bin/ipuef-dump $(BENCH_GENERATE_SLOTS)
	nice /usr/bin/python3 bench/bench_generate.py --build $(BUILD) $(BENCH_GENERATE_ARGS)
