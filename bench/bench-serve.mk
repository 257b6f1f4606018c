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
