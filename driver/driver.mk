# ipu.ko.  Not part of `make all`: it needs Debian's kernel
# headers (linux-headers-amd64, installed by `make deps`).
#
#   make module        build build/kmod/driver/ipu.ko for the VM's kernel
#   make module-check  checkpatch.pl --strict and sparse (C=1) on the driver
#
# The sources are copied into build/kmod/ and built there (M=...), so the
# kernel build's by-products never land in the clone.  `make -C
# /lib/modules/<ver>/build M=$PWD` with the top-level Kbuild works too.
KVER = $(shell driver/kver.sh)
KDIR = /lib/modules/$(KVER)/build
KMOD_DIR := $(BUILD)/kmod
KMOD := $(KMOD_DIR)/driver/ipu.ko
KMOD_SRCS := $(wildcard driver/*.c driver/*.h) driver/Kbuild uapi/linux/ipu.h
KSRC_DIR := $(BUILD)/linux-source

.PHONY: module module-check
module: $(KMOD)

$(KMOD): $(KMOD_SRCS) Kbuild
	@mkdir -p $(KMOD_DIR)/driver $(KMOD_DIR)/uapi/linux
	cp -p $(filter driver/%,$(KMOD_SRCS)) $(KMOD_DIR)/driver/
	cp -p uapi/linux/ipu.h $(KMOD_DIR)/uapi/linux/
	cp -p Kbuild $(KMOD_DIR)/
	$(MAKE) -C $(KDIR) M=$(abspath $(KMOD_DIR)) $(KMOD_FLAGS) modules

# checkpatch.pl and kselftest_harness.h come from Debian's linux-source-X.Y
# of the kernel the VM boots (linux-source-6.12 from bookworm-backports for
# 6.12.*: deps/driver.txt), extracted at build time (nothing of it is
# committed).  Unpacking the 150 MB tarball takes ~30 s, so the few files
# are cached outside the clone, keyed by the package version
# ($(IPU_DRIVER_CACHE), default /var/cache/ipu-driver; build/ if that is
# not writable) and linked here.
IPU_DRIVER_CACHE ?= /var/cache/ipu-driver
# FORCE: the recipe itself sees whether the link is for the kernel that
# kver.sh names now (a cheap test; the file's time changes only when it
# extracts, so nothing depending on it is rebuilt otherwise).  No $(shell)
# here: every make reads this file, with or without kernel headers.
$(KSRC_DIR)/.extracted: FORCE
	@set -e; \
	kver=$$(driver/kver.sh); \
	pkg=linux-source-$$(echo "$$kver" | cut -d. -f1,2); \
	if [ "$$(cat $(KSRC_DIR)/.package 2>/dev/null)" = "$$pkg" ] && \
		[ -f $(KSRC_DIR)/scripts/kernel-doc ]; then exit 0; fi; \
	tarball=$$(ls /usr/src/$$pkg.tar.* 2>/dev/null | head -n 1); \
	[ -n "$$tarball" ] || { echo "no /usr/src/$$pkg.tar.*: run make deps ($$pkg)"; exit 1; }; \
	ver=$$(dpkg-query -W -f='$${Version}' $$pkg 2>/dev/null || echo unknown); \
	cache=$(IPU_DRIVER_CACHE)/$$pkg-$$ver; \
	if ! mkdir -p $(IPU_DRIVER_CACHE) 2>/dev/null || [ ! -w $(IPU_DRIVER_CACHE) ]; then \
		cache=$(abspath $(BUILD))/$$pkg-$$ver; fi; \
	if [ ! -f $$cache/.extracted ] || [ ! -f $$cache/scripts/kernel-doc ]; then \
		echo "extracting checkpatch.pl and kselftest_harness.h from $$tarball"; \
		tmp=$$cache.tmp.$$$$; rm -rf $$tmp; mkdir -p $$tmp; \
		tar -C $$tmp --strip-components=1 -xf $$tarball \
			--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch' '*/scripts/kernel-doc' \
			'*/tools/testing/selftests/kselftest_harness.h' \
			'*/tools/testing/selftests/kselftest.h'; \
		echo $$pkg >$$tmp/.package; \
		touch $$tmp/.extracted; rm -rf $$cache; mv $$tmp $$cache; \
	fi; \
	touch $$cache/.extracted; \
	mkdir -p $(BUILD); rm -rf $(KSRC_DIR); ln -sfn $$cache $(KSRC_DIR)

# "module-check: N passed, N failed" (checkpatch --strict, sparse, kernel-doc
# on every non-static function: driver/kdoc-check.sh): in CHECKS
module-check: $(KSRC_DIR)/.extracted
	@p=0; f=0; \
	if $(KSRC_DIR)/scripts/checkpatch.pl --strict --no-tree --terse --show-types \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f driver/*.c driver/*.h uapi/linux/ipu.h \
		>$(BUILD)/checkpatch.log 2>&1 && ! grep -q '^[a-z].*: [A-Z]*:' $(BUILD)/checkpatch.log; \
	then p=$$((p + 1)); echo "PASS checkpatch --strict"; \
	else f=$$((f + 1)); echo "FAIL checkpatch --strict:"; grep -v '^total' $(BUILD)/checkpatch.log; fi; \
	if driver/kdoc-check.sh $(KSRC_DIR)/scripts/kernel-doc driver/*.c >$(BUILD)/kernel-doc.log 2>&1; \
	then p=$$((p + 1)); echo "PASS kernel-doc on every non-static function (-Wall)"; \
	else f=$$((f + 1)); echo "FAIL kernel-doc:"; cat $(BUILD)/kernel-doc.log; fi; \
	rm -f $(KMOD_DIR)/driver/*.o $(KMOD); \
	if $(MAKE) -s module KMOD_FLAGS="C=2 CF=-D__CHECK_ENDIAN__" >$(BUILD)/sparse.log 2>&1 && \
		! grep -E 'warning|error' $(BUILD)/sparse.log; \
	then p=$$((p + 1)); echo "PASS sparse (make C=2)"; \
	else f=$$((f + 1)); echo "FAIL sparse:"; cat $(BUILD)/sparse.log; fi; \
	echo "module-check: $$p passed, $$f failed"; [ $$f -eq 0 ]

CHECKS += ;make -s module-check;

# uapi/linux/ipu.h must stand alone in C and C++ userspace, without padding
# the compiler would insert: "uapi-check: N passed, N failed" (in CHECKS).
UAPI_PROBE := \#include <linux/ipu.h>\nint main(void) { return sizeof(struct ipu_info_args) == 80 ? 0 : 1; }\n
.PHONY: uapi-check
uapi-check:
	@p=0; f=0; mkdir -p $(BUILD)/uapi-check; \
	for lang in "c -std=c89" "c -std=c11" "c++ -std=c++98" "c++ -std=c++17"; do \
		set -- $$lang; cc=gcc; [ $$1 = c ] || cc=g++; \
		if printf '$(UAPI_PROBE)' | $$cc -x $$1 $$2 -pedantic -Wall -Wextra \
			-Wpadded -Werror -Iuapi -o $(BUILD)/uapi-check/probe - 2>$(BUILD)/uapi-check/log; \
		then p=$$((p + 1)); echo "PASS uapi/linux/ipu.h as $$lang"; \
		else f=$$((f + 1)); echo "FAIL uapi/linux/ipu.h as $$lang"; cat $(BUILD)/uapi-check/log; fi; \
	done; \
	echo "uapi-check: $$p passed, $$f failed"; [ $$f -eq 0 ]

CHECKS += ;make -s uapi-check;
