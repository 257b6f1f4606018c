/* SPDX-License-Identifier: MIT */
/*
 * crc32.h - CRC-32 (IEEE 802.3, reflected polynomial 0xedb88320, as zlib's
 * crc32()): the checksum of executable images (checked by the device's
 * verifier) and of .ipuef files (checked by the Model Runtime).
 */
#ifndef IPU_CRC32_H
#define IPU_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continue crc over len bytes at data; start with crc 0. */
uint32_t ipu_crc32(uint32_t crc, const void *data, size_t len);

#endif /* IPU_CRC32_H */
