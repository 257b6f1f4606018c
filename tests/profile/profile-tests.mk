# Profiles of the modelled IPU and ipu-run as a benchmark: the .ipuef debug
# blob's codec and the engine/runtime hooks (unit tests, ASan+UBSan in make
# check), ipu-run --profile, its statistics against the request times it
# measured, ipu-compile --json (run-profile-tests.sh).
$(BUILD)/tests/profile/test_profile_blob: $(BUILD)/tests/profile/test_profile_blob.o \
		$(RUNTIME_LIB) $(RUNTIME_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $< $(RUNTIME_LINK) $(LDLIBS_BASE)
TESTS += $(BUILD)/tests/profile/test_profile_blob

# the engine's step events and the ModelRunner's request events, on the
# Model Runtime tests' models
CFLAGS_tests_profile_ := -Itests/modelrunner
$(BUILD)/tests/profile/test_profile_hooks: $(BUILD)/tests/profile/test_profile_hooks.o \
		$(MR_MODELS_OBJ) $(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< -Wl,--start-group $(MR_LINK) -Wl,--end-group $(LDLIBS_BASE)
TESTS += $(BUILD)/tests/profile/test_profile_hooks

.PHONY: check-profile
check-profile: $(IPU_COMPILE) $(BUILD)/bin/ipu-run $(BUILD)/bin/ipuef-dump $(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) tests/profile/run-profile-tests.sh
CHECKS += ;make -s check-profile;

# The hooks run on the runtime's and the device's threads: ThreadSanitizer.
.PHONY: check-tsan-profile
check-tsan-profile:
	$(MAKE) -s BUILD=build/tsan SANITIZE=thread build/tsan/tests/profile/test_profile_hooks
	TSAN_OPTIONS="halt_on_error=1 $(TSAN_OPTIONS)" build/tsan/tests/profile/test_profile_hooks
CHECKS += ;make -s check-tsan-profile;

# ipu-compile --report rendered by headless chromium (deps/profile.txt)
.PHONY: check-report
check-report: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	BUILD=$(BUILD) tests/profile/run-report-tests.sh
CHECKS += ;make -s check-report;
