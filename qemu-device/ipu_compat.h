/*
 * QEMU emulated IPU: what differs between the QEMU releases the device
 * builds against, Debian bookworm's 7.2 and bookworm-backports' 10.0.
 *
 * This work is licensed under the terms of the GNU GPL, version 2 or later.
 * See the COPYING file in the top-level directory.
 */
#ifndef IPU_COMPAT_H
#define IPU_COMPAT_H

#if QEMU_VERSION_MAJOR >= 10
#include "system/dma.h"             /* 10.0: include/sysemu/ became system/ */
#else
#include "sysemu/dma.h"
#endif

/* Resettable's hold and exit phases take the reset type since 9.0 */
#if QEMU_VERSION_MAJOR >= 9
#define IPU_RESET_PHASE_ARGS Object *obj, ResetType type
#else
#define IPU_RESET_PHASE_ARGS Object *obj
#endif

/*
 * Property arrays: const and counted by device_class_set_props() since
 * 9.2 (no DEFINE_PROP_END_OF_LIST), writable and terminated before
 */
#ifdef DEFINE_PROP_END_OF_LIST
#define IPU_PROPERTY Property
#else
#define IPU_PROPERTY const Property
#endif

#endif /* IPU_COMPAT_H */
