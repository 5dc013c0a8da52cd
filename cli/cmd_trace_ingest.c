/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fwdctl trace ingest: summarise a job's traces into the database.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/cmd_trace.h"
#include "cli/fwdctl.h"
#include "cli/fwdctl_db.h"
#include "common/slurm_compat.h"
#include "controller/history.h"
#include "controller/profile_ctl.h"
#include "policies/policy.h"
#include "profiler/profile.h"
#include "profiler/summary.h"
#include "profiler/trace.h"

/* The node name a trace file stands for: its #node, else its name. */
static int file_node(const char *path, char *buf, size_t len)
{
	fwd_error_t err;
	struct trace_reader *r = trace_reader_open(path, &err);

	if (!r) {
		fwdctl_err("trace ingest: %s", err.text);
		return -1;
	}
	if (trace_reader_node(r))
		snprintf(buf, len, "%s", trace_reader_node(r));
	else
		trace_node_from_path(path, buf, len);
	trace_reader_destroy(r);
	return 0;
}

/* Every file must be a node of the job (its Slurm hostlist). */
static int check_nodes(const struct history_job *row, char **files, int n)
{
	fwd_hostlist_t hl;
	int rc = 0;

	if (!row->nodelist)
		return 0;
	if (!(hl = slurm_hostlist_create(row->nodelist))) {
		fwdctl_err("trace ingest: job %" PRIu64 ": bad node list "
			   "\"%s\" in the jobs table",
			   row->job_id, row->nodelist);
		return -1;
	}
	for (int i = 0; i < n && rc == 0; i++) {
		char node[256];

		if (file_node(files[i], node, sizeof(node))) {
			rc = -1;
		} else if (slurm_hostlist_find(hl, node) < 0) {
			fwdctl_err("trace ingest: %s: node %s is not a node "
				   "of job %" PRIu64 " (%s)",
				   files[i], node, row->job_id, row->nodelist);
			rc = -1;
		}
	}
	slurm_hostlist_destroy(hl);
	return rc;
}

int trace_cmd_ingest(struct fwdctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{"job", required_argument, NULL, 'J'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct history_job row = {0};
	struct trace_summary s = {0};
	bool json = ctx->json, have_sum = false, stored;
	uint64_t id = 0;
	int64_t now = time(NULL), to;
	struct db *db = NULL;
	fwd_error_t err;
	double runtime;
	int c, rc, r;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'J':
			if (fwdctl_job_id("trace ingest: --job", optarg, &id) <
			    0)
				return FWD_EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			trace_cmd_usage(stdout);
			return FWD_EXIT_OK;
		default:
			fwdctl_usage_hint("trace");
			return FWD_EXIT_USAGE;
		}
	}
	if (id == 0 || optind >= argc) {
		fwdctl_err("trace ingest: need --job ID and trace files; see "
			   "'fwdctl trace --help'");
		return FWD_EXIT_USAGE;
	}
	if (!(db = fwdctl_db_connect(ctx, DB_ROLE_CONTROLLER, 0, true, &rc)))
		return rc;
	r = history_job(db, id, &row, &err);
	if (r <= 0) {
		if (r < 0) {
			fwdctl_err("trace ingest: %s", err.text);
			rc = fwdctl_exit_code(errno);
		} else {
			fwdctl_err("trace ingest: job %" PRIu64
				   " is not in the jobs "
				   "table",
				   id);
			rc = FWD_EXIT_INVALID;
		}
		goto out;
	}
	rc = FWD_EXIT_USAGE;
	if (check_nodes(&row, argv + optind, argc - optind))
		goto out;
	to = row.end_at ? row.end_at : now;
	rc = trace_cmd_summarize(argv + optind, argc - optind, row.node_count,
				 row.start_at, to, &s);
	if (rc)
		goto out;
	have_sum = true;
	runtime = row.start_at && to > row.start_at
			  ? (double)(to - row.start_at)
		  : s.end > s.start ? (double)(s.end - s.start + 1)
				    : 0;
	if (ctl_profile_store_summary(db, fwdctl_policy(ctx), &row, &s, runtime,
				      now, &stored, &err) < 0) {
		if (stored)
			fwdctl_err("trace ingest: job %" PRIu64
				   " stored, profile "
				   "not updated: %s",
				   id, err.text);
		else
			fwdctl_err("trace ingest: %s", err.text);
		rc = fwdctl_exit_code(errno);
		goto out;
	}
	if (json) {
		json_t *o = trace_summary_to_json(&s);

		json_object_set_new(o, "job_id", json_integer((json_int_t)id));
		if (!o || json_dumpf(o, stdout, JSON_INDENT(2)) ||
		    putchar('\n') == EOF)
			fwdctl_err("trace ingest: %s", strerror(errno));
		json_decref(o);
	} else {
		printf("job %" PRIu64 ": stored %s summary: %" PRIu32
		       " of %" PRIu32 " nodes did I/O, %" PRIu64
		       " bytes read, %" PRIu64 " written, %" PRIu64
		       " records outside the job's "
		       "time\n",
		       id, fwd_io_mode_name(s.io_mode), s.io_nodes, s.nodes,
		       s.read_bytes, s.write_bytes, s.outside);
	}
	rc = FWD_EXIT_OK;
out:
	if (have_sum)
		trace_summary_free(&s);
	history_job_free(&row);
	db_close(db);
	return rc;
}
