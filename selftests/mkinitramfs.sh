#!/bin/sh
# mkinitramfs.sh OUT KO [FILE...] - the test VM's initramfs: busybox-static,
# /init (selftests/init), ipu.ko, the kernel modules it needs (the DRM core
# and its shmem helpers, in load order in /ipu/modules.order) and FILEs
# (programs, models) under /ipu/,
# programs under /ipu/bin when they are in a bin/ directory.  gzip'd newc cpio.
set -eu
out=$1
ko=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/sbin" "$stage/proc" "$stage/sys" "$stage/dev" \
	"$stage/tmp" "$stage/ipu/bin" "$stage/ipu/data" "$stage/root"
cp /bin/busybox "$stage/bin/busybox"
for app in $("$stage/bin/busybox" --list); do
	[ "$app" = busybox ] || ln -s busybox "$stage/bin/$app"
done
cp "$here/init" "$stage/init"
chmod +x "$stage/init"
cp "$ko" "$stage/ipu/ipu.ko"
# ipu.ko's dependencies from the VM kernel's own modules, in the order
# modprobe would load them; Debian ships them xz-compressed and busybox
# insmod reads plain ELF
kver=$("$here/../driver/kver.sh")
# (empty for a kernel with DRM built in: the lockdep kernel of scripts/vm-kernel)
: >"$stage/ipu/modules.order"
for dep in $(modinfo -F depends "$ko" | tr ',' ' '); do
	modprobe -S "$kver" --show-depends "$dep" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r m; do
	name=$(basename "$m" | sed 's/\.ko\(\.xz\|\.zst\|\.gz\)\?$//')
	case "$m" in
	*.xz) xz -dc "$m" ;;
	*.zst) zstd -dc "$m" ;;
	*.gz) gzip -dc "$m" ;;
	*) cat "$m" ;;
	esac >"$stage/ipu/$name.ko"
	echo "$name" >>"$stage/ipu/modules.order"
done
for f in "$@"; do
	case "$f" in
	*/bin/*)
		cp "$f" "$stage/ipu/bin/"
		# no debug info in the image: it unpacks faster
		strip --strip-unneeded "$stage/ipu/bin/$(basename "$f")" 2>/dev/null || true
		;;
	*/run-selftests | *.sh) cp "$f" "$stage/ipu/" ;;
	*) cp "$f" "$stage/ipu/data/" ;;
	esac
done
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
