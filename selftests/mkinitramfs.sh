#!/bin/sh
# mkinitramfs.sh OUT KO [FILE...] - the test VM's initramfs: busybox-static,
# /init (selftests/init), ipu.ko and FILEs (programs, models) under /ipu/,
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
