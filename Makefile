# Top-level Makefile for the userspace parts of the IPU stack.
#
#   make deps     install every Debian package the build and tests need (root)
#   make          build libraries, tools and tests into build/
#   make demo     the README's main job
#   make check    every test (ASan+UBSan build, fuzzers, valgrind, ...),
#                 ending with one "N passed, N failed" line
#   make fuzz     longer fuzzing runs (random seeds)
#   make fresh-check  the README's test command in a fresh clone, with the
#                 machine's caches and $HOME set aside (scripts/fresh-check)
#   make coverage line and branch coverage per component
#   make bench    benchmarks (bench/)
#
# Each component lists its sources, libraries, programs and tests in its own
# fragment (*/*.mk) so that a reader finds one component's build in one place.
# Objects go to $(BUILD) (build/ by default, build/san for the sanitizer run).

BUILD ?= build
CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif
SANITIZE ?=
OPT ?= -O2

CPPFLAGS_BASE := -D_GNU_SOURCE -Iutil/include -Iengine/include -Ilibipu/include -Iruntime/include \
	-Icompiler/include -Iuapi
# -fPIC: the same objects make the static archives and the shared libraries
# (make install); -fno-semantic-interposition keeps calls inside a library
# direct, so PIC costs the hot loops nothing.
CFLAGS_BASE := -std=c11 -g $(OPT) -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wimplicit-fallthrough \
	-Wno-missing-field-initializers -pthread -fno-strict-aliasing -fPIC -fno-semantic-interposition
LDFLAGS_BASE := -pthread
LDLIBS_BASE := -lm

ifeq ($(SANITIZE),1)
CFLAGS_BASE += -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
LDFLAGS_BASE += -fsanitize=address,undefined
endif
ifeq ($(COVERAGE),1)
CFLAGS_BASE += --coverage
LDFLAGS_BASE += --coverage
endif
ifeq ($(SANITIZE),thread)
CFLAGS_BASE += -fsanitize=thread
LDFLAGS_BASE += -fsanitize=thread
endif

ALL_CPPFLAGS = $(CPPFLAGS_BASE) $(CPPFLAGS)
ALL_CFLAGS = $(CFLAGS_BASE) $(CFLAGS)

# Filled in by the fragments.
LIBS :=
PROGRAMS :=
TESTS :=
CHECKS :=
# make install: what each component installs (shared libraries with their
# soname and version script, public headers, pkg-config files, programs).
INSTALL_SHLIBS :=
INSTALL_ARCHIVES :=
INSTALL_HEADERS :=
INSTALL_PC :=
INSTALL_PROGRAMS :=
PREFIX ?= /usr/local
DESTDIR ?=
SOVERSION := 0
LIBVERSION := 0.3.0

.PHONY: all deps demo check check-fast coverage fresh-check fuzz bench clean install
all:

