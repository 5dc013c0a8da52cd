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
#include <unistd.h>

#include <jansson.h>

#include "cli/cmd_ingest.h"
#include "cli/fwdctl.h"
#include "cli/fwdctl_db.h"
#include "controller/sacct.h"
#include "db/db.h"
#include "policies/policy.h"
#include "topology/topology.h"

int ingest_sacct_files(struct fwdctl_ctx *ctx, char **files, int n, bool json,
		       const char *tz)
{
	struct sacct_stats tot = {0};
	struct policy *p = fwdctl_policy(ctx);
	unsigned long rejected = 0;
	uint32_t max_nodes = 0;
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
	/* node counts are bounded by the topology's when there is one */
	if (ctx->topology_path ||
	    (p->topology && access(p->topology, R_OK) == 0)) {
		const struct topology *t = fwdctl_topology(ctx);

		if (!t)
			return FWD_EXIT_USAGE;
		if (t->n_nodes && t->n_nodes <= UINT32_MAX)
			max_nodes = (uint32_t)t->n_nodes;
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
		r = ctl_sacct_import(db, p, f, (int64_t)time(NULL), max_nodes,
				     &st, &err);
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
		tot.rejected += st.rejected;
		for (size_t k = 0; k < st.n_errors; k++) {
			long line = 0;
			const char *m = st.errors[k].text;

			if (sscanf(m, "line %ld:", &line) == 1)
				m = strchr(m, ':') + 2;
			fwdctl_err("%s:%ld: %s", path, line, m);
		}
		if (st.rejected > st.n_errors)
			fwdctl_err("%s: %" PRIu64 " more rejected lines not "
				   "shown",
				   path, st.rejected - st.n_errors);
		for (size_t k = 0; k <= SACCT_REASONS; k++) {
			size_t j;

			if (!st.why[k].n)
				continue;
			for (j = 0; j < SACCT_REASONS && tot.why[j].reason; j++)
				if (!strcmp(tot.why[j].reason,
					    st.why[k].reason))
					break;
			/* the last slot counts the reasons past the others */
			tot.why[j].reason =
				j == SACCT_REASONS ? "other" : st.why[k].reason;
			tot.why[j].n += st.why[k].n;
		}
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
	if (tot.rejected) {
		char by[256] = "";
		size_t used = 0;

		for (size_t k = 0; k <= SACCT_REASONS && used < sizeof(by); k++)
			if (tot.why[k].n)
				used += (size_t)snprintf(
					by + used, sizeof(by) - used,
					"%s%" PRIu64 " %s", used ? ", " : "",
					tot.why[k].n, tot.why[k].reason);
		fwdctl_err("rejected %" PRIu64 " lines: %s", tot.rejected, by);
	}
	if (tot.not_run || tot.running || tot.array_het)
		fwdctl_err("ignored: %" PRIu64
			   " jobs that never started, %" PRIu64
			   " still running, %" PRIu64
			   " array or heterogeneous job components",
			   tot.not_run, tot.running, tot.array_het);
	if (json) {
		json_t *by = json_object();

		for (size_t k = 0; k <= SACCT_REASONS && by; k++)
			if (tot.why[k].n)
				json_object_set_new(
					by, tot.why[k].reason,
					json_integer((json_int_t)tot.why[k].n));
		json_t *o = json_pack(
			"{sI sI sI sI sI sI sI sI sI sI so*}", "lines",
			(json_int_t)tot.lines, "jobs", (json_int_t)tot.jobs,
			"jobs_new", (json_int_t)tot.jobs_new, "summaries",
			(json_int_t)tot.summaries, "not_run",
			(json_int_t)tot.not_run, "running",
			(json_int_t)tot.running, "array_het",
			(json_int_t)tot.array_het, "profiles",
			(json_int_t)tot.profiles, "rejected_files",
			(json_int_t)rejected, "rejected_lines",
			(json_int_t)tot.rejected, "rejected_by_reason", by);

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
	if (rc == FWD_EXIT_OK && (rejected || tot.rejected))
		rc = FWD_EXIT_USAGE;
	return rc;
}
