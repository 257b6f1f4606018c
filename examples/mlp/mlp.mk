# The MLP example (the README's first demo) and its model code, shared with
# tests/engine/test_mlp.c.
MLP_MODEL_OBJ := $(BUILD)/examples/mlp/mlp_model.o
MLP_EXAMPLE := $(BUILD)/bin/mlp-example
CFLAGS_examples_mlp_ := -Iexamples/mlp

$(MLP_EXAMPLE): $(BUILD)/examples/mlp/mlp.o $(MLP_MODEL_OBJ) $(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $(BUILD)/examples/mlp/mlp.o $(MLP_MODEL_OBJ) $(RUNTIME_LIB) $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB) $(LDLIBS_BASE)

PROGRAMS += $(MLP_EXAMPLE)
