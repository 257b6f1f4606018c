# The Python package `ipu` (python/): the C extension ipu._ipu over
# libipurt and the compiler, linked with their static (-fPIC) archives so
# the module needs no shared library of ours at run time, plus the Python
# modules.  `make python` builds an importable tree in $(BUILD)/python
# (PYTHONPATH=$(BUILD)/python); python/setup.py (pip install ./python)
# runs this same rule.  Built for Debian's python3 (python3-dev).
PYTHON ?= /usr/bin/python3
PY_INCLUDE := $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_EXT_SUFFIX := $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
PY_DIR := $(BUILD)/python
PY_MODULE := $(PY_DIR)/ipu/_ipu$(PY_EXT_SUFFIX)
PY_SRCS := $(sort $(wildcard python/src/*.c))
PY_OBJS := $(PY_SRCS:%.c=$(BUILD)/%.o)
PY_FILES := $(sort $(wildcard python/ipu/*.py python/ipu/*.pyi python/ipu/py.typed))
PY_TREE := $(PY_FILES:python/%=$(PY_DIR)/%)

# Python's headers break -Wstrict-prototypes/-Wmissing-prototypes nowhere,
# but the module exports one symbol only: PyInit__ipu.
CFLAGS_python_src_ := -I$(PY_INCLUDE) -Icompiler/cli -Icompiler -I$(COMPILER_GEN) -Itools/lib \
	-fvisibility=hidden

$(PY_OBJS): | $(COMPILER_PB_H)
$(PY_OBJS): python/src/ipu_py.h

$(PY_MODULE): $(PY_OBJS) $(COMPILER_LIB) $(COMPILER_DEPLIBS) $(CLI_LIB)
	@test -n "$(PY_INCLUDE)" || { echo "$(PYTHON) not found: make deps"; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS_BASE) -Wl,--exclude-libs,ALL -o $@ $(PY_OBJS) \
		$(COMPILER_LINK) $(LDLIBS_BASE)

$(PY_DIR)/ipu/%: python/ipu/%
	@mkdir -p $(dir $@)
	cp $< $@

.PHONY: python
python: $(PY_MODULE) $(PY_TREE)
all: python

# make install: the package into PREFIX's site folder for Debian's python3
# (/usr/local/lib/python3.X/dist-packages with the default PREFIX).
PY_SITE := $(shell $(PYTHON) -c 'import sys; print("lib/python%d.%d/dist-packages" % sys.version_info[:2])' 2>/dev/null)
.PHONY: install-python
install-python: python
	install -d '$(INSTALL_ROOT)/$(PY_SITE)/ipu'
	install -m 0644 $(PY_TREE) '$(INSTALL_ROOT)/$(PY_SITE)/ipu/'
	install -m 0755 $(PY_MODULE) '$(INSTALL_ROOT)/$(PY_SITE)/ipu/'
install: install-python

# Runner.execute's overhead over the C runtime (bench/bench_python.py).
.PHONY: bench-python
bench-python: python $(BUILD)/bench/bench_runner $(BUILD)/tests/modelrunner/gen_models
	$(PYTHON) bench/bench_python.py $(BUILD)
bench: bench-python
