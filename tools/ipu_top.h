/* SPDX-License-Identifier: MIT */
/*
 * ipu_top.h - ipu-monitor --top: a live table of the devices (ipu_top.c).
 */
#ifndef IPU_TOP_H
#define IPU_TOP_H

#include <stdint.h>

struct ipu_top;

struct ipu_top *ipu_top_create(void);
void ipu_top_free(struct ipu_top *t);
/* Remember `text` as the last netlink event of device `minor`. */
void ipu_top_event(struct ipu_top *t, uint32_t minor, const char *text);
/*
 * Sample every device now and print one table (rates since the previous
 * sample; the first table shows totals' rates as "-").  clear: redraw in
 * place (a terminal) instead of appending.  Returns 0, or -1 if the
 * driver is not loaded.
 */
int ipu_top_print(struct ipu_top *t, int clear);

#endif /* IPU_TOP_H */
