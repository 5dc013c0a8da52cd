/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl reconcile: free the allocations of jobs Slurm no longer runs
 * (a lost EpilogSlurmctld, a controller prolog killed after it wrote, a
 * controller crash).  Slurm is asked through libslurm (slurm_load_jobs),
 * never by parsing command output.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <jansson.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "controller/audit.h"
#include "controller/ctl_store.h"
#include "cli/fwdctl.h"
#include "db/db.h"
#include "policies/policy.h"

#define DECIDE_LOCK "decide" /* db_lock() scopes it: "<database>.decide" */

/* clang-format off */
static void reconcile_usage(FILE *f)
{
	fprintf(f,
"Usage: fwdctl reconcile [--dry-run] [--json]\n"
"\n"
"Free every held allocation whose job Slurm no longer runs: its epilog was\n"
"lost, or the controller prolog or slurmctld died after the decision was\n"
"written.  Jobs Slurm reports as running, suspended, configuring or\n"
"completing keep their forwarders.  Each freed job gets an audit record\n"
"(event \"reconcile\").  Safe to run at any time, e.g. from a timer; it\n"
"takes the same lock as the controller prolog.\n"
"\n"
"Options:\n"
"  --dry-run   only list what would be freed\n"
"  --json      print {\"freed\": [job ids], \"kept\": [job ids]}\n"
"  -h, --help  this help\n"
"\n"
"Examples:\n"
"  fwdctl reconcile --dry-run\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  2  usage error\n"
"  3  the database or slurmctld is unavailable (nothing was freed)\n");
}
/* clang-format on */

