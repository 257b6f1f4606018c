# libipu: device access (model backend: the engine in-process; kernel
# backend: /dev/accel/accelN through libdrm, ioctls and io_uring).
LIBIPU_SRCS := $(sort $(wildcard libipu/*.c))
LIBIPU_LIB := $(BUILD)/libipu.a

$(LIBIPU_LIB): $(LIBIPU_SRCS:%.c=$(BUILD)/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

LIBS += $(LIBIPU_LIB)

# The kernel backend (backend_kernel.c) uses liburing and libdrm (its
# headers under /usr/include/libdrm: pkg-config): every program that links
# libipu links LIBIPU_LDLIBS too (-lnettle hashes custom-op plugins,
# custom_ops.c); link lines of their own (fuzzers, selftests) name it.
DRM_CFLAGS := $(shell pkg-config --cflags libdrm 2>/dev/null)
$(BUILD)/libipu/backend_kernel.o: CPPFLAGS += $(DRM_CFLAGS)
LIBIPU_LDLIBS := -luring -ldrm -lnettle
LDLIBS_BASE += $(LIBIPU_LDLIBS)

# The shared library: libipu, the engine it runs in-process and the shared
# utility (error table, CRC), exporting the ipu_* API only (libipu/libipu.map).
LIBIPU_SO := $(BUILD)/libipu.so.$(LIBVERSION)
$(LIBIPU_SO): $(LIBIPU_SRCS:%.c=$(BUILD)/%.o) $$(ENGINE_OBJS) $$(UTIL_OBJS) libipu/libipu.map
	$(CC) -shared -Wl,-soname,libipu.so.$(SOVERSION) -Wl,--version-script=libipu/libipu.map \
		-Wl,--no-undefined -o $@ $(filter %.o,$^) $(LDFLAGS_BASE) $(LIBIPU_LDLIBS) -lm
INSTALL_SHLIBS += $(LIBIPU_SO)
INSTALL_ARCHIVES += $(LIBIPU_LIB)
INSTALL_HEADERS += libipu/include/ipu/ipu.h libipu/include/ipu/group.h libipu/include/ipu/custom_ops.h
INSTALL_PC += libipu/libipu.pc.in
