# The engine compiled as QEMU's meson build compiles it
# (qemu-device/meson.build: gnu11, codelets -O3 -funroll-loops, core -O2),
# linked into the same vertex runner as this tree's build: their outputs
# must be byte-identical (tests/engine/check-qemu-flags-identity.sh), since
# the in-process device and the QEMU device run the same engine sources.
QFLAGS_DIR := $(BUILD)/qemu-flags
QFLAGS_CFLAGS := -std=gnu11 -g -pthread -Iengine -Iengine/include -Iutil/include
QFLAGS_ENGINE_LIB := $(QFLAGS_DIR)/libipuengine.a

$(QFLAGS_DIR)/engine/codelets/%.o: engine/codelets/%.c
	@mkdir -p $(dir $@)
	$(CC) $(QFLAGS_CFLAGS) -O3 -funroll-loops -MMD -MP -c -o $@ $<
$(QFLAGS_DIR)/engine/%.o: engine/%.c
	@mkdir -p $(dir $@)
	$(CC) $(QFLAGS_CFLAGS) -O2 -MMD -MP -c -o $@ $<
$(QFLAGS_DIR)/util/%.o: util/%.c
	@mkdir -p $(dir $@)
	$(CC) $(QFLAGS_CFLAGS) -O2 -MMD -MP -c -o $@ $<
-include $(ENGINE_SRCS:%.c=$(QFLAGS_DIR)/%.d) $(UTIL_SRCS:%.c=$(QFLAGS_DIR)/%.d)

$(QFLAGS_ENGINE_LIB): $(ENGINE_SRCS:%.c=$(QFLAGS_DIR)/%.o) $(UTIL_SRCS:%.c=$(QFLAGS_DIR)/%.o)
	$(AR) rcs $@ $^

IDENTITY_DUMP := $(BUILD)/tests/engine/identity_dump
$(IDENTITY_DUMP): $(BUILD)/tests/engine/identity_dump.o $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(ENGINE_LIB) $(LDLIBS_BASE)
$(IDENTITY_DUMP)-qemu-flags: $(BUILD)/tests/engine/identity_dump.o $(QFLAGS_ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(QFLAGS_ENGINE_LIB) $(LDLIBS_BASE)

.PHONY: check-qemu-flags-identity
check-qemu-flags-identity: $(IDENTITY_DUMP) $(IDENTITY_DUMP)-qemu-flags
	tests/engine/check-qemu-flags-identity.sh $(IDENTITY_DUMP)
CHECKS += ;make -s check-qemu-flags-identity;
