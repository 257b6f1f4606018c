# The tile engine: executable loader/verifier, BSP interpreter, codelets.
# Built as a static library linked into libipu (model backend), the tests,
# the fuzzers and (through qemu-device/build-qemu) into QEMU itself.
ENGINE_SRCS := $(sort $(wildcard engine/*.c engine/codelets/*.c))
ENGINE_OBJS := $(ENGINE_SRCS:%.c=$(BUILD)/%.o)
ENGINE_LIB := $(BUILD)/libipuengine.a
# Codelets are the hot loop: optimise harder (still IEEE-exact, no fast-math).
CFLAGS_engine_codelets_ := -O3 -funroll-loops

$(ENGINE_LIB): $(ENGINE_OBJS) $$(UTIL_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

LIBS += $(ENGINE_LIB)

INSTALL_ARCHIVES += $(ENGINE_LIB)
# Installed: what the custom-operator plugin ABI (ipu/custom_op.h) and
# libipu's custom-op sets need (the codelet interface, the executable
# format's records, the table, fp8 formats).  The engine's own API
# (ipu/engine.h) and the libraries' thread helper (ipu/thread.h) are
# internals: libipu.so does not export them, a library of the stack that
# needs the engine links libipuengine.a.
INSTALL_HEADERS += $(addprefix engine/include/ipu/,codelet.h custom_op.h custom_table.h fp8.h ipux.h)
