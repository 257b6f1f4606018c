# Model tests (tests/models/README.md): an MLP, a ResNet-style CNN and a
# small transformer encoder, generated at test time with fixed seeds,
# compiled by ipu-compile in fp32 and fp16, run on the in-process device and
# compared with onnxruntime-node (or numpy).  Part of `make check`, once
# with the plain build and once with ipu-compile and ipu-run built with
# ASan+UBSan (build/san).
.PHONY: check-models check-models-san
check-models: $(IPU_COMPILE) $(BUILD)/bin/ipu-run
	BUILD=$(BUILD) tests/models/run-models.sh
check-models-san:
	tests/models/run-models.sh --san
CHECKS += ;tests/models/run-models.sh;
CHECKS += ;tests/models/run-models.sh --san;
