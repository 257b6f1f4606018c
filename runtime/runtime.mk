# libipurt, the Model Runtime: .ipuef container, .npy files, RingBuffer, and
# (later) DeviceManager, Session, QueueManager, ModelRunner.  Every
# runtime/*.c is part of the library, so a new component is just a new file.
# Programs are runtime/tools/NAME.c -> $(BUILD)/bin/NAME: add NAME to
# RUNTIME_TOOLS.  RUNTIME_DEPLIBS lists the libraries libipurt needs
# (prepend libipu when the runtime starts using it); programs and tests link
# with $(RUNTIME_LINK), which is order-independent.
RUNTIME_SRCS := $(sort $(wildcard runtime/*.c))
RUNTIME_OBJS := $(RUNTIME_SRCS:%.c=$(BUILD)/%.o)
RUNTIME_LIB := $(BUILD)/libipurt.a
RUNTIME_DEPLIBS := $(BUILD)/libipu.a $(BUILD)/libipuengine.a
RUNTIME_LINK = -Wl,--start-group $(RUNTIME_LIB) $(RUNTIME_DEPLIBS) -Wl,--end-group
RUNTIME_TOOLS := ipuef-dump ipu-run
RUNTIME_PROGRAMS := $(RUNTIME_TOOLS:%=$(BUILD)/bin/%)

$(RUNTIME_LIB): $(RUNTIME_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# The CLIs share tools/lib/cli.h (options, exit codes, safe names);
# ipu-run writes its --json report with jansson.
# A tool's other files: TOOL_OBJS_<name>.
CFLAGS_runtime_tools_ := -Itools/lib
TOOL_OBJS_ipu-run := $(addprefix $(BUILD)/runtime/tools/,ipu_run_opts.o ipu_run_io.o ipu_run_report.o ipu_run_trace.o ipu_run_trace_group.o ipu_run_bench.o ipu_run_stats.o ipu_run_convert.o ipu_run_generate.o ipu_run_group.o ipu_run_pb.o)
# ipu-run reads and writes ONNX TensorProto (.pb) tensors with the
# compiler's decoder (compiler.mk is read before this fragment).
$(BUILD)/bin/ipu-run: $(TOOL_OBJS_ipu-run) $(COMPILER_LIB) $(COMPILER_DEPLIBS)
TOOL_LINK_ipu-run = $(COMPILER_LINK)
$(RUNTIME_PROGRAMS): $(BUILD)/bin/%: $(BUILD)/runtime/tools/%.o $(RUNTIME_LIB) $(RUNTIME_DEPLIBS) $(CLI_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $< $(TOOL_OBJS_$*) $(CLI_LIB) $(TOOL_LINK_$*) $(RUNTIME_LINK) -ljansson $(LDLIBS_BASE)

LIBS += $(RUNTIME_LIB)
PROGRAMS += $(RUNTIME_PROGRAMS)

# The shared library: the Model Runtime and the .ipuef/.npy readers and
# writers (ipurt_*, ipuef_*), on libipu.so.  It finds libipu.so.0 in its
# own folder ($ORIGIN): a program linked with --as-needed (the default of
# several distributions) that calls only ipurt_* records libipurt.so.0
# alone, and its rpath, if any, is not searched for libipurt's needs.
# The verifier it checks a group's executables with (ipu_exe_verify) is
# the engine's, not libipu.so's API: linked in from libipuengine.a, local.
RUNTIME_SO := $(BUILD)/libipurt.so.$(LIBVERSION)
$(RUNTIME_SO): $(RUNTIME_OBJS) $(LIBIPU_SO) $$(ENGINE_LIB) runtime/libipurt.map runtime/runtime.mk
	$(CC) -shared -Wl,-soname,libipurt.so.$(SOVERSION) -Wl,--version-script=runtime/libipurt.map \
		-Wl,--no-undefined -Wl,-rpath,'$$ORIGIN' -o $@ $(RUNTIME_OBJS) $(LIBIPU_SO) $(ENGINE_LIB) $(LDFLAGS_BASE) -lm
INSTALL_SHLIBS += $(RUNTIME_SO)
INSTALL_ARCHIVES += $(RUNTIME_LIB)
INSTALL_HEADERS += $(wildcard runtime/include/ipu/*.h)
INSTALL_PC += runtime/libipurt.pc.in
INSTALL_PROGRAMS += $(RUNTIME_PROGRAMS)
