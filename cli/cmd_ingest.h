/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef FWD_CLI_CMD_INGEST_H
#define FWD_CLI_CMD_INGEST_H

/* The formats of `fwdctl ingest` that read whole files. */

#include <stdbool.h>

struct fwdctl_ctx;

/* --format darshan: each file is darshan-parser output of one job. */
int ingest_darshan_files(struct fwdctl_ctx *ctx, char **files, int n,
			 bool json);

/* --format sacct: `sacct --parsable2` output, its times in time zone tz
 * (NULL: fwdctl's own, TZ). */
int ingest_sacct_files(struct fwdctl_ctx *ctx, char **files, int n, bool json,
		       const char *tz);

#endif
