/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CLI_CMD_TRACE_H
#define FWD_CLI_CMD_TRACE_H

/* Pieces of `fwdctl trace` shared between its files. */

#include <stdint.h>
#include <stdio.h>

#include "cli/fwdctl.h"
#include "profiler/summary.h"

void trace_cmd_usage(FILE *f);

/* Summarise files (one per node) into s, counting only records in
 * [from, to] (0 = open); prints errors and skipped lines, returns an
 * exit code. */
int trace_cmd_summarize(char **files, int n, uint32_t job_nodes, int64_t from,
			int64_t to, struct trace_summary *s);

/* `fwdctl trace ingest` (cli/cmd_trace_ingest.c). */
int trace_cmd_ingest(struct fwdctl_ctx *ctx, int argc, char **argv);

#endif
