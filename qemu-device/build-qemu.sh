#!/bin/bash
# build-qemu.sh - build qemu-system-x86_64 with the `ipu` device from
# Debian's QEMU 7.2 source package.  Run by `make qemu`.
#
#   qemu-device/build-qemu.sh           build if needed, link build/qemu/
#   qemu-device/build-qemu.sh --path    print the binary's cached path
#   qemu-device/build-qemu.sh --key     print the cache key
#   IPU_QEMU_ASAN=1 qemu-device/build-qemu.sh   the same with ASan+UBSan,
#                                       linked as build/qemu-asan/
#
# Nothing of QEMU lives in the clone.  Everything is under $IPU_QEMU_CACHE
# (default /var/cache/ipu-qemu):
#   dl/                 the source package (.dsc, .orig.tar.xz, .debian.tar.xz)
#   tree-<ver>/         unpacked with dpkg-source -x (Debian's patches applied),
#                       plus hw/misc/ipu/ (a copy of our device + engine)
#   build-<ver>/        the meson/ninja build tree (kept: rebuilds are incremental)
#   bin/<key>/          the finished qemu-system-x86_64 and build-info.txt
#                       (bin-asan/<key>/ for IPU_QEMU_ASAN=1)
# <key> is a hash of the QEMU source version, the configure flags, this
# script and every device and engine source file; a warm cache does nothing.
# Firmware comes from Debian's seabios and qemu-system-data packages: run
# with -L /usr/share/seabios -L /usr/share/qemu (see QEMU_FW in qemu.mk).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${IPU_QEMU_CACHE:-/var/cache/ipu-qemu}
JOBS=${QEMU_JOBS:-2}
# The Debian source version we build (bookworm); any other 7.2 revision the
# archive offers is used if this one has gone.
QEMU_DEB_VERSION=1:7.2+dfsg-7+deb12u18
CONFIGURE_FLAGS=(
	--target-list=x86_64-softmmu
	--without-default-features
	--disable-docs --disable-tools --disable-user --disable-guest-agent
	--disable-install-blobs --disable-debug-info --disable-werror
	--disable-kvm --disable-xen
	--enable-slirp --enable-fdt=system --enable-trace-backends=log
)
# IPU_QEMU_ASAN=1: a separate AddressSanitizer/UBSan build (own source and
# build trees, lock and key; linked as build/qemu-asan/) for running the
# qtest suite against: IPU_QEMU=build/qemu-asan/qemu-system-x86_64.
VARIANT=""
if [ "${IPU_QEMU_ASAN:-0}" = 1 ]; then
	CONFIGURE_FLAGS=("${CONFIGURE_FLAGS[@]/--disable-debug-info/--enable-debug-info}" --enable-sanitizers)
	VARIANT=-asan
fi

