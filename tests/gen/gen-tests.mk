# Generation: device-resident state (tests/gen/state_model.c builds a model
# that accumulates into state with the graph builder and the .ipuef writer).
GEN_STATE_OBJ := $(BUILD)/tests/gen/state_model.o
CFLAGS_tests_gen_ := -Itests/gen -DIPURT_TEST_BUILD='"$(BUILD)"'

$(BUILD)/tests/gen/test_state: $(BUILD)/tests/gen/test_state.o $(GEN_STATE_OBJ) \
		$(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB) $(BUILD)/bin/ipuef-dump
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< -Wl,--start-group $(GEN_STATE_OBJ) $(RUNTIME_LIB) \
		$(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB) -Wl,--end-group -ljansson $(LDLIBS_BASE)

TESTS += $(BUILD)/tests/gen/test_state

# The greedy ArgMax of a vocabulary wider than a tile, split over tiles,
# against the reference evaluator (float32, float16, ties).
CFLAGS_tests_gen_ += $(COMPILER_CPPFLAGS)
$(BUILD)/tests/gen/test_argmax_split.o: $(COMPILER_PB_H)
$(BUILD)/tests/gen/test_argmax_split: $(BUILD)/tests/gen/test_argmax_split.o $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $(filter %.o,$^) $(COMPILER_LINK) $(LDLIBS_BASE)
TESTS += $(BUILD)/tests/gen/test_argmax_split

# A GPT-2-shaped decoder from torch (tests/gen/tiny_gpt.py: 2 layers, d 64,
# vocab 96, seeded random weights) compiled with its key/value cache as
# state, stepped token by token against torch's logits, with caches of 32
# and 64 positions (the bytes streamed per step must not change); then
# generated with ipu-run --generate and Python's Runner.generate().
$(BUILD)/tests/gen/test_decoder: $(BUILD)/tests/gen/test_decoder.o $(RUNTIME_LIB) $(RUNTIME_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(RUNTIME_LINK) -lm $(LDLIBS_BASE)
PROGRAMS += $(BUILD)/tests/gen/test_decoder

# The same decoder with 4 cache slots: the step API (ipurt_gen_slots_*)
# against torch's greedy loop of each prompt alone.
$(BUILD)/tests/gen/test_slots: $(BUILD)/tests/gen/test_slots.o $(RUNTIME_LIB) $(RUNTIME_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(RUNTIME_LINK) $(LDLIBS_BASE)
PROGRAMS += $(BUILD)/tests/gen/test_slots

# Sampling on the device against the host's sampler (the same tokens for
# the same seeds), top-k 1 as greedy, slots sampled at once.
$(BUILD)/tests/gen/test_sample: $(BUILD)/tests/gen/test_sample.o $(RUNTIME_LIB) $(RUNTIME_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(RUNTIME_LINK) $(LDLIBS_BASE)
PROGRAMS += $(BUILD)/tests/gen/test_sample

.PHONY: check-gen-decoder
check-gen-decoder: $(BUILD)/bin/ipu-compile $(BUILD)/bin/ipu-run $(BUILD)/bin/ipuef-dump \
		$(BUILD)/tests/gen/test_decoder $(BUILD)/tests/gen/test_slots python \
		$(BUILD)/tests/gen/test_sample
	tests/gen/check-decoder.sh $(BUILD)
CHECKS += ;make -s check-gen-decoder;

# GPT-2 small's shape at 128 and 1024 positions (fp16): torch's 64 greedy
# tokens and the same 24 stream bytes per step at both cache lengths.  A
# few minutes: not part of make check.
.PHONY: check-gen-gpt2
check-gen-gpt2: $(BUILD)/bin/ipu-compile $(BUILD)/bin/ipu-run
	tests/gen/check-gpt2.sh $(BUILD)

# The same two executables in the test VM through the driver
# (tests/gen/check-gpt2-vm.sh: an ipu2-shaped first device, 2 GiB of guest
# RAM, the static ipu-run on /dev/accel/accel0): torch's and the in-process
# tokens, 24 stream bytes per step at both lengths; ipu-serve's generate
# endpoints in the guest at 128.  5 to 8 minutes for the two VMs after
# check-gen-gpt2's 2 to 15 (loaded machine): not part of make check.
.PHONY: check-gen-gpt2-vm
check-gen-gpt2-vm: check-gen-gpt2 $$(KMOD) $$(VM_DIR)/bin/ipu-run $(BUILD)/bin/ipu-serve
	tests/gen/check-gpt2-vm.sh $(BUILD)
