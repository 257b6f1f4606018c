# The compiler (ipu-compile): ONNX import through protobuf-c code generated
# at build time from Debian's onnx.proto, the IR, shape inference, the
# reference evaluator, passes, CLI/YAML; compiler/ops/ is the operator
# registry they share.  compiler/graph/ (the graph
# builder) has its own fragment.
ONNX_PROTO ?= $(firstword $(wildcard /usr/include/onnx/onnx.proto) \
	$(shell dpkg -L libonnx-dev 2>/dev/null | grep '/onnx\.proto$$'))
COMPILER_GEN := $(BUILD)/gen
COMPILER_PB_C := $(COMPILER_GEN)/onnx/onnx.pb-c.c
COMPILER_PB_H := $(COMPILER_GEN)/onnx/onnx.pb-c.h
COMPILER_PB_O := $(COMPILER_GEN)/onnx/onnx.pb-c.o

COMPILER_DIRS := compiler/ops compiler/ir compiler/onnx compiler/eval compiler/passes compiler/lower compiler/api compiler/cli \
	compiler/report compiler/calib compiler/partition compiler/custom
COMPILER_SRCS := $(filter-out compiler/cli/main.c, \
	$(sort $(wildcard $(addsuffix /*.c,$(COMPILER_DIRS)))))
COMPILER_OBJS := $(COMPILER_SRCS:%.c=$(BUILD)/%.o)
COMPILER_LIB := $(BUILD)/libipucompiler.a
COMPILER_LDLIBS := -lprotobuf-c -lyaml -ljansson -lzip -lm
# The lowering uses the graph builder, the .ipuef writer and (--check) the
# in-process device; those fragments are included after this one, hence
# the literal paths.
COMPILER_DEPLIBS := $(BUILD)/libipugraph.a $(BUILD)/libipurt.a $(BUILD)/libipu.a $(BUILD)/libipuengine.a $(BUILD)/libipucli.a
COMPILER_LINK = -Wl,--start-group $(COMPILER_LIB) $(COMPILER_DEPLIBS) $(CLI_LIB) -Wl,--end-group $(COMPILER_LDLIBS)
IPU_COMPILE := $(BUILD)/bin/ipu-compile

# The generated header lives under $(BUILD)/gen; every compiler directory
# may include it.
# Messages are truncated on purpose when too long.
COMPILER_CPPFLAGS := -I$(COMPILER_GEN) -Icompiler -Wno-format-truncation
CFLAGS_compiler_ops_ := $(COMPILER_CPPFLAGS)
CFLAGS_compiler_ir_ := $(COMPILER_CPPFLAGS)
CFLAGS_compiler_onnx_ := $(COMPILER_CPPFLAGS)
CFLAGS_compiler_eval_ := $(COMPILER_CPPFLAGS)
CFLAGS_compiler_passes_ := $(COMPILER_CPPFLAGS)
CFLAGS_compiler_cli_ := $(COMPILER_CPPFLAGS) -Itools/lib
CFLAGS_compiler_api_ := $(COMPILER_CPPFLAGS) -Itools/lib
CFLAGS_compiler_lower_ := $(COMPILER_CPPFLAGS)
CFLAGS_compiler_report_ := $(COMPILER_CPPFLAGS)
CFLAGS_compiler_calib_ := $(COMPILER_CPPFLAGS)
CFLAGS_compiler_partition_ := $(COMPILER_CPPFLAGS)
CFLAGS_compiler_custom_ := $(COMPILER_CPPFLAGS)

# The --report page (HTML, CSS, JavaScript in one file) as C strings.
COMPILER_PAGE_C := $(COMPILER_GEN)/report/report_page.c
COMPILER_PAGE_O := $(COMPILER_GEN)/report/report_page.o
$(COMPILER_PAGE_C): compiler/report/report_page.html compiler/report/gen_page.py
	@mkdir -p $(dir $@)
	/usr/bin/python3 compiler/report/gen_page.py $< $@.tmp && mv $@.tmp $@
$(COMPILER_PAGE_O): $(COMPILER_PAGE_C)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(COMPILER_PB_C) $(COMPILER_PB_H) &: $(ONNX_PROTO)
	@test -n "$(ONNX_PROTO)" || { echo "onnx.proto not found: install libonnx-dev (make deps)"; exit 1; }
	@mkdir -p $(COMPILER_GEN)/onnx
	cp $(ONNX_PROTO) $(COMPILER_GEN)/onnx/onnx.proto
	cd $(COMPILER_GEN) && protoc-c --c_out=. onnx/onnx.proto

# Attribute types of every ONNX operator, from python3-onnx's schemas.
COMPILER_SCHEMA_C := $(COMPILER_GEN)/onnx/onnx_attr_schema.c
COMPILER_SCHEMA_O := $(COMPILER_GEN)/onnx/onnx_attr_schema.o
$(COMPILER_SCHEMA_C): compiler/onnx/gen_attr_schema.py
	@mkdir -p $(dir $@)
	/usr/bin/python3 compiler/onnx/gen_attr_schema.py $@.tmp && mv $@.tmp $@
$(COMPILER_SCHEMA_O): $(COMPILER_SCHEMA_C) compiler/onnx/onnx_attr_schema.h
	$(CC) $(ALL_CPPFLAGS) -Icompiler/onnx $(ALL_CFLAGS) -c -o $@ $<

# Generated code: not ours to warn about.
$(COMPILER_PB_O): $(COMPILER_PB_C) $(COMPILER_PB_H)
	$(CC) $(ALL_CPPFLAGS) -I$(COMPILER_GEN) $(filter-out -Werror -Wmissing-prototypes -Wshadow,$(ALL_CFLAGS)) -w -c -o $@ $<

$(COMPILER_OBJS): $(COMPILER_PB_H)

$(COMPILER_LIB): $(COMPILER_OBJS) $(COMPILER_PB_O) $(COMPILER_SCHEMA_O) $(COMPILER_PAGE_O)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(IPU_COMPILE): $(BUILD)/compiler/cli/main.o $(COMPILER_LIB) $(COMPILER_DEPLIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_BASE) -o $@ $< $(COMPILER_LINK) $(LDLIBS_BASE)

LIBS += $(COMPILER_LIB)
PROGRAMS += $(IPU_COMPILE)
INSTALL_PROGRAMS += $(IPU_COMPILE)

# libipucompiler.so: the compiler as a library (ipu/compiler.h): the
# pipeline's objects (not the command line's), the graph builder and the
# tools' output checks, on libipurt.so (the .ipuef writer) and libipu.so
# (--check's in-process device), found beside it ($ORIGIN).  It exports
# only ipu/compiler.h's functions (compiler/libipucompiler.map).
COMPILER_SO := $(BUILD)/libipucompiler.so.$(LIBVERSION)
COMPILER_SO_OBJS = $(filter-out $(BUILD)/compiler/cli/%,$(COMPILER_OBJS)) $(COMPILER_PB_O) \
	$(COMPILER_SCHEMA_O) $(COMPILER_PAGE_O) $(GRAPH_SRCS:%.c=$(BUILD)/%.o) $(CLI_OBJS)
$(COMPILER_SO): $$(COMPILER_SO_OBJS) $$(RUNTIME_SO) $$(LIBIPU_SO) $$(ENGINE_LIB) compiler/libipucompiler.map compiler/compiler.mk
	$(CC) -shared -Wl,-soname,libipucompiler.so.$(SOVERSION) -Wl,--version-script=compiler/libipucompiler.map \
		-Wl,--no-undefined -Wl,-rpath,'$$ORIGIN' -o $@ $(COMPILER_SO_OBJS) $(RUNTIME_SO) $(LIBIPU_SO) \
		$(ENGINE_LIB) $(LDFLAGS_BASE) $(COMPILER_LDLIBS)
INSTALL_SHLIBS += $(COMPILER_SO)
INSTALL_HEADERS += compiler/include/ipu/compiler.h
INSTALL_PC += compiler/libipucompiler.pc.in
