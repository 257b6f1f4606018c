/* SPDX-License-Identifier: MIT */
#ifndef IPU_CLI_LIST_OPS_H
#define IPU_CLI_LIST_OPS_H

#include <stdio.h>

int ipuc_list_ops(FILE *out, int json);

#endif