/* Is the job still holding its nodes, per Slurm? */
static bool job_alive(const slurm_job_info_t *j)
{
	uint32_t base = j->job_state & JOB_STATE_BASE;

	if (j->job_state & (JOB_CONFIGURING | JOB_COMPLETING))
		return true;
	return base == JOB_RUNNING || base == JOB_SUSPENDED;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmd_reconcile(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"dry-run", no_argument, NULL, 'n'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool json = ctx->json, dry = false;
	job_info_msg_t *jobs = NULL;
	struct policy *p;
	struct db *db = NULL;
	struct db_stmt *st = NULL;
	uint64_t *held = NULL, *alive = NULL;
	size_t n_held = 0, cap = 0, n_alive = 0;
	json_t *freed = json_array(), *kept = json_array();
	fwd_error_t err;
	int c, r, rc = FWD_EXIT_SERVICE, locked = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			dry = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			reconcile_usage(stdout);
			rc = FWD_EXIT_OK;
			goto out;
		default:
			fwdctl_usage_hint("reconcile");
			rc = FWD_EXIT_USAGE;
			goto out;
		}
	}
	if (optind < argc) {
		fwdctl_err("reconcile: unexpected argument '%s'", argv[optind]);
		rc = FWD_EXIT_USAGE;
		goto out;
	}
	if (!(p = fwdctl_policy(ctx))) {
		rc = FWD_EXIT_USAGE;
		goto out;
	}
	if (!(db = db_connect(&p->database, DB_ROLE_CONTROLLER, &err)) ||
	    db_lock(db, DECIDE_LOCK, p->database.lock_timeout, &err) < 0) {
		fwdctl_err("reconcile: %s", err.text);
		goto out;
	}
	locked = 1;

	/* Ask Slurm only after taking the lock: a prolog deciding now for a
	 * brand-new job then either finished (job known to Slurm) or has not
	 * written yet. */
	slurm_init(NULL);
	if (slurm_load_jobs((time_t)0, &jobs, SHOW_ALL) != SLURM_SUCCESS) {
		fwdctl_err("reconcile: asking slurmctld for its jobs: %s",
			   slurm_strerror(slurm_get_errno()));
		goto out;
	}
	alive = calloc(jobs->record_count + 1, sizeof(*alive));
	if (!alive) {
		fwdctl_err("reconcile: %s", strerror(errno));
		goto out;
	}
	for (uint32_t i = 0; i < jobs->record_count; i++)
		if (job_alive(&jobs->job_array[i]))
			alive[n_alive++] = jobs->job_array[i].job_id;
	qsort(alive, n_alive, sizeof(*alive), cmp_u64);

	st = db_prepare(db,
			"SELECT DISTINCT job_id FROM allocations "
			"WHERE released_at IS NULL ORDER BY job_id",
			&err);
	if (!st || db_exec(st, &err) < 0)
		goto dberr;
	while ((r = db_fetch(st, &err)) > 0) {
		if (n_held == cap) {
			uint64_t *nh;

			cap = cap ? cap * 2 : 64;
			if (!(nh = realloc(held, cap * sizeof(*held)))) {
				fwdctl_err("reconcile: %s", strerror(errno));
				goto out;
			}
			held = nh;
		}
		held[n_held++] = db_col_uint64(st, 0);
	}
	if (r < 0)
		goto dberr;

	for (size_t i = 0; i < n_held; i++) {
		struct timeval tv;
		uint64_t released = 0;
		double now;

		if (bsearch(&held[i], alive, n_alive, sizeof(*alive),
			    cmp_u64)) {
			json_array_append_new(
				kept, json_integer((json_int_t)held[i]));
			continue;
		}
		json_array_append_new(freed, json_integer((json_int_t)held[i]));
		if (dry)
			continue;
		gettimeofday(&tv, NULL);
		now = (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
		if (ctl_store_release(db, held[i], "reconcile", now, &released,
				      &err) < 0 ||
		    ctl_store_job_end(db, held[i], "GONE", now, &err) < 0)
			goto dberr;
		{
			char when[40], id[24], outcome[64];
			json_t *rec;
			fwd_error_t aerr;

			audit_time(now, when, sizeof(when));
			snprintf(id, sizeof(id), "%llu",
				 (unsigned long long)held[i]);
			snprintf(outcome, sizeof(outcome),
				 "released %llu allocation row(s)",
				 (unsigned long long)released);
			rec = json_pack(
				"{s:s,s:I,s:s,s:s,s:n,s:n,s:n,s:n,s:n,"
				"s:s,s:s,s:[s],s:n,s:n,s:n,s:n,s:s,s:n,"
				"s:i}",
				"time", when, "ts", (json_int_t)now, "event",
				"reconcile", "job_id", id, "user", "account",
				"partition", "name", "nodes", "request", "-",
				"action", "release", "reasons",
				"Slurm no longer runs this job", "inputs",
				"forwarders_before", "forwarders_after",
				"mapping", "outcome", outcome, "decision",
				"elapsed_us", 0);
			if (rec) {
				if (audit_append(p->audit.file, rec, &aerr) < 0)
					fwdctl_err("reconcile: %s", aerr.text);
				if (p->audit.database)
					ctl_store_audit(db, rec, &aerr);
				json_decref(rec);
			}
		}
	}
	if (json) {
		json_t *o = json_pack("{s:O,s:O,s:b}", "freed", freed, "kept",
				      kept, "dry_run", dry);

		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	} else {
		size_t i;
		json_t *v;

		json_array_foreach(freed, i, v)
			printf("%s job %lld\n", dry ? "would free" : "freed",
			       (long long)json_integer_value(v));
		printf("%zu allocation(s) %s, %zu kept (job still running)\n",
		       json_array_size(freed), dry ? "to free" : "freed",
		       json_array_size(kept));
	}
	rc = FWD_EXIT_OK;
	goto out;
dberr:
	fwdctl_err("reconcile: %s", err.text);
	rc = db_err_unavailable(errno) ? FWD_EXIT_SERVICE : FWD_EXIT_INVALID;
out:
	if (locked)
		db_unlock(db, DECIDE_LOCK, NULL);
	db_stmt_close(st);
	db_close(db);
	if (jobs)
		slurm_free_job_info_msg(jobs);
	free(held);
	free(alive);
	json_decref(freed);
	json_decref(kept);
	return rc;
}

FWDCTL_COMMAND(cmd_reconcile_def, .name = "reconcile",
	       .summary = "free allocations of jobs Slurm no longer runs",
	       .order = 42, .run = cmd_reconcile);
