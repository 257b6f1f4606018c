# Compile time and peak RSS of ipu-compile on the zoo's ResNet-50 (224 x 224)
# at batch 1 and 4, fp32 and fp16 (bench/bench_compile.py,
# bench/bench_compile.md); BENCH_COMPILE_ARGS='--models vgg11 --batch 1'
# picks other networks of the zoo's full set.
.PHONY: bench-compile
bench: bench-compile
bench-compile: $$(IPU_COMPILE)
	nice /usr/bin/python3 bench/bench_compile.py --bin $(BUILD)/bin --work $(BUILD)/bench-compile \
		--json $(BUILD)/bench-compile.json $(BENCH_COMPILE_ARGS)
