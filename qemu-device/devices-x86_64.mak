# The devices of the qemu-system-x86_64 that `make qemu` builds
# (configure --without-default-devices --with-devices-x86_64=ipu: copied to
# QEMU's configs/devices/x86_64-softmmu/ipu.mak).  Only what the project
# runs: the q35 machine (its chipset, serial console, AHCI and firmware
# interfaces come with it) for the VM and the qtests, the `ipu` device,
# and the standard VGA, the q35 default display, so that a run without
# -nodefaults starts as on Debian's QEMU.  Every other board and device
# stays out of the build, which keeps a cold build short.
CONFIG_Q35=y
CONFIG_IPU_PCI=y
CONFIG_VGA_PCI=y
