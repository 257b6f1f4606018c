# libipu: device access (model backend: the engine in-process; kernel
# backend: /dev/ipuN through ioctls and io_uring).
LIBIPU_SRCS := $(sort $(wildcard libipu/*.c))
LIBIPU_LIB := $(BUILD)/libipu.a

$(LIBIPU_LIB): $(LIBIPU_SRCS:%.c=$(BUILD)/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

LIBS += $(LIBIPU_LIB)

# The kernel backend (backend_kernel.c) uses liburing: every program that
# links libipu links -luring too.
LDLIBS_BASE += -luring
