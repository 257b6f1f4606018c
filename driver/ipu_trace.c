// SPDX-License-Identifier: GPL-2.0
/*
 * ipu_trace.c - the tracepoints' definitions (ipu_trace.h).
 */
#define CREATE_TRACE_POINTS
#include "ipu_trace.h"
