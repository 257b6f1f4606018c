# Custom operators (Documentation/compiler/custom-ops.md): the engine's
# plugin table and loader (unit test), and the example plugin end to end
# (test-custom.sh: built out of tree against an installed prefix, a torch
# model with a custom-domain node compiled, run and refused).
CUSTOM_TESTS := $(BUILD)/tests/custom/test_custom_engine

$(CUSTOM_TESTS): $(BUILD)/tests/custom/%: $(BUILD)/tests/custom/%.o $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(LIBIPU_LIB) $(GRAPH_LIB) $(ENGINE_LIB) $(LDLIBS_BASE)

TESTS += $(CUSTOM_TESTS)

.PHONY: check-custom
check-custom: all
	BUILD=$(BUILD) tests/custom/test-custom.sh
CHECKS += ;make -s check-custom;

# In the VM through the driver, the QEMU device loading the plugin
# (-device ipu,custom-ops=): bit-identical to the in-process device.
.PHONY: check-custom-vm
check-custom-vm: all
	BUILD=$(BUILD) tests/custom/test-custom-vm.sh
CHECKS += ;make -s check-custom-vm;
