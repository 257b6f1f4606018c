# Model tests (tests/models/README.md): an MLP, a ResNet-style CNN and a
# small transformer encoder, generated at test time with fixed seeds,
# compiled by ipu-compile in fp32 and fp16, run on the in-process device and
# compared with onnxruntime-node (or numpy).  Part of `make check`.
.PHONY: check-models
check-models: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	BUILD=$(BUILD) tests/models/run-models.sh
CHECKS += ;tests/models/run-models.sh;
