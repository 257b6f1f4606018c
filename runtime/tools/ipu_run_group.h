/* SPDX-License-Identifier: MIT */
/* ipu_run_group.h - ipu-run's report of a model split over IPUs: its links
 * (transfers, bytes, modelled cycles) and the group's modelled clock. */
#ifndef IPU_RUN_GROUP_H
#define IPU_RUN_GROUP_H

#include <jansson.h>

#include "ipu/runtime.h"

/* Nothing for a one-IPU model. */
void group_report_text(struct ipurt_runner *r);
/* NULL for a one-IPU model. */
json_t *group_report_json(struct ipurt_runner *r);

#endif
