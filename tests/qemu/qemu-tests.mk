# Device tests of the QEMU `ipu` PCI function over qtest.  The
# test program is built with everything else; `make check` runs it through
# tests/qemu/run-qtests, which builds QEMU first when the cache is cold.
QEMU_TEST := $(BUILD)/tests/qemu/test_qemu_ipu

$(QEMU_TEST): $(BUILD)/tests/qemu/test_qemu_ipu.o $(GRAPH_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(GRAPH_LIB) $(ENGINE_LIB) $(LDLIBS_BASE)

all: $(QEMU_TEST)
CHECKS += ;tests/qemu/run-qtests;
CHECKS += ;tests/qemu/run-qtest-trace;
