# The model-fusion example of the IPU Inference Toolkit's documentation (examples/model-fusion/README.md):
# run-fusion is the C version of the seed's run.py; run-example.sh builds
# the models, compiles them with config.yaml and checks run-fusion and
# ipu-run.  `make example-model-fusion` runs it; `make check` too.
RUN_FUSION := $(BUILD)/bin/run-fusion
CFLAGS_examples_model-fusion_ :=

$(RUN_FUSION): $(BUILD)/examples/model-fusion/run_fusion.o $(RUNTIME_LIB) $(RUNTIME_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(RUNTIME_LINK) $(LDLIBS_BASE)

PROGRAMS += $(RUN_FUSION)

.PHONY: example-model-fusion
example-model-fusion: $(RUN_FUSION) $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	BUILD=$(BUILD) examples/model-fusion/run-example.sh
CHECKS += ;examples/model-fusion/run-example.sh;
