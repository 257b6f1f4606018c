# ipu-serve: the KServe v2 / Triton HTTP and gRPC model server over libipurt
# (libmicrohttpd for HTTP, jansson for JSON, libyaml for config.yaml,
# gRPC's C core and protobuf-c for gRPC).
# Every server/*.c but main.c is also linked into the unit tests.
# gRPC: KServe v2's GRPCInferenceService from its .proto (server/grpc/),
# messages by protobuf-c, transport by gRPC's C core.
SERVE_GEN := $(BUILD)/gen/server
SERVE_PB_C := $(SERVE_GEN)/kserve/grpc_predict_v2.pb-c.c
SERVE_PB_H := $(SERVE_GEN)/kserve/grpc_predict_v2.pb-c.h
SERVE_PB_O := $(SERVE_GEN)/kserve/grpc_predict_v2.pb-c.o
SERVE_SRCS := $(sort $(wildcard server/*.c))
SERVE_OBJS := $(SERVE_SRCS:%.c=$(BUILD)/%.o) $(SERVE_PB_O)
SERVE_LIB_OBJS := $(filter-out $(BUILD)/server/main.o,$(SERVE_OBJS))
# a repository's model.onnx is compiled at load (ipu/compiler.h)
SERVE_LIBS = $(COMPILER_LINK) -lmicrohttpd -ljansson -lyaml -lgrpc -lgpr -lprotobuf-c
# messages are cut to their buffers on purpose
CFLAGS_server_ := -Itools/lib -Iserver -I$(SERVE_GEN) -Wno-format-truncation

$(SERVE_PB_C) $(SERVE_PB_H) &: server/grpc/grpc_predict_v2.proto
	@mkdir -p $(dir $(SERVE_PB_C))
	protoc-c --proto_path=server/grpc --c_out=$(dir $(SERVE_PB_C)) grpc_predict_v2.proto
# generated code: built without the project's warnings
$(SERVE_PB_O): $(SERVE_PB_C) $(SERVE_PB_H) $(FLAGS_STAMP)
	$(CC) $(ALL_CPPFLAGS) $(filter-out -Werror -Wmissing-prototypes -Wshadow,$(ALL_CFLAGS)) -w -c -o $@ $<
$(filter-out $(SERVE_PB_O),$(SERVE_OBJS)): $(SERVE_PB_H)

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
