# The shared utility under every library: the one error table (ipu/error.h),
# CRC-32 (ipu/crc32.h) and half-float conversion (ipu/half.h, header only).
# Its objects travel inside libipuengine.a and libipu.so, so every program
# that links the engine or libipu has them; QEMU builds them beside the
# engine (qemu-device/meson.build).
UTIL_SRCS := $(sort $(wildcard util/*.c))
UTIL_OBJS := $(UTIL_SRCS:%.c=$(BUILD)/%.o)
INSTALL_HEADERS += $(wildcard util/include/ipu/*.h)
