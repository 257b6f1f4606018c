# Engine matmul throughput against OpenBLAS (make bench).
BENCH_MATMUL := $(BUILD)/bench/bench_matmul
$(BENCH_MATMUL): $(BUILD)/bench/bench_matmul.o $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB) -lopenblas $(LDLIBS_BASE)
CFLAGS_bench_ := -I/usr/include/x86_64-linux-gnu/openblas-pthread
bench: bench-matmul
bench-matmul: $(BENCH_MATMUL)
	$(BENCH_MATMUL)
.PHONY: bench-matmul