cd "$ROOT"
dev_files() {
	ls qemu-device/*.c qemu-device/*.h qemu-device/meson.build qemu-device/Kconfig \
		qemu-device/trace-events
}
engine_files() {
	ls engine/*.c engine/*.h engine/include/ipu/*.h \
		engine/codelets/*.c engine/codelets/*.h 2>/dev/null || true
	# the shared utility the engine stands on (error table, CRC, half floats),
	# copied to hw/misc/ipu/util/
	ls util/*.c util/*.h util/include/ipu/*.h 2>/dev/null || true
}

# A snapshot of the sources, taken before waiting for the cache's lock: the
# key and the build both come from it, so a source edited while another
# build holds the lock can never be built under a key that does not hash it.
FILES=$(dev_files; engine_files)
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
for f in $FILES qemu-device/build-qemu.sh; do
	mkdir -p "$STAGE/${f%/*}"
	cp "$f" "$STAGE/$f"
done

cache_key() {
	{
		echo "$QEMU_DEB_VERSION"
		echo "${CONFIGURE_FLAGS[*]}"
		cd "$STAGE"
		sha256sum qemu-device/build-qemu.sh
		for f in $FILES; do
			sha256sum "$f"
		done
	} | sha256sum | cut -c1-16
}

KEY=$(cache_key)
OUT=$CACHE/bin$VARIANT/$KEY
BIN=$OUT/qemu-system-x86_64

link_result() {
	mkdir -p "$ROOT/build/qemu$VARIANT"
	ln -sfn "$BIN" "$ROOT/build/qemu$VARIANT/qemu-system-x86_64"
}

case "${1:-}" in
--path) echo "$BIN"; exit 0 ;;
--key) echo "$KEY"; exit 0 ;;
"") ;;
*) echo "usage: $0 [--path|--key]" >&2; exit 2 ;;
esac

if [ -x "$BIN" ]; then
	link_result
	exit 0
fi

# The build itself is one function, read whole before it runs (the script
# may be edited meanwhile).
build() {
	mkdir -p "$CACHE"
	exec 9>"$CACHE/.lock$VARIANT"
	flock 9
	if [ -x "$BIN" ]; then
		link_result
		exit 0
	fi
	start=$(date +%s)
	log() { echo "build-qemu: $*"; }

	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo

	# 1. build dependencies (deps/qemu.txt)
	pkgs=$(sed 's/#.*//' deps/qemu.txt | tr -s ' \n' '\n' | grep -v '^$')
	missing=""
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		log "installing:$missing"
		$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends $missing
	fi

	# 2. the source package
	SRCLIST=/etc/apt/sources.list.d/ipu-qemu-src.sources
	srcvers=$(apt-cache showsrc qemu 2>/dev/null | sed -n 's/^Version: //p' || true)
	if ! echo "$srcvers" | grep '^1:7\.2' >/dev/null; then
		if [ ! -e "$SRCLIST" ]; then
			log "adding deb-src entries ($SRCLIST)"
			# mirror the binary archive entries already configured
			{
				for f in /etc/apt/sources.list.d/*.sources; do
					[ -f "$f" ] || continue
					awk 'BEGIN { RS = ""; ORS = "\n\n" }
					     /(^|\n)Types: deb(\n|$)/ { sub(/Types: deb/, "Types: deb-src"); print }' "$f"
				done
				if [ -f /etc/apt/sources.list ]; then
					sed -n 's/^deb \(.*\)/\1/p' /etc/apt/sources.list |
						while read -r uri suite comps; do
							printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n\n' "$uri" "$suite" "$comps"
						done
				fi
			} | $SUDO tee "$SRCLIST.tmp" >/dev/null
			if [ ! -s "$SRCLIST.tmp" ]; then
				printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
					$SUDO tee "$SRCLIST.tmp" >/dev/null
			fi
			$SUDO mv "$SRCLIST.tmp" "$SRCLIST"
		fi
		$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
		srcvers=$(apt-cache showsrc qemu 2>/dev/null | sed -n 's/^Version: //p' || true)
	fi
	ver=$QEMU_DEB_VERSION
	if ! echo "$srcvers" | grep -xF "$ver" >/dev/null; then
		ver=$(echo "$srcvers" | grep '^1:7\.2' | sort -V | tail -n 1 || true)
		if [ -z "$ver" ]; then
			log "the archive offers no QEMU 7.2 source (apt-cache showsrc qemu: ${srcvers:-nothing}); check the deb-src entries in $SRCLIST"
			exit 1
		fi
		log "source $QEMU_DEB_VERSION not in the archive, using $ver"
	fi
	uver=${ver#*:}
	TREE=$CACHE/tree-$uver$VARIANT
	BLD=$CACHE/build-$uver$VARIANT
	DSC=$CACHE/dl/qemu_$uver.dsc
	if [ ! -f "$TREE/.unpacked" ]; then
		if [ ! -f "$DSC" ]; then
			log "apt-get source qemu=$ver"
			mkdir -p "$CACHE/dl"
			chmod 755 "$CACHE/dl"
			(cd "$CACHE/dl" && apt-get source --download-only -qq "qemu=$ver")
		fi
		rm -rf "$TREE"
		log "dpkg-source -x $(basename "$DSC")"
		dpkg-source -q -x "$DSC" "$TREE" >/dev/null
		rm -f "$CACHE"/qemu_*.orig.tar.* # dpkg-source leaves a copy beside the tree
		touch "$TREE/.unpacked"
	fi

	# 3. our device: copy into hw/misc/ipu/ (only changed files, so that ninja
	# rebuilds only what changed) with its meson.build, Kconfig and
	# trace-events; hook the directory into QEMU's
	DST=$TREE/hw/misc/ipu
	mkdir -p "$DST/engine/codelets" "$DST/engine/include/ipu" "$DST/util/include/ipu"
	want=$STAGE/.want
	for f in $FILES; do
		rel=${f#qemu-device/}
		echo "$rel" >>"$want"
		if ! cmp -s "$STAGE/$f" "$DST/$rel"; then
			cp "$STAGE/$f" "$DST/$rel"
		fi
	done
	(cd "$DST" && find . -type f | sed 's|^\./||') | sort | comm -23 - <(sort "$want") |
		while read -r stale; do rm -f "$DST/$stale"; done
	# every C file must be built: qemu-device/meson.build lists them
	for f in $FILES; do
		case $f in
		*.c) grep -q "'${f#qemu-device/}'" "$STAGE/qemu-device/meson.build" ||
			{ log "qemu-device/meson.build does not list ${f#qemu-device/}"; exit 1; } ;;
		esac
	done
	# hook the directory into QEMU's build, its Kconfig and its trace events
	grep -q "subdir('ipu')" "$TREE/hw/misc/meson.build" ||
		printf "\n# IPU project device\nsubdir('ipu')\n" >>"$TREE/hw/misc/meson.build"
	sed -i '/^config IPU_PCI$/,+3d' "$TREE/hw/misc/Kconfig"
	grep -q '^source ipu/Kconfig' "$TREE/hw/misc/Kconfig" ||
		printf '\nsource ipu/Kconfig\n' >>"$TREE/hw/misc/Kconfig"
	grep -q "'hw/misc/ipu'," "$TREE/meson.build" ||
		sed -i "s|^    'hw/misc',$|    'hw/misc',\n    'hw/misc/ipu',|" "$TREE/meson.build"
	grep -q "'hw/misc/ipu'," "$TREE/meson.build" ||
		{ log "cannot add hw/misc/ipu to QEMU's trace_events_subdirs"; exit 1; }

	# 4. configure (once per flag set), then an incremental ninja build
	flags="${CONFIGURE_FLAGS[*]}"
	if [ ! -f "$BLD/build.ninja" ] || [ "$(cat "$BLD/.ipu-flags" 2>/dev/null)" != "$flags" ]; then
		rm -rf "$BLD"
		mkdir -p "$BLD"
		log "configure $flags"
		(cd "$BLD" && "$TREE/configure" --meson=meson "${CONFIGURE_FLAGS[@]}" >configure.log 2>&1) ||
			{ tail -n 30 "$BLD/configure.log"; exit 1; }
		echo "$flags" >"$BLD/.ipu-flags"
	fi
	log "ninja -j$JOBS qemu-system-x86_64 in $BLD"
	if ! ninja -C "$BLD" -j"$JOBS" qemu-system-x86_64 >"$BLD/ninja.log" 2>&1; then
		grep -E 'error|Error|ERROR' "$BLD/ninja.log" | head -n 40 || true
		tail -n 20 "$BLD/ninja.log"
		exit 1
	fi
	grep -E 'hw/misc/ipu/.*warning' "$BLD/ninja.log" | head -n 20 || true

	mkdir -p "$OUT.tmp"
	cp "$BLD/qemu-system-x86_64" "$OUT.tmp/"
	{
		echo "key: $KEY"
		echo "qemu source: qemu $ver (Debian, dpkg-source -x)"
		echo "configure: $flags"
		echo "built: $(date -u +%FT%TZ) in $(($(date +%s) - start)) s"
	} >"$OUT.tmp/build-info.txt"
	rm -rf "$OUT"
	mv "$OUT.tmp" "$OUT"
	# keep the 8 most recent binaries (each source change makes a new key)
	(cd "$CACHE/bin$VARIANT" && ls -1t | tail -n +9 | while read -r old; do rm -rf "./$old"; done)
	link_result
	log "built $BIN in $(($(date +%s) - start)) s"
}; build; exit $?
