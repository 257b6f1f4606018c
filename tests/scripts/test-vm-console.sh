#!/bin/bash
# scripts/vm-console (what scripts/vm-run prints of the VM's serial port)
# on captures shaped as QEMU's: SeaBIOS's screen over the serial port, with
# escapes and no newline after "Booting from ROM..", then the guest's lines.
set -u
cd "$(dirname "$0")/../.."
pass=0
fail=0
check() {	# NAME INPUT(printf format) EXPECTED
	local got
	got=$(printf "$2" | scripts/vm-console)
	if [ "$got" = "$3" ]; then
		pass=$((pass + 1)); echo "ok - $1"
	else
		fail=$((fail + 1)); echo "not ok - $1: got"; printf '%s\n' "$got" | cat -A | sed 's/^/    /'
	fi
}
banner='\033c\033[?7l\033[2J\033[0mSeaBIOS (version 1.16.2-debian-1.16.2-1)\r\n\033[2;1H\r\n\r\n'
# as Debian's QEMU 7.2 and SeaBIOS 1.16.2 wrote it (-nographic, -kernel, quiet)
check "a real capture: the guest's first line follows the firmware's reset on its line" \
	'\033c\033[?7l\033[2J\033[0mSeaBIOS (version 1.16.2-debian-1.16.2-1)\r\nBooting from ROM..\033c\033[?7l\033[2J\033[0m.\rTAP version 13\r\nsecond line\r\nIPU-VM-EXIT: 0\r\n[    3.990998] reboot: Power down\r\n' \
	"TAP version 13
second line
IPU-VM-EXIT: 0
[    3.990998] reboot: Power down"
# as QEMU 10 (bookworm-backports, its option ROMs) and SeaBIOS 1.16.2 write it:
# the boot line ends with a newline, the reset starts the guest's first line
check "a real capture of QEMU 10: the reset before the guest's first line is removed" \
	'\033c\033[?7l\033[2J\033[0mSeaBIOS (version 1.16.2-debian-1.16.2-1)\r\nBooting from ROM...\r\n\033c\033[?7l\033[2Jhello-from-vm\r\nIPU-VM-EXIT: 0\r\n[   11.177837] reboot: Power down\r\n' \
	"hello-from-vm
IPU-VM-EXIT: 0
[   11.177837] reboot: Power down"
check "a first line that starts with dots keeps them after the carriage return" \
	"${banner}Booting from ROM..\033c.\r...loading\r\n" \
	"...loading"
check "the guest's first line, glued to the firmware's last, is kept" \
	"${banner}Booting from ROM..first line\r\nsecond\r\nIPU-VM-EXIT: 0\r\n" \
	"first line
second
IPU-VM-EXIT: 0"
check "a firmware line that ends with a newline is dropped whole" \
	"${banner}Booting from ROM...\r\nfirst\r\nIPU-VM-EXIT: 3\r\n" \
	"first
IPU-VM-EXIT: 3"
check "escapes inside the guest's output are removed, empty lines kept" \
	"${banner}Booting from ROM..\033[1;31mred\033[0m\r\n\r\nlast\r\n" \
	"red

last"
check "a capture without the firmware's boot line is kept (but a SeaBIOS banner line)" \
	"SeaBIOS (version 1.16)\r\n[    1.0] ipu 0000:00:03.0: probed\r\nok 1 attach\r\n" \
	"[    1.0] ipu 0000:00:03.0: probed
ok 1 attach"
check "a guest line that mentions SeaBIOS after the boot line is kept" \
	"${banner}Booting from ROM..SeaBIOS (version x) is the firmware\r\n" \
	"SeaBIOS (version x) is the firmware"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
