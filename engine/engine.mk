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
# ipu/thread.h is the libraries' own helper (threads that take no signals),
# not an interface: it stays out of the installed headers.
INSTALL_HEADERS += $(filter-out %/thread.h,$(wildcard engine/include/ipu/*.h))
