#!/bin/sh
# kver.sh - the kernel version the VM boots and ipu.ko is built for:
# the one Debian's linux-image-amd64 / linux-headers-amd64 metapackages
# point at (never the host's running kernel).  Prints e.g. 6.1.0-56-amd64.
set -eu
v=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
	sed -n 's/.*linux-headers-\([^ ,]*\).*/\1/p')
if [ -z "$v" ]; then
	# no metapackage: the newest headers tree that has a build directory
	v=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' |
		sort -V | tail -n 1)
fi
if [ -z "$v" ] || [ ! -d "/lib/modules/$v/build" ]; then
	echo "kver.sh: no Debian kernel headers found: run 'make deps' (linux-headers-amd64)" >&2
	exit 1
fi
echo "$v"
