# ioctl-level tools: ipu-info (also the in-process device), ipu-reset, ipu-monitor.
NL_CFLAGS := -I/usr/include/libnl3
NL_LIBS := -lnl-genl-3 -lnl-3
CFLAGS_tools_ += $(NL_CFLAGS) -Itools/lib
# ipu_devices.c asks libdrm for the DRM driver behind a node
$(BUILD)/tools/ipu_devices.o: CPPFLAGS += $(DRM_CFLAGS)
IPU_TOOLS := ipu-info ipu-reset ipu-monitor
IPU_TOOL_PROGRAMS := $(IPU_TOOLS:%=$(BUILD)/bin/%)

$(BUILD)/bin/ipu-reset: $(BUILD)/bin/%: $(BUILD)/tools/%.o $(CLI_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $< $(CLI_LIB) $(LDLIBS_BASE)

# ipu-info lists the in-process device too, through libipu (and the engine
# it runs) as every other tool opens it.
IPU_INFO_OBJS := $(BUILD)/tools/ipu-info.o $(BUILD)/tools/ipu_info_model.o $(BUILD)/tools/ipu_devices.o
$(BUILD)/bin/ipu-info: $(IPU_INFO_OBJS) $(CLI_LIB) $(LIBIPU_LIB) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $^ -ljansson $(LDLIBS_BASE)

$(BUILD)/bin/ipu-monitor: $(BUILD)/tools/ipu-monitor.o $(BUILD)/tools/ipu_top.o $(BUILD)/tools/ipu_devices.o $(CLI_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) $(LDFLAGS) -o $@ $^ $(NL_LIBS) $(LDLIBS_BASE)

PROGRAMS += $(IPU_TOOL_PROGRAMS)
INSTALL_PROGRAMS += $(IPU_TOOL_PROGRAMS)

# What every command-line tool does the same way (tools/lib/cli.h): exit
# codes, --version, checked numbers, names safe to print, output checks.
CLI_LIB := $(BUILD)/libipucli.a
CLI_OBJS := $(BUILD)/tools/lib/cli.o
CFLAGS_tools_lib_ :=
$(CLI_LIB): $(CLI_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^
LIBS += $(CLI_LIB)
