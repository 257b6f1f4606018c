# ipu-serve: the KServe v2 / Triton HTTP and gRPC model server over libipurt
# (libmicrohttpd for HTTP, jansson for JSON, libyaml for config.yaml,
# gRPC's C core and protobuf-c for gRPC, libprotobuf's text format and
# protobuf-c for config.pbtxt).
# Every server/*.c but main.c is also linked into the unit tests.
# gRPC: KServe v2's GRPCInferenceService from its .proto (server/grpc/),
# messages by protobuf-c, transport by gRPC's C core.
# grpc_service_stats.proto, grpc_service_config.proto: the messages of
# Triton's ModelStatistics and ModelConfig RPCs (the latter's ModelConfig
# is server/triton/model_config.proto, below).
SERVE_GEN := $(BUILD)/gen/server
SERVE_PROTOS := grpc_predict_v2 grpc_service_stats grpc_service_config
SERVE_PB_C := $(SERVE_PROTOS:%=$(SERVE_GEN)/kserve/%.pb-c.c)
SERVE_PB_H := $(SERVE_PROTOS:%=$(SERVE_GEN)/kserve/%.pb-c.h)
SERVE_PB_O := $(SERVE_PROTOS:%=$(SERVE_GEN)/kserve/%.pb-c.o)
SERVE_SRCS := $(sort $(wildcard server/*.c))
SERVE_PBTXT_OBJS := $(SERVE_GEN)/triton/model_config.pb-c.o $(SERVE_GEN)/triton/model_config.pb.o \
	$(BUILD)/server/pbtxt.o
SERVE_OBJS := $(SERVE_SRCS:%.c=$(BUILD)/%.o) $(SERVE_PB_O) $(SERVE_PBTXT_OBJS)
SERVE_LIB_OBJS := $(filter-out $(BUILD)/server/main.o,$(SERVE_OBJS))
# a repository's model.onnx is compiled at load (ipu/compiler.h)
SERVE_LIBS = $(COMPILER_LINK) -lmicrohttpd -ljansson -lyaml -lgrpc -lgpr -lprotobuf-c -lprotobuf -lstdc++
# messages are cut to their buffers on purpose
CFLAGS_server_ := -Itools/lib -Iserver -I$(SERVE_GEN) -I$(SERVE_GEN)/triton -Wno-format-truncation

$(SERVE_GEN)/kserve/%.pb-c.c $(SERVE_GEN)/kserve/%.pb-c.h: server/grpc/%.proto
	@mkdir -p $(SERVE_GEN)/kserve
	protoc-c --proto_path=server/grpc --proto_path=server/triton --c_out=$(SERVE_GEN)/kserve $*.proto
# generated code: built without the project's warnings
$(SERVE_GEN)/kserve/%.pb-c.o: $(SERVE_GEN)/kserve/%.pb-c.c $(SERVE_GEN)/kserve/%.pb-c.h $(FLAGS_STAMP)
	$(CC) $(ALL_CPPFLAGS) -I$(SERVE_GEN)/triton $(filter-out -Werror -Wmissing-prototypes -Wshadow,$(ALL_CFLAGS)) \
		-w -c -o $@ $<
$(SERVE_GEN)/kserve/grpc_service_config.pb-c.c: $(SERVE_GEN)/triton/model_config.pb-c.h
$(filter-out $(SERVE_PB_O),$(SERVE_OBJS)): $(SERVE_PB_H)

# config.pbtxt: Triton's model_config.proto compiled by protoc for the C++
# text-format reader (server/pbtxt.cc) and by protoc-c for the C side
SERVE_TRITON_GEN := $(SERVE_GEN)/triton
SERVE_PROTO := server/triton/model_config.proto

# The C++ side takes the C build's optimisation and sanitizers; ccache as CC has it.
SERVE_CXX = $(if $(filter ccache,$(CC)),ccache )$(CXX)
SERVE_CXXFLAGS = -std=c++17 -g $(OPT) -Wall -Wextra -Werror -pthread -fPIC \
	$(filter -fsanitize=% -fno-sanitize-recover=% -fno-omit-frame-pointer --coverage,$(CFLAGS_BASE))
$(SERVE_TRITON_GEN)/model_config.pb.cc $(SERVE_TRITON_GEN)/model_config.pb.h &: $(SERVE_PROTO)
	@mkdir -p $(SERVE_TRITON_GEN)
	protoc --cpp_out=$(SERVE_TRITON_GEN) -Iserver/triton $<
$(SERVE_TRITON_GEN)/model_config.pb-c.c $(SERVE_TRITON_GEN)/model_config.pb-c.h &: $(SERVE_PROTO)
	@mkdir -p $(SERVE_TRITON_GEN)
	protoc-c --c_out=$(SERVE_TRITON_GEN) -Iserver/triton $<
# generated code: the compilers' own flags, not the project's warnings; the
# generated C++ (660 KB, message classes only) is built without sanitizers
# or debug information, as libprotobuf itself is: with them it took
# minutes on every build kind, and its callers stay instrumented
$(SERVE_TRITON_GEN)/model_config.pb.o: $(SERVE_TRITON_GEN)/model_config.pb.cc $(FLAGS_STAMP)
	$(SERVE_CXX) -std=c++17 -O1 -pthread -fPIC -I$(SERVE_TRITON_GEN) -c -o $@ $<
$(SERVE_TRITON_GEN)/model_config.pb-c.o: $(SERVE_TRITON_GEN)/model_config.pb-c.c $(FLAGS_STAMP)
	$(CC) $(ALL_CPPFLAGS) $(filter-out -W%,$(ALL_CFLAGS)) -I$(SERVE_TRITON_GEN) -c -o $@ $<
$(BUILD)/server/pbtxt.o: server/pbtxt.cc server/pbtxt.h $(SERVE_TRITON_GEN)/model_config.pb.h $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(SERVE_CXX) $(SERVE_CXXFLAGS) -Iserver -I$(SERVE_TRITON_GEN) -c -o $@ $<
$(BUILD)/server/config_pbtxt.o: $(SERVE_TRITON_GEN)/model_config.pb-c.h

$(BUILD)/bin/ipu-serve: $(SERVE_OBJS) $(CLI_LIB) $(RUNTIME_LIB) $(RUNTIME_DEPLIBS) \
		$(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $(SERVE_OBJS) $(CLI_LIB) $(RUNTIME_LINK) $(SERVE_LIBS) $(LDLIBS_BASE)

PROGRAMS += $(BUILD)/bin/ipu-serve
INSTALL_PROGRAMS += $(BUILD)/bin/ipu-serve

# A repository's model.onnx compiled when it loads (tests/serve/test_serve_onnx.py).
.PHONY: check-serve-onnx
check-serve-onnx: $(BUILD)/bin/ipu-serve $(BUILD)/bin/ipu-run $(BUILD)/bin/ipu-compile
	BUILD=$(BUILD) /usr/bin/python3 tests/serve/test_serve_onnx.py
CHECKS += ;make -s check-serve-onnx;
