#!/bin/bash
# build-qemu.sh - build qemu-system-x86_64 with the `ipu` device from
# Debian's QEMU source package of bookworm-backports (QEMU 10; the version
# is the one the archive offers, never named here).  Run by `make qemu`.
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
#   tree-<ver>/         unpacked with dpkg-source -x (Debian's patches applied)
#                       or, when the archive has only the .orig.tar.xz of that
#                       version, from it alone (checked against the archive's
#                       SHA-256); plus hw/misc/ipu/ (a copy of our device +
#                       engine) and configs/devices/x86_64-softmmu/ipu.mak
#   build-<ver>/        the meson/ninja build tree (kept: rebuilds are incremental)
#   bin/<key>/          the finished qemu-system-x86_64 and build-info.txt
#                       (bin-asan/<key>/ for IPU_QEMU_ASAN=1)
# <key> is a hash of the QEMU source version, the configure flags, this
# script and every device and engine source file; a warm cache does nothing.
# IPU_QEMU_SUITE names the archive suite to take the source from (default
# bookworm-backports; its deb-src entry is added from the machine's own
# deb entries when missing).
# Firmware comes from Debian's seabios and qemu-system-data packages: run
# with -L /usr/share/seabios -L /usr/share/qemu (see QEMU_FW in qemu.mk).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${IPU_QEMU_CACHE:-/var/cache/ipu-qemu}
JOBS=${QEMU_JOBS:-2}
SUITE=${IPU_QEMU_SUITE:-bookworm-backports}
# As small as the project needs: one target, TCG only, the devices of
# qemu-device/devices-x86_64.mak, no network backend (the VM runs with
# -nic none), no docs, tools or firmware.  Debian's python3 (its meson and
# pycotap from bookworm-backports, deps/qemu.txt), never a python3 found
# first on PATH; nothing downloaded (the +ds source ships its subprojects).
CONFIGURE_FLAGS=(
	--target-list=x86_64-softmmu
	--without-default-features
	--without-default-devices --with-devices-x86_64=ipu
	--disable-docs --disable-tools --disable-user --disable-guest-agent
	--disable-install-blobs --disable-debug-info --disable-werror
	--disable-kvm --disable-xen --disable-rust --disable-download
	--python=/usr/bin/python3 --enable-trace-backends=log
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
# What the archive offers as the source of qemu in $SUITE: lines of
# 'URI' NAME SIZE SHA256:HASH (.dsc, .orig.tar.xz, .debian.tar.xz), read from
# the local package lists (no network).
source_uris() {
	apt-get source --print-uris -qq -t "$SUITE" qemu 2>/dev/null | grep "^'" || true
}
# the Debian version (without epoch) of that source, from its .dsc's name
source_version() {
	echo "$1" | sed -n "s/^'[^']*' qemu_\(.*\)\.dsc .*/\1/p" | head -n 1
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
DEVICES=qemu-device/devices-x86_64.mak
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
for f in $FILES $DEVICES qemu-device/build-qemu.sh; do
	mkdir -p "$STAGE/${f%/*}"
	cp "$f" "$STAGE/$f"
done

URIS=$(source_uris)
QEMU_VERSION=$(source_version "$URIS")
cache_key() {
	{
		echo "${QEMU_VERSION:-none}"
		echo "${CONFIGURE_FLAGS[*]}"
		cd "$STAGE"
		sha256sum qemu-device/build-qemu.sh
		for f in $FILES $DEVICES; do
			sha256sum "$f"
		done
	} | sha256sum | cut -c1-16
}

set_key() {
	KEY=$(cache_key)
	OUT=$CACHE/bin$VARIANT/$KEY
	BIN=$OUT/qemu-system-x86_64
}
set_key

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

	# 1. build dependencies (deps/qemu.txt; meson, pycotap and the firmware
	# data from bookworm-backports)
	"$ROOT/scripts/install-deps" deps/qemu.txt

	# 2. the source package
	SRCLIST=/etc/apt/sources.list.d/ipu-qemu-src.sources
	if [ -z "$QEMU_VERSION" ]; then
		if [ ! -e "$SRCLIST" ] || ! grep -q "$SUITE" "$SRCLIST"; then
			log "adding deb-src entries ($SRCLIST)"
			# mirror the binary archive entries of the Debian release
			# already configured (the $SUITE one is added by
			# scripts/install-deps); other repositories have no sources
			base=${SUITE%%-*}
			{
				for f in /etc/apt/sources.list.d/*.sources; do
					if [ ! -f "$f" ] || [ "$f" = "$SRCLIST" ]; then continue; fi
					awk -v base="$base" 'BEGIN { RS = ""; ORS = "\n\n" }
					     /(^|\n)Types: deb(\n|$)/ && $0 ~ "(^|\n)Suites:[^\n]*" base {
						sub(/Types: deb/, "Types: deb-src"); print }' "$f"
				done
				for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
					[ -f "$f" ] || continue
					sed -n 's/^deb \(.*\)/\1/p' "$f" |
						while read -r uri suite comps; do
							case $suite in "$base"*) ;; *) continue ;; esac
							printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n\n' "$uri" "$suite" "$comps"
						done
				done
			} | $SUDO tee "$SRCLIST.tmp" >/dev/null
			$SUDO mv "$SRCLIST.tmp" "$SRCLIST"
		fi
		$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq ||
			log "apt-get update reported errors (going on: the $SUITE sources may still be there)"
		URIS=$(source_uris)
		QEMU_VERSION=$(source_version "$URIS")
		if [ -z "$QEMU_VERSION" ]; then
			log "the archive offers no qemu source in $SUITE (apt-get source --print-uris -t $SUITE qemu: nothing); check the deb-src entries in $SRCLIST and that $SUITE is configured (make deps)"
			exit 1
		fi
		set_key
		if [ -x "$BIN" ]; then
			link_result
			exit 0
		fi
	fi
	uver=$QEMU_VERSION
	TREE=$CACHE/tree-$uver$VARIANT
	BLD=$CACHE/build-$uver$VARIANT
	DL=$CACHE/dl
	if [ ! -f "$TREE/.unpacked" ]; then
		mkdir -p "$DL"
		chmod 755 "$DL"
		log "apt-get source --download-only -t $SUITE qemu ($uver)"
		# apt fetches what the archive has and checks each file against
		# the index's hash; a file the archive lacks (it has answered 404
		# for a .debian.tar.xz whose index entry exists) is left out, and
		# what was fetched decides how the tree is unpacked
		(cd "$DL" && apt-get source --download-only -qq -t "$SUITE" qemu >"$DL/apt-get.log" 2>&1) ||
			log "apt-get source did not fetch every file (kept what it got): $(grep -E '^(E|Err):' "$DL/apt-get.log" | head -n 3 | tr '\n' ' ')"
		have() { # NAME: present with the index's SHA-256
			local want
			want=$(echo "$URIS" | awk -v n="$1" '$2 == n { sub(/^SHA256:/, "", $4); print $4 }')
			[ -n "$want" ] && [ -f "$DL/$1" ] &&
				[ "$(sha256sum "$DL/$1" | cut -d' ' -f1)" = "$want" ]
		}
		files=$(echo "$URIS" | awk '{ print $2 }')
		dsc=$(echo "$files" | grep '\.dsc$')
		orig=$(echo "$files" | grep '\.orig\.tar\.' | head -n 1)
		rm -rf "$TREE"
		missing_files=""
		for f in $files; do
			have "$f" || missing_files="$missing_files $f"
		done
		if [ -z "$missing_files" ]; then
			log "dpkg-source -x $dsc"
			dpkg-source -q -x "$DL/$dsc" "$TREE" >/dev/null
			echo "qemu $uver (Debian, dpkg-source -x: Debian's patches applied)" >"$TREE/.ipu-source"
		elif [ -n "$orig" ] && have "$orig"; then
			log "the archive lacks$missing_files: unpacking $orig alone (upstream's source as Debian repacked it, without Debian's patches)"
			mkdir -p "$TREE"
			tar -xf "$DL/$orig" -C "$TREE" --strip-components=1
			echo "qemu $uver (Debian's $orig alone, SHA-256 as in the archive's index; the archive lacks$missing_files)" >"$TREE/.ipu-source"
		else
			log "cannot fetch the qemu source $uver from $SUITE (missing or bad:$missing_files); see $DL/apt-get.log"
			exit 1
		fi
		rm -f "$CACHE"/qemu_*.orig.tar.* # dpkg-source leaves a copy beside the tree
		# a source repacked without firmware blobs (+ds) has no edk2
		# images: never unpack them (only --disable-install-blobs is asked
		# for, but meson unpacks them whenever bzip2 is found)
		if [ ! -e "$TREE/pc-bios/edk2-x86_64-code.fd.bz2" ] &&
			grep -q '^ *unpack_edk2_blobs = bzip2.found()' "$TREE/meson.build"; then
			sed -i 's/^\( *unpack_edk2_blobs = \)bzip2.found()/\1false/' "$TREE/meson.build"
		fi
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
	# the device set (configure --with-devices-x86_64=ipu)
	cmp -s "$STAGE/$DEVICES" "$TREE/configs/devices/x86_64-softmmu/ipu.mak" ||
		cp "$STAGE/$DEVICES" "$TREE/configs/devices/x86_64-softmmu/ipu.mak"

	# 4. configure (once per flag set), then an incremental ninja build
	flags="${CONFIGURE_FLAGS[*]}"
	if [ ! -f "$BLD/build.ninja" ] || [ "$(cat "$BLD/.ipu-flags" 2>/dev/null)" != "$flags" ]; then
		rm -rf "$BLD"
		mkdir -p "$BLD"
		log "configure $flags"
		(cd "$BLD" && "$TREE/configure" "${CONFIGURE_FLAGS[@]}" >configure.log 2>&1) ||
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
		echo "qemu source: $(cat "$TREE/.ipu-source")"
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
