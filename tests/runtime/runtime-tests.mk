# Tests, fuzzing and benchmarks of the runtime's device-free building
# blocks (.ipuef container, .npy, RingBuffer).
#
#   make check-tsan        the RingBuffer stress test under ThreadSanitizer
#   make fuzz-ipuef-check  20 s of libFuzzer on the .ipuef reader (make check)
#   make fuzz              (also) 5 minutes of it
#   make bench             (also) RingBuffer vs ck_ring
CFLAGS_tests_runtime_ = -Iruntime -DIPURT_TEST_BUILD='"$(BUILD)"'

RT_TEST_NAMES := test_ipuef test_ipuef_dump test_npy test_ringbuffer
RT_TESTS := $(RT_TEST_NAMES:%=$(BUILD)/tests/runtime/%)
RT_SAMPLE_OBJ := $(BUILD)/tests/runtime/ipuef_sample.o

$(BUILD)/tests/runtime/test_ipuef $(BUILD)/tests/runtime/test_ipuef_dump \
$(BUILD)/tests/runtime/gen_ipuef_corpus: $(RT_SAMPLE_OBJ)
$(BUILD)/tests/runtime/test_ipuef_dump: $(BUILD)/bin/ipuef-dump

$(RT_TESTS) $(BUILD)/tests/runtime/gen_ipuef_corpus: $(BUILD)/tests/runtime/%: \
		$(BUILD)/tests/runtime/%.o $(RUNTIME_LIB) $(RUNTIME_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $(filter %.o,$^) $(RUNTIME_LINK) $(LDLIBS_BASE)

TESTS += $(RT_TESTS)

# The RingBuffer stress test under ThreadSanitizer, in its own build tree.
.PHONY: check-tsan
check-tsan:
	$(MAKE) -s BUILD=build/tsan SANITIZE=thread build/tsan/tests/runtime/test_ringbuffer
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" build/tsan/tests/runtime/test_ringbuffer
CHECKS += ;make -s check-tsan;

# libFuzzer on the .ipuef reader (clang; the reader's sources are compiled
# into the fuzzer with its instrumentation), seeded by files the writer made.
IPUEF_FUZZ := build/fuzz/fuzz_ipuef
IPUEF_FUZZ_SRCS := tests/fuzz/fuzz_ipuef.c tests/runtime/ipuef_sample.c \
	runtime/dtype.c runtime/ipuef_common.c runtime/ipuef_meta.c runtime/ipuef_state.c \
	runtime/ipuef_group.c \
	runtime/ipuef_read.c runtime/ipuef_write.c runtime/npy.c runtime/file_atomic.c \
	util/crc32.c util/error.c
IPUEF_FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-g -O1 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iruntime/include -Iruntime \
	-Iutil/include -Iengine/include -Itests/runtime
IPUEF_CORPUS := build/fuzz/ipuef-corpus

$(IPUEF_FUZZ): $(IPUEF_FUZZ_SRCS) $(wildcard runtime/*.h runtime/include/ipu/*.h tests/runtime/*.h util/include/ipu/*.h engine/include/ipu/*.h)
	@mkdir -p $(dir $@)
	clang $(IPUEF_FUZZ_FLAGS) -o $@ $(IPUEF_FUZZ_SRCS)

$(IPUEF_CORPUS)/.stamp: $(BUILD)/tests/runtime/gen_ipuef_corpus
	@mkdir -p $(dir $@)
	$< $(dir $@)
	@touch $@

.PHONY: fuzz-ipuef-check fuzz-ipuef
fuzz-ipuef-check: $(IPUEF_FUZZ) $(IPUEF_CORPUS)/.stamp
	scripts/fuzz-run $(IPUEF_FUZZ) 1500000 $(IPUEF_CORPUS)
fuzz-ipuef: $(IPUEF_FUZZ) $(IPUEF_CORPUS)/.stamp
	scripts/fuzz-run --explore $(IPUEF_FUZZ) 600 $(IPUEF_CORPUS)
fuzz: fuzz-ipuef
CHECKS += ;make -s fuzz-ipuef-check;

# RingBuffer against ConcurrencyKit's ck_ring (Debian libck-dev; ck_ring's
# SPSC calls are inline, so no library is linked).
BENCH_RINGBUFFER := $(BUILD)/bench/bench_ringbuffer
$(BENCH_RINGBUFFER): $(BUILD)/bench/bench_ringbuffer.o $(RUNTIME_LIB) $(RUNTIME_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $< $(RUNTIME_LINK) $(LDLIBS_BASE)
.PHONY: bench-ringbuffer
bench: bench-ringbuffer
bench-ringbuffer: $(BENCH_RINGBUFFER)
	$(BENCH_RINGBUFFER)
