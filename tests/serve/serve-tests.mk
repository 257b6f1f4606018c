# ipu-serve end to end (tests/serve/test_serve.py): real HTTP on loopback
# with curl, urllib and requests, models built by gen_models and
# mlp-example, results compared with ipu-run's.
.PHONY: check-serve
check-serve: $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-run $(BUILD)/bin/mlp-example \
		$(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve.py
CHECKS += ;make -s check-serve;

# The pieces without HTTP (config.yaml, batch merge/split, datatypes),
# under ASan+UBSan in make check.
CFLAGS_tests_serve_ := -Iserver -Itools/lib
$(BUILD)/tests/serve/test_serve_units: $(BUILD)/tests/serve/test_serve_units.o $(SERVE_LIB_OBJS) \
		$(CLI_LIB) $(RUNTIME_LIB) $(RUNTIME_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(SERVE_LIB_OBJS) $(CLI_LIB) $(RUNTIME_LINK) $(SERVE_LIBS) $(LDLIBS_BASE)
TESTS += $(BUILD)/tests/serve/test_serve_units

# Debian's Prometheus scrapes ipu-serve; counters read back through its API.
.PHONY: check-serve-prometheus
check-serve-prometheus: $(BUILD)/bin/ipu-serve $(BUILD)/bin/mlp-example $(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_prometheus.py
CHECKS += ;make -s check-serve-prometheus;

# The same end-to-end run against the ASan+UBSan build of ipu-serve (its
# HTTP, JSON and batching paths, and no leak at the SIGTERM exit).
CHECKS += ;make -s BUILD=build/san SANITIZE=1 check-serve;
