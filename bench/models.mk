# Compile time / peak memory of ipu-compile on real architectures (and
# ResNet-50), and their throughput on the in-process device against
# onnxruntime-node in the same run (bench/bench_models.py; make bench).
.PHONY: bench-models
bench: bench-models
bench-models: $$(IPU_COMPILE) $(BUILD)/bin/ipu-run
	tests/models/run-models.sh --install-npm-only
	/usr/bin/python3 bench/bench_models.py --bin $(BUILD)/bin --work $(BUILD)/bench-models $(BENCH_MODELS_ARGS)
