# The graph builder (Poplar-like layer): tensors, tile mapping, vertices,
# programs -> executable image.  Used by the compiler, the tests and examples.
GRAPH_SRCS := $(sort $(wildcard compiler/graph/*.c))
GRAPH_LIB := $(BUILD)/libipugraph.a

$(GRAPH_LIB): $(GRAPH_SRCS:%.c=$(BUILD)/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

LIBS += $(GRAPH_LIB)
