# A model split over IPUs: modelled throughput pipelined against one stage
# after the other, and the stages' balance (make bench; bench_multi.md).
# (bench/ is read before compiler/: its variables are expanded late, $$(...).)
BENCH_MULTI := $(BUILD)/bench/bench_multi
$(BUILD)/bench/bench_multi.o: CFLAGS += -Itests/multi $(COMPILER_CPPFLAGS)
$(BUILD)/bench/bench_multi.o: $$(COMPILER_PB_H)
$(BENCH_MULTI): $(BUILD)/bench/bench_multi.o $(BUILD)/tests/multi/mlp_model.o $(COMPILER_LIB) $$(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $(filter %.o,$^) $(COMPILER_LINK) $(LDLIBS_BASE)
PROGRAMS += $(BENCH_MULTI)
bench: bench-multi
bench-multi: $(BENCH_MULTI)
	$(BENCH_MULTI)
.PHONY: bench-multi
