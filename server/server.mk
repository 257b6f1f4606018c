# ipu-serve: the KServe v2 / Triton HTTP model server over libipurt
# (libmicrohttpd for HTTP, jansson for JSON, libyaml for config.yaml).
# Every server/*.c but main.c is also linked into the unit tests.
SERVE_SRCS := $(sort $(wildcard server/*.c))
SERVE_OBJS := $(SERVE_SRCS:%.c=$(BUILD)/%.o)
SERVE_LIB_OBJS := $(filter-out $(BUILD)/server/main.o,$(SERVE_OBJS))
# a repository's model.onnx is compiled at load (ipu/compiler.h)
SERVE_LIBS = $(COMPILER_LINK) -lmicrohttpd -ljansson -lyaml
# messages are cut to their buffers on purpose
CFLAGS_server_ := -Itools/lib -Iserver -Wno-format-truncation

$(BUILD)/bin/ipu-serve $(BUILD)/tests/serve/test_serve_units: $(COMPILER_LIB) $(COMPILER_DEPLIBS)
$(BUILD)/bin/ipu-serve: $(SERVE_OBJS) $(CLI_LIB) $(RUNTIME_LIB) $(RUNTIME_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $(SERVE_OBJS) $(CLI_LIB) $(RUNTIME_LINK) $(SERVE_LIBS) $(LDLIBS_BASE)

PROGRAMS += $(BUILD)/bin/ipu-serve
INSTALL_PROGRAMS += $(BUILD)/bin/ipu-serve

# A repository's model.onnx compiled when it loads (tests/serve/test_serve_onnx.py).
.PHONY: check-serve-onnx
check-serve-onnx: $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-run $(BUILD)/bin/ipu-compile
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_onnx.py
CHECKS += ;make -s check-serve-onnx;
