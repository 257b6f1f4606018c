#!/bin/sh
# kver.sh - the kernel version the VM boots and ipu.ko is built for: the
# one Debian's linux-headers-amd64 metapackage points at, which `make deps`
# takes from bookworm-backports (deps/driver.txt; never the host's running
# kernel, and never the host's linux-image-amd64).  Prints e.g.
# 6.12.95+deb12-amd64.  IPU_KVER=<version> selects another kernel whose
# headers and image are installed.
set -eu
v=${IPU_KVER:-}
if [ -z "$v" ]; then
	v=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
		sed -n 's/.*linux-headers-\([^ ,]*\).*/\1/p')
fi
if [ -z "$v" ]; then
	# no metapackage: the newest headers tree that has a build directory
	v=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' |
		sort -V | tail -n 1)
fi
if [ -z "$v" ] || [ ! -d "/lib/modules/$v/build" ]; then
	echo "kver.sh: no Debian kernel headers found${v:+ for $v}: run 'make deps' (linux-headers-amd64 from bookworm-backports)" >&2
	exit 1
fi
echo "$v"