# Libraries and objects that fragments link against, defined before any
# fragment is read: a fragment included (alphabetically) before the one that
# builds a library would otherwise see an empty variable in its rule's
# prerequisites and link before the library exists (found by a fresh-clone
# `make demo`).  The fragments that build them define the same values.
ENGINE_LIB := $(BUILD)/libipuengine.a
UTIL_SRCS := $(sort $(wildcard util/*.c))
UTIL_OBJS := $(UTIL_SRCS:%.c=$(BUILD)/%.o)
GRAPH_LIB := $(BUILD)/libipugraph.a
LIBIPU_LIB := $(BUILD)/libipu.a
RUNTIME_LIB := $(BUILD)/libipurt.a
RUNTIME_DEPLIBS := $(LIBIPU_LIB) $(ENGINE_LIB)
COMPILER_LIB := $(BUILD)/libipucompiler.a
CLI_LIB := $(BUILD)/libipucli.a
MR_MODELS_OBJ := $(BUILD)/tests/modelrunner/rt_models.o

# Prerequisites written $$(VAR) are expanded after every fragment is read.
.SECONDEXPANSION:
include $(sort $(wildcard */*.mk */*/*.mk))

all: $(LIBS) $(PROGRAMS) $(TESTS)

# Objects depend on the flags they were built with: a change of CFLAGS (a
# new warning, -fPIC, a sanitizer) rebuilds them instead of mixing old and
# new objects in one library.  The stamp is remade only when the flags it
# holds differ from today's (compared while the Makefile is read): a stamp
# remade on every run would make `make -n install` list every object of a
# built tree as a recompile.  A compiler launcher (ccache) does not change
# an object, so it is left out: `make CC="ccache gcc"` then `make install`
# recompiles nothing.
FLAGS_STAMP := $(BUILD)/.flags
FLAGS_NOW = $(filter-out ccache,$(CC)) $(ALL_CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS_BASE)
ifneq ($(file <$(FLAGS_STAMP)),$(strip $(FLAGS_NOW)))
$(FLAGS_STAMP): FORCE
endif
$(FLAGS_STAMP):
	@mkdir -p $(dir $@)
	@printf '%s\n' '$(strip $(FLAGS_NOW))' >$@
.PHONY: FORCE
FORCE:

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(if $(filter tests/% bench/% selftests/%,$<),-Itests/lib) $(ALL_CFLAGS) $(CFLAGS_$(subst /,_,$(dir $<))) -MMD -MP -c -o $@ $<

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

deps:
	scripts/install-deps

# The test command: the plain build's tests, the sanitizer build's tests and
# every extra check a fragment registered (fuzzing, valgrind, ...).
check:
	scripts/check

san-tests: $(TESTS)

fresh-check:
	scripts/fresh-check

coverage:
	scripts/coverage

# make install [PREFIX=/usr/local] [DESTDIR=]: libraries (shared, with
# sonames and exported-symbol lists, and static), public headers,
# pkg-config files, the command-line tools and their man pages.
INSTALL_ROOT = $(DESTDIR)$(PREFIX)
install: $(INSTALL_SHLIBS) $(INSTALL_ARCHIVES) $(INSTALL_PROGRAMS)
	scripts/install '$(INSTALL_ROOT)' '$(PREFIX)' '$(LIBVERSION)' '$(SOVERSION)' \
		'$(INSTALL_SHLIBS)' '$(INSTALL_ARCHIVES)' '$(INSTALL_HEADERS)' '$(INSTALL_PC)' \
		'$(INSTALL_PROGRAMS)'

# The build tree as a prefix, so that a program builds against it exactly
# as against an installed one (Documentation/runtime/model-runtime.md,
# "Building a program"):
#   PKG_CONFIG_PATH=build/pkgconfig cc hello.c $(pkg-config --cflags --libs libipurt)
# $(BUILD)/include/ipu/ holds the public headers (the four source folders'
# include/ipu/ in one), $(BUILD)/libNAME.so.0 and .so link to the shared
# libraries beside the archives, and $(BUILD)/pkgconfig/*.pc point into
# the tree with an rpath, so the program also runs from where it was built.
DEV_INCLUDE := $(BUILD)/include/ipu
DEV_HEADERS := $(addprefix $(DEV_INCLUDE)/,$(notdir $(INSTALL_HEADERS)))
DEV_LINKS := $(foreach so,$(INSTALL_SHLIBS),$(basename $(basename $(basename $(so)))) \
	$(basename $(basename $(so))))
DEV_PC := $(addprefix $(BUILD)/pkgconfig/,$(notdir $(INSTALL_PC:.in=)))
DEV_ROOT = $(abspath $(BUILD))
define dev_header
$(DEV_INCLUDE)/$(notdir $(1)): $(1)
	@mkdir -p $$(dir $$@)
	cp $$< $$@
endef
$(foreach h,$(INSTALL_HEADERS),$(eval $(call dev_header,$(h))))
# libipu.so.0 -> libipu.so.0.3.0, libipu.so -> libipu.so.0
$(BUILD)/%.so.$(SOVERSION): $(BUILD)/%.so.$(LIBVERSION)
	ln -sfn $(notdir $<) $@
$(BUILD)/%.so: $(BUILD)/%.so.$(SOVERSION)
	ln -sfn $(notdir $<) $@
define dev_pc
$(BUILD)/pkgconfig/$(notdir $(1:.in=)): $(1) scripts/install-pc
	@mkdir -p $$(dir $$@)
	scripts/install-pc $$< $$@ '$$(DEV_ROOT)' '$$$${prefix}' '$$(LIBVERSION)' rpath
endef
$(foreach pc,$(INSTALL_PC),$(eval $(call dev_pc,$(pc))))
.PHONY: devel
devel: $(INSTALL_SHLIBS) $(DEV_LINKS) $(DEV_HEADERS) $(DEV_PC)
all: devel

check-fast: all
	scripts/run-tests $(TESTS)

print-%:
	@echo '$($*)'

clean:
	rm -rf build

# The README's main job: build the MLP (graph builder, weights over 64
# tiles), check it against float64, save it as an .ipuef model and run that
# through ipu-run on the in-process device.
demo: $(BUILD)/bin/mlp-example $(BUILD)/bin/ipu-run $(BUILD)/bin/ipuef-dump
	@mkdir -p $(BUILD)/models
	$(BUILD)/bin/mlp-example --check --iterations 100 --save $(BUILD)/models/mlp.ipuef
	$(BUILD)/bin/ipuef-dump $(BUILD)/models/mlp.ipuef
	$(BUILD)/bin/ipu-run $(BUILD)/models/mlp.ipuef --iterations 200
