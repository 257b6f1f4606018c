# Hostile input against the tools and readers (tests/hostile/run_hostile.py):
# one case per known defect class (hangs, lost data, reads outside the
# model, unbounded work, nonsense accepted, output that can be hijacked),
# each with its exit code, message, deadline and the checksums of every
# file it must not change, then a seeded run of 20,000 generated bad
# inputs across ipuef-dump, ipu-run and ipu-compile.
HOSTILE_GEN := $(BUILD)/tests/hostile/make_hostile

$(HOSTILE_GEN): $(BUILD)/tests/hostile/make_hostile.o $(RUNTIME_LIB) $(RUNTIME_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $< $(RUNTIME_LINK) $(LDLIBS_BASE)
PROGRAMS += $(HOSTILE_GEN)

.PHONY: check-hostile
check-hostile: $(HOSTILE_GEN) $(BUILD)/bin/ipu-run $(BUILD)/bin/ipuef-dump $(BUILD)/bin/ipu-compile \
		$(BUILD)/tests/modelrunner/gen_models
	/usr/bin/python3 tests/hostile/run_hostile.py --bin $(BUILD)/bin --tests $(BUILD)/tests
CHECKS += ;make -s check-hostile;
