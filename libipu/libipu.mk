# libipu: device access (model backend in-process; kernel backend later).
LIBIPU_SRCS := $(sort $(wildcard libipu/*.c))
LIBIPU_LIB := $(BUILD)/libipu.a

$(LIBIPU_LIB): $(LIBIPU_SRCS:%.c=$(BUILD)/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

LIBS += $(LIBIPU_LIB)
