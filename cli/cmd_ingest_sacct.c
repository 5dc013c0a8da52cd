/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl ingest --format sacct FILE...: Slurm accounting into the job
 * history (controller/sacct.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/cmd_ingest.h"
#include "cli/fwdctl.h"
#include "cli/fwdctl_db.h"
#include "controller/sacct.h"
#include "db/db.h"

int ingest_sacct_files(struct fwdctl_ctx *ctx, char **files, int n, bool json,
		       const char *tz)
{
	struct sacct_stats tot = {0};
	struct policy *p = fwdctl_policy(ctx);
	unsigned long rejected = 0;
	struct db *db;
	int rc = FWD_EXIT_OK;

	if (!p)
		return FWD_EXIT_USAGE;
	/* sacct's times are wall-clock times of its host's zone */
	if (tz) {
		if (setenv("TZ", tz, 1) != 0) {
			fwdctl_err("ingest: --timezone: %s", strerror(errno));
			return FWD_EXIT_USAGE;
		}
		tzset();
	}
	if (!(db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc)))
		return rc;
	for (int i = 0; i < (n ? n : 1); i++) {
		const char *path = n ? files[i] : "-";
		FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
		struct sacct_stats st;
		fwd_error_t err = {{0}};
		int r;

		if (!f) {
			fwdctl_err("%s: %s", path, strerror(errno));
			rejected++;
			continue;
		}
		r = ctl_sacct_import(db, p, f, (int64_t)time(NULL), &st, &err);
		if (f != stdin)
			fclose(f);
		tot.lines += st.lines;
		tot.jobs += st.jobs;
		tot.jobs_new += st.jobs_new;
		tot.summaries += st.summaries;
		tot.not_run += st.not_run;
		tot.running += st.running;
		tot.array_het += st.array_het;
		tot.profiles += st.profiles;
		if (r < 0) {
			long line = 0;
			const char *m = err.text;

			if (errno != EINVAL && errno != EIO) {
				fwdctl_err("%s: %s", path, err.text);
				rc = fwdctl_exit_code(errno);
				break;
			}
			if (sscanf(err.text, "line %ld:", &line) == 1)
				m = strchr(err.text, ':') + 2;
			fwdctl_err("%s:%ld: %s", path, line, m);
			rejected++;
		}
	}
	db_close(db);
	if (tot.not_run || tot.running || tot.array_het)
		fwdctl_err("ignored: %" PRIu64
			   " jobs that never started, %" PRIu64
			   " still running, %" PRIu64
			   " array or heterogeneous job components",
			   tot.not_run, tot.running, tot.array_het);
	if (json) {
		json_t *o = json_pack("{sI sI sI sI sI sI sI sI sI}", "lines",
				      (json_int_t)tot.lines, "jobs",
				      (json_int_t)tot.jobs, "jobs_new",
				      (json_int_t)tot.jobs_new, "summaries",
				      (json_int_t)tot.summaries, "not_run",
				      (json_int_t)tot.not_run, "running",
				      (json_int_t)tot.running, "array_het",
				      (json_int_t)tot.array_het, "profiles",
				      (json_int_t)tot.profiles,
				      "rejected_files", (json_int_t)rejected);

		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	} else {
		printf("read %" PRIu64 " lines: %" PRIu64
		       " finished jobs (%" PRIu64 " new), %" PRIu64
		       " summaries from fs/lustre usage, %" PRIu64
		       " profiles updated\n",
		       tot.lines, tot.jobs, tot.jobs_new, tot.summaries,
		       tot.profiles);
	}
	if (rc == FWD_EXIT_OK && rejected)
		rc = FWD_EXIT_USAGE;
	return rc;
}
