# ipu-serve under wrk: throughput and p50/p99 at 1, 8, 64 connections,
# dynamic batching on / off, MLP and CNN; RSS over a 60 s run (make bench).
.PHONY: bench-serve
bench: bench-serve
bench-serve: $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-compile $(BUILD)/bin/mlp-example \
		$(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) /usr/bin/python3 bench/bench_serve.py
# The same MLP over gRPC and HTTP/1.1 with one load generator (h2load):
# throughput and p50/p99 at 1, 8, 64 connections and 64 streams on one
# (bench/bench_serve_grpc.py, figures in bench/bench_serve_grpc.md).
.PHONY: bench-serve-grpc
bench: bench-serve-grpc
bench-serve-grpc: $(BUILD)/bin/ipu-serve $(BUILD)/bin/mlp-example $(BUILD)/tests/modelrunner/gen_models
	BUILD=$(BUILD) /usr/bin/python3 bench/bench_serve_grpc.py
# Generation served with continuous batching: tokens/s of 1, 4 and 8
# concurrent /generate_stream clients beside the runtime's own figures for
# 1, 4 and 8 sequences through the step API (bench/bench_serve_generate.py,
# figures in bench/bench_serve_generate.md); BENCH_SERVE_GENERATE_ARGS for
# other sizes ('--shape gpt2s' for GPT-2 small's shape).
.PHONY: bench-serve-generate
bench: bench-serve-generate
bench-serve-generate: $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-run $$(IPU_COMPILE) \
		$$(BENCH_GENERATE_SLOTS)
	nice /usr/bin/python3 bench/bench_serve_generate.py --build $(BUILD) $(BENCH_SERVE_GENERATE_ARGS)
